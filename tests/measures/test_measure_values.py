"""measure_values: per-question values written with every run (and every rescore), equal to the measure SQL's,
and `assay measures compute` for runs stored before them."""

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import DEMO

from assay.cli import cli
from assay.measures.compute import per_query
from assay.measures.registry import DEFAULT_MEASURES, load_user_measures, parse_measure
from assay.measures.values import store_values, stored_values
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
from assay.measures import values as mv
from assay.inputs.project import load_config


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def expected(wh, run_id, measure, stage="final"):
    return {key: v for key, v in per_query(wh, run_id, measure, stage).items() if key[1] in measure.levels}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A BM25 run over the demo, written the way `assay run` writes it (a brief warehouse)."""
    path = tmp_path_factory.mktemp("values") / "w.duckdb"
    record = run(Warehouse.brief(path), DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions())
    return path, record.run_id


@pytest.fixture
def demo_copy(demo, tmp_path):
    path, run_id = demo
    shutil.copy(path, tmp_path / "w.duckdb")
    return tmp_path / "w.duckdb", run_id


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_run_stores_every_default_measure_equal_to_the_measure_sql(demo):
    path, run_id = demo
    with Warehouse.open(path, read_only=True) as wh:
        for measure in DEFAULT_MEASURES:
            assert stored_values(wh, run_id, measure) == expected(wh, run_id, measure), measure.name
        levels = dict(wh.con.execute("SELECT measure, string_agg(DISTINCT level, ',' ORDER BY level) "
                                     "FROM measure_values WHERE run_id = ? GROUP BY measure", [run_id]).fetchall())
        n = wh.con.execute("SELECT COUNT(*) FROM measure_values WHERE run_id = ?", [run_id]).fetchall()[0][0]
    # the demo has no answer stage: its answer measures have no values (not zeros)
    retrieval = [m for m in DEFAULT_MEASURES if m.levels != ("answer",)]
    assert levels == {m.name: ",".join(sorted(m.levels)) for m in retrieval}
    assert n == 1247  # 13 ranking measures over 56 answerable questions (8 at both levels), 15 + 56 for abstention


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_answer_measures_store_a_value_per_citation_and_claim(tmp_path, mini_corpus, mini_judgments):
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        rec = run(wh, mini_corpus, mini_judgments, RunOptions("bm25", chunk_size=120, generator="extractive"))
        for name in ("answer_rate", "refusal_rate", "citation_precision", "faithfulness"):
            measure = parse_measure(name)
            assert stored_values(wh, rec.run_id, measure) == expected(wh, rec.run_id, measure) != {}, name
        units = wh.con.execute("SELECT query_id, unit FROM measure_values WHERE run_id = ? AND measure = "
                               "'citation_precision'", [rec.run_id]).fetchall()
    assert units and all(unit.startswith(qid + "|") and unit.count("|") == 2 for qid, unit in units)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_revalidated_run_stores_its_own_answer_values(tmp_path, mini_corpus, mini_judgments):
    from assay.runs.revalidate import revalidate

    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        rec = run(wh, mini_corpus, mini_judgments, RunOptions("bm25", chunk_size=120, generator="extractive"))
        new = revalidate(wh, rec.run_id, max_quote=20)["run_id"]
        for name in ("answer_rate", "citation_precision", "faithfulness", "nDCG@10"):
            measure = parse_measure(name)
            assert stored_values(wh, new, measure) == expected(wh, new, measure) != {}, name


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_rescore_computes_its_own_values_against_its_own_judgments(demo_copy, tmp_path):
    path, run_id = demo_copy
    fewer = tmp_path / "first_gold_only.jsonl"
    lines = [json.loads(line) for line in (DEMO / "judgments.jsonl").read_text().splitlines() if line.strip()]
    for j in lines:
        j["gold"] = j["gold"][:2 if j["category"] == "ambiguous" else 1]
    fewer.write_text("".join(json.dumps(j) + "\n" for j in lines))
    out = invoke("rescore", run_id, "--judgments", fewer, "--warehouse", path)
    assert out.exit_code == 0, out.output
    rescored = out.stdout.strip()
    with Warehouse.open(path, read_only=True) as wh:
        changed = 0
        for measure in DEFAULT_MEASURES:
            mine = stored_values(wh, rescored, measure)
            assert mine == expected(wh, rescored, measure), measure.name
            changed += mine != stored_values(wh, run_id, measure)
    assert changed >= 4  # R, AP, nDCG and the span measures see fewer gold units


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_compute_restores_deleted_values_exactly_and_again_changes_nothing(demo_copy):
    path, run_id = demo_copy
    with Warehouse.open(path, read_only=True) as wh:
        before = sorted(wh.con.execute("SELECT * FROM measure_values").fetchall())
    with Warehouse.open(path) as wh:  # a run stored before measure_values existed
        wh.con.execute("DELETE FROM measure_values")
    out = invoke("measures", "compute", "--all-runs", "--warehouse", path)
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith(f"{run_id}  stored 1247 values (Success@1 112, Success@3 112, ")
    assert out.stdout.endswith("; 0 already stored\n")
    with Warehouse.open(path, read_only=True) as wh:
        assert sorted(wh.con.execute("SELECT * FROM measure_values").fetchall()) == before
    again = invoke("measures", "compute", "--run", "latest", "--warehouse", path)
    assert again.exit_code == 0 and again.stdout == f"{run_id}  stored 0 values; 1247 already stored\n"
    with Warehouse.open(path, read_only=True) as wh:
        assert sorted(wh.con.execute("SELECT * FROM measure_values").fetchall()) == before


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_compute_stores_any_measure_at_any_stage_and_says_what_it_skips(demo_copy):
    path, run_id = demo_copy
    out = invoke("measures", "compute", "nDCG@5", "R@100", "Abstain", "--stage", "bm25", "--run", run_id[:10],
                 "--warehouse", path)
    assert out.exit_code == 0, out.output
    assert out.stdout == (f"{run_id}  stored 224 values (nDCG@5 112, R@100 112); 0 already stored\n"
                          f"{run_id}  skipped Abstain: scores the final answer, not the bm25 stage\n")
    with Warehouse.open(path, read_only=True) as wh:
        measure = parse_measure("nDCG@5")
        assert stored_values(wh, run_id, measure, "bm25") == expected(wh, run_id, measure, "bm25")
        assert wh.con.execute("SELECT interval_kind, unit_kind FROM measure_catalog WHERE measure = 'nDCG@5'"
                              ).fetchall() == [("bootstrap", "question")]


def test_compute_needs_runs_and_known_measures(demo_copy):
    path, _ = demo_copy
    neither = CliRunner().invoke(cli, ["measures", "compute", "--warehouse", str(path)])
    assert neither.exit_code == 2 and "give --run RUN_ID (repeatable) or --all-runs" in neither.output
    unknown = CliRunner().invoke(cli, ["measures", "compute", "nDCG@x", "--all-runs", "--warehouse", str(path)])
    assert unknown.exit_code == 1 and "unknown measure 'nDCG@x'" in unknown.output
    missing = CliRunner().invoke(cli, ["measures", "compute", "--run", "nope", "--warehouse", str(path)])
    assert missing.exit_code == 1 and "no run 'nope'" in missing.output


def test_a_run_that_did_not_complete_gets_no_values(demo_copy):
    path, run_id = demo_copy
    with Warehouse.open(path) as wh:
        wh.con.execute("DELETE FROM measure_values")
        wh.con.execute("UPDATE runs SET status = 'failed' WHERE run_id = ?", [run_id])
        with wh.transaction():
            stored = store_values(wh, run_id)
        assert stored.total == 0 and set(stored.skipped.values()) == {"run status is failed"}
        assert wh.con.execute("SELECT COUNT(*) FROM measure_values").fetchall()[0][0] == 0


def test_bare_measures_still_lists_the_measures():
    out = invoke("measures")
    assert out.exit_code == 0 and out.stdout.splitlines()[0].split() == ["measure", "interval", "definition"]
    assert out.stdout.splitlines()[2].startswith("Success@k|@Ntok")
    assert "compute" not in out.stdout


USER_MEASURE = """\
-- measure: TopHit
-- interval: wilson
-- cutoff: required
-- levels: doc
-- definition: 1 if a credited document is among the top k, else 0
SELECT j.query_id, j.level, MAX(CASE WHEN j.rank <= $k AND j.gain > 0 THEN 1.0 ELSE 0.0 END) AS value
FROM judged_ranking j JOIN eval_questions q ON q.run_id = j.run_id AND q.query_id = j.query_id AND q.answerable
WHERE j.run_id = $run_id AND j.stage = $stage AND j.level = 'doc'
GROUP BY j.query_id, j.level
"""


def test_compute_stores_a_user_measure_named_by_the_config(demo_copy, tmp_path):
    from assay.measures.registry import load_user_measures

    path, run_id = demo_copy
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "top_hit.sql").write_text(USER_MEASURE)
    (tmp_path / "assay.toml").write_text('[measures]\ndir = "m"\n')
    try:
        out = invoke("measures", "compute", "TopHit@3", "--run", run_id, "--config", tmp_path / "assay.toml",
                     "--warehouse", path)
        assert out.exit_code == 0, out.output
        with Warehouse.open(path, read_only=True) as wh:
            mine = stored_values(wh, run_id, parse_measure("TopHit@3"))
            # the same question-by-question values as the built-in Success@3 at document level
            assert mine == {(q, lvl): v for (q, lvl), v in stored_values(wh, run_id, parse_measure("Success@3")).items()
                            if lvl == "doc"}
            assert wh.con.execute("SELECT definition FROM measure_catalog WHERE measure = 'TopHit@3'").fetchall() == [
                ("1 if a credited document is among the top k, else 0",)]
    finally:
        load_user_measures({})
    assert out.stdout == f"{run_id}  stored 56 values (TopHit@3 56); 0 already stored\n"


def test_store_values_says_why_a_run_that_is_not_complete_gets_no_values(tmp_path):
    """store_values on a missing or failed run stores nothing and says why for each measure.

    Kills x_run_status__mutmut_10 (no row read as a status) and x_store_values__mutmut_12..19 (the reason and
    the Stored record of a run that is missing or not complete)."""
    from assay.measures.registry import parse_measure
    from assay.measures.values import Stored, run_status, store_values
    from assay.store.warehouse import Warehouse
    from synthetic import QuerySpec, Synthetic, write_synthetic

    measures = (parse_measure("nDCG@10"), parse_measure("AP"))
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        assert run_status(wh, "nope") is None
        assert store_values(wh, "nope", measures) == Stored("nope", {}, {"nDCG@10": "no such run", "AP": "no such run"})
        syn = Synthetic(["d0.md"], [])
        syn.queries.append(QuerySpec("q0", [("d0.md", None, None, 1)], []))
        write_synthetic(wh, syn, run_id="r")
        wh.con.execute("UPDATE runs SET status = 'failed' WHERE run_id = 'r'")
        assert run_status(wh, "r") == "failed"
        assert store_values(wh, "r", measures) == Stored(
            "r", {}, {"nDCG@10": "run status is failed", "AP": "run status is failed"})


def test_a_measure_of_the_answer_skipped_at_a_ranking_stage_does_not_stop_the_others(tmp_path):
    """A measure of the answer, skipped at a ranking stage, does not stop the measures after it.

    Kills x_store_values__mutmut_53 (continue -> break after a measure with no values at this stage): at the
    bm25 stage, faithfulness (it scores the final answer) is skipped and nDCG@10 after it is still stored."""
    from assay.inputs.chunking import Chunk
    from assay.measures.registry import parse_measure
    from assay.measures.values import store_values
    from assay.store.warehouse import Warehouse
    from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

    chunk = Chunk("d0.md", 0, 0, DOC_LEN, "x" * DOC_LEN)
    syn = Synthetic(["d0.md"], [chunk])
    syn.queries.append(QuerySpec("q0", [("d0.md", None, None, 1)], [chunk.chunk_id]))
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        write_synthetic(wh, syn, run_id="r", stages={"q0": {"bm25": [chunk.chunk_id], "final": [chunk.chunk_id]}})
        stored = store_values(wh, "r", (parse_measure("faithfulness"), parse_measure("nDCG@10")), stage="bm25")
    assert stored.skipped == {"faithfulness": "scores the final answer, not the bm25 stage"}
    assert stored.written == {"nDCG@10": 2}  # chunk and doc level


def test_stored_values_name_their_question_whatever_the_unit(tmp_path):
    """Stored values name their question: a question's unit whole ('|' and all), a citation's the part before the first
    '|'.

    Kills x_store_values__mutmut_54..57, _59.._63 (the query_id column of a stored value): a question's unit
    is its query id, kept whole even when it holds '|'; a citation's unit is 'query_id|claim|cite', and its
    query_id column is the part before the first '|'."""
    from assay.inputs.chunking import Chunk
    from assay.measures.registry import parse_measure
    from assay.measures.values import store_values
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse
    from conftest import MINI
    from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

    chunk = Chunk("d0.md", 0, 0, DOC_LEN, "x" * DOC_LEN)
    syn = Synthetic(["d0.md"], [chunk])
    syn.queries.append(QuerySpec("q|1", [("d0.md", None, None, 1)], [chunk.chunk_id]))
    with Warehouse.open(tmp_path / "s.duckdb") as wh:
        write_synthetic(wh, syn, run_id="s")
        store_values(wh, "s", (parse_measure("nDCG@10"),))
        rows = wh.con.execute("SELECT DISTINCT query_id, unit FROM measure_values WHERE run_id = 's'").fetchall()
    assert rows == [("q|1", "q|1")]
    with Warehouse.open(tmp_path / "m.duckdb") as wh:
        rec = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions("bm25", chunk_size=120,
                                                                           generator="extractive"))
        rows = wh.con.execute("SELECT query_id, unit FROM measure_values WHERE run_id = ? AND measure = "
                              "'citation_precision'", [rec.run_id]).fetchall()
    assert rows and all(unit.count("|") == 2 and query_id == unit.split("|")[0] for query_id, unit in rows)


# measure_catalog as store_values writes it, read whole before and after: a measure new to the warehouse
# gets its registry entry, and an entry the registry has changed since is updated in place, every other entry
# left as it was


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
def mini_warehouse(mini, tmp_path):
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


def test_a_new_measure_is_added_and_a_changed_one_updated_in_place(mini_warehouse, top_hit):
    """A measure new to the warehouse gets its catalog entry; redefined, its entry is rewritten whole, nothing else
    moves."""
    wh, run_id = mini_warehouse
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


def test_an_unchanged_entry_is_left_as_stored(mini_warehouse, top_hit):
    """Storing the defaults again, with a new user measure beside them, adds the one entry and rewrites none:
    the stored entries of the default measures are changed by hand first, and stay changed only if the registry
    still says the same (here it does not), so a write that skips changed entries or touches unchanged ones
    shows."""
    wh, run_id = mini_warehouse
    ndcg = parse_measure("nDCG@10")
    wh.con.execute("UPDATE measure_catalog SET definition = 'stale' WHERE measure = 'nDCG@10'")
    before = catalog(wh)
    store(wh, run_id, [*DEFAULT_MEASURES, top_hit("wilson", "first")])
    after = catalog(wh)
    assert after["nDCG@10"] == (*before["nDCG@10"][:-1], ndcg.family.definition)  # the stale entry is rewritten
    assert {k: v for k, v in after.items() if k not in ("nDCG@10", "TopHit@3")} == {
        k: v for k, v in before.items() if k != "nDCG@10"}
    assert after["TopHit@3"][-1] == "first"
