"""The CLI through click's CliRunner, on real warehouse files."""

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from assay.cli import cli
from conftest import DEMO, ROOT


@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def wh(tmp_path):
    return str(tmp_path / "w.duckdb")


def invoke(runner, *args):
    return runner.invoke(cli, [str(a) for a in args], catch_exceptions=False)


def do_run(runner, wh, corpus, judgments, *extra):
    result = invoke(runner, "run", "--corpus", corpus, "--judgments", judgments, "--warehouse", wh, *extra)
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def test_ingest_twice(runner, wh, mini_corpus):
    first = invoke(runner, "ingest", mini_corpus, "--warehouse", wh)
    assert first.exit_code == 0
    assert re.fullmatch(r"ingested 4 documents, corpus [0-9a-f]{64}\n", first.stdout)
    again = invoke(runner, "ingest", mini_corpus, "--warehouse", wh)
    assert again.stdout.startswith("already in the warehouse: 4 documents")


def test_ingest_bad_file_names_it_and_writes_nothing(runner, wh, tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "good.md").write_text("fine text\n")
    (corpus / "bad.txt").write_bytes(b"caf\x00\n")
    result = invoke(runner, "ingest", corpus, "--warehouse", wh)
    assert result.exit_code == 1
    assert "bad.txt: looks binary (contains NUL bytes)" in result.stderr
    assert not (tmp_path / "w.duckdb").exists()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_run_prints_run_id_and_report_json(runner, wh, mini_corpus, mini_judgments):
    run_id = do_run(runner, wh, mini_corpus, mini_judgments, "--chunk-size", "120")
    assert re.fullmatch(r"\d{8}T\d{6}-[0-9a-f]{6}", run_id)
    result = invoke(runner, "report", run_id, "--format", "json", "--warehouse", wh)
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["run"]["run_id"] == run_id
    row = next(r for r in report["metrics"] if (r["metric"], r["level"], r["slice"]) == ("Success@3", "doc", "all"))
    assert set(row) == {"metric", "level", "slice", "value", "n", "ci_low", "ci_high", "budget_filled",
                        "tokens_available", "shortfall", "questions_short"}
    assert row["budget_filled"] is row["tokens_available"] is row["shortfall"] is row["questions_short"] is None
    assert row["n"] == 5 and row["ci_low"] <= row["value"] <= row["ci_high"]
    slices = {r["slice"] for r in report["metrics"]}
    assert {"all", "category=normal", "form=gap", "hard_class=near-duplicate"} <= slices
    levels = {r["level"] for r in report["metrics"]}
    assert levels == {"chunk", "doc", "query"}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_report_formats(runner, wh, mini_corpus, mini_judgments):
    run_id = do_run(runner, wh, mini_corpus, mini_judgments)
    table = invoke(runner, "report", "--warehouse", wh).stdout  # 'latest' by default
    said, header = table.split("\n\n", 1)  # the verdict in words, then the header
    assert said.startswith("Of the 5 answerable questions, ") and header.startswith(f"run {run_id}  pipeline bm25")
    assert re.search(r"^nDCG@10\s+\d\.\d{3}\s+\[\d\.\d{3}, \d\.\d{3}\]", table, re.M)
    md = invoke(runner, "report", run_id, "--format", "markdown", "--warehouse", wh).stdout
    assert f"## assay report `{run_id}`" in md and "| metric | chunk |" in md
    csv_out = invoke(runner, "report", "latest", "--format", "csv", "--warehouse", wh).stdout.splitlines()
    assert csv_out[0] == "run_id,metric,level,slice,value,n,ci_low,ci_high,budget_filled,tokens_available,shortfall," \
                         "questions_short"
    assert all(line.startswith(run_id + ",") for line in csv_out[1:])


def test_report_unknown_run(runner, wh, mini_corpus, mini_judgments):
    do_run(runner, wh, mini_corpus, mini_judgments)
    result = invoke(runner, "report", "nope", "--warehouse", wh)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: no run 'nope'")


def test_report_without_warehouse(runner, tmp_path):
    result = invoke(runner, "report", "--warehouse", tmp_path / "none.duckdb")
    assert result.exit_code == 1 and "no warehouse at" in result.stderr


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_broken_quote_exit_code_and_no_run(runner, wh, tmp_path, mini_corpus, mini_judgments):
    do_run(runner, wh, mini_corpus, mini_judgments)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(mini_judgments.read_text().replace("WAL mode allows concurrent readers", "WAL mode allows many"))
    result = invoke(runner, "run", "--corpus", mini_corpus, "--judgments", bad, "--warehouse", wh)
    assert result.exit_code == 3
    assert f"{bad}:6 (query wal-purpose): quote not found in storage/design.md" in result.stderr
    runs = invoke(runner, "sql", "SELECT COUNT(*) AS n FROM runs", "--format", "csv", "--warehouse", wh).stdout
    assert runs == "n\n1\n"


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_runs_lists_newest_first(runner, wh, mini_corpus, mini_judgments):
    a = do_run(runner, wh, mini_corpus, mini_judgments)
    b = do_run(runner, wh, mini_corpus, mini_judgments, "--chunker", "fixed", "--chunk-size", "100")
    lines = invoke(runner, "runs", "--warehouse", wh).stdout.splitlines()
    assert [line.split()[0] for line in lines[2:]] == [b, a]
    assert "fixed(size=100, overlap=25)" in lines[2] and "recursive(size=800, overlap=0)" in lines[3]


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_runs_lists_every_kind_with_its_calibration_and_answer_stage(runner, wh):
    corpus, judgments = DEMO / "corpus", DEMO / "judgments.jsonl"
    answered = do_run(runner, wh, corpus, judgments, "--generator", "extractive")
    cal = json.loads(invoke(runner, "calibrate", answered, "--format", "json", "--warehouse", wh).stdout)
    calibrated = do_run(runner, wh, corpus, judgments, "--calibration", cal["calibration_id"])
    assert invoke(runner, "rescore", answered, "--judgments", judgments, "--warehouse", wh).exit_code == 0
    assert invoke(runner, "answers", "revalidate", answered, "--max-quote", "100", "--warehouse", wh).exit_code == 0

    listed = json.loads(invoke(runner, "runs", "--format", "json", "--warehouse", wh).stdout)
    revalidation, rescore = listed[0]["run_id"], listed[1]["run_id"]
    assert [(r["run_id"], r["kind"], r["source_run_id"], r["calibration_id"], r["generator"]) for r in listed] == [
        (revalidation, "revalidation", answered, None, "extractive"), (rescore, "rescore", answered, None, "extractive"),
        (calibrated, "run", None, cal["calibration_id"], None), (answered, "run", None, None, "extractive")]
    assert all(len(r["corpus_hash"]) == len(r["judgments_hash"]) == 64 and r["n_questions"] == 71 for r in listed)
    assert all(r["names"] == [] for r in listed)
    assert set(listed[0]) == {"run_id", "names", "started_at", "status", "kind", "source_run_id", "pipeline", "chunker",
                              "n_questions", "calibration_id", "generator", "corpus_hash", "judgments_hash"}

    lines = invoke(runner, "runs", "--warehouse", wh).stdout.splitlines()
    header = lines[0]
    assert re.split(r"\s{2,}", header) == ["run", "started", "status", "kind", "of run", "pipeline", "chunker",
                                           "questions", "calibration", "answer stage", "corpus", "judgments"]
    assert set(lines[1]) == {"-"} and len(lines) == 6
    rows = {line.split()[0]: line for line in lines[2:]}
    for column in ("kind", "of run", "pipeline", "chunker", "calibration", "answer stage", "corpus", "judgments"):
        at = header.index(column)  # every row's cell starts where its header does
        assert all(row[at - 2:at] == "  " and row[at] != " " for row in rows.values()), column
    assert rows[revalidation][header.index("kind"):].startswith(f"revalidation  {answered}  bm25")
    assert rows[rescore][header.index("kind"):].startswith(f"rescore       {answered}  bm25")
    assert rows[calibrated][header.index("calibration"):].startswith(f"{cal['calibration_id']}  -  ")
    assert rows[answered][header.index("answer stage"):].startswith("extractive  ")
    assert rows[answered].endswith(f"{listed[3]['corpus_hash'][:8]}  {listed[3]['judgments_hash'][:8]}")

    as_csv = invoke(runner, "runs", "--format", "csv", "--warehouse", wh).stdout
    parsed = list(csv.DictReader(io.StringIO(as_csv)))
    assert [dict(r, n_questions=int(r["n_questions"])) for r in parsed] == [
        {k: " ".join(v) if k == "names" else "" if v is None else v for k, v in r.items()} for r in listed]


def test_sql_is_read_only(runner, wh, mini_corpus, mini_judgments):
    do_run(runner, wh, mini_corpus, mini_judgments)
    out = invoke(runner, "sql", "SELECT category, COUNT(*) AS n FROM queries GROUP BY 1 ORDER BY 1",
                 "--warehouse", wh).stdout
    assert out.splitlines()[0].split() == ["category", "n"]
    assert "no_answer  1" in out and out.endswith("(3 rows)\n")
    as_json = json.loads(invoke(runner, "sql", "SELECT 1 AS one", "--format", "json", "--warehouse", wh).stdout)
    assert as_json == [{"one": 1}]
    denied = invoke(runner, "sql", "DELETE FROM runs", "--warehouse", wh)
    assert denied.exit_code == 1 and "read-only" in denied.stderr.lower()


def test_measures_lists_the_registry(runner):
    from assay.measures.registry import FAMILIES

    out = invoke(runner, "measures").stdout
    for name in FAMILIES:
        assert re.search(rf"^{name}\b", out, re.M), name


def test_judgments_check(runner, mini_corpus, mini_judgments, tmp_path):
    ok = invoke(runner, "judgments", "check", mini_judgments, "--corpus", mini_corpus)
    assert ok.exit_code == 0 and "valid, 6 questions" in ok.stdout
    noisy = tmp_path / "noisy.jsonl"
    noisy.write_text(
        '{"query_id": "a", "query": "what is WAL mode for", "category": "normal", "form": "gap", '
        '"gold": [{"doc": "storage/design.md", "quote": "WAL mode allows concurrent readers"}]}\n'
        '{"query_id": "b", "query": "how big is the cache in pages", "category": "no_answer", "form": "match", '
        '"gold": []}\n')
    result = invoke(runner, "judgments", "check", noisy, "--corpus", mini_corpus)
    assert result.exit_code == 0
    assert f"{noisy}:1 [gap-overlap] a:" in result.stdout
    assert f"{noisy}:2 [no-answer-lexical-match] b:" in result.stdout
    assert invoke(runner, "judgments", "check", noisy, "--corpus", mini_corpus, "--strict").exit_code == 1
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query_id": "a", "query": "q", "category": "weird", "form": "gap", "gold": []}\n')
    bad = invoke(runner, "judgments", "check", broken, "--corpus", mini_corpus)
    assert bad.exit_code == 3 and f"{broken}:1 (query a): category 'weird'" in bad.stderr


def test_debug_shows_traceback(runner, tmp_path):
    with pytest.raises(Exception, match="no warehouse"):
        runner.invoke(cli, ["--debug", "report", "--warehouse", str(tmp_path / "x.duckdb")], catch_exceptions=False)


def test_every_command_and_option_is_documented_in_the_manual():
    """Every command has a row in the manual's command index (docs/commands.md), and every option of every
    command is named on some page of the manual (docs/*.md)."""
    index = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    manual = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))

    def walk(group, prefix):
        for name, cmd in group.commands.items():
            full = f"{prefix} {name}"
            if hasattr(cmd, "commands"):
                yield from walk(cmd, full)
            else:
                yield full, cmd

    for param in cli.params:  # the group's own options: assay --debug, --quiet, --version
        for opt in param.opts:
            if opt.startswith("--") and opt != "--help":
                assert f"assay {opt}" in manual, f"assay {opt} is not documented in docs/"
    for full, cmd in walk(cli, "assay"):
        assert f"`{full}" in index, f"{full} is not in the index of docs/commands.md"
        assert f"`{full}" in manual, f"{full} is not documented in docs/"
        for param in cmd.params:
            for opt in param.opts:
                if opt.startswith("--") and opt != "--help":
                    assert opt in manual, f"{full} {opt} is not documented in docs/"


def test_models_lists_the_offline_model(runner):
    out = invoke(runner, "models").stdout
    assert "sentence-transformers/all-MiniLM-L6-v2 (offline, int8 ONNX)  installed at" in out
    assert "default embedder (--embedder auto):" in out


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_ablate_ladder_with_a_local_reranker(runner, wh, mini_corpus, mini_judgments, tmp_path):
    from retrieval.rerank.tiny_cross_encoder import build_tiny_cross_encoder

    ce = build_tiny_cross_encoder(tmp_path / "ce")
    result = invoke(runner, "ablate", "--corpus", mini_corpus, "--judgments", mini_judgments, "--chunk-size", "120",
                    "--reranker-path", ce, "--warehouse", wh)
    # five questions cannot show the weakened rung worse than the baseline, and a check that cannot fail fails
    assert result.exit_code == 6, result.output
    out = result.stdout
    for label in ("BM25 only (baseline)", "dense only", "+ lexical, RRF", "+ rerank", "weakened: dense only, top 3"):
        assert re.search(rf"^{re.escape(label)}\s+5\s+\d\.\d{{3}} \[", out, re.M), label
    assert "Change against the first rung, BM25 only (baseline), over the same questions:" in out and "Loss funnel" in out
    assert re.search(r"^sanity check FAILED: the weakened pipeline is NOT visibly worse .*; exit code 6$", out, re.M)
    runs = invoke(runner, "runs", "--format", "json", "--warehouse", wh).stdout
    assert len(json.loads(runs)) == 5
    as_json = json.loads(invoke(runner, "ablate", "--corpus", mini_corpus, "--judgments", mini_judgments,
                                "--format", "json", "--warehouse", wh).stdout)
    skipped = [r for r in as_json["rungs"] if r["skipped"]]
    # without --reranker-path and with no cross-encoder in the cache, the rerank rung is skipped with the reason
    assert [r["pipeline"] for r in skipped] == ["hybrid-rerank"]
    assert "never downloads models" in skipped[0]["skipped"]


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_calibrate_then_apply(runner, wh, mini_corpus, mini_judgments):
    run_id = do_run(runner, wh, mini_corpus, mini_judgments, "--pipeline", "dense", "--chunk-size", "120")
    out = invoke(runner, "calibrate", run_id, "--format", "json", "--warehouse", wh)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["run_id"] == run_id and len(data["fit_set_hash"]) == 64
    assert "optimistic" in data["caveat"] and len(data["held_out"]) == 2
    stored = invoke(runner, "sql", "SELECT calibration_id, run_id, method, fit_set_hash FROM calibrations",
                    "--format", "json", "--warehouse", wh)
    row = json.loads(stored.stdout)[0]
    assert row["calibration_id"] == data["calibration_id"] and row["fit_set_hash"] == data["fit_set_hash"]
    applied = do_run(runner, wh, mini_corpus, mini_judgments, "--pipeline", "dense", "--chunk-size", "120",
                     "--calibration", data["calibration_id"])
    report = json.loads(invoke(runner, "report", applied, "--format", "json", "--warehouse", wh).stdout)
    assert report["run"]["config"]["calibration"]["calibration_id"] == data["calibration_id"]
    # the threshold cuts the no_answer question (tulips) to nothing; every other question keeps its results
    assert {k: report["run"]["calibration"][k] for k in ("abstained", "no_results")} == {"abstained": 1,
                                                                                         "no_results": 0}
    from assay.store.warehouse import Warehouse

    with Warehouse.open(wh, read_only=True) as opened:
        assert opened.con.execute("SELECT query_id FROM run_queries WHERE run_id = ? AND n_results = 0",
                                  [applied]).fetchall() == [("tulips",)]
    text = invoke(runner, "calibrate", run_id, "--warehouse", wh).stdout
    assert text.startswith("calibration cal-")
    rates = r"(\d\.\d{3}|n/a|-)"
    assert re.search(rf"^  in-sample +{rates} +{rates} +{rates}$", text, re.M), text
    assert re.search(rf"^  held-out \(fit odd, test even\) +{rates} +{rates} +{rates}( +\S.*)?$", text, re.M), text


def test_calibration_unknown_id(runner, wh, mini_corpus, mini_judgments):
    do_run(runner, wh, mini_corpus, mini_judgments)
    result = invoke(runner, "run", "--corpus", mini_corpus, "--judgments", mini_judgments, "--calibration", "cal-x",
                    "--warehouse", wh)
    assert result.exit_code == 1 and "no calibration 'cal-x'" in result.stderr


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_export_command(runner, wh, mini_corpus, mini_judgments, tmp_path):
    run_id = do_run(runner, wh, mini_corpus, mini_judgments)
    out = invoke(runner, "export", run_id, "--format", "csv", "--out", tmp_path / "csv", "--warehouse", wh)
    assert out.exit_code == 0 and out.stdout.startswith(f"exported 1 run(s) as csv to {tmp_path / 'csv'}: runs 1,")
    assert (tmp_path / "csv" / "hits.csv").read_text().splitlines()[0].startswith("run_id,")
    again = invoke(runner, "export", run_id, "--out", tmp_path / "csv", "--warehouse", wh)
    assert again.exit_code == 1 and "error:" in again.stderr


def test_eval_trec_command(runner, tmp_path):
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d9 1\n")
    (tmp_path / "run").write_text("q1 Q0 d2 1 3.0 t\nq1 Q0 d3 2 2.0 t\nq1 Q0 d1 3 1.0 t\n"
                                  "q2 Q0 d8 1 1.0 t\nq2 Q0 d9 2 1.0 t\n")
    out = invoke(runner, "eval-trec", tmp_path / "qrels", tmp_path / "run", "-m", "RR@10", "--format", "json")
    rows = json.loads(out.stdout)
    # the tie on q2 goes to the larger docno (d9), as trec_eval breaks it
    assert {(r["query_id"], r["value"]) for r in rows} == {("all", 0.75)}
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d2 1 3.0\n")
    err = invoke(runner, "eval-trec", tmp_path / "qrels", bad, "-m", "AP")
    assert err.exit_code == 1 and f"{bad}:1" in err.stderr


def test_help_lists_the_commands_by_task_init_run_and_report_first(runner):
    from assay.cli import AssayGroup

    out = invoke(runner, "--help").stdout
    body = out.split("\nStart:\n", 1)[1]
    titles = [line[:-1] for line in ("Start:\n" + body).splitlines() if line and not line.startswith(" ")]
    assert titles == ["Start", "Measure", "Compare and gate", "Golden sets", "Collections", "The warehouse"]
    listed = [line.split()[0] for line in body.splitlines() if line.startswith("  ")]
    assert listed[:3] == ["init", "run", "report"]
    # every command once, none left for "Other": a new command gets a place in AssayGroup.SECTIONS
    assert sorted(listed) == sorted(cli.commands) and len(listed) == len(set(listed))
    assert [n for _, names in AssayGroup.SECTIONS for n in names] == listed


def test_run_help_lists_its_inputs_first(runner):
    out = invoke(runner, "run", "--help").stdout
    inputs, options = out.split("\nInputs (in a project, assay.toml's [project] gives them):\n", 1)[1].split(
        "\nOptions:\n", 1)
    flags = [line.split()[0] for line in inputs.splitlines() if line.startswith("  --")]
    assert flags == ["--corpus", "--judgments", "--pipeline", "--name", "--config", "--warehouse", "--lake"]
    assert "--chunk-size" in options and "--corpus" not in options
    for command in ("ablate", "sweep"):
        out = invoke(runner, command, "--help").stdout
        inputs = out.split("Inputs (in a project", 1)[1].split("\nOptions:\n", 1)[0]
        assert [line.split()[0] for line in inputs.splitlines() if line.startswith("  --")][:2] == \
            ["--corpus", "--judgments"]
