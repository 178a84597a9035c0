"""Every measure, per question, against pytrec_eval (trec_eval) on fixture and randomized runs."""

import random

import pytest
import pytrec_eval

from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from synthetic import QuerySpec, Synthetic, random_synthetic, write_synthetic
from assay.inputs.chunking import Chunk

CUTOFFS = (1, 3, 5, 10)


def _overlaps(chunk, gold):
    d, s, e, _ = gold
    if chunk.doc_id != d:
        return False
    s, e = (0, 10**9) if s is None else (s, e)
    return chunk.start < e and s < chunk.end


def chunk_level_inputs(syn, q):
    """The credit rule, written independently: each gold unit is credited at the first rank that
    overlaps it; a rank stands for the highest-grade unit it newly covers (ties: lowest index)."""
    by_id = {c.chunk_id: c for c in syn.chunks}
    credited, run, units_first_rank = set(), {}, {}
    n = len(q.ranking)
    for rank, cid in enumerate(q.ranking, 1):
        new = [i for i, g in enumerate(q.gold) if i not in credited and _overlaps(by_id[cid], g)]
        for i in new:
            units_first_rank[i] = rank
        credited.update(new)
        if new:
            best = min(new, key=lambda i: (-q.gold[i][3], i))
            run[f"unit{best}"] = float(n - rank)
        else:
            run[f"chunk{rank}"] = float(n - rank)
    qrel = {f"unit{i}": g[3] for i, g in enumerate(q.gold)}
    return qrel, run, units_first_rank


def doc_level_inputs(syn, q):
    by_id = {c.chunk_id: c for c in syn.chunks}
    docs = list(dict.fromkeys(by_id[cid].doc_id for cid in q.ranking))
    qrel = {}
    for d, _, _, g in q.gold:
        qrel[d] = max(qrel.get(d, 0), g)
    run = {d: float(len(docs) - i) for i, d in enumerate(docs)}
    return qrel, run


def trec(qrel, run, measure_names):
    if not run:  # trec_eval leaves out a question with no results; its defined value is 0
        return None
    ev = pytrec_eval.RelevanceEvaluator({"q": qrel}, set(measure_names))
    return ev.evaluate({"q": run})["q"]


def expected(qrel, run, name, k):
    """The value pytrec_eval gives for measure family `name` at cutoff k (None: no cutoff)."""
    if not run:
        return 0.0
    if name == "RR":  # RR@k is recip_rank over the run cut at k
        top = dict(sorted(run.items(), key=lambda kv: -kv[1])[: k or len(run)])
        return trec(qrel, top, ["recip_rank"])["recip_rank"]
    key = {"Success": f"success.{k}", "R": f"recall.{k}", "P": f"P.{k}", "nDCG": f"ndcg_cut.{k}",
           "AP": "map" if k is None else f"map_cut.{k}"}[name]
    result = trec(qrel, run, [key])
    return result[key.replace(".", "_")]


MEASURES = [f"{m}@{k}" for m in ("Success", "R", "P", "RR", "nDCG") for k in CUTOFFS] + ["AP", "AP@5", "RR", "nDCG"]


def check_parity(wh, syn):
    write_synthetic(wh, syn)
    for text in MEASURES:
        measure = parse_measure(text)
        ours = per_query(wh, "synthetic-run", measure)
        name, k = measure.family.name, measure.cutoff
        if name == "nDCG" and k is None:
            continue  # checked below through ndcg (no cutoff)
        for q in syn.queries:
            qrel_c, run_c, first = chunk_level_inputs(syn, q)
            if name == "R":
                # R@k is set recall: every unit covered in the top k counts, even two in one chunk.
                want_c = sum(1 for r in first.values() if r <= k) / len(q.gold)
                multi = len(first) != len([u for u in run_c if u.startswith("unit")])
                if not multi:
                    assert want_c == pytest.approx(expected(qrel_c, run_c, name, k), abs=1e-9)
            else:
                want_c = expected(qrel_c, run_c, name, k)
            assert ours[(q.query_id, "chunk")] == pytest.approx(want_c, abs=1e-9), (text, q.query_id, "chunk")
            qrel_d, run_d = doc_level_inputs(syn, q)
            want_d = expected(qrel_d, run_d, name, k)
            assert ours[(q.query_id, "doc")] == pytest.approx(want_d, abs=1e-9), (text, q.query_id, "doc")
    ndcg = per_query(wh, "synthetic-run", parse_measure("nDCG"))
    for q in syn.queries:
        qrel_c, run_c, _ = chunk_level_inputs(syn, q)
        want = trec(qrel_c, run_c, ["ndcg"])["ndcg"] if run_c else 0.0
        assert ndcg[(q.query_id, "chunk")] == pytest.approx(want, abs=1e-9)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_randomized_runs_match_pytrec_eval(warehouse, seed):
    check_parity(warehouse, random_synthetic(random.Random(seed)))


def _fixture():
    c = lambda d, s, e: Chunk(d, 0, s, e, "x" * (e - s))  # noqa: E731
    chunks = [c("a.md", 0, 100), c("a.md", 80, 180), c("a.md", 300, 400), c("b.md", 0, 100),
              c("b.md", 100, 200), c("c.md", 0, 50), c("c.md", 40, 90)]
    ids = [ch.chunk_id for ch in chunks]
    queries = [
        # two overlapping chunks cover one span: credited once
        QuerySpec("overlap", [("a.md", 85, 95, 1)], [ids[0], ids[1], ids[3]]),
        # empty ranking: every metric is 0 and the question still counts
        QuerySpec("empty", [("a.md", 0, 10, 1)], []),
        # nothing relevant retrieved
        QuerySpec("miss", [("c.md", 0, 10, 1)], [ids[3], ids[4]]),
        # graded, two documents, relevant item lower down
        QuerySpec("graded", [("b.md", 150, 160, 2), ("a.md", 310, 320, 1)], [ids[5], ids[2], ids[4]]),
        # whole-document gold
        QuerySpec("wholedoc", [("c.md", None, None, 1)], [ids[0], ids[6], ids[5]]),
        # one chunk covers two gold spans
        QuerySpec("twoinone", [("b.md", 10, 20, 1), ("b.md", 30, 40, 1)], [ids[4], ids[3]]),
        QuerySpec("noanswer", [], [ids[0]], category="no_answer"),
    ]
    return Synthetic(["a.md", "b.md", "c.md"], chunks, queries)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_fixture_run_matches_pytrec_eval(warehouse):
    syn = _fixture()
    syn.queries = [q for q in syn.queries if q.category != "no_answer"]
    check_parity(warehouse, syn)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_fixture_hand_values(warehouse):
    write_synthetic(warehouse, _fixture())
    v = lambda m: per_query(warehouse, "synthetic-run", parse_measure(m))  # noqa: E731
    # overlapping chunks: the second covers the same span and earns nothing
    assert v("P@3")[("overlap", "chunk")] == pytest.approx(1 / 3)
    assert v("R@10")[("overlap", "chunk")] == 1.0
    # one chunk covering two spans: set recall counts both at rank 2, precision credits the rank once
    assert v("R@1")[("twoinone", "chunk")] == 0.0
    assert v("R@2")[("twoinone", "chunk")] == 1.0
    assert v("P@2")[("twoinone", "chunk")] == 0.5
    # empty ranking is 0, not missing
    for m in ("Success@10", "R@10", "P@5", "RR@10", "nDCG@10", "AP"):
        assert v(m)[("empty", "chunk")] == 0.0
        assert v(m)[("empty", "doc")] == 0.0
    # no_answer questions are not scored by retrieval metrics
    assert ("noanswer", "chunk") not in v("Success@10")
    # document level: graded gold doc b.md (grade 2) at doc rank 2 of [c, a, b] -> b is 3rd
    assert v("RR@10")[("graded", "doc")] == pytest.approx(1 / 2)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_no_metric_exceeds_one(warehouse):
    syn = random_synthetic(random.Random(99), n_queries=60)
    write_synthetic(warehouse, syn)
    for text in MEASURES:
        for value in per_query(warehouse, "synthetic-run", parse_measure(text)).values():
            assert 0.0 <= value <= 1.0 + 1e-12, text
