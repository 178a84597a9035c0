"""compare's pure parts pinned exactly (docs/mutation.md): the configuration difference and how it is said,
the refusal to pair runs over other questions or documents, the kind of test a measure gets, p-values as
printed, and the text `assay compare` prints."""

from __future__ import annotations

import pytest

from assay.verdicts import comparison
from assay.measures.registry import parse_measure


def test_config_diff_is_every_differing_setting_sorted_with_whole_sections_once():
    a = {"chunker": {"size": 800, "overlap": 0}, "pipeline": "bm25", "rerank": {"model": "x"}, "depth": 100}
    b = {"chunker": {"size": 400, "overlap": 0}, "pipeline": "hybrid", "fusion": {"k": 60}, "depth": 100}
    assert comparison.config_diff(a, b) == [("chunker.size", 800, 400), ("fusion", "<absent>", {"k": 60}),
                                            ("pipeline", "bm25", "hybrid"), ("rerank", {"model": "x"}, "<absent>")]
    assert comparison.config_diff(a, a) == []
    assert comparison.config_diff({"x": {"y": {"z": 1}}}, {"x": {"y": {"z": 2}}}, "top") == [("top.x.y.z", 1, 2)]


def test_describe_diff_writes_strings_quoted_and_the_rest_as_json():
    assert comparison.describe_diff([]) == ["configurations are identical"]
    assert comparison.describe_diff([("a", "bm25", "hybrid"), ("b", "<absent>", {"k": 60, "a": [1]}),
                                     ("c", None, True)]) == [
        "a: 'bm25' -> 'hybrid'", 'b: <absent> -> {"a": [1], "k": 60}', "c: null -> true"]


def identity(run_id, judgments="j" * 16, corpus="c" * 16, config=None):
    return {"run_id": run_id, "judgments_hash": judgments, "corpus_hash": corpus, "config": config or {"k": 1}}


def test_runs_over_other_questions_or_documents_are_not_comparable():
    comparison.check_comparable(identity("a"), identity("b", config={"k": 2}))  # only the configuration differs
    with pytest.raises(comparison.NotComparable) as error:
        comparison.check_comparable(identity("a"), identity("b", judgments="J" * 16, corpus="C" * 16,
                                                            config={"k": 2}))
    assert str(error.value) == (
        "runs a and b are not comparable: judgments differ (jjjjjjjjjjjj vs JJJJJJJJJJJJ); corpora differ "
        "(cccccccccccc vs CCCCCCCCCCCC). Their questions or documents are not the same, so no paired comparison "
        "is meaningful. Configuration difference:\n  k: 1 -> 2")
    with pytest.raises(comparison.NotComparable) as error:
        comparison.check_comparable(identity("a"), identity("b", corpus="C" * 16))
    assert "not comparable: corpora differ (cccccccccccc vs CCCCCCCCCCCC). Their" in str(error.value)
    assert str(error.value).endswith("Configuration difference:\n  configurations are identical")


def test_a_hit_measure_is_tested_as_binary_and_a_graded_one_as_continuous():
    assert comparison.metric_kind(parse_measure("Success@3")) == "binary"
    assert comparison.metric_kind(parse_measure("nDCG@10")) == "continuous"


def test_p_values_print_to_three_places_and_below_a_thousandth_as_such():
    assert [comparison._p(v) for v in (0.0009999, 0.001, 0.0426, 1.0)] == ["<0.001", "0.001", "0.043", "1.000"]


def row(metric, level, slice_, a, b, p):
    return {"metric": metric, "level": level, "slice": slice_, "n": 4, "a": a, "b": b, "delta": b - a,
            "ci_low": b - a - 0.25, "ci_high": b - a + 0.25, "test": "mcnemar", "p_value": p, "p_holm": min(1, 2 * p),
            "n_tests": 2}


RESULT = {"a": {"run_id": "A1", "pipeline": "bm25"}, "b": {"run_id": "B1", "pipeline": "hybrid"},
          "config_diff": [{"key": "pipeline", "a": "bm25", "b": "hybrid"}],
          "units": {"warning": "A retrieves chunks, B documents"},
          "rows": [row("Success@3", "doc", "all", 0.5, 0.75, 0.0004), row("RR@10", "chunk", "all", 0.5, 0.25, 0.2),
                   row("Success@3", "doc", "form=gap", 0.25, 0.5, 0.3), row("RR@10", "chunk", "form=gap", 0, 0, 1)],
          "flips": {"metric": "Success@3", "level": "doc", "won": [{"query_id": "007", "rank_a": None, "rank_b": 2}],
                    "lost": [{"query_id": "12", "rank_a": 1, "rank_b": None}]}}


def test_render_is_the_difference_the_tables_and_the_flips_exactly():
    """Every line of `assay compare`'s text: the overall table, the flips (all-digit query ids kept left, - for no
    relevant result retrieved), the headline metrics by slice (RR@10 is not one)."""
    assert comparison.render(RESULT) == (
        "compare A A1 (bm25)  ->  B B1 (hybrid)\n\nconfiguration difference:\n  pipeline: 'bm25' -> 'hybrid'\n\n"
        "WARNING: A retrieves chunks, B documents\n\n"
        "all questions: change = B - A; each 95% interval inverts the paired test beside it, so it excludes 0 "
        "exactly when p < 0.05; p (Holm) corrects p over the 2 tests of this table; MDC: the smallest true change "
        "this test finds 80% of the time at alpha 0.05 (- where n or the spread cannot tell):\n\n"
        "metric     level      A      B  change            95% CI  test          p  p (Holm)  n  MDC\n"
        "-------------------------------------------------------------------------------------------\n"
        "Success@3  doc    0.500  0.750  +0.250  [+0.000, +0.500]  mcnemar  <0.001    <0.001  4  -\n"
        "RR@10      chunk  0.500  0.250  -0.250  [-0.500, +0.000]  mcnemar   0.200     0.400  4  -\n\n"
        "questions that flipped on Success@3 (doc level): 1 won, 1 lost (rank of the first relevant result in A and "
        "in B; - when none was retrieved)\n\n"
        "flip  query_id  rank in A  rank in B\n"
        "------------------------------------\n"
        "won   007               -          2\n"
        "lost  12                1          -\n\n"
        "by slice (headline metrics; each interval inverts its p; p (Holm) corrects p within each slice over all "
        "its tests):\n\n"
        "slice     metric     level  n      A      B  change            95% CI      p  p (Holm)\n"
        "--------------------------------------------------------------------------------------\n"
        "form=gap  Success@3  doc    4  0.250  0.500  +0.250  [+0.000, +0.500]  0.300     0.600\n\n"
        "JSON output (--format json) has every metric for every slice.\n")


def test_render_without_a_unit_warning_or_flips_says_neither():
    calm = dict(RESULT, units={"a": "chunk", "b": "chunk", "warning": None},
                flips={"metric": "Success@3", "level": "doc", "won": [], "lost": []})
    text = comparison.render(calm)
    assert "WARNING" not in text and "flip  query_id" not in text
    assert "questions that flipped on Success@3 (doc level): 0 won, 0 lost (rank" in text
    assert comparison.render(dict(calm, units={})) == text
    assert "p (Holm) corrects p over the 0 tests" in comparison.render(dict(calm, rows=[]))
