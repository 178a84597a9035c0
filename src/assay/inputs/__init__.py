"""What the user gives: a corpus read, a golden set parsed and resolved, chunks, the project's
assay.toml, BEIR and TREC readers."""
