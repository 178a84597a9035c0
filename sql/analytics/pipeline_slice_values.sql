-- pipeline_values for the questions of one slice: $field is category, form or hard_class and $label its
-- value; the label 'None' also takes the questions that have none (Python names a missing label 'None').
SELECT m.run_id, ARRAY_AGG(m.value ORDER BY m.unit) AS vals
FROM measure_values m
JOIN complete_runs r ON r.run_id = m.run_id
JOIN eval_questions q ON q.run_id = m.run_id AND q.query_id = m.query_id
WHERE r.pipeline = $pipeline AND m.measure = $measure AND m.stage = $stage AND m.level = $level
  AND COALESCE(CASE $field WHEN 'category' THEN q.category WHEN 'form' THEN q.form
                           WHEN 'hard_class' THEN q.hard_class END, 'None') = $label
GROUP BY m.run_id
