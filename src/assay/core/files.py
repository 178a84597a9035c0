"""Writing a file atomically: what the HTML pages, a rebase proposal and the CLI's --out files share."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def write(path: Path, text: str) -> int:
    """Write ``text`` to ``path`` atomically (a new file beside it, then a rename over it): a reader never sees
    half a page. Returns the size in bytes. The file gets the mode the umask gives any new file."""
    data = text.encode("utf-8")
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "xb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return len(data)
