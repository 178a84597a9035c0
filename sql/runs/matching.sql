-- Runs whose id contains $part anywhere (a prefix, the random suffix, any piece of it), compared as text: no
-- character of $part is a wildcard. By id.
SELECT r.run_id, r.status, r.pipeline
FROM runs r
WHERE instr(r.run_id, $part) > 0
ORDER BY r.run_id
