"""TREC readers: real files in tmp_path for every rule and error path, and the Vaswani collection pinned."""

import tracemalloc
from pathlib import Path

import pytest

from assay.core.errors import AssayError, ConfigError, FormatError
from assay.inputs.formats import Doc, Qrel, Query
from assay.inputs.formats.trec import read_docs, read_qrels, read_run, read_topics

COLLECTIONS = Path(__file__).resolve().parents[3].parent / "shared" / "collections"
VASWANI = COLLECTIONS / "vaswani"


def write(tmp_path, text, name="file.trec"):
    path = tmp_path / name
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
    assert str(err).startswith(f"{path}:{line}: ")
    return str(err)


# --- documents --------------------------------------------------------------------------------


def test_docs_on_their_own_lines_keep_text_as_written(tmp_path):
    path = write(tmp_path, "<DOC>\n<DOCNO>1</DOCNO>\ncompact memories  have\nflexible capacities\n</DOC>\n\n"
                           "<DOC>\n<DOCNO> 007 </DOCNO>\n  indented &amp; kept\n\n</DOC>\n")
    assert list(read_docs(path)) == [
        Doc("1", "", "compact memories  have\nflexible capacities"),
        Doc("007", "", "indented &amp; kept"),
    ]


def test_docs_inline_several_on_a_line(tmp_path):
    path = write(tmp_path, "<DOC><DOCNO>a</DOCNO>first</DOC>  <doc><docno>b</docno> second </doc>\n"
                           "<DOC><DOCNO>c</DOCNO>spans\ntwo lines</DOC>")
    assert list(read_docs(path)) == [Doc("a", "", "first"), Doc("b", "", "second"), Doc("c", "", "spans\ntwo lines")]


def test_text_elements_and_headline(tmp_path):
    path = write(tmp_path, """\
<DOC>
<DOCNO> LA010189-0001 </DOCNO>
<DOCID> 1 </DOCID>
<HEADLINE>
<P>Storm hits <B>coast</B></P>
</HEADLINE>
<TEXT>
<P>
First paragraph.
</P>
<P>Second <F P=1>paragraph</F>.</P>
</TEXT>
<BYLINE>Someone</BYLINE>
<TEXT>Another text element.</TEXT>
</DOC>
""")
    assert list(read_docs(path)) == [Doc(
        "LA010189-0001", "Storm hits <B>coast</B>",
        "First paragraph.\n\nSecond <F P=1>paragraph</F>.\nAnother text element.",
    )]


def test_without_text_everything_but_docno_and_title_is_the_text(tmp_path):
    path = write(tmp_path, "<DOC>\n<DOCNO>d1</DOCNO>\n<TITLE>A title</TITLE>\nbody line\n<P>para</P>\n"
                           "<DATE>1990</DATE>\n</DOC>\n")
    assert list(read_docs(path)) == [Doc("d1", "A title", "body line\npara\n<DATE>1990</DATE>")]


def test_doc_errors_stream_the_records_before_them(tmp_path):
    path = write(tmp_path, "<DOC>\n<DOCNO>1</DOCNO>\nfine\n</DOC>\n<DOC>\nno id\n</DOC>\n")
    docs = read_docs(path)
    assert next(docs) == Doc("1", "", "fine")
    assert failure(docs, path, 5) == f"{path}:5: <DOC> without <DOCNO>; expected <DOCNO>id</DOCNO> in every <DOC>"


@pytest.mark.parametrize(("text", "line", "expected"), [
    ("<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n<DOC>\ntext\n<DOCNO>\n</DOCNO>\n</DOC>\n", 6,
     "empty <DOCNO>; expected <DOCNO>id</DOCNO>"),
    ("<DOC>\n<DOCNO>1</DOCNO>\nx\n<DOCNO>2</DOCNO>\n</DOC>\n", 4,
     "a second <DOCNO> in one <DOC>; expected exactly one"),
    ("<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n<DOC>\n\n\n<DOCNO>1</DOCNO>\n</DOC>\n", 7,
     "duplicate DOCNO '1'; expected each id once per file"),
    ("<DOC><DOCNO>1</DOCNO>a</DOC><DOC><DOCNO>1</DOCNO>b</DOC>\n", 1, "duplicate DOCNO '1'"),
    ("<DOC>\n<DOCNO>1</DOCNO>\n<DOC>\n<DOCNO>2</DOCNO>\n</DOC>\n", 3,
     "<DOC> inside the <DOC> opened on line 1; expected </DOC> first"),
    ("<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n\n<DOC>\n<DOCNO>2</DOCNO>\ntext\n", 5,
     "<DOC> never closed (end of file at line 7); expected </DOC>"),
    ("<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n</DOC>\n", 4, "</DOC> without an open <DOC>; expected <DOC> first"),
    ("stray words\n<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n", 1,
     "text outside a <DOC> block ('stray words'); expected only <DOC>...</DOC> blocks"),
    ("<DOC>\n<DOCNO>1</DOCNO>\n</DOC> trailing\n", 3, "text outside a <DOC> block ('trailing')"),
    ("<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n\n" + "x" * 50 + "\n", 5,
     "text outside a <DOC> block ('" + "x" * 37 + "...')"),
])
def test_doc_errors_name_the_line(tmp_path, text, line, expected):
    path = write(tmp_path, text)
    assert expected in failure(read_docs(path), path, line)


def test_invalid_utf8_and_missing_file(tmp_path):
    path = tmp_path / "bad.trec"
    path.write_bytes(b"<DOC>\n<DOCNO>1</DOCNO>\n\xe9t\xe9\n</DOC>\n")
    assert "not valid UTF-8" in failure(read_docs(path), path, 3)
    missing = tmp_path / "absent.trec"
    with pytest.raises(FormatError, match="absent.trec: cannot read: No such file or directory"):
        list(read_docs(missing))


# --- topics -----------------------------------------------------------------------------------

CLASSIC = """\
<top>

<head> Tipster Topic Description
<num> Number: 051
<dom> Domain: International Economics

<title> Topic: Airbus Subsidies

<desc> Description:
Document will discuss government assistance
to Airbus Industrie.

<narr> Narrative:
A relevant document will cite specific assistance.

</top>

<top>
<num> Number: 301 <title> International Organized Crime
<desc> Description: Identify organizations. <narr> Narrative: A relevant document names one.
</top>
"""


def test_vaswani_topic_form(tmp_path):
    path = write(tmp_path, "<top>\n<num>1</num><title>\nMEASUREMENT OF DIELECTRIC CONSTANT\n</title>\n</top>\n"
                           "<top><num> 2 </num><title>WAVEGUIDES</title></top>\n")
    assert list(read_topics(path)) == [Query("1", "MEASUREMENT OF DIELECTRIC CONSTANT"), Query("2", "WAVEGUIDES")]


@pytest.mark.parametrize(("fields", "texts"), [
    (("title",), ["Airbus Subsidies", "International Organized Crime"]),
    (("desc",), ["Document will discuss government assistance\nto Airbus Industrie.", "Identify organizations."]),
    (("title", "desc"), ["Airbus Subsidies Document will discuss government assistance\nto Airbus Industrie.",
                         "International Organized Crime Identify organizations."]),
    (("narr", "title"), ["A relevant document will cite specific assistance. Airbus Subsidies",
                         "A relevant document names one. International Organized Crime"]),
    ("desc", ["Document will discuss government assistance\nto Airbus Industrie.", "Identify organizations."]),
])
def test_classic_topics_choose_fields_and_drop_labels(tmp_path, fields, texts):
    path = write(tmp_path, CLASSIC)
    assert list(read_topics(path, fields=fields)) == [Query("051", texts[0]), Query("301", texts[1])]


def test_closed_description_tags_are_read_too(tmp_path):
    path = write(tmp_path, "<TOP><NUM>7</NUM><TITLE>t</TITLE><DESCRIPTION>d</DESCRIPTION></TOP>\n")
    assert list(read_topics(path, ("title", "desc"))) == [Query("7", "t d")]


@pytest.mark.parametrize("fields", [(), ("title", "query"), ["body"]])
def test_unknown_topic_fields_are_refused_at_the_call(tmp_path, fields):
    with pytest.raises(ConfigError, match="choose one or more of title, desc, narr"):
        read_topics(tmp_path / "never-opened.trec", fields)


@pytest.mark.parametrize(("text", "fields", "line", "expected"), [
    ("<top>\n<num>1</num><title>a</title>\n</top>\n<top>\n<title>b</title>\n</top>\n", ("title",), 4,
     "<top> without <num>; expected <num>id</num> in every topic"),
    ("<top>\n<num> Number: </num>\n<title>b</title>\n</top>\n", ("title",), 2,
     "empty <num>; expected <num>id</num> (or '<num> Number: id')"),
    ("<top>\n<num>1</num><title>a</title>\n</top>\n<top>\n\n<num>1</num><title>b</title>\n</top>\n", ("title",), 6,
     "duplicate topic number '1'; expected each id once per file"),
    (CLASSIC.replace("<desc> Description: Identify organizations. ", ""), ("title", "desc"), 18,
     "topic '301' has no <desc>; expected <title>, <desc> in every topic"),
    ("<top>\n<num>1</num>\n<title>\n</title>\n</top>\n", ("title",), 3,
     "topic '1' has empty <title>; expected query text"),
    ("<top>\n<num>1</num>\n<title> Topic: </title><desc></desc>\n</top>\n", ("title", "desc"), 3,
     "topic '1' has empty <title>, <desc>"),
    ("<top><num>1</num><title>a</title></top>\n# comment\n", ("title",), 2,
     "text outside a <top> block ('# comment')"),
    ("<top>\n<num>1</num><title>a</title>\n", ("title",), 1, "<top> never closed (end of file at line 2)"),
    ("<top>\n<num>1</num><top>\n", ("title",), 2, "<top> inside the <top> opened on line 1"),
])
def test_topic_errors_name_the_line(tmp_path, text, fields, line, expected):
    path = write(tmp_path, text)
    assert expected in failure(read_topics(path, fields), path, line)


# --- qrels and runs ---------------------------------------------------------------------------


def test_qrels_keep_every_grade(tmp_path):
    path = write(tmp_path, "1 0 1239 1\n\n1\t0\t007\t0\n  2 Q0 d-3 -1  \n2 0 d4 2\r\n", "qrels")
    assert list(read_qrels(path)) == [
        Qrel("1", "1239", 1), Qrel("1", "007", 0), Qrel("2", "d-3", -1), Qrel("2", "d4", 2),
    ]


@pytest.mark.parametrize(("text", "line", "expected"), [
    ("1 0 a 1\n1 0 b\n", 2, "expected 4 whitespace-separated columns 'query_id iteration doc_id relevance', "
                            "found 3: '1 0 b'"),
    ("1 0 a 1\n\n1 0 b 1 x\n", 3, "found 5"),
    ("1 0 a 1.5\n", 1, "relevance '1.5' is not an integer; expected 4 columns"),
    ("1 0 a rel\n", 1, "relevance 'rel' is not an integer"),
])
def test_qrels_errors_name_the_line(tmp_path, text, line, expected):
    path = write(tmp_path, text, "qrels")
    assert expected in failure(read_qrels(path), path, line)


def test_run_rows(tmp_path):
    path = write(tmp_path, "1 Q0 d1 1 12.5 bm25\n\n1 Q0 007 2 -3e-2 bm25\n2 0 d9 1 7 other\n", "run")
    assert list(read_run(path)) == [("1", "d1", 1, 12.5, "bm25"), ("1", "007", 2, -0.03, "bm25"),
                                    ("2", "d9", 1, 7.0, "other")]


@pytest.mark.parametrize(("text", "line", "expected"), [
    ("1 Q0 d1 1 1.0 tag\n1 Q0 d2 2 0.5\n", 2,
     "expected 6 whitespace-separated columns 'query_id Q0 doc_id rank score tag', found 5: '1 Q0 d2 2 0.5'"),
    ("1 Q0 d1 1 1.0 my tag\n", 1, "found 7"),
    ("1 Q0 d1 first 1.0 tag\n", 1, "rank 'first' is not an integer; expected 6 columns"),
    ("1 Q0 d1 1.0 1.0 tag\n", 1, "rank '1.0' is not an integer"),
    ("1 Q0 d1 1 high tag\n", 1, "score 'high' is not a finite number; expected 6 columns"),
    ("1 Q0 d1 1 nan tag\n", 1, "score 'nan' is not a finite number"),
    ("1 Q0 d1 1 1e999 tag\n", 1, "score '1e999' is not a finite number"),
])
def test_run_errors_name_the_line(tmp_path, text, line, expected):
    path = write(tmp_path, text, "run")
    assert expected in failure(read_run(path), path, line)


# --- Vaswani ----------------------------------------------------------------------------------

needs_vaswani = pytest.mark.skipif(not VASWANI.is_dir(), reason=f"reference collection not at {VASWANI}")


def pins(records):
    """Count, and the first, tenth and last record, without keeping the rest."""
    count, kept = 0, {}
    for count, record in enumerate(records, start=1):
        if count in (1, 10):
            kept[count] = record
        last = record
    return count, [_pin(kept[1]), _pin(kept[10]), _pin(last)]


def _pin(record):
    if isinstance(record, Doc):
        return record.doc_id, record.title, record.text[:40]
    if isinstance(record, Query):
        return record.query_id, record.text[:40]
    return record


@needs_vaswani
def test_vaswani_docs():
    assert pins(read_docs(VASWANI / "doc-text.trec")) == (11429, [
        ("1", "", "compact memories have flexible capacitie"),
        ("10", "", "highspeed microwave switching of semicon"),
        ("11429", "", "pattern detection and recognition  both "),
    ])


@needs_vaswani
def test_vaswani_topics():
    assert pins(read_topics(VASWANI / "query-text.trec")) == (93, [
        ("1", "MEASUREMENT OF DIELECTRIC CONSTANT OF LI"),
        ("10", "METHODS OF CALCULATING INSTANTANEOUS POW"),
        ("93", "HIGH FREQUENCY OSCILLATORS USING TRANSIS"),
    ])


@needs_vaswani
def test_vaswani_qrels():
    path = VASWANI / "qrels"
    assert pins(read_qrels(path)) == (2083, [Qrel("1", "1239", 1), Qrel("1", "6824", 1), Qrel("93", "11318", 1)])
    assert len({q.query_id for q in read_qrels(path)}) == 93


@needs_vaswani
def test_vaswani_docs_stream_in_bounded_memory():
    path = VASWANI / "doc-text.trec"
    assert path.stat().st_size > 3_000_000
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_docs(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 11429
    # The DOCNO set (11,429 short strings) and one document at a time; all documents would be about 6 MB.
    assert peak < 2_000_000, peak
