-- The tables sql/measures/*.sql read, for one pseudo-run: run_id 'trec', stage 'final', level
-- 'doc' (the only level: a TREC run ranks documents): views over the Arrow tables
-- assay.measures.trec_tables builds, registered on the connection for its life (materializing them as
-- tables first cost more than the measures' own scans of them). A question's query_id is its
-- query's code (trec_query_codes maps codes to the qrels' query ids). A unit is a relevant
-- document (relevance >= 1, trec_eval's default relevance level), its gain its relevance, so nDCG
-- uses the grades as trec_eval does; grades <= 0 are judged non-relevant and gain nothing.
--
-- judged_ranking holds only the retrieved relevant documents, at their ranks in the full ranking:
-- every measure reads only rows with gain > 0 (or new_units > 0), so the other rows of the
-- ranking would change no value, and leaving them out saves materializing the whole run.
-- tests/test_trec_eval.py checks this against the full ranking for every measure.
CREATE VIEW trec_query_codes AS
SELECT qcode, query_id
FROM _assay_names;

CREATE TABLE levels AS SELECT 'doc' AS level;

CREATE VIEW eval_questions AS
SELECT 'trec' AS run_id, query_id, TRUE AS answerable
FROM _assay_questions;

CREATE VIEW unit_counts AS
SELECT 'trec' AS run_id, 'doc' AS level, query_id, n_units
FROM _assay_units;

CREATE VIEW ideal_gains AS
SELECT 'trec' AS run_id, 'doc' AS level, query_id, gain, ideal_rank
FROM _assay_ideal;

CREATE VIEW judged_ranking AS
SELECT 'trec' AS run_id, 'final' AS stage, 'doc' AS level, query_id, rank, item, gain, 1 AS new_units
FROM _assay_judged;
