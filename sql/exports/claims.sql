-- Export `claims`: every claim of every answer of one run, kept or dropped (reason: why it was dropped).
SELECT c.run_id, c.query_id, c.claim_idx, c.text, c.kept, c.reason
FROM claims c
WHERE c.run_id = $run_id
ORDER BY c.query_id, c.claim_idx
