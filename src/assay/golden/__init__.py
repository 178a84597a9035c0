"""A golden set's upkeep against the corpus and the warehouse: check (lints), rebase, draft."""
