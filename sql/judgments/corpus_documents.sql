-- Each document of a stored corpus with the SHA-256 that tells its versions apart. Parameter: corpus_hash.
SELECT doc_id, sha256
FROM documents
WHERE corpus_hash = $corpus_hash
ORDER BY doc_id
