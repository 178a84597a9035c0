"""measure_values: per-question values written with every run (and every rescore), equal to the measure SQL's,
and `assay measures compute` for runs stored before them."""

import json
import shutil

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.compute import per_query
from assay.measures.registry import DEFAULT_MEASURES, parse_measure
from assay.measures.values import store_values, stored_values
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
from conftest import DEMO


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
