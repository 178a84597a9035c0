"""A user's measure SQL ([measures] dir of any assay.toml up the tree) runs under `assay sql`'s sandbox: exactly one
SELECT, in a DuckDB of its own with external access and extensions off and its settings locked, over a copy of
the relations it names. It writes no file and no table, reads no file, and a failure is one line naming its file;
its values are those the same SQL gives on the warehouse (a copy of a built-in measure scores as the built-in)."""

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core.errors import ConfigError
from assay.inputs.project import load_config
from assay.measures.compute import per_query
from assay.measures.registry import load_user_measures, parse_measure
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse

ROOT = Path(__file__).resolve().parents[2]
HEADER = """\
-- measure: Pwn
-- interval: wilson
-- cutoff: required
-- levels: chunk, doc
-- definition: Success@k, with something else first
"""
SUCCESS = """SELECT q.query_id, l.level,
       CASE WHEN EXISTS (SELECT 1 FROM judged_ranking j WHERE j.run_id = q.run_id AND j.query_id = q.query_id
                         AND j.level = l.level AND j.stage = 'final' AND j.rank <= $k AND j.gain > 0)
            THEN 1.0 ELSE 0.0 END AS value
FROM eval_questions q CROSS JOIN levels l
WHERE q.run_id = $run_id AND q.answerable
"""


@pytest.fixture(autouse=True)
def builtin_only():
    load_user_measures({})
    yield
    load_user_measures({})


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    from conftest import MINI

    path = tmp_path_factory.mktemp("sandbox") / "w.duckdb"
    with Warehouse.open(path) as wh:
        rec = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=120))
    return path, rec.run_id


def project(tmp_path, body: str, name: str = "pwn.sql", header: str = HEADER) -> Path:
    """A project whose assay.toml names a measure directory; the commands run in a directory below it, where
    assay finds that assay.toml by walking up the tree."""
    (tmp_path / "my_measures").mkdir(exist_ok=True)
    (tmp_path / "my_measures" / name).write_text(header + body, encoding="utf-8")
    (tmp_path / "assay.toml").write_text('[measures]\ndir = "my_measures"\n', encoding="utf-8")
    below = tmp_path / "work" / "deeper"
    below.mkdir(parents=True, exist_ok=True)
    return below


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def tables(path) -> list:
    with Warehouse.open(path, read_only=True) as wh:
        return wh.con.execute("SELECT table_schema, table_name, table_type FROM information_schema.tables "
                              "ORDER BY ALL").fetchall()


def one_error_line(out, says: str) -> None:
    assert out.exit_code == 1, out.output
    assert "Traceback" not in out.output and out.stderr.count("\n") == 1, out.stderr
    assert re.fullmatch(r"error: \S*my_measures/pwn\.sql: measure Pwn@1: " + says + r"; fix its SQL\n", out.stderr), \
        out.stderr


def test_a_measure_that_writes_a_file_during_report_is_refused_and_writes_nothing(tmp_path, stored, monkeypatch):
    path, run_id = stored
    target = tmp_path / "written.csv"
    monkeypatch.chdir(project(tmp_path, f"COPY (SELECT 42 AS x) TO '{target}';\n" + SUCCESS))
    out = invoke("report", run_id, "-m", "Pwn@1", "--warehouse", path)
    one_error_line(out, r"refused: the SQL holds 2 statements; a measure is exactly one SELECT \(WITH \.\.\. SELECT\)")
    assert not target.exists()


def test_a_measure_that_creates_a_table_during_measures_compute_changes_no_table(tmp_path, stored, monkeypatch):
    path, run_id = stored
    before = tables(path)
    monkeypatch.chdir(project(tmp_path, "CREATE TABLE pwned AS SELECT 1 AS x;\n" + SUCCESS))
    out = invoke("measures", "compute", "Pwn@1", "--run", run_id, "--warehouse", path)
    one_error_line(out, r"refused: the SQL holds 2 statements; a measure is exactly one SELECT \(WITH \.\.\. SELECT\)")
    assert tables(path) == before


@pytest.mark.parametrize("reads", ["(SELECT COUNT(*) FROM read_text('{secret}'))",
                                   "(SELECT COUNT(*) FROM '{secret}')",
                                   "(SELECT COUNT(*) FROM read_csv('{secret}'))"])
def test_a_measure_reads_no_file_but_the_warehouse(tmp_path, stored, monkeypatch, reads):
    path, run_id = stored
    secret = tmp_path / "secret.csv"
    secret.write_text("a,b\n1,2\n")
    body = SUCCESS.replace("THEN 1.0 ELSE 0.0 END AS value", "THEN 1.0 ELSE 0.0 END * 0 + " + reads.format(
        secret=secret) + " * 0 AS value")
    monkeypatch.chdir(project(tmp_path, body))
    out = invoke("report", run_id, "-m", "Pwn@1", "--warehouse", path)
    assert out.exit_code == 1 and "Traceback" not in out.output and out.stderr.count("\n") == 1, out.output
    assert "my_measures/pwn.sql: measure Pwn@1: " in out.stderr
    assert re.search(r"refused: .*a measure reads only the warehouse|SQL failed: Catalog Error", out.stderr), out.stderr


def test_a_runtime_error_is_one_line_naming_the_file(tmp_path, stored, monkeypatch):
    path, run_id = stored
    body = SUCCESS.replace("THEN 1.0 ELSE 0.0 END AS value", "THEN 1.0 ELSE CAST('x' || q.query_id AS DOUBLE) END "
                                                            "AS value")
    monkeypatch.chdir(project(tmp_path, body))
    out = invoke("report", run_id, "-m", "Pwn@1", "--warehouse", path)
    one_error_line(out, r"SQL failed: Conversion Error: .*")


def test_a_copy_of_a_built_in_measure_scores_exactly_as_the_built_in(tmp_path, stored):
    path, run_id = stored
    builtin = (ROOT / "sql" / "measures" / "ndcg.sql").read_text(encoding="utf-8")
    copy = re.sub(r"^-- measure: nDCG$", "-- measure: MyNDCG", builtin, flags=re.M).replace(
        "-- budget: measures/ndcg_budget\n", "")
    project(tmp_path, "", name="my_ndcg.sql", header=copy)
    load_user_measures(load_config(tmp_path / "assay.toml"))
    for k in (1, 3, 10):
        with Warehouse.open(path, read_only=True) as wh:
            mine = per_query(wh, run_id, parse_measure(f"MyNDCG@{k}"))
            theirs = per_query(wh, run_id, parse_measure(f"nDCG@{k}"))
        assert mine == theirs and mine  # exactly: the same floats, question by question
        assert per_query(Warehouse.brief(path), run_id, parse_measure(f"MyNDCG@{k}")) == theirs


def test_relation_names_are_read_in_any_case(tmp_path, stored):
    path, run_id = stored
    project(tmp_path, SUCCESS.replace("judged_ranking", "JUDGED_Ranking").replace("eval_questions", "EVAL_QUESTIONS"))
    load_user_measures(load_config(tmp_path / "assay.toml"))
    with Warehouse.open(path, read_only=True) as wh:
        assert per_query(wh, run_id, parse_measure("Pwn@3")) == per_query(wh, run_id, parse_measure("Success@3"))


def test_the_python_api_gets_the_same_one_line_error(tmp_path, stored):
    path, run_id = stored
    project(tmp_path, "ATTACH '/tmp/other.duckdb' AS other;\n" + SUCCESS)
    load_user_measures(load_config(tmp_path / "assay.toml"))
    with Warehouse.open(path, read_only=True) as wh, pytest.raises(ConfigError) as info:
        per_query(wh, run_id, parse_measure("Pwn@1"))
    assert "\n" not in str(info.value) and "refused: the SQL holds 2 statements" in str(info.value)
