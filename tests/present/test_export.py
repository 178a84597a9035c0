"""Exports on real runs: Parquet round trips, CSV and JSON values, TREC files against pytrec_eval, atomic writes."""

import csv
import json
import re
from collections import defaultdict

import duckdb
import pytest
import pytrec_eval

from assay.present import export
from assay.inputs.chunking import Chunk
from assay.core.errors import AssayError, ConfigError, ExportError, RunNotFound
from assay.present.export import TABLES, columns, export_runs
from assay.measures.compute import evaluate, per_query
from assay.measures.registry import DEFAULT_MEASURES, parse_measure
from assay.runs.runner import RunOptions, run
from assay.core.sqlfiles import load_sql
from assay.measures import fill
from assay.store.warehouse import Warehouse
from conftest import MINI, ROOT
from synthetic import QuerySpec, Synthetic, write_synthetic

TREC_LINE = re.compile(r"^(\S+) Q0 (\S+) (\d+) (\S+) (\S+)$")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One bm25 run and one hybrid run (real tantivy, the offline ONNX embedder) in one warehouse."""
    wh = Warehouse.open(tmp_path_factory.mktemp("export") / "wh.duckdb")
    bm25 = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions("bm25"))
    hybrid = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions("hybrid", chunk_size=120))
    yield wh, bm25, hybrid
    wh.close()


def typed(rows):
    """Rows as sortable tuples that also compare the Python type of each value (1, 1.0 and True differ)."""
    return sorted(tuple((type(v).__name__, v) for v in row) for row in rows)


def expected_rows(wh, table, rec):
    """(column types, rows) the warehouse gives for one run: the SQL file, or the metric functions themselves."""
    """The budget columns are metrics.fill's (their values against hand-counted tokens: tests/measures/test_fill.py)."""
    if table == "per_query_metrics":
        tokens = fill.available(wh, rec.run_id)
        rows = [(rec.run_id, qid.split("|")[0], m.name, level, v, qid,
                 *(fill.fill(tokens, m.budget, [qid]) if m.budget else dict.fromkeys(fill.FIELDS)).values())
                for m in DEFAULT_MEASURES for (qid, level), v in per_query(wh, rec.run_id, m, "final").items()]
        return None, rows
    if table == "metrics":
        rows = evaluate(wh, rec.run_id, DEFAULT_MEASURES, seed=rec.config["seed"],
                        samples=rec.config["bootstrap_samples"])
        marks = fill.annotate(wh, rec.run_id, [{"metric": r.metric, "slice": r.slice} for r in rows])
        return None, [(rec.run_id, r.metric, r.level, r.slice, r.value, r.n, r.ci_low, r.ci_high,
                       *(m[f] for f in fill.FIELDS)) for r, m in zip(rows, marks)]
    cur = wh.con.execute(load_sql(f"exports/{table}"), {"run_id": rec.run_id})
    return [str(d[1]) for d in cur.description], cur.fetchall()


def read_partitioned(out, table):
    cols = ", ".join(f'"{c}"' for c in columns(table))
    cur = duckdb.connect().execute(
        f"SELECT {cols} FROM read_parquet(?, hive_partitioning = true, hive_types = {{'run_id': VARCHAR}})",
        [str(out / table / "*" / "*.parquet")])
    return [str(d[1]) for d in cur.description], cur.fetchall()


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_parquet_round_trip_loses_nothing(runs, tmp_path):
    import pyarrow as pa
    import pyarrow.dataset as ds

    wh, bm25, hybrid = runs
    out = tmp_path / "out"
    manifest = export_runs(wh, [bm25.run_id, hybrid.run_id], "parquet", out)
    assert manifest["runs"] == [bm25.run_id, hybrid.run_id]
    assert json.loads((out / "manifest.json").read_text()) == manifest
    for table in TABLES:
        assert sorted(p.name for p in (out / table).iterdir()) == sorted(
            f"run_id={r.run_id}" for r in (bm25, hybrid)), table
        want_rows, declared = [], [t for _, t in TABLES[table]]
        for rec in (bm25, hybrid):
            types, rows = expected_rows(wh, table, rec)
            assert types in (None, declared), table
            want_rows += rows
        got_types, got_rows = read_partitioned(out, table)
        assert got_types == declared, table
        assert typed(got_rows) == typed(want_rows), table
        assert manifest["tables"][table] == len(want_rows)
        assert want_rows or table in ("answers", "claims", "citations"), table  # these runs have no answer stage
    # NULLs survive: stages the pipeline lacks, a missing git commit or unanswerable kind
    _, attribution = read_partitioned(out, "stage_attribution")
    assert any(row[columns("stage_attribution").index("in_dense")] is None for row in attribution)
    # pyarrow readers see the same types
    schema = ds.dataset(out / "runs", format="parquet", partitioning="hive").schema
    assert schema.field("started_at").type == pa.timestamp("us") and schema.field("seed").type == pa.int32()
    assert ds.dataset(out / "questions", partitioning="hive").schema.field("answerable").type == pa.bool_()
    files = {f["path"]: f for f in manifest["files"]}
    assert files[f"hits/run_id={bm25.run_id}/part-0.parquet"]["rows"] == len(expected_rows(wh, "hits", bm25)[1])


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_csv_and_json(runs, tmp_path):
    wh, bm25, hybrid = runs
    ids = [bm25.run_id, hybrid.run_id]
    n_hits = wh.con.execute("SELECT COUNT(*) FROM hits WHERE run_id IN (?, ?)", ids).fetchall()[0][0]
    want_counts = {"runs": 2, "questions": 12, "hits": n_hits, "stage_attribution": 10}
    csv_manifest = export_runs(wh, ids, "csv", tmp_path / "csv")
    json_manifest = export_runs(wh, ids, "json", tmp_path / "json")
    csv_rows, json_rows = {}, {}
    for table in TABLES:
        with open(tmp_path / "csv" / f"{table}.csv", newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            assert reader.fieldnames == columns(table)
            csv_rows[table] = list(reader)
        lines = (tmp_path / "json" / f"{table}.jsonl").read_text(encoding="utf-8").splitlines()
        json_rows[table] = [json.loads(line) for line in lines]
        assert all(list(r) == columns(table) for r in json_rows[table])
        assert len(csv_rows[table]) == len(json_rows[table]) == csv_manifest["tables"][table] \
            == json_manifest["tables"][table]
        if table in want_counts:
            assert len(csv_rows[table]) == want_counts[table], table

    run_csv, run_json = csv_rows["runs"][0], json_rows["runs"][0]
    assert run_csv["run_id"] == run_json["run_id"] == bm25.run_id
    assert run_csv["started_at"] == run_json["started_at"] == bm25.started_at.isoformat()
    assert json.loads(run_csv["config"]) == json.loads(run_json["config"]) == bm25.config
    assert run_json["seed"] == 0 and run_csv["seed"] == "0"

    tulips = next(r for r in json_rows["questions"] if r["run_id"] == bm25.run_id and r["query_id"] == "tulips")
    assert (tulips["unanswerable"], tulips["answerable"], tulips["n_results"]) == ("out_of_corpus", False, 0)
    page = next(r for r in csv_rows["questions"] if r["run_id"] == bm25.run_id and r["query_id"] == "page-size")
    assert (page["unanswerable"], page["answerable"], page["form"]) == ("", "true", "match")

    att = next(r for r in json_rows["stage_attribution"] if r["run_id"] == bm25.run_id)
    assert att["in_bm25"] in (0, 1) and att["in_dense"] is None
    assert next(r for r in csv_rows["stage_attribution"] if r["run_id"] == bm25.run_id)["in_dense"] == ""

    first = wh.con.execute(
        "SELECT h.chunk_id, h.score, c.start_char, c.end_char FROM hits h JOIN chunks c "
        "ON c.chunk_set = ? AND c.chunk_id = h.chunk_id "
        "WHERE h.run_id = ? AND h.query_id = 'wal-purpose' AND h.stage = 'final' AND h.rank = 1",
        [bm25.chunk_set, bm25.run_id]).fetchall()[0]
    hit = next(r for r in json_rows["hits"] if (r["run_id"], r["query_id"], r["stage"], r["rank"])
               == (bm25.run_id, "wal-purpose", "final", 1))
    assert (hit["chunk_id"], hit["score"], hit["start_char"], hit["end_char"]) == first
    assert hit["chunk_id"] == f"{hit['doc_id']}#{hit['start_char']}-{hit['end_char']}"

    # metric values survive text exactly (repr precision)
    report_rows = {(r.metric, r.level, r.slice): r for r in evaluate(wh, bm25.run_id)}
    for row in csv_rows["metrics"]:
        if row["run_id"] == bm25.run_id:
            want = report_rows[(row["metric"], row["level"], row["slice"])]
            assert (float(row["value"]), int(row["n"]), float(row["ci_low"])) == (want.value, want.n, want.ci_low)
    assert {r["metric"] for r in json_rows["per_query_metrics"]} == {
        m.name for m in DEFAULT_MEASURES if m.family.levels != ("answer",)}  # these runs have no answer stage


def read_trec(path):
    """{query_id: [(rank, docno, score text, tag)]} in file order."""
    by_query = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        m = TREC_LINE.match(line)
        assert m, line
        qid, docno, rank, score, tag = m.groups()
        by_query[qid].append((int(rank), docno, score, tag))
    return by_query


def tied_queries(ranked):
    """Queries whose scores do not strictly decrease with rank: trec_eval may reorder them."""
    return sorted(q for q, rows in ranked.items() if any(float(a[2]) <= float(b[2]) for a, b in zip(rows, rows[1:])))


def test_trec_files(runs, tmp_path):
    wh, bm25, hybrid = runs
    out = tmp_path / "trec"
    manifest = export_runs(wh, [bm25.run_id, hybrid.run_id], "trec", out)
    judgments = bm25.judgments.sha256[:12]
    want = {f"{r.run_id}.{stage}{level}.trec" for r in (bm25, hybrid) for stage in r.stages for level in ("", ".doc")}
    assert hybrid.stages == ["bm25", "dense", "fusion", "final"]
    assert {p.name for p in out.iterdir()} == want | {f"{judgments}.doc.qrels", "manifest.json"}
    files = {f["path"]: f for f in manifest["files"]}
    for rec in (bm25, hybrid):
        for stage in rec.stages:
            chunk_level = read_trec(out / f"{rec.run_id}.{stage}.trec")
            stored = [h for h in rec.hits if h[1] == stage]
            assert sum(map(len, chunk_level.values())) == len(stored) == files[f"{rec.run_id}.{stage}.trec"]["rows"]
            for path in (f"{rec.run_id}.{stage}.trec", f"{rec.run_id}.{stage}.doc.trec"):
                ranked = read_trec(out / path)
                for rows in ranked.values():
                    assert [r[0] for r in rows] == list(range(1, len(rows) + 1))
                    assert all(tag == f"assay-{rec.run_id}" and repr(float(s)) == s for _, _, s, tag in rows)
                assert files[path]["tied_queries"] == tied_queries(ranked)
            # chunk ids as docnos, stored ranks and scores
            q, _, rank, chunk_id, _, score = stored[0]
            assert chunk_level[q][rank - 1][1:3] == (chunk_id, repr(float(score)))
            # document level, computed independently: first-seen documents, each at its best chunk score
            best = defaultdict(dict)
            for q, _, _, _, doc, score in sorted(stored, key=lambda h: (h[0], h[2])):
                best[q][doc] = max(best[q].get(doc, float("-inf")), float(score))
            doc_level = read_trec(out / f"{rec.run_id}.{stage}.doc.trec")
            assert {q: [(d, float(s)) for _, d, s, _ in rows] for q, rows in doc_level.items()} == \
                {q: list(docs.items()) for q, docs in best.items()}
    # RRF scores tie; the manifest says which queries trec_eval may reorder
    assert files[f"{hybrid.run_id}.fusion.doc.trec"]["tied_queries"]
    qrels = [line.split() for line in (out / f"{judgments}.doc.qrels").read_text().splitlines()]
    assert ["backup-readers", "0", "ops/backup.rst", "2"] in qrels and len(qrels) == manifest["tables"]["gold_units"]


def test_doc_level_trec_reproduces_ndcg_with_pytrec_eval(runs, tmp_path):
    wh, bm25, _ = runs
    out = tmp_path / "trec"
    export_runs(wh, [bm25.run_id], "trec", out)
    ranked = read_trec(out / f"{bm25.run_id}.final.doc.trec")
    # trec_eval re-sorts by score (ties by docno, descending); only strictly decreasing scores keep our order
    assert tied_queries(ranked) == [], "tied doc-level scores: trec_eval could reorder these queries"
    run_dict = {q: {doc: float(s) for _, doc, s, _ in rows} for q, rows in ranked.items()}
    qrels = defaultdict(dict)
    for line in (out / f"{bm25.judgments.sha256[:12]}.doc.qrels").read_text().splitlines():
        q, _, doc, grade = line.split()
        qrels[q][doc] = int(grade)
    trec = pytrec_eval.RelevanceEvaluator(dict(qrels), {"ndcg_cut.10"}).evaluate(run_dict)
    ours = {q: v for (q, level), v in per_query(wh, bm25.run_id, parse_measure("nDCG@10")).items() if level == "doc"}
    assert set(ours) == set(qrels) and len(ours) == 5
    for q, value in ours.items():
        want = trec[q]["ndcg_cut_10"] if q in trec else 0.0  # trec_eval skips a question with no results
        assert value == pytest.approx(want, abs=1e-9), q


def test_trec_refuses_ids_with_whitespace(warehouse, tmp_path):
    chunk = Chunk("a b.md", 0, 0, 100, "x" * 100)
    write_synthetic(warehouse, Synthetic(["a b.md"], [chunk], [QuerySpec("q1", [("a b.md", 0, 10, 1)],
                                                                          [chunk.chunk_id])]))
    with pytest.raises(ExportError, match=re.escape("chunk id 'a b.md#0-100' contains whitespace")):
        export_runs(warehouse, ["synthetic-run"], "trec", tmp_path / "out")
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out.*"))
    assert export_runs(warehouse, ["synthetic-run"], "csv", tmp_path / "csv")["tables"]["hits"] == 1


def test_refuses_a_non_empty_out_dir(runs, tmp_path):
    wh, bm25, _ = runs
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(AssayError, match="choose a new or empty directory"):
        export_runs(wh, [bm25.run_id], "csv", out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"] and (out / "keep.txt").read_text() == "mine"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    (out / "keep.txt").unlink()  # an empty directory is fine
    assert export_runs(wh, [bm25.run_id], "csv", out)["tables"]["runs"] == 1


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_resolves_runs_and_refuses_unknown_ones_and_formats(runs, tmp_path):
    wh, bm25, hybrid = runs
    with pytest.raises(RunNotFound, match="no run 'nope'"):
        export_runs(wh, [bm25.run_id, "nope"], "csv", tmp_path / "a")
    with pytest.raises(ConfigError, match="unknown export format 'xlsx'; choose one of parquet, csv, json, trec"):
        export_runs(wh, [bm25.run_id], "xlsx", tmp_path / "b")
    assert list(tmp_path.iterdir()) == []
    manifest = export_runs(wh, ["latest", bm25.run_id[:-2], hybrid.run_id], "json", tmp_path / "c")
    assert manifest["runs"] == [hybrid.run_id, bm25.run_id]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_failure_midway_leaves_no_out_dir(runs, tmp_path, monkeypatch):
    wh, bm25, _ = runs
    real, written = export.WRITERS["parquet"], []

    def failing(root, table, rows_by_run):
        if table == "metrics":
            raise RuntimeError("disk full")
        written.append(table)
        return real(root, table, rows_by_run)

    monkeypatch.setitem(export.WRITERS, "parquet", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        export_runs(wh, [bm25.run_id], "parquet", tmp_path / "out")
    assert written[:3] == ["runs", "questions", "hits"]  # it failed part-way, after real files were written
    assert list(tmp_path.iterdir()) == []  # no out_dir, no staging directory


def test_docs_describe_every_exported_column():
    text = (ROOT / "docs" / "exports.md").read_text(encoding="utf-8")
    for table, cols in TABLES.items():
        section = re.search(rf"^### `{table}`\n(.*?)(?=^#)", text, re.S | re.M)
        assert section, table
        documented = re.findall(r"^\| `(\w+)` \| (\w+) \| .+ \|$", section.group(1), re.M)
        assert documented == list(cols), table


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_hits_carry_their_relevance_and_gold_spans_export_as_a_table(runs, tmp_path):
    """relevance and grade, recomputed here from the exported gold spans: overlap at chunk level, the best grade."""
    wh, bm25, hybrid = runs
    export_runs(wh, [bm25.run_id, hybrid.run_id], "json", tmp_path / "json")
    rows = {table: [json.loads(line) for line in (tmp_path / "json" / f"{table}.jsonl").read_text().splitlines()]
            for table in ("hits", "gold_spans")}
    stored = wh.con.execute("SELECT r.run_id, g.query_id, g.gold_idx, g.doc_id, g.start_char, g.end_char, g.grade, "
                            "g.quote FROM runs r JOIN gold_spans g USING (judgments_hash, corpus_hash) "
                            "WHERE r.run_id IN (?, ?)", [bm25.run_id, hybrid.run_id]).fetchall()
    assert sorted(tuple(r.values()) for r in rows["gold_spans"]) == sorted(stored)
    gold = defaultdict(list)
    for g in rows["gold_spans"]:
        gold[(g["run_id"], g["query_id"])].append(g)
    for hit in rows["hits"]:
        grades = [g["grade"] for g in gold[(hit["run_id"], hit["query_id"])] if g["doc_id"] == hit["doc_id"]
                  and hit["start_char"] < g["end_char"] and g["start_char"] < hit["end_char"]]
        assert (hit["relevance"], hit["grade"]) == ((1, max(grades)) if grades else (0, 0)), hit
    assert {h["relevance"] for h in rows["hits"]} == {0, 1}
    # Success@k at chunk level is "a relevant hit in the top k": the exported column gives the stored value
    final = [h for h in rows["hits"] if h["run_id"] == bm25.run_id and h["stage"] == "final"]
    values = per_query(wh, bm25.run_id, parse_measure("Success@3"), "final")
    for (qid, level), value in values.items():
        if level == "chunk":
            assert value == max((h["relevance"] for h in final if h["query_id"] == qid and h["rank"] <= 3),
                                default=0), qid


# -- what BI tools need: run_id in every file, status and kind, failed runs, answers, types they read ----------

@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """A warehouse holding a run with extractive answers (claims and citations), a rescore of it, and a run whose
    answer stage failed (its model's port closed): real runs, a real refused connection."""
    import os
    import socket

    from assay.runs.rescore import rescore

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"  # nothing listens there once the socket closes
    wh = Warehouse.open(tmp_path_factory.mktemp("outcomes") / "wh.duckdb")
    answered = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions("bm25", generator="extractive"))
    rescored = rescore(wh, answered.run_id, MINI / "judgments.jsonl")["run_id"]
    os.environ["ASSAY_EXPORT_TEST_KEY"] = "sk-export-test"
    try:
        failed = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(
            "bm25", chunk_size=120, generator="openai", generator_base_url=closed, generator_model="m",
            generator_api_key_env="ASSAY_EXPORT_TEST_KEY", generator_timeout_s=2.0, generator_backoff_s=[0.01, 0.01]))
    finally:
        del os.environ["ASSAY_EXPORT_TEST_KEY"]
    assert failed.status == "failed"
    yield wh, answered.run_id, rescored, failed.run_id
    wh.close()


def test_every_parquet_file_carries_run_id_and_only_types_bi_tools_read(runs, outcomes, tmp_path):
    """A folder import (Power BI) combines the files and drops their paths: run_id is a column of every file.
    No column reaches Arrow as decimal128(38,0), DuckDB's HUGEINT (a SUM of integers)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    read = {pa.string(), pa.int32(), pa.float64(), pa.bool_(), pa.timestamp("us")}
    for wh, ids in ((runs[0], [runs[1].run_id, runs[2].run_id]), (outcomes[0], list(outcomes[1:]))):
        out = tmp_path / f"out{len(list(tmp_path.iterdir()))}"
        manifest = export_runs(wh, ids, "parquet", out, include_failed=True)
        for f in manifest["files"]:
            if f["path"] == "manifest.json":
                continue
            data = pq.read_table(out / f["path"])
            assert data.schema.names == columns(f["table"]), f["path"]
            assert {field.type for field in data.schema} <= read, (f["path"], data.schema)
            assert set(data.column("run_id").to_pylist()) <= {f["run_id"]} and data.num_rows == f["rows"]
            assert data.num_rows == 0 or data.column("run_id").to_pylist() == [f["run_id"]] * data.num_rows


def test_runs_carry_status_kind_and_source(outcomes, tmp_path):
    wh, answered, rescored, failed = outcomes
    export_runs(wh, [answered, rescored, failed], "json", tmp_path / "j", include_failed=True)
    runs_rows = [json.loads(line) for line in (tmp_path / "j" / "runs.jsonl").read_text().splitlines()]
    assert [(r["run_id"], r["status"], r["kind"], r["source_run_id"]) for r in runs_rows] == [
        (answered, "complete", "retrieval", None), (rescored, "complete", "rescore", answered),
        (failed, "failed", "retrieval", None)]


def test_failed_runs_export_only_when_asked(outcomes, tmp_path):
    """Without --include-failed a failed run is refused by name and skipped by `latest`, as every report does;
    with it, the run exports what it has (questions, hits, answers) and nothing in the tables that score it."""
    wh, answered, rescored, failed = outcomes
    with pytest.raises(RunNotFound, match=f"run {failed} has status failed"):
        export_runs(wh, [failed], "csv", tmp_path / "refused")
    assert export_runs(wh, ["latest"], "csv", tmp_path / "latest")["runs"] == [rescored]
    manifest = export_runs(wh, ["latest"], "json", tmp_path / "j", include_failed=True)
    assert manifest["runs"] == [failed]
    tables = manifest["tables"]
    assert tables["runs"] == 1 and tables["questions"] == 6 and tables["hits"] > 0 and tables["gold_spans"] > 0
    assert tables["per_query_metrics"] == tables["metrics"] == tables["stage_attribution"] == 0
    answers = [json.loads(line) for line in (tmp_path / "j" / "answers.jsonl").read_text().splitlines()]
    # every question sent to the model failed; the one with no results was refused before any request
    assert {a["status"] for a in answers} == {"failed", "refused"} and len(answers) == tables["answers"] == 6
    hits = [json.loads(line) for line in (tmp_path / "j" / "hits.jsonl").read_text().splitlines()]
    assert {h["relevance"] for h in hits} == {0, 1}  # judged against its gold spans like a complete run's


def test_answers_claims_and_citations_export_as_stored(outcomes, tmp_path):
    wh, answered, _, _ = outcomes
    manifest = export_runs(wh, [answered], "csv", tmp_path / "c")
    for table in ("answers", "claims", "citations"):
        stored = wh.con.execute(f"SELECT {', '.join(columns(table))} FROM {table} WHERE run_id = ?",
                                [answered]).fetchall()
        assert manifest["tables"][table] == len(stored) > 0, table
        with open(tmp_path / "c" / f"{table}.csv", newline="", encoding="utf-8") as f:
            got = list(csv.reader(f))
        assert got[0] == columns(table)
        assert sorted(got[1:]) == sorted([export._text(v) for v in row] for row in stored), table
