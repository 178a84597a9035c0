"""Dense embeddings: a model's identity, the embedder, and the warehouse cache of vectors."""

from assay.embedding.identity import EmbeddingIdentity

__all__ = ["EmbeddingIdentity"]
