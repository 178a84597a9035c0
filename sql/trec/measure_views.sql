-- The tables sql/measures/*.sql read, for one pseudo-run: run_id 'trec', stage 'final', level
-- 'doc' (the only level: a TREC run ranks documents). A question's query_id is its query's code
-- (query_codes.sql; assay.trec_eval names the values). A unit is a relevant document (relevance
-- >= 1, trec_eval's default relevance level), its gain its relevance, so nDCG uses the grades as
-- trec_eval does; grades <= 0 are judged non-relevant and gain nothing.
--
-- judged_ranking holds only the retrieved relevant documents, at their ranks in the full ranking:
-- every measure reads only rows with gain > 0 (or new_units > 0), so the other rows of the
-- ranking would change no value, and leaving them out saves materializing the whole run.
-- tests/test_trec_eval.py checks this against the full ranking for every measure.
CREATE TABLE levels AS SELECT 'doc' AS level;

CREATE TABLE eval_questions AS
SELECT 'trec' AS run_id, qcode AS query_id, TRUE AS answerable
FROM trec_queries;

CREATE TABLE unit_counts AS
SELECT 'trec' AS run_id, 'doc' AS level, qcode AS query_id, COUNT(*) AS n_units
FROM trec_relevant
GROUP BY qcode;

-- The ideal ranking's gains: only their order by grade matters, so equal grades are not ordered further.
CREATE TABLE ideal_gains AS
SELECT 'trec' AS run_id, 'doc' AS level, qcode AS query_id, grade AS gain,
       ROW_NUMBER() OVER (PARTITION BY qcode ORDER BY grade DESC) AS ideal_rank
FROM trec_relevant;

CREATE TABLE judged_ranking AS
SELECT 'trec' AS run_id, 'final' AS stage, 'doc' AS level, qcode AS query_id, rank, docno AS item,
       grade AS gain, 1 AS new_units
FROM trec_relevant_ranks;
