"""The note a run and `assay judgments check` print when the corpus changed since the golden set last ran."""

import shutil

from click.testing import CliRunner
import pytest

from assay.cli import cli
from assay.inputs.corpus import load_corpus
from assay.store.drift import Changes, compare
from test_rebase import V1, V2, write_corpus


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_compare_names_documents_added_removed_and_changed():
    changes = compare({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"})
    assert changes == Changes(added=["d"], removed=["c"], changed=["b"])
    assert changes.describe() == "1 document changed (b); 1 document removed (c); 1 document added (d)"
    many = compare({}, {f"doc{i}.md": "x" for i in range(8)})
    assert many.describe() == "8 documents added (doc0.md, doc1.md, doc2.md, doc3.md, doc4.md, +3 more)"
    assert not compare({"a": "1"}, {"a": "1"})


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_run_on_a_changed_corpus_names_the_changes_and_the_rebase(tmp_path):
    from test_rebase import JUDGMENTS, record  # noqa: F401  (the golden set of the rebase tests)
    import json

    docs, wh = write_corpus(tmp_path / "docs", V1), tmp_path / "w.duckdb"
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in JUDGMENTS))
    first = invoke("run", "--corpus", docs, "--judgments", golden, "--warehouse", wh)
    assert first.exit_code == 0 and "note:" not in first.stderr
    again = invoke("run", "--corpus", docs, "--judgments", golden, "--warehouse", wh)
    assert again.exit_code == 0 and "note:" not in again.stderr  # same corpus: nothing to say
    old_hash = load_corpus(docs).corpus_hash
    run_id = first.stdout.strip()
    shutil.rmtree(docs)
    write_corpus(docs, V2)
    new_hash = load_corpus(docs).corpus_hash
    changed = invoke("--quiet", "run", "--corpus", docs, "--judgments", golden, "--warehouse", wh)
    assert changed.exit_code == 3  # two quotes no longer resolve: the note comes first and says what to do
    note = changed.stderr.splitlines()[0]
    assert note == (
        f"note: the corpus changed since {golden} last ran (run {again.stdout.strip()}, corpus {old_hash[:12]}; now "
        f"{new_hash[:12]}): 2 documents changed (faq.md, guide.md); 2 documents removed (notes.txt, old/archive.md); "
        f"1 document added (archive/2024.md). If quotes no longer resolve: assay judgments rebase {golden} "
        f"--from {old_hash[:12]} --to {docs}")
    assert run_id != again.stdout.strip()
    check = invoke("judgments", "check", golden, "--corpus", docs, "--warehouse", wh)
    assert check.exit_code == 3 and check.stderr.splitlines()[0] == note
    unread = invoke("judgments", "check", golden, "--corpus", docs, "--warehouse", tmp_path / "none.duckdb")
    assert unread.exit_code == 3 and "note:" not in unread.stderr and not (tmp_path / "none.duckdb").exists()
    rebase = invoke("judgments", "rebase", golden, "--from", old_hash[:12], "--to", docs, "--warehouse", wh)
    assert rebase.exit_code == 9, rebase.output
    assert "unchanged 3, moved 3, edited 1, gone 2" in rebase.stdout
    proposed = tmp_path / "golden.rebased.jsonl"
    accepted = invoke("run", "--corpus", docs, "--judgments", proposed, "--warehouse", wh)
    assert accepted.exit_code == 0 and "note:" not in accepted.stderr  # a new judgments file: a new reference
