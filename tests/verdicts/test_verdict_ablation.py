"""The ablation's sanity check without rules, on data where its rule decides: "visibly worse" is a negative change
whose paired p-value, Holm-corrected over the ranking measures measured on the weakened rung, is below 0.05.

Runs with prescribed ranks (verdict_runs.py) stand for the baseline and the weakened rung, in a real warehouse,
measured and compared by assay.runs.ablation's own steps. The baseline finds every question's relevant chunk at rank 1;
the weakened rung finds it at rank 2 (or not at all) on some questions. Success@1, Success@3, Success@10 and R@10
then change by 0 or 1 on each question: McNemar's test without continuity correction, p = chi2.sf((b - c)**2 /
(b + c), 1) with b questions won and c lost, and p = 1 when none changed. nDCG@10 changes by 1 - 1/log2(3) at
rank 2 (and by 1 at no hit): a graded change, whose p comes from the score statistic Z with one pseudo-question
split at +-r (assay.verdicts.inference's docstring). The expected p-values below are computed here from those
definitions with scipy, never with the code under test; Holm's adjusted values are written out by hand. Each test
names the hand mutation of src/assay/runs/ablation.py it catches.
"""

from __future__ import annotations

import math

import pytest
from scipy.stats import chi2, norm

from assay.runs import ablation
from assay.store.warehouse import Warehouse
from verdict_runs import write_ranks

N = 12
G = 1 - 1 / math.log2(3)  # nDCG@10 lost by a question whose one relevant chunk falls from rank 1 to rank 2


def mcnemar_p(won: int, lost: int) -> float:
    """McNemar's test without continuity correction, the p of Tango's score statistic at 0."""
    return chi2.sf((won - lost) ** 2 / (won + lost), 1)


def graded_p(d: list[float]) -> float:
    """Two-sided p of Z(0) = sum d / sqrt(n * V), V the mean squared change with one pseudo-question added (half
    a question at +r, half at -r; r the root mean square of the changes that are not 0), so n + 1 questions in all:
    the definition, from scratch."""
    moved = [x for x in d if x != 0]
    n, r = len(d), math.sqrt(sum(x * x for x in moved) / len(moved)) if moved else 1.0
    spread = sum(x * x for x in d) + 0.5 * r ** 2 + 0.5 * r ** 2
    return 2 * norm.sf(abs(sum(d)) / math.sqrt(n * spread / (n + 1)))


def ladder(path, base_ranks: list[int], weak_ranks: list[int]) -> list[ablation.Rung]:
    rungs = [ablation.Rung("base", "baseline"), ablation.Rung("weak", "weakened", weakened=True)]
    with Warehouse.open(path) as wh:
        for rung, ranks in zip(rungs, (base_ranks, weak_ranks)):
            rung.run_id = f"run-{rung.pipeline}"
            write_ranks(wh, rung.run_id, ranks)
            ablation.measure_rung(wh, rung, seed=0)
    ablation.measure_deltas(rungs[0], rungs[1])
    return rungs


def family(rungs) -> dict:
    return {f"{m}:{lvl}": d for (m, lvl), d in ablation.sanity_family(rungs[1])}


def approx(values: list[float]):
    return pytest.approx(values, rel=1e-9)


def test_worse_before_holm_but_not_after_is_not_visibly_worse_exit_6(tmp_path):
    """6 of 12 questions fall to rank 2: Success@1 loses 6 (p = chi2.sf(6, 1) = 0.0143) and nDCG@10 loses G on
    6 (graded p 0.0183), both below 0.05, both intervals excluding 0. Holm over the 5 ranking measures: 5 * 0.0143
    = 0.0715 for the smaller, max(0.0715, 4 * 0.0183 = 0.0730) for the other: neither below 0.05. Not visibly
    worse: exit 6. Why 6: with 4 lost, nDCG@10's raw p (0.063) is not below 0.05; with 7, Success@1's Holm value
    5 * 0.0082 = 0.041 is. Kills the check read from the raw p (or from the 95% interval, which excludes 0 exactly
    when the raw p < 0.05)."""
    rungs = ladder(tmp_path / "w.duckdb", [1] * N, [2] * 6 + [1] * (N - 6))
    fam = family(rungs)
    assert list(fam) == ["Success@1:doc", "Success@3:doc", "Success@10:chunk", "R@10:chunk", "nDCG@10:chunk"]
    assert fam["Success@1:doc"]["delta"] == -6 / N
    assert fam["nDCG@10:chunk"]["delta"] == pytest.approx(-6 * G / N, abs=1e-12)
    assert [fam[k]["test"] for k in fam] == ["tango-score"] * 4 + ["score"]
    p_s1, p_ndcg = mcnemar_p(0, 6), graded_p([-G] * 6 + [0.0] * (N - 6))
    assert p_s1 < p_ndcg < 0.05
    assert [fam[k]["p_value"] for k in fam] == approx([p_s1, 1, 1, 1, p_ndcg])
    assert [fam[k]["p_holm"] for k in fam] == approx([5 * p_s1, 1, 1, 1, max(5 * p_s1, 4 * p_ndcg)])
    assert 5 * p_s1 >= 0.05
    assert all(fam[k]["ci_high"] < 0 for k in ("Success@1:doc", "nDCG@10:chunk"))  # the raw intervals exclude 0
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code, v.worse) == ("not worse", 6, [])
    assert "Holm-corrected over the 5 ranking measure(s) measured on it, at 0.05" in v.message


def test_worse_after_holm_is_visibly_worse_exit_0(tmp_path):
    """8 of 12 questions fall to rank 2: Success@1's p = chi2.sf(8, 1) = 0.0047, nDCG@10's graded p 0.0055.
    Holm over 5: 5 * 0.0047 = 0.0234, and for nDCG@10 max(0.0234, 4 * 0.0055 = 0.0220) = 0.0234 (the step-down
    keeps the adjusted values monotone): both below 0.05. Visibly worse on both: exit 0."""
    rungs = ladder(tmp_path / "w.duckdb", [1] * N, [2] * 8 + [1] * (N - 8))
    fam = family(rungs)
    p_s1, p_ndcg = mcnemar_p(0, 8), graded_p([-G] * 8 + [0.0] * (N - 8))
    assert 4 * p_ndcg < 5 * p_s1 < 0.05
    assert [fam[k]["p_holm"] for k in fam] == approx([5 * p_s1, 1, 1, 1, 5 * p_s1])
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code) == ("worse", 0)
    assert [w.split(" [")[0] for w in v.worse] == ["Success@1 (doc) -0.667", "nDCG@10 (chunk) -0.246"]
    assert v.worse[0].endswith("p 0.005, Holm 0.023")


def test_a_weakened_rung_significantly_better_is_not_worse(tmp_path):
    """The baseline at rank 2 on 8 questions, the weakened rung at rank 1 everywhere: the same p-values as above,
    but the changes are gains. Kills the direction dropped from the check (a small p alone taken as 'worse')."""
    rungs = ladder(tmp_path / "w.duckdb", [2] * 8 + [1] * (N - 8), [1] * N)
    fam = family(rungs)
    assert fam["Success@1:doc"]["delta"] == 8 / N
    assert fam["Success@1:doc"]["p_holm"] == pytest.approx(5 * mcnemar_p(8, 0), rel=1e-9)
    assert fam["Success@1:doc"]["p_holm"] < 0.05
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code) == ("not worse", 6)


def test_holm_steps_down_where_bonferroni_would_not(tmp_path):
    """The weakened rung misses 6 questions altogether (rank 0) and finds 2 more at rank 2. Success@3, Success@10
    and R@10 lose the 6: p = chi2.sf(6, 1) = 0.0143, which lies in [0.01, 0.05 / 3): below 0.05 at Holm's third
    step (3 * 0.0143 = 0.0429) but not under Bonferroni's 5 * 0.0143 = 0.0715. Success@1 loses all 8 (p 0.0047,
    5 * p = 0.0234) and nDCG@10 loses 1 on 6 and G on 2 (graded p 0.0083, 4 * p = 0.0331): the first two steps
    pass, so Holm reaches the other three. The counts are chosen for that: with 7 missed instead of 6 Bonferroni
    would pass them too (5 * chi2.sf(7, 1) = 0.041), and with 1 question at rank 2 instead of 2 nDCG@10's step
    (4 * 0.0123 = 0.049) would sit too close to 0.05 to pin the rule. All five worse; kills Holm replaced by Bonferroni (only
    Success@1 and nDCG@10 worse)."""
    rungs = ladder(tmp_path / "w.duckdb", [1] * N, [0] * 6 + [2] * 2 + [1] * (N - 8))
    fam = family(rungs)
    p_s1, p_lost6, p_ndcg = mcnemar_p(0, 8), mcnemar_p(0, 6), graded_p([-1.0] * 6 + [-G] * 2 + [0.0] * (N - 8))
    assert p_s1 < p_ndcg < p_lost6 and 0.01 <= p_lost6 < 0.05 / 3
    assert [fam[k]["p_value"] for k in fam] == approx([p_s1, p_lost6, p_lost6, p_lost6, p_ndcg])
    holm_3 = max(5 * p_s1, 4 * p_ndcg, 3 * p_lost6)
    assert [fam[k]["p_holm"] for k in fam] == approx([5 * p_s1, holm_3, holm_3, holm_3, max(5 * p_s1, 4 * p_ndcg)])
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code) == ("worse", 0)
    assert [w.split(" -")[0] for w in v.worse] == ["Success@1 (doc)", "Success@3 (doc)", "Success@10 (chunk)",
                                                   "R@10 (chunk)", "nDCG@10 (chunk)"]
