"""The allowed range of every numeric setting, defined once: the CLI builds its option types from it and
assay.toml values are checked against it, so a bad number fails before any work, naming where it came from.

Integers stop at the warehouse's INTEGER (2**31 - 1): the seed is stored in one, and ranks are too. How many
results a stage keeps (depth, doc_depth, rerank_top_n, final_k, context_k) stops at DEPTH_MAX: every stage
holds its list in memory for every question and stores it, and tantivy allocates 16 bytes for every hit asked
for (2**31 - 1 asked for 34 GB and aborted). Seconds stop at a day: a longer timeout is a typo, and the socket
layer refuses some of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

INT_MAX = 2**31 - 1
DEPTH_MAX = 100_000  # results one stage keeps per question (see above)
DAY_S = 86400.0
# Levels of nesting a JSON reply from another party may have (assay.core.jsonin): an answer, a verdict or a
# list of results needs under ten; hundreds only serve to exhaust the recursion of whatever reads them next.
JSON_DEPTH = 64


@dataclass(frozen=True)
class Range:
    kind: type  # int or float
    low: float
    high: float
    low_open: bool = False  # True: the value must be greater than low
    high_open: bool = False

    def describe(self) -> str:
        if self.kind is int:
            return f"an integer from {self.low} to {self.high}"
        lo = f"greater than {self.low:g}" if self.low_open else f"at least {self.low:g}"
        hi = f"less than {self.high:g}" if self.high_open else f"at most {self.high:g}"
        return f"a number {lo} and {hi}"

    def problem(self, value) -> str | None:
        """None when ``value`` is allowed, else what is wrong with it (for a message that says where)."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                (self.kind is int and not isinstance(value, int)):
            return f"must be {self.describe()}, got {value!r}"
        if isinstance(value, float) and not math.isfinite(value):
            return f"must be {self.describe()}, got {value!r}"
        below = value <= self.low if self.low_open else value < self.low
        above = value >= self.high if self.high_open else value > self.high
        if below or above:
            return f"must be {self.describe()}, got {value!r}"
        return None


def _int(low: int, high: int = INT_MAX) -> Range:
    return Range(int, low, high)


def _seconds(low_open: bool = True, high: float = DAY_S) -> Range:
    return Range(float, 0.0, high, low_open=low_open)


# Keys are the setting names of assay.toml ([run], [pipelines.*]) and of RunOptions.
SETTINGS = {
    "chunk_size": _int(1), "overlap": _int(0), "depth": _int(1, DEPTH_MAX), "doc_depth": _int(1, DEPTH_MAX),
    "rrf_k": _int(1), "rerank_top_n": _int(1, DEPTH_MAX), "final_k": _int(1, DEPTH_MAX), "seed": _int(0),
    "context_k": _int(1, DEPTH_MAX), "max_quote": _int(1),
    "timeout_s": _seconds(), "generator_timeout_s": _seconds(), "judge_timeout_s": _seconds(),
    "min_interval_s": _seconds(low_open=False, high=3600.0),
    # seconds one model request may spend waiting to be retried, backoff and Retry-After together
    "max_retry_wait_s": _seconds(low_open=False),
    # characters of each model reply (and of each error quoting one) kept in the warehouse; 0 keeps none
    "max_reply_chars": _int(0),
    "max_file_mb": Range(float, 0.0, 1_000_000.0, low_open=True),
    "max_expanded_mb": Range(float, 0.0, 1_000_000.0, low_open=True), "read_timeout_s": _seconds(),
    # word pieces an embedder takes, its two special tokens included; the model's own limit is checked when it loads
    "max_length": _int(3),
}
BACKOFF = _seconds(low_open=False, high=3600.0)  # each of generator_backoff_s
WEIGHT = Range(float, 0.0, 1_000_000.0)  # each of weights.bm25, weights.dense
# Options of one command only.
ALPHA = Range(float, 0.0, 1.0, low_open=True, high_open=True)
TOLERANCE = Range(float, 0.0, 1.0)
SIMILARITY = Range(float, 0.0, 1.0, low_open=True)  # judgments rebase --threshold: 0 would take any passage
BUDGET = _int(1)
K = _int(1)
GRADE = _int(1)  # a gold entry's relevance grade (assay judgments add --grade)
DRAFTS = _int(1, 10_000)  # passages one assay judgments draft asks about: each is a paid model request
# `assay sql` (--timeout, --max-rows, --memory-mb; [sql] in assay.toml): the rows printed stop at a million (a
# million-row table takes seconds to lay out; `assay export` writes more), the memory at a TiB
SQL = {"timeout_s": _seconds(), "max_rows": _int(1, 1_000_000), "memory_mb": _int(16, 1_048_576)}

# Fixed bounds on what a judgments file holds, in characters. A question is a sentence or a paragraph and a
# line holds one question with its quotes; past these a line is a mistake (a document pasted into a field),
# and reading it on would cost minutes and gigabytes in quote resolution before failing.
JUDGMENTS_LINE_CHARS = 1_000_000
QUESTION_CHARS = 10_000
SWEEP_POINTS = _int(1)  # points one assay sweep runs without asking (--max-points, [sweep] max_points)


def setting_problem(key: str, value) -> str | None:
    """What is wrong with a setting's value, or None (also None for settings that are not numbers)."""
    if value is None:
        return None
    if key in SETTINGS:
        return SETTINGS[key].problem(value)
    if key == "generator_backoff_s":
        if not isinstance(value, list) or not value:
            return f"must be a non-empty list of seconds, got {value!r}"
        bad = [p for p in (BACKOFF.problem(v) for v in value) if p]
        return f"each wait {bad[0]}" if bad else None
    if key == "weights" and isinstance(value, dict):
        bad = [f"{k} {p}" for k, p in ((k, WEIGHT.problem(v)) for k, v in value.items()) if p]
        if bad:
            return "; ".join(bad)
        if value and not any(value.values()):
            return "cannot all be 0"
    return None
