-- Where each gold span of question $query_id (NULL: every question) lies inside each hit of run $run_id
-- ranked within $depth (or first to overlap gold in its stage) that overlaps it, as offsets into the hit's
-- text: [mark_start, mark_end) is the overlap of the chunk's span and the gold span.
WITH hit_golds AS (
    SELECT h.query_id, h.stage, h.rank, g.gold_idx, c.start_char AS chunk_start, c.end_char AS chunk_end,
           g.start_char AS gold_start, g.end_char AS gold_end
    FROM hits h
    JOIN complete_runs r ON r.run_id = h.run_id
    JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
    JOIN gold_spans g
      ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
     AND g.query_id = h.query_id AND g.doc_id = c.doc_id
     AND c.start_char < g.end_char AND g.start_char < c.end_char
    WHERE h.run_id = $run_id AND ($query_id IS NULL OR h.query_id = $query_id)
), first_relevant AS (
    SELECT query_id, stage, MIN(rank) AS rank FROM hit_golds GROUP BY query_id, stage
)
SELECT o.query_id, o.stage, o.rank, o.gold_idx,
       CASE WHEN o.gold_start > o.chunk_start THEN o.gold_start ELSE o.chunk_start END - o.chunk_start AS mark_start,
       CASE WHEN o.gold_end < o.chunk_end THEN o.gold_end ELSE o.chunk_end END - o.chunk_start AS mark_end
FROM hit_golds o
JOIN first_relevant f ON f.query_id = o.query_id AND f.stage = o.stage
WHERE o.rank <= $depth OR o.rank = f.rank
ORDER BY o.query_id, o.stage, o.rank, mark_start, o.gold_idx
