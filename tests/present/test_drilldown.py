"""The drill-down data (assay.present.drilldown) against an independent computation: each run's hits, chunk spans read
from the chunk ids, gold spans and document texts, read with plain SQL from a real DuckDB warehouse and
worked out again in Python. Runs: the demo golden set with bm25, a hybrid run with an answer stage, a short
final list (questions lost at the cutoff), whole documents, and an external retriever's spans."""

import json

import pytest

import assay
from assay.present.drilldown import question_detail, question_details, question_rows, resolve_run
from assay.core.errors import ConfigError, QueryNotFound, RunNotFound
from assay.runs.runner import RunOptions, run
from conftest import DEMO, MINI

FIRST_STAGES = ("bm25", "dense", "external")


def _span_retriever():
    design = (MINI / "corpus" / "storage" / "design.md").read_text()
    start = design.index("WAL mode allows")

    def retriever(question, limit):
        if "write-ahead" in question:  # a span inside a document, then the whole of another
            return [{"doc_id": "storage/design.md", "start": start, "end": start + 40, "score": 1.0},
                    "ops/backup.rst"]
        return ["ops/backup.rst", ("storage/cache.txt", 0.5), {"doc_id": "storage/design.md", "start": 0, "end": 90}]
    return retriever


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from assay.store.warehouse import Warehouse

    path = tmp_path_factory.mktemp("drill") / "w.duckdb"
    ids = {}
    with Warehouse.open(path) as wh:
        ids["demo"] = run(wh, DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions()).run_id
        mini = (MINI / "corpus", MINI / "judgments.jsonl")
        ids["hybrid"] = run(wh, *mini, RunOptions("hybrid", chunk_size=120, generator="extractive")).run_id
        ids["cutoff"] = run(wh, *mini, RunOptions(chunk_size=60, final_k=1)).run_id
        ids["documents"] = run(wh, *mini, RunOptions(chunker="document")).run_id
        ids["spans"] = assay.evaluate(_span_retriever(), MINI / "judgments.jsonl", MINI / "corpus", wh)["run_id"]
    with Warehouse.open(path, read_only=True) as wh:
        yield wh, ids


def _sql(wh, sql, *params):
    cur = wh.con.execute(sql, list(params))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


class Truth:
    """One run worked out from its stored rows, without the drill-down's SQL or the judged views."""

    def __init__(self, wh, run_id):
        r = _sql(wh, "SELECT corpus_hash, judgments_hash FROM runs WHERE run_id = ?", run_id)[0]
        self.docs = {d["doc_id"]: d["text"] for d in _sql(
            wh, "SELECT doc_id, text FROM documents WHERE corpus_hash = ?", r["corpus_hash"])}
        self.gold = {}
        for g in _sql(wh, "SELECT * FROM gold_spans WHERE judgments_hash = ? AND corpus_hash = ? ORDER BY gold_idx",
                      r["judgments_hash"], r["corpus_hash"]):
            self.gold.setdefault(g["query_id"], []).append(g)
        self.questions = _sql(wh, "SELECT q.query_id, q.category, rq.n_results FROM run_queries rq JOIN queries q "
                                  "ON q.judgments_hash = ? AND q.query_id = rq.query_id WHERE rq.run_id = ? "
                                  "ORDER BY q.query_id", r["judgments_hash"], run_id)
        self.stages = [s for s, in wh.con.execute(
            "SELECT stage FROM run_stages WHERE run_id = ? ORDER BY position", [run_id]).fetchall()]
        self.hits = {}
        for h in _sql(wh, "SELECT query_id, stage, rank, chunk_id, doc_id, score FROM hits WHERE run_id = ? "
                          "ORDER BY rank", run_id):
            self.hits.setdefault((h["query_id"], h["stage"]), []).append(h)
        self.answers = {a["query_id"]: a for a in _sql(wh, "SELECT * FROM answers WHERE run_id = ?", run_id)}

    @staticmethod
    def span(chunk_id):
        """[start, end) from the chunk id '<doc>#<start>-<end>', as every result unit names its span."""
        start, end = chunk_id.rsplit("#", 1)[1].split("-")
        return int(start), int(end)

    def overlaps(self, qid, hit):
        start, end = self.span(hit["chunk_id"])
        return [g for g in self.gold.get(qid, [])
                if g["doc_id"] == hit["doc_id"] and start < g["end_char"] and g["start_char"] < end]

    def first_rank(self, qid, stage):
        return next((h["rank"] for h in self.hits.get((qid, stage), []) if self.overlaps(qid, h)), None)

    def first_doc_rank(self, qid):
        gold_docs = {g["doc_id"] for g in self.gold.get(qid, [])}
        seen = []
        for h in self.hits.get((qid, "final"), []):
            if h["doc_id"] not in seen:
                seen.append(h["doc_id"])
                if h["doc_id"] in gold_docs:
                    return len(seen)
        return None

    def lost_at(self, qid, n_results):
        if not self.gold.get(qid):
            return None
        present = {s: self.first_rank(qid, s) is not None for s in self.stages}
        if present["final"]:
            return "found"
        if not any(present.get(s) for s in FIRST_STAGES):
            return "retrieval"
        for stage in ("fusion", "rerank"):
            if stage in present and not present[stage]:
                return stage
        return "abstained" if n_results == 0 else "cutoff"


RUNS = ["demo", "hybrid", "cutoff", "documents", "spans"]


@pytest.mark.parametrize("name", RUNS)
def test_question_rows_agree_with_a_recomputation_from_hits_and_gold_spans(runs, name):
    wh, ids = runs
    truth = Truth(wh, ids[name])
    rows = question_rows(wh, ids[name])
    assert [r["query_id"] for r in rows] == [q["query_id"] for q in truth.questions]
    for row, q in zip(rows, truth.questions):
        qid = q["query_id"]
        answerable = q["category"] != "no_answer"
        first_chunk, first_doc = truth.first_rank(qid, "final"), truth.first_doc_rank(qid)
        assert row["answerable"] is answerable
        assert row["n_results"] == q["n_results"] == len(truth.hits.get((qid, "final"), []))
        assert (row["first_rank_chunk"], row["first_rank_doc"]) == (first_chunk, first_doc), qid
        if answerable:
            assert row["success_doc_3"] == int(first_doc is not None and first_doc <= 3), qid
            assert row["success_chunk_10"] == int(first_chunk is not None and first_chunk <= 10), qid
        else:
            assert row["success_doc_3"] is None and row["success_chunk_10"] is None
        assert row["lost_at"] == (truth.lost_at(qid, q["n_results"]) if answerable else None), qid
        answer = truth.answers.get(qid)
        assert row["answer_status"] == (answer["status"] if answer else None)


def test_the_runs_cover_the_interesting_cases(runs):
    wh, ids = runs
    lost = {name: {r["lost_at"] for r in question_rows(wh, ids[name])} for name in RUNS}
    assert "cutoff" in lost["cutoff"] and "found" in lost["demo"]
    assert {r["answer_status"] for r in question_rows(wh, ids["hybrid"])} >= {"answered"}
    assert Truth(wh, ids["hybrid"]).stages == ["bm25", "dense", "fusion", "final"]
    assert Truth(wh, ids["spans"]).stages == ["external", "final"]


def test_the_success_columns_equal_the_stored_measure_values(runs):
    wh, ids = runs
    stored = {(q, m, lvl): v for q, m, lvl, v in wh.con.execute(
        "SELECT query_id, measure, level, value FROM measure_values WHERE run_id = ? AND stage = 'final'",
        [ids["demo"]]).fetchall()}
    for row in question_rows(wh, ids["demo"]):
        if row["answerable"]:
            assert row["success_doc_3"] == stored[(row["query_id"], "Success@3", "doc")]
            if (row["query_id"], "Success@10", "chunk") in stored:
                assert row["success_chunk_10"] == stored[(row["query_id"], "Success@10", "chunk")]


@pytest.mark.parametrize("name", RUNS)
def test_every_hit_shows_its_document_span_with_each_gold_overlap_marked(runs, name):
    wh, ids = runs
    truth, depth = Truth(wh, ids[name]), 3
    details = question_details(wh, ids[name], depth=depth)
    assert list(details) == [q["query_id"] for q in truth.questions]
    n_marks = 0
    for q in truth.questions:
        qid = q["query_id"]
        d = details[qid]
        assert [g["gold_idx"] for g in d["gold"]] == [g["gold_idx"] for g in truth.gold.get(qid, [])]
        assert [s["stage"] for s in d["stages"]] == truth.stages  # pipeline order, final last
        for stage in d["stages"]:
            stored = truth.hits.get((qid, stage["stage"]), [])
            first = truth.first_rank(qid, stage["stage"])
            wanted = [h["rank"] for h in stored if h["rank"] <= depth or h["rank"] == first]
            assert [h["rank"] for h in stage["hits"]] == wanted
            assert (stage["n_hits"], stage["first_relevant_rank"]) == (len(stored), first)
            for hit in stage["hits"]:
                start, end = truth.span(hit["chunk_id"])
                doc = truth.docs[hit["doc_id"]]
                assert (hit["start_char"], hit["end_char"]) == (start, end)
                assert hit["text"] == doc[start:end]
                assert hit["beyond_depth"] is (hit["rank"] > depth)
                golds = {g["gold_idx"]: g for g in truth.overlaps(qid, hit)}
                assert hit["relevant"] is bool(golds)
                assert hit["grade"] == (max(g["grade"] for g in golds.values()) if golds else None)
                assert sorted(m["gold_idx"] for m in hit["marks"]) == sorted(golds)
                for m in hit["marks"]:
                    g = golds[m["gold_idx"]]
                    overlap = doc[max(start, g["start_char"]):min(end, g["end_char"])]
                    assert hit["text"][m["start"]:m["end"]] == overlap and overlap
                    if g["quote"] is not None and g["start_char"] >= start and g["end_char"] <= end:
                        assert overlap == doc[g["start_char"]:g["end_char"]]
                    n_marks += 1
    assert n_marks > 0


def test_whole_documents_and_external_spans_are_document_text(runs):
    wh, ids = runs
    d = question_detail(wh, ids["spans"], "wal-purpose")
    (external,) = [s for s in d["stages"] if s["stage"] == "external"]
    span, whole = external["hits"][:2]
    design = (MINI / "corpus" / "storage" / "design.md").read_text()
    assert span["text"] == design[span["start_char"]:span["start_char"] + 40] and span["text"].startswith("WAL mode")
    assert whole["chunk_id"] == f"ops/backup.rst#0-{whole['end_char']}" and whole["start_char"] == 0
    final = question_detail(wh, ids["documents"], "page-size")["stages"][-1]
    (doc,) = [h for h in final["hits"] if h["relevant"]]
    # the document chunker's one chunk: the document less its final newline
    assert (doc["chunk_id"], doc["text"]) == (f"storage/design.md#0-{len(design) - 1}", design[:-1])
    assert doc["text"][doc["marks"][0]["start"]:doc["marks"][0]["end"]] == "Every page is 4096 bytes."


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_one_question_equals_its_entry_among_all_questions(runs):
    wh, ids = runs
    for name in ("hybrid", "spans"):
        every = question_details(wh, ids[name], depth=2)
        for qid, detail in every.items():
            assert question_detail(wh, ids[name], qid, depth=2) == detail


def test_an_answer_stage_shows_the_answer_claims_and_citations(runs):
    wh, ids = runs
    details = question_details(wh, ids["hybrid"])
    truth = Truth(wh, ids["hybrid"])
    claims = _sql(wh, "SELECT query_id, claim_idx, kept, reason FROM claims WHERE run_id = ?", ids["hybrid"])
    cites = _sql(wh, "SELECT query_id, claim_idx, cite_idx, chunk_id, valid FROM citations WHERE run_id = ?",
                 ids["hybrid"])
    for qid, d in details.items():
        a, stored = d["answer"], truth.answers[qid]
        assert (a["status"], a["refusal"], a["failure_stage"], a["generator"]) == (
            stored["status"], stored["refusal"], stored["failure_stage"], "extractive")
        assert a["drops"] == (json.loads(stored["drops"]) if stored["drops"] else {})
        assert [(c["claim_idx"], c["kept"], c["reason"]) for c in a["claims"]] == sorted(
            (c["claim_idx"], c["kept"], c["reason"]) for c in claims if c["query_id"] == qid)
        assert sorted((c["claim_idx"], x["cite_idx"], x["chunk_id"], x["valid"]) for c in a["claims"]
                      for x in c["citations"]) == sorted(
            (x["claim_idx"], x["cite_idx"], x["chunk_id"], x["valid"]) for x in cites if x["query_id"] == qid)
        assert a["context"] == [c for c, in wh.con.execute(
            "SELECT chunk_id FROM answer_context WHERE run_id = ? AND query_id = ? ORDER BY position",
            [ids["hybrid"], qid]).fetchall()]
    assert any(d["answer"]["claims"] for d in details.values())
    assert question_detail(wh, ids["demo"], "adv-automatic-failover")["answer"] is None


def test_unknown_ids_name_the_run_and_the_nearest_ids(runs):
    wh, ids = runs
    with pytest.raises(QueryNotFound, match=rf"run {ids['spans']} has no question 'page-sise'; did you mean page-size"):
        question_detail(wh, ids["spans"], "page-sise")
    typo = ids["demo"][:-1] + ("0" if ids["demo"][-1] != "0" else "1")
    with pytest.raises(RunNotFound, match=rf"no run '{typo}' in .*; did you mean {ids['demo']}"):
        resolve_run(wh, typo)
    with pytest.raises(RunNotFound, match="did you mean"):
        question_rows(wh, typo)
    assert resolve_run(wh, "latest") == ids["spans"]
    with pytest.raises(ConfigError, match="depth"):
        question_detail(wh, ids["demo"], "adv-automatic-failover", depth=0)


def test_a_run_stored_before_stage_records_takes_its_stages_from_its_hits(runs, tmp_path):
    import shutil

    from assay.store.warehouse import Warehouse

    wh, ids = runs
    old = tmp_path / "old.duckdb"
    shutil.copy(wh.path, old)
    with Warehouse.open(old) as w:
        w.con.execute("DELETE FROM run_stages WHERE run_id = ?", [ids["hybrid"]])
        detail = question_detail(w, ids["hybrid"], "page-size", depth=1)
    assert [(s["stage"], s["position"]) for s in detail["stages"]] == [
        ("bm25", None), ("dense", None), ("fusion", None), ("final", None)]
    assert all(s["hits"] and s["hits"][0]["rank"] == 1 for s in detail["stages"])
