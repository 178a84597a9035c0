"""The corpus loader stays inside its root and reads only regular files of bounded size: real symlinks
(to /etc/passwd, to /dev/zero, out through '..', in cycles), a real FIFO, real large files."""

import os
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.inputs.corpus import corpus_files, load_corpus
from assay.core.errors import CorpusError


def write(root, rel, text="some text\n"):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def load_error(root, **kw) -> str:
    with pytest.raises(CorpusError) as info:
        load_corpus(root, **kw)
    return str(info.value)


def ingest(*args):
    return CliRunner().invoke(cli, ["ingest", *[str(a) for a in args]])


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "corpus"
    write(root, "good.md", "good text\n")
    return root


@pytest.mark.skipif(not os.path.exists("/etc/passwd"), reason="needs /etc/passwd")
def test_a_link_to_etc_passwd_is_refused_naming_link_and_target(root, tmp_path):
    os.symlink("/etc/passwd", root / "passwd.md")
    message = load_error(root)
    assert f"{root / 'passwd.md'}: a symbolic link to /etc/passwd, outside the corpus root {root}; refused" in message
    out = ingest(root, "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 1 and "passwd.md: a symbolic link to /etc/passwd" in out.stderr
    assert "root:" not in out.output and not (tmp_path / "w.duckdb").exists()


def test_a_link_to_dev_zero_is_refused_without_reading(root):
    os.symlink("/dev/zero", root / "zero.md")
    assert f"{root / 'zero.md'}: a symbolic link to /dev/zero, outside the corpus root" in load_error(root)


def test_links_out_through_dotdot_and_to_outside_directories_are_refused(root, tmp_path):
    secret = write(tmp_path, "secret.md", "outside\n")
    outside_dir = tmp_path / "elsewhere"
    write(outside_dir, "page.md", "outside dir\n")
    os.symlink("../secret.md", root / "up.md")
    os.symlink(outside_dir, root / "docs")
    message = load_error(root)
    assert message.startswith("2 corpus file(s) cannot be ingested:")
    assert f"{root / 'up.md'}: a symbolic link to {secret}, outside the corpus root" in message
    assert f"{root / 'docs'}: a symbolic link to {outside_dir}, outside the corpus root" in message


def test_a_link_to_an_outside_file_without_a_corpus_name_is_ignored_like_any_such_file(root):
    os.symlink("/etc/hostname" if os.path.exists("/etc/hostname") else "/dev/null", root / "host")
    assert [d.doc_id for d in load_corpus(root).documents] == ["good.md"]


def test_a_fifo_named_like_a_document_is_refused_and_never_opened(root, tmp_path):
    fifo = root / "x.md"
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer():  # opening a FIFO for writing blocks until someone opens it for reading
        fd = os.open(fifo, os.O_WRONLY)
        opened.set()
        os.close(fd)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    message = load_error(root)
    assert f"{fifo}: a FIFO (named pipe), not a regular file; only regular files are read" in message
    assert not opened.wait(0.3)  # nobody opened it for reading
    os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # release the writer thread
    thread.join(2)


def test_ingest_of_a_fifo_ends_at_once_in_a_real_process(root, tmp_path):
    os.mkfifo(root / "x.md")
    proc = subprocess.run([sys.executable, "-m", "assay", "ingest", str(root), "--warehouse",
                           str(tmp_path / "w.duckdb")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "x.md: a FIFO (named pipe), not a regular file" in proc.stderr


def test_a_link_inside_the_root_to_a_fifo_is_refused_too(root):
    os.mkfifo(root / "pipe")
    os.symlink("pipe", root / "pipe.md")
    assert f"{root / 'pipe.md'}: a FIFO (named pipe), not a regular file" in load_error(root)


def test_a_directory_link_cycle_terminates_and_reads_each_file_once(root):
    write(root, "a/inner.md", "inner\n")
    os.symlink(root, root / "a" / "loop")  # a/loop -> root -> a -> a/loop ...
    os.symlink(root / "a", root / "b")  # b -> a: another way to the same directory
    ids = [d.doc_id for d in load_corpus(root).documents]
    assert ids == ["a/inner.md", "good.md"]


def test_links_inside_the_root_are_followed_once(root):
    write(root, ".drafts/draft.md", "draft\n")  # hidden: read only through the link below
    os.symlink(root / ".drafts", root / "drafts")
    os.symlink("good.md", root / "alias.md")  # the same file as good.md: read once, under its own path
    docs = load_corpus(root).by_id()
    assert sorted(docs) == ["drafts/draft.md", "good.md"]
    assert docs["drafts/draft.md"].text == "draft\n"
    assert [p.name for p in corpus_files(root)] == ["draft.md", "good.md"]


def test_a_corpus_root_that_is_itself_a_link_loads(root, tmp_path):
    os.symlink(root, tmp_path / "via-link")
    assert [d.doc_id for d in load_corpus(tmp_path / "via-link").documents] == ["good.md"]


def test_an_oversized_file_names_its_size_and_the_flag(root, tmp_path):
    big = root / "big.txt"
    big.write_bytes(b"word " * 240_000)  # 1,200,000 bytes
    message = load_error(root, max_file_mb=1)
    assert (f"{big}: 1.2 MB (1,200,000 bytes), over the limit of 1 MB per file; raise it with --max-file-mb "
            "(or max_file_mb in [run] of assay.toml)") in message
    assert [d.doc_id for d in load_corpus(root, max_file_mb=2).documents] == ["big.txt", "good.md"]
    out = ingest(root, "--max-file-mb", "1", "--warehouse", tmp_path / "w.duckdb")
    assert out.exit_code == 1 and "over the limit of 1 MB per file" in out.stderr
    assert not (tmp_path / "w.duckdb").exists()
    ok = ingest(root, "--max-file-mb", "1.5", "--warehouse", tmp_path / "w.duckdb")
    assert ok.exit_code == 0 and ok.stdout.startswith("ingested 2 documents")


def test_the_default_limit_is_50_mb(root):
    big = root / "big.txt"
    with open(big, "wb") as fh:  # sparse: 50 MB + 1 byte of zeros costs no disk
        fh.truncate(50_000_001)
    assert f"{big}: 50.0 MB (50,000,001 bytes), over the limit of 50 MB per file" in load_error(root)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_run_and_judgments_check_take_the_limit_from_the_flag_and_assay_toml(tmp_path, mini_corpus, mini_judgments):
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(mini_corpus, corpus)
    size = (corpus / "ops" / "faq.html").stat().st_size
    tiny = f"{(size - 1) / 1_000_000:.6f}"  # just below the faq page's size
    runner = CliRunner()
    check = runner.invoke(cli, ["judgments", "check", str(mini_judgments), "--corpus", str(corpus),
                                "--max-file-mb", tiny])
    assert check.exit_code == 1 and "faq.html" in check.stderr and "--max-file-mb" in check.stderr
    cfg = tmp_path / "assay.toml"
    cfg.write_text(f"[run]\nmax_file_mb = {tiny}\n")
    run = runner.invoke(cli, ["run", "--corpus", str(corpus), "--judgments", str(mini_judgments), "--config",
                              str(cfg), "--warehouse", str(tmp_path / "w.duckdb")])
    assert run.exit_code == 1 and "faq.html" in run.stderr and "over the limit" in run.stderr
    again = runner.invoke(cli, ["run", "--corpus", str(corpus), "--judgments", str(mini_judgments), "--config",
                                str(cfg), "--max-file-mb", "1", "--warehouse", str(tmp_path / "w.duckdb")])
    assert again.exit_code == 0, again.output
