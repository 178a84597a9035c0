"""A PDF or DOCX that unpacks past --max-expanded-mb, or reads past --read-timeout, is refused with one line naming
it, and the reader stops at the bound: the memory is never spent. The bombs are built here (bombs.py), small on
disk; the bounds are lowered so each test is quick."""

import time
import tracemalloc

import pytest
from bombs import docx_bomb, fan_out, flate_bomb, lzw_bomb, run_length_bomb, scattered_boxes, text_pdf, write
from click.testing import CliRunner
from documents import write_docx

from assay.cli import cli
from assay.core.errors import CorpusError
from assay.inputs.corpus import ReadOptions, load_corpus
from assay.inputs.corpus import docx, pdf
from assay.inputs.corpus.budget import ReadBudget

MB = 1_000_000


def refused(root, options):
    """The one problem a load finds, and the most Python memory it held at once (tracemalloc's peak)."""
    tracemalloc.start()
    try:
        with pytest.raises(CorpusError) as info:
            load_corpus(root, options=options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    head, *problems = str(info.value).split("\n")
    assert head == "1 corpus file(s) cannot be ingested:" and len(problems) == 1, str(info.value)
    return problems[0].strip(), peak


PEAK = """
import json, sys, tracemalloc
from assay.core.errors import CorpusError
from assay.inputs.corpus import ReadOptions, load_corpus

def load():
    try:
        load_corpus(sys.argv[1], options=ReadOptions(max_expanded_mb=1))
    except CorpusError as exc:
        return str(exc)

load()  # the modules it imports on first use are not what is measured
tracemalloc.start()
problem = load()
print(json.dumps([problem, tracemalloc.get_traced_memory()[1]]))
"""


def refused_alone(root):
    """``refused`` with --max-expanded-mb 1 in a process of its own, where nothing else allocates: tracemalloc's
    peak counts every thread of a process, and a thread an earlier test of this worker left running (a loopback
    server) once put it at 11.7 MB. Returns (the one problem, the peak)."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", PEAK, str(root)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    message, peak = json.loads(done.stdout.strip().splitlines()[-1])
    head, *problems = message.split("\n")
    assert head == "1 corpus file(s) cannot be ingested:" and len(problems) == 1, message
    return problems[0].strip(), peak


EXPANDS = ("expands past 1 MB when read, the limit per document (its compressed content unpacks to more: a "
           "decompression bomb?); raise it with --max-expanded-mb (or max_expanded_mb in [run] of assay.toml) if it "
           "is a real document")


@pytest.mark.parametrize("bomb", [lambda: flate_bomb(40 * MB), lambda: flate_bomb(40 * MB, times=2),
                                  lambda: run_length_bomb(40 * MB), lambda: lzw_bomb(40 * MB)],
                         ids=["flate", "flate-twice", "run-length", "lzw"])
def test_a_pdf_stream_bomb_is_refused_at_the_bound_without_unpacking_it(tmp_path, bomb):
    path = write(tmp_path / "corpus" / "bomb.pdf", bomb())
    assert path.stat().st_size < MB  # 40 MB of content once unpacked
    problem, peak = refused_alone(tmp_path / "corpus")
    assert problem == f"{path}: {EXPANDS}"
    assert peak < 8 * MB, peak  # the reader stopped near 1 MB, never near 40


def test_a_docx_zip_bomb_is_refused_before_python_docx_opens_it(tmp_path):
    base = write_docx(tmp_path / "base.docx").read_bytes()
    path = write(tmp_path / "corpus" / "bomb.docx", docx_bomb(base, 40 * MB))
    assert path.stat().st_size < MB
    problem, peak = refused_alone(tmp_path / "corpus")
    assert problem == f"{path}: {EXPANDS}"
    assert peak < 8 * MB, peak


def test_a_page_of_thousands_of_text_boxes_is_refused_before_they_are_paired(tmp_path):
    """2,000 boxes are 2 million pairs: pdfminer held 800 MB for 84 s ordering them, in one call. They are counted
    (400 bytes a pair) before that call starts."""
    path = write(tmp_path / "corpus" / "boxes.pdf", scattered_boxes(2000))
    problem, _ = refused(tmp_path / "corpus", ReadOptions(max_expanded_mb=100))
    assert problem == f"{path}: {EXPANDS.replace('past 1 MB', 'past 100 MB')}"


def test_reading_past_the_time_limit_is_refused_on_any_machine(tmp_path):
    """Form XObjects 12 deep, each drawing the next 10 times: 10**12 draws, endless on any machine; refused at
    the limit (the bound on the wait is generous, never a measure of speed)."""
    path = write(tmp_path / "corpus" / "endless.pdf", fan_out())
    started = time.monotonic()
    problem, _ = refused(tmp_path / "corpus", ReadOptions(read_timeout_s=0.5, max_expanded_mb=100_000))
    assert problem == (f"{path}: still being read after 0.5 s, the limit per document; raise it with --read-timeout "
                       "(or read_timeout_s in [run] of assay.toml) if it is a real document")
    assert time.monotonic() - started < 120


def test_the_clock_is_read_as_the_document_is_read():
    """With a clock that moves a second each time it is read, an ordinary one-page PDF passes the ten-second
    limit while it is read: the time is looked at throughout, not once at the end."""
    ticks = iter(range(10**6))
    with pytest.raises(pdf.PdfUnreadable, match=r"^still being read after 10 s"):
        pdf.extract(text_pdf(), ReadBudget(1000, 10, clock=lambda: next(ticks)))
    assert pdf.extract(text_pdf(), ReadBudget(1000, 10)).text == "hello world\n"


def test_a_docx_looks_at_the_clock_before_each_block(tmp_path):
    data = write_docx(tmp_path / "guide.docx").read_bytes()
    ticks = iter(range(10**6))
    with pytest.raises(docx.DocxUnreadable, match=r"^still being read after 3 s"):
        docx.extract(data, ReadBudget(1000, 3, clock=lambda: next(ticks)))
    assert docx.extract(data, ReadBudget(1000, 3)).startswith("Onboarding guide")


def test_an_ordinary_pdf_and_docx_read_as_before_within_the_bounds(tmp_path):
    write(tmp_path / "corpus" / "a.pdf", text_pdf("quarterly report"))
    write_docx(tmp_path / "corpus" / "b.docx")
    corpus = load_corpus(tmp_path / "corpus", options=ReadOptions(max_expanded_mb=1, read_timeout_s=60))
    assert corpus.documents[0].text == "quarterly report\n"
    assert corpus.documents[1].text.startswith("Onboarding guide\n\nNew staff get laptops")


def test_the_cli_refuses_in_one_line_naming_the_file_and_the_flag(tmp_path, monkeypatch):
    path = write(tmp_path / "corpus" / "bomb.pdf", flate_bomb(40 * MB))
    out = CliRunner().invoke(cli, ["ingest", str(tmp_path / "corpus"), "--max-expanded-mb", "1",
                                   "--warehouse", str(tmp_path / "w.duckdb")])
    assert out.exit_code == 1, out.output
    assert out.stderr == f"error: 1 corpus file(s) cannot be ingested:\n  {path}: {EXPANDS}\n"
    assert not (tmp_path / "w.duckdb").exists()
    (tmp_path / "assay.toml").write_text("[run]\nmax_expanded_mb = 1\nread_timeout_s = 30\n")
    monkeypatch.chdir(tmp_path)  # the project's assay.toml
    out = CliRunner().invoke(cli, ["ingest", "corpus", "--warehouse", str(tmp_path / "w.duckdb")])
    assert out.exit_code == 1 and EXPANDS in out.stderr, out.output
    for flag, value in (("--max-expanded-mb", "0"), ("--read-timeout", "-1"), ("--read-timeout", "nan")):
        bad = CliRunner().invoke(cli, ["ingest", str(tmp_path / "corpus"), flag, value])
        assert bad.exit_code == 2 and f"Invalid value for '{flag}'" in bad.stderr
