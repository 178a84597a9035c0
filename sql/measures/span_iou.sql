-- measure: SpanIoU
-- interval: bootstrap
-- cutoff: required
-- levels: chunk
-- budget: measures/span_iou
-- reads_tokens: yes
-- definition: retrieved text intersected with gold text, over their union (characters)
--
-- SpanIoU: |retrieved ∩ gold| / |retrieved ∪ gold| (characters).
-- @include measures/span_context
SELECT q.query_id, 'chunk' AS level,
       COALESCE(o.n, 0) * 1.0 / (l.retrieved + l.gold - COALESCE(o.n, 0)) AS value
FROM eval_questions q
JOIN lengths l ON l.query_id = q.query_id
LEFT JOIN overlap o ON o.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
