"""Writing a file atomically: what the HTML pages, a rebase proposal and the CLI's --out files share; and
telling a write that failed for want of room (``no_room``) from any other failure."""

from __future__ import annotations

import errno
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


# A write refused for want of room: a full disk (ENOSPC), a full quota (EDQUOT), a file past the process's size
# limit (EFBIG, `ulimit -f`). DuckDB reports them in its own exceptions' text, without an errno.
_NO_ROOM = {errno.ENOSPC: "no space left on the device", errno.EDQUOT: "the disk quota is exceeded",
            errno.EFBIG: "a file grew past the size limit"}
_NO_ROOM_TEXT = {"No space left on device": errno.ENOSPC, "Disk quota exceeded": errno.EDQUOT,
                 "File too large": errno.EFBIG}


def no_room(exc: BaseException) -> str | None:
    """What ran out when ``exc`` is a write refused for want of room (an OSError with ENOSPC, EDQUOT or EFBIG, or
    a DuckDB error saying so), in words; None for any other failure. Full disks and file size limits are handled
    alike: either way the write did not happen, and the fix is room."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _NO_ROOM:
            return _NO_ROOM[exc.errno]
        for text, code in _NO_ROOM_TEXT.items():
            if text in str(exc):
                return _NO_ROOM[code]
        exc = exc.__cause__ or exc.__context__
    return None
