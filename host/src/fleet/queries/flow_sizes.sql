-- Per-flow sizes across the fleet: every flow's packets summed over the NICs and epochs
-- that saw it, the NICs that saw it, and its largest single-epoch estimate.
SELECT src_ip, dst_ip, src_port, dst_port, proto,
       COUNT(*) AS nics,
       SUM(epochs) AS epochs,
       SUM(packets) AS packets,
       MAX(max_epoch_packets) AS max_epoch_packets
FROM (
  -- Per flow and NIC first, so the NICs are counted as rows: COUNT(DISTINCT device) keeps a
  -- set per flow, and at 1,000 NICs x 12 epochs (2.4M flows) that took over 24 GB.
  SELECT src_ip, dst_ip, src_port, dst_port, proto, device,
         COUNT(*) AS epochs,
         SUM(packets) AS packets,
         MAX(packets) AS max_epoch_packets
  FROM flows
  GROUP BY src_ip, dst_ip, src_port, dst_port, proto, device
) AS per_nic
GROUP BY src_ip, dst_ip, src_port, dst_port, proto
ORDER BY packets DESC, src_ip, dst_ip, src_port, dst_port, proto
LIMIT 20
