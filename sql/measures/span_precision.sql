-- measure: SpanPrecision
-- interval: bootstrap
-- cutoff: required
-- levels: chunk
-- budget: measures/span_precision
-- reads_tokens: yes
-- definition: share of the retrieved text (characters, overlapping results counted once) inside gold spans
--
-- SpanPrecision: the share of the retrieved text that is gold, |retrieved ∩ gold| / |retrieved|
-- (characters, overlapping results counted once); 0 when nothing was retrieved.
-- @include measures/span_context
SELECT q.query_id, 'chunk' AS level,
       CASE WHEN l.retrieved > 0 THEN COALESCE(o.n, 0) * 1.0 / l.retrieved ELSE 0.0 END AS value
FROM eval_questions q
JOIN lengths l ON l.query_id = q.query_id
LEFT JOIN overlap o ON o.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
