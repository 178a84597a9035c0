"""The install: tools/install.py hands pip's configuration to uv, the Makefile's stamps install what changed and
no more (`make demo` the runtime lock only, `make test` the rest), and the environment holds the locked versions."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("install_tool", ROOT / "tools" / "install.py")
install = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install)


def test_pip_config_list_is_read_as_pip_install_reads_it():
    listing = ("global.extra-index-url='file:///opt/a/simple file:///opt/b/simple'\n"
               "global.find-links='/opt/wheels'\n"
               "global.timeout='60'\n"
               "install.timeout='90'\n"
               ":env:.find-links='/srv/wheels /opt/wheels'\n"
               ":env:.disable-pip-version-check='1'\n")
    assert install.parse(listing) == {"extra-index-url": "file:///opt/a/simple file:///opt/b/simple",
                                      "find-links": "/srv/wheels /opt/wheels", "timeout": "90",
                                      "disable-pip-version-check": "1"}


def test_pip_settings_become_uv_options():
    indexes, constraints, env = install.uv_arguments({
        "index-url": "https://mirror.example/simple", "extra-index-url": "file:///opt/a/simple file:///opt/b/simple",
        "find-links": "/opt/wheels", "constraint": "/etc/pip/constraints.txt", "trusted-host": "mirror.example",
        "cert": "/etc/ssl/ca.crt", "default-timeout": "180", "disable-pip-version-check": "1"})
    assert indexes == ["--index-strategy", "unsafe-best-match", "--default-index", "https://mirror.example/simple",
                       "--index", "file:///opt/a/simple", "--index", "file:///opt/b/simple",
                       "--find-links", "/opt/wheels", "--allow-insecure-host", "mirror.example"]
    assert constraints == ["--constraints", "/etc/pip/constraints.txt"]
    assert env == {"SSL_CERT_FILE": "/etc/ssl/ca.crt", "UV_HTTP_TIMEOUT": "180"}


def test_a_pip_setting_uv_cannot_take_means_pip():
    assert install.uv_arguments({"only-binary": ":all:"}) is None
    assert install.uv_arguments({"pre": "1"}) is None


def _pins(lock: Path) -> dict[str, str]:
    pins = {}
    for line in lock.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, pinned = line.split("==")
            pins[name] = pinned
    return pins


def test_the_locks_split_runtime_from_tests():
    runtime, testing = _pins(ROOT / "requirements.lock"), _pins(ROOT / "requirements-test.lock")
    assert not set(runtime) & set(testing)
    assert {"pyspark", "py4j", "playwright", "pytest", "hypothesis", "pytrec_eval-terrier", "reportlab"} <= set(testing)
    assert {"duckdb", "tantivy", "fastembed", "onnxruntime", "scipy", "altair", "vl-convert-python"} <= set(runtime)


@pytest.mark.skipif(Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
                    reason="runs in the project's .venv, which `make install` builds from the locks")
def test_the_environment_holds_the_locked_versions():
    wrong = {}
    for lock in ("requirements.lock", "requirements-test.lock"):
        for name, pinned in _pins(ROOT / lock).items():
            try:
                have = version(name)
            except PackageNotFoundError:
                have = None
            if have != pinned:
                wrong[name] = (pinned, have)
    assert wrong == {}


# -- the Makefile's stamps, read with `make -n` in a copy that holds only what the rules look at --------------
@pytest.fixture
def tree(tmp_path):
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    for name in ("Makefile", "pyproject.toml", "requirements.lock", "requirements-test.lock", "tools/install.py",
                 "src/assay/retrieval/models.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def _plan(tree: Path, target: str) -> list[str]:
    out = subprocess.run(["make", "-n", target, "PYTHON=python3"], cwd=tree, capture_output=True, text=True,
                         check=True).stdout
    return [line for line in out.splitlines() if "install.py" in line or "assay " in line]


def _touch(tree: Path, *names: str) -> None:
    stamp = time.time() + 10 * _touch.calls  # each call newer than the last, whatever the clock's resolution
    _touch.calls += 1
    for name in names:
        path = tree / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        os.utime(path, (stamp, stamp))


_touch.calls = 1
MODEL = "models/all-MiniLM-L6-v2-int8/model.onnx"


def test_make_demo_installs_the_runtime_only_and_make_test_adds_the_rest(tree):
    plan = _plan(tree, "demo")  # a fresh clone
    assert any("--create" in line for line in plan)
    assert any(re.search(r"install.py \.venv -r requirements.lock$", line) for line in plan)
    assert not any("requirements-test.lock" in line for line in plan)
    assert plan[-1] == ".venv/bin/assay demo"

    _touch(tree, ".venv/bin/python", ".venv/.installed-runtime")
    _touch(tree, MODEL)  # `make demo` done
    assert _plan(tree, "demo") == [".venv/bin/assay demo"]
    test_plan = _plan(tree, "test")
    assert [line for line in test_plan if "install.py" in line] == [
        "python3 tools/install.py .venv -r requirements.lock -r requirements-test.lock"]

    _touch(tree, ".venv/.installed-test")  # `make test` done
    assert [line for line in _plan(tree, "test") if "install.py" in line] == []


def test_a_changed_lock_installs_again(tree):
    _touch(tree, ".venv/bin/python", ".venv/.installed-runtime")
    _touch(tree, MODEL, ".venv/.installed-test")
    _touch(tree, "requirements-test.lock")
    assert _plan(tree, "demo") == [".venv/bin/assay demo"]  # the demo needs none of it
    assert [line for line in _plan(tree, "install") if "install.py" in line] == [
        "python3 tools/install.py .venv -r requirements.lock -r requirements-test.lock"]

    _touch(tree, ".venv/.installed-test")
    _touch(tree, "requirements.lock")
    plan = _plan(tree, "install")
    # the environment is kept (created only where there is none), its packages brought up to date
    assert [line for line in plan if "--create" in line] == [
        "test -x .venv/bin/python || python3 tools/install.py .venv --create"]
    assert [line for line in plan if "install.py" in line and "--create" not in line] == [
        "python3 tools/install.py .venv -r requirements.lock", "python3 tools/install.py .venv --editable .",
        "python3 tools/install.py .venv -r requirements.lock -r requirements-test.lock"]
