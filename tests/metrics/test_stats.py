import numpy as np
import pytest

from assay.measures.stats import bootstrap_mean, interval, paired_bootstrap_delta, wilson


@pytest.mark.parametrize("k, n, low, high", [
    (0, 10, 0.0, 0.27753),
    (5, 10, 0.23659, 0.76341),
    (10, 10, 0.72247, 1.0),
    (81, 263, 0.25529, 0.36621),
])
def test_plain_wilson_known_values(k, n, low, high):
    lo, hi = wilson(k, n, continuity=False)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


@pytest.mark.parametrize("k, n, low, high", [
    # Newcombe (1998), Statistics in Medicine 17:857-872, table II, method 4 (score, continuity-corrected)
    (15, 148, 0.0598, 0.1644),
    (0, 20, 0.0, 0.2005),
    (1, 29, 0.0018, 0.1963),
])
def test_corrected_wilson_matches_newcombe(k, n, low, high):
    lo, hi = wilson(k, n, continuity=True)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_corrected_wilson_contains_plain_wilson():
    for n in (1, 4, 10, 56):
        for k in range(n + 1):
            (lo, hi), (plo, phi) = wilson(k, n, continuity=True), wilson(k, n, continuity=False)
            assert lo <= plo and phi <= hi


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [0.0, 0.2, 0.5, 0.9, 1.0, 0.3, 0.7, 0.1]
    a = bootstrap_mean(values, seed=0)
    assert a == bootstrap_mean(values, seed=0)
    # each seed's exact interval (not merely "seeds differ", which wrong implementations also satisfy);
    # 1e-12 allows only for another BLAS summing the resampled means in another order
    assert a == pytest.approx((0.1640865589445198, 0.8014331496867984), rel=1e-12, abs=1e-12)
    assert bootstrap_mean(values, seed=1) == pytest.approx((0.175, 0.8014331496867984), rel=1e-12, abs=1e-12)
    mean = sum(values) / len(values)
    assert a[0] < mean < a[1]


@pytest.mark.parametrize("values", [[0.0] * 5, [1.0] * 5, [0.5] * 5, [0.4], [1.0], [0.0], [0.3] * 999])
def test_no_spread_allows_an_unseen_share_of_questions_to_score_anything(values):
    n, v = len(values), values[0]
    unseen = wilson(0, n, continuity=True)[1]  # the 95% bound on a share never seen in n questions
    low, high = bootstrap_mean(values, seed=0)
    assert (low, high) == pytest.approx((v * (1 - unseen), v + (1 - v) * unseen))
    assert low < high


@pytest.mark.parametrize("n", [1, 4, 10, 56, 999])
def test_at_the_ceiling_and_floor_a_graded_interval_is_wilsons(n):
    # the continuity-corrected interval at every n: what a 0/1 measure gets below 25 questions, wider than its
    # plain Wilson from 25 on, so a graded measure at the ceiling is never narrower than a 0/1 one
    assert bootstrap_mean([1.0] * n, seed=0) == pytest.approx(wilson(n, n, continuity=True))
    assert bootstrap_mean([0.0] * n, seed=0) == pytest.approx(wilson(0, n, continuity=True))
    assert bootstrap_mean([1.0] * n, seed=0)[0] <= wilson(n, n)[0] + 1e-15


def test_the_issue_n4_all_ones_is_as_wide_as_success():
    low, high = bootstrap_mean([1.0] * 4, seed=0)
    assert (low, high) == pytest.approx(wilson(4, 4)) and high - low > 0.5


def test_a_few_large_values_do_not_blow_the_interval_past_the_worst_case():
    # span precision at a budget: 51 short quotes (~0.005) and 5 whole-document golds (~0.75)
    values = [0.005] * 51 + [0.74, 0.84, 0.16, 0.014, 0.75]
    low, high = bootstrap_mean(values, seed=0)
    worst = wilson(sum(values), len(values), continuity=True)
    assert worst[0] <= low < np.mean(values) < high <= worst[1] and high < 0.2


def test_near_ceiling_is_widened_by_a_share_of_unseen_zeros():
    # 9 ones and a 0.95: the bootstrap alone says [0.985, 1.0]; a share 2 / (n + 2) = 1/6 of questions could
    # score 0 unseen, so the interval reaches mean * (1 - 1/6) = 0.829. Narrower than 10 ones (Wilson's 10 of
    # 10, a 95% bound, 0.655), wide enough to hold a ceiling distribution's mean (bench/interval_coverage.py)
    low, high = bootstrap_mean([1.0] * 9 + [0.95], seed=0)
    assert high == 1.0 and low == pytest.approx(0.995 * (1 - 2 / 12), abs=1e-12)
    assert low > bootstrap_mean([1.0] * 10, seed=0)[0]


@pytest.mark.parametrize("seed", range(20))
def test_never_zero_width_below_1000(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 1000))
    values = rng.choice([0.0, 1.0, 0.5, rng.random()], size=n, p=[0.01, 0.97, 0.01, 0.01])
    low, high = bootstrap_mean(values, seed=seed)
    assert 0 <= low <= values.mean() <= high <= 1 and low < high
    low, high = paired_bootstrap_delta(values, values, seed=seed)
    assert low < 0 < high


def test_identical_runs_are_not_zero_width():
    low, high = paired_bootstrap_delta([0.3] * 56, [0.3] * 56, seed=0)
    unseen = wilson(0, 56, continuity=True)[1]
    assert (low, high) == pytest.approx((-unseen, unseen)) and 0 < high < 0.1


def test_paired_delta_maps_back_to_minus_one_one():
    before, after = [0.0, 0.2, 0.5, 0.1, 0.0], [1.0, 0.9, 0.5, 0.8, 1.0]
    low, high = paired_bootstrap_delta(before, after, seed=3)
    assert -1 <= low < np.mean(np.subtract(after, before)) < high <= 1
    assert (low, high) == paired_bootstrap_delta(before, after, seed=3)


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        bootstrap_mean([], seed=0)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        bootstrap_mean([0.5, 1.5], seed=0)
    with pytest.raises(ValueError, match="length"):
        paired_bootstrap_delta([0.1, 0.2], [0.3], seed=0)
    with pytest.raises(ValueError):
        wilson(0, 0)


def test_interval_dispatches_on_kind():
    values = [1.0, 0.0, 1.0, 1.0]
    assert interval(values, "wilson", seed=0) == wilson(3, 4)
    assert interval(values, "bootstrap", seed=0, samples=500) == bootstrap_mean(values, seed=0, samples=500)
    with pytest.raises(ValueError, match="wilson"):
        interval(values, "exact", seed=0)
