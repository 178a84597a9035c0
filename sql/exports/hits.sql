-- Export `hits`: every stage's ranked hits of one run, with the chunk's span [start_char, end_char) in its
-- document's text, and whether it overlaps a gold span of its question: relevance 1 when it does (0 when not),
-- grade the highest grade among the spans it overlaps (0 when none). The metrics credit each gold span once,
-- at the first rank that overlaps it; relevance is the overlap alone, so two chunks of one span both have 1.
-- The overlap is the chunk_gold_overlaps view's, over the run of any status (the view holds complete runs only).
-- The LEFT JOIN keeps a hit even if its chunk row were missing (span NULL, relevance 0).
SELECT h.run_id, h.query_id, h.stage, h.rank, h.chunk_id, h.doc_id, h.score, c.start_char, c.end_char,
       CASE WHEN o.grade IS NULL THEN 0 ELSE 1 END AS relevance, COALESCE(o.grade, 0) AS grade
FROM hits h
JOIN runs r ON r.run_id = h.run_id
LEFT JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
LEFT JOIN (
    SELECT oh.stage, oh.query_id, oh.rank, MAX(g.grade) AS grade
    FROM hits oh
    JOIN runs orun ON orun.run_id = oh.run_id
    JOIN chunks oc ON oc.chunk_set = orun.chunk_set AND oc.chunk_id = oh.chunk_id
    JOIN gold_spans g
      ON g.judgments_hash = orun.judgments_hash AND g.corpus_hash = orun.corpus_hash
     AND g.query_id = oh.query_id AND g.doc_id = oc.doc_id
     AND oc.start_char < g.end_char AND g.start_char < oc.end_char
    WHERE oh.run_id = $run_id
    GROUP BY oh.stage, oh.query_id, oh.rank
) o ON o.stage = h.stage AND o.query_id = h.query_id AND o.rank = h.rank
WHERE h.run_id = $run_id
ORDER BY h.query_id, h.stage, h.rank
