-- Each NIC's health over the retained epochs: epochs read and failed, its frame counters
-- at the last epoch (they count since reset), records its stream dropped, readout time.
SELECT device,
       COUNT(*) AS epochs,
       SUM(CASE WHEN readout_ok THEN 0 ELSE 1 END) AS failed,
       MAX(frames) AS frames,
       MAX(malformed) AS malformed,
       MAX(records_dropped) AS records_dropped,
       MAX(readout_seconds) AS max_readout_seconds
FROM health
GROUP BY device
ORDER BY device
