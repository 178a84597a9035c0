-- Export `citations`: every citation of every claim of one run: the chunk and quote it cites, whether the quote
-- is valid, and for a valid one where it lies in its document, the span [start_char, end_char).
SELECT c.run_id, c.query_id, c.claim_idx, c.cite_idx, c.chunk_id, c.quote, c.valid, c.reason, c.doc_id,
       c.start_char, c.end_char
FROM citations c
WHERE c.run_id = $run_id
ORDER BY c.query_id, c.claim_idx, c.cite_idx
