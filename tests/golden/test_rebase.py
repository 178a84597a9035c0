"""`assay judgments rebase` on a real corpus that changed: v1 and v2 written here, each class of change once."""

import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.inputs.corpus import load_corpus
from assay.core.errors import AssayError, JudgmentsError
from assay.inputs.judgments import load_judgments, parse_judgments
from assay.golden.rebase import classify, default_out, rebase, write_proposal

V1 = {
    "guide.md": "# Guide\n\nThe cache holds recently used blocks in memory.\n\n"
                "Compaction runs every night at two in the morning and merges small files into larger ones.\n\n"
                "Backups are written to the archive volume weekly.\n\n"
                "Snapshots are taken before every upgrade.\n",
    "faq.md": "# FAQ\n\nHow do I reset my password? Use the account page.\n",
    "notes.txt": "Release notes.\nThe old importer was removed in version 3.\n",
    "setup.md": "Install with pip.\nPython 3.10 or newer is required.\n",
    "whole.md": "Everything in this file is relevant.\n",
    "old/archive.md": "The 2024 archive: minutes of every meeting.\n",
}
V2 = {
    # the snapshot paragraph moved up, the compaction one was edited, the backup one rewritten, the cache one left
    "guide.md": "# Guide\n\nSnapshots are taken before every upgrade.\n\n"
                "Compaction runs every night at three in the morning and merges small files into larger ones.\n\n"
                "Weekly, a copy of every table goes to cold storage.\n",
    "faq.md": "# FAQ\n\nHow do I reset my password? Use the account page.\n\n"
              "The cache holds recently used blocks in memory.\n",
    "setup.md": V1["setup.md"],
    "whole.md": V1["whole.md"],
    "archive/2024.md": V1["old/archive.md"],
}


def record(qid, gold, category="normal", **extra):
    return {"query_id": qid, "query": f"question {qid}", "category": category, "form": "match", "gold": gold, **extra}


JUDGMENTS = [
    record("q-archive", [{"doc": "old/archive.md"}]),
    record("q-backup", [{"doc": "guide.md", "quote": "Backups are written to the archive volume weekly."}]),
    record("q-cache", [{"doc": "guide.md", "quote": "The cache holds recently used blocks in memory."}],
           notes="kept as it is"),
    record("q-compaction", [{"doc": "guide.md", "quote": "Compaction runs every night at two in the morning",
                             "grade": 2}]),
    record("q-importer", [{"doc": "notes.txt", "quote": "The old importer was removed in version 3."},
                          {"doc": "setup.md", "quote": "Install with pip."}]),
    record("q-none", [], category="no_answer"),
    record("q-setup", [{"doc": "setup.md", "quote": "Python 3.10 or newer\nis required."}]),
    record("q-snapshots", [{"doc": "guide.md", "quote": "Snapshots are taken before every upgrade."}]),
    record("q-whole", [{"doc": "whole.md"}]),
]
EXPECTED = {  # (query_id, gold index): class, document in v2
    ("q-archive", 0): ("moved", "archive/2024.md"),
    ("q-backup", 0): ("gone", None),
    ("q-cache", 0): ("moved", "faq.md"),
    ("q-compaction", 0): ("edited", "guide.md"),
    ("q-importer", 0): ("gone", None),
    ("q-importer", 1): ("unchanged", "setup.md"),
    ("q-setup", 0): ("unchanged", "setup.md"),
    ("q-snapshots", 0): ("moved", "guide.md"),
    ("q-whole", 0): ("unchanged", "whole.md"),
}


def write_corpus(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def setup(tmp_path):
    v1, v2 = write_corpus(tmp_path / "v1", V1), write_corpus(tmp_path / "v2", V2)
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in JUDGMENTS), encoding="utf-8")
    return v1, v2, golden


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_each_class_is_reported(setup):
    v1, v2, golden = setup
    outcomes = classify(load_judgments(golden), load_corpus(v1), load_corpus(v2))
    assert {(o.query_id, o.gold_idx): (o.kind, o.new_doc) for o in outcomes} == EXPECTED
    by = {(o.query_id, o.gold_idx): o for o in outcomes}
    edited = by[("q-compaction", 0)]
    assert edited.new_quote == "Compaction runs every night at three in the morning"
    assert 0.9 <= edited.similarity < 1
    assert by[("q-snapshots", 0)].detail.startswith("within its document: characters ")
    assert by[("q-cache", 0)].detail == "no longer in its document; the quote occurs once there"
    assert by[("q-archive", 0)].detail == "renamed: the same text"
    assert by[("q-importer", 0)].detail == "document deleted"
    assert by[("q-backup", 0)].detail.startswith("quote no longer found; nearest passage (in guide.md, similarity 0.")
    assert by[("q-backup", 0)].similarity < 0.8


def test_cli_writes_a_proposal_that_parses_and_resolves_and_leaves_the_original(setup, tmp_path):
    v1, v2, golden = setup
    before = golden.read_bytes()
    out = invoke("judgments", "rebase", golden, "--from", v1, "--to", v2)
    assert out.exit_code == 9, out.output
    proposed = default_out(golden)
    assert proposed == tmp_path / "golden.rebased.jsonl" and proposed.is_file()
    assert golden.read_bytes() == before
    assert "unchanged 3, moved 3, edited 1, gone 2" in out.stdout
    assert f"wrote {proposed}" in out.stderr and "8 of 9 questions, 4 marked with a review field" in out.stderr
    assert "left out of the proposal: q-backup (line 2): every gold entry is gone" in out.stdout
    lines = proposed.read_text().split("\n")
    originals = before.decode().split("\n")
    # untouched questions keep their lines byte for byte
    for qid in ("q-none", "q-setup", "q-snapshots", "q-whole"):
        assert next(x for x in lines if f'"{qid}"' in x) == next(x for x in originals if f'"{qid}"' in x)
    records = {json.loads(x)["query_id"]: json.loads(x) for x in lines if x}
    assert "q-backup" not in records
    compaction = next(x for x in lines if '"q-compaction"' in x)
    assert '"gold": [{"doc": "guide.md", "quote": "Compaction runs every night at three in the morning", "grade": 2}]' \
        in compaction  # each key where it was
    assert records["q-compaction"]["review"].startswith("rebase to corpus ")
    assert "gold[0] edited (similarity 0.9" in records["q-compaction"]["review"]
    assert "was 'Compaction runs every night at two in the morning'" in records["q-compaction"]["review"]
    assert records["q-cache"]["gold"] == [{"doc": "faq.md", "quote": "The cache holds recently used blocks in memory."}]
    assert records["q-cache"]["notes"] == "kept as it is"
    assert records["q-importer"]["gold"] == [{"doc": "setup.md", "quote": "Install with pip."}]
    assert "gold[0] gone (document deleted), was notes.txt 'The old importer" in records["q-importer"]["review"]
    assert records["q-archive"]["gold"] == [{"doc": "archive/2024.md"}]
    parsed = parse_judgments(proposed.read_bytes(), proposed)
    assert [j.query_id for j in parsed.judgments] == sorted(records)
    wh = tmp_path / "w.duckdb"
    run = invoke("run", "--corpus", v2, "--judgments", proposed, "--warehouse", wh)
    assert run.exit_code == 0, run.output
    assert "resolved 7 gold entries for 8 questions against 5 documents" in run.stderr


def test_json_report_and_report_file(setup, tmp_path):
    v1, v2, golden = setup
    out = invoke("judgments", "rebase", golden, "--from", v1, "--to", v2, "--format", "json", "--check",
                 "--report", tmp_path / "report.json")
    assert out.exit_code == 9, out.output
    report = json.loads(out.stdout)
    assert report == json.loads((tmp_path / "report.json").read_text())
    assert report["counts"] == {"unchanged": 3, "moved": 3, "edited": 1, "gone": 2}
    assert report["needs_review"] is True and report["proposed"] is None
    assert {(e["query_id"], e["gold_idx"]): (e["class"], e["new_doc"]) for e in report["entries"]} == EXPECTED
    assert report["dropped_questions"] == [{"query_id": "q-backup", "line": 2, "why": "every gold entry is gone"}]
    assert not default_out(golden).exists()  # --check writes no proposal


def test_nothing_to_review_exits_0(setup, tmp_path):
    v1, _, golden = setup
    moved = write_corpus(tmp_path / "v1b", {**V1, "guide.md": "# Guide, revised\n\n" + V1["guide.md"][9:]})
    out = invoke("judgments", "rebase", golden, "--from", v1, "--to", moved, "--check")
    assert out.exit_code == 0, out.output
    assert "unchanged 5, moved 4, edited 0, gone 0" in out.stdout


def test_never_overwrites_without_force_and_never_the_original(setup, tmp_path):
    v1, v2, golden = setup
    target = tmp_path / "proposal.jsonl"
    target.write_text("mine\n")
    out = invoke("judgments", "rebase", golden, "--from", v1, "--to", v2, "--out", target)
    assert out.exit_code == 1 and "proposal.jsonl already exists; give --force" in out.stderr
    assert target.read_text() == "mine\n"
    again = invoke("judgments", "rebase", golden, "--from", v1, "--to", v2, "--out", target, "--force")
    assert again.exit_code == 9 and target.read_text() != "mine\n"
    before = golden.read_bytes()
    same = invoke("judgments", "rebase", golden, "--from", v1, "--to", v2, "--out", golden, "--force")
    assert same.exit_code == 1 and "is the judgments file itself; rebase never edits it" in same.stderr
    assert golden.read_bytes() == before


def test_a_file_that_does_not_resolve_against_the_old_corpus_is_refused(setup):
    _, v2, golden = setup
    out = invoke("judgments", "rebase", golden, "--from", v2, "--to", v2)
    assert out.exit_code == 3
    assert "do not resolve against the old corpus" in out.stderr and "notes.txt" in out.stderr


def test_bad_threshold_is_a_usage_error(setup):
    v1, v2, golden = setup
    out = invoke("judgments", "rebase", golden, "--from", v1, "--to", v2, "--threshold", "0")
    assert out.exit_code == 2 and "Invalid value for '--threshold'" in out.stderr


def test_the_threshold_decides_between_edited_and_gone(setup):
    v1, v2, golden = setup
    judgments, old, new = load_judgments(golden), load_corpus(v1), load_corpus(v2)
    compaction = lambda t: next(o for o in classify(judgments, old, new, t) if o.query_id == "q-compaction")  # noqa: E731
    assert compaction(0.9).kind == "edited"
    strict = compaction(0.95)
    assert strict.kind == "gone" and strict.new_doc is None
    assert strict.detail.startswith("quote no longer found; nearest passage (in guide.md, similarity 0.94, below 0.95): "
                                    "'Compaction runs every night at three in the morning")


def test_a_quote_that_now_occurs_twice_is_lengthened(tmp_path):
    v1 = write_corpus(tmp_path / "v1", {"a.md": "Alpha one. Restart the server. Beta two.\n"})
    v2 = write_corpus(tmp_path / "v2", {"a.md": "Gamma. Restart the server. Delta.\n\nAlpha one. Restart the "
                                                 "server. Beta two.\n"})
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps(record("q", [{"doc": "a.md", "quote": "Restart the server."}])) + "\n")
    (o,) = classify(load_judgments(golden), load_corpus(v1), load_corpus(v2))
    assert o.kind == "edited" and o.detail == "the quote now occurs 2 times; lengthened to resolve once"
    assert o.new_quote in ("Restart the server. Beta", "one. Restart the server. Beta")


def test_an_ambiguous_question_left_with_one_entry_is_left_out(tmp_path):
    v1 = write_corpus(tmp_path / "v1", {"a.md": "First answer here.\n", "b.md": "Second answer here.\n"})
    v2 = write_corpus(tmp_path / "v2", {"a.md": "First answer here.\n"})
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps(record("amb", [{"doc": "a.md"}, {"doc": "b.md"}], category="ambiguous")) + "\n"
                      + json.dumps(record("keep", [{"doc": "a.md", "quote": "First answer"}])) + "\n")
    result = rebase(golden, load_corpus(v1), load_corpus(v2))
    assert result.dropped == [{"query_id": "amb", "line": 1, "why": "an ambiguous question needs 2 gold entries, 1 left"}]
    assert [json.loads(x)["query_id"] for x in result.proposed.decode().splitlines()] == ["keep"]
    with pytest.raises(AssayError, match="is the judgments file itself"):
        write_proposal(result, golden, force=True)


def test_stored_corpus_by_name_or_hash(setup, tmp_path):
    v1, v2, golden = setup
    wh = tmp_path / "w.duckdb"
    assert invoke("ingest", v1, "--warehouse", wh).exit_code == 0
    corpus_hash = load_corpus(v1).corpus_hash
    out = invoke("judgments", "rebase", golden, "--from", corpus_hash[:12], "--to", v2, "--check", "--warehouse", wh)
    assert out.exit_code == 9, out.output
    assert f"from {v1}, as stored (corpus {corpus_hash[:12]}) to {v2}" in out.stdout
    missing = invoke("judgments", "rebase", golden, "--from", "0123abcd", "--to", v2, "--warehouse", wh)
    assert missing.exit_code == 1 and "no stored corpus has a hash starting 0123abcd" in missing.stderr
    neither = invoke("judgments", "rebase", golden, "--from", tmp_path / "nope", "--to", v2, "--warehouse", wh)
    assert neither.exit_code == 1 and "not a corpus directory, an @NAME or a stored corpus hash" in neither.stderr


def test_unresolvable_judgments_error_is_a_judgments_error(setup):
    _, v2, golden = setup
    with pytest.raises(JudgmentsError):
        classify(load_judgments(golden), load_corpus(v2), load_corpus(v2))


def test_a_quote_copied_from_rendered_markdown_rebases_as_a_run_resolves_it(tmp_path):
    """The quote has no `**` (copied from the rendered page); the run resolves it through the Markdown view, so
    rebase must too: unchanged when the paragraph stayed, moved when it moved, never gone."""
    v1 = write_corpus(tmp_path / "v1", {"a.md": "Intro.\n\nIt has support for **both HTTP/1.1 and HTTP/2** now.\n"})
    v2 = write_corpus(tmp_path / "v2", {"a.md": "New intro paragraph.\n\nIntro.\n\n"
                                                "It has support for **both HTTP/1.1 and HTTP/2** now.\n"})
    golden = tmp_path / "g.jsonl"
    golden.write_text(json.dumps(record("q1", [{"doc": "a.md", "quote": "has support for both HTTP/1.1 and HTTP/2"}]))
                      + "\n", encoding="utf-8")
    judgments = load_judgments(golden)
    same = classify(judgments, load_corpus(v1), load_corpus(v1))
    assert [o.kind for o in same] == ["unchanged"]
    moved = classify(judgments, load_corpus(v1), load_corpus(v2))
    assert [(o.kind, o.new_doc) for o in moved] == [("moved", "a.md")]


def test_a_file_written_by_hand_rebases(setup, tmp_path):
    """A BOM, lines in no order, no category or form: the first line (q-archive, moved) is rewritten from its
    JSON, not from the mark; the proposal keeps the order and leaves the labels out."""
    v1, v2, _ = setup
    hand = [{k: v for k, v in r.items() if k not in ("category", "form")} for r in reversed(JUDGMENTS)
            if r["category"] != "no_answer"]
    hand.append(hand.pop(hand.index(next(r for r in hand if r["query_id"] == "q-archive"))))
    hand.insert(0, hand.pop())  # q-archive first, the rest in reverse order
    golden = tmp_path / "hand.jsonl"
    golden.write_bytes("\ufeff".encode("utf-8") + "".join(json.dumps(r) + "\n" for r in hand).encode("utf-8"))
    out = invoke("judgments", "rebase", golden, "--from", v1, "--to", v2)
    assert out.exit_code == 9, out.output
    proposed = parse_judgments(default_out(golden).read_bytes(), default_out(golden))
    assert [j.query_id for j in proposed.judgments] == [r["query_id"] for r in hand if r["query_id"] != "q-backup"]
    assert {(j.category, j.form) for j in proposed.judgments} == {("unlabeled", "unlabeled")}
    archive = proposed.judgments[0]
    assert (archive.query_id, archive.gold[0].doc) == ("q-archive", "archive/2024.md")
    assert not default_out(golden).read_bytes().startswith("\ufeff".encode("utf-8"))
