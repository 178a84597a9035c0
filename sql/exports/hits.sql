-- Export `hits`: every stage's ranked hits of one run, with the chunk's span [start_char, end_char) in its
-- document's text, and whether it overlaps a gold span of its question: relevance 1 when it does (0 when not),
-- grade the highest grade among the spans it overlaps (0 when none). The metrics credit each gold span once,
-- at the first rank that overlaps it; relevance is the overlap alone, so two chunks of one span both have 1.
-- The LEFT JOIN keeps a hit even if its chunk row were missing (span NULL, relevance 0).
SELECT h.run_id, h.query_id, h.stage, h.rank, h.chunk_id, h.doc_id, h.score, c.start_char, c.end_char,
       CASE WHEN o.grade IS NULL THEN 0 ELSE 1 END AS relevance, COALESCE(o.grade, 0) AS grade
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
LEFT JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
LEFT JOIN (
    SELECT stage, query_id, rank, MAX(grade) AS grade
    FROM chunk_gold_overlaps
    WHERE run_id = $run_id
    GROUP BY stage, query_id, rank
) o ON o.stage = h.stage AND o.query_id = h.query_id AND o.rank = h.rank
WHERE h.run_id = $run_id
ORDER BY h.query_id, h.stage, h.rank
