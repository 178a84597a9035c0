"""Span and budgeted measures against an independent computation over sets of characters."""

import math
import random

import pytest

from assay.store.tokens import count_tokens, token_spans
from assay.inputs.chunking import Chunk
from assay.measures.compute import per_query
from assay.measures.registry import NO_CUTOFF, parse_measure
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

WORDS = ("retrieval", "chunk", "the", "of", "budget", "naïve", "café", "tokenization", "x", "é", "東京",
         "compaction", "wal", "2024-01", "(see", "below)", "supercalifragilistic", "a")


def _text(rng: random.Random) -> str:
    out = ""
    while len(out) < DOC_LEN:
        out += rng.choice(WORDS) + rng.choice((" ", " ", "  ", "\n", ", ", ". "))
    return out[:DOC_LEN]


def _random_run(rng: random.Random, n_queries: int = 30):
    docs = [f"d{i}.md" for i in range(5)]
    texts = {d: _text(rng) for d in docs}
    chunks, seen = [], set()
    for d in docs:
        spans = [(0, DOC_LEN)] if rng.random() < 0.3 else []  # a whole document, as doc-level results are
        for _ in range(rng.randint(3, 9)):
            s = rng.randrange(0, DOC_LEN - 10)
            spans.append((s, min(DOC_LEN, s + rng.randint(1, 400))))
        for s, e in spans:
            if (d, s, e) not in seen:
                seen.add((d, s, e))
                chunks.append(Chunk(d, len(chunks), s, e, texts[d][s:e]))
    syn = Synthetic(docs, chunks)
    for qi in range(n_queries):
        gold = []
        for _ in range(rng.choice([1, 1, 2, 3])):
            d = rng.choice(docs)
            if rng.random() < 0.1:
                gold.append((d, None, None, rng.randint(1, 3)))
            else:
                s = rng.randrange(0, DOC_LEN - 5)
                gold.append((d, s, min(DOC_LEN, s + rng.randint(1, 120)), rng.randint(1, 3)))
        depth = rng.choice([0, 1, 2, 4, 8, 15, 30])
        ranking = [c.chunk_id for c in rng.sample(chunks, min(depth, len(chunks)))]
        syn.queries.append(QuerySpec(f"q{qi:03d}", gold, ranking))
    return syn, texts


def _context(syn, tokens, q, k, budget):
    """The spans a prompt holds: ranks within k, in order, until the budget is spent; the last one cut."""
    by_id = {c.chunk_id: c for c in syn.chunks}
    used, out = 0, []
    for rank, cid in enumerate(q.ranking[:k], 1):
        if used >= budget:
            break
        c = by_id[cid]
        mine = [t for t in tokens[c.doc_id] if t[0] < c.end and c.start < t[1]]
        if used + len(mine) <= budget:
            out.append((rank, c.doc_id, c.start, c.end))
        else:
            cut = mine[budget - used - 1][1]
            out.append((rank, c.doc_id, c.start, max(c.start, min(c.end, cut))))
        used += len(mine)
    return out


def _gold_sets(q):
    units = []
    for d, s, e, g in q.gold:
        s, e = (0, DOC_LEN) if s is None else (s, e)
        units.append(({(d, i) for i in range(s, e)}, d, s, e, g))
    return units


def expected(syn, tokens, q, k, budget):
    ctx = _context(syn, tokens, q, k, budget)
    retrieved = {(d, i) for _, d, s, e in ctx for i in range(s, e)}
    units = _gold_sets(q)
    gold = set().union(*(u[0] for u in units))
    inter = len(retrieved & gold)
    credited, dcg = set(), 0.0
    for rank, d, s, e in ctx:
        new = [i for i, (_, gd, gs, ge, _) in enumerate(units) if i not in credited and gd == d and s < ge and gs < e]
        credited.update(new)
        if new:
            dcg += max(units[i][4] for i in new) / math.log2(rank + 1)
    ideal = sorted((u[4] for u in units), reverse=True)
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return {"SpanRecall": inter / len(gold), "SpanPrecision": inter / len(retrieved) if retrieved else 0.0,
            "SpanIoU": inter / len(retrieved | gold), "Success": 1.0 if inter else 0.0, "nDCG": dcg / idcg}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_span_measures_agree_with_character_sets_on_random_rankings(warehouse, seed):
    rng = random.Random(seed)
    syn, texts = _random_run(rng)
    write_synthetic(warehouse, syn, texts=texts)
    tokens = dict(zip(texts, token_spans(list(texts.values()))))
    checked = 0
    for k, budget in ((1, None), (3, None), (10, None), (None, 1), (None, 7), (None, 60), (None, 250),
                      (None, 1000)):
        for family in ("SpanRecall", "SpanPrecision", "SpanIoU", "Success", "nDCG"):
            if budget is None and family in ("Success", "nDCG"):
                continue  # their top-k forms are checked against pytrec_eval elsewhere
            name = f"{family}@{budget}tok" if budget else f"{family}@{k}"
            got = per_query(warehouse, "synthetic-run", parse_measure(name))
            for q in syn.queries:
                want = expected(syn, tokens, q, k or NO_CUTOFF, budget or NO_CUTOFF)[family]
                assert got[(q.query_id, "chunk")] == pytest.approx(want, abs=1e-12), (name, q.query_id)
                checked += 1
    assert checked == 30 * (3 * 3 + 5 * 5)


def test_a_budget_cuts_the_result_that_fills_it(warehouse):
    text = "alpha beta gamma delta epsilon zeta eta theta iota kappa " * 20
    text = text[:DOC_LEN].ljust(DOC_LEN)
    chunk = Chunk("d0.md", 0, 0, DOC_LEN, text)
    syn = Synthetic(["d0.md"], [chunk], [QuerySpec("q1", [("d0.md", 600, 640, 1)], [chunk.chunk_id])])
    write_synthetic(warehouse, syn, texts={"d0.md": text})
    n_tokens = count_tokens(text)
    assert n_tokens > 100
    first_100 = token_spans([text])[0][99][1]  # where the 100th piece ends
    recall = per_query(warehouse, "synthetic-run", parse_measure("SpanRecall@100tok"))[("q1", "chunk")]
    precision = per_query(warehouse, "synthetic-run", parse_measure("SpanPrecision@100tok"))[("q1", "chunk")]
    assert first_100 < 600 and recall == 0.0 and precision == 0.0  # the gold lies past the cut
    whole = per_query(warehouse, "synthetic-run", parse_measure("SpanPrecision@10000tok"))[("q1", "chunk")]
    assert whole == pytest.approx(40 / DOC_LEN)  # a whole document pays for its size


def test_parsing_budgets():
    m = parse_measure("SpanRecall@1000tok")
    assert (m.name, m.budget, m.cutoff, m.levels) == ("SpanRecall@1000tok", 1000, None, ("chunk",))
    assert parse_measure("Success@500tok").levels == ("chunk",)
    assert parse_measure("Success@5").levels == ("chunk", "doc")
    from assay.core.errors import ConfigError

    with pytest.raises(ConfigError, match="takes no context budget"):
        parse_measure("AP@100tok")
    with pytest.raises(ConfigError, match="needs a cutoff, e.g. SpanIoU@10 or SpanIoU@1000tok"):
        parse_measure("SpanIoU")


def test_runs_recorded_before_budgets_are_tokenized_when_the_migration_applies(warehouse):
    from assay.store import tokens as budget
    from assay.core.errors import ConfigError

    rng = random.Random(7)
    syn, texts = _random_run(rng, n_queries=5)
    write_synthetic(warehouse, syn, texts=texts)
    before = per_query(warehouse, "synthetic-run", parse_measure("SpanRecall@300tok"))
    # the state of a warehouse written before migration 010: no token tables, no tokenizer on the run
    warehouse.con.execute("DELETE FROM doc_tokens")
    warehouse.con.execute("DELETE FROM chunk_tokens")
    warehouse.con.execute("UPDATE runs SET tokenizer_id = NULL")
    with pytest.raises(ConfigError, match="has no token counts, so SpanRecall@300tok cannot be computed"):
        per_query(warehouse, "synthetic-run", parse_measure("SpanRecall@300tok"))
    assert per_query(warehouse, "synthetic-run", parse_measure("nDCG@10"))  # other measures never needed them
    assert budget.backfill(warehouse) == 1
    assert per_query(warehouse, "synthetic-run", parse_measure("SpanRecall@300tok")) == before
    assert budget.backfill(warehouse) == 0
