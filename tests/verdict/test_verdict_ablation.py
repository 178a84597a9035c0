"""The ablation's sanity check without rules, on data where its rule decides: "visibly worse" is a negative change
whose paired p-value, Holm-corrected over the ranking measures measured on the weakened rung, is below 0.05.

Runs with prescribed ranks (verdict_runs.py) stand for the baseline and the weakened rung, in a real warehouse,
measured and compared by assay.ablation's own steps. The baseline finds every question's relevant chunk at rank 1;
the weakened rung finds it at rank 2 on m of n questions. So Success@1 loses 1 and nDCG@10 loses
1 - 1/log2(3) on those m questions and nothing elsewhere, while Success@3, Success@10 and R@10 do not move: both
tests are exact with p = 2 * (1/2)**m (McNemar's for Success@1; the sign-flip test, whose only patterns with no
loss are the 2**(n-m) that flip none of the m, for nDCG@10), and the other three have p = 1. Holm over the 5:
the two smallest are multiplied by 5 (then 4, but monotone: the same). Each test names the hand mutation of
src/assay/ablation.py it catches; each was made and seen to fail.
"""

from __future__ import annotations

import math

import pytest

from assay import ablation
from assay.warehouse import Warehouse
from verdict_runs import write_ranks

N = 12


def ladder(path, base_ranks: list[int], weak_ranks: list[int]) -> list[ablation.Rung]:
    rungs = [ablation.Rung("base", "baseline"), ablation.Rung("weak", "weakened", weakened=True)]
    with Warehouse.open(path) as wh:
        for rung, ranks in zip(rungs, (base_ranks, weak_ranks)):
            rung.run_id = f"run-{rung.pipeline}"
            write_ranks(wh, rung.run_id, ranks)
            ablation.measure_rung(wh, rung, seed=0)
    ablation.measure_deltas(rungs[0], rungs[1], seed=0)
    return rungs


def family(rungs) -> dict:
    return {f"{m}:{lvl}": d for (m, lvl), d in ablation.sanity_family(rungs[1])}


def test_worse_before_holm_but_not_after_is_not_visibly_worse_exit_6(tmp_path):
    """m = 6: p = 2 / 2**6 = 0.03125 on Success@1 and nDCG@10, below 0.05; Holm over the 5 ranking measures:
    5 * 0.03125 = 0.15625. Not visibly worse: exit 6. Kills the check read from the raw p (or from the 95%
    interval, which excludes 0 exactly when the raw p < 0.05)."""
    rungs = ladder(tmp_path / "w.duckdb", [1] * N, [2] * 6 + [1] * (N - 6))
    fam = family(rungs)
    assert list(fam) == ["Success@1:doc", "Success@3:doc", "Success@10:chunk", "R@10:chunk", "nDCG@10:chunk"]
    assert fam["Success@1:doc"]["delta"] == -6 / N
    assert fam["nDCG@10:chunk"]["delta"] == pytest.approx(-6 * (1 - 1 / math.log2(3)) / N, abs=1e-12)
    assert [fam[k]["p_value"] for k in fam] == [0.03125, 1, 1, 1, 0.03125]
    assert [fam[k]["p_holm"] for k in fam] == [0.15625, 1, 1, 1, 0.15625]
    assert all(fam[k]["ci_high"] < 0 for k in ("Success@1:doc", "nDCG@10:chunk"))  # the raw intervals exclude 0
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code, v.worse) == ("not worse", 6, [])
    assert "Holm-corrected over the 5 ranking measure(s) measured on it, at 0.05" in v.message


def test_worse_after_holm_is_visibly_worse_exit_0(tmp_path):
    """m = 8: p = 2 / 2**8 = 0.0078125; Holm over 5: 0.0390625 < 0.05. Visibly worse on both: exit 0."""
    rungs = ladder(tmp_path / "w.duckdb", [1] * N, [2] * 8 + [1] * (N - 8))
    fam = family(rungs)
    assert [fam[k]["p_holm"] for k in fam] == [0.0390625, 1, 1, 1, 0.0390625]
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code) == ("worse", 0)
    assert [w.split(" [")[0] for w in v.worse] == ["Success@1 (doc) -0.667", "nDCG@10 (chunk) -0.246"]
    assert v.worse[0].endswith("p 0.008, Holm 0.039")


def test_a_weakened_rung_significantly_better_is_not_worse(tmp_path):
    """The baseline at rank 2 on 8 questions, the weakened rung at rank 1 everywhere: the same p-values as above,
    but the changes are gains. Kills the direction dropped from the check (a small p alone taken as 'worse')."""
    rungs = ladder(tmp_path / "w.duckdb", [2] * 8 + [1] * (N - 8), [1] * N)
    fam = family(rungs)
    assert fam["Success@1:doc"]["delta"] == 8 / N and fam["Success@1:doc"]["p_holm"] == 0.0390625
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code) == ("not worse", 6)


def test_holm_steps_down_where_bonferroni_would_not(tmp_path):
    """The weakened rung misses 7 questions altogether (rank 0) and finds 1 at rank 2: Success@1 and nDCG@10 fall
    on 8 (p = 2 / 2**8 = 0.0078125), Success@3, Success@10 and R@10 on 7 (p = 2 / 2**7 = 0.015625). Holm: 5 and
    4 times the first two (0.0390625), then 3, 2, 1 times the other three (0.046875, monotone): all five below
    0.05, all five worse. Kills Holm replaced by Bonferroni (5 * 0.015625 = 0.078: only two worse)."""
    rungs = ladder(tmp_path / "w.duckdb", [1] * N, [0] * 7 + [2] + [1] * (N - 8))
    fam = family(rungs)
    assert [fam[k]["p_value"] for k in fam] == [0.0078125, 0.015625, 0.015625, 0.015625, 0.0078125]
    assert [fam[k]["p_holm"] for k in fam] == [0.0390625, 0.046875, 0.046875, 0.046875, 0.0390625]
    v = ablation.verdict(rungs)
    assert (v.status, v.exit_code) == ("worse", 0)
    assert [w.split(" -")[0] for w in v.worse] == ["Success@1 (doc)", "Success@3 (doc)", "Success@10 (chunk)",
                                                   "R@10 (chunk)", "nDCG@10 (chunk)"]
