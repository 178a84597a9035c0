"""The words a judgment's labels are chosen from: what the CLI offers as choices, without loading the records."""

CATEGORIES = ("normal", "ambiguous", "adversarial", "no_answer")
FORMS = ("match", "gap")
UNANSWERABLE = ("near_miss", "out_of_corpus", "under_specified")
