"""SpanPrecision@k and SpanIoU@k (with SpanRecall@k) per question: hand-computed cases, a brute-force reading of
the demo's stored hits as sets of characters, and Chroma's chunking evaluation where the two definitions meet.

Chroma's reference code (brandonstarxel/chunking_evaluation, evaluation_framework/base_evaluation.py,
``_scores_from_dataset_and_retrievals``) takes the top k chunks, counts the gold characters they cover once
(a union of intersections), and divides by the summed lengths of the k chunks (precision) and by those plus
the gold characters left uncovered (IoU). assay counts the retrieved text as a set, each character once
(docs/measures.md says why); the two agree whenever no two results overlap, which the reference below checks.
"""

from fractions import Fraction

import pytest

from assay.inputs.chunking import Chunk
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from conftest import DEMO
from synthetic import QuerySpec, Synthetic, write_synthetic


def _values(wh, name, run_id="synthetic-run"):
    return {q: v for (q, level), v in per_query(wh, run_id, parse_measure(name)).items() if level == "chunk"}


CHUNKS = [Chunk("d0.md", 0, 90, 130, ""), Chunk("d0.md", 1, 120, 200, ""),  # the second overlaps the first by 10
          Chunk("d0.md", 2, 310, 400, ""),  # crosses the end of the gold [300, 320)
          Chunk("d1.md", 3, 0, 40, ""),  # misses every gold span
          Chunk("d1.md", 4, 40, 70, "")]  # holds the gold [50, 60) whole
IDS = [c.chunk_id for c in CHUNKS]
GOLD = [("d0.md", 100, 140, 1), ("d0.md", 300, 320, 2), ("d1.md", 50, 60, 1)]  # 70 gold characters

# query -> ranking, and per k: (SpanRecall, SpanPrecision, SpanIoU), each worked out by hand in characters
CASES = {
    # top 1: [90,130) covers [100,130) of the gold: 30 of 40 retrieved, of 70 gold; union 40 + 70 - 30
    # top 2: [90,200) (110 characters, the overlap once) covers [100,140): 40
    # top 3: + [310,400) covers [310,320): 50 of 200; top 4: + [0,40) of d1: 50 of 240
    "overlap": ([IDS[0], IDS[1], IDS[2], IDS[3]], GOLD, {
        1: (Fraction(30, 70), Fraction(30, 40), Fraction(30, 80)),
        2: (Fraction(40, 70), Fraction(40, 110), Fraction(40, 140)),
        3: (Fraction(50, 70), Fraction(50, 200), Fraction(50, 220)),
        4: (Fraction(50, 70), Fraction(50, 240), Fraction(50, 260))}),
    "empty": ([], GOLD, {1: (0, 0, 0), 10: (0, 0, 0)}),  # nothing returned: every measure 0, and counted
    "whole": ([IDS[4], IDS[3]], [("d1.md", 50, 60, 1)], {
        1: (1, Fraction(10, 30), Fraction(10, 30)),
        2: (1, Fraction(10, 70), Fraction(10, 70))}),
    # two gold entries quoting overlapping text: the gold text is their union [100,150), 50 characters
    "gold-twice": ([IDS[0]], [("d0.md", 100, 140, 1), ("d0.md", 130, 150, 1)], {
        1: (Fraction(30, 50), Fraction(30, 40), Fraction(30, 60))}),
    # gold in two documents, results in one: IoU's union spans both
    "two-docs": ([IDS[2]], [("d0.md", 300, 320, 1), ("d1.md", 50, 60, 1)], {
        1: (Fraction(10, 30), Fraction(10, 90), Fraction(10, 110))}),
}


@pytest.fixture
def hand(warehouse):
    syn = Synthetic(["d0.md", "d1.md"], CHUNKS,
                    [QuerySpec(q, gold, ranking) for q, (ranking, gold, _) in CASES.items()])
    write_synthetic(warehouse, syn)
    return warehouse


@pytest.mark.parametrize("k", [1, 2, 3, 4, 10])
def test_span_measures_at_k_on_hand_computed_cases(hand, k):
    got = {family: _values(hand, f"{family}@{k}") for family in ("SpanRecall", "SpanPrecision", "SpanIoU")}
    checked = 0
    for q, (_, _, expected) in CASES.items():
        want = expected[max(cut for cut in expected if cut <= k)]  # past the list's end nothing more comes
        for family, value in zip(("SpanRecall", "SpanPrecision", "SpanIoU"), want):
            assert got[family][q] == pytest.approx(float(value), abs=1e-12), (family, k, q)
            checked += 1
    assert checked == 3 * len(CASES)


def chroma(chunks: list[tuple[str, int, int]], refs: list[tuple[str, int, int]]) -> tuple[float, float, float]:
    """Chroma's per-question (recall, precision, IoU) as its reference code computes them: the chunks' summed
    lengths in the denominators, the covered gold characters once in the numerator."""
    covered = {(d, i) for d, s, e in chunks for rd, rs, re_ in refs if d == rd
               for i in range(max(s, rs), min(e, re_))}
    gold = sum(e - s for _, s, e in refs)
    returned = sum(e - s for _, s, e in chunks)
    uncovered = sum(1 for d, s, e in refs for i in range(s, e) if (d, i) not in covered)
    n = len(covered)
    return (n / gold if gold else 0.0, n / returned if returned else 0.0,
            n / (returned + uncovered) if returned + uncovered else 0.0)


def test_chroma_counts_overlapping_results_twice_where_assay_counts_text_once(hand):
    """Without overlap the two agree; with it Chroma's precision and IoU are lower (the 10 shared characters
    count twice in its denominators), assay's recall is the same."""
    ranking, gold, _ = CASES["overlap"]
    spans = [(c.doc_id, c.start, c.end) for c in CHUNKS]
    refs = [(d, s, e) for d, s, e, _ in gold]
    for k, overlapping in ((1, False), (2, True), (4, True)):
        ours = tuple(_values(hand, f"{f}@{k}")["overlap"] for f in ("SpanRecall", "SpanPrecision", "SpanIoU"))
        theirs = chroma([spans[IDS.index(c)] for c in ranking[:k]], refs)
        assert ours[0] == pytest.approx(theirs[0])
        if overlapping:
            assert ours[1] > theirs[1] and ours[2] > theirs[2]
        else:
            assert ours == pytest.approx(theirs)
    assert chroma([spans[0], spans[1]], refs)[1] == pytest.approx(40 / 120)  # 40 + 80 returned, 10 of them twice


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    from assay.runs.demo import run_options
    from assay.runs.runner import run
    from assay.store.warehouse import Warehouse

    path = tmp_path_factory.mktemp("span-demo") / "w.duckdb"
    with Warehouse.open(path) as wh:
        record = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", run_options())
    return path, record.run_id


def _stored_sets(wh, run_id, k):
    """Per answerable question: the retrieved characters of the final top k and the gold characters, read from
    the stored hits, chunks and gold spans (no measure SQL), plus the results and gold entries themselves."""
    retrieved, gold = {}, {}
    rows = wh.con.execute(
        "SELECT h.query_id, c.doc_id, c.start_char, c.end_char FROM hits h JOIN runs r ON r.run_id = h.run_id "
        "JOIN chunks c ON c.chunk_set = r.chunk_set AND c.chunk_id = h.chunk_id "
        "WHERE h.run_id = ? AND h.stage = 'final' AND h.rank <= ? ORDER BY h.query_id, h.rank", [run_id, k]).fetchall()
    for q, d, s, e in rows:
        retrieved.setdefault(q, []).append((d, s, e))
    for q, d, s, e in wh.con.execute(
            "SELECT g.query_id, g.doc_id, g.start_char, g.end_char FROM gold_spans g JOIN runs r "
            "ON r.judgments_hash = g.judgments_hash AND r.corpus_hash = g.corpus_hash WHERE r.run_id = ?",
            [run_id]).fetchall():
        gold.setdefault(q, []).append((d, s, e))
    answerable = [q for (q,) in wh.con.execute("SELECT query_id FROM eval_questions WHERE run_id = ? AND answerable "
                                               "ORDER BY query_id", [run_id]).fetchall()]
    return answerable, retrieved, gold


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("k", [1, 3, 5, 10, 20])
def test_span_measures_at_k_equal_character_sets_on_the_demo(demo_run, k):
    from assay.store.warehouse import Warehouse

    path, run_id = demo_run
    with Warehouse.open(path, read_only=True) as wh:
        answerable, retrieved, gold = _stored_sets(wh, run_id, k)
        got = {f: _values(wh, f"{f}@{k}", run_id) for f in ("SpanRecall", "SpanPrecision", "SpanIoU")}
    agree_with_chroma = 0
    for q in answerable:
        r = {(d, i) for d, s, e in retrieved.get(q, []) for i in range(s, e)}
        g = {(d, i) for d, s, e in gold[q] for i in range(s, e)}
        inter = len(r & g)
        want = {"SpanRecall": inter / len(g), "SpanPrecision": inter / len(r) if r else 0.0,
                "SpanIoU": inter / len(r | g)}
        for family, value in want.items():
            assert got[family][q] == pytest.approx(value, abs=1e-12), (family, k, q)
        results_overlap = sum(e - s for _, s, e in retrieved.get(q, [])) != len(r)
        gold_overlaps = sum(e - s for _, s, e in gold[q]) != len(g)
        if not results_overlap and not gold_overlaps:
            assert chroma(retrieved.get(q, []), gold[q]) == pytest.approx(
                tuple(want[f] for f in ("SpanRecall", "SpanPrecision", "SpanIoU")), abs=1e-12)
            agree_with_chroma += 1
    assert len(answerable) == 56 and agree_with_chroma >= 50  # the demo's chunks never overlap
    assert 0 < sum(got["SpanPrecision"].values()) / 56 < sum(got["SpanRecall"].values()) / 56
