-- The ranking's answer (assay.trec_ranking), registered as _assay_ranks (rel_id: a relevant
-- judgment the run retrieves; rank: its rank, as trec_eval ranks) and _assay_answered (qcode: the
-- judged queries the run holds a line for).
CREATE TABLE trec_relevant_ranks AS
SELECT r.qcode, r.docno, r.grade, x.rank
FROM _assay_ranks x
JOIN trec_relevant r ON r.rel_id = x.rel_id;

CREATE TABLE trec_run_queries AS
SELECT qcode
FROM _assay_answered;
