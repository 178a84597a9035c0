-- Per-question latency of one run, ordered, for percentiles computed by the caller.
SELECT latency_ms FROM run_queries WHERE run_id = $run_id ORDER BY latency_ms
