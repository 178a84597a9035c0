"""One question end to end as HTML: its gold quotes, each stage's ranked chunks with the gold spans marked in
their text (each gold entry and hit of a PDF with its page), and its answer. Reads
``assay.present.drilldown.question_detail``; every stored string is escaped here."""

from __future__ import annotations

from assay.present.html.page import attr, e
from assay.present.show import page_label

DEPTH = 5  # hits shown per stage; the stage's first relevant hit is added when it ranks lower


def marked(text: str, marks: list[dict]) -> str:
    """``text`` escaped, each stretch any gold span covers wrapped in ``mark.gold-span`` (overlapping or
    touching marks of several gold entries become one mark naming them all in ``data-gold``)."""
    spans = sorted((max(0, m["start"]), min(len(text), m["end"]), m["gold_idx"]) for m in marks)
    merged: list[list] = []
    for start, end, idx in spans:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
            merged[-1][2].add(idx)
        else:
            merged.append([start, end, {idx}])
    out, pos = [], 0
    for start, end, idxs in merged:
        out.append(e(text[pos:start]))
        gold = " ".join(str(i) for i in sorted(idxs))
        out.append(f'<mark class="gold-span" data-gold="{gold}">{e(text[start:end])}</mark>')
        pos = end
    out.append(e(text[pos:]))
    return "".join(out)


def hit_item(hit: dict, shown_at: tuple[str, int] | None = None, brief: bool = False,
             gold_docs: frozenset = frozenset()) -> str:
    """``li.hit`` for one hit: rank, chunk id, score and its text with the gold spans marked; when this
    question's drill-down already showed the chunk's text (``shown_at``: stage and rank), a pointer to it
    instead, or nothing more when ``brief`` (the stage ranked exactly as the one before). A chunk of a gold
    document (``gold_docs``) that overlaps no gold span gets class ``gold-doc``: relevant at document level."""
    in_gold_doc = hit["doc_id"] in gold_docs and not hit["relevant"]
    cls = ("hit" + (" relevant" if hit["relevant"] else "") + (" gold-doc" if in_gold_doc else "")
           + (" beyond" if hit.get("beyond_depth") else ""))
    grade = f" · gold grade {hit['grade']}" if hit["relevant"] and hit["grade"] is not None else ""
    grade += " · in a gold document" if in_gold_doc else ""
    score = "" if hit["score"] is None else f" · score {hit['score']:.4g}"
    page = f' &middot; <span class="page">{page_label(hit)}</span>' if hit.get("pages") else ""
    meta = f"<b>#{hit['rank']}</b> <small><code>{e(hit['chunk_id'])}</code>{page}{score}{grade}</small>"
    if shown_at is None:
        body = f'<div class="text">{marked(hit["text"], hit["marks"])}</div>'
    elif brief:
        body = ""
    else:
        body = f"<small> · text above, {e(shown_at[0])} #{shown_at[1]}</small>"
    return f'<li class="{cls}" data-rank="{hit["rank"]}"{attr("data-chunk-id", hit["chunk_id"])}>{meta}{body}</li>'


def _same_ranking(a: dict, b: dict) -> bool:
    return [(h["rank"], h["chunk_id"]) for h in a["hits"]] == [(h["rank"], h["chunk_id"]) for h in b["hits"]]


def stage_block(stage: dict, same_as: str | None = None, seen: dict | None = None,
                gold_docs: frozenset = frozenset()) -> str:
    """A stage's hits. A chunk whose text an earlier stage of the same drill-down showed (``seen``: chunk id
    -> (stage, rank), updated here) points there instead of repeating it: the page stays small when stages
    rank the same chunks. ``same_as`` names the stage before it when the ranking is exactly the same."""
    first = stage["first_relevant_rank"]
    lat = "" if stage["latency_ms"] is None else f", {stage['latency_ms']:.2f} ms"
    found = f"first relevant at rank {first}" if first is not None else "no relevant hit"
    head = (f'<h4>stage <span class="mono">{e(stage["stage"])}</span> '
            f'<span class="muted">{stage["n_hits"]} hits, {found}{lat}</span></h4>')
    note = (f'<p class="note">Same ranking as stage <span class="mono">{e(same_as)}</span> (texts shown '
            "there).</p>") if same_as else ""
    items = []
    for h in stage["hits"]:
        items.append(hit_item(h, None if seen is None else seen.get(h["chunk_id"]), same_as is not None, gold_docs))
        if seen is not None:
            seen.setdefault(h["chunk_id"], (stage["stage"], h["rank"]))
    empty = "" if stage["hits"] else '<p class="note">No hits.</p>'
    return (f'<div class="stage"{attr("data-stage", stage["stage"])}>{head}{note}<ol class="hits">{"".join(items)}</ol>'
            f"{empty}</div>")


def gold_block(entry: dict) -> str:
    where = f'{e(entry["doc_id"])} [{entry["start_char"]}, {entry["end_char"]})'
    if entry.get("pages"):
        where += f' &middot; <span class="page">{page_label(entry)}</span>'
    grade = "" if entry.get("grade") is None else f" &middot; grade {entry['grade']}"
    quote = (f'<span class="quote">{e(entry["quote"])}</span>' if entry["quote"] is not None
             else '<span class="quote whole muted">(the whole document)</span>')
    return (f'<blockquote class="gold" data-gold="{entry["gold_idx"]}">'
            f'<span class="src">gold {entry["gold_idx"]}: {where}{grade}</span>{quote}</blockquote>')


def answer_block(answer: dict) -> str:
    facts = [("status", e(answer["status"])), ("refusal", e(answer["refusal"]) if answer["refusal"] else None),
             ("failed at", e(answer["failure_stage"]) if answer["failure_stage"] else None),
             ("generator", e(answer["generator"]) + (f" ({e(answer['mode'])})" if answer.get("mode") else "")),
             ("error", e(answer["error"]) if answer.get("error") else None),
             ("claims kept", f"{answer['claims_kept']} of {answer['claims_returned']}"
              if answer.get("claims_returned") is not None else None),
             ("dropped", ", ".join(f"{e(k)}: {v}" for k, v in sorted(answer["drops"].items())) or None),
             ("context", ", ".join(f'<span class="chunk-id">{e(c)}</span>' for c in answer["context"]) or None)]
    dl = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in facts if v)
    claims = []
    for c in answer["claims"]:
        cites = "".join(
            f'<li class="citation {"valid" if ct["valid"] else "invalid"}">[{ct["cite_idx"]}] '
            f'<span class="chunk-id">{e(ct["chunk_id"])}</span>: &ldquo;{e(ct["quote"])}&rdquo; '
            f'<span class="muted">{"valid" if ct["valid"] else "invalid"}'
            f'{": " + e(ct["reason"]) if ct["reason"] else ""}</span></li>' for ct in c["citations"])
        reason = f' <span class="muted">({e(c["reason"])})</span>' if c["reason"] else ""
        claims.append(f'<li class="claim {"kept" if c["kept"] else "dropped"}">{e(c["text"])}{reason}'
                      f'{"<ul>" + cites + "</ul>" if cites else ""}</li>')
    excerpt = (f'<p><span class="muted">response:</span> <span class="text">{e(answer["excerpt"])}</span></p>'
               if answer.get("excerpt") else "")
    claim_list = f"<ol>{''.join(claims)}</ol>" if claims else ""
    return f'<div class="answer"><h4>answer</h4><dl class="facts">{dl}</dl>{excerpt}{claim_list}</div>'


def gold_documents(detail: dict) -> frozenset:
    return frozenset(g["doc_id"] for g in detail["gold"])


def stages_html(detail: dict) -> str:
    out, previous, seen = [], None, {}
    for stage in detail["stages"]:
        same = previous["stage"] if previous is not None and stage["hits"] and _same_ranking(stage, previous) else None
        out.append(stage_block(stage, same, seen, gold_documents(detail)))
        previous = stage
    return "".join(out)


def question_meta(q: dict) -> str:
    labels = [("category", q["category"]), ("form", q["form"]), ("hard class", q["hard_class"]),
              ("unanswerable", q["unanswerable"])]
    return " &middot; ".join(f"{k} <span class=mono>{e(v)}</span>" for k, v in labels if v is not None)


def drill(detail: dict, anchor: str, summary: str) -> str:
    """``details.drill[data-qid]`` for one question (``summary`` is escaped markup from the caller). The
    question's ``anchor`` (``page.anchor`` of its id) is on the body inside the <details>, not on the <details> itself: a
    browser that follows a link to it opens the <details> on its own (Chromium does, script or not; the page's
    script does it elsewhere), and the body's scroll margin keeps the summary line in view above it."""
    q = detail["query"]
    notes = f'<p class="note">notes: {e(q["notes"])}</p>' if q.get("notes") else ""
    gold = "".join(gold_block(g) for g in detail["gold"]) or '<p class="note">No gold: the corpus does not answer this question.</p>'
    lost = f'<p>lost at: <b>{e(detail["lost_at"])}</b></p>' if detail.get("lost_at") else ""
    answer = answer_block(detail["answer"]) if detail.get("answer") else ""
    return (f'<details class="drill"{attr("data-qid", q["query_id"])}><summary>{summary}</summary>'
            f'<div class="drill-body"{attr("id", anchor)}>'
            f'<div class="question">{e(q["query_text"])}</div><p class="muted">{question_meta(q)}</p>{notes}'
            f"<h4>gold</h4>{gold}{lost}{stages_html(detail)}{answer}</div></details>")


def ranking(detail: dict, run_id: str, stage: str = "final") -> str:
    """One run's ranking of a question at ``stage`` (the flips view): ``div.ranking[data-run]``."""
    st = next((s for s in detail["stages"] if s["stage"] == stage), None)
    block = stage_block(st, gold_docs=gold_documents(detail)) if st else '<p class="note">No such stage.</p>'
    return f'<div class="ranking"{attr("data-run", run_id)}><h4>run <span class="mono">{e(run_id)}</span></h4>{block}</div>'

