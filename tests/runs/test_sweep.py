"""`assay sweep` on the demo set: the grid, one transaction, the fair table, best/indistinguishable/Pareto."""

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.compute import per_query
from assay.measures.registry import parse_measure
from assay.store.warehouse import Warehouse
from conftest import DEMO

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"


def invoke(*args, **kw):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, **kw)


@pytest.fixture(scope="module")
def demo_sweep(tmp_path_factory):
    """The issue's sweep: recursive 200/400/800/1600 and the document chunker, BM25."""
    path = tmp_path_factory.mktemp("sweep") / "w.duckdb"
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--chunker", "recursive",
                 "--chunker", "document", "--size", 200, "--size", 400, "--size", 800, "--size", 1600,
                 "--format", "json", "--warehouse", path)
    assert out.exit_code == 0, out.output
    return path, json.loads(out.stdout)


def test_the_issue_grid_is_one_run_per_point_tagged_with_the_sweep(demo_sweep):
    path, result = demo_sweep
    points = result["points"]
    assert [p["label"] for p in points] == ["recursive 200/0", "recursive 400/0", "recursive 800/0",
                                            "recursive 1600/0", "document"]
    with Warehouse.open(path, read_only=True) as wh:
        tagged = wh.con.execute("SELECT run_id FROM runs WHERE sweep_id = ? ORDER BY run_id",
                                [result["sweep_id"]]).fetchall()
        assert sorted(r for (r,) in tagged) == sorted(p["run_id"] for p in points)
        n_chunks = [wh.con.execute("SELECT s.n_chunks FROM runs r JOIN chunk_sets s USING (chunk_set) "
                                   "WHERE r.run_id = ?", [p["run_id"]]).fetchall()[0][0] for p in points]
    assert n_chunks == [p["n_chunks"] for p in points] and n_chunks == sorted(n_chunks, reverse=True)
    assert result["columns"] == ["SpanRecall@1000tok", "Success@1000tok", "SpanPrecision@5", "SpanIoU@5",
                                 "Success@5:doc"]


def test_chunk_level_hit_rates_rise_with_size_but_budgeted_recall_does_not_favour_documents(demo_sweep):
    path, result = demo_sweep
    by_label = {p["label"]: p for p in result["points"]}
    with Warehouse.open(path, read_only=True) as wh:
        hit = {label: _mean(wh, p["run_id"], "R@10", "chunk") for label, p in by_label.items()}
    # the trap the issue describes: chunk-level recall credits any overlap, so the whole document looks best
    assert hit["document"] > hit["recursive 200/0"]
    recall = {label: p["measures"]["SpanRecall@1000tok"]["value"] for label, p in by_label.items()}
    assert max(recall, key=recall.get) != "document" and recall["document"] == min(recall.values())
    assert result["points"][result["best"] - 1]["label"] != "document"


def _mean(wh, run_id, name, level):
    values = [v for (q, lvl), v in per_query(wh, run_id, parse_measure(name)).items() if lvl == level]
    return sum(values) / len(values)


def holm_rejects(p_values: list[float], alpha: float) -> list[bool]:
    """Holm's step-down procedure as Holm (1979) states it: test the smallest p at alpha / m, the next at
    alpha / (m - 1), ..., and stop at the first that is not below its level."""
    rejected = [False] * len(p_values)
    for step, i in enumerate(sorted(range(len(p_values)), key=p_values.__getitem__)):
        if not p_values[i] < alpha / (len(p_values) - step):
            break
        rejected[i] = True
    return rejected


def pareto_front(points: list[tuple[float, float]]) -> set[int]:
    """Indices of the front of (recall, tokens), by a sweep in order of tokens: a point is on it when its recall
    is the highest among the points with its tokens and above every point with fewer tokens."""
    front, best_so_far = set(), float("-inf")
    for tokens in sorted({t for _, t in points}):
        group = [i for i, (_, t) in enumerate(points) if t == tokens]
        top = max(points[i][0] for i in group)
        if top > best_so_far:
            front |= {i for i in group if points[i][0] == top}
        best_so_far = max(best_so_far, top)
    return front


def test_best_indistinguishable_and_pareto_recomputed_independently(demo_sweep):
    path, result = demo_sweep
    points = result["points"]
    with Warehouse.open(path, read_only=True) as wh:
        values = {p["point"]: {q: v for (q, lvl), v in per_query(wh, p["run_id"], parse_measure(
            "SpanRecall@1000tok")).items()} for p in points}
    means = {pt: sum(v.values()) / len(v) for pt, v in values.items()}
    best = max(means, key=means.get)
    assert result["best"] == best and points[best - 1]["verdict"] == "best"
    others = [p for p in points if p["point"] != best]
    for p in others:  # the change is the point's mean minus the best's, and its interval inverts its own p
        assert p["change"] == pytest.approx(means[p["point"]] - means[best], abs=1e-12)
        assert (p["change_ci_high"] < 0 or p["change_ci_low"] > 0) == (p["p_value"] < 0.05)
    rejected = holm_rejects([p["p_value"] for p in others], 0.05)
    assert [p["verdict"] for p in others] == ["worse" if r else "indistinguishable" for r in rejected]
    assert [p["p_holm"] < 0.05 for p in others] == rejected
    assert any(p["verdict"] == "worse" for p in others)  # the document chunker is clearly worse on this set
    front = pareto_front([(p["SpanRecall@5"], p["tokens@5"]) for p in points])
    assert {p["point"] for p in points if p["pareto"]} == {points[i]["point"] for i in front} and front
    tokens = [p["tokens@5"] for p in points]
    assert tokens == sorted(tokens)  # bigger units fill more of the prompt


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_report_sweep_shows_it_again_in_every_format(demo_sweep):
    path, result = demo_sweep
    table = invoke("report", "--sweep", result["sweep_id"], "--warehouse", path)
    assert table.exit_code == 0, table.output
    said, blank, *lines = table.stdout.splitlines()
    # the verdict in words first: the best point and the points the table marks '≈ best' (its wording:
    # tests/verdicts/test_verdict_text.py)
    same = [p["point"] for p in result["points"] if p["verdict"] == "indistinguishable"]
    assert said.startswith(f"Point {result['best']} (") and blank == ""
    assert f"{len(same)} of the 4 other points cannot be told from it" in said
    assert said.split("): point", 1)[1].startswith(("s " if len(same) > 1 else " ") + ", ".join(map(str, same)))
    assert lines[0] == (f"sweep {result['sweep_id']}: 5 points, 56 answerable questions, context budget 1000 "
                        "tokens, k 5")
    assert lines[2].split()[:5] == ["#", "point", "pipeline", "chunks", "tok/result"]
    best_row = next(line for line in lines if line.startswith(f"{result['best']} "))
    assert "BEST" in best_row
    # each point's verdict against the best, and its Holm p on the side of 0.05 the verdict says
    verdicts = [re.search(r"BEST|(≈ best|worse) \(p[=<]\d\.\d{3}, Holm([=<])(\d\.\d{3})\)", line)
                for line in lines[4:9]]
    assert [v.group(1) or v.group(0) for v in verdicts] == ["≈ best", "BEST", "≈ best", "worse", "worse"]
    assert all((float(v.group(3)) >= 0.05) == (v.group(1) == "≈ best") for v in verdicts if v.group(1))
    again = json.loads(invoke("report", "--sweep", "latest", "--format", "json", "--warehouse", path).stdout)
    assert again["points"] == result["points"]
    assert again["verdict"]["sentence"] == said and again["verdict"]["indistinguishable"] == same
    # each point's MDC against the best (paired, two-sided at the sweep's alpha): in the sentence as a range
    mdcs = [p["mdc"] for p in result["points"] if p["point"] != result["best"]]
    assert (again["verdict"]["mdc_low"], again["verdict"]["mdc_high"]) == (min(mdcs), max(mdcs))
    assert f"smaller than {min(mdcs):.3f} to {max(mdcs):.3f} cannot be told from noise" in said
    rows = list(csv.DictReader(io.StringIO(invoke("report", "--sweep", result["sweep_id"][:14], "--format", "csv",
                                                  "--warehouse", path).stdout)))
    assert len(rows) == 5 * 5 and {r["measure"] for r in rows} == set(result["columns"])
    assert {r["test"] for r in rows} == {"", "score"}  # the best point is compared with nothing
    assert {r["verdict"] for r in rows} == {p["verdict"] for p in result["points"]}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_table_reads_the_same_values_with_sql_as_through_ibis(demo_sweep, monkeypatch):
    """On a DuckDB warehouse the points' values are read with SQL (assay.analytics.direct), so a sweep needs no
    Ibis; any other source goes through the Ibis expression (assay.analytics.sweeps). Both give one table."""
    from assay.runs import sweep
    from assay.analytics import direct

    path, result = demo_sweep
    with Warehouse.open(path, read_only=True) as wh:
        fast = sweep.table(wh, result["sweep_id"])
        monkeypatch.setattr(direct, "holds_duckdb", lambda source: False)
        slow = sweep.table(wh, result["sweep_id"])
    assert fast == slow
    assert fast["points"] == result["points"]


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_sweep_table_from_assay_toml_and_skipped_combinations(tmp_path, monkeypatch):
    (tmp_path / "assay.toml").write_text('[sweep]\nchunkers = ["fixed"]\nsizes = [300, 600]\noverlaps = [0, 300]\n'
                                         'budget = 500\nk = 3\n')
    monkeypatch.chdir(tmp_path)
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--format", "json", "--warehouse",
                 tmp_path / "w.duckdb")
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert [p["label"] for p in result["points"]] == ["fixed 300/0", "fixed 600/0", "fixed 600/300"]
    assert result["spec"]["skipped"] == ["skipped fixed size 300 overlap 300: the overlap must be smaller than "
                                         "the size"]
    assert result["columns"][0] == "SpanRecall@500tok" and result["select"] == "SpanRecall@500tok"
    assert "skipped fixed size 300 overlap 300" in out.stderr


@pytest.mark.parametrize("toml, args, message", [
    ('[sweep]\nsize = [1]\n', [], "[sweep] has unknown setting(s) size"),
    ('[sweep]\nbudget = 0\n', [], "budget must be a positive number of tokens"),
    ("", ["--chunker", "semantic"], "unknown chunker 'semantic'"),
    ("", ["--select", "Abstain"], "--select Abstain has no chunk level"),
    ("", ["--size", "100", "--overlap", "100"], "the grid has no point that can run"),
])
def test_bad_sweeps_are_refused_before_any_run(tmp_path, monkeypatch, toml, args, message):
    """Bad settings from assay.toml or the grid are errors (exit 1) before any run or warehouse."""
    (tmp_path / "assay.toml").write_text(toml)
    monkeypatch.chdir(tmp_path)
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, *args, "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 1 and message in out.stderr, out.output
    assert not (tmp_path / "w.duckdb").exists()


def test_a_bad_number_on_the_command_line_is_a_usage_error(tmp_path):
    out = CliRunner().invoke(cli, ["sweep", "--corpus", str(CORPUS), "--judgments", str(JUDGMENTS), "--budget", "0",
                                   "--warehouse", str(tmp_path / "w.duckdb")])
    assert out.exit_code == 2 and "--budget" in out.output
    assert not (tmp_path / "w.duckdb").exists()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_failing_point_writes_nothing(tmp_path):
    path = tmp_path / "w.duckdb"
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--size", 400, "--pipeline", "bm25",
                 "--pipeline", "dense", "--embedder", "no-such/model", "--warehouse", path)
    assert out.exit_code == 4, out.output  # the dense point's model is not available
    assert not path.exists()  # the bm25 point computed, but nothing is written before every point has

    invoke("ingest", CORPUS, "--warehouse", path)  # an existing warehouse keeps its row counts too
    with Warehouse.open(path, read_only=True) as wh:
        before = {t: wh.con.execute(f"SELECT COUNT(*) FROM {t}").fetchall() for t in ("runs", "sweeps", "chunks")}
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--size", 400, "--pipeline", "bm25",
                 "--pipeline", "dense", "--embedder", "no-such/model", "--warehouse", path)
    assert out.exit_code == 4
    with Warehouse.open(path, read_only=True) as wh:
        assert {t: wh.con.execute(f"SELECT COUNT(*) FROM {t}").fetchall() for t in before} == before


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_embeddings_are_reused_across_points_with_the_same_chunk_texts(tmp_path):
    path = tmp_path / "w.duckdb"
    out = invoke("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--size", 800, "--pipeline", "dense",
                 "--pipeline", "hybrid", "--format", "json", "--warehouse", path)
    assert out.exit_code == 0, out.output
    points = json.loads(out.stdout)["points"]
    with Warehouse.open(path, read_only=True) as wh:
        stats = [json.loads(wh.con.execute("SELECT stats FROM runs WHERE run_id = ?", [p["run_id"]]).fetchall()[0][0])
                 for p in points]
    first = stats[0]["embeddings"]
    assert first["computed"] > 100  # a fresh warehouse: the first point embeds (identical texts once)
    assert stats[1]["embeddings"] == {"computed": 0, "reused": first["computed"] + first["reused"]}
