-- Views that turn stored hits into judged rankings. Every metric reads these.
-- Only complete runs are visible.

CREATE VIEW complete_runs AS
SELECT * FROM runs WHERE status = 'complete';

CREATE VIEW levels AS
SELECT 'chunk' AS level UNION ALL SELECT 'doc' AS level;

-- One row per question of a run, with its labels and how many results it returned.
CREATE VIEW eval_questions AS
SELECT r.run_id, q.query_id, q.query_text, q.category, q.form, q.hard_class, q.unanswerable,
       q.category <> 'no_answer' AS answerable,
       rq.n_results, rq.latency_ms
FROM complete_runs r
JOIN run_queries rq ON rq.run_id = r.run_id
JOIN queries q ON q.judgments_hash = r.judgments_hash AND q.query_id = rq.query_id;

-- Gold units per level. Chunk level: each gold entry (span) is a unit.
-- Document level: each distinct gold document is a unit, graded by its best entry.
CREATE VIEW gold_units AS
SELECT r.run_id, 'chunk' AS level, g.query_id, CAST(g.gold_idx AS VARCHAR) AS unit, g.grade
FROM complete_runs r
JOIN gold_spans g ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
UNION ALL
SELECT r.run_id, 'doc' AS level, g.query_id, g.doc_id AS unit, MAX(g.grade) AS grade
FROM complete_runs r
JOIN gold_spans g ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
GROUP BY r.run_id, g.query_id, g.doc_id;

CREATE VIEW unit_counts AS
SELECT run_id, level, query_id, COUNT(*) AS n_units
FROM gold_units
GROUP BY run_id, level, query_id;

-- Gains of the ideal ranking (for nDCG): units by grade, best first.
CREATE VIEW ideal_gains AS
SELECT run_id, level, query_id, grade AS gain,
       ROW_NUMBER() OVER (PARTITION BY run_id, level, query_id ORDER BY grade DESC, unit) AS ideal_rank
FROM gold_units;

-- Every (hit, gold span) pair where the hit's chunk overlaps the span.
CREATE VIEW chunk_gold_overlaps AS
SELECT h.run_id, h.stage, h.query_id, h.rank, g.gold_idx, g.grade
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
JOIN gold_spans g
  ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
 AND g.query_id = h.query_id AND g.doc_id = c.doc_id
 AND c.start_char < g.end_char AND g.start_char < c.end_char;

-- Each gold unit is credited once, at the first rank that overlaps it.
CREATE VIEW chunk_credits AS
SELECT run_id, stage, query_id, first_rank AS rank, MAX(grade) AS gain, COUNT(*) AS new_units
FROM (
    SELECT run_id, stage, query_id, gold_idx, MAX(grade) AS grade, MIN(rank) AS first_rank
    FROM chunk_gold_overlaps
    GROUP BY run_id, stage, query_id, gold_idx
) first_hits
GROUP BY run_id, stage, query_id, first_rank;

-- A chunk ranking collapsed to first-seen distinct documents.
CREATE VIEW doc_hits AS
SELECT h.run_id, h.stage, h.query_id, h.doc_id, MIN(h.rank) AS first_chunk_rank,
       ROW_NUMBER() OVER (PARTITION BY h.run_id, h.stage, h.query_id ORDER BY MIN(h.rank)) AS rank
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
GROUP BY h.run_id, h.stage, h.query_id, h.doc_id;

-- The judged ranking at both levels: rank, the gain credited there, and how many units it newly covers.
CREATE VIEW judged_ranking AS
SELECT h.run_id, h.stage, 'chunk' AS level, h.query_id, h.rank, h.chunk_id AS item,
       COALESCE(c.gain, 0) AS gain, COALESCE(c.new_units, 0) AS new_units
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
LEFT JOIN chunk_credits c
  ON c.run_id = h.run_id AND c.stage = h.stage AND c.query_id = h.query_id AND c.rank = h.rank
UNION ALL
SELECT d.run_id, d.stage, 'doc' AS level, d.query_id, d.rank, d.doc_id AS item,
       COALESCE(u.grade, 0) AS gain, CASE WHEN u.grade IS NULL THEN 0 ELSE 1 END AS new_units
FROM doc_hits d
LEFT JOIN gold_units u
  ON u.run_id = d.run_id AND u.level = 'doc' AND u.query_id = d.query_id AND u.unit = d.doc_id;
