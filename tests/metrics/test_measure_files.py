"""Measures are files: the registry reads each file's header; a user's measure directory adds more, and
they score runs recorded before they existed; a file is bound exactly the parameters it uses."""

import json
import re

import pytest
from click.testing import CliRunner

from assay.core import sqlfiles
from assay.cli import cli
from assay.core.errors import ConfigError
from assay.measures.compute import per_query
from assay.measures.registry import (FAMILIES, NO_CUTOFF, builtin_families, load_user_measures, parse_measure,
                                    read_header, sql_parameters)
from assay.inputs.project import load_config
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse

# Written unlike sql/measures/success.sql (EXISTS, the stage fixed), so agreeing with Success@k per
# question is a check; its comments name $stage and $budget, which it does not use and must not be bound.
HITS = """\
-- measure: Hits
-- interval: wilson
-- cutoff: required
-- levels: chunk, doc
-- definition: 1 if a credited item is among the final stage's top k, else 0
--   (Success@k, written again)
--
-- Not $stage: always the final stage; no $budget either. '$stage' in a string is no parameter.
SELECT q.query_id, l.level,
       CASE WHEN EXISTS (SELECT 1 FROM judged_ranking j
                         WHERE j.run_id = q.run_id AND j.query_id = q.query_id AND j.level = l.level
                           AND j.stage = 'final' AND j.rank <= $k AND j.gain > 0) THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q CROSS JOIN levels l
WHERE q.run_id = $run_id AND q.answerable /* $k twice is bound once */
"""
# No $k at all (cutoff none): DuckDB refuses an excess parameter, so binding k would fail.
EMPTY = """\
-- measure: EmptyList
-- interval: wilson
-- cutoff: none
-- levels: query
-- answerable_only: no
-- definition: share of no_answer questions with no final results (Abstain, written again)
--
-- a comment naming $k and $stage
SELECT q.query_id, q.answerable, CASE WHEN q.n_results = 0 THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q WHERE q.run_id = $run_id
"""
COUNT = """\
-- measure: HitCount
-- interval: bootstrap
-- cutoff: required
-- levels: doc
-- definition: credited items in the top k (a count: not a measure assay can score)
SELECT j.query_id, j.level, COUNT(*) * 1.0 AS value FROM judged_ranking j
WHERE j.run_id = $run_id AND j.stage = $stage AND j.rank <= $k AND j.gain > 0 AND j.level = 'doc'
GROUP BY j.query_id, j.level
"""


@pytest.fixture(autouse=True)
def builtin_only():
    load_user_measures({})
    yield
    load_user_measures({})


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    """Two runs of one pipeline recorded before any user measure existed (the older one's id is returned)."""
    from conftest import MINI

    path = tmp_path_factory.mktemp("measure-files") / "w.duckdb"
    with Warehouse.open(path) as wh:
        rec = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=120))
        run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=200))
    return path, rec.run_id


def project(tmp_path, files: dict[str, str], table: str = '[measures]\ndir = "my_measures"\n'):
    (tmp_path / "my_measures").mkdir()
    for name, text in files.items():
        (tmp_path / "my_measures" / name).write_text(text, encoding="utf-8")
    (tmp_path / "assay.toml").write_text(table, encoding="utf-8")
    return tmp_path / "assay.toml"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_the_shipped_headers_define_the_registry_in_its_listing_order():
    assert list(FAMILIES) == ["Success", "R", "P", "RR", "nDCG", "AP", "SpanRecall", "SpanPrecision", "SpanIoU",
                              "Abstain", "FalseAbstain", "answer_rate", "refusal_rate", "citation_precision",
                              "faithfulness", "judged_faithfulness"]
    ndcg = FAMILIES["nDCG"]
    assert (ndcg.sql, ndcg.interval, ndcg.cutoff, ndcg.levels, ndcg.budget_sql) == (
        "measures/ndcg", "bootstrap", "optional", ("chunk", "doc"), "measures/ndcg_budget")
    assert ndcg.definition.endswith("the ranks within a budget of N tokens, the last one credited only for the gold "
                                    "its cut text overlaps, over the ideal DCG of every gold unit")
    assert (FAMILIES["Abstain"].sql, FAMILIES["FalseAbstain"].sql) == ("measures/abstention",) * 2
    assert (FAMILIES["Abstain"].answerable_only, FAMILIES["FalseAbstain"].answerable_only) == (False, True)
    assert (FAMILIES["faithfulness"].unit, FAMILIES["SpanIoU"].reads_tokens) == ("claim", True)
    working = {"measures/span_context", "measures/ndcg_budget", "measures/success_budget"}
    assert {name for name in sqlfiles.sql_names("measures/")} - {f.sql for f in FAMILIES.values()} == working


def test_only_the_parameters_a_file_uses_are_bound(tmp_path, old_run):
    assert sql_parameters("-- $k\nSELECT $run_id, '$stage' /* $budget */, $$ $k $$") == {"run_id"}
    load_user_measures(load_config(project(tmp_path, {"hits.sql": HITS, "empty.sql": EMPTY})))
    assert parse_measure("Hits@5").params("r", "rerank") == {"run_id": "r", "k": 5}
    assert parse_measure("EmptyList").params("r", "final") == {"run_id": "r"}
    assert parse_measure("SpanIoU@3").params("r", "s") == {"run_id": "r", "stage": "s", "k": 3, "budget": NO_CUTOFF}
    path, run_id = old_run
    with Warehouse.open(path, read_only=True) as wh:
        assert per_query(wh, run_id, parse_measure("EmptyList")) == per_query(wh, run_id, parse_measure("Abstain"))
        for k in (1, 5):  # at 1 the question page-size misses
            hits, success = (per_query(wh, run_id, parse_measure(f"{name}@{k}")) for name in ("Hits", "Success"))
            assert hits == success


def test_a_user_measure_scores_runs_in_memory_and_trec_files(tmp_path):
    import assay

    load_user_measures(load_config(project(tmp_path, {"hits.sql": HITS})))  # Hits binds no $stage
    try:
        qrels, run = {"a": {"d1": 1}, "b": {"d2": 1}}, {"a": {"d1": 2.0, "d3": 1.0}, "b": {"d3": 2.0, "d2": 1.0}}
        got = {(r["measure"], r["query_id"]): r["value"]
               for r in assay.evaluate_run(qrels, run, ["Hits@1", "Success@1"]).to_pylist()}
        assert got[("Hits@1", "a")] == got[("Success@1", "a")] == 1.0
        assert got[("Hits@1", "b")] == got[("Success@1", "b")] == 0.0
    finally:
        load_user_measures({})


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_measure_file_added_later_scores_runs_recorded_before_it(tmp_path, old_run, monkeypatch):
    path, run_id = old_run
    project(tmp_path, {"hits.sql": HITS})
    monkeypatch.chdir(tmp_path)
    listed = invoke("measures")
    assert listed.exit_code == 0
    assert listed.stdout.splitlines()[-1] == ("Hits@k                 wilson     1 if a credited item is among the "
                                              "final stage's top k, else 0 (Success@k, written again)")
    out = invoke("report", run_id, "-m", "Hits@1", "-m", "Success@1", "--format", "json", "--warehouse", path)
    assert out.exit_code == 0, out.output
    rows = {(r["metric"], r["level"], r["slice"]): r["value"] for r in json.loads(out.stdout)["metrics"]}
    hits = {(lvl, s): v for (m, lvl, s), v in rows.items() if m == "Hits@1"}
    assert hits and hits == {(lvl, s): v for (m, lvl, s), v in rows.items() if m == "Success@1"}
    assert hits[("doc", "all")] == 0.8
    passed = invoke("gate", run_id, "--rule", "Hits@5>=1", "--warehouse", path)
    assert passed.exit_code == 0 and "PASS (fragile)  Hits@5>=1 " in passed.stdout, passed.output
    failed = invoke("gate", run_id, "--rule", "Hits@1:doc>=1", "--warehouse", path)
    assert failed.exit_code == 6 and "FAIL" in failed.stdout and "Hits@1:doc>=1" in failed.stdout
    over_time = invoke("history", "--pipeline", "bm25", "--metric", "Hits@1", "--warehouse", path)
    assert over_time.exit_code == 0, over_time.output
    assert over_time.stdout.startswith("history of Hits@1 (chunk, slice all) for pipeline bm25\n")
    assert re.search(rf"^{run_id}  .*  {hits[('chunk', 'all')]:.3f}  \[", over_time.stdout, re.M), over_time.stdout
    regress = invoke("regress", "latest", "--baseline", run_id, "--max-drop", "Hits@1=0.05", "--warehouse", path)
    assert regress.exit_code == 0, regress.output
    assert re.search(r"^ok +Hits@1:chunk +all +0\.800 ", regress.stdout, re.M), regress.output
    exported = invoke("export", run_id, "--format", "csv", "-m", "Hits@1", "--out", tmp_path / "out",
                      "--warehouse", path)
    assert exported.exit_code == 0, exported.output
    import csv

    with open(tmp_path / "out" / "metrics.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["slice"] == "all" and r["level"] == "doc"]
    exported_values = {r["metric"]: float(r["value"]) for r in rows}
    assert exported_values["Hits@1"] == hits[("doc", "all")] and "nDCG@10" in exported_values
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"  # outside the project: no assay.toml up the tree
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the built-in measures only
    gone = invoke("report", run_id, "-m", "Hits@5", "--warehouse", path)
    assert gone.exit_code == 1 and "unknown measure 'Hits@5'" in gone.stderr


def test_a_value_outside_0_1_names_the_file(tmp_path, old_run):
    load_user_measures(load_config(project(tmp_path, {"count.sql": COUNT})))
    path, run_id = old_run
    with Warehouse.open(path, read_only=True) as wh, pytest.raises(ConfigError) as exc:
        per_query(wh, run_id, parse_measure("HitCount@10"))
    assert re.search(r"my_measures/count\.sql: HitCount@10 gave 2\.0+ for question .*; a measure's values lie "
                     r"in \[0, 1\]", str(exc.value))


def test_a_file_without_a_header_is_no_measure_and_can_be_included(tmp_path):
    common = "-- shared working, no header\nSELECT 1 AS one\n"
    uses = HITS.replace("-- Not $stage", "-- @include user_measures/common\n-- Not $stage")
    load_user_measures(load_config(project(tmp_path, {"common.sql": common, "hits.sql": uses})))
    assert [f.name for f in FAMILIES.values()][-1] == "Hits"
    assert "SELECT 1 AS one" in sqlfiles.load_sql("user_measures/hits")


@pytest.mark.parametrize("text, says", [
    (HITS.replace("-- interval: wilson\n", ""), r"hits\.sql:1: measure Hits has no 'interval' field"),
    (HITS.replace("-- definition: 1 if", "-- definiton: 1 if"), r"hits\.sql:5: unknown header field 'definiton'"),
    (HITS.replace("cutoff: required", "cutoff: sometimes"), r"hits\.sql:3: cutoff: 'sometimes'; one of required"),
    (HITS.replace("levels: chunk, doc", "levels: chunk, query"), r"hits\.sql:4: levels: 'chunk, query'"),
    (HITS.replace("measure: Hits", "measure: Hits@5"), r"hits\.sql:1: measure: 'Hits@5' is not a measure name"),
    (HITS.replace("--   (Success", "-- (Success"), r"hits\.sql:6: expected '-- field: value', a continuation"),
    ("-- interval: wilson\n" + HITS, r"hits\.sql:1: a measure header starts with '-- measure: NAME'"),
    (HITS.replace("-- levels: chunk, doc\n", "-- levels: chunk, doc\n-- budget: measures/nope\n"),
     r"hits\.sql:1: budget: no SQL file named 'measures/nope'"),
])
def test_a_malformed_header_is_a_config_error_naming_file_and_line(tmp_path, text, says):
    config = load_config(project(tmp_path, {"hits.sql": text}))
    with pytest.raises(ConfigError, match=says):
        load_user_measures(config)
    assert "Hits" not in FAMILIES and sqlfiles.sql_names("user_measures/") == []  # nothing half-registered


def test_a_measure_name_defined_twice_names_both_files(tmp_path):
    again = HITS.replace("measure: Hits", "measure: nDCG")
    config = load_config(project(tmp_path, {"mine.sql": again}))
    with pytest.raises(ConfigError) as exc:
        load_user_measures(config)
    message = str(exc.value)
    assert message.startswith("measure 'nDCG' is defined twice: ") and "sql/measures/ndcg.sql:1" in message
    assert "my_measures/mine.sql:1" in message


def test_the_cli_reports_a_bad_measure_dir_on_one_line(tmp_path, monkeypatch):
    project(tmp_path, {"hits.sql": HITS.replace("-- cutoff: required\n", "")})
    monkeypatch.chdir(tmp_path)
    out = invoke("measures")
    assert out.exit_code == 1 and out.stdout == ""
    assert re.fullmatch(r"error: \S*my_measures/hits\.sql:1: measure Hits has no 'cutoff' field\n", out.stderr)


@pytest.mark.parametrize("table, says", [
    ('[measures]\ndir = "elsewhere"\n', r"assay\.toml: \[measures\] dir 'elsewhere' is not a directory"),
    ('[measures]\nfolder = "my_measures"\n', r"\[measures\] has unknown setting 'folder'; allowed: dir"),
    ("[measures]\ndir = 3\n", r"\[measures\] dir must be a directory path \(a string\), not 3"),
])
def test_the_measures_table_of_assay_toml(tmp_path, table, says):
    with pytest.raises(ConfigError, match=says):
        load_user_measures(load_config(project(tmp_path, {}, table)))


def test_reading_the_shipped_headers_is_cached():
    assert builtin_families() is builtin_families()
    assert read_header("-- just a comment: no header\nSELECT 1", "x.sql") == []
