"""Every ``--format json`` output is strict JSON: no NaN or Infinity (issue 25), and a small run prints no numpy
warning. The runs score 2 and 4 questions of the mini set: two questions with distinct graded values once gave an
interval a NaN upper bound, which reached `report --format json` as the bare word NaN, and stderr as numpy's
RuntimeWarnings."""

import json
import math
import os
import shutil
import subprocess
import sys
import warnings

import click
import pytest
from click.testing import CliRunner

from assay.core import jsonout
from assay.cli import cli
from conftest import MINI, ROOT


def strict_loads(text: str):
    def refuse(constant):
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _json_commands(group=cli, path=()):
    """Every command with a --format that offers json, as its words."""
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from _json_commands(command, (*path, name))
        elif any(isinstance(p.type, click.Choice) and "json" in p.type.choices for p in command.params):
            yield " ".join((*path, name))


def _judgments(tmp, count: int):
    lines = (MINI / "judgments.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp / f"first-{count}.jsonl"
    path.write_text("".join(lines[:count]), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A warehouse with a dense run of the mini set, and a warehouse and a lake, each with two BM25 runs of the mini corpus's first 2 questions (chunk sizes 120 and
    200), one of them answered by the extractive generator; and a changed copy of the corpus."""
    tmp = tmp_path_factory.mktemp("strict-json")
    two = _judgments(tmp, 2)
    wh, lake = tmp / "w.duckdb", tmp / "lake"
    runner = CliRunner()
    # calibration needs a no_answer question with hits: a dense run of the whole mini set, written first
    dense = runner.invoke(cli, ["run", "--corpus", str(MINI / "corpus"), "--judgments", str(MINI / "judgments.jsonl"),
                                "--pipeline", "dense", "--chunk-size", "120", "--warehouse", str(wh)])
    assert dense.exit_code == 0, dense.output
    base = ["--corpus", str(MINI / "corpus"), "--judgments", str(two)]
    for extra in (["--chunk-size", "120"], ["--chunk-size", "200", "--generator", "extractive"]):
        for where in (["--warehouse", str(wh)], ["--lake", str(lake)]):
            result = runner.invoke(cli, ["run", *base, *extra, *where])
            assert result.exit_code == 0, result.output
    changed = tmp / "changed"
    shutil.copytree(MINI / "corpus", changed)
    cache = changed / "storage" / "cache.txt"
    cache.write_text(cache.read_text(encoding="utf-8").replace("cache", "buffer pool", 1), encoding="utf-8")
    (tmp / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    (tmp / "run").write_text("q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d9 1 1.0 r\n")
    return {"tmp": tmp, "wh": str(wh), "lake": str(lake), "two": str(two), "changed": str(changed),
            "dense": dense.stdout.strip().splitlines()[-1]}


def _invocations(s):
    wh, lake, tmp = ["--warehouse", s["wh"]], s["lake"], s["tmp"]
    inputs = ["--corpus", str(MINI / "corpus"), "--judgments", s["two"]]
    return {
        "report": [["report", "latest", *wh], ["report", "latest", "previous", *wh]],
        "show": [["show", "latest", *wh], ["show", "latest", "backup-readers", *wh]],
        "calibrate": [["calibrate", s["dense"], *wh]],
        "compare": [["compare", "previous", "latest", *wh]],
        "regress": [["regress", "latest", "--baseline", "previous", "--max-drop", "nDCG@10=0.05", *wh]],
        "gate": [["gate", "latest", "--rule", "nDCG@10>=0.5", "--rule", "faithfulness>=0.5", *wh]],
        "history": [["history", "--pipeline", "bm25", "--metric", "nDCG@10", *wh]],
        "export": [["export", "latest", "previous", "--out", str(tmp / "export"), *wh]],
        "sweep": [["sweep", *inputs, "--size", "120", "--size", "200", *wh]],
        "runs": [["runs", *wh]],
        "sql": [["sql", "SELECT 'nan'::DOUBLE AS x, 'inf'::DOUBLE AS y, 0.5::DOUBLE AS z", *wh]],
        "eval-trec": [["eval-trec", str(tmp / "qrels"), str(tmp / "run"), "--per-query"]],
        "answers show": [["answers", "show", "latest", *wh]],
        "judgments rebase": [["judgments", "rebase", s["two"], "--from", str(MINI / "corpus"), "--to", s["changed"],
                              "--check", *wh]],
        "ablate": [["ablate", *inputs, *wh]],
        "lake runs": [["lake", "runs", lake]],
        "lake report": [["lake", "report", lake, "latest"]],
        "lake compute": [["lake", "compute", lake, "-m", "nDCG@10"]],
        "lake history": [["lake", "history", lake, "--pipeline", "bm25", "--metric", "nDCG@10"]],
        "lake gate": [["lake", "gate", lake, "latest", "--rule", "nDCG@10>=0.5"]],
        "lake regress": [["lake", "regress", lake, "latest", "--baseline", "previous", "--max-drop", "nDCG@10=0.05"]],
    }


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_every_json_output_is_strict_json(small):
    invocations = _invocations(small)
    assert set(invocations) == set(_json_commands()), "a command that writes JSON has no strict-JSON check here"
    runner = CliRunner()
    for command, calls in invocations.items():
        for args in calls:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a numpy RuntimeWarning fails the command
                result = runner.invoke(cli, [*args, "--format", "json"], catch_exceptions=False)
            # ablate exits 6 (the weakened rung passes on 2 questions), regress 1 or 0: the JSON is what is checked
            assert result.exit_code in (0, 1, 6), (args, result.output)
            assert result.stdout.strip(), (args, result.stderr)
            if command == "export":
                out = small["tmp"] / "export"
                strict_loads((out / "manifest.json").read_text(encoding="utf-8"))
                for path in out.glob("*.jsonl"):
                    for line in path.read_text(encoding="utf-8").splitlines():
                        strict_loads(line)
            else:
                strict_loads(result.stdout)
    # what was not computed is null, never NaN nor 0
    row = strict_loads(runner.invoke(cli, [*invocations["sql"][0], "--format", "json"]).stdout)[0]
    assert row == {"x": None, "y": None, "z": 0.5}


def test_two_questions_report_finite_intervals_in_every_format(small):
    runner = CliRunner()
    report = strict_loads(runner.invoke(cli, ["report", "latest", "--format", "json", "--warehouse", small["wh"]]).stdout)
    bounds = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("ci", "interval", "ci_low", "ci_high", "low", "high") and value is not None:
                    bounds.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(report)
    flat = [v for b in bounds for v in (b if isinstance(b, list) else [b]) if isinstance(v, (int, float))]
    assert flat and all(math.isfinite(v) for v in flat)
    for fmt in ("table", "csv", "markdown"):
        text = runner.invoke(cli, ["report", "latest", "--format", fmt, "--warehouse", small["wh"]]).stdout
        assert "nan" not in text.lower().replace("span", ""), fmt
        assert "inf" not in text.lower().replace("info", ""), fmt


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_small_run_prints_no_numpy_warning(tmp_path):
    """A real process, so Python's own warning printer writes to the real stderr (pytest's capture is not in the way)."""
    four = _judgments(tmp_path, 4)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    assay = [sys.executable, "-m", "assay"]
    wh = str(tmp_path / "w.duckdb")
    run = subprocess.run([*assay, "run", "--corpus", str(MINI / "corpus"), "--judgments", str(four), "--chunk-size",
                          "120", "--warehouse", wh], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr
    report = subprocess.run([*assay, "report", "latest", "--format", "json", "--warehouse", wh], capture_output=True,
                            text=True, env=env, timeout=300)
    assert report.returncode == 0
    for stderr in (run.stderr, report.stderr):
        assert "Warning" not in stderr, stderr
    strict_loads(report.stdout)


def test_the_writer_makes_non_finite_floats_null_at_any_depth():
    value = {"a": math.nan, "b": [1.0, math.inf, (-math.inf, 2)], "c": {"d": 0.0, "e": None}, "f": "NaN"}
    assert strict_loads(jsonout.dumps(value)) == {"a": None, "b": [1.0, None, [None, 2]], "c": {"d": 0.0, "e": None},
                                                  "f": "NaN"}
    with pytest.raises(ValueError):  # a non-finite float a default hook returns is refused, not written as NaN
        jsonout.dumps({"x": object()}, default=lambda o: math.nan)
