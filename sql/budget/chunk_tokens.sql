-- A chunk's tokens: the pieces of its document that overlap its span (first piece, how many).
INSERT INTO chunk_tokens (tokenizer_id, chunk_set, chunk_id, first_tok, n_tokens)
SELECT $tokenizer_id, c.chunk_set, c.chunk_id, COALESCE(MIN(t.tok_idx), 0), COUNT(t.tok_idx)
FROM chunks c
LEFT JOIN doc_tokens t
  ON t.tokenizer_id = $tokenizer_id AND t.corpus_hash = $corpus_hash AND t.doc_id = c.doc_id
 AND t.start_char < c.end_char AND c.start_char < t.end_char
WHERE c.chunk_set = $chunk_set
GROUP BY c.chunk_set, c.chunk_id
