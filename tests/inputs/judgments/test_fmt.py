"""`assay judgments fmt`: one layout, in query_id order, that never changes what a file says; --check for CI."""

import json
import os
import random
import stat
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.cli import cli
from assay.core.errors import JudgmentsError, NotFormatted
from assay.inputs.judgments.fmt import FIELD_ORDER, GOLD_ORDER, canonical_line, fmt, format_judgments
from assay.inputs.judgments.parse import GOLD_FIELDS, OPTIONAL, REQUIRED, parse_judgments
from conftest import DEMO

PATH = Path("j.jsonl")
A = {"query_id": "a", "query": "what is a", "category": "normal", "form": "match",
     "gold": [{"doc": "a.md", "quote": "a is the first letter"}]}
B = {"query_id": "b", "query": "what is b", "category": "no_answer", "form": "gap", "gold": [],
     "unanswerable": "out_of_corpus", "notes": "none"}
C = {"query_id": "c", "query": "which letters", "category": "ambiguous", "form": "gap", "hard_class": "near-duplicate",
     "gold": [{"doc": "a.md", "quote": "the first letter", "grade": 2}, {"doc": "b.md"}]}
FORMATTED = "".join(canonical_line(r) + "\n" for r in (A, B, C))


def invoke(*args):
    return CliRunner().invoke(cli, ["judgments", "fmt", *[str(a) for a in args]])


def meaning(data: bytes):
    parsed = parse_judgments(data, PATH)
    return sorted((replace(j, line=0) for j in parsed.judgments), key=lambda j: j.query_id)


def test_the_layout_has_every_field_the_parser_allows():
    assert set(FIELD_ORDER) == set(REQUIRED) | set(OPTIONAL)
    assert set(GOLD_ORDER) == set(GOLD_FIELDS)
    assert canonical_line(C) == (
        '{"query_id": "c", "query": "which letters", "category": "ambiguous", "form": "gap", "hard_class": '
        '"near-duplicate", "gold": [{"doc": "a.md", "quote": "the first letter", "grade": 2}, {"doc": "b.md"}]}')


def test_the_demo_set_is_formatted_already():
    path = DEMO / "judgments.jsonl"
    before = path.read_bytes()
    result = invoke(path, "--check")
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert result.stderr == f"{path}: formatted, 71 questions\n"
    assert path.read_bytes() == before


def test_sorts_and_lays_out_every_line(tmp_path):
    path = tmp_path / "j.jsonl"
    messy = (json.dumps(C, separators=(",", ":")) + "  \r\n"
             "\n"
             + json.dumps(dict(reversed(list(B.items()))), ensure_ascii=True) + "\r\n"
             + "   " + json.dumps({**A, "query": "  what is a  "}, indent=None))  # no final newline
    path.write_text(messy, encoding="utf-8")

    check = invoke(path, "--check")
    assert check.exit_code == 9
    assert check.stderr == (f"error: {path} is not formatted (2 questions out of query_id order, 3 lines laid out "
                            f"differently, 1 blank line, 2 \\r\\n line ends, no newline at the end); run: assay "
                            f"judgments fmt {path}\n")
    assert check.stdout.startswith(f"--- {path}\n+++ {path} (formatted)\n@@ ")
    assert f"+{canonical_line(A)}\n" in check.stdout and "\\r\n" in check.stdout  # a \r shows, escaped
    assert path.read_bytes() == messy.encode("utf-8")  # --check writes nothing

    result = invoke(path)
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"formatted {path}: 2 questions out of query_id order, 3 lines laid out differently, "
                             "1 blank line, 2 \\r\\n line ends, no newline at the end; 3 questions\n")
    assert path.read_bytes() == FORMATTED.encode("utf-8")
    assert meaning(path.read_bytes()) == meaning(messy.encode("utf-8"))

    again = invoke(path)
    assert again.exit_code == 0 and again.stderr == f"{path}: already formatted, 3 questions\n"
    assert invoke(path, "--check").exit_code == 0


def test_a_file_that_does_not_parse_is_left_alone(tmp_path):
    path = tmp_path / "j.jsonl"
    text = json.dumps(B) + "\n" + json.dumps(A) + "\n" + '{"query_id": "c", "query": \n' + json.dumps(A) + "\n"
    path.write_text(text, encoding="utf-8")
    result = invoke(path)
    assert result.exit_code == 3
    assert result.stderr == (f"error: 2 problem(s) in {path}:\n"
                             f"  {path}:3: not valid JSON (Expecting value at column 28)\n"
                             f"  {path}:4: duplicate query_id 'a' (first on line 2); give each question an id of its "
                             "own\n")
    assert path.read_text(encoding="utf-8") == text
    assert os.listdir(tmp_path) == ["j.jsonl"]  # no temporary file left behind
    assert invoke(path, "--check").exit_code == 3


def test_a_missing_file(tmp_path):
    result = invoke(tmp_path / "nope.jsonl")
    assert result.exit_code == 3
    assert result.stderr == f"error: cannot read judgments:\n  {tmp_path / 'nope.jsonl'}: judgments file not found\n"


def test_with_a_corpus_every_quote_resolves_before_anything_is_written(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("Here a is the first letter, and b is the second.\n", encoding="utf-8")
    (corpus / "b.md").write_text("Letters.\n", encoding="utf-8")
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps(C) + "\n" + json.dumps(A) + "\n", encoding="utf-8")
    result = invoke(path, "--corpus", corpus)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"formatted {path}: 1 question out of query_id order; 2 questions; 3 gold "
                                    "entries resolve exactly once against 2 documents (corpus ")

    bad = {**A, "query_id": "d", "gold": [{"doc": "a.md", "quote": "z is the last letter"}]}
    text = json.dumps(bad) + "\n" + json.dumps(A) + "\n"
    path.write_text(text, encoding="utf-8")
    result = invoke(path, "--corpus", corpus)
    assert result.exit_code == 3
    assert f"{path}:1 (query d): quote not found in a.md: 'z is the last letter'" in result.stderr
    assert path.read_text(encoding="utf-8") == text


def test_unreviewed_drafts_are_a_warning(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps({**A, "review": "drafted by m"}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--quiet", "judgments", "fmt", str(path)])
    assert result.exit_code == 0
    assert result.stderr == ("warning: 1 question is an unreviewed draft (a): check each question, its quote and "
                             "form, then delete its review field\n")


def test_writes_through_a_link_and_keeps_the_mode(tmp_path):
    target = tmp_path / "real.jsonl"
    target.write_text(json.dumps(B) + "\n" + json.dumps(A) + "\n", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.jsonl"
    link.symlink_to(target)
    assert invoke(link).exit_code == 0
    assert link.is_symlink() and target.read_text(encoding="utf-8") == "".join(
        canonical_line(r) + "\n" for r in (A, B))
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(os.listdir(tmp_path)) == ["link.jsonl", "real.jsonl"]


def test_text_stays_text_and_what_cannot_be_utf8_stays_escaped(tmp_path):
    odd = {**A, "query": "caf\u00e9 \u2028 line\u00a0sep \U0001f600", "notes": "tab\there \x1b and \ud800"}
    data = (json.dumps(odd, ensure_ascii=True) + "\n").encode("utf-8")
    formatted = format_judgments(data, PATH)
    assert "caf\u00e9 \u2028 line\u00a0sep \U0001f600" in formatted.text  # written as UTF-8, not escapes
    assert "tab\\there \\u001b and \\ud800" in formatted.text  # controls and a lone surrogate stay escaped
    formatted.text.encode("utf-8")
    assert meaning(formatted.text.encode("utf-8")) == meaning(data)
    assert not format_judgments(formatted.text.encode("utf-8"), PATH).changed


def test_check_raises_with_the_diff(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text(json.dumps(B) + "\n" + json.dumps(A) + "\n", encoding="utf-8")
    with pytest.raises(NotFormatted) as info:
        fmt(path, check=True)
    assert info.value.exit_code == 9 and info.value.diff.startswith(f"--- {path}\n")
    with pytest.raises(JudgmentsError):
        format_judgments(b"", PATH)


# Hypothesis: any valid set in any layout formats to one text, which parses to the same judgments and
# formats to itself.

IDS = st.text("abcdefghijklmnopqrstuvwxyzABCZ0123456789._:/-", min_size=1, max_size=8).filter(
    lambda s: s[0].isalnum())
TEXT = st.text(min_size=1, max_size=30).filter(str.strip)
PADDED = st.tuples(st.sampled_from(["", " ", "\t"]), TEXT, st.sampled_from(["", "  "])).map("".join)
DOCS = st.sampled_from(["a.md", "dir/b.txt", "d/e/f.html", "\u00e9t\u00e9.md"])


@st.composite
def judgment(draw, query_id):
    category = draw(st.sampled_from(["normal", "ambiguous", "adversarial", "no_answer", None]))  # None: left out
    low = {"normal": 1, "adversarial": 1, "ambiguous": 2, "no_answer": 0, None: 1}[category]
    high = 0 if category == "no_answer" else 3
    pairs = draw(st.lists(st.tuples(DOCS, st.none() | PADDED), min_size=low, max_size=high,
                          unique_by=lambda p: (p[0], p[1].strip() if p[1] else None)))
    gold = []
    for doc, quote in pairs:
        entry = {"doc": doc}
        if quote is not None:
            entry["quote"] = quote
        if draw(st.booleans()):
            entry["grade"] = draw(st.integers(1, 3))
        gold.append(dict(draw(st.permutations(list(entry.items())))))
    obj = {"query_id": query_id, "query": draw(PADDED), "category": category,
           "form": draw(st.sampled_from(["match", "gap", None])), "gold": gold}
    obj = {key: value for key, value in obj.items() if value is not None}
    for key in ("hard_class", "notes", "review"):
        if draw(st.booleans()):
            obj[key] = draw(TEXT)
    if category == "no_answer" and draw(st.booleans()):
        obj["unanswerable"] = draw(st.sampled_from(["near_miss", "out_of_corpus", "under_specified"]))
    return dict(draw(st.permutations(list(obj.items()))))


@st.composite
def messy_file(draw):
    ids = draw(st.lists(IDS, min_size=1, max_size=6, unique=True))
    records = [draw(judgment(q)) for q in ids]
    lines = []
    for r in records:
        separators = draw(st.sampled_from([(", ", ": "), (",", ":"), (" , ", " : ")]))
        line = json.dumps(r, separators=separators, ensure_ascii=draw(st.booleans()))
        lines.append(draw(st.sampled_from(["", " ", "\t"])) + line + draw(st.sampled_from(["", " ", "\r"])))
        lines += [draw(st.sampled_from(["", "  ", "\t"]))] * draw(st.integers(0, 1))
    random.Random(draw(st.integers(0, 2**16))).shuffle(lines)
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return (bom + "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))).encode("utf-8"), records


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messy_file())
def test_fmt_is_idempotent_and_keeps_the_meaning(case):
    data, records = case
    once = format_judgments(data, PATH)
    assert meaning(once.text.encode("utf-8")) == meaning(data)
    twice = format_judgments(once.text.encode("utf-8"), PATH)
    assert not twice.changed and twice.text == once.text
    # the layout depends on the records alone, not on how they were written
    tidy = "".join(json.dumps(r) + "\n" for r in sorted(records, key=lambda r: r["query_id"]))
    assert format_judgments(tidy.encode("utf-8"), PATH).text == once.text
    lines = once.text.split("\n")
    assert lines[-1] == "" and all(line.strip() and line == line.strip() for line in lines[:-1])
    assert [json.loads(line)["query_id"] for line in lines[:-1]] == sorted(r["query_id"] for r in records)


def test_several_files_at_once(tmp_path):
    good, messy, broken = tmp_path / "good.jsonl", tmp_path / "messy.jsonl", tmp_path / "broken.jsonl"
    good.write_text(FORMATTED, encoding="utf-8")
    messy.write_text(json.dumps(B) + "\n" + json.dumps(A) + "\n", encoding="utf-8")
    check = invoke(good, messy, messy, "--check")
    assert check.exit_code == 9
    assert check.stderr == (f"{good}: formatted, 3 questions\n"
                            f"error: 2 files are not formatted; run: assay judgments fmt {messy} {messy}\n")
    assert check.stdout.count(f"--- {messy}\n") == 2

    broken.write_text("{}\n", encoding="utf-8")
    result = invoke(broken, messy, "--check")
    assert result.exit_code == 3  # not parsing outweighs not formatted
    assert result.stderr == (f"error: 1 problem(s) in {broken}:\n  {broken}:1: missing field(s) query_id, query, "
                             "gold (every question needs query_id, query and gold; category and form are optional)\n"
                             f"error: {messy} is not formatted (1 question out of query_id order); run: assay "
                             f"judgments fmt {messy}\n")
    assert invoke(good, messy).exit_code == 0
    assert messy.read_text(encoding="utf-8") == "".join(canonical_line(r) + "\n" for r in (A, B))


def test_the_pre_commit_hooks_run_real_commands(tmp_path):
    """.pre-commit-hooks.yaml: pre-commit appends the staged files to fmt's entry; check gets its args."""
    from conftest import ROOT

    hooks, hook = [], None
    for line in (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8").splitlines():
        if line.startswith("- id: "):
            hook = {"id": line[6:]}
            hooks.append(hook)
        elif line.startswith("  ") and hook is not None:
            key, _, value = line.strip().partition(": ")
            hook[key] = value
    by_id = {h["id"]: h for h in hooks}
    assert set(by_id) == {"assay-judgments-fmt", "assay-judgments-check"}
    assert all(h["language"] == "python" for h in hooks)

    fmt_hook, check_hook = by_id["assay-judgments-fmt"], by_id["assay-judgments-check"]
    messy = tmp_path / "j.jsonl"
    messy.write_text(json.dumps(B) + "\n" + json.dumps(A) + "\n", encoding="utf-8")
    argv = fmt_hook["entry"].split()[1:]
    assert CliRunner().invoke(cli, [*argv, str(DEMO / "judgments.jsonl"), str(messy)]).exit_code == 9
    assert CliRunner().invoke(cli, [*argv, str(DEMO / "judgments.jsonl")]).exit_code == 0
    assert check_hook["pass_filenames"] == "false"
    argv = check_hook["entry"].split()[1:]
    result = CliRunner().invoke(cli, [*argv, str(DEMO / "judgments.jsonl"), "--corpus", str(DEMO / "corpus")])
    assert result.exit_code == 0, result.output


def test_a_byte_order_mark_goes_and_left_out_labels_stay_left_out(tmp_path):
    """A file written by hand: a BOM, lines out of order, no category or form. fmt sorts it and drops the BOM; a
    label nobody wrote is not written for them."""
    hand = {"query_id": "a", "query": "what is a", "gold": [{"doc": "a.md"}]}
    path = tmp_path / "j.jsonl"
    data = "\ufeff".encode("utf-8") + (canonical_line(B) + "\n" + canonical_line(hand) + "\n").encode("utf-8")
    path.write_bytes(data)
    formatted = format_judgments(data, path)
    assert (formatted.bom, formatted.moved, formatted.relaid) == (True, 1, 0)
    assert formatted.text == canonical_line(hand) + "\n" + canonical_line(B) + "\n"
    assert '"category"' not in canonical_line(hand) and '"form"' not in canonical_line(hand)

    check = invoke(path, "--check")
    assert check.exit_code == 9
    assert check.stderr == (f"error: {path} is not formatted (1 question out of query_id order, a byte-order mark); "
                            f"run: assay judgments fmt {path}\n")
    assert f"-\\ufeff{canonical_line(B)}\n" in check.stdout  # the mark is shown, not invisible
    result = invoke(path)
    assert result.exit_code == 0, result.output
    assert result.stderr == f"formatted {path}: 1 question out of query_id order, a byte-order mark; 2 questions\n"
    assert path.read_bytes() == formatted.text.encode("utf-8")
    assert invoke(path, "--check").exit_code == 0
