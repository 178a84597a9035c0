"""`assay show`: one question of a run in the terminal, from ``drilldown.question_detail``.

The question and its labels, its gold quotes, where it was lost, then each stage (pipeline order, final last)
with its ranked chunks and their text, the gold span marked inside the text, and the answer where an answer
stage ran; each gold entry and hit in a PDF names its page ("p. 3", "pp. 3-4"). On a terminal the gold span
is styled; anywhere else (a pipe, a CI log, a README transcript) it is written between ``[[`` and ``]]``.
Every stored string passes through ``escape.terminal`` and is printed as a rich ``Text``, never as markup: a
chunk holding ``[bold]`` or an ANSI escape shows as the characters it is.
"""

from __future__ import annotations

import re

from assay.core.errors import UsageError
from assay.core.escape import terminal

GOLD_STYLE = "bold reverse yellow"
OPEN, CLOSE = "[[", "]]"  # the gold span where no style can show it

_LOST = {
    "found": "found: the final list overlaps a gold span",
    "retrieval": "lost at retrieval: no first-stage list overlaps a gold span",
    "fusion": "lost at fusion: a first-stage list overlapped a gold span, the fused list does not",
    "rerank": "lost at rerank: the reranked list no longer overlaps a gold span",
    "abstained": "abstained: the pipeline returned no results",
    "cutoff": "lost at the cutoff: the gold span ranked below the final list's depth",
}
_WHITESPACE = re.compile(r"\s+")


def console(file=None, force_terminal: bool | None = None, **options):
    """The console `assay show` writes to: standard output (looked up at each write, as click's test runner
    replaces it), no markup, emoji or highlighting of its own; ``options`` go to rich's Console."""
    from rich.console import Console

    out = Console(file=file, force_terminal=force_terminal, markup=False, emoji=False, highlight=False, **options)
    if not out.is_terminal:
        out.width = 10_000  # a transcript's table columns take their natural width, never cut to 80
    return out


def only_stage(detail: dict, stage: str) -> dict:
    """``detail`` with only the stage named ``stage``; a stage the run lacks is a usage error naming its stages."""
    names = [s["stage"] for s in detail["stages"]]
    if stage not in names:
        raise UsageError(f"--stage {stage!r}: run {detail['run_id']} has the stages {', '.join(names)}")
    return {**detail, "stages": [s for s in detail["stages"] if s["stage"] == stage]}


def _segments(text: str, marks: list[dict]) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, inside a gold span) at the marks' edges; overlapping marks merge."""
    spans: list[list[int]] = []
    for m in sorted(marks, key=lambda m: (m["start"], m["end"])):
        if spans and m["start"] <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], m["end"])
        else:
            spans.append([m["start"], m["end"]])
    pieces, at = [], 0
    for start, end in spans:
        if start > at:
            pieces.append((text[at:start], False))
        pieces.append((text[start:end], True))
        at = end
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces


def marked_text(text: str, marks: list[dict], styled: bool):
    """A rich Text of ``text`` with whitespace runs collapsed to one space and control characters escaped,
    each gold span styled (``styled``) or between ``[[`` and ``]]``."""
    from rich.text import Text

    out = Text()
    last_space = True  # drops leading whitespace, and a space that would follow another
    for piece, gold in _segments(text, marks):
        piece = _WHITESPACE.sub(" ", piece)
        if last_space and piece.startswith(" "):
            piece = piece[1:]
        if not piece:
            continue
        last_space = piece.endswith(" ")
        piece = terminal(piece)
        if not gold:
            out.append(piece)
        elif styled:
            out.append(piece, style=GOLD_STYLE)
        else:
            out.append(OPEN + piece + CLOSE)
    out.rstrip()
    return out


def _line(*parts: str):
    from rich.text import Text

    return Text("".join(parts))


def page_label(span: dict, before: str = "") -> str:
    """"p. 3" or "pp. 3-4" for a span of a paged document (its drill-down ``pages``), after ``before``; ""
    for a span of a document without pages."""
    pages = span.get("pages") or []
    if not pages:
        return ""
    return before + (f"p. {pages[0]}" if len(pages) == 1 else f"pp. {pages[0]}-{pages[-1]}")


def _score(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _ms(value) -> str:
    return "" if value is None else f" · {value:.1f} ms"


def render(detail: dict, out=None) -> None:
    """Print ``detail`` (``drilldown.question_detail``'s dict) to ``out`` (a rich Console; default: stdout)."""
    from rich.padding import Padding

    out = out or console()
    styled = out.is_terminal and out.color_system is not None  # a dumb terminal shows no style: [[ ]] there
    q, t = detail["query"], terminal

    def say(text, indent=0):
        if styled:  # a terminal wraps long lines, each under its indent
            out.print(Padding(text, (0, 0, 0, indent), expand=False))
        else:  # a transcript keeps one line per text, so the marks and the words around them stay together
            out.print(_line(" " * indent) + text, soft_wrap=True)

    say(_line(f"run {t(detail['run_id'])} · pipeline {t(detail['pipeline'])}"))
    say(_line(f"question {t(q['query_id'])}: {t(q['query_text'])}"))
    labels = [f"category {t(q['category'])}", f"form {t(q['form'])}", f"hard class {t(q['hard_class'])}",
              "answerable" if q["answerable"] else f"unanswerable ({t(q['unanswerable'] or 'no answer')})"]
    say(_line(" · ".join(labels)), 2)
    if q["notes"]:
        say(_line(f"notes: {t(q['notes'])}"), 2)
    say(_line("gold:" if detail["gold"] else "gold: none (no passage answers it)"))
    for g in detail["gold"]:
        quote = "the whole document" if g["quote"] is None else f'"{t(_WHITESPACE.sub(" ", g["quote"]))}"'
        say(_line(f"{g['gold_idx']}  {t(g['doc_id'])} [{g['start_char']}, {g['end_char']}){page_label(g, '  ')}  "
                  f"grade {g['grade']}  {quote}"), 2)
    say(_line(_where(detail)))
    for stage in detail["stages"]:
        _stage(stage, say, styled, bool(detail["gold"]))
    if detail["answer"] is not None:
        _answer(detail["answer"], say)


def _where(detail: dict) -> str:
    q = detail["query"]
    if detail["lost_at"] is None and q["answerable"]:
        where = "where it was lost: not recorded (the run was stored before assay kept each stage's list)"
    elif detail["lost_at"] is None:
        returned = "returned nothing (abstained)" if not q["n_results"] else f"returned {q['n_results']} results"
        where = f"where it was lost: nothing to lose (no gold); the pipeline {returned}"
    else:
        where = "where it was lost: " + _LOST.get(detail["lost_at"], terminal(detail["lost_at"]))
    if detail.get("answer_lost_at"):
        where += f"; through the answer stage: {terminal(detail['answer_lost_at'])}"
    return where


def _stage(stage: dict, say, styled: bool, has_gold: bool) -> None:
    first = stage["first_relevant_rank"]
    found = (f" · first relevant at rank {first}" if first is not None else
             " · no hit overlaps a gold span" if has_gold else "")
    say(_line(""))
    say(_line(f"stage {terminal(stage['stage'])} · {stage['n_hits']} hits{found}{_ms(stage['latency_ms'])}"))
    for hit in stage["hits"]:
        relevance = ""
        if hit["relevant"]:
            golds = ", ".join(str(i) for i in sorted({m["gold_idx"] for m in hit["marks"]}))
            relevance = f"  relevant: gold {golds}, grade {hit['grade']}"
        below = "  (below the depth: the stage's first relevant hit)" if hit.get("beyond_depth") else ""
        say(_line(f"{hit['rank']:>3}  {_score(hit['score'])}  {terminal(hit['doc_id'])}  "
                  f"{terminal(hit['chunk_id'])}{page_label(hit, '  ')}{relevance}{below}"), 2)
        say(marked_text(hit["text"] or "", hit["marks"], styled), 7)


def _answer(a: dict, say) -> None:
    t = terminal
    say(_line(""))
    head = f"answer by the {t(a['generator'])} generator: {t(a['status'])}"
    if a["refusal"]:
        head += f" (refused: {t(a['refusal'])})"
    if a["failure_stage"]:
        head += f" (failed at {t(a['failure_stage'])})"
    kept = sum(1 for c in a["claims"] if c["kept"])
    say(_line(f"{head} · {kept} of {len(a['claims'])} claims kept"))
    if a.get("error"):
        say(_line(f"error: {t(a['error'])}"), 2)
    if a["drops"]:
        say(_line("dropped: " + ", ".join(f"{t(reason)} {n}" for reason, n in sorted(a["drops"].items()))), 2)
    for c in a["claims"]:
        state = "kept" if c["kept"] else f"dropped ({t(c['reason'] or 'no reason stored')})"
        say(_line(f"claim {c['claim_idx']} {state}: {t(_WHITESPACE.sub(' ', c['text']))}"), 2)
        for cite in c["citations"]:
            valid = "valid" if cite["valid"] else f"invalid ({t(cite['reason'] or 'no reason stored')})"
            quote = "" if cite["quote"] is None else f' "{t(_WHITESPACE.sub(" ", cite["quote"]))}"'
            say(_line(f"cites {t(cite['chunk_id'])}, {valid}:{quote}"), 4)
    if a["context"]:
        say(_line(f"context ({len(a['context'])} chunks): " + ", ".join(t(c) for c in a["context"])), 2)


def render_questions(rows: list[dict], run_id: str, out=None) -> None:
    """Print ``drilldown.question_rows`` as one line per question: what `assay show RUN` lists."""
    from assay.core.tables import render as table

    out = out or console()
    answers = any(r["answer_status"] is not None for r in rows)
    headers = ["query id", "category", "form", "lost at", "first chunk", "first doc"] + (["answer"] if answers else [])
    cells = [[r["query_id"], r["category"], r["form"], r["lost_at"] or "-", r["first_rank_chunk"], r["first_rank_doc"]]
             + ([r["answer_status"]] if answers else []) for r in rows]
    out.print(_line(f"run {terminal(run_id)}: {len(rows)} questions; `assay show {terminal(run_id)} QUERY_ID` "
                    "shows one"), soft_wrap=True)
    out.print(_line(table(headers, cells)), soft_wrap=True)  # cells escaped by the renderer
