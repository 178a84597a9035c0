-- measure: SpanRecall
-- interval: bootstrap
-- cutoff: required
-- levels: chunk
-- budget: measures/span_recall
-- reads_tokens: yes
-- definition: share of the gold text (characters of the gold spans) covered by the retrieved text
--
-- SpanRecall: the share of the gold text the retrieved text covers, |retrieved ∩ gold| / |gold| (characters).
-- @include measures/span_context
-- A question whose gold text is empty (its gold is a whole document with no text) has no recall: it is left out.
SELECT q.query_id, 'chunk' AS level, COALESCE(o.n, 0) * 1.0 / l.gold AS value
FROM eval_questions q
JOIN lengths l ON l.query_id = q.query_id AND l.gold > 0
LEFT JOIN overlap o ON o.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
