-- The working every span and budgeted measure shares (included by measures/span_*.sql, never run alone):
-- the text a run retrieved, the top $k results taken in rank order until a context budget of $budget
-- tokens is filled (the result that fills it cut at that token; a huge $budget means no budget), and the
-- gold text of each question. Lengths are in characters of documents.text; each character counts once,
-- however many results (or gold entries) cover it.
--   lengths(query_id, retrieved, gold)  overlap(query_id, n): |retrieved ∩ gold|
--   first_hits(query_id, gold_idx, grade, first_rank): the first rank whose (cut) text overlaps each gold entry
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
)
