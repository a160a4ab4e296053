-- Per-switch heavy hitters: at each switch, the five flows with the most packets through
-- it (the latency tower's per-pair counts, summed over NICs and epochs).
WITH pairs AS (
  SELECT switch_id, src_ip, dst_ip, src_port, dst_port, proto,
         SUM(hop_packets) AS packets
  FROM hops
  WHERE hop_packets IS NOT NULL
  GROUP BY switch_id, src_ip, dst_ip, src_port, dst_port, proto
),
ranked AS (
  SELECT switch_id, src_ip, dst_ip, src_port, dst_port, proto, packets,
         ROW_NUMBER() OVER (PARTITION BY switch_id
                            ORDER BY packets DESC, src_ip, dst_ip, src_port, dst_port, proto) AS pos
  FROM pairs
)
SELECT switch_id, pos, src_ip, dst_ip, src_port, dst_port, proto, packets
FROM ranked
WHERE pos <= 5
ORDER BY switch_id, pos
