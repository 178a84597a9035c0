"""Quote resolution against a real corpus directory: exact spans, whitespace-tolerant, unique or an error."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.inputs.corpus import Corpus, load_corpus
from assay.core.errors import AssayError, JudgmentsError
from assay.inputs.judgments import load_judgments, resolve_gold
from assay.inputs.judgments.resolve import _why_not_read, find_quote, line_of, quote_pattern
from assay.inputs.corpus.files import Skipped
from assay.cli import cli


def setup(tmp_path, docs, records, prefix=""):
    """A corpus of docs {path: content} and a judgments file of records; returns (judgments, corpus)."""
    root = tmp_path / "corpus"
    for rel, content in docs.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    jpath = tmp_path / "judgments.jsonl"
    jpath.write_text(prefix + "".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return load_judgments(jpath), load_corpus(root)


def rec(query_id, *gold, category="normal"):
    entries = []
    for g in gold:
        if isinstance(g, tuple):
            doc, quote = g
            entries.append({"doc": doc, "quote": quote})
        else:
            entries.append(g)
    return {"query_id": query_id, "query": "q", "category": category, "form": "match", "gold": entries}


def resolve_one(tmp_path, text, quote, doc="a.md"):
    judgments, corpus = setup(tmp_path, {doc: text}, [rec("q1", (doc, quote))])
    (span,) = resolve_gold(judgments, corpus)
    return span, corpus.by_id()[doc].text


def resolve_problems(judgments, corpus):
    with pytest.raises(JudgmentsError) as info:
        resolve_gold(judgments, corpus)
    assert isinstance(info.value, AssayError) and info.value.exit_code == 3
    return info.value


# -- exact spans ------------------------------------------------------------------------------

def test_a_quote_found_once_resolves_to_its_exact_span(tmp_path):
    text = "The store keeps a log. Every page is 4096 bytes. Pages are cached.\n"
    span, _ = resolve_one(tmp_path, text, "Every page is 4096 bytes.")
    assert (span.start, span.end) == (23, 48)
    assert text[span.start:span.end] == "Every page is 4096 bytes."
    assert (span.query_id, span.gold_idx, span.doc_id, span.quote, span.grade) == (
        "q1", 0, "a.md", "Every page is 4096 bytes.", 1)
    assert not span.whole_doc


def test_spans_keep_gold_order_grade_and_index(tmp_path):
    docs = {"a.md": "alpha beta gamma\n", "sub/b.txt": "one two three\n"}
    records = [
        rec("q1", {"doc": "sub/b.txt", "quote": "two", "grade": 3}, {"doc": "a.md"}, ("a.md", "gamma"),
            category="ambiguous"),
        rec("q2", ("a.md", "alpha")),
    ]
    judgments, corpus = setup(tmp_path, docs, records)
    got = [(s.query_id, s.gold_idx, s.doc_id, s.grade, s.start, s.end, s.whole_doc) for s in resolve_gold(judgments, corpus)]
    assert got == [
        ("q1", 0, "sub/b.txt", 3, 4, 7, False),
        ("q1", 1, "a.md", 1, 0, 17, True),
        ("q1", 2, "a.md", 1, 11, 16, False),
        ("q2", 0, "a.md", 1, 0, 5, False),
    ]


def test_a_whole_document_entry_spans_all_of_the_text(tmp_path):
    docs = {"a.md": "  leading and trailing space  \n\n", "b.html": "<p>x &amp; y</p><p>z</p>"}
    judgments, corpus = setup(tmp_path, docs, [rec("q1", {"doc": "a.md"}, {"doc": "b.html"}, category="ambiguous")])
    spans = resolve_gold(judgments, corpus)
    texts = corpus.by_id()
    assert [(s.start, s.end, s.quote) for s in spans] == [
        (0, len(texts["a.md"].text), None), (0, len(texts["b.html"].text), None)]
    assert texts["b.html"].text == "x & y\n\nz\n" and spans[1].end == 9
    assert all(s.whole_doc for s in spans)


# -- whitespace and literal matching ----------------------------------------------------------

@pytest.mark.parametrize("text, quote, expected", [
    ("copies the main\nfile and the log", "main file and", "main\nfile and"),
    ("copies the main file and", "main\n   file", "main file"),
    ("a\tb  c\n\n d", "a b c d", "a\tb  c\n\n d"),
    ("x one two y", "one\t\ttwo", "one two"),
    ("unicode\u00a0space here", "unicode space", "unicode\u00a0space"),
])
def test_whitespace_runs_match_any_whitespace_run(tmp_path, text, quote, expected):
    span, doc_text = resolve_one(tmp_path, text, quote)
    assert doc_text[span.start:span.end] == expected


def test_whitespace_does_not_match_where_there_is_none(tmp_path):
    judgments, corpus = setup(tmp_path, {"a.md": "writeahead log\n"}, [rec("q1", ("a.md", "write ahead"))])
    (problem,) = resolve_problems(judgments, corpus).problems
    assert "quote not found in a.md" in problem


def test_leading_and_trailing_whitespace_in_a_quote_is_ignored(tmp_path):
    span, text = resolve_one(tmp_path, "before the words after", "  \n the words\t\n ")
    assert text[span.start:span.end] == "the words" and span.quote == "the words"


def test_matching_is_case_sensitive(tmp_path):
    judgments, corpus = setup(tmp_path, {"a.md": "The WAL mode allows readers.\n"},
                              [rec("q1", ("a.md", "wal mode"))])
    (problem,) = resolve_problems(judgments, corpus).problems
    assert problem.endswith("quote not found in a.md: 'wal mode'; "
                            "nearest passage (similarity 0.62, line 1, chars 4-12): 'WAL mode'")


@pytest.mark.parametrize("quote", ["cost (in $) is 3.5*x + [y]?", "a|b", "^start", "end$", "{1,2}", "back\\slash"])
def test_regex_metacharacters_are_literal(tmp_path, quote):
    text = f"prefix {quote} suffix\n"
    span, doc_text = resolve_one(tmp_path, text, quote)
    assert doc_text[span.start:span.end] == quote


def test_a_metacharacter_does_not_act_as_a_pattern(tmp_path):
    # as a regex "a.c" would match "abc" and "a+" would match "aaa"
    judgments, corpus = setup(tmp_path, {"a.md": "abc aaa\n"}, [rec("q1", ("a.md", "a.c"), ("a.md", "a+"),
                                                                      category="ambiguous")])
    assert len(resolve_problems(judgments, corpus).problems) == 2


# -- failures ---------------------------------------------------------------------------------

def test_a_missing_quote(tmp_path):
    judgments, corpus = setup(tmp_path, {"a.md": "some text\n"}, [rec("q1", ("a.md", "absent words"))])
    err = resolve_problems(judgments, corpus)
    assert err.problems == [f"{judgments.path}:1 (query q1): quote not found in a.md: 'absent words'; "
                            "no passage comes close (best similarity 0.29, line 1)"]
    assert str(err).startswith("1 gold entry did not resolve:\n")


def test_an_ambiguous_quote_gives_its_count_and_offsets(tmp_path):
    judgments, corpus = setup(tmp_path, {"a.md": "the cat sat. the cat ran. the cat hid.\n"},
                              [rec("q1", ("a.md", "the cat"))])
    assert resolve_problems(judgments, corpus).problems == [
        f"{judgments.path}:1 (query q1): quote is ambiguous, it occurs 3 times in a.md "
        "(at characters 0, 13, 26; lines 1, 1, 1); lengthen it until it is unique: 'the cat'"]


def test_overlapping_occurrences_count_as_ambiguous(tmp_path):
    judgments, corpus = setup(tmp_path, {"a.md": "xaaay\n"}, [rec("q1", ("a.md", "aa"))])
    (problem,) = resolve_problems(judgments, corpus).problems
    assert "it occurs 2 times in a.md (at characters 1, 2; lines 1, 1)" in problem
    assert find_quote("aaaa", "aa") == [(0, 2), (1, 3), (2, 4)]
    assert find_quote("a a a", "a a") == [(0, 3), (2, 5)]


def test_an_ambiguous_quote_lists_at_most_five_offsets(tmp_path):
    judgments, corpus = setup(tmp_path, {"a.md": "ab " * 8}, [rec("q1", ("a.md", "ab"))])
    (problem,) = resolve_problems(judgments, corpus).problems
    assert "it occurs 8 times in a.md (at characters 0, 3, 6, 9, 12; lines 1, 1, 1, 1, 1);" in problem


def test_a_document_not_in_the_corpus(tmp_path):
    docs = {"a.md": "text\n", ".hidden.md": "hidden text\n", "notes.py": "code\n"}
    records = [rec("q1", {"doc": "b.md"}), rec("q2", ("dir/a.md", "text")), rec("q3", ("notes.py", "code")),
               rec("q4", (".hidden.md", "hidden"))]
    judgments, corpus = setup(tmp_path, docs, records)
    not_read = {"notes.py": ": the file is there but was not read (not a format assay reads (it reads .md, "
                            ".markdown, .txt, .rst, .html, .htm, .pdf, .docx))",
                ".hidden.md": ": the file is there but was not read (hidden (the name starts with a dot))"}
    # a file that is there but not read says why; a path that is not there names the closest (a.md for both)
    closest = {"b.md": "; closest: a.md", "dir/a.md": "; closest: a.md"}
    assert resolve_problems(judgments, corpus).problems == [
        f"{judgments.path}:{i} (query q{i}): document {doc!r} is not in the corpus {corpus.root}"
        f"{not_read.get(doc, '')}{closest.get(doc, '')}"
        for i, doc in enumerate(["b.md", "dir/a.md", "notes.py", ".hidden.md"], start=1)]


SHOP = {"returns.md": "Refunds are issued within 14 days of the return.\n",
        "shipping.md": "Orders ship in two business days.\n", "faq/payments.md": "We take cards.\n"}


def test_a_mistyped_document_names_the_closest_paths(tmp_path):
    records = [rec("q-ship", ("shipping.md", "ship in two business days")),
               rec("q-refund", ("corpus/return.md", "Refunds are issued")),
               rec("q-pay", {"doc": "FAQ/Payments.md"}), rec("q-gift", {"doc": "gift-cards.pdf"}),
               rec("q-refund-2", {"doc": "corpus/return.md"})]  # the same path again: looked for once, said twice
    judgments, corpus = setup(tmp_path, SHOP, records)
    where = f"{judgments.path}:{{}} (query {{}}): document {{!r}} is not in the corpus {corpus.root}"
    assert resolve_problems(judgments, corpus).problems == [
        where.format(2, "q-refund", "corpus/return.md") + "; closest: returns.md",
        where.format(3, "q-pay", "FAQ/Payments.md") + "; closest: faq/payments.md",
        where.format(4, "q-gift", "gift-cards.pdf") + "; no path in it is close (3 documents): write the path "
                                                      "relative to the corpus directory",
        where.format(5, "q-refund-2", "corpus/return.md") + "; closest: returns.md"]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_mistyped_document_through_the_cli_and_a_run_that_writes_nothing(tmp_path):
    import duckdb
    from click.testing import CliRunner

    from assay.cli import cli

    judgments, corpus = setup(tmp_path, SHOP, [rec("q-ship", ("shipping.md", "ship in two business days"))])
    typo = tmp_path / "typo.jsonl"
    typo.write_text(judgments.path.read_text(encoding="utf-8") + json.dumps(
        {"query_id": "q-refund", "query": "when is my money back", "gold": [{"doc": "return.md"}]}) + "\n",
        encoding="utf-8")
    said = (f"error: 1 gold entry did not resolve:\n  {typo}:2 (query q-refund): document 'return.md' is not in the "
            f"corpus {corpus.root}; closest: returns.md\n")
    runner = CliRunner()
    check = runner.invoke(cli, ["judgments", "check", str(typo), "--corpus", str(corpus.root)])
    assert (check.exit_code, check.stdout, check.stderr) == (3, "", said)

    wh = tmp_path / "wh.duckdb"
    good = runner.invoke(cli, ["run", "--corpus", str(corpus.root), "--judgments", str(judgments.path),
                               "--warehouse", str(wh)])
    assert good.exit_code == 0, good.output
    tables = ("runs", "judgment_sets", "queries", "judgment_gold", "gold_spans", "documents", "chunks")

    def counts():
        with duckdb.connect(str(wh), read_only=True) as con:
            return {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in tables}

    before = counts()
    bad = runner.invoke(cli, ["run", "--corpus", str(corpus.root), "--judgments", str(typo), "--warehouse", str(wh)])
    assert bad.exit_code == 3 and bad.stderr.endswith(said)
    assert counts() == before and before["runs"] == 1  # nothing half-done: the failed run left no row anywhere


def test_every_failure_is_reported_at_once(tmp_path):
    docs = {"a.md": "one two one\n", "b.md": "three four\n"}
    records = [
        rec("q1", ("a.md", "two")),
        rec("q2", ("a.md", "one"), ("b.md", "five"), ("b.md", "four"), category="ambiguous"),
        rec("q3", ("c.md", "x")),
    ]
    judgments, corpus = setup(tmp_path, docs, records)
    err = resolve_problems(judgments, corpus)
    path = judgments.path
    assert err.problems == [
        f"{path}:2 (query q2): quote is ambiguous, it occurs 2 times in a.md (at characters 0, 8; lines 1, 1); "
        "lengthen it until it is unique: 'one'",
        f"{path}:2 (query q2): quote not found in b.md: 'five'; no passage comes close (best similarity 0.25, line 1)",
        f"{path}:3 (query q3): document 'c.md' is not in the corpus {corpus.root}; closest: a.md, b.md",
    ]
    assert str(err).splitlines()[0] == "3 gold entries did not resolve:"


def test_line_numbers_follow_the_judgments_file(tmp_path):
    judgments, corpus = setup(tmp_path, {"a.md": "text\n"}, [rec("q1", ("a.md", "nope"))], prefix="\n  \n")
    (problem,) = resolve_problems(judgments, corpus).problems
    assert problem.startswith(f"{judgments.path}:3 (query q1): ")


# -- HTML documents ---------------------------------------------------------------------------

def test_quotes_in_html_resolve_against_the_reduced_text(tmp_path):
    html = ("<html><head><title>Ignored title</title></head><body>\n<h1>Backups</h1>\n"
            "<p>Yes, the <b>online backup</b> copies pages while readers continue.</p>\n"
            "<p>A page is 4096 bytes &amp; fixed.</p></body></html>")
    docs = {"faq.html": html}
    records = [rec("q1", ("faq.html", "the online backup copies pages"), ("faq.html", "Backups Yes, the"),
                   ("faq.html", "4096 bytes & fixed"), category="ambiguous")]
    judgments, corpus = setup(tmp_path, docs, records)
    text = corpus.by_id()["faq.html"].text
    got = [text[s.start:s.end] for s in resolve_gold(judgments, corpus)]
    assert got == ["the online backup copies pages", "Backups\n\nYes, the", "4096 bytes & fixed"]


def test_html_markup_is_not_matchable(tmp_path):
    docs = {"p.html": "<p>the <b>online</b> backup</p>"}
    judgments, corpus = setup(tmp_path, docs, [rec("q1", ("p.html", "<b>online</b>")), rec("q2", ("p.html", "Ignored"))])
    assert len(resolve_problems(judgments, corpus).problems) == 2


def test_quote_pattern_is_literal_with_flexible_whitespace():
    pattern = quote_pattern(" a.b \n c* ")
    assert pattern.fullmatch("a.b\t\t c*")
    assert not pattern.fullmatch("axb c*")
    assert not pattern.fullmatch("a.bc*")


def test_line_of_counts_the_newlines_before_the_offset():
    """line_of: the 1-based line of an offset."""
    assert line_of("\nabc", 2) == 2
    assert line_of("\nabc", 0) == 1
    assert line_of("a\nb\nc", 4) == 3


def corpus(*skipped):
    return Corpus(Path("."), "h", (), skipped=tuple(Skipped(path, "", reason) for path, reason in skipped))


def test_why_a_file_was_not_read():
    """A document the corpus skipped is named with the reason it was not read, itself or the directory above it."""
    assert _why_not_read(corpus(("a.pdf", "encrypted")), "a.pdf") == (
        ": the file is there but was not read (encrypted)")
    assert _why_not_read(corpus(("dir/", "unreadable")), "dir/a.txt") == (
        ": it lies under dir/, which is there but was not read (unreadable)")
    # a skipped file is not a directory: another file whose id starts with its name was not skipped with it
    assert _why_not_read(corpus(("a.pdf", "encrypted")), "a.pdf.txt") == ""
    assert _why_not_read(corpus(("dir/", "unreadable")), "other/a.txt") == ""
    assert _why_not_read(corpus(), "a.txt") == ""


def test_every_gold_entry_of_a_question_is_resolved_after_one_fails(tmp_path):
    """Every gold entry of a question is resolved after one fails, and every problem is listed.

    One question whose gold names a document not in the corpus, quotes an empty document, and quotes 'abxy',
    whose nearest passage 'abcd' has similarity exactly 0.5 (MIN_SHOWN_SIMILARITY: shown). Every problem is listed.
    Kills assay.inputs.judgments.resolve.x_resolve_gold__mutmut_15 (`continue` as `break` after the missing document),
    _34 (the empty-document message None), _35 (`break` after the empty document) and
    assay.inputs.judgments.resolve.x_not_found_message__mutmut_10 (`<` as `<=`: 'no passage comes close')."""
    from assay.inputs.corpus import load_corpus
    from assay.inputs.judgments import load_judgments, resolve_gold

    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.md").write_text("abcd\n", encoding="utf-8")
    (root / "empty.md").write_text("", encoding="utf-8")
    record = {"query_id": "q1", "query": "q", "category": "normal", "form": "match",
              "gold": [{"doc": "zz.md"}, {"doc": "empty.md", "quote": "x"}, {"doc": "a.md", "quote": "abxy"}]}
    path = tmp_path / "judgments.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    judgments, corpus = load_judgments(path), load_corpus(root)
    with pytest.raises(JudgmentsError) as error:
        resolve_gold(judgments, corpus)
    where = f"{judgments.path}:1 (query q1)"
    assert error.value.problems == [
        f"{where}: document 'zz.md' is not in the corpus {corpus.root}; closest: a.md",
        f"{where}: empty.md is empty (no text to quote; the corpus keeps it so it can be judged whole): drop the "
        "quote to judge the whole document, or give the file text: 'x'",
        f"{where}: quote not found in a.md: 'abxy'; nearest passage (similarity 0.50, line 1, chars 0-4): 'abcd'"]
