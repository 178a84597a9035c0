"""The answer and abstention measures (sql/measures/{abstention,answer_rate,refusal_rate,citation_precision,
faithfulness,judged_faithfulness}.sql), every unit of two runs against a computation in Python over the
rows written, on data built to sit on each rule's edges: a citation whose chunk or quote ends exactly where
the gold starts or starts where it ends, a chunk of the right offsets in another document, a gold span of
another question, a dropped claim, one result against none, gold and chunks stored under other hashes, and
a second run that reads other judgments and another chunk set."""

import pytest

from assay.inputs.chunking import Chunk
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from synthetic import QuerySpec, Synthetic, write_synthetic
from world import CORPUS, DOC_LEN, JUDGMENTS, OTHER_CORPUS, OTHER_JUDGMENTS, opened

CHUNKS = {"A1": Chunk("a.md", 0, 0, 100, "x" * 100), "A2": Chunk("a.md", 1, 100, 200, "x" * 100),
          "A3": Chunk("a.md", 2, 110, 300, "x" * 190), "B1": Chunk("b.md", 3, 0, 100, "x" * 100)}
ID = {k: c.chunk_id for k, c in CHUNKS.items()}
GOLD = {"q1": [("a.md", 50, 60, 1)], "q2": [("a.md", 100, 110, 1)], "q3": [("b.md", 10, 20, 1)],
        "n1": [], "n2": [], "n3": []}
RANKINGS = {  # run -> question -> ranking; n_results is its length (0: the pipeline abstained)
    "main": {"q1": ["A1", "A2"], "q2": ["A1"], "q3": [], "n1": [], "n2": ["B1"], "n3": ["A1", "A2"]},
    "decoy": {"q1": [], "q2": ["A1", "A2"], "q3": ["B1"], "n1": ["A1"], "n2": [], "n3": []},
}
KEPT = {  # run -> question -> claims kept (answers.claims_kept)
    "main": {"q1": 3, "q2": 1, "q3": 0, "n1": 0, "n2": 1, "n3": 0},
    "decoy": {"q1": 0, "q2": 0, "q3": 2, "n1": 1, "n2": 0, "n3": 1},
}
# run, question, claim -> kept, [(chunk, quote doc, quote start, quote end)]
CLAIMS = {
    ("main", "q1", 0): (True, [("A1", "a.md", 52, 58), ("A2", "a.md", 0, 10)]),   # one citation misses
    ("main", "q1", 1): (True, [("A1", "a.md", 55, 65), ("B1", "b.md", 12, 18)]),  # B1 is q3's gold, not q1's
    ("main", "q1", 2): (False, [("A1", "a.md", 50, 60)]),                         # dropped: never counted
    ("main", "q1", 3): (True, [("A1", "a.md", 50, 60), ("A1", "a.md", 59, 70)]),
    ("main", "q2", 0): (True, [("A1", "a.md", 90, 100)]),    # chunk and quote end where the gold starts
    ("main", "q2", 1): (True, [("A3", "a.md", 110, 120)]),   # chunk and quote start where the gold ends
    ("main", "q2", 2): (True, [("A2", "a.md", 100, 101)]),
    ("main", "q3", 0): (True, [("A1", "a.md", 10, 20)]),     # the gold's offsets, in another document
    ("main", "n2", 0): (True, [("B1", "b.md", 10, 20)]),     # a no_answer question has no gold: it misses
    ("decoy", "q1", 0): (True, [("A2", "a.md", 0, 10)]),
    ("decoy", "q2", 0): (True, [("A1", "a.md", 100, 110)]),
    ("decoy", "q3", 0): (True, [("B1", "b.md", 15, 16), ("B1", "b.md", 0, 5)]),
    ("decoy", "q3", 1): (False, [("B1", "b.md", 15, 16)]),
    ("decoy", "n1", 0): (True, [("A1", "a.md", 50, 60)]),
}
VERDICTS = {("main", "q1", 0): "supported", ("main", "q1", 1): "unsupported", ("main", "q1", 3): "unavailable",
            ("main", "q2", 0): "unparsed", ("main", "q2", 1): "supported", ("main", "n2", 0): "unsupported",
            ("decoy", "q1", 0): "unsupported", ("decoy", "q3", 0): "supported", ("decoy", "n1", 0): "supported"}


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    wh = opened(tmp_path_factory, "answers", _write)
    yield wh
    wh.close()


def _write(wh):
    for run, ranks in RANKINGS.items():
        queries = [QuerySpec(q, GOLD[q], [ID[c] for c in ranks[q]], "no_answer" if q.startswith("n") else "normal")
                   for q in GOLD]
        write_synthetic(wh, Synthetic(["a.md", "b.md"], list(CHUNKS.values()), queries), run_id=run)
        for q, kept in KEPT[run].items():
            wh.con.execute("INSERT INTO answers (run_id, query_id, generator, status, claims_returned, claims_kept, "
                           "repair_turns, latency_ms) VALUES (?, ?, 'extractive', 'answered', ?, ?, 0, 1.0)",
                           [run, q, kept + 1, kept])
    for (run, q, idx), (kept, cites) in CLAIMS.items():
        wh.con.execute("INSERT INTO claims (run_id, query_id, claim_idx, text, kept) VALUES (?, ?, ?, 'c', ?)",
                       [run, q, idx, kept])
        for n, (chunk, doc, s, e) in enumerate(cites):
            wh.con.execute("INSERT INTO citations VALUES (?, ?, ?, ?, ?, 'quote', TRUE, NULL, ?, ?, ?)",
                           [run, q, idx, n, ID[chunk], doc, s, e])
    for (run, q, idx), verdict in VERDICTS.items():
        wh.con.execute("INSERT INTO claim_judgments (run_id, query_id, claim_idx, judge_model, verdict) "
                       "VALUES (?, ?, ?, 'judge', ?)", [run, q, idx, verdict])
    # gold everywhere, and the chunks' ids in another chunk set of another document: no run reads them
    for judgments, corpus in ((OTHER_JUDGMENTS, CORPUS), (JUDGMENTS, OTHER_CORPUS)):
        for i, q in enumerate(GOLD):
            for n, d in enumerate(("a.md", "b.md")):
                wh.con.execute("INSERT INTO gold_spans VALUES (?, ?, ?, ?, ?, NULL, 1, 0, ?)",
                               [judgments, corpus, q, n, d, DOC_LEN])
    for c in CHUNKS.values():
        wh.con.execute("INSERT INTO chunks VALUES (?, ?, 'z.md', 0, 0, ?, 'x', 'x')", ["t" * 64, c.chunk_id, DOC_LEN])
    # the decoy run reads those: the other judgments (the same questions, gold everywhere) and chunk set
    wh.con.execute("INSERT INTO queries SELECT * REPLACE (? AS judgments_hash) FROM queries WHERE judgments_hash = ?",
                   [OTHER_JUDGMENTS, JUDGMENTS])
    wh.con.execute("UPDATE runs SET judgments_hash = ?, chunk_set = ? WHERE run_id = 'decoy'",
                   [OTHER_JUDGMENTS, "t" * 64])


def _gold(run):
    """The decoy run reads the other judgments: every question's gold is both documents, whole."""
    return GOLD if run == "main" else {q: [("a.md", 0, DOC_LEN, 1), ("b.md", 0, DOC_LEN, 1)] for q in GOLD}


def _chunk(run, c):
    """(document, start, end) of a chunk in the run's chunk set: the decoy's are all of z.md."""
    return (CHUNKS[c].doc_id, CHUNKS[c].start, CHUNKS[c].end) if run == "main" else ("z.md", 0, DOC_LEN)


def _overlaps(gold, doc, s, e):
    return any(d == doc and s < ge and gs < e for d, gs, ge, _ in gold)


def _answerable(q):
    return not q.startswith("n")


def expected(run: str, family: str) -> dict:
    kept_claims = {(q, i): cites for (r, q, i), (kept, cites) in CLAIMS.items() if r == run and kept}
    if family == "Abstain":
        return {(q, "query"): float(not RANKINGS[run][q]) for q in GOLD if not _answerable(q)}
    if family == "FalseAbstain":
        return {(q, "query"): float(not RANKINGS[run][q]) for q in GOLD if _answerable(q)}
    if family == "answer_rate":
        return {(q, "answer"): float(k > 0) for q, k in KEPT[run].items() if _answerable(q)}
    if family == "refusal_rate":
        return {(q, "answer"): float(k == 0) for q, k in KEPT[run].items() if not _answerable(q)}
    if family == "citation_precision":
        return {(f"{q}|{i}|{n}", "answer"): float(_overlaps(_gold(run)[q], *_chunk(run, c)))
                for (q, i), cites in kept_claims.items() for n, (c, _, _, _) in enumerate(cites)}
    if family == "faithfulness":
        return {(f"{q}|{i}", "answer"): float(all(_overlaps(_gold(run)[q], d, s, e) for _, d, s, e in cites))
                for (q, i), cites in kept_claims.items()}
    if family == "judged_faithfulness":
        return {(f"{q}|{i}", "answer"): float(v == "supported") for (r, q, i), v in VERDICTS.items()
                if r == run and v in ("supported", "unsupported")}
    raise AssertionError(family)


FAMILIES = ("Abstain", "FalseAbstain", "answer_rate", "refusal_rate", "citation_precision", "faithfulness",
            "judged_faithfulness")


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("run", ["main", "decoy"])
def test_every_unit_matches_the_rows_written(wh, family, run):
    got = per_query(wh, run, parse_measure(family))
    assert got == expected(run, family)


def test_the_data_reaches_both_values():
    """Each measure's expected values hold both 0 and 1 in the main run, so a constant cannot pass."""
    for family in FAMILIES:
        assert set(expected("main", family).values()) == {0.0, 1.0}, family
