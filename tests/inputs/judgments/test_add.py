"""`assay judgments add`: a question or a gold entry, checked and resolved before it is written, in place."""

import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.inputs.judgments.fmt import canonical_line
from assay.inputs.judgments.parse import load_judgments

DOCS = {
    "storage/wal.md": "# WAL\n\nThe write-ahead log is fsynced every 100 ms in batch mode.\n"
                      "The WAL lives in wal/ under the data directory.\n",
    "guides/backup.md": "Backups copy every segment file.\nBackups copy every segment file.\n",
}
Q_A = {"query_id": "a-backup", "query": "what does a backup copy", "category": "normal", "form": "match",
       "gold": [{"doc": "guides/backup.md"}]}
Q_Z = {"query_id": "z-none", "query": "what is the colour of the logo", "category": "no_answer", "form": "gap",
       "gold": []}


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def golden(tmp_path):
    path = tmp_path / "j.jsonl"
    # hand-laid lines: an addition must leave them as they are
    path.write_text(json.dumps(Q_A, separators=(",", ":")) + "\n" + json.dumps(Q_Z, indent=None) + "  \n",
                    encoding="utf-8")
    return path


def add(path, corpus, *args, terminal=False, input=None, monkeypatch=None):
    if monkeypatch is not None:
        monkeypatch.setattr("assay.cli.judgments._stdin_is_terminal", lambda: terminal)
    return CliRunner().invoke(cli, ["judgments", "add", str(path), "--corpus", str(corpus), *map(str, args)],
                              input=input)


NEW = ("--id", "m-fsync", "--question", "how often does the log reach the disk", "--doc", "storage/wal.md",
       "--quote", "fsynced every 100 ms", "--form", "gap")


def test_a_new_question_goes_where_the_order_puts_it(golden, corpus):
    before = golden.read_text(encoding="utf-8").split("\n")
    result = add(golden, corpus, *NEW, "--grade", 2, "--hard-class", "prose-free", "--notes", "from the WAL page")
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"added question m-fsync at {golden}:2: its quote occurs once in storage/wal.md "
                             "(characters 30-50)\n")
    lines = golden.read_text(encoding="utf-8").split("\n")
    assert lines == [before[0], canonical_line({
        "query_id": "m-fsync", "query": "how often does the log reach the disk", "category": "normal", "form": "gap",
        "hard_class": "prose-free", "gold": [{"doc": "storage/wal.md", "quote": "fsynced every 100 ms", "grade": 2}],
        "notes": "from the WAL page"}), before[1], ""]
    assert [j.query_id for j in load_judgments(golden).judgments] == ["a-backup", "m-fsync", "z-none"]


def test_first_and_last_place_and_a_new_file(tmp_path, golden, corpus):
    assert add(golden, corpus, *NEW[:1], "0-first", *NEW[2:]).exit_code == 0
    assert add(golden, corpus, "--id", "zz-last", *NEW[2:]).exit_code == 0
    ids = [j.query_id for j in load_judgments(golden).judgments]
    assert ids == ["0-first", "a-backup", "z-none", "zz-last"]

    fresh = tmp_path / "new.jsonl"
    result = add(fresh, corpus, *NEW)
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"created it with question m-fsync at {fresh}:1: ")
    assert fresh.read_text(encoding="utf-8").count("\n") == 1


def test_an_existing_id_gets_another_gold_entry(golden, corpus):
    assert add(golden, corpus, *NEW).exit_code == 0
    result = add(golden, corpus, "--id", "m-fsync", "--doc", "storage/wal.md", "--quote", "The WAL lives in wal/",
                 "--category", "ambiguous", "--question", "  how often does the log reach the disk ")
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"added a gold entry to question m-fsync at {golden}:2 (now 2): its quote occurs once "
                             "in storage/wal.md (characters 66-87)\n")
    j = {j.query_id: j for j in load_judgments(golden).judgments}["m-fsync"]
    assert j.category == "ambiguous" and [e.quote for e in j.gold] == ["fsynced every 100 ms", "The WAL lives in wal/"]


def test_a_different_question_under_an_existing_id_is_refused(golden, corpus):
    before = golden.read_bytes()
    result = add(golden, corpus, "--id", "a-backup", "--question", "something else", "--doc", "storage/wal.md",
                 "--quote", "The WAL lives in wal/")
    assert result.exit_code == 2
    assert result.stderr == (f"error: {golden}:1 (query a-backup): --question 'something else' differs from the "
                             "question's query 'what does a backup copy'; leave --question out to add a gold entry "
                             "to it, or use a new --id\n")
    result = add(golden, corpus, "--id", "z-none", "--doc", "storage/wal.md", "--quote", "The WAL lives in wal/")
    assert result.exit_code == 3
    assert "a no_answer question must have an empty gold list" in result.stderr
    assert golden.read_bytes() == before


@pytest.mark.parametrize("doc, quote, says", [
    ("storage/wal.md", "fsynced every 200 ms", "quote not found in storage/wal.md: 'fsynced every 200 ms'"),
    ("guides/backup.md", "Backups copy every segment file.",
     "quote is ambiguous, it occurs 2 times in guides/backup.md (at characters 0, 33"),
    ("storage/nope.md", "x", "document 'storage/nope.md' is not in the corpus"),
])
def test_a_quote_that_does_not_resolve_writes_nothing(golden, corpus, doc, quote, says):
    before = golden.read_bytes()
    result = add(golden, corpus, "--id", "m-new", "--question", "q", "--form", "match", "--doc", doc,
                 "--quote", quote)
    assert result.exit_code == 3
    # resolve_gold words the problem, as for a run (the nearest passage too, where it says one)
    assert result.stderr.startswith(f"error: nothing written to {golden}: the new gold entry does not resolve:\n"
                                    f"  {golden}:2 (query m-new): ")
    assert says in result.stderr
    assert golden.read_bytes() == before


def test_a_no_answer_question_needs_no_document(golden, corpus):
    result = add(golden, corpus, "--id", "n-ttl", "--question", "do keys expire", "--form", "gap",
                 "--unanswerable", "out_of_corpus")
    assert result.exit_code == 0, result.output
    assert result.stderr == f"added question n-ttl at {golden}:2\n"
    j = {j.query_id: j for j in load_judgments(golden).judgments}["n-ttl"]
    assert (j.category, j.unanswerable, j.gold) == ("no_answer", "out_of_corpus", ())


def test_missing_options_without_a_terminal_are_a_usage_error(golden, corpus, monkeypatch):
    result = add(golden, corpus, "--id", "m-new", monkeypatch=monkeypatch)
    assert result.exit_code == 2
    assert result.stderr.endswith("Error: missing --question, --form, --doc, --quote (standard input is not a "
                                  "terminal, so assay cannot ask for it)\n")
    result = add(golden, corpus, "--id", "a-backup", monkeypatch=monkeypatch)
    assert result.stderr.endswith("Error: missing --doc, --quote (standard input is not a terminal, so assay cannot "
                                  "ask for it)\n")


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_terminal_is_asked_until_the_answers_resolve(golden, corpus, monkeypatch):
    answers = ["-bad id", "m-fsync", "", "how often does the log reach the disk", "gap", "storage/wall.md", "storage/wal.md",
               "fsynced every 200 ms", "fsynced every 100 ms"]
    result = add(golden, corpus, terminal=True, monkeypatch=monkeypatch, input="\n".join(answers) + "\n")
    assert result.exit_code == 0, result.output
    out = result.output
    assert ("Error: '-bad id': a query id starts with a letter or digit and holds only letters, digits and "
            ". _ : / -") in out
    assert "category (normal, ambiguous, adversarial, no_answer) [normal]: " in out
    assert "form (match, gap): " in out
    assert "Error: 'storage/wall.md' is not in the corpus (write its path relative to the corpus directory)" in out
    assert ("Error: not found in the document; nearest (similarity 0.95, line 3, chars 30-50): "
            "'fsynced every 100 ms'") in out
    assert f"added question m-fsync at {golden}:2: its quote occurs once in storage/wal.md (characters 30-50)" in out
    j = {j.query_id: j for j in load_judgments(golden).judgments}["m-fsync"]
    assert (j.category, j.form, j.gold[0].quote) == ("normal", "gap", "fsynced every 100 ms")


def test_a_file_out_of_order_is_added_to_before_the_first_greater_id(tmp_path, corpus):
    """Any line order parses; the new line goes before the first line whose id is greater (z-none, the first
    line here), and every other line stays as it was."""
    path = tmp_path / "j.jsonl"
    lines = [json.dumps(Q_Z), json.dumps(Q_A)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = add(path, corpus, *NEW)
    assert result.exit_code == 0, result.output
    assert result.stderr == (f"added question m-fsync at {path}:1: its quote occurs once in storage/wal.md "
                             "(characters 30-50)\n")
    after = path.read_text(encoding="utf-8").split("\n")
    assert json.loads(after[0])["query_id"] == "m-fsync" and after[1:] == lines + [""]


def test_a_byte_order_mark_stays_and_unlabeled_questions_stay_unlabeled(tmp_path, corpus):
    path = tmp_path / "j.jsonl"
    unlabeled = {"query_id": "a-backup", "query": "what does a backup copy", "gold": [{"doc": "guides/backup.md"}]}
    path.write_bytes("\ufeff".encode("utf-8") + (json.dumps(unlabeled) + "\n").encode("utf-8"))
    result = add(path, corpus, *NEW)
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data.startswith("\ufeff".encode("utf-8") + json.dumps(unlabeled).encode("utf-8") + b"\n")
    assert [(j.query_id, j.category, j.form) for j in load_judgments(path).judgments] == [
        ("a-backup", "unlabeled", "unlabeled"), ("m-fsync", "normal", "gap")]


def test_added_lines_are_formatted(golden, corpus):
    assert CliRunner().invoke(cli, ["judgments", "fmt", str(golden)]).exit_code == 0
    assert add(golden, corpus, *NEW).exit_code == 0
    assert add(golden, corpus, "--id", "m-fsync", "--doc", "storage/wal.md", "--quote", "The WAL lives").exit_code == 0
    check = CliRunner().invoke(cli, ["judgments", "fmt", str(golden), "--check"])
    assert check.exit_code == 0, check.output


def test_a_grade_below_1_is_a_usage_error(golden, corpus):
    before = golden.read_bytes()
    result = add(golden, corpus, *NEW, "--grade", 0)
    assert result.exit_code == 2 and "Invalid value for '--grade'" in result.stderr
    assert golden.read_bytes() == before


def test_the_corpus_is_read_with_the_corpus_options(golden, corpus):
    result = add(golden, corpus, *NEW, "--exclude", "storage")
    assert result.exit_code == 3
    assert "document 'storage/wal.md' is not in the corpus" in result.stderr
    assert add(golden, corpus, *NEW, "--include", "storage/**").exit_code == 0
