"""tools/mutate_sql.py: the mutator is deterministic, makes the documented mutants and never the original,
and the runner tells a killed mutant from a survivor on a tiny project of one SQL file and one test."""

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("mutate_sql", ROOT / "tools" / "mutate_sql.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutate_sql"] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    yield module
    del sys.modules["mutate_sql"]


SQL = """-- a comment: a < b, MIN(x), 'it' = 1 are never touched
SELECT DISTINCT a.x, MIN(a.y) AS lo, SUM(a.z) AS s, COUNT(a.w) AS n, LEAST(a.p, 2),
       COALESCE(a.v, 0.0) AS v, a.x + a.y * 3 AS e,
       CASE WHEN a.x <= 1 AND a.y IS NULL THEN 'one' ELSE 'other' END AS label,
       SUM(a.z) OVER (PARTITION BY a.x ORDER BY a.y ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS run
FROM t a
LEFT JOIN u ON u.x = a.x
WHERE a.x BETWEEN 1 AND 5 OR NOT a.flag
ORDER BY a.x DESC, a.y
"""


def _changes(tool, sql=SQL):
    return [(m.operator, m.original, m.replacement) for m in tool.mutants("t.sql", sql)]


def test_each_documented_operator_makes_its_mutants(tool):
    got = set(_changes(tool))
    want = {
        ("DIST", "DISTINCT a", "a"),
        ("AGG", "MIN", "MAX"), ("AGG", "SUM", "COUNT"), ("AGG", "COUNT(a.w)", "COUNT(*)"), ("AGG", "LEAST", "GREATEST"),
        ("NULL", "COALESCE(a.v, 0.0)", "a.v"), ("NUM", "0.0", "1.0"),
        ("AOR", "+", "-"), ("AOR", "*", "/"), ("NUM", "3", "4"), ("NUM", "3", "2"),
        ("CASE", "a.x <= 1 AND a.y IS NULL", "NOT (a.x <= 1 AND a.y IS NULL)"), ("CASE", "'other'", "'one'"),
        ("ROR", "<=", "<"), ("ROR", "<=", ">"), ("NUM", "1", "0"), ("NUM", "1", "2"),
        ("LOG", "AND", "OR"), ("LOG", "IS NULL", "IS NOT NULL"), ("LOG", "OR", "AND"), ("LOG", "NOT a", "a"),
        ("FRAME", "UNBOUNDED PRECEDING", "1 PRECEDING"), ("FRAME", "CURRENT ROW", "1 PRECEDING"),
        ("ORDER", "y", "y DESC"), ("ORDER", "DESC", "ASC"),
        ("JOIN", "LEFT JOIN", "JOIN"), ("ROR", "=", "<>"),
    }
    assert want <= got, sorted(want - got)
    # BETWEEN's AND is syntax, not logic; nothing inside the comment or a string literal is touched
    assert not [c for c in got if c[0] == "LOG" and c[1] == "AND" and c[2] == "OR"][1:]
    assert {o for _, o, _ in got}.isdisjoint({"'it'", "a < b"})
    assert ("AGG", "COUNT(*)", "COUNT(*)") not in got


def test_frames_without_between_and_ending_before_the_row(tool):
    sql = "SELECT SUM(x) OVER (ORDER BY y ROWS UNBOUNDED PRECEDING), MAX(x) OVER (ORDER BY y " \
          "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) FROM t"
    got = set(_changes(tool, sql))
    assert ("FRAME", "ROWS UNBOUNDED PRECEDING", "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING") in got
    assert ("FRAME", "1 PRECEDING", "CURRENT ROW") in got


def test_the_mutator_is_deterministic_and_never_yields_the_original(tool):
    for target in tool.TARGETS:
        source = (ROOT / target.file).read_text(encoding="utf-8")
        first = tool.mutants(target.file, source, target.views)
        assert first == tool.mutants(target.file, source, target.views)
        texts = [m.apply(source) for m in first]
        assert source not in texts and len(set(texts)) == len(texts), target.file
        assert len({m.id for m in first}) == len(first)
        for m in first:
            assert source[m.start:m.end] != m.new and " ".join(source[m.start:m.end].split()) == m.original


def test_views_limit_a_migration_to_the_named_statements(tool):
    sql = ("CREATE TABLE t (a INTEGER);\nCREATE VIEW v AS SELECT a + 1 AS b FROM t;\n"
           "CREATE VIEW w AS SELECT a - 1 FROM t;\n")
    assert [(m.line, m.original, m.replacement) for m in tool.mutants("m.sql", sql, ("v",))] == [
        (2, "+", "-"), (2, "1", "0"), (2, "1", "2")]
    with pytest.raises(SystemExit, match="no CREATE VIEW for x"):
        tool.mutants("m.sql", sql, ("x",))


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_runner_kills_a_broken_mutant_and_lets_an_equivalent_one_live(tool, tmp_path):
    project = tmp_path / "project"
    (project / "src" / "assay").mkdir(parents=True)
    (project / "sql").mkdir()
    (project / "tests").mkdir()
    (project / "src" / "assay" / "__init__.py").write_text(textwrap.dedent("""
        from pathlib import Path
        def sql(name):
            return (Path(__file__).resolve().parents[2] / "sql" / name).read_text()
    """))
    (project / "sql" / "tiny.sql").write_text("SELECT 1 < 2 AS ok\n")
    (project / "tests" / "test_tiny.py").write_text(textwrap.dedent("""
        import duckdb
        import assay
        def test_one_is_less_than_two():
            assert duckdb.sql(assay.sql("tiny.sql")).fetchall() == [(True,)]
    """))
    source = (project / "sql" / "tiny.sql").read_text()
    target = tool.Target("sql/tiny.sql", ("tests/test_tiny.py",))
    space = tool.Workspace(tmp_path / "work", 0, project=project)
    made = {(m.original, m.replacement): m for m in tool.mutants(target.file, source)}
    assert set(made) == {("1", "0"), ("1", "2"), ("<", "<="), ("<", ">="), ("2", "3"), ("2", "1")}
    broken = space.run(target, made[("<", ">=")].apply(source), timeout=120)
    assert broken[:2] == ("killed", "tests/test_tiny.py::test_one_is_less_than_two")
    assert space.run(target, made[("<", "<=")].apply(source), timeout=120)[0] == "survived"  # 1 <= 2 holds too
    assert (project / "sql" / "tiny.sql").read_text() == source  # the project's own file is never written
    assert (tmp_path / "work" / "w0" / "sql" / "tiny.sql").read_text() == source  # the copy is put back
