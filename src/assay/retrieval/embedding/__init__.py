"""Dense embeddings: a model's identity, the embedder, and the warehouse cache of vectors."""

from assay.retrieval.embedding.identity import EmbeddingIdentity

__all__ = ["EmbeddingIdentity"]
