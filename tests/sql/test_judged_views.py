"""The judged views (sql/migrations/002_judged_views.sql) row for row on the edge questions of
tests/sql/world.py, worked out by hand: what every measure reads, read directly."""

import pytest

from world import lists, opened, write


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    questions = lists()
    wh = opened(tmp_path_factory, "retrieval", lambda wh: write(wh, questions))
    yield wh
    wh.close()


def _rows(wh, sql, *params):
    return wh.con.execute(sql, list(params)).fetchall()


def test_judged_ranking_credits_each_gold_unit_once_at_its_first_rank(wh):
    def rows(q, level):
        return _rows(wh, "SELECT rank, gain, new_units FROM judged_ranking WHERE run_id = 'main' "
                         "AND stage = 'final' AND level = ? AND query_id = ? ORDER BY rank", level, q)

    # b.md chunks [0,50) [300,400) [50,60) against gold [10,20) g1, [55,58) g3, [320,330) g1
    assert rows("edge-grades", "chunk") == [(1, 1, 1), (2, 1, 1), (3, 3, 1)]
    assert rows("edge-grades", "doc") == [(1, 3, 1)]  # one document, graded by its best entry
    assert rows("edge-ties", "chunk") == [(1, 2, 2)]  # one chunk newly covers two units
    assert rows("edge-touch", "chunk") == [(1, 0, 0), (2, 0, 0), (3, 2, 1)]
    assert rows("edge-inside", "chunk") == [(1, 0, 0), (2, 0, 0)]
    assert rows("edge-touch", "doc") == [(1, 2, 1)]  # three chunks of a.md: one document, at its first rank
    assert rows("edge-none", "chunk") == [] and rows("edge-none", "doc") == []


def test_the_stages_and_runs_are_kept_apart(wh):
    def by(run, stage):
        return _rows(wh, "SELECT rank, gain FROM judged_ranking WHERE run_id = ? AND stage = ? "
                         "AND level = 'chunk' AND query_id = 'edge-touch' ORDER BY rank", run, stage)

    assert by("main", "final") == [(1, 0), (2, 0), (3, 2)]
    assert by("main", "retrieval") == [(1, 2), (2, 0)]  # reversed, less its last
    assert len(by("decoy", "final")) == 3


def test_unit_counts_and_ideal_gains(wh):
    counts = dict(((q, level), n) for q, level, n in _rows(
        wh, "SELECT query_id, level, n_units FROM unit_counts WHERE run_id = 'main' AND query_id LIKE 'edge-%'"))
    assert counts[("edge-grades", "chunk")] == 3 and counts[("edge-grades", "doc")] == 1
    assert counts[("edge-ties", "chunk")] == 2 and counts[("edge-ties", "doc")] == 1
    ideal = _rows(wh, "SELECT level, ideal_rank, gain FROM ideal_gains WHERE run_id = 'main' "
                      "AND query_id = 'edge-grades' ORDER BY level, ideal_rank")
    assert ideal == [("chunk", 1, 3), ("chunk", 2, 1), ("chunk", 3, 1), ("doc", 1, 3)]


def test_eval_questions(wh):
    rows = _rows(wh, "SELECT query_id, answerable, n_results FROM eval_questions WHERE run_id = 'main' "
                     "AND (query_id LIKE 'edge-%' OR query_id = 'unanswerable') ORDER BY query_id")
    assert rows == [("edge-grades", True, 3), ("edge-inside", True, 2), ("edge-none", True, 0),
                    ("edge-rank1", True, 10), ("edge-rank10", True, 10), ("edge-rank3", True, 10),
                    ("edge-rank5", True, 10), ("edge-ties", True, 1), ("edge-touch", True, 3),
                    ("unanswerable", False, 1)]


def test_doc_hits_collapse_chunks_to_documents_at_their_first_rank(wh):
    rows = _rows(wh, "SELECT query_id, doc_id, first_chunk_rank, rank FROM doc_hits WHERE run_id = 'main' "
                     "AND stage = 'final' AND query_id IN ('edge-grades', 'edge-touch') ORDER BY query_id")
    assert rows == [("edge-grades", "b.md", 1, 1), ("edge-touch", "a.md", 1, 1)]
    # edge-rank5: four other documents' chunks, then b.md's: b.md's document rank counts distinct documents
    ranks = dict(_rows(wh, "SELECT doc_id, first_chunk_rank FROM doc_hits WHERE run_id = 'main' AND stage = 'final' "
                           "AND query_id = 'edge-rank5'"))
    assert ranks["b.md"] == 5


VIEWS = ("eval_questions", "gold_units", "unit_counts", "ideal_gains", "chunk_gold_overlaps", "chunk_credits",
         "doc_hits", "judged_ranking", "budget_hits")


def test_a_run_that_is_not_complete_is_never_judged(wh):
    """A failed run holding the main run's hits and questions: no judged view shows a row of it, and the
    complete runs' rows are the same as without it."""
    count = lambda view, run: _rows(wh, f"SELECT COUNT(*) FROM {view} WHERE run_id = ?", run)[0][0]  # noqa: E731
    before = {(view, run): count(view, run) for view in VIEWS for run in ("main", "decoy")}
    tables = ("runs", "run_queries", "hit_lists", "run_stages")
    for table in tables:
        wh.con.execute(f"INSERT INTO {table} SELECT * REPLACE ('failed' AS run_id) FROM {table} WHERE run_id = 'main'")
    wh.con.execute("UPDATE runs SET status = 'failed' WHERE run_id = 'failed'")
    try:
        assert {view: count(view, "failed") for view in VIEWS} == dict.fromkeys(VIEWS, 0)
        assert {(view, run): count(view, run) for view in VIEWS for run in ("main", "decoy")} == before
    finally:
        for table in tables:
            wh.con.execute(f"DELETE FROM {table} WHERE run_id = 'failed'")


def test_every_ranked_item_has_a_row_and_a_gain_zero_when_not_relevant(wh):
    rows = _rows(wh, "SELECT rank, item, gain, new_units FROM judged_ranking WHERE run_id = 'main' "
                     "AND stage = 'final' AND level = 'doc' AND query_id = 'edge-rank5' ORDER BY rank")
    docs = _rows(wh, "SELECT doc_id FROM doc_hits WHERE run_id = 'main' AND stage = 'final' "
                     "AND query_id = 'edge-rank5' ORDER BY rank")
    assert [r[1] for r in rows] == [d for (d,) in docs] and len(rows) >= 2  # b.md and the documents before it
    assert [r[2:] for r in rows if r[1] != "b.md"] == [(0, 0)] * (len(rows) - 1)
    assert [r[2:] for r in rows if r[1] == "b.md"] == [(1, 1)]
    assert _rows(wh, "SELECT COUNT(*) FROM judged_ranking WHERE gain IS NULL OR new_units IS NULL") == [(0,)]
