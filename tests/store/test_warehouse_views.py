"""docs/warehouse.md is the warehouse's contract for other tools: every table and view it lists exists with
exactly the columns it lists, a plain DuckDB client (no assay code) reads each one and finds rows, and every
table and view in the file is listed. The BI views agree with assay's own figures."""

import json
import os
import re
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.compute import evaluate
from assay.measures.registry import DEFAULT_MEASURES
from assay.runs.runner import RunOptions, execute_run, run
from assay.store.warehouse import Warehouse
from conftest import DEMO, ROOT

sys.path.insert(0, str(Path(__file__).parents[1] / "retrieval" / "answer"))
sys.path.insert(0, str(Path(__file__).parents[1] / "inputs" / "corpus"))
from chat_server import ChatServer, content, tool_call  # noqa: E402
from documents import report_pdf  # noqa: E402

pytestmark = pytest.mark.slow  # one warehouse with a row in every table and view (a chat server, a sweep, a PDF)

DOC = ROOT / "docs" / "warehouse.md"


def documented() -> dict[str, dict[str, list[str]]]:
    """{'Tables': {name: [columns]}, 'Views': {...}} read from the doc's two tables."""
    text = DOC.read_text(encoding="utf-8")
    out = {}
    for section in ("Tables", "Views"):
        body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
        rows = re.findall(r"^\| `(\w+)` \|(.*)$", body, re.M)
        col = 2 if section == "Tables" else 1  # tables: name | key | columns | ...; views: name | columns | ...
        out[section] = {name: [c.strip() for c in rest.split(" | ")[col - 1].strip(" |").split(",")]
                        for name, rest in rows}
    return out


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """A warehouse where every table has rows: the demo (BM25, written as `assay run` writes), a hybrid run with
    the extractive answer stage, a run answered and judged by models on loopback, a calibration and a sweep."""
    tmp = tmp_path_factory.mktemp("views")
    path = tmp / "w.duckdb"
    mini = Path(__file__).parents[1] / "fixtures" / "mini"
    corpus, judgments = mini / "corpus", mini / "judgments.jsonl"
    demo = run(Warehouse.brief(path), DEMO / "corpus", DEMO / "judgments.jsonl", RunOptions())
    with Warehouse.open(path) as wh:
        run(wh, corpus, judgments, RunOptions("hybrid", chunk_size=120, generator="extractive"))
        from assay.runs.abstention import fit_and_store

        fit_and_store(wh, demo.run_id)
    replies = []  # each question's answer: one claim quoting its top chunk, so the judge has work
    base = execute_run(corpus, judgments, RunOptions("bm25", chunk_size=120))
    texts = {c.chunk_id: c.text for c in base.chunks}
    for _, stage, rank, cid, _, _ in sorted(base.hits):
        if stage == "final" and rank == 1:
            claim = {"text": "a claim", "citations": [{"chunk_id": cid, "quote": texts[cid][:30].strip()}]}
            replies.append(tool_call({"claims": [claim], "insufficient_evidence": False}))
    with ChatServer(replies) as gen, ChatServer([content('{"supported": true}')] * len(replies)) as judge:
        os.environ["ASSAY_TEST_KEY"] = "sk-test-views"
        options = RunOptions("bm25", chunk_size=120, generator="openai", generator_base_url=gen.url,
                             generator_model="m", generator_api_key_env="ASSAY_TEST_KEY", judge_base_url=judge.url,
                             judge_model="j", judge_api_key_env="ASSAY_TEST_KEY", generator_timeout_s=5)
        try:
            with Warehouse.open(path) as wh:
                run(wh, corpus, judgments, options)
        finally:
            del os.environ["ASSAY_TEST_KEY"]
    out = CliRunner().invoke(cli, ["sweep", "--corpus", str(corpus), "--judgments", str(judgments), "--chunker",
                                   "document", "--warehouse", str(path)])
    assert out.exit_code == 0, out.output
    # a PDF (pages of its chunks, hits, gold and citations) beside a file that is not read
    pdfs = tmp / "pdfs"
    report_pdf(pdfs / "report.pdf")
    (pdfs / "figure.png").write_bytes(b"\x89PNG\r\n")
    paged = tmp / "paged.jsonl"
    paged.write_text(json.dumps({"query_id": "columns", "query": "where does the right column start",
                                 "category": "normal", "form": "match", "hard_class": "normal",
                                 "gold": [{"doc": "report.pdf", "quote": "The right column starts after"}]}) + "\n")
    run(Warehouse.brief(path), pdfs, paged, RunOptions("bm25", chunk_size=120, generator="extractive"))
    out = CliRunner().invoke(cli, ["tag", demo.run_id, "demo-baseline", "--warehouse", str(path)])
    assert out.exit_code == 0, out.output
    return path, demo.run_id


def test_the_doc_lists_every_table_and_view_with_its_columns_and_a_plain_client_reads_rows(full):
    path, _ = full
    doc = documented()
    con = duckdb.connect(str(path), read_only=True)
    try:
        actual = {}
        for name, kind in con.execute("SELECT table_name, table_type FROM information_schema.tables").fetchall():
            section = "Tables" if kind == "BASE TABLE" else "Views"
            actual.setdefault(section, {})[name] = [r[0] for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
                [name]).fetchall()]
        for section in ("Tables", "Views"):
            assert sorted(doc[section]) == sorted(actual[section]), section
            for name, columns in doc[section].items():
                assert columns == actual[section][name], name
                assert con.execute(f'SELECT COUNT(*) FROM "{name}"').fetchall()[0][0] > 0, f"{name} has no rows"
    finally:
        con.close()


def test_no_column_reaches_arrow_as_a_128_bit_decimal(full):
    """A SUM of integers is HUGEINT in DuckDB, decimal128(38,0) in Arrow, which BI tools and Ibis read badly:
    every count of every table and view (migration 020 cast the last four) reads as a 64-bit integer."""
    import pyarrow as pa

    path, _ = full
    con = duckdb.connect(str(path), read_only=True)
    try:
        wide = con.execute("SELECT table_name, column_name FROM information_schema.columns "
                           "WHERE data_type IN ('HUGEINT', 'UHUGEINT') OR data_type LIKE 'DECIMAL(38%'").fetchall()
        assert wide == []
        for name in ("budget_hits", "fusion_effect", "run_overview"):
            schema = con.execute(f"SELECT * FROM {name}").to_arrow_table().schema
            assert not [f.name for f in schema if pa.types.is_decimal(f.type)], name
            assert con.execute(f"SELECT COUNT(*) FROM {name}").fetchall()[0][0] > 0, f"{name} has no rows"
    finally:
        con.close()


def test_measure_means_and_slices_equal_the_report(full):
    path, run_id = full
    with Warehouse.open(path, read_only=True) as wh:
        rows = {(r.metric, r.level, r.slice): r for r in evaluate(wh, run_id, DEFAULT_MEASURES)}
    con = duckdb.connect(str(path), read_only=True)
    try:
        means = con.execute("SELECT measure, level, n, mean, interval_kind, wilson_low, wilson_high FROM "
                            "measure_means WHERE run_id = ? AND stage = 'final'", [run_id]).fetchall()
        slices = con.execute("SELECT measure, level, slice, n, mean FROM measure_slices WHERE run_id = ? "
                             "AND stage = 'final'", [run_id]).fetchall()
    finally:
        con.close()
    assert len(means) == 23  # 13 ranking measures, 8 of them at both levels, and Abstain, FalseAbstain
    for measure, level, n, mean, kind, low, high in means:
        r = rows[(measure, level, "all")]
        assert (n, mean) == (r.n, pytest.approx(r.value, abs=1e-12))
        if kind == "wilson":
            assert (low, high) == (pytest.approx(r.ci_low, abs=1e-12), pytest.approx(r.ci_high, abs=1e-12))
        else:
            assert low is None and high is None
    assert slices
    for measure, level, name, n, mean in slices:
        r = rows[(measure, level, name)]
        assert (n, mean) == (r.n, pytest.approx(r.value, abs=1e-12))


def test_stage_rollup_and_run_overview(full):
    path, run_id = full
    con = duckdb.connect(str(path), read_only=True)
    try:
        rollup = con.execute("SELECT lost_at, n, share, share_remaining FROM stage_rollup WHERE run_id = ? "
                             "ORDER BY step", [run_id]).fetchall()
        funnel = dict(con.execute("SELECT lost_at, n FROM loss_funnel WHERE run_id = ?", [run_id]).fetchall())
        hybrid = [r[0] for r in con.execute(
            "SELECT lost_at FROM stage_rollup s JOIN runs r USING (run_id) WHERE r.pipeline = 'hybrid' "
            "ORDER BY step").fetchall()]
        overview = con.execute("SELECT status, n_questions, n_answerable, success_at_3_doc, ndcg_at_10_chunk, "
                               "answer_rate FROM run_overview WHERE run_id = ?", [run_id]).fetchall()
        spans = con.execute("SELECT span_precision_at_10, span_iou_at_10, span_precision_at_1000tok FROM run_overview "
                            "WHERE run_id = ?", [run_id]).fetchall()[0]
        span_means = dict(con.execute("SELECT measure, mean FROM measure_means WHERE run_id = ? AND stage = 'final' "
                                      "AND measure IN ('SpanPrecision@10', 'SpanIoU@10')", [run_id]).fetchall())
        n_runs = con.execute("SELECT (SELECT COUNT(*) FROM run_overview), (SELECT COUNT(*) FROM runs)").fetchall()
        means = dict(con.execute("SELECT measure || ' ' || level, mean FROM measure_means WHERE run_id = ? AND "
                                 "measure IN ('Success@3', 'nDCG@10')", [run_id]).fetchall())
    finally:
        con.close()
    assert [r[0] for r in rollup] == ["retrieval", "abstained", "cutoff", "found"]  # BM25: no fusion, no rerank
    assert {lost: n for lost, n, _, _ in rollup if n} == funnel
    assert sum(share for _, _, share, _ in rollup) == pytest.approx(1.0)
    assert rollup[-2][3] == pytest.approx(rollup[-1][2]) and rollup[-1][3] is None  # what remains is what was found
    assert hybrid[:3] == ["retrieval", "fusion", "abstained"]
    # the standard set's span precision is over the top 10 now; a run stored since keeps no @1000tok value
    assert spans == (pytest.approx(span_means["SpanPrecision@10"]), pytest.approx(span_means["SpanIoU@10"]), None)
    assert 0 < spans[1] < spans[0] < 1
    assert overview == [("complete", 71, 56, pytest.approx(means["Success@3 doc"]),
                         pytest.approx(means["nDCG@10 chunk"]), None)]
    assert n_runs[0][0] == n_runs[0][1]
