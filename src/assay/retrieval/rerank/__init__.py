"""Rerankers: rescore the head of a ranked candidate list with a stronger, slower model."""
