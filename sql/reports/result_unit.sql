-- What a run's final results are: how many, how long (characters, tokens), how many are whole documents.
SELECT COUNT(*) AS n_results,
       AVG(CAST(c.end_char - c.start_char AS DOUBLE)) AS mean_chars,
       AVG(CAST(t.n_tokens AS DOUBLE)) AS mean_tokens,
       SUM(CASE WHEN c.start_char = 0 AND c.end_char = LENGTH(d.text) THEN 1 ELSE 0 END) AS whole_documents
FROM hits h
JOIN complete_runs r ON r.run_id = h.run_id
JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id
JOIN documents d ON d.corpus_hash = r.corpus_hash AND d.doc_id = c.doc_id
LEFT JOIN chunk_tokens t ON t.tokenizer_id = r.tokenizer_id AND t.chunk_set = r.chunk_set AND t.chunk_id = h.chunk_id
WHERE h.run_id = $run_id AND h.stage = 'final'
