"""Progress on long work: bars on stderr while a person watches, nothing otherwise.

    from assay.core import progress

    with progress.task("embedding chunks", total=len(texts), unit="chunks") as t:
        for batch in batches:
            ...
            t.advance(len(batch))

A task with a total draws a bar with its count, rate and time remaining; one without (a stream of
unknown length) draws a spinner with its count, rate and time elapsed. Tasks may nest (a sweep's
points, each point's embedding and questions): each is one line, removed when it ends, and the
whole display is erased when the last one ends, so a finished command leaves only its own lines.

Bars are drawn only when ``configure`` asked for them: the library draws nothing by default, and the
CLI asks when stderr is a terminal (not a pipe, a file or a CI log, and not ``TERM=dumb``) and
``--quiet`` (or ``ASSAY_QUIET=1``) is not given. Nothing here ever writes to stdout. While nothing is
drawn, a task only counts: rich is not even imported.

``say`` prints one line on stderr through the same console as the bars, so a line printed while a
bar is up lands above it instead of tearing it. Under quiet, ``say`` drops informational lines and
keeps warnings: a line is a warning when it starts with ``note:``, ``warning:`` or ``error:``.
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager

WARNING_PREFIXES = ("note:", "warning:", "error:")
REFRESH_PER_SECOND = 8

_draw = False
_quiet = False
_display = None  # the rich Progress while a drawn task is open
_lock = threading.RLock()


def configure(*, quiet: bool = False, draw: bool | None = None) -> None:
    """Quiet drops informational lines and bars. ``draw`` None: draw when stderr is a terminal and not quiet."""
    global _draw, _quiet
    _quiet = bool(quiet)
    _draw = (not _quiet and stderr_is_terminal()) if draw is None else bool(draw)


def reset() -> None:
    """Back to the library default: nothing drawn, every line said."""
    close()
    configure(quiet=False, draw=False)


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def quiet() -> bool:
    return _quiet


def drawing() -> bool:
    return _draw


def is_warning(line: str) -> bool:
    return line.lstrip().lower().startswith(WARNING_PREFIXES)


def say(line: str, *, warning: bool | None = None) -> None:
    """One line on stderr (already escaped for the terminal); under quiet only a warning: ``warning``, or
    when None a line starting with one of ``WARNING_PREFIXES``."""
    if _quiet and not (is_warning(line) if warning is None else warning):
        return
    with _lock:
        display = _display
        if display is not None:
            display.console.print(line, markup=False, highlight=False, emoji=False, soft_wrap=True)
            return
    stream = sys.stderr
    if stream is not None:
        stream.write(line + "\n")
        stream.flush()


def close() -> None:
    """Erase the display now (before an error is printed); tasks still open go on counting, undrawn."""
    global _display
    with _lock:
        display, _display = _display, None
    if display is not None:
        display.stop()


class Task:
    """One piece of long work: ``advance(n)`` as it goes; ``completed`` and ``total`` say where it is."""

    def __init__(self, description: str, total: float | None, unit: str | None):
        self.description, self.total, self.unit = description, total, unit
        self.completed = 0
        self._display, self._id = None, None

    @property
    def drawn(self) -> bool:
        return self._id is not None and self._display is _display

    def advance(self, n: float = 1) -> None:
        self.completed += n
        if self._id is not None:
            self._refresh()

    def update(self, completed: float | None = None, total: float | None = None,
               description: str | None = None) -> None:
        if completed is not None:
            self.completed = completed
        if total is not None:
            self.total = total
        if description is not None:
            self.description = description
        if self._id is not None:
            self._refresh(total=total, description=description)

    @contextmanager
    def polling(self, completed, every: float = 0.1):
        """While the block runs, set ``completed`` from ``completed()`` every ``every`` seconds, in a
        thread (for work that reports progress only when asked, such as a DuckDB statement). Undrawn
        tasks start no thread."""
        if not self.drawn:
            yield self
            return
        stop = threading.Event()

        def poll():
            while not stop.wait(every):
                value = completed()
                if value is not None:
                    self.update(completed=value)

        thread = threading.Thread(target=poll, name="assay-progress-poll", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()

    def _refresh(self, **changes) -> None:
        display = self._display
        if display is not _display:  # closed meanwhile
            self._id = None
            return
        changes = {k: v for k, v in changes.items() if v is not None}
        display.update(self._id, completed=self.completed, **changes)

    def _open(self) -> None:
        global _display
        with _lock:
            if _display is None:
                _display = _new_display()
                _display.start()
            self._display = _display
            self._id = _display.add_task(self.description, total=self.total, completed=self.completed,
                                         unit=self.unit)

    def _close(self) -> None:
        global _display
        with _lock:
            display, task_id, self._id, self._display = self._display, self._id, None, None
            if task_id is None or display is not _display:
                return
            display.remove_task(task_id)
            if display.task_ids:
                return
            _display = None
        display.stop()


@contextmanager
def task(description: str, total: float | None = None, unit: str | None = "items"):
    """A task for the block; drawn when configured to draw (see module doc). ``unit`` "bytes" shows sizes;
    None shows no count (one long step: a spinner and the time elapsed)."""
    t = Task(description, total, unit)
    if _draw:
        t._open()
    try:
        yield t
    finally:
        t._close()


def track(iterable, description: str, total: float | None = None, unit: str = "items"):
    """Each item of ``iterable``, advancing a task by one per item."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with task(description, total, unit) as t:
        for item in iterable:
            yield item
            t.advance()


# -- drawing (rich is imported only here) ---------------------------------------------------------


def _new_display():
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn

    count, rate, timing = _columns()
    console = Console(file=sys.stderr, stderr=True)
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=28), count(), rate(),
                    timing(), console=console, transient=True, redirect_stdout=False, redirect_stderr=False,
                    refresh_per_second=REFRESH_PER_SECOND)


def _columns():
    from rich.filesize import decimal
    from rich.progress import ProgressColumn
    from rich.text import Text

    def amount(value: float, unit: str) -> str:
        return decimal(int(value)) if unit == "bytes" else f"{int(value):,}"

    class Count(ProgressColumn):
        """412/629 chunks; 12,345 lines while the total is unknown; 51.2 MB/94.8 MB for bytes."""

        def render(self, t):
            unit = t.fields.get("unit")
            if not unit:
                return Text("")
            done = amount(t.completed, unit)
            shown = f"{done}/{amount(t.total, unit)}" if t.total is not None else done
            return Text(shown if unit == "bytes" else f"{shown} {unit}", style="progress.download")

    class Rate(ProgressColumn):
        """38.1 chunks/s, 120.5 MB/s; blank until two samples exist."""

        def render(self, t):
            speed, unit = t.finished_speed or t.speed, t.fields.get("unit")
            if not speed or not unit:
                return Text("")
            shown = f"{decimal(int(speed))}/s" if unit == "bytes" else f"{speed:,.1f} {unit}/s"
            return Text(shown, style="progress.data.speed")

    class Timing(ProgressColumn):
        """eta 0:01:23 with a total; 0:00:05 elapsed without one."""

        max_refresh = 0.5

        def render(self, t):
            if t.total is None:
                return Text(f"{_clock(t.elapsed)} elapsed", style="progress.elapsed")
            left = t.time_remaining
            return Text(f"eta {_clock(left) if left is not None else '-:--:--'}", style="progress.remaining")

    return Count, Rate, Timing


def _clock(seconds: float | None) -> str:
    s = int(seconds or 0)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
