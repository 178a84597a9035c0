-- Where each gold span of one question lies inside each hit of run $run_id that overlaps it, as offsets
-- into the hit's text: [mark_start, mark_end) is the overlap of the chunk's span and the gold span.
SELECT h.stage, h.rank, g.gold_idx,
       CASE WHEN g.start_char > c.start_char THEN g.start_char ELSE c.start_char END - c.start_char AS mark_start,
       CASE WHEN g.end_char < c.end_char THEN g.end_char ELSE c.end_char END - c.start_char AS mark_end
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
JOIN gold_spans g
  ON g.judgments_hash = r.judgments_hash AND g.corpus_hash = r.corpus_hash
 AND g.query_id = h.query_id AND g.doc_id = c.doc_id
 AND c.start_char < g.end_char AND g.start_char < c.end_char
WHERE h.run_id = $run_id AND h.query_id = $query_id
ORDER BY h.stage, h.rank, mark_start, g.gold_idx
