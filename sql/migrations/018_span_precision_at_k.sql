-- The standard measures no longer hold SpanPrecision@1000tok (at a filled budget of N tokens it is SpanRecall@Ntok
-- times the gold length over the length of N tokens: recall again, re-weighted) but SpanPrecision@10 and SpanIoU@10, the share of what
-- the top 10 results return that is gold, and its overlap with the gold over their union (docs/measures.md).
-- run_overview gains their columns; span_precision_at_1000tok stays for the runs that stored it (NULL for runs
-- stored since, whose value `assay report -m SpanPrecision@1000tok` still computes from their hits).
-- One row per run (whatever its status): what it was, and its headline means at the final stage
-- (NULL: not stored for this run, e.g. a failed run, or no answer stage).
CREATE OR REPLACE VIEW run_overview AS
WITH questions AS (
    SELECT run_id, COUNT(*) AS n_questions FROM run_queries GROUP BY run_id
),
answerable AS (
    SELECT run_id, SUM(CASE WHEN answerable THEN 1 ELSE 0 END) AS n_answerable FROM eval_questions GROUP BY run_id
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
