-- Span measures over the text a run retrieved: the top $k results, taken in rank order until a context
-- budget of $budget tokens is filled (the result that fills it cut at that token; pass a huge value for
-- no budget). Lengths are in characters of documents.text; each character counts once, however many
-- results (or gold entries) cover it.
--   span_recall    = |retrieved ∩ gold| / |gold|
--   span_precision = |retrieved ∩ gold| / |retrieved|   (0 when nothing was retrieved)
--   span_iou       = |retrieved ∩ gold| / |retrieved ∪ gold|
--   span_success   = 1 when the retrieved text overlaps any gold span (budgeted Success)
WITH context AS (
    SELECT b.query_id, b.doc_id, b.start_char,
           CASE WHEN b.tokens_before + b.n_tokens <= CAST($budget AS BIGINT) THEN b.end_char
                ELSE GREATEST(b.start_char, LEAST(b.end_char, t.end_char)) END AS end_char
    FROM budget_hits b
    LEFT JOIN doc_tokens t
      ON t.tokenizer_id = b.tokenizer_id AND t.corpus_hash = b.corpus_hash AND t.doc_id = b.doc_id
     AND t.tok_idx = b.first_tok + (CAST($budget AS BIGINT) - b.tokens_before) - 1
    WHERE b.run_id = $run_id AND b.stage = $stage AND b.rank <= $k AND b.tokens_before < CAST($budget AS BIGINT)
),
context_runs AS (   -- islands: a span starts a new one when it begins after every earlier span ended
    SELECT query_id, doc_id, start_char, end_char,
           MAX(end_char) OVER (PARTITION BY query_id, doc_id ORDER BY start_char, end_char
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM context
    WHERE end_char > start_char
),
retrieved AS (
    SELECT query_id, doc_id, MIN(start_char) AS s, MAX(end_char) AS e
    FROM (SELECT query_id, doc_id, start_char, end_char,
                 SUM(CASE WHEN reach IS NULL OR start_char > reach THEN 1 ELSE 0 END) OVER (
                     PARTITION BY query_id, doc_id ORDER BY start_char, end_char ROWS UNBOUNDED PRECEDING) AS island
          FROM context_runs) x
    GROUP BY query_id, doc_id, island
),
gold_runs AS (
    SELECT g.query_id, g.doc_id, g.start_char, g.end_char,
           MAX(g.end_char) OVER (PARTITION BY g.query_id, g.doc_id ORDER BY g.start_char, g.end_char
                                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM complete_runs r
    JOIN gold_spans g ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
    WHERE r.run_id = $run_id AND g.end_char > g.start_char
),
gold AS (
    SELECT query_id, doc_id, MIN(start_char) AS s, MAX(end_char) AS e
    FROM (SELECT query_id, doc_id, start_char, end_char,
                 SUM(CASE WHEN reach IS NULL OR start_char > reach THEN 1 ELSE 0 END) OVER (
                     PARTITION BY query_id, doc_id ORDER BY start_char, end_char ROWS UNBOUNDED PRECEDING) AS island
          FROM gold_runs) x
    GROUP BY query_id, doc_id, island
),
retrieved_len AS (SELECT query_id, SUM(e - s) AS n FROM retrieved GROUP BY query_id),
gold_len AS (SELECT query_id, SUM(e - s) AS n FROM gold GROUP BY query_id),
overlap AS (
    SELECT r.query_id, SUM(LEAST(r.e, g.e) - GREATEST(r.s, g.s)) AS n
    FROM retrieved r
    JOIN gold g ON g.query_id = r.query_id AND g.doc_id = r.doc_id AND r.s < g.e AND g.s < r.e
    GROUP BY r.query_id
)
SELECT q.query_id, 'chunk' AS level,
       COALESCE(o.n, 0) * 1.0 / gl.n AS span_recall,
       CASE WHEN COALESCE(rl.n, 0) > 0 THEN COALESCE(o.n, 0) * 1.0 / rl.n ELSE 0.0 END AS span_precision,
       COALESCE(o.n, 0) * 1.0 / (COALESCE(rl.n, 0) + gl.n - COALESCE(o.n, 0)) AS span_iou,
       CASE WHEN COALESCE(o.n, 0) > 0 THEN 1.0 ELSE 0.0 END AS span_success
FROM eval_questions q
JOIN gold_len gl ON gl.query_id = q.query_id
LEFT JOIN retrieved_len rl ON rl.query_id = q.query_id
LEFT JOIN overlap o ON o.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
