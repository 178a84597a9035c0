-- nDCG within a context budget of $budget tokens: the results taken in rank order until the budget is
-- filled, the one that fills it cut at that token (and credited only for gold its cut text overlaps).
-- Each gold unit is credited once, at the first rank whose text overlaps it, with the highest grade among
-- the units that rank newly covers (the rule of every chunk-level measure). The ideal DCG is over every
-- gold unit: a budget too small to hold them all cannot reach 1.
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
first_hits AS (
    SELECT c.query_id, g.gold_idx, MAX(g.grade) AS grade, MIN(c.rank) AS first_rank
    FROM context c
    JOIN complete_runs r ON r.run_id = $run_id
    JOIN gold_spans g
      ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
     AND g.query_id = c.query_id AND g.doc_id = c.doc_id
     AND c.start_char < g.end_char AND g.start_char < c.end_char
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
SELECT q.query_id, 'chunk' AS level, COALESCE(d.dcg, 0.0) / i.idcg AS value
FROM eval_questions q
JOIN idcg i ON i.query_id = q.query_id
LEFT JOIN dcg d ON d.query_id = q.query_id
WHERE q.run_id = $run_id AND q.answerable
