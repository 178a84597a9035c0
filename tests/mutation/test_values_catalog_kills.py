"""measure_catalog as store_values writes it: a measure new to the warehouse gets its registry entry, and an
entry the registry has changed since is updated in place, every other entry left as it was.

The tests of tests/test_measure_values.py check one column of one user measure's entry, outside the mutation
selection; these read the catalog whole, before and after, so that inserting nothing, inserting the known
entries again, updating nothing, updating the unchanged entries, or updating with shifted columns all fail.
"""

from __future__ import annotations

import shutil

import pytest

from assay.measures import values as mv
from assay.measures.registry import DEFAULT_MEASURES, load_user_measures, parse_measure
from assay.inputs.project import load_config
from assay.store.warehouse import Warehouse

HEADER = """\
-- measure: TopHit
-- interval: {interval}
-- cutoff: required
-- levels: doc
-- definition: {definition}
"""
BODY = """\
SELECT j.query_id, j.level, MAX(CASE WHEN j.rank <= $k AND j.gain > 0 THEN 1.0 ELSE 0.0 END) AS value
FROM judged_ranking j JOIN eval_questions q ON q.run_id = j.run_id AND q.query_id = j.query_id AND q.answerable
WHERE j.run_id = $run_id AND j.stage = $stage AND j.level = 'doc'
GROUP BY j.query_id, j.level
"""


@pytest.fixture
def mini(mini_bm25):
    path, rec = mini_bm25
    return path, rec.run_id


@pytest.fixture
def warehouse(mini, tmp_path):
    path, run_id = mini
    shutil.copy(path, tmp_path / "w.duckdb")
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        yield wh, run_id


@pytest.fixture
def top_hit(tmp_path):
    """Writes the user measure TopHit with the given interval and definition, and loads it; returns TopHit@3."""
    (tmp_path / "m").mkdir()
    (tmp_path / "assay.toml").write_text('[measures]\ndir = "m"\n', encoding="utf-8")

    def define(interval: str, definition: str):
        (tmp_path / "m" / "top_hit.sql").write_text(HEADER.format(interval=interval, definition=definition) + BODY,
                                                    encoding="utf-8")
        load_user_measures(load_config(tmp_path / "assay.toml"))
        return parse_measure("TopHit@3")

    try:
        yield define
    finally:
        load_user_measures({})


def catalog(wh) -> dict[str, tuple]:
    rows = wh.con.execute(f"SELECT {', '.join(mv.CATALOG_COLUMNS)} FROM measure_catalog").fetchall()
    assert len(rows) == len({r[0] for r in rows})  # one entry a measure
    return {r[0]: tuple(r) for r in rows}


def store(wh, run_id, measures):
    with wh.transaction():
        return mv.store_values(wh, run_id, measures)


def test_a_new_measure_is_added_and_a_changed_one_updated_in_place(warehouse, top_hit):
    wh, run_id = warehouse
    before = catalog(wh)
    assert "TopHit@3" not in before and "nDCG@10" in before  # the run stored the default measures

    stored = store(wh, run_id, [top_hit("wilson", "1 if a credited document is in the top k")])
    assert stored.total > 0
    added = catalog(wh)
    assert added == {**before, "TopHit@3": ("TopHit@3", "TopHit", 3, None, "wilson", "question",
                                            "1 if a credited document is in the top k")}

    # the same measure redefined: no value is new, the entry is rewritten whole, nothing else moves
    stored = store(wh, run_id, [top_hit("bootstrap", "a new wording")])
    assert stored.total == 0 and stored.kept > 0
    assert catalog(wh) == {**before, "TopHit@3": ("TopHit@3", "TopHit", 3, None, "bootstrap", "question",
                                                  "a new wording")}


def test_an_unchanged_entry_is_left_as_stored(warehouse, top_hit):
    """Storing the defaults again, with a new user measure beside them, adds the one entry and rewrites none:
    the stored entries of the default measures are changed by hand first, and stay changed only if the registry
    still says the same (here it does not), so a write that skips changed entries or touches unchanged ones
    shows."""
    wh, run_id = warehouse
    ndcg = parse_measure("nDCG@10")
    wh.con.execute("UPDATE measure_catalog SET definition = 'stale' WHERE measure = 'nDCG@10'")
    before = catalog(wh)
    store(wh, run_id, [*DEFAULT_MEASURES, top_hit("wilson", "first")])
    after = catalog(wh)
    assert after["nDCG@10"] == (*before["nDCG@10"][:-1], ndcg.family.definition)  # the stale entry is rewritten
    assert {k: v for k, v in after.items() if k not in ("nDCG@10", "TopHit@3")} == {
        k: v for k, v in before.items() if k != "nDCG@10"}
    assert after["TopHit@3"][-1] == "first"
