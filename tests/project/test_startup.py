"""What each command imports: run in a fresh interpreter as `assay ...`, the modules loaded by its end are read
back. pandas (0.4 s) is loaded by no command that does not use it, nor pyarrow by one that writes no Arrow; a
report loads neither scipy.stats nor Ibis nor altair; `assay --help` loads no numpy and no DuckDB; a read loads
DuckDB's compiled module, not its package, and runs, show and a gate of 0/1 measures load no numpy. Speed itself
is measured by bench/bench_cli.py, not here."""

import importlib.metadata
import os
import subprocess
import sys

import pytest

from conftest import DEMO

# DuckDB 1.x (the pinned 1.5, for Ibis 12: docs/install.md) imports pandas, where it is installed, whenever it binds
# a query parameter, and pandas imports pyarrow: every command that binds one loads both (~0.4 s). DuckDB 2 does
# not; these checks hold there and are skipped on 1.x, where test_duckdb_1_loads_pandas_when_it_binds_a_parameter
# pins the cause, so the day the pin moves the checks come back on their own.
DUCKDB_1 = int(importlib.metadata.version("duckdb").split(".")[0]) < 2
ARROW_FREE = set() if DUCKDB_1 else {"pandas", "pyarrow"}  # what a command that writes no Arrow must not load

# `python -c` this, then the command's arguments: the command runs as `assay` does, and at exit (SystemExit
# included) the names of the loaded modules are written to $ASSAY_MODULES_OUT
RUN_AND_LIST = ("import atexit, os, runpy, sys\n"
                "atexit.register(lambda: open(os.environ['ASSAY_MODULES_OUT'], 'w').write('\\n'.join(sys.modules)))\n"
                "sys.argv = ['assay'] + sys.argv[1:]\n"
                "runpy.run_module('assay', run_name='__main__', alter_sys=True)\n")


def loaded(tmp_path, *args, ok=(0,)) -> set[str]:
    out = tmp_path / "modules.txt"
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST, *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "ASSAY_MODULES_OUT": str(out)}, cwd=tmp_path)
    assert done.returncode in ok, done.stderr
    return set(out.read_text().split())


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    """The demo's warehouse, made by `assay demo`, which must load no pandas either."""
    tmp = tmp_path_factory.mktemp("startup")
    path = tmp / "w.duckdb"
    modules = loaded(tmp, "demo", "--warehouse", path)
    assert not ARROW_FREE & modules
    return path


def test_help_loads_neither_numpy_nor_duckdb(tmp_path):
    modules = loaded(tmp_path, "--help")
    assert not {"numpy", "duckdb", "pandas", "pyarrow", "rich", "tantivy"} & modules
    assert not {"numpy", "pandas", "pyarrow"} & loaded(tmp_path, "measures")


COMMANDS = {
    "report": ["report", "latest"],
    "report json": ["report", "latest", "--format", "json"],
    "report csv": ["report", "latest", "--format", "csv"],
    "report markdown": ["report", "latest", "--format", "markdown"],
    "runs": ["runs"],
    "show": ["show", "latest"],
    "show question": ["show", "latest", "adv-advisory-affected-versions"],
    "gate": ["gate", "latest", "--rule", "Success@3:doc>=0.5"],
    "gate graded": ["gate", "latest", "--rule", "nDCG@10:doc>=0.1"],
    "sql": ["sql", "SELECT COUNT(*) FROM runs"],
    "export csv": ["export", "latest", "--format", "csv", "--out", "exported"],
}
WRITING = {
    "run": ["run", "--corpus", DEMO / "corpus", "--judgments", DEMO / "judgments.jsonl"],
    "ingest": ["ingest", DEMO / "corpus"],
    "rescore": ["rescore", "latest", "--judgments", DEMO / "judgments.jsonl"],
}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@pytest.mark.parametrize("name", list(COMMANDS) + list(WRITING))
def test_a_command_loads_no_pandas(tmp_path, warehouse, name):
    args = COMMANDS.get(name) or WRITING[name]
    modules = loaded(tmp_path, *args, "--warehouse", warehouse, ok=(0, 6))
    assert not ARROW_FREE & modules  # nothing here reads or writes Arrow
    if name.startswith("report"):
        assert not {"scipy.stats", "scipy.special", "ibis", "altair", "tantivy", "fastembed"} & modules
    if name in COMMANDS and name not in ("sql", "export csv"):
        # a read opens the warehouse through DuckDB's compiled module: the package (~45 ms) is not loaded, nor
        # the reader of assay.toml when there is none
        assert "_duckdb" in modules and not {"duckdb", "assay.retrieval.pipelines", "tomllib"} & modules
    if name in ("runs", "show", "show question", "gate") and not DUCKDB_1:  # (pandas loads numpy on DuckDB 1.x)
        assert "numpy" not in modules  # the gate's rule is a 0/1 measure: Wilson, plain floats
    if name.startswith("report") and not DUCKDB_1:
        # the run stored its report's intervals (assay.measures.memo): no bootstrap, so no numpy
        assert "numpy" not in modules
    # "gate graded" loads numpy: a graded rule is tested against its bar with a sign-flip test (metrics.bar_test),
    # which no stored interval replaces


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_parquet_export_loads_pyarrow_but_no_pandas(tmp_path, warehouse):
    modules = loaded(tmp_path, "export", "latest", "--out", "exported", "--warehouse", warehouse)
    assert "pyarrow.parquet" in modules and not ("pandas" in modules and not DUCKDB_1)


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_html_report_loads_altair_and_no_pandas(tmp_path, warehouse):
    modules = loaded(tmp_path, "report", "latest", "--format", "html", "--output", "r.html", "--warehouse", warehouse)
    assert "altair" in modules and not ("pandas" in modules and not DUCKDB_1)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_normal_and_t_functions_load_without_scipys_packages_and_scipy_imports_whole_after():
    """metrics.stats loads scipy.special's compiled ufuncs under bare stand-ins of scipy, scipy._lib and
    scipy.special (their imports cost more than a report): the functions are scipy's own, and a later plain
    import of scipy.special and scipy.stats works and gives the same values."""
    code = ("import sys\n"
            "from assay.measures.stats import _normal_and_t\n"
            "ndtr, ndtri, stdtrit = _normal_and_t()\n"
            "assert not {'scipy', 'scipy._lib', 'scipy.special', 'scipy._lib._testutils'} & set(sys.modules)\n"
            "import scipy.special, scipy.stats\n"
            "assert (ndtr, ndtri, stdtrit) == (scipy.special.ndtr, scipy.special.ndtri, scipy.special.stdtrit)\n"
            "assert ndtr(0.3) == scipy.stats.norm.cdf(0.3) and ndtri(0.2) == scipy.stats.norm.ppf(0.2)\n"
            "assert stdtrit(5, 0.975) == scipy.stats.t.ppf(0.975, 5)\n"
            "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr


@pytest.mark.skipif(not DUCKDB_1, reason="DuckDB 2 binds parameters without pandas")
def test_duckdb_1_loads_pandas_when_it_binds_a_parameter(tmp_path):
    """Why the pandas checks above are skipped on DuckDB 1.x: binding one string parameter loads pandas there."""
    code = ("import sys, duckdb\n"
            "con = duckdb.connect(':memory:')\n"
            "con.execute('SELECT 1'); before = 'pandas' in sys.modules\n"
            "con.execute('SELECT ?', ['x']); print(before, 'pandas' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["False", "True"], done.stderr
