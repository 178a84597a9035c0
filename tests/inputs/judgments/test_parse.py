"""Strict parsing of judgments JSONL: every error names file and line, and all are reported at once."""

import hashlib
import json

import pytest

from assay.core.errors import AssayError, JudgmentsError
from assay.inputs.judgments import load_judgments, parse_judgments

EXAMPLE = ('{"query_id": "q-refund", "query": "How long do refunds take?", "gold": [{"doc": "returns.md", '
           '"quote": "Refunds are issued within 14 days"}]}')
ALLOWED = "query_id, query, category, form, hard_class, gold, unanswerable, notes, review"


def record(query_id="q1", **fields):
    base = {"query_id": query_id, "query": "what is it", "category": "normal", "form": "match",
            "gold": [{"doc": "a.md", "quote": "it is"}]}
    base.update(fields)
    return base


def write(tmp_path, *lines, name="j.jsonl"):
    """Write lines (dicts become JSON, strings go in as they are) and return the path."""
    path = tmp_path / name
    text = "\n".join(json.dumps(line) if isinstance(line, dict) else line for line in lines) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def problems(path):
    with pytest.raises(JudgmentsError) as info:
        load_judgments(path)
    err = info.value
    assert isinstance(err, AssayError) and err.exit_code == 3
    return err.problems


def only_problem(tmp_path, *lines):
    path = write(tmp_path, *lines)
    found = problems(path)
    assert len(found) == 1, found
    return path, found[0]


# -- a valid file -----------------------------------------------------------------------------

def test_a_valid_file_parses_with_defaults(tmp_path):
    path = write(
        tmp_path,
        record("a1", gold=[{"doc": "dir/a.md", "quote": "  spaced quote \n"}]),
        record("a2", query="  padded query  ", hard_class="near-duplicate", notes="a note",
               gold=[{"doc": "b.md", "grade": 3}]),
        record("a3", category="no_answer", form="gap", gold=[], unanswerable="out_of_corpus"),
        record("a4", category="ambiguous", gold=[{"doc": "a.md", "quote": "x"}, {"doc": "a.md", "quote": "y"}]),
        record("a5", category="adversarial", gold=[{"doc": "a.md"}]),
        record("a6", category="no_answer", gold=[]),
    )
    js = load_judgments(path)
    assert js.path == path
    assert [j.query_id for j in js.judgments] == ["a1", "a2", "a3", "a4", "a5", "a6"]
    a1, a2, a3, a4, a5, a6 = js.judgments
    assert a1.hard_class == "normal" and a1.notes is None and a1.unanswerable is None
    assert a1.gold[0].doc == "dir/a.md" and a1.gold[0].quote == "spaced quote" and a1.gold[0].grade == 1
    assert (a2.query, a2.hard_class, a2.notes) == ("padded query", "near-duplicate", "a note")
    assert a2.gold[0].quote is None and a2.gold[0].grade == 3
    assert (a3.category, a3.form, a3.gold, a3.unanswerable, a3.answerable) == ("no_answer", "gap", (), "out_of_corpus", False)
    assert a4.answerable and len(a4.gold) == 2
    assert a5.category == "adversarial" and a6.unanswerable is None
    assert [j.line for j in js.judgments] == [1, 2, 3, 4, 5, 6]


def test_judgments_hash_is_sha256_of_the_raw_bytes(tmp_path):
    path = write(tmp_path, record("q1"))
    raw = path.read_bytes()
    assert load_judgments(path).sha256 == hashlib.sha256(raw).hexdigest()
    # bytes that do not change the parse still change the hash
    path.write_bytes(raw + b"\n\n")
    assert load_judgments(path).sha256 == hashlib.sha256(raw + b"\n\n").hexdigest() != hashlib.sha256(raw).hexdigest()


def test_parse_judgments_takes_bytes_and_a_path_for_messages(tmp_path):
    data = (json.dumps(record("q1")) + "\n").encode("utf-8")
    js = parse_judgments(data, tmp_path / "named.jsonl")
    assert js.sha256 == hashlib.sha256(data).hexdigest() and js.path == tmp_path / "named.jsonl"
    with pytest.raises(JudgmentsError) as info:
        parse_judgments(b"{}\n", tmp_path / "named.jsonl")
    assert info.value.problems == [f"{tmp_path / 'named.jsonl'}:1: missing field(s) query_id, query, gold (every "
                                   "question needs query_id, query and gold; category and form are optional)"]


def test_blank_lines_are_skipped_but_counted(tmp_path):
    path = write(tmp_path, "", record("q1"), "   ", "\t", record("q2"), "", "", "{bad")
    assert problems(path) == [f"{path}:8: not valid JSON (Expecting property name enclosed in double quotes at column 2)"]
    path = write(tmp_path, "", record("q1"), "   ", record("q2"))
    assert [j.line for j in load_judgments(path).judgments] == [2, 4]


def test_crlf_line_endings(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(("\r\n".join(json.dumps(record(q)) for q in ("q1", "q2")) + "\r\n\r\n").encode())
    assert [j.line for j in load_judgments(path).judgments] == [1, 2]


def test_unicode_line_separators_inside_strings_do_not_break_lines(tmp_path):
    # JSON allows U+2028, U+0085 and a form feed raw inside strings; only "\n" ends a JSONL line
    path = tmp_path / "j.jsonl"
    lines = [json.dumps(record("q1", query="first\u2028second\x85third\x0cfourth"), ensure_ascii=False),
             json.dumps(record("q2"))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    js = load_judgments(path)
    assert js.judgments[0].query == "first\u2028second\x85third\x0cfourth"
    assert [j.line for j in js.judgments] == [1, 2]


def test_missing_file(tmp_path):
    with pytest.raises(JudgmentsError) as info:
        load_judgments(tmp_path / "nope.jsonl")
    assert info.value.problems == [f"{tmp_path / 'nope.jsonl'}: judgments file not found"]
    assert str(info.value).startswith("cannot read judgments:")


# -- file-level errors ------------------------------------------------------------------------

def test_non_utf8_file(tmp_path):
    path = tmp_path / "j.jsonl"
    raw = json.dumps(record("q1")).encode() + b"\n{\"query\": \"caf\xe9\"}\n"
    path.write_bytes(raw)
    bad_at = raw.index(b"\xe9")
    assert problems(path) == [f"{path}: not valid UTF-8 (byte {bad_at}); re-save it as UTF-8"]


@pytest.mark.parametrize("content", ["", "\n", "  \n\n\t\n"])
def test_empty_file(tmp_path, content):
    path = tmp_path / "j.jsonl"
    path.write_text(content)
    assert problems(path) == [f"{path}: no judgments found; a golden set is JSONL: one JSON object per line, one "
                              f"line per question, like: {EXAMPLE}"]


# -- line-level errors ------------------------------------------------------------------------

@pytest.mark.parametrize("line", ["{not json", '{"query_id": "q1",}', "{'single': 'quotes'}", "nul", '{"a": 1} {"b": 2}'])
def test_invalid_json(tmp_path, line):
    path, problem = only_problem(tmp_path, record("q0"), line)
    assert problem.startswith(f"{path}:2: not valid JSON (") and " at column " in problem


@pytest.mark.parametrize("line", ["[1, 2]", '"a string"', "42", "null", "true"])
def test_a_line_that_is_not_an_object(tmp_path, line):
    path, problem = only_problem(tmp_path, record("q0"), line)
    assert problem == f"{path}:2: each line must be a JSON object"


NEEDS = "(every question needs query_id, query and gold; category and form are optional)"


def test_missing_fields(tmp_path):
    path, problem = only_problem(tmp_path, {"query_id": "q1"})
    assert problem == f"{path}:1: missing field(s) query, gold {NEEDS}"
    path, problem = only_problem(tmp_path, {k: v for k, v in record("q1").items() if k != "gold"})
    assert problem == f"{path}:1: missing field(s) gold {NEEDS}"


def test_unknown_top_level_fields(tmp_path):
    path, problem = only_problem(tmp_path, record("q1", zeta=1, answer="x"))
    assert problem == f"{path}:1: unknown field(s) answer, zeta; allowed: {ALLOWED}"


def test_an_unknown_field_names_the_one_a_person_meant(tmp_path):
    """A habit (id, question), a typo (categroy, from) or a gold entry's field written on the question."""
    path = write(tmp_path, {"id": "q1", "question": "what is it", "categroy": "normal", "from": "match",
                            "doc": "a.md", "quote": "it is"})
    assert problems(path) == [
        f"{path}:1: unknown field(s) categroy, doc, from, id, question, quote; allowed: {ALLOWED} ('categroy': "
        "write 'category'; 'doc' belongs in a gold entry: \"gold\": [{\"doc\": ..., \"quote\": ...}]; 'from': "
        "write 'form'; 'id': write 'query_id'; 'question': write 'query'; 'quote' belongs in a gold entry: "
        "\"gold\": [{\"doc\": ..., \"quote\": ...}])",
        f"{path}:1: missing field(s) query_id, query, gold {NEEDS}"]


def test_unknown_gold_fields(tmp_path):
    path, problem = only_problem(tmp_path, record("q1", gold=[{"doc": "a.md", "quote": "q", "page": 3, "char": 1}]))
    assert problem == f"{path}:1 (query q1) gold[0]: unknown field(s) char, page; allowed: doc, quote, grade"


@pytest.mark.parametrize("qid", ["", " q1", "has space", "-lead", ".lead", "q1\n", "é", "q1!", 7, None, ["q1"]])
def test_bad_query_id(tmp_path, qid):
    path, problem = only_problem(tmp_path, record(qid))
    assert problem == f"{path}:1: query_id {qid!r} must be a string of letters, digits and . _ : / -"


@pytest.mark.parametrize("qid", ["q1", "Q", "0", "a.b_c:d/e-f", "set/2024:q-01"])
def test_good_query_ids(tmp_path, qid):
    assert load_judgments(write(tmp_path, record(qid))).judgments[0].query_id == qid


def test_duplicate_query_id_names_the_first_line(tmp_path):
    path = write(tmp_path, record("q1"), "", record("q2"), record("q1"), record("q1"))
    assert problems(path) == [
        f"{path}:4: duplicate query_id 'q1' (first on line 1); give each question an id of its own",
        f"{path}:5: duplicate query_id 'q1' (first on line 1); give each question an id of its own",
    ]


def test_lines_in_any_order(tmp_path):
    """Order is for the diff (assay judgments fmt sorts): the parser keeps the file's order and its line numbers."""
    path = write(tmp_path, record("q1"), record("q3"), record("q2"), "", record("a0"))
    js = load_judgments(path)
    assert [(j.query_id, j.line) for j in js.judgments] == [("q1", 1), ("q3", 2), ("q2", 3), ("a0", 5)]


@pytest.mark.parametrize("field, value, says", [
    ("category", "easy", "category 'easy' is not one of normal, ambiguous, adversarial, no_answer (or leave it "
                         "out: the question is then unlabeled)"),
    ("category", None, "category None is not one of normal, ambiguous, adversarial, no_answer (or leave it "
                       "out: the question is then unlabeled)"),
    ("form", "exact", "form 'exact' is not one of match, gap (or leave it out: the question is then unlabeled)"),
    ("form", "", "form '' is not one of match, gap (or leave it out: the question is then unlabeled)"),
    ("query", "", "'query' must be a non-empty string"),
    ("query", "  ", "'query' must be a non-empty string"),
    ("query", 3, "'query' must be a non-empty string"),
    ("hard_class", "", "'hard_class' must be a non-empty string"),
    ("notes", ["x"], "'notes' must be a non-empty string"),
    ("gold", {"doc": "a.md"}, "'gold' must be a list of entries like {\"doc\": \"file.md\", \"quote\": \"...\"} "
                              "([] when the corpus holds no answer)"),
])
def test_bad_field_values(tmp_path, field, value, says):
    path, problem = only_problem(tmp_path, record("q1", **{field: value}))
    assert problem == f"{path}:1 (query q1): {says}"


def test_bad_unanswerable(tmp_path):
    path, problem = only_problem(tmp_path, record("q1", category="no_answer", gold=[], unanswerable="maybe"))
    assert problem == f"{path}:1 (query q1): unanswerable 'maybe' is not one of near_miss, out_of_corpus, under_specified"


@pytest.mark.parametrize("category", ["normal", "ambiguous", "adversarial"])
def test_unanswerable_on_an_answerable_question(tmp_path, category):
    gold = [{"doc": "a.md", "quote": "x"}, {"doc": "b.md"}]
    path, problem = only_problem(tmp_path, record("q1", category=category, gold=gold, unanswerable="near_miss"))
    assert problem == (f"{path}:1 (query q1): 'unanswerable' is only allowed on no_answer questions (set "
                       "\"category\": \"no_answer\", or drop it)")


def test_no_answer_with_gold(tmp_path):
    path, problem = only_problem(tmp_path, record("q1", category="no_answer"))
    assert problem == (f"{path}:1 (query q1): a no_answer question must have an empty gold list (or another "
                       "category, when the corpus answers it)")


@pytest.mark.parametrize("category, article", [("normal", "a"), ("adversarial", "an"), ("unlabeled", "an")])
def test_answerable_question_without_gold(tmp_path, category, article):
    path, problem = only_problem(tmp_path, record("q1", category=category, gold=[]))
    assert problem == (f"{path}:1 (query q1): {article} {category} question needs at least one gold entry (or "
                       "category no_answer, when the corpus holds no answer to it)")


@pytest.mark.parametrize("gold", [[], [{"doc": "a.md", "quote": "x"}]])
def test_ambiguous_needs_two_gold_entries(tmp_path, gold):
    path, problem = only_problem(tmp_path, record("q1", category="ambiguous", gold=gold))
    assert problem == (f"{path}:1 (query q1): an ambiguous question needs at least two gold entries, one per "
                       "reading (or category normal)")


# -- gold entries -----------------------------------------------------------------------------

@pytest.mark.parametrize("doc, says", [
    ("/abs/a.md", "doc '/abs/a.md' is absolute; write it relative to the corpus directory"),
    ("C:/docs/a.md", "doc 'C:/docs/a.md' is absolute; write it relative to the corpus directory"),
    ("../a.md", "doc '../a.md' contains '..'; write it relative to the corpus directory"),
    ("dir/../a.md", "doc 'dir/../a.md' contains '..'; write it relative to the corpus directory"),
    ("dir\\a.md", "doc 'dir\\\\a.md' uses backslashes; write corpus-relative paths with forward slashes"),
    ("./a.md", "doc './a.md' is not normalized; write it like 'dir/file.md'"),
    ("a//b.md", "doc 'a//b.md' is not normalized; write it like 'dir/file.md'"),
    ("a/./b.md", "doc 'a/./b.md' is not normalized; write it like 'dir/file.md'"),
    ("dir/", "doc 'dir/' is not normalized; write it like 'dir/file.md'"),
    ("", "'doc' must be a non-empty string"),
    ("  ", "'doc' must be a non-empty string"),
    (5, "'doc' must be a non-empty string"),
])
def test_bad_doc_paths(tmp_path, doc, says):
    path, problem = only_problem(tmp_path, record("q1", gold=[{"doc": doc, "quote": "x"}]))
    assert problem == f"{path}:1 (query q1) gold[0]: {says}"


def test_gold_entry_without_doc_or_not_an_object(tmp_path):
    path = write(tmp_path, record("q1", gold=[{"quote": "x"}, "a.md"]))
    assert problems(path) == [
        f"{path}:1 (query q1) gold[0]: missing 'doc' (the document's path, relative to the corpus directory)",
        f"{path}:1 (query q1) gold[1]: must be an object like {{\"doc\": ..., \"quote\": ...}}",
    ]


@pytest.mark.parametrize("quote", ["", "   ", "\n\t", None, 3, ["x"]])
def test_empty_or_non_string_quote(tmp_path, quote):
    path, problem = only_problem(tmp_path, record("q1", gold=[{"doc": "a.md", "quote": quote}]))
    assert problem == (f"{path}:1 (query q1) gold[0]: 'quote' must be a non-empty string "
                       "(omit it to judge the whole document)")


@pytest.mark.parametrize("grade", [0, -1, 1.5, 2.0, True, False, "2", None])
def test_bad_grade(tmp_path, grade):
    path, problem = only_problem(tmp_path, record("q1", gold=[{"doc": "a.md", "quote": "x", "grade": grade}]))
    assert problem == f"{path}:1 (query q1) gold[0]: 'grade' must be an integer of at least 1, got {grade!r}"


def test_good_grades(tmp_path):
    gold = [{"doc": "a.md", "quote": "x", "grade": 1}, {"doc": "a.md", "quote": "y", "grade": 7}, {"doc": "b.md"}]
    js = load_judgments(write(tmp_path, record("q1", gold=gold)))
    assert [g.grade for g in js.judgments[0].gold] == [1, 7, 1]


def test_duplicate_gold_entries(tmp_path):
    gold = [{"doc": "a.md", "quote": "same"}, {"doc": "a.md", "quote": "  same "}, {"doc": "b.md"},
            {"doc": "b.md", "grade": 2}, {"doc": "a.md", "quote": "other"}, {"doc": "c.md", "quote": "same"}]
    path = write(tmp_path, record("q1", gold=gold))
    assert problems(path) == [
        f"{path}:1 (query q1): gold entry 'a.md' 'same' is listed twice; keep one",
        f"{path}:1 (query q1): gold entry 'b.md' None is listed twice; keep one",
    ]


# -- everything at once -----------------------------------------------------------------------

def test_every_problem_is_reported_at_once(tmp_path):
    path = write(
        tmp_path,
        record("q1"),
        "{oops",
        record("q2", category="weird", gold=[{"doc": "../x.md", "quote": ""}]),
        "",
        record("q2"),
        record("q0", extra=True),
        record("q5", gold=[{"doc": "a.md", "grade": 0}]),
    )
    with pytest.raises(JudgmentsError) as info:
        load_judgments(path)
    found = info.value.problems
    assert found == [
        f"{path}:2: not valid JSON (Expecting property name enclosed in double quotes at column 2)",
        f"{path}:3 (query q2): category 'weird' is not one of normal, ambiguous, adversarial, no_answer (or leave "
        "it out: the question is then unlabeled)",
        f"{path}:3 (query q2) gold[0]: doc '../x.md' contains '..'; write it relative to the corpus directory",
        f"{path}:5: duplicate query_id 'q2' (first on line 3); give each question an id of its own",
        f"{path}:6: unknown field(s) extra; allowed: {ALLOWED}",
        f"{path}:7 (query q5) gold[0]: 'grade' must be an integer of at least 1, got 0",
    ]
    message = str(info.value)
    assert message.splitlines()[0] == f"6 problem(s) in {path}:"
    assert message.splitlines()[1:] == ["  " + p for p in found]
    assert info.value.exit_code == 3


# -- written by hand --------------------------------------------------------------------------
# Each through the library and through `assay judgments check` (CliRunner, exact output and exit code).

SHOP = {"returns.md": "Refunds are issued within 14 days of the return.\n",
        "shipping.md": "Orders ship in two business days.\n"}
REFUND = {"query_id": "q-refund", "query": "When will I get my money back?",
          "gold": [{"doc": "returns.md", "quote": "Refunds are issued within 14 days"}]}
SHIP = {"query_id": "q-ship", "query": "how fast do orders ship", "category": "normal", "form": "match",
        "gold": [{"doc": "shipping.md", "quote": "ship in two business days"}]}


@pytest.fixture
def shop(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    for name, text in SHOP.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def check(path, corpus):
    from click.testing import CliRunner

    from assay.cli import cli

    return CliRunner().invoke(cli, ["judgments", "check", str(path), "--corpus", str(corpus)])


def refused(path, corpus):
    """The library's error and the CLI's: exit 3, nothing on stdout, stderr the same error."""
    with pytest.raises(JudgmentsError) as info:
        load_judgments(path)
    result = check(path, corpus)
    assert (result.exit_code, result.stdout, result.stderr) == (3, "", f"error: {info.value}\n")
    return str(info.value).splitlines()


def test_category_and_form_may_be_left_out(tmp_path, shop):
    path = write(tmp_path, SHIP, REFUND, {**REFUND, "query_id": "q-gap", "form": "gap"},
                 {**REFUND, "query_id": "q-said", "category": "unlabeled", "form": "unlabeled"})
    js = load_judgments(path)
    assert [(j.query_id, j.category, j.form, j.answerable) for j in js.judgments] == [
        ("q-ship", "normal", "match", True), ("q-refund", "unlabeled", "unlabeled", True),
        ("q-gap", "unlabeled", "gap", True), ("q-said", "unlabeled", "unlabeled", True)]
    result = check(path, shop)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[1:3] == ["  category:   normal 1, unlabeled 3",
                                               "  form:       gap 1, match 1, unlabeled 2"]


def test_a_byte_order_mark_is_skipped(tmp_path, shop):
    path = tmp_path / "bom.jsonl"
    data = "\ufeff".encode("utf-8") + (json.dumps(SHIP) + "\n" + json.dumps(REFUND) + "\n").encode("utf-8")
    path.write_bytes(data)
    js = load_judgments(path)
    assert [(j.query_id, j.line) for j in js.judgments] == [("q-ship", 1), ("q-refund", 2)]
    assert js.sha256 == hashlib.sha256(data).hexdigest()  # the hash is still of the bytes as they are
    assert check(path, shop).exit_code == 0
    # a problem on the first line is still line 1, and not about the mark
    path.write_bytes("\ufeff".encode("utf-8") + json.dumps({**SHIP, "form": "exact"}).encode("utf-8"))
    assert refused(path, shop)[1] == (f"  {path}:1 (query q-ship): form 'exact' is not one of match, gap (or leave "
                                      "it out: the question is then unlabeled)")


def test_utf16_says_to_save_as_utf8(tmp_path, shop):
    path = tmp_path / "j.jsonl"
    path.write_bytes((json.dumps(SHIP) + "\n").encode("utf-16"))
    assert refused(path, shop) == [f"cannot read {path}:",
                                   f"  {path}: UTF-16 (it starts with a UTF-16 byte-order mark); re-save it as UTF-8"]


def test_a_json_array_is_answered_with_jsonl_and_the_exact_conversion(tmp_path, shop):
    import shutil
    import subprocess
    import sys

    path = tmp_path / "golden.json"
    path.write_text(json.dumps([SHIP, REFUND], indent=2), encoding="utf-8")
    target = tmp_path / "golden.jsonl"
    jq = f"jq -c '.[]' {path} > {target}"
    python = ("python -c \"import json, sys; [print(json.dumps(q, ensure_ascii=False)) for q in "
              f"json.load(sys.stdin)]\" < {path} > {target}")
    assert refused(path, shop) == [
        f"{path} is a JSON array of 2 items, not JSONL:",
        f"  {path}: a golden set is JSONL: one JSON object per line, one line per question, with no [ ] around the "
        "objects and no commas between them; its first item as a line:",
        "  " + json.dumps(SHIP),
        f"  convert it with: {jq}",
        f"  or, without jq: {python}"]
    # the commands offered do convert it: the result parses to the same questions
    expected = [(j.query_id, j.query, j.gold) for j in load_judgments(write(tmp_path, SHIP, REFUND)).judgments]
    commands = [python.replace("python -c", f"{sys.executable} -c", 1)]
    if shutil.which("jq"):  # jq is not a dependency of assay; the Python line is checked everywhere
        commands.append(jq)
    for command in commands:
        target.unlink(missing_ok=True)
        subprocess.run(command, shell=True, check=True)
        assert [(j.query_id, j.query, j.gold) for j in load_judgments(target).judgments] == expected
        assert check(target, shop).exit_code == 0


def test_an_array_named_jsonl_is_converted_beside_it_and_an_array_of_non_objects_shows_a_line(tmp_path, shop):
    path = tmp_path / "golden.jsonl"
    path.write_text(json.dumps([SHIP]), encoding="utf-8")
    assert refused(path, shop)[3] == f"  convert it with: jq -c '.[]' {path} > {tmp_path / 'golden.lines.jsonl'}"
    # the command is pasted as it is: it never writes over a file that is there
    (tmp_path / "golden.lines.jsonl").write_text("kept\n", encoding="utf-8")
    assert refused(path, shop)[3] == f"  convert it with: jq -c '.[]' {path} > {tmp_path / 'golden.lines-2.jsonl'}"
    path.write_text('["q-ship", "q-refund"]\n', encoding="utf-8")
    assert refused(path, shop) == [
        f"{path} is a JSON array of 2 items, not JSONL:",
        f"  {path}: a golden set is JSONL: one JSON object per line, one line per question, with no [ ] around the "
        "objects and no commas between them; a line looks like:",
        f"  {EXAMPLE}"]


def test_objects_laid_out_over_several_lines(tmp_path, shop):
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(SHIP) + "\n" + json.dumps(REFUND, indent=2) + "\n", encoding="utf-8")
    assert refused(path, shop) == [
        f"{path} is not JSONL:",
        f"  {path}: a golden set is JSONL: one JSON object per line, one line per question; this file has 2 JSON "
        "objects laid out over several lines (one on lines 2-11)",
        f"  convert it with: jq -c . {path} > {tmp_path / 'golden.jsonl'}"]


@pytest.mark.parametrize("name, text, kind, first", [
    ("golden.csv", "query_id,query,doc\nq-refund,When will I get my money back?,returns.md\n", " (it looks like CSV)",
     "query_id,query,doc"),
    ("golden.yaml", "- query_id: q-refund\n  query: When will I get my money back?\n", " (it looks like YAML)",
     "- query_id: q-refund"),
    ("golden.txt", "\n\nq-refund: When will I get my money back? returns.md says Refunds are issued within 14 days "
                   "of the return\n", "", "q-refund: When will I get my money back? returns.md says ..."),
])
def test_a_file_with_no_json_object_says_what_the_file_must_be(tmp_path, shop, name, text, kind, first):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    line = 3 if name.endswith(".txt") else 1
    assert refused(path, shop) == [
        f"{path} is not JSONL:",
        f"  {path}: no line is a JSON object{kind}; line {line} reads {first!r}",
        f"  a golden set is JSONL: one JSON object per line, one line per question, like: {EXAMPLE}"]


@pytest.mark.parametrize("name", ["golden.json", "golden.txt", "golden"])
def test_jsonl_under_another_name_is_read_and_its_errors_say_what_the_file_must_be(tmp_path, shop, name):
    path = write(tmp_path, SHIP, REFUND, name=name)
    assert [j.query_id for j in load_judgments(path).judgments] == ["q-ship", "q-refund"]
    assert check(path, shop).exit_code == 0
    path = write(tmp_path, SHIP, {**REFUND, "gold": "returns.md"}, name=name)
    named = ([f"  {path}: named {path.suffix}, but a golden set is JSONL: one JSON object per line, one line per "
              f"question (name it .jsonl), like: {EXAMPLE}"] if path.suffix else [])
    assert refused(path, shop) == [f"1 problem(s) in {path}:", *named,
                                   f"  {path}:2 (query q-refund): 'gold' must be a list of entries like "
                                   '{"doc": "file.md", "quote": "..."} ([] when the corpus holds no answer)']


def test_a_run_of_a_file_that_is_not_jsonl_writes_nothing(tmp_path, shop):
    from click.testing import CliRunner

    from assay.cli import cli

    path = tmp_path / "golden.json"
    path.write_text(json.dumps([SHIP, REFUND]), encoding="utf-8")
    wh = tmp_path / "wh.duckdb"
    result = CliRunner().invoke(cli, ["run", "--corpus", str(shop), "--judgments", str(path), "--warehouse", str(wh)])
    assert result.exit_code == 3 and f"error: {path} is a JSON array of 2 items, not JSONL:\n" in result.stderr
    assert not wh.exists()


# -- what is not a judgments file, and lines past the bounds ------------------------------------

def test_dev_zero_a_fifo_and_a_directory_are_named_for_what_they_are_never_read(tmp_path):
    import os

    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)  # opening it would block: the stat says what it is first
    for path, kind in (("/dev/zero", "a character device"), (fifo, "a FIFO (named pipe)"), (tmp_path, "a directory")):
        with pytest.raises(JudgmentsError) as info:
            load_judgments(path)
        assert info.value.problems == [f"{path}: {kind}, not a regular file; give the judgments JSONL file"]


def test_judgments_check_of_dev_zero_is_one_line_and_exit_3():
    from click.testing import CliRunner

    from assay.cli import cli

    out = CliRunner().invoke(cli, ["judgments", "fmt", "--check", "/dev/zero"])
    assert out.exit_code == 3, out.output
    assert out.stderr == ("error: cannot read judgments:\n"
                          "  /dev/zero: a character device, not a regular file; give the judgments JSONL file\n")


def test_a_line_over_the_limit_is_refused_with_its_number_and_the_others_still_checked(tmp_path):
    from assay.core.limits import JUDGMENTS_LINE_CHARS

    huge = json.dumps(record("q2", notes="x" * JUDGMENTS_LINE_CHARS))
    path = write(tmp_path, record("q1"), huge, record("q3", query=""))
    assert problems(path) == [
        f"{path}:2: the line is {len(huge):,} characters, over the limit of {JUDGMENTS_LINE_CHARS:,} for one "
        "judgments line (one question and its quotes); was a document pasted into it?",
        f"{path}:3 (query q3): 'query' must be a non-empty string"]
    at_limit = json.dumps(record("q2", notes="x" * (JUDGMENTS_LINE_CHARS - 200)))
    assert len(load_judgments(write(tmp_path, at_limit, name="ok.jsonl")).judgments) == 1


def test_a_question_over_the_limit_is_refused(tmp_path):
    from assay.core.limits import QUESTION_CHARS

    path, problem = only_problem(tmp_path, record("q1", query="why " * (QUESTION_CHARS // 4 + 1)))
    assert problem == (f"{path}:1 (query q1): the query is {QUESTION_CHARS + 4:,} characters, over the limit of "
                       f"{QUESTION_CHARS:,} for one question; ask it in fewer words")
    assert load_judgments(write(tmp_path, record("q1", query="w" * QUESTION_CHARS), name="ok.jsonl"))
