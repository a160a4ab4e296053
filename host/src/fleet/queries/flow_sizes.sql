-- Per-flow sizes across the fleet: every flow's packets summed over the NICs and epochs
-- that saw it, the NICs that saw it, and its largest single-epoch estimate.
SELECT src_ip, dst_ip, src_port, dst_port, proto,
       COUNT(DISTINCT device) AS nics,
       COUNT(*) AS epochs,
       SUM(packets) AS packets,
       MAX(packets) AS max_epoch_packets
FROM flows
GROUP BY src_ip, dst_ip, src_port, dst_port, proto
ORDER BY packets DESC, src_ip, dst_ip, src_port, dst_port, proto
LIMIT 20
