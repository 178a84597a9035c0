-- Counts as BIGINT, not HUGEINT: DuckDB types a SUM of integers HUGEINT, which reaches Arrow (a BI tool, Ibis, a
-- Parquet export) as decimal128(38,0). The same views as before, each count cast: budget_hits.tokens_before
-- (010), fusion_effect.rescued and lost (003), run_overview.n_answerable (018). No value changes.
CREATE OR REPLACE VIEW budget_hits AS
SELECT h.run_id, h.stage, h.query_id, h.rank, h.chunk_id, c.doc_id, c.start_char, c.end_char,
       r.tokenizer_id, r.corpus_hash, t.first_tok, t.n_tokens,
       CAST(COALESCE(SUM(CAST(t.n_tokens AS BIGINT)) OVER (
           PARTITION BY h.run_id, h.stage, h.query_id ORDER BY h.rank
           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS BIGINT) AS tokens_before
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
JOIN chunk_tokens t ON t.tokenizer_id = r.tokenizer_id AND t.chunk_set = r.chunk_set AND t.chunk_id = h.chunk_id;

CREATE OR REPLACE VIEW fusion_effect AS
SELECT run_id,
       CAST(SUM(CASE WHEN in_fusion = 1 AND (in_bm25 = 0 OR in_dense = 0) THEN 1 ELSE 0 END) AS BIGINT) AS rescued,
       CAST(SUM(CASE WHEN in_fusion = 0 AND (in_bm25 = 1 OR in_dense = 1) THEN 1 ELSE 0 END) AS BIGINT) AS lost
FROM stage_attribution
WHERE in_fusion IS NOT NULL
GROUP BY run_id;

CREATE OR REPLACE VIEW run_overview AS
WITH questions AS (
    SELECT run_id, COUNT(*) AS n_questions FROM run_queries GROUP BY run_id
),
answerable AS (
    SELECT run_id, CAST(SUM(CASE WHEN answerable THEN 1 ELSE 0 END) AS BIGINT) AS n_answerable FROM eval_questions
    GROUP BY run_id
),
means AS (
    SELECT run_id,
           AVG(CASE WHEN measure = 'Success@3' AND level = 'doc' THEN value END) AS success_at_3_doc,
           AVG(CASE WHEN measure = 'Success@10' AND level = 'chunk' THEN value END) AS success_at_10_chunk,
           AVG(CASE WHEN measure = 'R@10' AND level = 'chunk' THEN value END) AS recall_at_10_chunk,
           AVG(CASE WHEN measure = 'RR@10' AND level = 'doc' THEN value END) AS rr_at_10_doc,
           AVG(CASE WHEN measure = 'nDCG@10' AND level = 'chunk' THEN value END) AS ndcg_at_10_chunk,
           AVG(CASE WHEN measure = 'nDCG@10' AND level = 'doc' THEN value END) AS ndcg_at_10_doc,
           AVG(CASE WHEN measure = 'SpanRecall@1000tok' AND level = 'chunk' THEN value END) AS span_recall_at_1000tok,
           AVG(CASE WHEN measure = 'SpanPrecision@1000tok' AND level = 'chunk' THEN value END)
               AS span_precision_at_1000tok,
           AVG(CASE WHEN measure = 'SpanPrecision@10' AND level = 'chunk' THEN value END) AS span_precision_at_10,
           AVG(CASE WHEN measure = 'SpanIoU@10' AND level = 'chunk' THEN value END) AS span_iou_at_10,
           AVG(CASE WHEN measure = 'FalseAbstain' THEN value END) AS false_abstain,
           AVG(CASE WHEN measure = 'answer_rate' THEN value END) AS answer_rate,
           AVG(CASE WHEN measure = 'faithfulness' THEN value END) AS faithfulness
    FROM measure_values
    WHERE stage = 'final'
    GROUP BY run_id
)
SELECT r.run_id, r.started_at, r.finished_at, r.status, r.kind, r.source_run_id, r.pipeline,
       cs.chunker, r.corpus_hash, COALESCE(co.name, co.root) AS corpus,
       r.judgments_hash, COALESCE(js.name, js.source_path) AS judgments,
       COALESCE(q.n_questions, 0) AS n_questions, a.n_answerable,
       m.success_at_3_doc, m.success_at_10_chunk, m.recall_at_10_chunk, m.rr_at_10_doc,
       m.ndcg_at_10_chunk, m.ndcg_at_10_doc, m.span_recall_at_1000tok, m.span_precision_at_1000tok,
       m.span_precision_at_10, m.span_iou_at_10,
       m.false_abstain, m.answer_rate, m.faithfulness
FROM runs r
LEFT JOIN chunk_sets cs ON cs.chunk_set = r.chunk_set
LEFT JOIN corpora co ON co.corpus_hash = r.corpus_hash
LEFT JOIN judgment_sets js ON js.judgments_hash = r.judgments_hash
LEFT JOIN questions q ON q.run_id = r.run_id
LEFT JOIN answerable a ON a.run_id = r.run_id
LEFT JOIN means m ON m.run_id = r.run_id;
