-- The rank of every retrieved relevant document (relevance >= 1), ranked as trec_eval ranks: by
-- score descending, ties broken by document id descending (byte order). The rank column of the
-- file is ignored.
--
-- Ordering ten million rows by (score, document id) is slow because of the string key, so the
-- run is ranked by score alone (rank(): 1 + the documents scoring higher), and a relevant
-- document then moves down by the documents tied with it that have a greater id.
CREATE TABLE trec_relevant_ranks AS
WITH scored AS (
    SELECT query_id, docno, score, rank() OVER (PARTITION BY query_id ORDER BY score DESC) AS score_rank
    FROM trec_run
),
relevant AS (
    SELECT s.query_id, s.docno, s.score, s.score_rank, q.grade
    FROM scored s
    JOIN trec_qrels q ON q.query_id = s.query_id AND q.docno = s.docno
    WHERE q.grade >= 1
)
SELECT r.query_id, r.docno, r.grade, r.score_rank + COUNT(t.docno) AS rank
FROM relevant r
LEFT JOIN trec_run t ON t.query_id = r.query_id AND t.score = r.score AND t.docno > r.docno
GROUP BY r.query_id, r.docno, r.grade, r.score_rank
