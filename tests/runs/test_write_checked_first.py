"""A command that computes, then writes (run, sweep, ablate, assay.evaluate) finds a warehouse it could not write
before any work, not at its end: damaged, of a newer schema, read-only, in a read-only directory, or a lake that is
not a directory. Real DuckDB files, real `assay` processes (as another user where the file's rights must bite), a
real chat-completions server on loopback that counts the paid requests a late failure would have cost."""

import os
import shutil
import tempfile

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.core.sqlfiles import latest_migration
from conftest import MINI
from retrieval.answer.chat_server import ChatServer, tool_call

KEY_ENV = "ASSAY_PREFLIGHT_TEST_KEY"
NOBODY = 65534
FUTURE = 999


@pytest.fixture
def open_dir():
    """A directory another user may enter (pytest's own are private to their owner)."""
    path = tempfile.mkdtemp(prefix="assay-preflight-")
    os.chmod(path, 0o755)
    yield path
    os.chmod(path, 0o755)
    shutil.rmtree(path, ignore_errors=True)


def damaged(wh):
    size = wh.stat().st_size
    wh.write_bytes(os.urandom(size))


def future(wh):
    con = duckdb.connect(str(wh))
    con.execute("INSERT INTO schema_migrations VALUES (?, 'from a newer assay', now())", [FUTURE])
    con.close()


def read_only_file(wh):
    os.chmod(wh, 0o444)


def read_only_directory(wh):
    os.chmod(wh, 0o666)
    os.chmod(wh.parent, 0o555)


def new_in_a_read_only_directory(wh):
    wh.unlink()
    os.chmod(wh.parent, 0o555)


def expected(case, wh) -> str:
    if case is damaged:
        return f"error: warehouse {wh} is damaged or truncated ("
    if case is future:
        return (f"error: warehouse {wh} has schema version {FUTURE}, newer than this assay knows "
                f"({latest_migration()}); upgrade assay")
    if case is read_only_file:
        return (f"error: warehouse {wh} is read-only to you and this command writes its results there at the end; "
                f"nothing was run: make it writable (chmod u+w {wh}) or give --warehouse another file")
    if case is new_in_a_read_only_directory:
        return (f"error: cannot create warehouse {wh}: {wh.parent} is read-only to you; nothing was run; give "
                "--warehouse a path in a directory you can write to")
    return (f"error: warehouse {wh} cannot be written: its directory {wh.parent} is read-only to you, and DuckDB "
            f"writes the file's journal ({wh.name}.wal) there; nothing was run: make the directory writable or give "
            "--warehouse a file in another")


def invoke_as(user_bound: bool, *args) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the command in a process of its own (a fork), as another user (nobody) when
    ``user_bound`` and this is root, whose rights ignore a file's mode."""
    import json

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            if user_bound and os.getuid() == 0:
                os.setgid(NOBODY)
                os.setuid(NOBODY)
            result = CliRunner().invoke(cli, [str(a) for a in args])
            said = [result.exit_code, result.stdout, result.stderr]
        except BaseException as exc:
            said = [-1, "", f"{type(exc).__name__}: {exc}"]
        os.write(w, json.dumps(said).encode())
        os._exit(0)
    os.close(w)
    with os.fdopen(r) as f:
        said = f.read()
    os.waitpid(pid, 0)
    return tuple(json.loads(said))


CASES = [damaged, future, read_only_file, read_only_directory, new_in_a_read_only_directory]
USER_BOUND = (read_only_file, read_only_directory, new_in_a_read_only_directory)  # root may write anywhere


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_a_run_with_a_generator_finds_an_unwritable_warehouse_before_any_question(mini_bm25, open_dir, monkeypatch,
                                                                                   case):
    monkeypatch.setenv(KEY_ENV, "sk-preflight")
    folder = os.path.join(open_dir, "w")
    os.mkdir(folder)
    os.chmod(folder, 0o777)
    wh = type(mini_bm25[0])(folder) / "w.duckdb"
    shutil.copy(mini_bm25[0], wh)
    case(wh)
    before = wh.read_bytes() if wh.exists() else None
    with ChatServer([tool_call({"claims": [], "insufficient_evidence": True})] * 6) as server:
        code, out, err = invoke_as(case in USER_BOUND,
                                   "run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl",
                                   "--warehouse", wh, "--generator", "openai", "--generator-url", server.url,
                                   "--generator-model", "m", "--generator-api-key-env", KEY_ENV)
        assert server.requests == []  # no question was asked: no paid request made before the failure
    assert (code, out) == (1, "")
    (line,) = err.splitlines()  # nothing else: no corpus read, no chunking, no index
    assert line.startswith(expected(case, wh)), line
    assert (wh.read_bytes() if wh.exists() else None) == before and not os.path.exists(f"{wh}.wal")


def _cli(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def future_wh(mini_bm25, tmp_path):
    wh = tmp_path / "future.duckdb"
    shutil.copy(mini_bm25[0], wh)
    future(wh)
    return wh


def test_a_sweep_finds_it_before_its_first_point(future_wh):
    result = _cli("sweep", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--size", "200",
                  "--size", "400", "--warehouse", future_wh)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [expected(future, future_wh)]


def test_an_ablation_finds_it_before_its_first_rung(future_wh):
    result = _cli("ablate", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl",
                  "--warehouse", future_wh)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines() == [expected(future, future_wh)]


def test_the_python_api_finds_it_before_calling_the_retriever(future_wh):
    from assay import evaluate
    from assay.core.errors import WarehouseError

    asked = []

    def retriever(question, limit):
        asked.append(question)
        return []

    with pytest.raises(WarehouseError) as raised:
        evaluate(retriever, MINI / "judgments.jsonl", MINI / "corpus", future_wh)
    assert f"error: {raised.value}" == expected(future, future_wh) and asked == []


def test_a_lake_that_cannot_be_made_is_found_before_any_question(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    lake = blocker / "lake"
    with ChatServer([]) as server:
        result = _cli("run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--lake", lake,
                      "--generator", "openai", "--generator-url", server.url, "--generator-model", "m")
        assert server.requests == []
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"error: cannot create lake {lake}: {blocker} is not a directory; "
                                          "nothing was run"]


def test_a_warehouse_under_a_file_is_found_before_any_work(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    wh = blocker / "w.duckdb"
    result = _cli("run", "--corpus", MINI / "corpus", "--judgments", MINI / "judgments.jsonl", "--warehouse", wh)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"error: cannot open warehouse {wh}: Not a directory"]  # nothing else ran
