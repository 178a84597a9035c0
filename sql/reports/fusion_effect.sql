-- Questions fusion rescued (gold missing from one input list, kept) and lost (in an input, cut by fusion).
SELECT rescued, lost FROM fusion_effect WHERE run_id = $run_id
