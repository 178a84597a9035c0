"""eval-trec: TREC files scored by the measure SQL, per query against pytrec_eval (trec_eval 9)."""

import csv
import io
import itertools
import json
import random
from pathlib import Path

import pytest
import pytrec_eval

from assay.measures import trec_eval
from assay.core.errors import ConfigError, FormatError
from assay.measures.registry import parse_measure
from assay.measures.trec_eval import (
    evaluate_trec,
    measure_values,
    open_trec,
    parse_trec_measures,
    render,
    scored_queries,
    trec_families,
)

CUTOFFS = (1, 3, 5, 10, 20)
MEASURES = [f"{m}@{k}" for m in ("Success", "R", "P", "RR", "nDCG", "AP") for k in CUTOFFS] + ["RR", "nDCG", "AP"]
PYTREC_KEYS = {"Success": "success.{k}", "R": "recall.{k}", "P": "P.{k}", "nDCG": "ndcg_cut.{k}", "AP": "map_cut.{k}"}
PYTREC_NO_CUTOFF = {"nDCG": "ndcg", "AP": "map", "RR": "recip_rank"}
# Document ids whose byte order differs from numeric and case-blind order, and one beyond ASCII.
DOC_POOL = [f"d{i}" for i in range(30)] + ["d07", "D5", "a", "Z", "é1", "e1", "x-1"]


# -- the reference ---------------------------------------------------------------------------
def trec_order(ranking: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by document id descending in byte order."""
    return [d for d, _ in sorted(ranking.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)]


def pytrec_values(qrels, run, name: str) -> dict[str, float]:
    """pytrec_eval's value of measure `name` for every query it scores."""
    measure = parse_measure(name)
    family, k = measure.family.name, measure.cutoff
    if family == "RR":  # RR@k is recip_rank over the run cut at k
        if k is not None:
            run = {q: {d: run[q][d] for d in trec_order(r)[:k]} for q, r in run.items()}
        key = "recip_rank"
    else:
        key = PYTREC_NO_CUTOFF[family] if k is None else PYTREC_KEYS[family].format(k=k)
    result = pytrec_eval.RelevanceEvaluator(qrels, {key}).evaluate(run)
    return {q: v[key.replace(".", "_")] for q, v in result.items()}


# -- TREC files --------------------------------------------------------------------------------
def write_trec(tmp_path, qrels, run, sep=" ", newline="\n", shuffle=None, name="x"):
    """qrels and run as TREC files; `sep` is a string or a function returning one per gap."""
    gap = sep if callable(sep) else (lambda: sep)
    qrels_lines = [gap().join([q, "0", d, str(g)]) for q, docs in qrels.items() for d, g in docs.items()]
    run_lines = []
    for q, ranking in run.items():
        for i, d in enumerate(ranking):  # the rank column is written in file order: trec_eval ignores it
            run_lines.append(gap().join([q, "Q0", d, str(i + 1), repr(ranking[d]), "tag"]))
    if shuffle is not None:
        shuffle.shuffle(qrels_lines)
        shuffle.shuffle(run_lines)
    qrels_path, run_path = tmp_path / f"{name}.qrels", tmp_path / f"{name}.run"
    qrels_path.write_bytes("".join(line + newline for line in qrels_lines).encode())
    run_path.write_bytes("".join(line + newline for line in run_lines).encode())
    return qrels_path, run_path


def random_collection(rng: random.Random):
    """Graded qrels (-1 to 3) and a run with ties; queries without relevant documents, run
    documents the qrels never judged, qrels queries the run lacks and run queries the qrels lack."""
    qrels, run = {}, {}
    for i in range(rng.randint(4, 14)):
        qid = f"q{i}"
        where = rng.random()
        if where < 0.9:
            judged = rng.sample(DOC_POOL, rng.randint(1, 14))
            grades = [-1, 0, 0, 1, 1, 2, 3] if rng.random() > 0.15 else [-1, 0]
            qrels[qid] = {d: rng.choice(grades) for d in judged}
        if where > 0.12:
            docs = rng.sample(DOC_POOL, rng.randint(1, 28))
            if rng.random() < 0.5:  # heavy ties
                scores = [rng.choice([0.0, -0.0, 0.5, 1.0, 2.0]) for _ in docs]
            else:
                scores = [rng.choice([round(rng.uniform(-5, 5), 2), rng.uniform(-1e6, 1e6), 7.0]) for _ in docs]
            run[qid] = dict(zip(docs, scores))
    return qrels, run


SEPARATORS = {
    "space": " ",
    "tab": "\t",
    "blanks": itertools.cycle([" ", "  ", "\t", " \t "]).__next__,
}


@pytest.mark.parametrize("seed", range(30))
def test_random_runs_match_pytrec_eval(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = random_collection(rng)
    sep = list(SEPARATORS.values())[seed % 3]
    qrels_path, run_path = write_trec(tmp_path, qrels, run, sep=sep, newline="\r\n" if seed % 5 == 0 else "\n",
                                      shuffle=rng)
    con = open_trec(qrels_path, run_path)
    try:
        queries = scored_queries(con)
        for name in MEASURES:
            ours = measure_values(con, parse_measure(name), queries)
            theirs = pytrec_values(qrels, run, name)
            assert ours.keys() == theirs.keys(), name
            for qid, value in theirs.items():
                assert ours[qid] == pytest.approx(value, abs=1e-9), (name, qid)
    finally:
        con.close()


@pytest.mark.parametrize("seed", range(30, 40))
def test_complete_scores_missing_queries_zero(tmp_path, seed):
    rng = random.Random(seed)
    qrels, run = random_collection(rng)
    qrels_path, run_path = write_trec(tmp_path, qrels, run)
    rows = evaluate_trec(qrels_path, run_path, ["nDCG@10", "AP", "RR@5", "R@3", "P@3", "Success@1"], complete=True)
    for name in ("nDCG@10", "AP", "RR@5", "R@3", "P@3", "Success@1"):
        theirs = pytrec_values(qrels, run, name)
        ours = {r["query_id"]: r["value"] for r in rows if r["metric"] == name and r["query_id"] != "all"}
        assert ours.keys() == qrels.keys()
        for qid in qrels:
            assert ours[qid] == pytest.approx(theirs.get(qid, 0.0), abs=1e-9), (name, qid)
        (mean,) = [r for r in rows if r["metric"] == name and r["query_id"] == "all"]
        assert mean["n"] == len(qrels)
        assert mean["value"] == pytest.approx(sum(theirs.values()) / len(qrels), abs=1e-9)


def test_all_row_is_the_mean_over_queries_scored(tmp_path):
    qrels, run = random_collection(random.Random(7))
    qrels_path, run_path = write_trec(tmp_path, qrels, run)
    rows = evaluate_trec(qrels_path, run_path, ["AP", "nDCG@5"])
    for name in ("AP", "nDCG@5"):
        theirs = pytrec_values(qrels, run, name)
        (mean,) = [r for r in rows if r["metric"] == name and r["query_id"] == "all"]
        assert mean["n"] == len(theirs)
        assert mean["value"] == pytest.approx(sum(theirs.values()) / len(theirs), abs=1e-9)


@pytest.mark.slow  # over 1.5 s (docs/benchmarks.md, Test suite time)
def test_relevant_only_ranking_scores_as_the_full_ranking(tmp_path):
    """judged_ranking keeps only the retrieved relevant documents (see sql/trec/measure_views.sql).
    Every measure must score the same as over the full ranking, built here independently."""
    qrels, run = random_collection(random.Random(11))
    con = open_trec(*write_trec(tmp_path, qrels, run))
    try:
        names = [f"{family}@{k}" for family in trec_families() for k in CUTOFFS] + ["RR", "nDCG", "AP"]
        before = {name: measure_values(con, parse_measure(name)) for name in names}
        con.execute("DROP VIEW judged_ranking")
        con.execute("CREATE TABLE judged_ranking (run_id VARCHAR, stage VARCHAR, level VARCHAR, query_id INTEGER, "
                    "rank BIGINT, item VARCHAR, gain INTEGER, new_units INTEGER)")
        codes = dict(con.execute("SELECT query_id, qcode FROM trec_query_codes").fetchall())
        full = [("trec", "final", "doc", codes[q], rank, d, max(grade, 0), int(grade >= 1))
                for q, ranking in run.items() if q in codes
                for rank, d in enumerate(trec_order(ranking), 1)
                for grade in [qrels[q].get(d, 0)]]
        con.executemany("INSERT INTO judged_ranking VALUES (?, ?, ?, ?, ?, ?, ?, ?)", full)
        for name in names:
            assert measure_values(con, parse_measure(name)) == pytest.approx(before[name], abs=1e-12), name
    finally:
        con.close()


# -- ties ---------------------------------------------------------------------------------------
def test_ties_break_by_document_id_descending(tmp_path):
    # The file lists a, b and d10, d9 first with rank 1: trec_eval ignores both order and rank
    # and puts the greater id first, in byte order: b before a, d9 before d10, a before B.
    qrels = {"q1": {"a": 1}, "q2": {"d10": 1}, "q3": {"B": 1}}
    run = {"q1": {"a": 3.0, "b": 3.0}, "q2": {"d10": 1.5, "d9": 1.5}, "q3": {"B": 0.0, "a": -0.0}}
    qrels_path, run_path = write_trec(tmp_path, qrels, run)
    rows = evaluate_trec(qrels_path, run_path, ["RR", "P@1", "nDCG"])
    got = {(r["metric"], r["query_id"]): r["value"] for r in rows}
    for q in ("q1", "q2", "q3"):
        assert got[("RR", q)] == 0.5
        assert got[("P@1", q)] == 0.0
        assert got[("nDCG", q)] == pytest.approx(1 / 1.584962500721156)  # gain 1 at rank 2
    for name in ("RR", "P@1", "nDCG"):
        assert pytrec_values(qrels, run, name) == pytest.approx({q: got[(name, q)] for q in run})


def test_infinite_scores_rank_as_pytrec_eval_ranks_them(tmp_path):
    # trec_eval reads inf in a file (assay.evaluate_run refuses it in Python); ties among infinities break by id
    qrels = {"q1": {"d1": 1, "d2": 1, "d5": 2}, "q2": {"a": 1}}
    run = {"q1": {"d1": float("inf"), "d3": 2.0, "d2": float("-inf"), "d4": float("-inf"), "d5": float("inf")},
           "q2": {"a": float("-inf"), "b": -1e308}}
    qrels_path, run_path = write_trec(tmp_path, qrels, run)
    assert "inf" in run_path.read_text()
    rows = evaluate_trec(qrels_path, run_path, ["AP", "nDCG@10", "RR", "P@2"])
    for name in ("AP", "nDCG@10", "RR", "P@2"):
        theirs = pytrec_values(qrels, run, name)
        ours = {r["query_id"]: r["value"] for r in rows if r["metric"] == name and r["query_id"] != "all"}
        assert ours == pytest.approx(theirs, abs=1e-12), name
    assert {r["query_id"]: r["value"] for r in rows if r["metric"] == "RR"} == {"q1": 1.0, "q2": 0.5, "all": 0.75}


def test_rank_column_is_ignored(tmp_path):
    qrels_path = tmp_path / "q.qrels"
    qrels_path.write_text("q1 0 good 1\n")
    run_path = tmp_path / "r.run"
    run_path.write_text("q1 Q0 bad 1 0.5 t\nq1 Q0 good 2 0.9 t\n")
    assert evaluate_trec(qrels_path, run_path, ["RR"], per_query=False)[0]["value"] == 1.0


# -- which queries -------------------------------------------------------------------------------
def test_query_sets(tmp_path):
    qrels = {"both": {"a": 1}, "norel": {"a": 0, "b": -1}, "qrels_only": {"a": 2}}
    run = {"both": {"b": 2.0, "a": 1.0}, "norel": {"a": 1.0}, "run_only": {"a": 1.0}}
    qrels_path, run_path = write_trec(tmp_path, qrels, run)
    default = evaluate_trec(qrels_path, run_path, ["AP"])
    assert [(r["query_id"], r["value"], r["n"]) for r in default] == [("both", 0.5, 1), ("norel", 0.0, 1),
                                                                    ("all", 0.25, 2)]
    complete = evaluate_trec(qrels_path, run_path, ["AP"], complete=True)
    assert [(r["query_id"], r["value"]) for r in complete] == [("both", 0.5), ("norel", 0.0), ("qrels_only", 0.0),
                                                              ("all", 0.5 / 3)]
    assert pytrec_values(qrels, run, "AP") == {"both": 0.5, "norel": 0.0}


def test_no_query_scored_gives_no_mean(tmp_path):
    qrels_path, run_path = write_trec(tmp_path, {"q1": {"a": 1}}, {"q2": {"a": 1.0}})
    rows = evaluate_trec(qrels_path, run_path, ["AP", "P@5"])
    assert rows == [{"metric": "AP", "query_id": "all", "value": None, "n": 0},
                    {"metric": "P@5", "query_id": "all", "value": None, "n": 0}]


def test_per_query_false_gives_only_the_means(tmp_path):
    qrels, run = random_collection(random.Random(3))
    rows = evaluate_trec(*write_trec(tmp_path, qrels, run), ["AP", "nDCG@10", "AP"], per_query=False)
    assert [(r["metric"], r["query_id"]) for r in rows] == [("AP", "all"), ("nDCG@10", "all")]


# -- file formats -------------------------------------------------------------------------------
def same_rows(got, want):
    """Equal rows; values to 1e-12 (DuckDB sums in parallel, in no fixed order)."""
    assert [(r["metric"], r["query_id"], r["n"]) for r in got] == [(r["metric"], r["query_id"], r["n"]) for r in want]
    assert [r["value"] for r in got] == pytest.approx([r["value"] for r in want], abs=1e-12)
    return True


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_separators_line_ends_and_blank_lines_read_the_same(tmp_path):
    qrels, run = random_collection(random.Random(5))
    expected = evaluate_trec(*write_trec(tmp_path, qrels, run, name="space"), MEASURES)
    for name, sep in SEPARATORS.items():
        for newline in ("\n", "\r\n"):
            paths = write_trec(tmp_path, qrels, run, sep=sep, newline=newline, name=f"{name}{len(newline)}")
            assert same_rows(evaluate_trec(*paths, MEASURES), expected), (name, newline)
    qrels_path, run_path = write_trec(tmp_path, qrels, run, name="padded")
    for path in (qrels_path, run_path):
        lines = path.read_text().splitlines()
        path.write_text("\n" + "\n  \n".join("  " + line + " \t" for line in lines) + "\n\n")
    assert same_rows(evaluate_trec(qrels_path, run_path, MEASURES), expected)


@pytest.mark.parametrize("text, sep, takes", [
    ("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1 t \n\nq2 Q0 a 1 -3e2 t\n", " ", True),
    ("q1\tQ0\ta\t1\t2.0\tt\r\nq2\tQ0\ta\t1\t-3e2\tt\r\n", "\t", True),
    ("q1 Q0 a 1 2.0 \n", " ", False),  # five columns and a trailing blank: DuckDB reads an empty sixth
    (" q1 Q0 a 1 2.0\n", " ", False),
    ("q1 Q0  a 1 2.0\n", " ", False),
    ("q1 Q0 a 1  2.0\n", " ", False),
    ("q1 Q0 a 1 2.0 t x\n", " ", False),
    ("q1 Q0 a 1 NaN t\n", " ", False),
])
def test_fast_path_takes_only_what_it_reads_exactly(tmp_path, text, sep, takes):
    """sql/trec/run_fast.sql either reads a file as the reference reading does or fails (and the
    reference reading then decides)."""
    import duckdb

    from assay.core.sqlfiles import load_sql

    path = tmp_path / "x.run"
    path.write_text(text, newline="")
    con = duckdb.connect(":memory:")
    con.execute(load_sql("trec/macros"))
    if not takes:
        with pytest.raises(duckdb.Error):
            con.sql(load_sql("trec/run_fast"), params={"path": str(path), "delim": sep}).fetchall()
        return
    fast = sorted(con.sql(load_sql("trec/run_fast"), params={"path": str(path), "delim": sep}).fetchall())
    con.execute(load_sql("trec/run_lines"), {"path": str(path)})
    assert con.execute("SELECT count(*) FROM trec_run WHERE problem IS NOT NULL").fetchall() == [(0,)]
    assert fast == sorted(con.sql(load_sql("trec/run_rows")).fetchall())


@pytest.mark.parametrize("text, sep, takes", [
    ("q1 0 a 1\nq1 0 b -2\n\nq2 0 a +3\nq2 0 c 01\n", " ", True),
    ("q1\t0\ta\t1\r\nq2\t0\ta\t0\r\n", "\t", True),
    ("q1 0 a 1.5\n", " ", False),  # DuckDB's own cast would read 2
    ("q1 0 a 1e2\n", " ", False),
    ("q1 0 a 0x10\n", " ", False),
    ("q1 0 a 1_000\n", " ", False),
    ("q1 0 a 99999999999\n", " ", False),
    ("q1 0  a 1\n", " ", False),
    (" q1 0 a 1\n", " ", False),
    ("q1 0 a 1 \n", " ", True),  # a trailing blank: four columns to both readings
    ("q1 0 a\n", " ", False),
    ("q1 0 a 1 x\n", " ", False),
])
def test_qrels_fast_path_takes_only_what_it_reads_exactly(tmp_path, text, sep, takes):
    """sql/trec/qrels_fast.sql either reads a file as the reference reading does or fails (given a file
    with one kind of separator, as _single_separator hands it over)."""
    import duckdb

    from assay.core.sqlfiles import load_sql

    path = tmp_path / "x.qrels"
    path.write_text(text, newline="")
    con = duckdb.connect(":memory:")
    con.execute(load_sql("trec/macros"))
    if not takes:
        with pytest.raises(duckdb.Error):
            con.sql(load_sql("trec/qrels_fast"), params={"path": str(path), "delim": sep}).fetchall()
        return
    fast = sorted(con.sql(load_sql("trec/qrels_fast"), params={"path": str(path), "delim": sep}).fetchall())
    con.execute(load_sql("trec/qrels_lines"), {"path": str(path)})
    assert con.execute("SELECT count(*) FROM trec_qrels WHERE problem IS NOT NULL").fetchall() == [(0,)]
    assert fast == sorted(con.sql(load_sql("trec/qrels_rows")).fetchall())


def _files(tmp_path, qrels_text, run_text):
    qrels_path, run_path = tmp_path / "bad.qrels", tmp_path / "bad.run"
    qrels_path.write_bytes(qrels_text if isinstance(qrels_text, bytes) else qrels_text.encode())
    run_path.write_bytes(run_text if isinstance(run_text, bytes) else run_text.encode())
    return qrels_path, run_path


GOOD_RUN = "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n"
GOOD_QRELS = "q1 0 a 1\nq1 0 b 0\n"


@pytest.mark.parametrize("run_text, line, words", [
    (GOOD_RUN + "q1 Q0 c 3 0.5\n", 3, "expected 6 columns"),
    (GOOD_RUN + "q1 Q0 c 3 0.5 \n", 3, "found 5"),  # a trailing blank does not make a sixth column
    (GOOD_RUN + " q1 Q0 c 3 0.5\n", 3, "found 5"),
    (GOOD_RUN + "q1 Q0  c 3 0.5\n", 3, "found 5"),
    (GOOD_RUN + "q1 Q0 c 3 0.5 t extra\n", 3, "found 7"),
    (GOOD_RUN + "q1 Q0 c 3 high t\n", 3, "score 'high' is not a number"),
    (GOOD_RUN + "q1 Q0 c 3 nan t\n", 3, "score 'nan' is not a number"),
    ("q1\tQ0\ta\t1\t2.0\tt\nq1\tQ0\tc d\t3\t0.5\tt\n", 2, "found 7"),  # a space inside a tab column splits it
    ("q1 Q0 a 1 2.0 t\n\nq1\tQ0 b 2 x t\n", 3, "score 'x'"),
])
def test_malformed_run_line_is_named(tmp_path, run_text, line, words):
    qrels_path, run_path = _files(tmp_path, GOOD_QRELS, run_text)
    with pytest.raises(FormatError) as err:
        evaluate_trec(qrels_path, run_path, ["AP"])
    assert err.value.line == line
    assert str(err.value).startswith(f"{run_path}:{line}: ")
    assert words in str(err.value)


@pytest.mark.parametrize("qrels_text, line, words", [
    (GOOD_QRELS + "q1 0 c 1.5\n", 3, "relevance '1.5' is not a whole number"),
    (GOOD_QRELS + "q1 0 c high\n", 3, "relevance 'high'"),
    (GOOD_QRELS + "q1 0 c\n", 3, "expected 4 columns"),
    (GOOD_QRELS + "q1 0 c 1 x\n", 3, "found 5"),
    ("q1 0 a 1\nq1\t0 b 1 1\nq1 0 c x\n\n", 2, "(2 malformed lines in all)"),
])
def test_malformed_qrels_line_is_named(tmp_path, qrels_text, line, words):
    qrels_path, run_path = _files(tmp_path, qrels_text, GOOD_RUN)
    with pytest.raises(FormatError) as err:
        evaluate_trec(qrels_path, run_path, ["AP"])
    assert (err.value.path, err.value.line) == (str(qrels_path), line)
    assert words in str(err.value)


def test_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    qrels_path, run_path = _files(tmp_path, GOOD_QRELS, GOOD_RUN.encode() + b"q1 Q0 \xff 3 0.5 t\n")
    with pytest.raises(FormatError) as err:
        evaluate_trec(qrels_path, run_path, ["AP"])
    assert (err.value.path, err.value.line) == (str(run_path), 3)
    assert "UTF-8" in str(err.value)


def test_missing_file(tmp_path):
    with pytest.raises(FormatError, match="cannot read"):
        evaluate_trec(tmp_path / "nope.qrels", tmp_path / "nope.run", ["AP"])


@pytest.mark.parametrize("sep", [" ", "\t "])
def test_duplicate_run_document_is_refused(tmp_path, sep):
    # trec_eval stops on a document listed twice for a query (pytrec_eval's parse_run refuses it too).
    run_text = GOOD_RUN + "q2 Q0 a 1 1.0 t\nq1 Q0 a 3 0.1 t\n"
    qrels_path, run_path = _files(tmp_path, GOOD_QRELS, run_text.replace(" ", sep))
    with pytest.raises(FormatError) as err:
        evaluate_trec(qrels_path, run_path, ["AP"])
    assert (err.value.path, err.value.line) == (str(run_path), 4)
    assert "document 'a' appears again for query 'q1' (first on line 1)" in str(err.value)


def test_duplicate_qrels_judgment_is_refused(tmp_path):
    qrels_path, run_path = _files(tmp_path, GOOD_QRELS + "q1 0 a 2\n", GOOD_RUN)
    with pytest.raises(FormatError) as err:
        evaluate_trec(qrels_path, run_path, ["AP"])
    assert (err.value.path, err.value.line) == (str(qrels_path), 3)


def test_empty_run_scores_nothing_unless_complete(tmp_path):
    qrels_path, run_path = _files(tmp_path, GOOD_QRELS, "")
    assert evaluate_trec(qrels_path, run_path, ["AP"]) == [{"metric": "AP", "query_id": "all", "value": None, "n": 0}]
    assert evaluate_trec(qrels_path, run_path, ["AP"], per_query=False, complete=True) == [
        {"metric": "AP", "query_id": "all", "value": 0.0, "n": 1}]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_scoring_files_does_not_import_pandas(tmp_path):
    """pyarrow imports pandas (0.4 s) on to_numpy and wherever it converts Python objects; the ranking
    reads Arrow buffers instead (assay.measures.trec_ranking). DuckDB 1.x itself imports it when an Arrow table is
    registered (it loads pyarrow.dataset, which loads pandas); DuckDB 2 does not."""
    import duckdb

    import subprocess
    import sys

    qrels, run = random_collection(random.Random(2))
    qrels_path, run_path = write_trec(tmp_path, qrels, run)
    code = ("import sys; from assay.measures.trec_eval import evaluate_trec; "
            f"evaluate_trec({str(qrels_path)!r}, {str(run_path)!r}, ['AP', 'nDCG@10']); print('pandas' in sys.modules)")
    loaded = "False\n" if int(duckdb.__version__.split(".")[0]) >= 2 else "True\n"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == loaded


# -- measures -------------------------------------------------------------------------------------
def test_measures_only_of_the_document_level(tmp_path):
    assert set(trec_families()) == {"Success", "R", "P", "RR", "nDCG", "AP"}
    for name in ("Abstain", "FalseAbstain", "answer_rate"):
        with pytest.raises(ConfigError, match=f"{name} does not apply to a TREC run"):
            parse_trec_measures([name])
    with pytest.raises(ConfigError, match="unknown measure 'bpref' \\(trec_eval, ranx\\)"):
        parse_trec_measures(["bpref"])
    assert [m.name for m in parse_trec_measures(["MAP", "ndcg_cut_10", "P_5"])] == ["AP", "nDCG@10", "P@5"]
    with pytest.raises(ConfigError, match="no measure given"):
        parse_trec_measures([])
    assert [m.name for m in parse_trec_measures(["AP", "nDCG@10", "AP"])] == ["AP", "nDCG@10"]


# -- rendering ------------------------------------------------------------------------------------
ROWS = [{"metric": "nDCG@10", "query_id": "q1", "value": 0.5, "n": 1},
        {"metric": "nDCG@10", "query_id": "q2", "value": 1 / 3, "n": 1},
        {"metric": "nDCG@10", "query_id": "all", "value": 5 / 12, "n": 2},
        {"metric": "AP", "query_id": "all", "value": None, "n": 0}]


def test_render_json_is_the_rows():
    assert json.loads(render(ROWS, "json")) == ROWS


def test_render_csv_keeps_full_precision_and_leaves_none_empty():
    text = render(ROWS, "csv")
    assert text.splitlines()[0] == "metric,query_id,value,n"
    assert text.splitlines()[2] == "nDCG@10,q2,0.3333333333333333,1"
    assert text.splitlines()[4] == "AP,all,,0"
    assert [float(r["value"]) for r in csv.DictReader(io.StringIO(text)) if r["value"]] == [0.5, 1 / 3, 5 / 12]


def test_render_table():
    assert render(ROWS, "table") == (
        "metric   query_id   value  n\n"
        "----------------------------\n"
        "nDCG@10  q1        0.5000  1\n"
        "nDCG@10  q2        0.3333  1\n"
        "nDCG@10  all       0.4167  2\n"
        "AP       all            -  0\n"
    )


def test_render_unknown_format():
    with pytest.raises(ConfigError, match="unknown format 'xml'"):
        render(ROWS, "xml")


# -- the compiled reader (_trec_read.c) against the reference reading -----------------------------------
COMPILED = trec_eval.compiled_reader()
SO = sorted(Path(trec_eval.__file__).parent.glob("_trec_read.*.so"))
needs_c = pytest.mark.skipif(COMPILED is None, reason="_trec_read.c is not built (hatch_build.py: no C compiler or "
                             "no Python headers when installing); DuckDB's reading is what runs, tested above")


def test_a_built_reader_is_current():
    if SO and COMPILED is None:
        pytest.fail(f"{SO[0].name} was built from another version of _trec_read.c, so it is not used: "
                    "install again (make install, or pip install --no-deps -e .)")


def by_reference(*args, **kwargs):
    """evaluate_trec by DuckDB's reading and numpy's ranking (what runs without the C code): the rows, or the
    error it raised."""
    saved = trec_eval._COMPILED[:]
    trec_eval._COMPILED[:] = [None]
    try:
        return evaluate_trec(*args, **kwargs)
    except FormatError as exc:
        return exc
    finally:
        trec_eval._COMPILED[:] = saved


def by_compiled(*args, parts: int = 1, **kwargs):
    """evaluate_trec as it runs with the C code, the run cut into up to `parts` parts (one thread each)."""
    saved = trec_eval._COMPILED[:]
    trec_eval._COMPILED[:] = [lambda qrels, run, threads: COMPILED(qrels, run, parts, 1)]
    try:
        return evaluate_trec(*args, **kwargs)
    except FormatError as exc:
        return exc
    finally:
        trec_eval._COMPILED[:] = saved


def same_outcome(got, want) -> bool:
    if isinstance(want, Exception):
        return type(got) is type(want) and str(got) == str(want)
    return got == want


@needs_c
@pytest.mark.parametrize("seed", range(30))
def test_compiled_reader_matches_the_reference_and_pytrec_eval(tmp_path, seed):
    """Files whose queries' lines are together (any order within a query) are read by the C code, cut
    into parts as threads take them: the very rows of the reference reading, and pytrec_eval's values."""
    rng = random.Random(seed)
    qrels, run = random_collection(rng)
    run = {q: dict(rng.sample(list(r.items()), len(r))) for q, r in rng.sample(list(run.items()), len(run))}
    sep = list(SEPARATORS.values())[seed % 3]
    qrels_path, run_path = write_trec(tmp_path, qrels, run, sep=sep, newline="\r\n" if seed % 4 == 0 else "\n")
    if seed % 5 == 1:  # blank lines inside and between queries
        run_path.write_text(run_path.read_text().replace("\n", "\n\n  \n", 7))
    assert isinstance(COMPILED(str(qrels_path), str(run_path), 1), dict)
    measures = ["AP", "nDCG", "nDCG@10", "RR", "RR@3", "P@5", "R@10", "Success@1"]
    want = by_reference(qrels_path, run_path, measures, complete=seed % 2 == 0)
    for parts in (1, 2, 5):
        assert by_compiled(qrels_path, run_path, measures, parts=parts, complete=seed % 2 == 0) == want, parts
    got = {(r["metric"], r["query_id"]): r["value"] for r in want}
    for name in measures:
        for qid, value in pytrec_values(qrels, run, name).items():
            assert abs(got[(name, qid)] - value) <= 1e-12, (name, qid)


RUN_HEAD = "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n"


@needs_c
@pytest.mark.parametrize("qrels_text, run_text, takes", [
    # scores: the plain decimal forms, read as DuckDB's cast reads them
    *[(GOOD_QRELS, RUN_HEAD + f"q1 Q0 c 3 {score} t\n", True)
      for score in ("1.", ".5", "+1", "1e5", "1E+05", "-0", "-.5e-3", "00012.50", "4.9e-324", "1e-400", "1e400",
                    "2.0", "1.99999999999999999999", "0.30000000000000004441", "123456789012345678901234567890",
                    "9007199254740993", "1.7976931348623157e308")],
    # and what it leaves to the reference reading (some of which it refuses)
    *[(GOOD_QRELS, RUN_HEAD + f"q1 Q0 c 3 {score} t\n", False)
      for score in ("inf", "-Infinity", "nan", "1_000", "0x10", "1d5", "e5", "1.5e", "+-1", "-")],
    # relevance
    *[(GOOD_QRELS + f"q1 0 c {grade}\n", RUN_HEAD, True) for grade in ("+3", "01", "-2", "2147483647", "-2147483648")],
    *[(GOOD_QRELS + f"q1 0 c {grade}\n", RUN_HEAD, False) for grade in ("2147483648", "1.5", "1e2", "x", "+")],
    # lines
    (GOOD_QRELS, RUN_HEAD.replace("\n", "\r\n"), True),
    (GOOD_QRELS, RUN_HEAD.rstrip("\n"), True),  # no line end at the end
    (GOOD_QRELS, "\n \t\n" + RUN_HEAD.replace("\n", " \t\n\n") + "  ", True),
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 " + "c" * 60 + " 3 0.5 t\n", True),  # past 64 bytes: read byte by byte
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 " + "c" * 47 + " 3 0.5 t\n" + "q1 Q0 e 4 0.5 t\n", True),  # 63 bytes and \n
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 c 3 0.5 t\r", False),  # \r ends no line here
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 c\r 3 0.5 t\n", False),
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 c\x0b 3 0.5 t\n", False),
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 c\x00 3 0.5 t\n", False),
    (GOOD_QRELS, "\ufeff" + RUN_HEAD, False),
    (GOOD_QRELS, RUN_HEAD.encode() + b"q1 Q0 \xff 3 0.5 t\n", False),
    (GOOD_QRELS, RUN_HEAD.encode() + b"q1 Q0 \xc3\xa9 3 0.5 t\n", True),
    (GOOD_QRELS, RUN_HEAD.encode() + b"q1 Q0 \xed\xa0\x80 3 0.5 t\n", False),  # a surrogate's bytes
    ("q\xe9 0 a 1\n", "q\xe9 Q0 a 1 1 t\n", True),
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 c 3 0.5\n", False),
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 c 3 0.5 t x\n", False),
    (GOOD_QRELS + "q1 0 c\n", RUN_HEAD, False),
    # duplicates; a query's lines apart
    (GOOD_QRELS, RUN_HEAD + "q1 Q0 a 3 0.5 t\n", False),
    (GOOD_QRELS + "q1 0 a 2\n", RUN_HEAD, False),
    (GOOD_QRELS, "q1 Q0 a 1 2.0 t\nq2 Q0 a 1 1.0 t\nq1 Q0 b 2 1.0 t\n", False),
    (GOOD_QRELS, "qx Q0 a 1 2.0 t\nq1 Q0 a 1 1.0 t\nqx Q0 b 2 1.0 t\n", False),
    (GOOD_QRELS, "qx Q0 a 1 2.0 t\nqx Q0 a 2 1.0 t\nq1 Q0 b 2 1.0 t\n", False),
    (GOOD_QRELS, "qx Q0 a 1 2.0 t\nqy Q0 a 2 1.0 t\nq1 Q0 b 2 1.0 t\n", True),
    # ties: score, then document id in byte order (a prefix first), -0.0 as 0.0
    ("q1 0 d1 1\nq1 0 e 2\n", "q1 Q0 d10 1 1 t\nq1 Q0 d1 2 1.0 t\nq1 Q0 e 3 0 t\nq1 Q0 f 4 -0.0 t\n", True),
    # empty files
    (GOOD_QRELS, "", True),
    ("", RUN_HEAD, True),
])
def test_compiled_reader_takes_only_what_it_reads_exactly(tmp_path, qrels_text, run_text, takes):
    """The C code reads a file as the reference reading does, or gives up (a str saying why) and the
    reference reading decides: the same rows, or the same error naming the line."""
    qrels_path, run_path = _files(tmp_path, qrels_text, run_text)
    answer = COMPILED(str(qrels_path), str(run_path), 2, 1)
    assert isinstance(answer, dict) == takes, answer
    measures = ["AP", "nDCG", "RR", "P@2"]
    want = by_reference(qrels_path, run_path, measures, complete=True)
    for parts in (1, 3):
        assert same_outcome(by_compiled(qrels_path, run_path, measures, parts=parts, complete=True), want), parts


@needs_c
def test_compiled_reader_gives_up_on_a_missing_file(tmp_path):
    qrels_path, run_path = _files(tmp_path, GOOD_QRELS, GOOD_RUN)
    assert isinstance(COMPILED(str(tmp_path / "nope"), str(run_path), 1), str)
    assert isinstance(COMPILED(str(qrels_path), str(tmp_path), 1), str)  # a folder
    assert same_outcome(by_compiled(qrels_path, tmp_path / "nope.run", ["AP"]),
                        by_reference(qrels_path, tmp_path / "nope.run", ["AP"]))


@needs_c
@pytest.mark.parametrize("seed", range(3))
def test_compiled_reader_ranks_many_relevant_documents_of_one_query(tmp_path, seed):
    """Past 32 relevant documents retrieved for a query the C code ranks them by sorting and binary search
    instead of counting per document: the same ranks, ties included."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(300)] + [f"d{i}x" for i in range(0, 300, 7)]
    run = {q: {d: rng.choice([0.0, -0.0, 0.25, 1.0, 1.5, rng.uniform(-2, 2)]) for d in rng.sample(docs, 250)}
           for q in ("q1", "q2")}
    qrels = {q: {d: rng.choice([0, 1, 2, 3]) for d in rng.sample(docs, 200)} for q in ("q1", "q2")}
    qrels_path, run_path = write_trec(tmp_path, qrels, run)
    measures = ["AP", "nDCG", "RR", "P@100", "R@50"]
    want = by_reference(qrels_path, run_path, measures)
    assert by_compiled(qrels_path, run_path, measures, parts=2) == want
    got = {(r["metric"], r["query_id"]): r["value"] for r in want}
    for name in measures:
        for qid, value in pytrec_values(qrels, run, name).items():
            assert abs(got[(name, qid)] - value) <= 1e-12, (name, qid)
