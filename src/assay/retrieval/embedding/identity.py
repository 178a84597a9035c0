"""What makes two vectors comparable. Vectors of different identities never mix."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from assay.core.hashing import config_hash


@dataclass(frozen=True)
class EmbeddingIdentity:
    model: str
    onnx_sha256: str
    dim: int
    normalized: bool
    query_prefix: str
    passage_prefix: str
    max_tokens: int  # inputs are truncated to this many word pieces

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def hash(self) -> str:
        return config_hash(self.as_dict())
