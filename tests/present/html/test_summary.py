"""The plain-language summary that opens the HTML reports (assay.present.html.summary), on fixed figures: each sentence
says what the figures give it, with the interval and the number of questions behind it, and no more."""

import pytest

from assay.present.html.summary import pick_headline, run_summary, runs_summary


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
        "results (78%; 95% interval 62% to 88%); the lowest slice is form=gap (6 of 12, 50%).",
        "8 of the 40 answerable questions had no relevant chunk anywhere in the run's final list. Lost questions: "
        "5 at retrieval (no first-stage list held one), 2 at the reranker (cut from its top), 1 at the final cut "
        "(ranked below the last result kept).",
        "Of the 10 questions the corpus cannot answer, the run returned nothing for 2 (20%; 95% interval 4% to 56%); "
        "for the other 8 it returned passages that a generator could take for an answer.",
    ]


def test_the_first_point_is_the_verdict_the_report_carries():
    """build_report's verdict (with its minimum detectable change) is the first point, word for word: the page
    and the text report say the same thing."""
    report = one_run({"found": 40})
    report["verdict"] = {"sentence": "The verdict the text report opens with."}
    assert run_summary(report)[0] == "The verdict the text report opens with."
    report["verdict"] = None  # a report with no ranking measure
    assert run_summary(report)[0].startswith("Every one of the 40 answerable questions")


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
                      "0.717)."]


def test_the_headline_is_success_at_3_chunk_else_the_next_present():
    rows = [row("nDCG@10", "chunk", 0.6, 9, 0.4, 0.8), row("Success@3", "doc", 0.7, 9, 0.4, 0.9)]
    assert pick_headline(rows)["metric"] == "Success@3" and pick_headline(rows)["level"] == "doc"
    assert pick_headline([row("AP", "doc", 0.5, 9, 0.3, 0.7)])["metric"] == "AP"
    assert pick_headline([row("Abstain", "query", 0.5, 9, 0.3, 0.7)]) is None


def runs_report(warning=None, level="chunk"):
    verdict = {"run": 2, "run_id": "B", "against": "A", "sentence": "Run 2 (B) is better than run 1 (A) on ...",
               "measure": "Success@3", "level": level}
    return {"runs": [{"run_id": "A"}, {"run_id": "B"}], "warning": warning, "verdicts": [verdict], "rows": []}


FLIPS = {"B": {"metric": "Success@3", "level": "doc", "won": [{"query_id": "q1"}] * 7, "lost": [{"query_id": "q2"}] * 2}}


def test_two_runs_the_verdict_then_the_flips():
    """Each later run's verdict in words is the one build_runs_report carries (the text report's first lines;
    its wording is held by tests/verdicts/test_verdict_text.py), then its flipped questions."""
    assert runs_summary(runs_report(), FLIPS) == [
        "Run 2 (B) is better than run 1 (A) on ...",
        "On Success@3 at doc level, 7 questions went from miss to hit in run 2 and 2 from hit to miss."]
    assert runs_summary(runs_report()) == ["Run 2 (B) is better than run 1 (A) on ..."]


def test_runs_ranking_different_units_are_compared_at_document_level():
    points = runs_summary(runs_report(warning="retrieval units differ: ...", level="doc"))
    assert points[0] == ("The runs rank different units, so this summary compares them on Success@3 at doc level, "
                         "which does not favour the larger unit.")


def test_no_flip_and_no_verdict():
    report = dict(runs_report(), verdicts=[])
    points = runs_summary(report, {"B": {"metric": "Success@3", "level": "doc", "won": [], "lost": []}})
    assert points == ["No question went between hit and miss on Success@3 at doc level in run 2."]


def test_a_measure_the_registry_no_longer_knows_is_said_as_a_number():
    points = run_summary(one_run({}, [row("Gone@3", "chunk", 0.5, 8, 0.2, 0.8)]))
    assert points[0].startswith("Over the 8 answerable questions, Gone@3 at chunk level is 0.500 (95% interval 0.200 "
                                "to 0.800).")
