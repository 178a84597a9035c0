"""BEIR readers: real files in tmp_path for every rule and error path, and the SciFact collection pinned."""

import json
import tracemalloc
from pathlib import Path

import pytest

from assay.core.errors import AssayError, FormatError
from assay.inputs.formats import Doc, Qrel, Query
from assay.inputs.formats.beir import read_corpus, read_qrels, read_queries, splits

COLLECTIONS = Path(__file__).resolve().parents[3].parent / "shared" / "collections"
SCIFACT = COLLECTIONS / "scifact"
HEADER = "query-id\tcorpus-id\tscore"


def write(path, *lines):
    """Write lines (dicts become JSON, strings go in as they are), one per line, and return the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((json.dumps(line) if isinstance(line, dict) else line) + "\n" for line in lines)
    path.write_text(text, encoding="utf-8")
    return path


def failure(records, path, line):
    """The message of the FormatError raised while reading, checked to name the file and line."""
    with pytest.raises(FormatError) as info:
        for _ in records:
            pass
    err = info.value
    assert isinstance(err, AssayError) and err.exit_code == 1
    assert (err.path, err.line) == (str(path), line)
    message = str(err)
    assert message.startswith(f"{path}:{line}: " if line is not None else f"{path}: ")
    return message


# --- corpus and queries -----------------------------------------------------------------------


def test_corpus_records_keep_exact_ids_and_texts(tmp_path):
    path = write(
        tmp_path / "corpus.jsonl",
        {"_id": "007", "title": "Bond", "text": "Shaken,  not stirred.", "metadata": {"year": 1962}},
        {"_id": "8", "text": "No title at all."},
        "",
        {"_id": "9", "title": "", "text": "Empty title."},
        {"_id": "10", "title": "Title only", "text": ""},
        {"_id": "doc-11", "title": "Extra fields", "text": " kept as is ", "url": "http://x"},
    )
    assert list(read_corpus(path)) == [
        Doc("007", "Bond", "Shaken,  not stirred."),
        Doc("8", "", "No title at all."),
        Doc("9", "", "Empty title."),
        Doc("10", "Title only", ""),
        Doc("doc-11", "Extra fields", " kept as is "),
    ]


def test_queries_read_and_ignore_metadata(tmp_path):
    path = write(tmp_path / "queries.jsonl",
                 {"_id": "0", "text": "first claim", "metadata": {}},
                 {"_id": "01", "text": "second claim", "metadata": {"1": [{"label": "SUPPORT"}]}})
    assert list(read_queries(path)) == [Query("0", "first claim"), Query("01", "second claim")]


def test_byte_order_mark_and_crlf_are_tolerated(tmp_path):
    path = tmp_path / "queries.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"_id": "1", "text": "caf\xc3\xa9"}\r\n{"_id": "2", "text": "b"}\r\n')
    assert list(read_queries(path)) == [Query("1", "café"), Query("2", "b")]


def test_records_stream_before_a_later_error(tmp_path):
    path = write(tmp_path / "corpus.jsonl", {"_id": "1", "text": "fine"}, "{broken")
    records = read_corpus(path)
    assert next(records) == Doc("1", "", "fine")
    failure(records, path, 2)


GOOD = {"_id": "a", "title": "t", "text": "x"}


@pytest.mark.parametrize(("bad", "expected"), [
    ('{"_id": "b", "text": ', "invalid JSON (Expecting value at column 22); expected one document object per line"),
    ('["b", "text"]', "found a JSON array; expected one document object per line"),
    ({"title": "t", "text": "x"}, "missing '_id'; expected an object with '_id' and 'text'"),
    ({"_id": "b", "title": "t"}, "missing 'text'; expected an object with '_id' and 'text'"),
    ({"_id": 4983, "text": "x"}, "'_id' is a JSON number (4983); expected a string, e.g. \"_id\": \"...\""),
    ({"_id": "b", "title": None, "text": "x"}, "'title' is a JSON null (null); expected a string"),
    ({"_id": "b", "text": ["x"] * 20},
     "'text' is a JSON array ([\"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"...); expected a string"),
    ({"_id": "", "text": "x"}, "'_id' is empty; expected a non-empty id"),
    ({"_id": "  ", "text": "x"}, "'_id' is empty; expected a non-empty id"),
    ({"_id": "a", "text": "again"}, "duplicate _id 'a'; expected each id once per file"),
])
def test_corpus_errors_name_the_line(tmp_path, bad, expected):
    path = write(tmp_path / "corpus.jsonl", GOOD, "", bad)
    assert expected in failure(read_corpus(path), path, 3)


def test_a_document_with_neither_title_nor_text_is_read_as_it_is(tmp_path):
    # Cranfield ships two such documents, one judged relevant: the import keeps them and says so
    path = write(tmp_path / "corpus.jsonl", {"_id": "470", "text": "x"}, {"_id": "471", "title": " ", "text": ""},
                 {"_id": "995", "text": "\n"})
    assert list(read_corpus(path)) == [Doc("470", "", "x"), Doc("471", " ", ""), Doc("995", "", "\n")]


@pytest.mark.parametrize(("bad", "expected"), [
    ("not json", "invalid JSON (Expecting value at column 1); expected one query object per line"),
    ('"a string"', "found a JSON string; expected one query object per line"),
    ({"text": "q"}, "missing '_id'"),
    ({"_id": "q2"}, "missing 'text'"),
    ({"_id": "q2", "text": 7}, "'text' is a JSON number (7); expected a string"),
    ({"_id": "", "text": "q"}, "'_id' is empty"),
    ({"_id": "q1", "text": "q"}, "duplicate _id 'q1'; expected each id once per file"),
    ({"_id": "q2", "text": "  "}, "query 'q2' has blank 'text'; expected the query text"),
    ({"_id": "q2", "title": "titles do not count", "text": ""}, "query 'q2' has blank 'text'"),
])
def test_query_errors_name_the_line(tmp_path, bad, expected):
    path = write(tmp_path / "queries.jsonl", {"_id": "q1", "text": "fine"}, bad)
    assert expected in failure(read_queries(path), path, 2)


def test_invalid_utf8_names_its_line(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "1", "text": "a"}\n{"_id": "2", "text": "\xff"}\n')
    assert "not valid UTF-8" in failure(read_corpus(path), path, 2)


def test_missing_file_is_a_format_error(tmp_path):
    path = tmp_path / "nope.jsonl"
    assert "cannot read: No such file or directory" in failure(read_queries(path), path, None)


# --- qrels and splits -------------------------------------------------------------------------


def test_qrels_split_on_tabs_or_other_whitespace(tmp_path):
    path = write(tmp_path / "qrels" / "test.tsv", HEADER, "1\t31715818\t1", "", "q 2\td 3\t0", "  007   42  2  ",
                 "4 5 -1", "8\t9\t1\t")
    assert list(read_qrels(path)) == [
        Qrel("1", "31715818", 1), Qrel("q 2", "d 3", 0), Qrel("007", "42", 2), Qrel("4", "5", -1),
        Qrel("8", "9", 1),
    ]


def test_qrels_header_may_be_space_separated(tmp_path):
    path = write(tmp_path / "dev.tsv", "query-id corpus-id score", "1 2 1")
    assert list(read_qrels(path)) == [Qrel("1", "2", 1)]


@pytest.mark.parametrize(("lines", "line", "expected"), [
    ((), None, "empty file; expected the header 'query-id\\tcorpus-id\\tscore' on line 1"),
    (("1\t2\t1",), 1, "header missing: line 1 is already a judgment; expected the header "
                      "'query-id\\tcorpus-id\\tscore'"),
    (("query_id\tdoc_id\tscore", "1\t2\t1"), 1, "wrong header 'query_id\\tdoc_id\\tscore'; expected the header"),
    (("query-id\tcorpus-id", "1\t2"), 1, "wrong header"),
    ((HEADER, "1\t2\t1", "1\t3"), 3, "expected 3 columns 'query-id\\tcorpus-id\\tscore', found 2: '1\\t3'"),
    ((HEADER, "1\t2\t1", "", "1\t3\t1\textra"), 4, "found 4"),
    ((HEADER, "1 2 3 4"), 2, "found 4"),
    ((HEADER, "1\t2\t1.0"), 2, "score '1.0' is not an integer; expected a whole-number grade"),
    ((HEADER, "1\t2\tyes"), 2, "score 'yes' is not an integer"),
    ((HEADER, "1\t2\t1_0"), 2, "score '1_0' is not an integer"),
    ((HEADER, "\t2\t1"), 2, "empty query-id; expected 3 columns"),
    ((HEADER, "1\t\t1"), 2, "empty corpus-id; expected 3 columns"),
])
def test_qrels_errors_name_the_line(tmp_path, lines, line, expected):
    path = write(tmp_path / "test.tsv", *lines)
    assert expected in failure(read_qrels(path), path, line)


def test_splits_lists_the_qrels_files(tmp_path):
    write(tmp_path / "qrels" / "test.tsv", HEADER)
    write(tmp_path / "qrels" / "dev.tsv", HEADER)
    write(tmp_path / "qrels" / "notes.txt", "not a split")
    assert splits(tmp_path) == ["dev", "test"]
    assert splits(tmp_path / "qrels") == []


def test_splits_refuses_a_missing_directory(tmp_path):
    with pytest.raises(FormatError, match="not a directory; expected a BEIR dataset directory"):
        splits(tmp_path / "absent")


# --- SciFact ----------------------------------------------------------------------------------

needs_scifact = pytest.mark.skipif(not SCIFACT.is_dir(), reason=f"reference collection not at {SCIFACT}")


def pins(records):
    """Count, and the first, tenth and last record as (id, title[:40], text[:40]), without keeping the rest."""
    count, kept = 0, {}
    for count, record in enumerate(records, start=1):
        if count in (1, 10):
            kept[count] = record
        last = record
    return count, [_pin(kept[1]), _pin(kept[10]), _pin(last)]


def _pin(record):
    if isinstance(record, Doc):
        return record.doc_id, record.title[:40], record.text[:40]
    if isinstance(record, Query):
        return record.query_id, record.text[:40]
    return record


@needs_scifact
def test_scifact_corpus():
    assert pins(read_corpus(SCIFACT / "corpus.jsonl")) == (5183, [
        ("4983", "Microstructural development of human new", "Alterations of the architecture of cereb"),
        ("70490", "Simplifying likelihood ratios", "Likelihood ratios are one of the best me"),
        ("198309074", "Adhesion molecules and chemokines: relat", "Introduction: Among the inflammatory med"),
    ])


@needs_scifact
def test_scifact_queries():
    assert pins(read_queries(SCIFACT / "queries.jsonl")) == (1109, [
        ("0", "0-dimensional biomaterials lack inductiv"),
        ("15", "50% of patients exposed to radiation hav"),
        ("1395", "p16INK4A accumulation is  linked to an a"),
    ])


@needs_scifact
def test_scifact_test_qrels():
    assert splits(SCIFACT) == ["test"]
    path = SCIFACT / "qrels" / "test.tsv"
    assert pins(read_qrels(path)) == (339, [
        Qrel("1", "31715818", 1), Qrel("50", "12580014", 1), Qrel("1395", "17717391", 1),
    ])
    assert len({q.query_id for q in read_qrels(path)}) == 300


@needs_scifact
def test_scifact_corpus_streams_in_bounded_memory():
    path = SCIFACT / "corpus.jsonl"
    assert path.stat().st_size > 7_500_000
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_corpus(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 5183
    # The id set (5,183 short strings) and one line at a time; the whole file would be 8 MB.
    assert peak < 2_000_000, peak
