"""Every number a command takes is checked before any work: on the command line a usage error (exit 2)
naming the option, in assay.toml a configuration error (exit 1) naming the file, table and key. Nothing
is written either way. The ranges are assay.core.limits'."""

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core.errors import ConfigError
from assay.core.limits import DEPTH_MAX, INT_MAX
from assay.runs.runner import RunOptions, execute_run
from conftest import MINI

CORPUS, JUDGMENTS = MINI / "corpus", MINI / "judgments.jsonl"
RUN = ["run", "--corpus", CORPUS, "--judgments", JUDGMENTS]
SWEEP = ["sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.mark.parametrize("command, option, value", [
    (RUN, "--seed", "-1"), (RUN, "--seed", str(INT_MAX + 1)), (RUN, "--seed", "1.5"),
    (RUN, "--timeout", "-1"), (RUN, "--timeout", "0"), (RUN, "--timeout", "nan"), (RUN, "--timeout", "inf"),
    (RUN, "--chunk-size", "0"), (RUN, "--overlap", "-1"), (RUN, "--depth", "0"), (RUN, "--doc-depth", "0"),
    (RUN, "--rrf-k", "0"), (RUN, "--rerank-top-n", "0"), (RUN, "--final-k", "0"), (RUN, "--context-k", "0"),
    (RUN, "--max-quote", "0"), (RUN, "--generator-timeout", "-5"), (RUN, "--min-interval", "-0.1"),
    (RUN, "--max-file-mb", "0"), (RUN, "--max-file-mb", "nan"),
    (["ablate", "--corpus", CORPUS, "--judgments", JUDGMENTS], "--depth", "-3"),
    (SWEEP, "--size", "0"), (SWEEP, "--overlap", "-1"), (SWEEP, "--budget", "0"), (SWEEP, "--k", "0"),
    (SWEEP, "--alpha", "1"), (SWEEP, "--alpha", "0"), (SWEEP, "--seed", "-1"), (SWEEP, "--depth", "0"),
    (SWEEP, "--max-file-mb", "-1"),
    # how many results a stage keeps stops at DEPTH_MAX (2**31 - 1 aborted tantivy after asking for 34 GB)
    (RUN, "--depth", str(INT_MAX)), (RUN, "--depth", str(DEPTH_MAX + 1)), (RUN, "--doc-depth", str(INT_MAX)),
    (RUN, "--rerank-top-n", str(DEPTH_MAX + 1)), (RUN, "--final-k", str(DEPTH_MAX + 1)),
    (RUN, "--context-k", str(DEPTH_MAX + 1)), (SWEEP, "--depth", str(INT_MAX)),
    (["ablate", "--corpus", CORPUS, "--judgments", JUDGMENTS], "--depth", str(INT_MAX)),
    (["regress", "--max-drop", "Success@1=0.02"], "--alpha", "1.5"),
    (["regress", "--max-drop", "Success@1=0.02"], "--alpha", "nan"),
    (["history", "--pipeline", "bm25", "--metric", "nDCG@10"], "--tolerance", "-0.1"),
    (["ingest", CORPUS], "--max-file-mb", "-1"),
    (["judgments", "check", JUDGMENTS, "--corpus", CORPUS], "--max-file-mb", "0"),
    (["sql", "SELECT 1"], "--timeout", "nan"), (["sql", "SELECT 1"], "--timeout", "0"),
    (["sql", "SELECT 1"], "--max-rows", "0"), (["sql", "SELECT 1"], "--max-rows", "1000001"),
    (["sql", "SELECT 1"], "--memory-mb", "8"), (["sql", "SELECT 1"], "--memory-mb", "1.5"),
])
def test_a_bad_number_is_a_usage_error_naming_the_option(tmp_path, command, option, value):
    wh = tmp_path / "w.duckdb"
    extra = [] if command[0] == "judgments" else ["--warehouse", wh]
    out = invoke(*command, option, value, *extra)
    assert out.exit_code == 2, out.output
    assert f"Invalid value for '{option}'" in out.stderr and value in out.stderr
    assert "Traceback" not in out.output and not wh.exists()


@pytest.mark.parametrize("toml, says", [
    ("[run]\nseed = -1\n", "[run] seed must be an integer from 0 to 2147483647, got -1"),
    ("[run]\nseed = 2147483648\n", "[run] seed must be an integer from 0 to 2147483647, got 2147483648"),
    ("[run]\nseed = true\n", "[run] seed must be an integer from 0 to 2147483647, got True"),
    ("[run]\nchunk_size = 0\n", "[run] chunk_size must be an integer from 1 to 2147483647, got 0"),
    ("[run]\nmax_file_mb = 0\n", "[run] max_file_mb must be a number greater than 0"),
    ("[run]\ndepth = 2147483647\n", "[run] depth must be an integer from 1 to 100000, got 2147483647"),
    ("[pipelines.p]\nextends = \"bm25\"\nfinal_k = 100001\n", "[pipelines.p] final_k must be an integer from 1 to 100000"),
    ("[pipelines.p]\nextends = \"bm25\"\ntimeout_s = -1\n", "[pipelines.p] timeout_s must be a number greater than 0"),
    ("[pipelines.p]\nextends = \"bm25\"\ndepth = 2.5\n", "[pipelines.p] depth must be an integer"),
    ("[pipelines.p]\nextends = \"bm25\"\ngenerator_backoff_s = [1, -2]\n",
     "[pipelines.p] generator_backoff_s each wait must be a number at least 0"),
    ("[pipelines.p]\nextends = \"hybrid\"\nfusion = \"weighted\"\nweights = { bm25 = -1, dense = 1 }\n",
     "[pipelines.p] weights bm25 must be a number at least 0"),
    ("[sql]\nmax_rows = 0\n", "[sql] max_rows must be an integer from 1 to 1000000, got 0"),
    ("[sql]\nmemory_mb = 2.5\n", "[sql] memory_mb must be an integer from 16 to 1048576, got 2.5"),
    ("[sql]\ntimeout_s = -1\n", "[sql] timeout_s must be a number greater than 0"),
    ("[sql]\nrows = 5\n", "[sql] has unknown setting 'rows'; allowed: timeout_s, max_rows, memory_mb"),
])
def test_a_bad_number_in_assay_toml_names_the_file_and_key(tmp_path, toml, says):
    cfg = tmp_path / "assay.toml"
    cfg.write_text(toml)
    out = invoke(*RUN, "--pipeline", "bm25", "--config", cfg, "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 1 and out.stderr.startswith(f"error: {cfg}: {says}"), out.output
    assert not (tmp_path / "w.duckdb").exists()


def test_the_python_api_checks_the_same_ranges():
    with pytest.raises(ConfigError, match=r"pipeline 'bm25': seed must be an integer from 0 to 2147483647, got -1"):
        execute_run(CORPUS, JUDGMENTS, RunOptions(seed=-1))
    with pytest.raises(ConfigError, match=r"timeout_s must be a number greater than 0 .*got nan"):
        execute_run(CORPUS, JUDGMENTS, RunOptions(timeout_s=float("nan")))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_largest_seed_runs_and_reports(tmp_path):
    wh = tmp_path / "w.duckdb"
    out = invoke(*RUN, "--seed", str(INT_MAX), "--chunk-size", "120", "--warehouse", wh)
    assert out.exit_code == 0, out.output
    report = invoke("report", out.stdout.strip(), "--format", "json", "--warehouse", wh)
    assert report.exit_code == 0 and '"seed": 2147483647' in report.stdout


@pytest.mark.parametrize("given", [["--chunk-size", "100", "--overlap", "100"], ["--overlap", "5000"],
                                   ["--chunk-size", "50", "--overlap", "80"]])
def test_an_overlap_not_below_the_chunk_size_is_a_usage_error(tmp_path, given):
    wh = tmp_path / "w.duckdb"
    out = invoke(*RUN, *given, "--warehouse", wh)
    assert out.exit_code == 2, out.output
    assert out.stderr.startswith("error: --overlap and --chunk-size: overlap must be at least 0 and below the chunk "
                                 "size ") and out.stderr.count("\n") == 1, out.stderr
    assert "Traceback" not in out.output and not wh.exists()


def test_an_overlap_not_below_the_size_in_assay_toml_stays_a_configuration_error(tmp_path):
    cfg = tmp_path / "assay.toml"
    cfg.write_text("[run]\nchunk_size = 100\noverlap = 100\n")
    out = invoke(*RUN, "--config", cfg, "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 1 and "overlap must be at least 0 and below the chunk size 100" in out.stderr, out.output


def test_the_largest_depths_run(tmp_path):
    wh = tmp_path / "w.duckdb"
    out = invoke(*RUN, "--depth", DEPTH_MAX, "--doc-depth", DEPTH_MAX, "--final-k", DEPTH_MAX, "--warehouse", wh)
    assert out.exit_code == 0, out.output
