"""Whether a change is real: paired inference, family corrections, comparison, gates,
regression, the verdict in words."""
