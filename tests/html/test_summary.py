"""The plain-language summary that opens the HTML reports (assay.html.summary), on fixed figures: each sentence
says what the figures give it, with the interval and the number of questions behind it, and no more."""

import pytest

from assay.html.summary import pick_headline, run_summary, runs_summary


def row(metric, level, value, n, low, high, slice_="all"):
    return {"metric": metric, "level": level, "slice": slice_, "value": value, "n": n, "ci_low": low, "ci_high": high}


def one_run(funnel, metrics=None):
    metrics = metrics if metrics is not None else [
        row("Success@1", "doc", 0.5, 40, 0.35, 0.65),
        row("Success@3", "chunk", 0.775, 40, 0.62, 0.88),
        row("Success@3", "doc", 0.9, 40, 0.76, 0.96),
        row("Success@3", "chunk", 0.5, 12, 0.25, 0.75, "form=gap"),
        row("Success@3", "chunk", 0.25, 4, 0.05, 0.7, "hard_class=tiny"),  # too small to single out
        row("Success@3", "chunk", 0.9, 28, 0.72, 0.97, "form=match"),
        row("Abstain", "query", 0.2, 10, 0.04, 0.56),
    ]
    return {"run": {"run_id": "r1", "config": {"depth": 10}}, "metrics": metrics, "attribution": {"funnel": funnel}}


def test_one_run_in_words():
    points = run_summary(one_run({"retrieval": 5, "rerank": 2, "cutoff": 1, "found": 32}))
    assert points == [
        "Of the 40 answerable questions, 31 had a relevant chunk (one overlapping a gold passage) in their top 3 "
        "results (78%; 95% interval 62% to 88%). With 40 questions that interval is 26 points wide; to tell whether "
        "another run does better, compare the two runs question by question (assay report RUN_A RUN_B), not their "
        "intervals.",
        "8 of the 40 answerable questions had no relevant chunk anywhere in the run's final list. Lost questions: "
        "5 at retrieval (no first-stage list held one), 2 at the reranker (cut from its top), 1 at the final cut "
        "(ranked below the last result kept).",
        "Of the 10 questions the corpus cannot answer, the run returned nothing for 2 (20%; 95% interval 4% to 56%); "
        "for the other 8 it returned passages that a generator could take for an answer.",
        "The lowest slice on this measure is form=gap: 6 of 12 (50%; 95% interval 25% to 75%); a slice holds fewer "
        "questions, so its interval is wider still.",
    ]


def test_nothing_lost_is_said_so_and_missing_parts_are_left_out():
    metrics = [row("Success@3", "chunk", 1.0, 5, 0.48, 1.0)]
    assert run_summary(one_run({"found": 5}, metrics))[1:] == [
        "Every one of the 5 answerable questions had a relevant chunk somewhere in the run's final list: none was "
        "lost along the pipeline."]
    assert run_summary(one_run({}, [])) == []


def test_a_graded_headline_is_said_as_a_number():
    """A report of other measures (--metric nDCG@10): no count of questions, the value and its interval."""
    points = run_summary(one_run({}, [row("nDCG@10", "chunk", 0.625, 56, 0.53, 0.717)]))
    assert points == ["Over the 56 answerable questions, nDCG@10 at chunk level is 0.625 (95% interval 0.530 to "
                      "0.717). With 56 questions that interval is 0.187 wide; to tell whether another run does better, "
                      "compare the two runs question by question (assay report RUN_A RUN_B), not their intervals."]


def test_the_headline_is_success_at_3_chunk_else_the_next_present():
    rows = [row("nDCG@10", "chunk", 0.6, 9, 0.4, 0.8), row("Success@3", "doc", 0.7, 9, 0.4, 0.9)]
    assert pick_headline(rows)["metric"] == "Success@3" and pick_headline(rows)["level"] == "doc"
    assert pick_headline([row("AP", "doc", 0.5, 9, 0.3, 0.7)])["metric"] == "AP"
    assert pick_headline([row("Abstain", "query", 0.5, 9, 0.3, 0.7)]) is None


def runs_report(delta_b, p_holm, warning=None, metric="Success@3", level="chunk", n_tests=24):
    a = {"metric": metric, "level": level, "run_id": "A", "value": 0.75, "n": 56, "ci_low": 0.61, "ci_high": 0.85,
         "delta": None, "p_value": None, "p_holm": None}
    b = dict(a, run_id="B", value=0.75 + delta_b, delta=delta_b, p_value=p_holm, p_holm=p_holm)
    doc_a = dict(a, level="doc", value=0.8)
    doc_b = dict(b, level="doc", value=0.7, delta=-0.1, p_holm=0.5)
    return {"runs": [{"run_id": "A"}, {"run_id": "B"}], "warning": warning,
            "measures": [{"metric": metric, "test": "mcnemar-exact", "untested": None}],
            "significance": {"against": "A", "alpha": 0.05, "adjustment": "holm", "n_tests": n_tests},
            "rows": [a, b, doc_a, doc_b]}


FLIPS = {"B": {"metric": "Success@3", "level": "doc", "won": [{"query_id": "q1"}] * 7, "lost": [{"query_id": "q2"}] * 2}}


def test_two_runs_a_difference_the_test_separates_from_noise():
    points = runs_summary(runs_report(0.125, 0.004), {("B", "Success@3", "chunk"): (0.05, 0.2)}, FLIPS)
    assert points == [
        "Run 2 (B) scores higher than run 1 (A) on Success@3 at chunk level: 88% against 75% (+12.5 points; paired "
        "95% interval +5.0 to +20.0 points). The exact McNemar test over the 56 questions, question by question, "
        "gives p = 0.004 after Holm's adjustment over the page's 24 tests, below 0.05: a difference this large is "
        "unlikely to be noise.",
        "On Success@3 at doc level, 7 questions went from miss to hit in run 2 and 2 from hit to miss."]


def test_two_runs_a_difference_within_noise():
    points = runs_summary(runs_report(-0.036, 0.62), {("B", "Success@3", "chunk"): (-0.11, 0.04)})
    assert points == [
        "Run 2 (B) scores lower than run 1 (A) on Success@3 at chunk level: 71% against 75% (-3.6 points; paired 95% "
        "interval -11.0 to +4.0 points). The exact McNemar test over the 56 questions, question by question, gives "
        "p = 0.620 after Holm's adjustment over the page's 24 tests: with 56 questions this difference cannot be "
        "told from noise."]


def test_a_difference_the_adjustment_leaves_unsettled_says_so():
    """The paired interval inverts the unadjusted test: it can exclude 0 while Holm's p is above alpha, and the
    sentence then names the adjustment, not a disagreement between interval and test."""
    report = runs_report(-0.089, 0.125)
    report["rows"][1]["p_value"] = 0.01
    (point,) = runs_summary(report, {("B", "Success@3", "chunk"): (-0.2, -0.01)})
    assert point.endswith("(alone, this test gives p = 0.010 and its paired interval excludes 0; it is the "
                          "adjustment for the page's 24 tests that leaves the difference unsettled).")
    (plain,) = runs_summary(runs_report(-0.089, 0.125), {("B", "Success@3", "chunk"): (-0.2, 0.01)})
    assert plain.endswith("with 56 questions this difference cannot be told from noise.")


def test_runs_ranking_different_units_are_compared_at_document_level():
    points = runs_summary(runs_report(0.1, 0.01, warning="retrieval units differ: ..."))
    assert points[0] == ("The runs rank different units, so this summary compares them on Success@3 at doc level, "
                         "which does not favour the larger unit.")
    assert points[1].startswith("Run 2 (B) scores lower than run 1 (A) on Success@3 at doc level: 70% against 80% "
                                "(-10.0 points).")
    assert "p = 0.500" in points[1] and "cannot be told from noise" in points[1]


def test_no_flip_and_an_untested_measure():
    report = runs_report(0.0, None)
    points = runs_summary(report, None, {"B": {"metric": "Success@3", "level": "doc", "won": [], "lost": []}})
    assert points == [
        "Run 2 (B) scores the same as run 1 (A) on Success@3 at chunk level: 75% against 75% (+0.0 points). That "
        "measure is not tested across runs, so nothing says whether the difference is real.",
        "No question went between hit and miss on Success@3 at doc level in run 2."]


def test_a_measure_the_registry_no_longer_knows_is_said_as_a_number():
    points = run_summary(one_run({}, [row("Gone@3", "chunk", 0.5, 8, 0.2, 0.8)]))
    assert points[0].startswith("Over the 8 answerable questions, Gone@3 at chunk level is 0.500 (95% interval 0.200 "
                                "to 0.800).")
