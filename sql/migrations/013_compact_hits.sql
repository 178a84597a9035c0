-- Hits stored compactly. A hit row was four strings, a rank and a score (about 42 bytes), with a primary-key
-- index as large again, and a BM25 run stored its `final` list twice. Now:
--   chunk_keys  every chunk a hit can name, once per chunk set, under an integer key;
--   hit_rows    the rows of each stored list: its key, a rank, the chunk's key and the score (bit for bit);
--   hit_lists   each (run, question, stage) list: the stored list holding it and how far down it reads.
-- A list equal to the first rows of its input stage's list (the stage before it in run_stages) points at the
-- input's rows instead of repeating them: `final` of a BM25 run is its `bm25` list, cut or whole. A derived run
-- (rescore, revalidation) points at its source's lists. `hits` is a view with the old table's columns.
-- Uniqueness of (run_id, query_id, stage, rank) is checked when a run is written (assay.store.hits), not by an index.

CREATE TABLE chunk_keys (
    chunk_key     INTEGER NOT NULL,      -- unique in the warehouse; a chunk set's keys are consecutive
    chunk_set     VARCHAR NOT NULL,
    chunk_id      VARCHAR NOT NULL,
    doc_id        VARCHAR NOT NULL
);

CREATE TABLE hit_lists (
    run_id        VARCHAR NOT NULL,
    query_id      VARCHAR NOT NULL,
    stage         VARCHAR NOT NULL,
    list_key      INTEGER NOT NULL,      -- the hit_rows list this one reads
    through_rank  INTEGER NOT NULL       -- it reads that list's rows ranked up to this
);

CREATE TABLE hit_rows (
    list_key      INTEGER NOT NULL,
    rank          INTEGER NOT NULL,      -- 1-based
    chunk_key     INTEGER NOT NULL,
    score         DOUBLE
);

-- Every chunk of every stored chunk set, in document and chunk order.
INSERT INTO chunk_keys (chunk_key, chunk_set, chunk_id, doc_id)
SELECT CAST(ROW_NUMBER() OVER (ORDER BY chunk_set, doc_id, ordinal, chunk_id) - 1 AS INTEGER),
       chunk_set, chunk_id, doc_id
FROM chunks;

-- A hit naming a chunk its run's chunk set lacks (or another document than the chunk's) gets a key of its own.
INSERT INTO chunk_keys (chunk_key, chunk_set, chunk_id, doc_id)
SELECT CAST((SELECT COALESCE(MAX(chunk_key), -1) FROM chunk_keys)
            + ROW_NUMBER() OVER (ORDER BY n.chunk_set, n.chunk_id, n.doc_id) AS INTEGER),
       n.chunk_set, n.chunk_id, n.doc_id
FROM (SELECT DISTINCT COALESCE(r.chunk_set, '') AS chunk_set, h.chunk_id, h.doc_id
      FROM hits h LEFT JOIN runs r ON r.run_id = h.run_id) n
WHERE NOT EXISTS (SELECT 1 FROM chunk_keys k
                  WHERE k.chunk_set = n.chunk_set AND k.chunk_id = n.chunk_id AND k.doc_id = n.doc_id);

-- Each stored list, with a key of its own (consecutive within a run) and whether its ranks are 1..n.
CREATE TEMP TABLE migrate_013_lists AS
SELECT h.run_id, h.query_id, h.stage, MAX(h.rank) AS through_rank,
       COUNT(*) = MAX(h.rank) AND MIN(h.rank) = 1 AS whole,
       CAST(ROW_NUMBER() OVER (ORDER BY h.run_id, h.query_id, MIN(s.position), h.stage) AS INTEGER) AS own_key
FROM hits h
LEFT JOIN run_stages s ON s.run_id = h.run_id AND s.stage = h.stage
GROUP BY h.run_id, h.query_id, h.stage;

-- Every hit with integers for its list and chunk: what the comparisons below join on, and hit_rows' source.
CREATE TEMP TABLE migrate_013_rows AS
SELECT l.own_key, h.rank, c.chunk_key, h.score
FROM hits h
JOIN migrate_013_lists l ON l.run_id = h.run_id AND l.query_id = h.query_id AND l.stage = h.stage
LEFT JOIN runs r ON r.run_id = h.run_id
JOIN chunk_keys c ON c.chunk_set = COALESCE(r.chunk_set, '') AND c.chunk_id = h.chunk_id AND c.doc_id = h.doc_id;

-- The list each list may read instead of storing its own: a derived run's (rescore, revalidation) the list of
-- its source run for the same question and stage; any other run's the list of the stage before it. Both
-- lists' ranks must be 1..n.
CREATE TEMP TABLE migrate_013_inputs AS
SELECT l.own_key, i.own_key AS input_key, l.through_rank
FROM migrate_013_lists l
JOIN runs r ON r.run_id = l.run_id
LEFT JOIN (SELECT run_id, stage, LAG(stage) OVER (PARTITION BY run_id ORDER BY position) AS input
           FROM run_stages) s ON s.run_id = l.run_id AND s.stage = l.stage
JOIN migrate_013_lists i
  ON i.run_id = COALESCE(r.source_run_id, l.run_id) AND i.query_id = l.query_id
 AND i.stage = CASE WHEN r.source_run_id IS NULL THEN s.input ELSE l.stage END
WHERE l.whole AND i.whole;

-- Lists equal to the first rows of that list: every row the same at its rank (a chunk key names the chunk set,
-- the chunk and the document), the score bit for bit.
CREATE TEMP TABLE migrate_013_prefixes AS
SELECT i.own_key, i.input_key
FROM migrate_013_inputs i
JOIN migrate_013_rows a ON a.own_key = i.own_key
JOIN migrate_013_rows b ON b.own_key = i.input_key AND b.rank = a.rank
WHERE b.chunk_key = a.chunk_key
  AND b.score IS NOT DISTINCT FROM a.score AND signbit(b.score) IS NOT DISTINCT FROM signbit(a.score)
GROUP BY i.own_key, i.input_key, i.through_rank
HAVING COUNT(*) = i.through_rank;

-- The stored list each list reads: its own, or (through a chain of prefixes) the first stored one.
CREATE TEMP TABLE migrate_013_keys AS
WITH RECURSIVE resolved (own_key, list_key) AS (
    SELECT l.own_key, l.own_key
    FROM migrate_013_lists l
    WHERE NOT EXISTS (SELECT 1 FROM migrate_013_prefixes p WHERE p.own_key = l.own_key)
    UNION ALL
    SELECT p.own_key, r.list_key
    FROM migrate_013_prefixes p
    JOIN resolved r ON r.own_key = p.input_key
)
SELECT own_key, list_key FROM resolved;

INSERT INTO hit_lists (run_id, query_id, stage, list_key, through_rank)
SELECT l.run_id, l.query_id, l.stage, k.list_key, l.through_rank
FROM migrate_013_lists l
JOIN migrate_013_keys k ON k.own_key = l.own_key
ORDER BY l.own_key;

INSERT INTO hit_rows (list_key, rank, chunk_key, score)
SELECT h.own_key, h.rank, h.chunk_key, h.score
FROM migrate_013_rows h
JOIN migrate_013_keys k ON k.own_key = h.own_key AND k.list_key = h.own_key
ORDER BY h.own_key, h.rank;

DROP TABLE migrate_013_keys;
DROP TABLE migrate_013_prefixes;
DROP TABLE migrate_013_inputs;
DROP TABLE migrate_013_rows;
DROP TABLE migrate_013_lists;
DROP TABLE hits;

-- Every hit of every stored list, as the hits table held it.
CREATE VIEW hits AS
SELECT l.run_id, l.query_id, l.stage, h.rank, k.chunk_id, k.doc_id, h.score
FROM hit_lists l
JOIN hit_rows h ON h.list_key = l.list_key AND h.rank <= l.through_rank
JOIN chunk_keys k ON k.chunk_key = h.chunk_key;
