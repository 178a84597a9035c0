-- The answer of each question of run $run_id: its status and where the answer stage lost it (answer_attribution).
-- Read only for a run that has answers: without any both are NULL, and the view's run filter does not reach the
-- hit tables (planning and reading it cost more than the questions' own query).
SELECT q.query_id, ans.status AS answer_status, aa.lost_at AS answer_lost_at
FROM eval_questions q
LEFT JOIN answers ans ON ans.run_id = q.run_id AND ans.query_id = q.query_id
LEFT JOIN answer_attribution aa ON aa.run_id = q.run_id AND aa.query_id = q.query_id
WHERE q.run_id = $run_id
