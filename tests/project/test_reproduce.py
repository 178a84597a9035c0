"""bench/reproduce.py without its collections: one line naming what is missing and how to get it, exit 2."""

import importlib.util
import subprocess
import sys

import pytest

from conftest import ROOT

SCRIPT = ROOT / "bench" / "reproduce.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def _module():
    spec = importlib.util.spec_from_file_location("reproduce", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, url", [
    ("scifact", "https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip"),
    ("vaswani", "https://raw.githubusercontent.com/terrier-org/pyterrier/master/tests/fixtures/vaswani_npl"),
])
def test_a_missing_collection_is_one_line_and_exit_2(tmp_path, name, url):
    done = _run(name, "--data", tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"reproduce.py: {name} not found: {tmp_path / name} does not exist; download it")
    assert url in done.stderr and "--data DIR" in done.stderr


def test_the_missing_files_are_named(tmp_path):
    (tmp_path / "scifact" / "qrels").mkdir(parents=True)
    (tmp_path / "scifact" / "corpus.jsonl").write_text("")
    done = _run("scifact", "--data", tmp_path)
    assert done.returncode == 2
    assert f"{tmp_path / 'scifact'} has no queries.jsonl, qrels/test.tsv;" in done.stderr


def test_the_shared_collections_are_complete_where_present():
    reproduce = _module()
    if not reproduce.SHARED.is_dir():
        pytest.skip(f"{reproduce.SHARED} is missing")
    assert [reproduce.missing(name, reproduce.SHARED) for name in reproduce.FILES] == [None, None]
