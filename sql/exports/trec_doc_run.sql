-- Document-level TREC run: each stage's ranking collapsed to first-seen documents (the doc_hits view,
-- whose rank is the metrics' document rank), each document scored by its best chunk.
SELECT d.stage, d.query_id, d.rank, d.doc_id, MAX(h.score) AS score
FROM doc_hits d
JOIN hits h
  ON h.run_id = d.run_id AND h.stage = d.stage AND h.query_id = d.query_id AND h.doc_id = d.doc_id
WHERE d.run_id = $run_id
GROUP BY d.stage, d.query_id, d.rank, d.doc_id
ORDER BY d.stage, d.query_id, d.rank
