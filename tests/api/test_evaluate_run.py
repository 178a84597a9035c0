"""`assay.evaluate_run` on dicts, DataFrames and Arrow tables, per query against pytrec_eval.

Every case trec_eval has a rule for is in the random collections and compared, never deleted first: empty
rankings, qrels queries the run lacks, run queries the qrels lack, queries without a relevant document,
negative grades and ties."""

import math
import random

import numpy as np
import pyarrow as pa
import pytest
import pytrec_eval
from measures.test_trec_eval import MEASURES, pytrec_values

import assay
from assay.core.errors import ConfigError, FormatError


def _random(seed):
    """Graded qrels (-1 to 3) and a run with ties, where some qrels queries have no relevant document,
    some are answered with an empty ranking, some are absent from the run, and some run queries
    (empty ones too) are absent from the qrels."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    docs = [f"d{i}" for i in range(60)]
    for q in range(40):
        qid = f"q{q}"
        kind = rng.random()
        if kind < 0.9:
            grades = [-1, 0, 1, 1, 2, 3] if rng.random() > 0.15 else [-1, 0]  # some with nothing relevant
            qrels[qid] = {d: rng.choice(grades) for d in rng.sample(docs, rng.randint(1, 8))}
        if kind > 0.1:
            # an empty ranking about one time in five; coarse scores make ties (broken by document id descending)
            run[qid] = {d: float(rng.randint(0, 20)) for d in rng.sample(docs, rng.choice([0, 1, 5, 20, 40]))}
    qrels["only-in-qrels"] = {"d1": 1}
    run["only-in-run"], run["empty-only-in-run"] = {"d1": 1.0}, {}
    return qrels, run


def _by_query(table):
    return {(r["measure"], r["query_id"]): r["value"] for r in table.to_pylist()}


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dicts_agree_with_pytrec_eval_per_query_and_in_the_mean(seed, complete):
    qrels, run = _random(seed)
    assert any(not ranked for q, ranked in run.items() if q in qrels)  # the cases the test once deleted are here
    assert any(q not in run for q in qrels)
    assert any(max(judged.values()) < 1 for q, judged in qrels.items() if q in run)
    got = _by_query(assay.evaluate_run(qrels, run, MEASURES, complete=complete))
    for name in MEASURES:
        theirs = pytrec_values(qrels, run, name)
        if complete:  # trec_eval -c: a qrels query the run lacks scores 0; pytrec_eval leaves it out
            theirs = {q: theirs.get(q, 0.0) for q in qrels}
        assert sorted(q for (m, q) in got if m == name and q != "all") == sorted(theirs), name
        for qid, value in theirs.items():
            assert got[(name, qid)] == pytest.approx(value, abs=1e-9), (name, qid)
        assert got[(name, "all")] == pytest.approx(sum(theirs.values()) / len(theirs), abs=1e-12), name


def test_an_empty_ranking_scores_zero_and_counts_in_the_mean():
    # the case of issue 25: the empty ranking of b was dropped and the mean read 1.0
    qrels, run = {"a": {"d1": 1}, "b": {"d2": 1}, "c": {"d3": 0}}, {"a": {"d1": 2.0}, "b": {}, "c": {}, "z": {}}
    got = _by_query(assay.evaluate_run(qrels, run, ["AP", "nDCG@10", "RR@10", "Success@1"]))
    want = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10", "recip_rank", "success_1"}).evaluate(run)
    assert sorted(want) == ["a", "b", "c"]
    for name, trec in (("AP", "map"), ("nDCG@10", "ndcg_cut_10"), ("RR@10", "recip_rank"), ("Success@1", "success_1")):
        assert {q: got[(name, q)] for q in want} == {q: want[q][trec] for q in want} == {"a": 1.0, "b": 0.0, "c": 0.0}
        assert got[(name, "all")] == pytest.approx(1 / 3)
        assert (name, "z") not in got


def test_a_query_absent_from_the_run_is_left_out_unless_complete():
    # as pytrec_eval and `assay eval-trec` (trec_eval without -c); complete=True is eval-trec's --complete
    qrels, run = {"a": {"d1": 1}, "b": {"d2": 1}}, {"a": {"d1": 2.0}}
    assert pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run) == {"a": {"map": 1.0}}
    assert _by_query(assay.evaluate_run(qrels, run, ["AP"])) == {("AP", "a"): 1.0, ("AP", "all"): 1.0}
    assert _by_query(assay.evaluate_run(qrels, run, ["AP"], complete=True)) == {
        ("AP", "a"): 1.0, ("AP", "b"): 0.0, ("AP", "all"): 0.5}


def test_only_empty_rankings_score_zero_and_an_unjudged_one_gives_no_mean():
    assert _by_query(assay.evaluate_run({"a": {"d1": 1}}, {"a": {}}, ["AP"])) == {("AP", "a"): 0.0, ("AP", "all"): 0.0}
    assert _by_query(assay.evaluate_run({"a": {"d1": 1}}, {"b": {}}, ["AP"])) == {("AP", "all"): None}


def test_dataframes_and_arrow_tables_give_the_same_table():
    """A table holds no empty ranking: a query without rows is absent from the run, so the tables agree with
    the dicts once their empty rankings are left out, and with pytrec_eval on those dicts."""
    import pandas as pd

    qrels, run = _random(3)
    answered = {q: ranked for q, ranked in run.items() if ranked}
    from_dicts = assay.evaluate_run(qrels, answered, ["nDCG@10", "AP"])
    assert not from_dicts.equals(assay.evaluate_run(qrels, run, ["nDCG@10", "AP"]))
    q_rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    ranx_style = (pd.DataFrame(q_rows, columns=["q_id", "doc_id", "score"]),
                  pd.DataFrame(r_rows, columns=["q_id", "doc_id", "score"]))
    arrow = (pa.table({"query_id": [r[0] for r in q_rows], "docno": [r[1] for r in q_rows],
                       "relevance": [r[2] for r in q_rows]}),
             pa.table({"qid": [r[0] for r in r_rows], "did": [r[1] for r in r_rows], "score": [r[2] for r in r_rows]}))
    for q, r in (ranx_style, arrow):
        assert assay.evaluate_run(q, r, ["nDCG@10", "AP"]).equals(from_dicts)
    assert from_dicts.schema.names == ["measure", "query_id", "value"]
    got = _by_query(from_dicts)
    assert {q: got[("AP", q)] for q in pytrec_values(qrels, run, "AP") if run[q]} == \
        pytest.approx(pytrec_values(qrels, answered, "AP"), abs=1e-12)


def test_numpy_numbers_are_numbers():
    qrels = {"a": {"d1": np.int64(1), "d2": np.int8(2)}}
    run = {"a": {"d1": np.float32(0.5), "d2": np.float64(0.25), "d3": np.int32(3)}}
    plain = {"a": {"d1": 1, "d2": 2}}, {"a": {"d1": 0.5, "d2": 0.25, "d3": 3.0}}
    assert assay.evaluate_run(qrels, run, ["AP", "nDCG@10"]).equals(assay.evaluate_run(*plain, ["AP", "nDCG@10"]))


# -- values with no place in a ranking ----------------------------------------------------------
NAN_CASE = {"a": {"d1": 1, "d2": 1}}, {"a": {"d1": math.nan, "d3": 2.0, "d2": 1.0}}


def test_a_nan_score_is_refused_where_it_was_ranked_first():
    # assay ranked d1 first (AP 0.833), pytrec_eval last (AP 0.583): no order of a NaN is right
    qrels, run = NAN_CASE
    assert pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)["a"]["map"] == pytest.approx(0.5833333)
    with pytest.raises(FormatError, match=r"^run: query 'a', document 'd1': score nan is not a finite number"):
        assay.evaluate_run(qrels, run, ["AP"])


def _frame(kind, rows, value):
    import pandas as pd

    columns = ["qid", "docno", value]
    if kind == "pandas":
        return pd.DataFrame(rows, columns=columns)
    return pa.table({c: pa.array([r[i] for r in rows], from_pandas=False) for i, c in enumerate(columns)})


@pytest.mark.parametrize("kind", ["dict", "pandas", "arrow"])
@pytest.mark.parametrize("bad, message", [
    (math.nan, "score nan is not a finite number"),
    (math.inf, "score inf is not a finite number"),
    (-math.inf, "score -inf is not a finite number"),
    (None, r"no score \(None, a null or pandas' NaN\)"),
])
def test_a_score_that_is_not_finite_is_refused_naming_query_and_document(kind, bad, message):
    qrels = {"q 1": {"d1": 1, "d2": 1}}
    rows = [("q 1", "d1", 3.0), ("q 1", "d2", bad), ("q 1", "d3", 1.0)]
    run = {"q 1": {d: s for _, d, s in rows}} if kind == "dict" else _frame(kind, rows, "score")
    if kind == "pandas" and bad is not None and math.isnan(bad):
        message = r"no score \(None, a null or pandas' NaN\)"  # pyarrow reads pandas' NaN as a null
    with pytest.raises(FormatError, match=rf"^run: query 'q 1', document 'd2': {message}"):
        assay.evaluate_run(qrels, run, ["AP"])


@pytest.mark.parametrize("kind", ["dict", "pandas", "arrow"])
@pytest.mark.parametrize("bad, message", [
    (math.nan, "relevance nan is not a finite number"),
    (math.inf, "relevance inf is not a finite number"),
    (-math.inf, "relevance -inf is not a finite number"),
    (None, r"no relevance \(None, a null or pandas' NaN\)"),
    (1.5, "relevance 1.5 is not a whole number"),
    (2.0 ** 31, r"relevance 2147483648(\.0)? is out of range \(-2147483648 to 2147483647\)"),
])
def test_a_grade_that_is_not_a_whole_number_is_refused_naming_query_and_document(kind, bad, message):
    rows = [("q1", "d1", 1.0), ("q1", "d2", bad)]
    qrels = {"q1": {d: g for _, d, g in rows}} if kind == "dict" else _frame(kind, rows, "relevance")
    if kind == "pandas" and bad is not None and math.isnan(bad):
        message = r"no relevance \(None, a null or pandas' NaN\)"
    with pytest.raises(FormatError, match=rf"^qrels: query 'q1', document 'd2': {message}"):
        assay.evaluate_run(qrels, {"q1": {"d1": 1.0}}, ["AP"])


@pytest.mark.parametrize("qrels, run, error, message", [
    ({"a": ["d1"]}, {"a": {"d1": 1.0}}, FormatError, "query 'a' maps to list"),
    ({"a": {"d1": 1.5}}, {"a": {"d1": 1.0}}, FormatError, "relevance 1.5 is not a whole number"),
    ({"a": {"d1": 1}}, {"a": {"d1": "high"}}, FormatError, "'high' is not a number"),
    ({"a": {"d1": 1}}, {"a": {"d1": True}}, FormatError, "True is not a number"),
    ({"a": {"d1": 1}}, pa.table({"query": ["a"], "doc_id": ["d1"], "score": [1.0]}), FormatError,
     "no query column; name it one of query_id, q_id, qid"),
    ({"a": {"d1": 1}}, pa.table({"q_id": ["a", "a"], "doc_id": ["d1", "d1"], "score": [1.0, 2.0]}), FormatError,
     "run: document 'd1' is listed twice for query 'a'"),
    ({"a": {"d1": 1}}, pa.table({"q_id": ["a"], "doc_id": ["d1"], "score": ["0.5"]}), FormatError,
     "run: 'score' column holds string; expected numbers"),
    ({"a": {"d1": 1}}, pa.table({"q_id": ["a", None], "doc_id": ["d1", "d2"], "score": [1.0, 2.0]}), FormatError,
     "run: row 1 has no query id"),
    ({"a": {"d1": 1}}, [("a", "d1", 1.0)], FormatError, "got list"),
])
def test_bad_input_is_one_clear_error(qrels, run, error, message):
    with pytest.raises(error, match=message):
        assay.evaluate_run(qrels, run, ["AP"])


def test_measures_that_need_an_assay_run_are_refused():
    with pytest.raises(ConfigError, match="does not apply to a TREC run"):
        assay.evaluate_run({"a": {"d1": 1}}, {"a": {"d1": 1.0}}, ["SpanRecall@1000tok"])


def test_the_manual_example_prints_what_the_page_shows():
    """The Python session under "In memory" in docs/collections.md, run by doctest."""
    import doctest

    from conftest import ROOT

    page = (ROOT / "docs" / "collections.md").read_text(encoding="utf-8")
    section = page[page.index("## In memory: `assay.evaluate_run"):]
    session = section[section.index("```python\n") + len("```python\n"):]
    session = session[:session.index("```\n")]
    test = doctest.DocTestParser().get_doctest(session, {}, "collections.md (In memory)", None, 0)
    assert len(test.examples) >= 8
    result = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS).run(test)
    assert result.failed == 0
