"""Content hashes that identify corpora, judgments and configurations."""

from __future__ import annotations

import hashlib
import json
from typing import Iterable


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


def canonical_json(value) -> str:
    """JSON with sorted keys and no insignificant whitespace: the form every config hash is taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def config_hash(config: dict) -> str:
    return sha256_text(canonical_json(config))


def corpus_hash(files: Iterable[tuple[str, bytes]], derived: dict[str, str] | None = None) -> str:
    """SHA-256 over the corpus's files in sorted path order, then the text made from the files whose text is
    more than their bytes decoded as UTF-8.

    For each (path, raw bytes) pair, sorted by path (forward slashes, compared as
    UTF-8 bytes), the hash is fed: the path in UTF-8, a NUL byte, the byte length
    in decimal ASCII, a NUL byte, then the raw bytes. Renaming, adding, removing
    or editing any file changes the hash; the directory the corpus lives in does not.

    ``derived`` maps the path of each file whose text a library or a choice made (a PDF
    or DOCX extracted, a file decoded with an encoding given or detected) to the SHA-256
    of that text and its page boundaries. When there is any, the hash is then fed a NUL
    byte, ``derived``, a NUL byte and ``derived`` as canonical JSON. No path starts with a
    NUL byte, so this never reads as one more file. So the hash changes whenever such a
    text does (another pdfminer.six, another encoding), and only then; a corpus of UTF-8
    text files hashes as it always has.
    """
    h = hashlib.sha256()
    for path, data in sorted(files, key=lambda pair: pair[0].encode("utf-8")):
        h.update(path.encode("utf-8"))
        h.update(b"\0")
        h.update(str(len(data)).encode("ascii"))
        h.update(b"\0")
        h.update(data)
    if derived:
        h.update(b"\0derived\0")
        h.update(canonical_json(derived).encode("utf-8"))
    return h.hexdigest()
