"""The verdict in words (assay.verdicts.verdict_text) never says what the table does not: on data where each case decides
(better, worse, no detectable difference, n = 1, no spread, every slice the same), the sentence says "better" or
"worse" exactly when the paired interval beside it excludes 0, names the slice only when one goes further than
the whole, and states the minimum detectable change or why there is none."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.verdicts import verdict_text
from assay.verdicts.comparison import inference_row


def compared(before, after, metric="nDCG@10", level="chunk", slices=(), family=None):
    row = {"metric": metric, "level": level, "slice": "all", **inference_row(before, after)}
    return row, verdict_text.comparison(row, "A", "B", list(slices), family)


def slice_row(name, before, after, metric="nDCG@10", level="chunk"):
    return {"metric": metric, "level": level, "slice": name, **inference_row(before, after)}


def test_worse_names_the_loss_its_interval_and_the_slice_that_lost_most():
    before = [0.8] * 12 + [0.6] * 8
    after = [0.7] * 12 + [0.2] * 8  # every question falls; the last eight fall most
    slices = [slice_row("form=gap", before[12:], after[12:]), slice_row("form=match", before[:12], after[:12])]
    row, v = compared(before, after, slices=slices, family={"correction": "holm", "size": 4, "p_adjusted": 4 * 2 ** -19})
    assert row["ci_high"] < 0 and row["p_value"] < 0.05
    assert v["direction"] == "worse" and v["worst_slice"] == {"slice": "form=gap", "change": pytest.approx(-0.4), "n": 8}
    assert v["sentence"].startswith(
        f"B is worse than A on nDCG@10 (chunk) by 0.220 (from 0.720 to 0.500; 95% CI of the change "
        f"{row['ci_low']:+.3f} to {row['ci_high']:+.3f}, p < 0.001; Holm over 4 tests: p < 0.001); the largest loss "
        "is in form=gap questions (-0.400 over 8).")
    # sd of the changes: twelve of -0.1 and eight of -0.4
    sd = math.sqrt((12 * 0.12 ** 2 + 8 * 0.18 ** 2) / 19)
    assert v["mdc"] == pytest.approx((2.093024 + 0.860951) * sd / math.sqrt(20), rel=1e-5)  # t quantiles, df 19
    assert v["sentence"].endswith(f"With 20 questions, changes smaller than {v['mdc']:.3f} cannot be told from "
                                  "noise (80% power at alpha 0.05).")


def test_better_says_gain():
    before = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]
    after = [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    row, v = compared(before, after, "Success@3", "doc")
    assert row["ci_low"] > 0 and v["direction"] == "better"
    assert v["sentence"].startswith("B is better than A on Success@3 (doc) by 0.800 (from 0.200 to 1.000;")
    assert v["worst_slice"] is None  # no slices given


def test_no_detectable_difference_and_a_correction_that_undoes_a_verdict():
    row, v = compared([0.5, 0.7, 0.2, 0.9, 0.4, 0.6], [0.6, 0.5, 0.3, 0.8, 0.5, 0.5])
    assert row["ci_low"] <= 0 <= row["ci_high"] and v["direction"] == "no detectable difference"
    assert v["sentence"].startswith("B cannot be told from A on nDCG@10 (chunk): the change is -0.017 (from 0.550 to "
                                    "0.533; 95% CI of the change -0.183 to +0.141, p = 0.739). With 6 questions")
    assert v["worst_slice"] is None
    # significant alone, not after Holm: the sentence keeps the interval's word and says what the correction did
    row, v = compared([0.0] * 8, [0.3] * 7 + [0.1], family={"correction": "holm", "size": 30, "p_adjusted": 0.23})
    assert v["direction"] == "better"
    assert "Holm over 30 tests: p = 0.230, not below 0.05 once corrected)." in v["sentence"]


def test_one_question_cannot_tell_anything():
    row, v = compared([0.2], [0.9])
    # one question: Z(0)**2 = 1 * 2 * d**2 / (d**2 + d**2) = 1 whatever the change, so p = 2 * (1 - Phi(1))
    assert v["direction"] == "no detectable difference" and abs(row["p_value"] - 0.31731050786291415) < 1e-15
    assert v["mdc"] is None
    assert v["sentence"].endswith("No minimum detectable change: one question gives no estimate of the noise.")


def test_no_question_changed_is_the_same_and_a_constant_change_has_no_mdc():
    _, v = compared([0.5] * 10, [0.5] * 10)
    assert v["direction"] == "same"
    assert v["sentence"] == ("B and A score the same on nDCG@10 (chunk) at every one of the 10 questions (0.500). "
                             "No minimum detectable change: the per-question changes do not vary, so they give no "
                             "estimate of the noise.")
    row, v = compared([0.2] * 10, [0.3] * 10)  # every question gains 0.1: significant, no spread
    assert v["direction"] == "better" and row["ci_low"] > 0 and v["mdc"] is None


def test_too_few_questions_for_the_test():
    _, v = compared([0.0] * 3, [1.0] * 3, "Success@1", "doc")
    assert v["direction"] == "no detectable difference"  # Z = sqrt(3), p = 0.083: never below 0.05
    assert "with 3 questions the test cannot reach p < 0.05" in v["sentence"]


def test_every_slice_like_the_whole_names_none():
    before, after = [0.8] * 10, [0.5] * 9 + [0.4]
    even = [slice_row("form=gap", before[:5], after[:5]), slice_row("form=match", before[5:], after[5:])]
    _, v = compared(before, after, slices=[slice_row(s["slice"], before, after) for s in even])
    assert v["direction"] == "worse" and v["worst_slice"] is None
    assert "largest loss" not in v["sentence"]
    # a slice below MIN_SLICE questions is never singled out, however far it fell
    tiny = [slice_row("hard_class=tiny", before[:4], [0.0] * 4)]
    assert compared(before, after, slices=tiny)[1]["worst_slice"] is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0]),
                          st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 1.0])), min_size=1, max_size=14))
def test_the_sentence_says_better_or_worse_exactly_when_the_interval_excludes_0(pairs):
    before, after = [a for a, _ in pairs], [b for _, b in pairs]
    row, v = compared(before, after)
    said = v["sentence"]
    excludes = row["ci_low"] > 0 or row["ci_high"] < 0
    assert (" is better than " in said or " is worse than " in said) == excludes
    assert (" is worse than " in said) == (row["ci_high"] < 0)
    assert excludes == (row["p_value"] < 0.05)  # the one inference: the interval inverts the test
    assert v["direction"] in ("better", "worse") if excludes else v["direction"] in ("same", "no detectable difference")
    assert v["change"] == row["delta"] and v["n"] == len(pairs)


def regress_result(checks, mode="significance", correction="holm"):
    return {"mode": mode, "correction": correction, "alpha": 0.05, "family_size": len(checks), "checks": checks}


def check(slice_, change, high, regressed, n=40, metric="nDCG@10", mdc=0.08):
    return {"metric": metric, "level": "chunk", "slice": slice_, "n": n, "a": 0.6, "b": 0.6 + change,
            "change": change, "null": -0.02, "ci_low": -1.0, "ci_high": high, "confidence": 0.9875,
            "p_value": 0.001 if regressed else 0.4, "p_adjusted": 0.004 if regressed else 1.0,
            "decided_at": 0.0125, "regressed": regressed, "mdc": mdc, "mdc_reason": None}


def test_regress_leads_with_its_first_failure_in_the_tables_order():
    checks = [check("all", -0.01, 0.03, False), check("form=gap", -0.3, -0.1, True, n=12),
              check("category=a", -0.2, -0.05, True, n=10)]
    v = verdict_text.regress(regress_result(checks))
    assert v["decision"] == "regressed" and v["failed"] == 2 and v["slice"] == "category=a"
    assert v["sentence"].startswith(
        "The candidate regressed on 2 of 3 checks: nDCG@10 (chunk) in category=a questions changed by -0.200 "
        "(from 0.600 to 0.400), significantly below its floor -0.020 (one-sided 98.75% bound -0.050, p = 0.001, "
        "0.004 after the correction, Holm over 3 checks at alpha 0.05).")
    assert v["sentence"].endswith("With 10 questions, falls past the floor smaller than 0.080 cannot be told from "
                                  "noise (80% power at alpha 0.013, one-sided, the level this check was decided at).")


def test_regress_without_failure_names_the_largest_fall_and_never_a_rise():
    checks = [check("all", -0.01, 0.03, False), check("form=gap", -0.15, 0.1, False, n=12),
              check("form=match", 0.05, 0.2, False, n=28)]
    v = verdict_text.regress(regress_result(checks))
    assert v["decision"] == "ok" and v["sentence"].startswith("No regression: no check is significantly below its floor")
    assert v["worst_slice"] == {"slice": "form=gap", "change": -0.15, "n": 12}
    rising = [check("all", 0.05, 0.1, False), check("form=gap", 0.1, 0.2, False, n=12)]
    assert verdict_text.regress(regress_result(rising))["worst_slice"] is None
    # two guarded measures, none failing: the one closest to failing leads (smallest p; threshold mode: the change
    # nearest its floor)
    two = [check("all", 0.05, 0.1, False), dict(check("all", -0.3, 0.2, False, metric="R@10"), p_value=0.2)]
    assert verdict_text.regress(regress_result(two))["measure"] == "R@10"
    assert verdict_text.regress(regress_result(two, mode="threshold"))["measure"] == "R@10"
    assert verdict_text.regress(regress_result(two[::-1][:1] + two[:1]))["measure"] == "R@10"


def test_regress_in_threshold_mode_says_the_change_alone_decides():
    checks = [dict(check("all", -0.05, -0.01, True), ci_low=-0.09)]
    v = verdict_text.regress(regress_result(checks, mode="threshold", correction="none"))
    assert "threshold mode: the change alone decides" in v["sentence"]
    assert "95% CI -0.090 to -0.010, p = 0.001, for information" in v["sentence"]
    assert "a fall past the floor smaller than that may be noise." in v["sentence"]


def gate_row(rule, passed, fragile=False, value=0.7, reason=""):
    return {"rule": rule, "passed": passed, "fragile": fragile, "value": value, "n": 30, "ci_low": 0.6,
            "ci_high": 0.8, "reason": reason}


def test_gate_names_failing_rules_else_fragile_ones():
    v = verdict_text.gate([gate_row("a>=0.8", False), gate_row("b>=0.5", True)])
    assert v["decision"] == "fail" and v["failing_rules"] == ["a>=0.8"]
    assert v["sentence"] == "The run fails 1 of 2 gate rules: a>=0.8 reads 0.700 (95% CI 0.600 to 0.800, n = 30)."
    v = verdict_text.gate([gate_row("a>=0.65", True, True, reason="0.700 >= 0.65, but the 95% interval reaches 0.600"),
                           gate_row("b>=0.5", True)])
    assert v["sentence"] == ("The run passes all 2 gate rules; 1 passes only on the point estimate (fragile): a>=0.65 "
                             "(0.700 >= 0.65, but the 95% interval reaches 0.600).")
    one = verdict_text.gate([gate_row("a>=0.65", True, True, reason="0.700 >= 0.65, but the 95% interval reaches 0.6")])
    assert one["sentence"].startswith("The run passes its one gate rule, but only on the point estimate (fragile): ")
    # the family gate.check corrected the fragile tests over, as its second line says
    family = {"family_size": 3, "correction": "holm", "alpha": 0.05}
    three = verdict_text.gate([dict(gate_row("a>=0.65", True, True, reason="r"), **family),
                               dict(gate_row("b>=0.5", True), **family), dict(gate_row("c>=0.5", True), **family)])
    assert three["sentence"].endswith("(r); one-sided tests, Holm over 3 rules at alpha 0.05.")
    alone = verdict_text.gate([dict(gate_row("a>=0.65", True, True, reason="r"), **{**family, "family_size": 1})])
    assert alone["sentence"].endswith("(r); one-sided test at alpha 0.05.") and alone["family_size"] == 1
    empty = dict(gate_row("c[form=x]>=0.5", False, value=None), reason="no questions in slice 'form=x'")
    assert "c[form=x]>=0.5 (no questions in slice 'form=x')" in verdict_text.gate([empty])["sentence"]


def test_sweep_counts_the_points_that_cannot_be_told_from_the_best():
    def point(i, verdict, mdc=None):
        return {"point": i, "label": f"recursive {i * 200}/0", "pipeline": "bm25", "verdict": verdict, "mdc": mdc,
                "select": {"value": 0.5 + i / 100, "ci_low": 0.4, "ci_high": 0.6, "n": 30}}

    result = {"points": [point(1, "indistinguishable", 0.12), point(2, "best"), point(3, "worse", 0.1),
                         point(4, "indistinguishable", 0.15)],
              "best": 2, "select": "SpanRecall@1000tok", "spec": {"alpha": 0.05}, "n_questions": 30}
    v = verdict_text.sweep(result)
    assert v["indistinguishable"] == [1, 4] and v["family_size"] == 3
    assert v["sentence"] == (
        "Point 2 (recursive 400/0, bm25) is best on SpanRecall@1000tok (0.520; 95% interval 0.400 to 0.600); 2 of the "
        "3 other points cannot be told from it (Holm over 3 tests at alpha 0.05): points 1, 4. With 30 questions, "
        "differences from the best smaller than 0.100 to 0.150 cannot be told from noise (80% power at alpha 0.05, "
        "before the correction).")
    alone = verdict_text.sweep(dict(result, points=[point(2, "best")]))
    assert alone["sentence"].endswith("the sweep has no other point to compare it with.")


def test_the_headline_is_the_first_measure_asked_for_else_the_fixed_order():
    rows = [{"metric": m, "level": lvl, "slice": "all", "n": 9, "value": 0.5} for m, lvl in
            (("nDCG@10", "doc"), ("nDCG@10", "chunk"), ("Success@3", "doc"), ("AP", "chunk"))]
    assert (verdict_text.pick(rows)["metric"], verdict_text.pick(rows)["level"]) == ("Success@3", "doc")
    chosen = verdict_text.pick(rows, ["nDCG@10", "Success@3"])
    assert (chosen["metric"], chosen["level"]) == ("nDCG@10", "chunk")
    assert verdict_text.pick(rows, ["R@10"]) is None
    # runs that rank different units: the document level of the measure asked for first
    doc = verdict_text.pick(rows, ["nDCG@10"], verdict_text.UNITS_DIFFER)
    assert (doc["metric"], doc["level"]) == ("nDCG@10", "doc")


def test_compare_names_other_changes_that_survive_the_tables_correction():
    """The headline (Success@3 doc) cannot be told apart, but the table holds a change that survives Holm: the
    sentence names it, so it never reads as "nothing changed" over a table that shows a significant change."""
    def row(metric, level, delta, p_holm):
        return {"metric": metric, "level": level, "slice": "all", "n": 56, "a": 0.5, "b": 0.5 + delta,
                "delta": delta, "ci_low": delta - 0.01, "ci_high": delta + 0.01, "p_value": p_holm / 3,
                "p_holm": p_holm, "n_tests": 3, "test": "sign-flip", "sd_change": 0.1, "mdc": 0.04, "mdc_reason": None}
    head = {**row("Success@3", "doc", 0.0, 1.0), "ci_low": -0.1, "ci_high": 0.1}
    kept = row("SpanPrecision@10", "chunk", 0.013, 0.005)
    undone = row("nDCG@10", "chunk", 0.05, 0.06)  # significant alone, not once corrected: not named
    v = verdict_text.compare({"rows": [head, kept, undone], "alpha": 0.05})
    assert v["direction"] == "no detectable difference"
    assert v["sentence"].endswith(" Elsewhere in the table, 1 other change survives Holm's correction: "
                                  "SpanPrecision@10 (chunk) +0.013 (Holm p = 0.005).")
    assert v["also_significant"] == [{"measure": "SpanPrecision@10", "level": "chunk", "change": 0.013,
                                      "ci_low": pytest.approx(0.003), "ci_high": pytest.approx(0.023), "p_adjusted": 0.005}]
    v = verdict_text.compare({"rows": [head, undone], "alpha": 0.05})
    assert "Elsewhere" not in v["sentence"] and v["also_significant"] == []


def test_a_run_at_rank_1_says_first_not_top_1():
    head = {"metric": "Success@1", "level": "doc", "slice": "all", "value": 0.5, "n": 10, "ci_low": 0.2,
            "ci_high": 0.8}
    v = verdict_text.run([head], head, None)
    assert v["sentence"].startswith("Of the 10 answerable questions, 5 had a relevant document first (50%; 95% "
                                    "interval 20% to 80%)")
    chunk = {**head, "level": "chunk"}
    assert "5 had a relevant chunk (one overlapping a gold passage) first (50%;" in verdict_text.run(
        [chunk], chunk, None)["sentence"]
