"""A run exported as TREC files (`assay export --format trec`) and read back by `--pipeline trec-run` scores
what it scored when it was stored: the chunk-level file (docnos are assay's chunk ids) in its own rank order
gives every per-question value of the default measures again, the document-level file every doc-level one."""

import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.present.export import export_runs
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse
from conftest import DEMO


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A BM25 run of the demo set (equal scores in many questions) in a warehouse, and its TREC export."""
    root = tmp_path_factory.mktemp("round-trip")
    with Warehouse.open(root / "w.duckdb") as wh:
        rec = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions("bm25"))
        manifest = export_runs(wh, [rec.run_id], "trec", root / "export")
    return root, rec.run_id, manifest


def trec_run(root, run_file, *order):
    out = CliRunner().invoke(cli, ["run", "--pipeline", "trec-run", "--run-file", str(run_file), *order,
                                   "--corpus", str(DEMO / "corpus"), "--judgments", str(DEMO / "judgments.jsonl"),
                                   "--warehouse", str(root / "w.duckdb")])
    assert out.exit_code == 0, out.output
    return out.stdout.split()[-1], out.stderr


def values(root, run_id, level=None):
    """{(level, measure, unit): value} of the run's stored final-stage values (the default measures)."""
    with Warehouse.open(root / "w.duckdb", read_only=True) as wh:
        rows = wh.con.execute("SELECT level, measure, unit, value FROM measure_values WHERE run_id = ? AND "
                              "stage = 'final'", [run_id]).fetchall()
    return {(lv, m, u): v for lv, m, u, v in rows if level is None or lv == level}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_chunk_level_export_reads_back_with_identical_values(exported):
    root, run_id, manifest = exported
    chunk_file = root / "export" / f"{run_id}.final.trec"
    again, _ = trec_run(root, chunk_file, "--run-order", "rank")
    stored = values(root, run_id)
    assert {m for _, m, _ in stored} >= {"nDCG@10", "Success@3", "AP", "SpanRecall@1000tok", "Abstain"}
    assert values(root, again) == stored
    with Warehouse.open(root / "w.duckdb", read_only=True) as wh:
        final = "SELECT query_id, rank, chunk_id, score FROM hits WHERE run_id = ? AND stage = 'final' ORDER BY ALL"
        assert wh.con.execute(final, [again]).fetchall() == wh.con.execute(final, [run_id]).fetchall()
        config = json.loads(wh.con.execute("SELECT config FROM runs WHERE run_id = ?", [again]).fetchone()[0])
    assert config["settings"]["run_order"] == "rank"


def test_by_score_only_the_queries_with_reordered_ties_differ(exported):
    """trec_eval's order reverses assay's within equal scores: the queries the manifest names as tied."""
    root, run_id, manifest = exported
    (entry,) = [f for f in manifest["files"] if f["path"] == f"{run_id}.final.trec"]
    assert entry["tied_queries"]  # the demo's BM25 scores tie, so the order matters
    again, said = trec_run(root, root / "export" / entry["path"])
    assert "--run-order rank" in said
    stored, by_score = values(root, run_id), values(root, again)
    assert by_score.keys() == stored.keys()
    differ = {unit.split("|")[0] for key, unit in ((k, k[2]) for k in stored) if by_score[key] != stored[key]}
    assert differ and differ <= set(entry["tied_queries"])


def test_the_document_level_export_reads_back_with_identical_doc_values(exported):
    root, run_id, _ = exported
    again, _ = trec_run(root, root / "export" / f"{run_id}.final.doc.trec", "--run-order", "rank")
    assert values(root, again, "doc") == values(root, run_id, "doc")
