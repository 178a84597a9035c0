"""The minimum detectable change (assay.verdicts.power) against independent power computations: scipy's noncentral
t (the paired t-test's exact power), a seeded simulation of the t-test, and a seeded simulation of the exact
McNemar test assay runs on 0/1 measures."""

import math

import numpy as np
import pytest
from scipy import stats

from assay.verdicts.power import minimum_detectable_change, paired_mdc, sample_sd


def t_test_power(delta: float, sd: float, n: int, alpha: float, sides: int) -> float:
    """The exact power of the one-sample t-test of the changes (scipy's noncentral t)."""
    df, nc = n - 1, delta * math.sqrt(n) / sd
    crit = stats.t.ppf(1 - alpha / sides, df)
    upper = stats.nct.sf(crit, df, nc)
    return upper + (stats.nct.cdf(-crit, df, nc) if sides == 2 else 0.0)


# every n the score test can reach at that alpha (below it: test_too_few_questions_have_no_mdc)
CASES = [(n, alpha, sides, floor) for n in (6, 8, 10, 20, 56, 200, 1000)
         for alpha, sides, floor in ((0.05, 2, 0.79), (0.01, 2, 0.76), (0.05, 1, 0.79), (0.0125, 1, 0.77))
         if sides * stats.norm.sf(math.sqrt(n)) < alpha]


@pytest.mark.parametrize("n,alpha,sides,floor", CASES)
def test_the_t_test_finds_a_change_of_the_mdc_80_percent_of_the_time(n, alpha, sides, floor):
    sd = 0.3
    found = minimum_detectable_change(sd, n, alpha, sides=sides)
    power = t_test_power(found["mdc"], sd, n, alpha, sides)
    assert floor <= power <= 0.81
    if n >= 20:
        assert power == pytest.approx(0.80, abs=0.01)
    # and a change 20% smaller is found clearly less often: the MDC is not a loose upper bound
    assert t_test_power(0.8 * found["mdc"], sd, n, alpha, sides) < 0.67


def test_the_mdc_scales_with_the_spread_and_the_root_of_n():
    base = minimum_detectable_change(0.2, 100)["mdc"]
    assert minimum_detectable_change(0.4, 100)["mdc"] == pytest.approx(2 * base)
    # four times the questions: half the MDC, up to the t quantiles moving with df
    assert minimum_detectable_change(0.2, 400)["mdc"] == pytest.approx(base / 2, rel=0.01)
    # normal quantiles in the large-n limit: (1.95996 + 0.84162) * sd / sqrt(n)
    assert minimum_detectable_change(1.0, 10 ** 6)["mdc"] == pytest.approx((1.959964 + 0.841621) / 1000, rel=1e-5)


def test_a_seeded_simulation_of_the_t_test_agrees():
    rng = np.random.default_rng(20261202)
    n, sd = 30, 0.25
    mdc = minimum_detectable_change(sd, n)["mdc"]
    draws = rng.normal(mdc, sd, size=(4000, n))
    rejected = stats.ttest_1samp(draws, 0.0, axis=1).pvalue < 0.05
    assert rejected.mean() == pytest.approx(0.80, abs=0.02)  # 4000 draws: standard error 0.0063


def test_for_0_1_measures_the_mdc_reads_the_discordant_pairs_and_mcnemar_finds_it():
    """b won, c lost of n: sd**2 = n/(n-1) ((b+c)/n - ((b-c)/n)**2). Simulating McNemar's test (no continuity
    correction: scipy's chi-square tail of (b - c)**2 / (b + c), which assay.verdicts.inference equals:
    test_inference) at a true change of the MDC, with the discordant share held, finds it about 80% of the time
    (a discrete test: 0.74 to 0.86 here)."""
    n, won, lost = 200, 30, 20
    before = [0] * won + [1] * lost + [0] * (n - won - lost)
    after = [1] * won + [0] * lost + [0] * (n - won - lost)
    found = paired_mdc(before, after)
    share, net = (won + lost) / n, (won - lost) / n
    assert found["sd"] == pytest.approx(math.sqrt(n / (n - 1) * (share - net ** 2)))
    mdc = found["mdc"]
    rng = np.random.default_rng(7)
    # a true change of +mdc with the same discordant share: P(win) - P(loss) = mdc
    p_win, p_loss = (share + mdc) / 2, (share - mdc) / 2
    hits = 0
    trials = 1500
    for _ in range(trials):
        wins, losses, _ = rng.multinomial(n, [p_win, p_loss, 1 - p_win - p_loss])
        hits += wins + losses > 0 and stats.chi2.sf((wins - losses) ** 2 / (wins + losses), 1) < 0.05
    assert 0.74 <= hits / trials <= 0.86


def test_too_few_questions_have_no_mdc():
    one = minimum_detectable_change(0.3, 1)
    assert one["mdc"] is None and "one question" in one["reason"]
    # every question changing the same way gives Z = sqrt(n): two-sided at 0.05 the smallest p is
    # 2 * (1 - Phi(sqrt(n))): 0.083 at n = 3, 0.046 at n = 4
    assert 2 * stats.norm.sf(math.sqrt(3)) > 0.05 > 2 * stats.norm.sf(2.0)
    three = minimum_detectable_change(0.3, 3)
    assert three["mdc"] is None and "cannot reach p < 0.05" in three["reason"]
    assert minimum_detectable_change(0.3, 4)["mdc"] is not None
    assert minimum_detectable_change(0.3, 3, sides=1)["mdc"] is not None  # one-sided: 1 - Phi(sqrt(3)) = 0.042
    assert minimum_detectable_change(0.3, 2, sides=1)["mdc"] is None  # 1 - Phi(sqrt(2)) = 0.079


def test_changes_that_do_not_vary_give_no_mdc():
    flat = paired_mdc([0.5] * 10, [0.5] * 10)
    assert flat["mdc"] is None and flat["sd"] == 0.0 and "do not vary" in flat["reason"]
    shifted = paired_mdc([0.2] * 10, [0.3] * 10)  # the same change at every question: no spread either
    assert shifted["mdc"] is None


def test_sample_sd_is_numpys_with_one_degree_of_freedom_removed():
    values = [0.1, 0.4, 0.4, 0.9, 0.0]
    assert sample_sd(values) == pytest.approx(float(np.std(values, ddof=1)))
    assert sample_sd([0.3]) is None


def test_arguments_out_of_range_are_refused():
    with pytest.raises(ValueError):
        minimum_detectable_change(0.1, 10, sides=3)
    with pytest.raises(ValueError):
        minimum_detectable_change(0.1, 10, alpha=0.0)
