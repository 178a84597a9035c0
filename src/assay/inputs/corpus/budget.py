"""How much a PDF or DOCX may cost to read: the bytes it expands to and the seconds it takes.

``--max-file-mb`` bounds what is read from disk; a compressed format can expand far past it (a 1.5 MB DOCX whose
XML inflates a thousandfold took 3.1 GB; a PDF stream compressed the same way, 54 s and 3.1 GB). A
``ReadBudget`` bounds, per document, the bytes its reader unpacks (``--max-expanded-mb``, ``[run]
max_expanded_mb``) and the time it reads (``--read-timeout``, ``[run] read_timeout_s``); the readers
(``assay.inputs.corpus.pdf``, ``docx``) spend it as they go and stop at the bound, never after the work is done.
What counts:

- a DOCX: the declared size of every part of its zip (the zip reader stops at the declared size, so a part
  cannot unpack to more than it declares);
- a PDF: every byte its streams decode to, counted while they decode, and, on each page, 1 KB for every glyph,
  path, image and figure the layout analysis holds and 400 bytes for every pair of text boxes it compares to
  order them (reset at each page: the analysis keeps one page at a time).

Time is read from ``clock`` (``time.monotonic``), so a test can move it.
"""

from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

MB = 1_000_000
LAYOUT_OBJECT_BYTES = 1000  # what pdfminer's layout analysis holds for one glyph, path or image, about
# and for one pair of text boxes it compares to order them: 2,000 boxes on a page (2 million pairs) took 800 MB
# and 84 s in pdfminer, all in one call that no clock can interrupt, so the pairs are counted before it starts
PAIR_BYTES = 400


class OverBudget(BaseException):
    """A document past its budget. A BaseException, so no ``except Exception`` inside a reader's library
    swallows it; the reader that set the budget turns it into its own error (``str``: what to say)."""


@dataclass
class ReadBudget:
    max_expanded_mb: float
    timeout_s: float
    clock: object = time.monotonic
    spent: int = 0  # bytes unpacked, for the whole document
    page: int = 0  # bytes the layout analysis holds for the current page
    deadline: float = field(init=False)

    def __post_init__(self):
        self.limit = int(self.max_expanded_mb * MB)
        self.deadline = self.clock() + self.timeout_s

    def spend(self, n: int) -> None:
        """``n`` more bytes unpacked (and a look at the clock)."""
        self.spent += n
        if self.spent + self.page > self.limit:
            raise OverBudget(self.too_big())
        self.check_time()

    def hold(self, n: int) -> None:
        """``n`` more bytes held by the current page's layout (and a look at the clock)."""
        self.page += n
        if self.spent + self.page > self.limit:
            raise OverBudget(self.too_big())
        self.check_time()

    def new_page(self) -> None:
        self.page = 0
        self.check_time()

    def check_time(self) -> None:
        if self.clock() > self.deadline:
            raise OverBudget(f"still being read after {self.timeout_s:g} s, the limit per document; raise it with "
                             "--read-timeout (or read_timeout_s in [run] of assay.toml) if it is a real document")

    def too_big(self) -> str:
        return (f"expands past {self.max_expanded_mb:g} MB when read, the limit per document (its compressed "
                "content unpacks to more: a decompression bomb?); raise it with --max-expanded-mb (or "
                "max_expanded_mb in [run] of assay.toml) if it is a real document")


_ACTIVE: contextvars.ContextVar[ReadBudget | None] = contextvars.ContextVar("read_budget", default=None)


def active() -> ReadBudget | None:
    """The budget of the document being read in this context, or None (a reader's library used elsewhere)."""
    return _ACTIVE.get()


@contextmanager
def spending(budget: ReadBudget | None):
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE.reset(token)
