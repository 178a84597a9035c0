-- The points of sweep $sweep_id whose run did not complete (status failed or blocked), in grid order.
SELECT p.run_id, r.status
FROM sweep_points p
JOIN runs r ON r.run_id = p.run_id
WHERE p.sweep_id = $sweep_id AND r.status <> 'complete'
ORDER BY p.point
