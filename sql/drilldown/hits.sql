-- One question's hits in every stage of run $run_id: the top $depth of each stage, and the stage's first
-- hit overlapping a gold span when it ranks below that. Each with its chunk's span and text (a whole
-- document and an external retriever's span are chunks of the run's chunk set too), its best gold grade
-- (NULL when it overlaps no gold span), and whether it lies below the depth.
WITH first_relevant AS (
    SELECT stage, MIN(rank) AS rank
    FROM chunk_gold_overlaps
    WHERE run_id = $run_id AND query_id = $query_id
    GROUP BY stage
), grades AS (
    SELECT stage, rank, MAX(grade) AS grade
    FROM chunk_gold_overlaps
    WHERE run_id = $run_id AND query_id = $query_id
    GROUP BY stage, rank
)
SELECT h.stage, h.rank, h.chunk_id, h.doc_id, h.score, c.start_char, c.end_char, c.text, g.grade,
       h.rank > $depth AS beyond_depth
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
LEFT JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
LEFT JOIN grades g ON g.stage = h.stage AND g.rank = h.rank
LEFT JOIN first_relevant f ON f.stage = h.stage
WHERE h.run_id = $run_id AND h.query_id = $query_id
  AND (h.rank <= $depth OR h.rank = f.rank)
ORDER BY h.stage, h.rank
