-- Per-switch latency percentiles network-wide: over every (flow, switch) pair every NIC
-- reported in every epoch, the nearest-rank percentiles of the pair's average latency
-- (standard SQL: exact, and the same answer on every engine).
WITH ranked AS (
  SELECT switch_id, avg_latency_ns,
         ROW_NUMBER() OVER (PARTITION BY switch_id ORDER BY avg_latency_ns) AS rn,
         COUNT(*) OVER (PARTITION BY switch_id) AS n
  FROM hops
  WHERE avg_latency_ns IS NOT NULL
)
SELECT switch_id,
       MAX(n) AS pairs,
       MIN(CASE WHEN rn >= CEIL(0.50 * n) THEN avg_latency_ns END) AS p50_ns,
       MIN(CASE WHEN rn >= CEIL(0.90 * n) THEN avg_latency_ns END) AS p90_ns,
       MIN(CASE WHEN rn >= CEIL(0.99 * n) THEN avg_latency_ns END) AS p99_ns,
       MAX(avg_latency_ns) AS max_ns
FROM ranked
GROUP BY switch_id
ORDER BY switch_id
