"""The words a judgment's labels are chosen from: what the CLI offers as choices, without loading the records."""

CATEGORIES = ("normal", "ambiguous", "adversarial", "no_answer")
FORMS = ("match", "gap")
UNANSWERABLE = ("near_miss", "out_of_corpus", "under_specified")
# The category and the form of a question that gives none: a golden set written by hand may leave both out. The
# word is the one imported collections already carry as their form, so one slice name means "nobody labelled it".
UNLABELED = "unlabeled"
