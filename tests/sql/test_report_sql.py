"""The report SQL that verdicts read, on a warehouse where every filter and join of it decides something:
sql/reports/context_tokens.sql (tokens@k, `assay sweep`'s cost column and the tie-break of its best point) and
sql/reports/top_scores.sql (what `assay calibrate` fits and chooses its threshold on).

Two runs over one corpus and chunk set, the second without question qc; in the first, two stages (bm25, final) that return different chunks. The
chunks cost 2, 2, 3 and 4 word pieces (checked against the tokenizer below), so a sum of tokens is never a count of
chunks. Questions: qa returns A, B, C; qb returns C; qc is answerable and returns nothing (it costs 0 and counts in
the mean); qn is a no_answer question (left out of tokens@k, listed by top_scores). Every expected value is written
out by hand from these.
"""

import pytest

from assay.store.tokens import token_spans
from assay.inputs.chunking import Chunk
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic
from world import opened

TEXT = ("alpha beta gamma delta epsilon zeta eta theta iota kappa " * 20)[:DOC_LEN]
A, B, C, D = (Chunk("e.md", i, s, e, TEXT[s:e]) for i, (s, e) in enumerate(((0, 11), (11, 23), (23, 40), (40, 57))))
TOKENS = {A: 2, B: 2, C: 3, D: 4}
ids = lambda *chunks: [c.chunk_id for c in chunks]  # noqa: E731
QUESTIONS = [QuerySpec("qa", [("e.md", 0, 5, 1)], []), QuerySpec("qb", [("e.md", 23, 30, 1)], []),
             QuerySpec("qc", [("e.md", 40, 45, 1)], []), QuerySpec("qn", [], [], category="no_answer")]
MAIN = {"qa": {"bm25": ids(D, C), "final": ids(A, B, C)}, "qb": {"bm25": ids(A, B), "final": ids(C)},
        "qc": {"bm25": ids(D), "final": []}, "qn": {"bm25": ids(A), "final": ids(D)}}
OTHER_QUESTIONS = [q for q in QUESTIONS if q.query_id != "qc"]  # a run's own questions decide, not another's
OTHER = {q.query_id: {"final": ids(D)} for q in OTHER_QUESTIONS}


def write(wh):
    write_synthetic(wh, Synthetic(["e.md"], [A, B, C, D], QUESTIONS), run_id="main", stages=MAIN,
                    texts={"e.md": TEXT})
    write_synthetic(wh, Synthetic(["e.md"], [A, B, C, D], OTHER_QUESTIONS), run_id="other", stages=OTHER,
                    texts={"e.md": TEXT})


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    wh = opened(tmp_path_factory, "report-sql", write)
    yield wh
    wh.close()


def test_the_chunks_cost_the_pieces_counted_by_hand():
    assert [len(spans) for spans in token_spans([c.text for c in TOKENS])] == list(TOKENS.values())


@pytest.mark.parametrize("run_id, k, mean", [
    ("main", 1, (2 + 3 + 0) / 3),  # qa: A; qb: C; qc: nothing; qn (no_answer) left out
    ("main", 2, (4 + 3 + 0) / 3),  # qa: A + B
    ("main", 3, (7 + 3 + 0) / 3),  # qa: A + B + C
    ("main", 10, (7 + 3 + 0) / 3),
    ("other", 1, 4.0),  # D for qa and qb, its only answerable questions
])
def test_context_tokens_is_the_mean_over_answerable_questions_of_the_top_k_final_results(wh, run_id, k, mean):
    _, rows = wh.query("reports/context_tokens", run_id=run_id, k=k)
    assert rows == [(pytest.approx(mean, abs=1e-12),)]


def test_top_scores_are_each_questions_rank_one_final_score_or_none(wh):
    # write_synthetic scores rank r of a list of length L as L - r: qa's final A at 2, qb's C at 0, qn's D at 0
    _, rows = wh.query("reports/top_scores", run_id="main")
    assert rows == [("qa", True, 2.0), ("qb", True, 0.0), ("qc", True, None), ("qn", False, 0.0)]
    _, rows = wh.query("reports/top_scores", run_id="other")
    assert rows == [("qa", True, 0.0), ("qb", True, 0.0), ("qn", False, 0.0)]
