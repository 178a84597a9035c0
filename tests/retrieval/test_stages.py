"""Multi-stage runs end to end (real tantivy, real ONNX embedder, tiny real cross-encoder) and stage attribution."""

import json

import pytest

from assay.inputs.chunking import Chunk
from assay.present.report import build_report
from assay.runs.runner import RunOptions, run
from retrieval.rerank.tiny_cross_encoder import build_tiny_cross_encoder
from synthetic import QuerySpec, Synthetic, write_synthetic


@pytest.fixture(scope="module")
def tiny_ce(tmp_path_factory):
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("ce") / "tiny-ce")


def stage_rows(wh, run_id):
    return wh.con.execute("SELECT stage, COUNT(*) FROM hits WHERE run_id = ? GROUP BY stage ORDER BY stage",
                          [run_id]).fetchall()


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_hybrid_rerank_records_every_stage(warehouse, mini_corpus, mini_judgments, tiny_ce):
    rec = run(warehouse, mini_corpus, mini_judgments,
              RunOptions("hybrid-rerank", chunk_size=120, reranker_path=str(tiny_ce), rerank_top_n=3))
    assert rec.stages == ["bm25", "dense", "fusion", "rerank", "final"]
    got = dict(stage_rows(warehouse, rec.run_id))
    assert set(got) == set(rec.stages)
    per_q = warehouse.con.execute(
        "SELECT MAX(n) FROM (SELECT query_id, COUNT(*) AS n FROM hits WHERE run_id = ? AND stage = 'rerank' "
        "GROUP BY query_id)", [rec.run_id]).fetchall()[0][0]
    assert per_q == 3  # the reranker scores the top 3 fused candidates only
    cfg = json.loads(warehouse.con.execute("SELECT config FROM runs WHERE run_id = ?", [rec.run_id]).fetchall()[0][0])
    assert cfg["retrieval"]["fusion"] == {"method": "rrf", "k": 60}
    assert cfg["retrieval"]["rerank"]["top_n"] == 3 and len(cfg["retrieval"]["rerank"]["onnx_sha256"]) == 64
    assert cfg["retrieval"]["dense"]["embedding"]["dim"] == 384
    stages = warehouse.con.execute("SELECT stage FROM run_stages WHERE run_id = ? ORDER BY position",
                                   [rec.run_id]).fetchall()
    assert [s for s, in stages] == rec.stages
    lat = warehouse.con.execute("SELECT COUNT(*) FROM stage_latency WHERE run_id = ?", [rec.run_id]).fetchall()
    assert lat[0][0] == 6 * 5


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_repeated_dense_run_reuses_every_vector(warehouse, mini_corpus, mini_judgments):
    first = run(warehouse, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120))
    assert first.stats["embeddings"]["computed"] > 0 and first.stats["embeddings"]["reused"] == 0
    second = run(warehouse, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120))
    assert second.stats["embeddings"] == {"computed": 0, "reused": first.stats["embeddings"]["computed"]}
    report = build_report(warehouse, second.run_id)
    assert report["run"]["embeddings"] == {"computed": 0, "reused": first.stats["embeddings"]["computed"]}
    # a chunk-size sweep embeds only the texts it has not seen
    third = run(warehouse, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=2000))
    texts = {c.text for c in third.chunks}
    seen = {c.text for c in first.chunks}
    assert third.stats["embeddings"]["computed"] == len(texts - seen)
    assert third.stats["embeddings"]["reused"] == len(texts & seen)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_stage_that_returns_nothing(warehouse, mini_corpus, mini_judgments):
    # BM25 returns nothing for the tulip question; dense always answers; fusion keeps dense's list
    rec = run(warehouse, mini_corpus, mini_judgments, RunOptions("hybrid", chunk_size=120))
    counts = dict(warehouse.con.execute(
        "SELECT stage, COUNT(*) FROM hits WHERE run_id = ? AND query_id = 'tulips' GROUP BY stage",
        [rec.run_id]).fetchall())
    assert "bm25" not in counts and counts["dense"] == counts["fusion"] == counts["final"] > 0


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_weakened_pipeline_returns_three(warehouse, mini_corpus, mini_judgments):
    rec = run(warehouse, mini_corpus, mini_judgments, RunOptions("dense-top3", chunk_size=120))
    assert all(n == 3 for _, _, n in rec.query_rows)


def _attribution(wh, run_id):
    rows = wh.con.execute("SELECT query_id, in_bm25, in_dense, in_fusion, in_rerank, in_final, lost_at "
                          "FROM stage_attribution WHERE run_id = ? ORDER BY query_id", [run_id]).fetchall()
    return {r[0]: r[1:] for r in rows}


def test_stage_attribution_known_answers(warehouse):
    c = [Chunk("a.md", i, i * 100, i * 100 + 50, "x" * 50) for i in range(8)]
    ids = [x.chunk_id for x in c]
    gold = [("a.md", 10, 20, 1)]  # inside chunk 0 only
    syn = Synthetic(["a.md"], c, [
        QuerySpec("found", gold, []), QuerySpec("retrieval", gold, []), QuerySpec("fusion", gold, []),
        QuerySpec("rerank", gold, []), QuerySpec("cutoff", gold, []), QuerySpec("rescued", gold, []),
    ])
    stages = {
        "found": {"bm25": [ids[0]], "dense": [ids[1]], "fusion": [ids[0]], "rerank": [ids[0]], "final": [ids[0]]},
        "retrieval": {"bm25": [ids[1]], "dense": [ids[2]], "fusion": [ids[1]], "rerank": [ids[1]], "final": [ids[1]]},
        "fusion": {"bm25": [ids[0]], "dense": [ids[0]], "fusion": [ids[3]], "rerank": [ids[3]], "final": [ids[3]]},
        "rerank": {"bm25": [ids[0]], "dense": [ids[2]], "fusion": [ids[0]], "rerank": [ids[2]], "final": [ids[2]]},
        "cutoff": {"bm25": [ids[0]], "dense": [ids[0]], "fusion": [ids[0]], "rerank": [ids[2], ids[0]],
                   "final": [ids[2]]},
        "rescued": {"bm25": [ids[4]], "dense": [ids[0]], "fusion": [ids[0]], "rerank": [ids[0]], "final": [ids[0]]},
    }
    rec = write_synthetic(warehouse, syn, stages=stages)
    got = _attribution(warehouse, rec.run_id)
    assert got["found"] == (1, 0, 1, 1, 1, "found")
    assert got["retrieval"][-1] == "retrieval"
    assert got["fusion"][-1] == "fusion"
    assert got["rerank"][-1] == "rerank"
    assert got["cutoff"][-1] == "cutoff"
    assert got["rescued"] == (0, 1, 1, 1, 1, "found")
    funnel = dict(warehouse.con.execute("SELECT lost_at, n FROM loss_funnel WHERE run_id = ?",
                                        [rec.run_id]).fetchall())
    assert funnel == {"found": 2, "retrieval": 1, "fusion": 1, "rerank": 1, "cutoff": 1}
    rescued, lost = warehouse.con.execute("SELECT rescued, lost FROM fusion_effect WHERE run_id = ?",
                                          [rec.run_id]).fetchall()[0]
    # rescued: gold missing from one input list, kept by fusion ('found', 'rerank', 'rescued');
    # lost: in an input list, cut by fusion ('fusion')
    assert (rescued, lost) == (3, 1)
