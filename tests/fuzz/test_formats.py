"""Fuzz: the BEIR and TREC readers raise FormatError (an AssayError) or yield records, whatever the file
holds, and never anything else."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st
import pytest

from assay.core.errors import FormatError
from assay.inputs.formats import beir, trec
from .strategies import HOSTILE_JSON, JSON_VALUES, TEXT, fuzz
from conftest import scratch_dir

WORKDIR = scratch_dir("assay-fuzz-formats-")
READERS = {
    "beir.read_corpus": beir.read_corpus, "beir.read_queries": beir.read_queries, "beir.read_qrels": beir.read_qrels,
    "trec.read_docs": trec.read_docs, "trec.read_topics": lambda p: trec.read_topics(p, ("title", "desc")),
    "trec.read_qrels": trec.read_qrels, "trec.read_run": trec.read_run,
}


def read_all(name: str, data: bytes) -> None:
    path = WORKDIR / f"{name}.txt"
    path.write_bytes(data)
    try:
        records = list(READERS[name](path))
    except FormatError as exc:
        assert exc.exit_code == 1 and exc.path == str(path)
        assert exc.line is None or exc.line >= 1
        str(exc).encode("utf-8")
        return
    for record in records:
        assert all(isinstance(v, (str, int, float)) for v in (record if isinstance(record, tuple)
                                                               else vars(record).values()))


@fuzz(60)
@given(st.sampled_from(sorted(READERS)), st.binary(max_size=200))
@example("beir.read_qrels", b"")
@example("trec.read_docs", b"<DOC>")
@example("trec.read_run", b"q Q0 d 1 1e999 t\n")
def test_any_bytes(name, data):
    read_all(name, data)


TOKEN = st.one_of(st.from_regex(r"[A-Za-z0-9_.-]{1,5}", fullmatch=True), st.integers(-3, 10**6).map(str),
                  st.sampled_from(["1" * 5000, "-" + "9" * 4400, "nan", "inf", "-inf", "1e999", "0x1F", "1_000",
                                   "\u0661", "\uff11", "Q0", "", "\x00", "\x1b[2J"]))
ROW = st.lists(TOKEN, min_size=1, max_size=7).map(lambda cols: " ".join(cols))
TSV = st.lists(TOKEN, min_size=1, max_size=4).map(lambda cols: "\t".join(cols))
BEIR_RECORD = st.dictionaries(st.sampled_from(["_id", "text", "title", "metadata", "x"]),
                              st.one_of(TEXT, JSON_VALUES), max_size=4).map(json.dumps)
TAG = st.sampled_from(["<DOC>", "</DOC>", "<DOCNO>", "</DOCNO>", "<TEXT>", "</TEXT>", "<HEADLINE>", "</HEADLINE>",
                       "<top>", "</top>", "<num>", "</num>", "<title>", "<desc>", "Number:", "<doc x='1'>"])
SGML = st.lists(st.one_of(TAG, TEXT, st.just("\n")), max_size=20).map("".join)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(200)
@given(st.data())
def test_near_valid_lines(data):
    name = data.draw(st.sampled_from(sorted(READERS)))
    if name.startswith("beir.read_qrels"):
        lines = ["query-id\tcorpus-id\tscore"] + data.draw(st.lists(TSV, max_size=5))
    elif name.startswith("beir."):
        lines = data.draw(st.lists(st.one_of(BEIR_RECORD, HOSTILE_JSON), min_size=1, max_size=4))
    elif name in ("trec.read_docs", "trec.read_topics"):
        lines = [data.draw(SGML)]
    else:
        lines = data.draw(st.lists(ROW, min_size=1, max_size=5))
    newline = data.draw(st.sampled_from(["\n", "\r\n", "\r"]))
    read_all(name, newline.join(lines).encode("utf-8", "surrogatepass"))


def test_huge_numbers_are_format_errors():
    """Found by test_near_valid_lines: int() of over 4300 digits and json.loads of such a number or of
    deep nesting raised ValueError / RecursionError."""
    for name, data in (("trec.read_qrels", b"q 0 d " + b"1" * 5000 + b"\n"),
                       ("trec.read_run", b"q Q0 d " + b"1" * 5000 + b" 1.0 t\n"),
                       ("beir.read_qrels", b"query-id\tcorpus-id\tscore\nq\td\t" + b"1" * 5000 + b"\n"),
                       ("beir.read_queries", b'{"_id": ' + b"1" * 5000 + b"}\n"),
                       ("beir.read_corpus", b"[" * 100_000 + b"\n")):
        path = WORKDIR / f"{name}.txt"
        path.write_bytes(data)
        try:
            list(READERS[name](path))
        except FormatError as exc:
            assert exc.line == (2 if name == "beir.read_qrels" else 1), (name, str(exc))
        else:
            raise AssertionError(f"{name} read {data[:20]!r}... without an error")
