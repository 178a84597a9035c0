-- Span measures over the text a run retrieved: the top $k results, taken in rank order until a context
-- budget of $budget tokens is filled (the result that fills it cut at that token; pass a huge value for
-- no budget). Lengths are in characters of documents.text; each character counts once, however many
-- results (or gold entries) cover it.
--   span_recall    = |retrieved ∩ gold| / |gold|
--   span_precision = |retrieved ∩ gold| / |retrieved|   (0 when nothing was retrieved)
--   span_iou       = |retrieved ∩ gold| / |retrieved ∪ gold|
--   span_success   = 1 when the retrieved text overlaps any gold span (budgeted Success)
--   span_ndcg      = budgeted nDCG: each gold unit credited once, at the first rank whose (cut) text
--                    overlaps it, with the highest grade among the units that rank newly covers; the
--                    ideal DCG is over every gold unit, so a budget too small to hold them cannot reach 1
WITH context AS (
    SELECT b.query_id, b.rank, b.doc_id, b.start_char,
           CASE WHEN b.tokens_before + b.n_tokens <= CAST($budget AS BIGINT) THEN b.end_char
                ELSE GREATEST(b.start_char, LEAST(b.end_char, t.end_char)) END AS end_char
    FROM budget_hits b
    LEFT JOIN doc_tokens t
      ON t.tokenizer_id = b.tokenizer_id AND t.corpus_hash = b.corpus_hash AND t.doc_id = b.doc_id
     AND t.tok_idx = b.first_tok + (CAST($budget AS BIGINT) - b.tokens_before) - 1
    WHERE b.run_id = $run_id AND b.stage = $stage AND b.rank <= $k AND b.tokens_before < CAST($budget AS BIGINT)
),
gold_entries AS (
    SELECT g.query_id, g.gold_idx, g.grade, g.doc_id, g.start_char, g.end_char
    FROM complete_runs r
    JOIN gold_spans g ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
    WHERE r.run_id = $run_id
),
spans AS (
    SELECT 'retrieved' AS side, query_id, doc_id, start_char, end_char FROM context WHERE end_char > start_char
    UNION ALL
    SELECT 'gold' AS side, query_id, doc_id, start_char, end_char FROM gold_entries WHERE end_char > start_char
),
reach AS (   -- islands: a span starts a new one when it begins after every earlier span of its side ended
    SELECT side, query_id, doc_id, start_char, end_char,
           MAX(end_char) OVER (PARTITION BY side, query_id, doc_id ORDER BY start_char, end_char
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM spans
),
islands AS (
    SELECT side, query_id, doc_id, MIN(start_char) AS s, MAX(end_char) AS e
    FROM (SELECT side, query_id, doc_id, start_char, end_char,
                 SUM(CASE WHEN reach IS NULL OR start_char > reach THEN 1 ELSE 0 END) OVER (
                     PARTITION BY side, query_id, doc_id ORDER BY start_char, end_char ROWS UNBOUNDED PRECEDING
                 ) AS island
          FROM reach) numbered
    GROUP BY side, query_id, doc_id, island
),
lengths AS (
    SELECT query_id,
           SUM(CASE WHEN side = 'retrieved' THEN e - s ELSE 0 END) AS retrieved,
           SUM(CASE WHEN side = 'gold' THEN e - s ELSE 0 END) AS gold
    FROM islands
    GROUP BY query_id
),
overlap AS (
    SELECT r.query_id, SUM(LEAST(r.e, g.e) - GREATEST(r.s, g.s)) AS n
    FROM islands r
    JOIN islands g ON g.side = 'gold' AND g.query_id = r.query_id AND g.doc_id = r.doc_id AND r.s < g.e AND g.s < r.e
    WHERE r.side = 'retrieved'
    GROUP BY r.query_id
),
first_hits AS (
    SELECT c.query_id, g.gold_idx, MAX(g.grade) AS grade, MIN(c.rank) AS first_rank
    FROM context c
    JOIN gold_entries g
      ON g.query_id = c.query_id AND g.doc_id = c.doc_id AND c.start_char < g.end_char AND g.start_char < c.end_char
    GROUP BY c.query_id, g.gold_idx
),
dcg AS (
    SELECT query_id, SUM(gain / (LN(first_rank + 1) / LN(2))) AS dcg
    FROM (SELECT query_id, first_rank, MAX(grade) AS gain FROM first_hits GROUP BY query_id, first_rank) credits
    GROUP BY query_id
),
idcg AS (
    SELECT i.query_id, SUM(i.gain / (LN(i.ideal_rank + 1) / LN(2))) AS idcg
    FROM ideal_gains i
    WHERE i.run_id = $run_id AND i.level = 'chunk'
    GROUP BY i.query_id
)
SELECT q.query_id, 'chunk' AS level,
       COALESCE(o.n, 0) * 1.0 / l.gold AS span_recall,
       CASE WHEN l.retrieved > 0 THEN COALESCE(o.n, 0) * 1.0 / l.retrieved ELSE 0.0 END AS span_precision,
       COALESCE(o.n, 0) * 1.0 / (l.retrieved + l.gold - COALESCE(o.n, 0)) AS span_iou,
       CASE WHEN COALESCE(o.n, 0) > 0 THEN 1.0 ELSE 0.0 END AS span_success,
       COALESCE(d.dcg, 0.0) / i.idcg AS span_ndcg
FROM eval_questions q
JOIN lengths l ON l.query_id = q.query_id
JOIN idcg i ON i.query_id = q.query_id
LEFT JOIN overlap o ON o.query_id = q.query_id
LEFT JOIN dcg d ON d.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
