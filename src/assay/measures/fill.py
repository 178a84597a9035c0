"""Whether a run filled a context budget.

A budgeted measure (``SpanRecall@4000tok``) reads a question's results in rank order until N tokens are
taken. A question whose list, at the run's whole depth, holds fewer than N tokens never reaches the budget:
its value is that of the whole list, the same at 4,000 tokens as at 8,000, so the figure says nothing about a
prompt of N tokens. 200-character chunks at depth 100 hold about 4,400 tokens; asked at 8,000 they read flat.

Every output that shows a budgeted measure says so, from the fields ``annotate`` adds to its rows (null for a
measure without a budget):

    budget_filled     every question of the row reached the budget (no question short)
    tokens_available  mean tokens the questions' lists hold (the final stage, its whole depth)
    shortfall         mean over the questions of max(0, N - tokens): how far, on average, they fell short
    questions_short   how many questions hold fewer than N tokens

and ``describe`` puts them in words: ``budget not filled: mean 2,950 tokens retrieved, shortfall 1,050; 56
of 56 questions short``. The questions are the row's answerable ones (its slice), those a budgeted measure
averages. Tokens are counted as budgets count them (``budget_hits``: each result its full token count, so a
text two overlapping results share counts twice, as a prompt holding both pays for it twice).
"""

from __future__ import annotations

FIELDS = ("budget_filled", "tokens_available", "shortfall", "questions_short")
MARK = "!"  # beside a measure whose budget was not filled, in text tables


def available(source, run_id: str, stage: str = "final") -> dict[str, int]:
    """{query_id: tokens} for every answerable question: the tokens its ``stage`` list holds (none returned: 0)."""
    _, rows = source.query("reports/budget_tokens", run_id=run_id, stage=stage)
    return {qid: int(tokens) for qid, tokens in rows}


def fill(tokens: dict[str, int], budget: int, questions=None) -> dict:
    """The four fields for a budget of ``budget`` tokens over ``questions`` (default: every question in
    ``tokens``). With no question, nothing is known: every field None."""
    have = [tokens[q] for q in (tokens if questions is None else questions) if q in tokens]
    if not have:
        return dict.fromkeys(FIELDS)
    short = sum(1 for t in have if t < budget)
    return {"budget_filled": short == 0, "tokens_available": sum(have) / len(have),
            "shortfall": sum(max(0, budget - t) for t in have) / len(have), "questions_short": short}


def unfilled(row: dict) -> bool:
    """Whether a row carries a budget that was not filled (False for measures without a budget)."""
    return row.get("budget_filled") is False


def describe(row: dict) -> str:
    """The fields in words, e.g. 'budget not filled: mean 2,950 tokens retrieved, shortfall 1,050; 56 of 56
    questions short' (or 'budget filled: ...' when no question was short)."""
    n = row.get("n_questions") or row.get("n")
    if row["budget_filled"]:
        return f"budget filled: mean {row['tokens_available']:,.0f} tokens retrieved; 0 of {n} questions short"
    return (f"budget not filled: mean {row['tokens_available']:,.0f} tokens retrieved, shortfall "
            f"{row['shortfall']:,.0f}; {row['questions_short']} of {n} questions short")


def note(row: dict) -> str:
    """One line for a row whose budget was not filled: 'SpanRecall@4000tok (budget not filled: ...)'."""
    return f"{row['metric']} ({describe(row)})"


def notes(rows: list[dict], prefix=lambda row: "") -> list[str]:
    """The lines for the rows whose budget was not filled, one per budget (and ``prefix``, e.g. the run):
    measures of one budget over the same questions share the figures, so they share the line, named together:
    '! SpanRecall@4000tok, Success@4000tok (budget not filled: ...)'."""
    from assay.measures.registry import parse_measure

    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        if unfilled(row):
            key = (prefix(row), parse_measure(row["metric"]).budget, row.get("n"), *(row[f] for f in FIELDS))
            groups.setdefault(key, []).append(row)
    return [f"{MARK} {key[0]}{', '.join(dict.fromkeys(r['metric'] for r in group))} ({describe(group[0])})"
            for key, group in groups.items()]


def annotate(source, run_id: str, rows: list[dict], stage: str = "final") -> list[dict]:
    """Add the four fields to each metric row (dicts with metric, level, slice, n), in place; returns the rows.
    A row of a measure with a budget gets them over its slice's answerable questions, any other row None."""
    from assay.measures.registry import parse_measure

    budgets = {}
    for row in rows:
        if row["metric"] not in budgets:
            budgets[row["metric"]] = parse_measure(row["metric"]).budget
    if not any(budgets.values()):
        for row in rows:
            row.update(dict.fromkeys(FIELDS))
        return rows
    tokens = available(source, run_id, stage)
    members = _slice_members(source, run_id, tokens)
    for row in rows:
        budget = budgets[row["metric"]]
        row.update(dict.fromkeys(FIELDS) if budget is None else fill(tokens, budget, members.get(row["slice"], ())))
    return rows


def for_run(source, run_id: str, budget: int, slice_name: str = "all", stage: str = "final") -> dict:
    """The four fields of one run's budget over one slice's answerable questions (gate rules, compare)."""
    tokens = available(source, run_id, stage)
    return fill(tokens, budget, _slice_members(source, run_id, tokens).get(slice_name, ()))


def _slice_members(source, run_id: str, tokens: dict[str, int]) -> dict[str, list[str]]:
    """{slice name: its answerable questions}, slices named as ``metrics.compute.evaluate`` names them."""
    from assay.measures.compute import SLICE_FIELDS, question_labels

    labels = question_labels(source, run_id)
    out = {"all": sorted(tokens)}
    for qid in sorted(tokens):
        for field in SLICE_FIELDS:
            out.setdefault(f"{field}={labels[qid][field]}", []).append(qid)
    return out
