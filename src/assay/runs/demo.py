"""The bundled demo's run: the options `assay demo` (and so `make demo`) runs the demo golden set with.

The demo's golden snapshots (tests/fixtures/golden, written by tools/update_goldens.py) are of this run, and the
HTML tests report it, so all of them show what a newcomer sees.
"""

from __future__ import annotations

# Candidates per first-stage list. At the default, 100 of the demo's 115 chunks, BM25 returned a relevant
# chunk somewhere for every answerable question and the loss funnel read "found 56": it showed a newcomer no
# loss at all. Ten candidates (the depth a prompt's context is usually cut to) leave the questions BM25
# ranks low out of the list, where the funnel counts them as lost at retrieval.
DEPTH = 10


def run_options():
    """The ``RunOptions`` of the demo's run: BM25, candidate depth ``DEPTH``, every other setting its default."""
    from assay.runs.runner import RunOptions

    return RunOptions(depth=DEPTH)
