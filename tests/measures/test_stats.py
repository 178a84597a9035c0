import math
import sys
import types

import numpy as np
import pytest
import reference_stats as ref

from assay.measures.stats import bootstrap_mean, interval, paired_bootstrap_delta, wilson
from assay.measures import stats


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


# Every interval held, float for float, to the verbatim pre-speed-work code in
# tests/measures/reference_stats.py, on small samples built to reach each branch (ties, point masses, flat
# rows, n = 1 and 2, values just outside [0, 1], the same and different seeds side by side); the helpers
# (Wilson, resampling weights and their cache, row quantiles, the scipy ufunc loader) pinned to independent
# computations, error messages exactly.


SAMPLES = [
    [0.0, 0.2, 0.5, 0.9, 1.0, 0.3, 0.7, 0.1],
    [1.0, 1.0, 1.0, 0.95, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.05],
    [0.0, 1.0],
    [0.25, 0.75, 0.75],
    [0.0, 0.0, 1.0, 1.0, 1.0, 0.5],
    [0.9, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1],
    [0.02, 0.01, 0.0, 0.9, 0.03, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [0.13, 0.42, 0.58, 0.91, 0.27, 0.66, 0.05, 0.77, 0.34],
]


SPREAD = SAMPLES[-1]  # 1000 and 1001 resamples give different intervals (SAMPLES[0] gives the same)


def _wilson_closed_form(k, n, z=stats.Z95, continuity=True):
    """Newcombe's method 4 (continuity-corrected score interval) written out independently."""
    c = 0.5 if continuity else 0.0

    def bound(p, sign):
        p = min(max(p, 0.0), 1.0)
        val = (p + z * z / (2 * n) + sign * z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n)
        return min(max(val, 0.0), 1.0)

    low = bound((k - c) / n, -1) if k - c > 0 else 0.0
    high = bound((k + c) / n, 1) if k + c < n else 1.0
    return low, high


@pytest.mark.parametrize("n", [0, -1])
def test_wilson_refuses_no_observations(n):
    """wilson refuses n < 1 with its message.

    Kills x_wilson__mutmut_1..6 (n <= 0 -> < 0 / <= 1, message None / XX / upper case)."""
    with pytest.raises(ValueError) as err:
        stats.wilson(1, n)
    assert str(err.value) == "no observations"


def test_wilson_one_observation_is_allowed():
    """wilson of one observation is Newcombe's interval, not an error.

    Kills x_wilson__mutmut (n <= 0 -> n <= 1): n = 1 gives Newcombe's interval, not an error."""
    assert stats.wilson(1, 1) == pytest.approx(_wilson_closed_form(1, 1), abs=1e-15)
    low, high = ref._wilson(np.array([0.0]), 1, stats.Z95)
    assert stats.wilson(0, 1) == (float(low[0]), float(high[0]))


@pytest.mark.parametrize("n", [1, 2, 3, 10, 29, 148])
@pytest.mark.parametrize("continuity", [True, False])
def test_wilson_every_count_bit_for_bit(n, continuity):
    """wilson equals the reference bit for bit for every count of n, with and without continuity correction.

    Kills x_wilson__mutmut_* and x__wilson_one__mutmut_* (shift 0.5, z*z/n, /(2n), 4n*n, sign, clipping, the
    `> 0` / `< n` branches at successes = shift and successes + shift = n, defaults z and continuity): each
    count and half-count out of n equals the reference array code bit for bit and the closed form to 1e-15."""
    counts = [k / 2 for k in range(2 * n + 1)]
    ref_low, ref_high = ref._wilson(np.array(counts), n, stats.Z95, continuity)
    for k, lo, hi in zip(counts, ref_low, ref_high):
        got = stats.wilson(k, n, continuity=continuity)
        assert got == (float(lo), float(hi))
        assert got == pytest.approx(_wilson_closed_form(k, n, continuity=continuity), abs=1e-15)
        assert stats._wilson_one(k, n, stats.Z95, continuity) == got
        arr_low, arr_high = stats._wilson(np.array([k]), n, stats.Z95, continuity)
        assert (float(arr_low[0]), float(arr_high[0])) == got
    if continuity == (n < stats.PLAIN_FROM):  # the default: corrected below 25 observations, plain from 25 on
        assert [stats.wilson(k, n) for k in counts] == [stats.wilson(k, n, stats.Z95, continuity) for k in counts]
    if continuity:
        assert [stats._wilson_one(k, n, stats.Z95) for k in counts] == [stats.wilson(k, n, continuity=True)
                                                                        for k in counts]
        low, high = stats._wilson(np.array(counts), n, stats.Z95)
        assert (low.tolist(), high.tolist()) == (ref_low.tolist(), ref_high.tolist())


def test_wilson_other_z_and_known_values():
    """wilson at other z and at known values against the closed form.

    Kills mutants of z's use (z*z vs z+z / z/z, the z default): z = 1 and 2.5 against the closed form, and
    Newcombe (1998) table II values to 4 places."""
    for z in (1.0, 2.5):
        for k, n in ((0, 5), (2, 5), (5, 5), (3, 7)):
            assert stats.wilson(k, n, z=z) == pytest.approx(_wilson_closed_form(k, n, z=z), abs=1e-15)
            assert stats.wilson(k, n, z, False) == pytest.approx(_wilson_closed_form(k, n, z, False), abs=1e-15)
    assert stats.wilson(15, 148, continuity=True) == pytest.approx((0.0598, 0.1644), abs=5e-5)
    assert stats.wilson(1, 29, continuity=True) == pytest.approx((0.0018, 0.1963), abs=5e-5)
    assert stats.wilson(0, 20) == (0.0, pytest.approx(0.2005, abs=5e-5))
    assert stats.wilson(20, 20) == (pytest.approx(1 - 0.2005, abs=5e-5), 1.0)


@pytest.mark.parametrize("values", SAMPLES)
@pytest.mark.parametrize("seed", [0, 7])
def test_bootstrap_mean_equals_the_reference(values, seed):
    """bootstrap_mean equals the reference float for float, at the sample count given and the default.

    Kills x_bootstrap_mean__mutmut_*, x__graded__mutmut_*, x__rows_times__mutmut_*, x__row_quantiles__mutmut_*,
    x__weights__mutmut_* and x_resample_weights__mutmut_* that change any figure: the interval equals the reference
    (pre-speed-work code) float for float at 200 resamples and at the default 1000."""
    assert stats.bootstrap_mean(values, seed=seed, samples=200) == ref.bootstrap_mean(values, seed=seed, samples=200)
    assert stats.bootstrap_mean(values, seed) == ref.bootstrap_mean(values, seed=seed, samples=1000)


def test_bootstrap_mean_known_values():
    """bootstrap_mean at pinned seed-0 values.

    Kills the same mutants as above against fixed numbers (tests/measures/test_stats.py's pinned seed-0 interval)."""
    values = [0.0, 0.2, 0.5, 0.9, 1.0, 0.3, 0.7, 0.1]
    assert stats.bootstrap_mean(values, seed=0) == pytest.approx((0.1640865589445198, 0.8014331496867984),
                                                                 rel=1e-12, abs=1e-12)
    assert stats.bootstrap_mean(values, seed=1) == pytest.approx((0.175, 0.8014331496867984), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("values", [[0.4], [1.0], [0.0], [0.3] * 7, [1.0] * 4, [0.0] * 2])
def test_bootstrap_mean_without_spread_is_the_widening(values):
    """bootstrap_mean of values without spread is the documented widening.

    Kills x__graded__mutmut_* on the flat path (unseen = wilson(0, n)[1], mean (1 - u), mean + (1 - mean) u,
    `n == 1 or flat.all()`): the exact closed form."""
    n, v = len(values), values[0]
    u = stats.wilson(0, n)[1]
    assert u == pytest.approx(_wilson_closed_form(0, n)[1], abs=1e-15)
    assert stats.bootstrap_mean(values, seed=3, samples=50) == (v * (1 - u), v + (1 - v) * u)
    assert stats.bootstrap_mean(values, seed=3, samples=50) == ref.bootstrap_mean(values, seed=3, samples=50)


def test_unit_values_bounds_and_messages():
    """Values outside [0, 1] (beyond rounding) and empty samples are refused with their messages.

    Kills x__unit_values__mutmut_* (size == 0, the -1e-9 / 1 + 1e-9 tolerance and its comparisons, & vs |, the
    messages, clip bounds, ravel): values within 1e-9 outside [0, 1] are clipped in, further ones refused."""
    assert stats._unit_values([-1e-9, 1 + 1e-9, 0.5]).tolist() == [0.0, 1.0, 0.5]
    assert stats._unit_values([[0.25], [0.75]]).tolist() == [0.25, 0.75]
    assert stats._unit_values(["0.5", 1]).tolist() == [0.5, 1.0]
    for bad in ([-2e-9], [1 + 2e-9], [0.5, -0.5], [2.0, 0.5], [-1.0, 2.0]):
        with pytest.raises(ValueError) as err:
            stats._unit_values(bad)
        assert str(err.value) == "values must lie in [0, 1] (the worst case assumes bounded values)"
    for empty in ([], [[]]):
        with pytest.raises(ValueError) as err:
            stats._unit_values(empty)
        assert str(err.value) == "no observations"
    with pytest.raises(ValueError) as err:
        stats.bootstrap_mean([], seed=0)
    assert str(err.value) == "no observations"
    # clipped before the bootstrap: a value 1e-10 past 1 is the value 1
    assert stats.bootstrap_mean([1 + 1e-10, 0.5, 0.0], seed=2, samples=100) == \
        stats.bootstrap_mean([1.0, 0.5, 0.0], seed=2, samples=100)


@pytest.mark.parametrize("before, after", [
    ([0.0, 0.5, 1.0, 0.25, 0.75], [0.5, 0.5, 0.75, 1.0, 0.0]),
    ([1, 1, 0, 0, 1, 0], [1, 0, 1, 1, 1, 0]),
    ([0.3, 0.3, 0.3], [0.3, 0.3, 0.3]),
    ([0.2], [0.9]),
])
def test_paired_delta_equals_the_reference(before, after):
    """paired_bootstrap_delta(s) equal the reference float for float, in either order.

    Kills x_paired_bootstrap_delta__mutmut_* and x_paired_bootstrap_deltas__mutmut_* that change figures (the
    (d + 1) / 2 map and 2 x - 1 back, samples passed on, the default 1000): equal to the reference for each pair and
    each pair of a batch."""
    for samples in (150, 1000):
        want = ref.paired_bootstrap_delta(before, after, seed=4, samples=samples)
        assert stats.paired_bootstrap_delta(before, after, seed=4, samples=samples) == want
        assert stats.paired_bootstrap_deltas([(before, after), (after, before)], seed=4, samples=samples) == [
            want, ref.paired_bootstrap_delta(after, before, seed=4, samples=samples)]
    assert stats.paired_bootstrap_delta(before, after, 4) == ref.paired_bootstrap_delta(before, after, 4)
    assert stats.paired_bootstrap_delta(SPREAD, SPREAD[::-1], 5) == ref.paired_bootstrap_delta(SPREAD, SPREAD[::-1], 5)
    assert stats.paired_bootstrap_deltas([(SPREAD, SPREAD[::-1])], 5) == [
        ref.paired_bootstrap_delta(SPREAD, SPREAD[::-1], 5)]
    assert stats.paired_bootstrap_deltas([(before, after)], 4) == [ref.paired_bootstrap_delta(before, after, 4)]


def test_paired_deltas_take_strings_as_numbers():
    """paired_bootstrap_delta(s) take numbers written as strings.

    Kills x_paired_bootstrap_delta__mutmut_4/6/8/10 and x_paired_bootstrap_deltas__mutmut_5/7/9/11 (dtype=float
    dropped or None on before or after): values given as strings convert as floats; without dtype=float a string
    array minus a float array raises."""
    before, after = ["0", "0.5", "1", "0.25"], ["0.5", "0.5", "0.75", "1"]
    b, a = [0.0, 0.5, 1.0, 0.25], [0.5, 0.5, 0.75, 1.0]
    want = ref.paired_bootstrap_delta(b, a, seed=1, samples=100)
    assert stats.paired_bootstrap_delta(before, a, seed=1, samples=100) == want
    assert stats.paired_bootstrap_delta(b, after, seed=1, samples=100) == want
    assert stats.paired_bootstrap_deltas([(before, a)], seed=1, samples=100) == [want]
    assert stats.paired_bootstrap_deltas([(b, after)], seed=1, samples=100) == [want]


def test_paired_deltas_refuse_unequal_lengths():
    """paired_bootstrap_delta(s) refuse samples of unequal lengths with their message.

    Kills the message and shape-check mutants of paired_bootstrap_delta and paired_bootstrap_deltas."""
    with pytest.raises(ValueError) as err:
        stats.paired_bootstrap_delta([0.1, 0.2, 0.3], [0.1, 0.2], seed=0)
    assert str(err.value) == "paired values differ in length: 3 before, 2 after"
    with pytest.raises(ValueError) as err:
        stats.paired_bootstrap_deltas([([0.1, 0.2], [0.1, 0.2]), ([0.5], [0.1, 0.2, 0.3, 0.4])], seed=0)
    assert str(err.value) == "paired values differ in length: 1 before, 4 after"


def test_interval_dispatches_and_passes_samples():
    """interval dispatches on the interval kind and passes the sample count on (1000 by default).

    Kills x_interval__mutmut_1 (default samples 1001), x_interval__mutmut_18 (samples not passed on) and the
    kind / message mutants: each kind's exact figures, the unknown kind's exact message."""
    values = SPREAD
    assert stats.interval([1, 0, 1, 1], "wilson", 0) == stats.wilson(3, 4)
    assert stats.wilson(3, 4) == pytest.approx(_wilson_closed_form(3, 4), abs=1e-15)
    assert stats.interval(values, "bootstrap", 5, 120) == ref.bootstrap_mean(values, seed=5, samples=120)
    assert stats.interval(values, "bootstrap", 5) == ref.bootstrap_mean(values, seed=5, samples=1000)
    with pytest.raises(ValueError) as err:
        stats.interval(values, "normal", 0)
    assert str(err.value) == "unknown interval kind 'normal': 'wilson' or 'bootstrap'"
    with pytest.raises(ValueError) as err:
        stats.intervals([values], "Bootstrap", [0])
    assert str(err.value) == "unknown interval kind 'Bootstrap': 'wilson' or 'bootstrap'"


def test_intervals_group_rows_as_single_calls():
    """intervals groups rows and gives what one call per row gives.

    Kills x_intervals__mutmut_* (grouping key (seed, n), flat / n = 1 / non-int seed rows taken alone, output
    order, samples passed on and its default): each row equals the reference call for it alone."""
    rows = SAMPLES + [[0.5] * 8, [0.7], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], [0.3, 0.6]]
    seeds = [1, 2, 1, 1, np.int64(2), 1, 2, 1, 5, 1, 2, 1, 3]
    for samples in (130, None):
        kwargs = {} if samples is None else {"samples": samples}
        got = stats.intervals(iter(rows), "bootstrap", iter(seeds), **kwargs)
        assert got == [ref.bootstrap_mean(r, seed=int(s), samples=samples or 1000) for r, s in zip(rows, seeds)]
    # a Generator in place of a seed: that row alone, drawing from the generator
    gen_row = SPREAD
    got = stats.intervals([gen_row, SAMPLES[4]], "bootstrap", [np.random.default_rng(9), 9], 90)
    assert got == [ref.bootstrap_mean(gen_row, seed=np.random.default_rng(9), samples=90),
                   ref.bootstrap_mean(SAMPLES[4], seed=9, samples=90)]
    assert stats.intervals([[1, 0, 1], [0, 0]], "wilson", [0, 0]) == [stats.wilson(2, 3), stats.wilson(0, 2)]


def test_graded_rows_together_and_generator():
    """Graded rows computed together give each row's own interval, from a seed or a generator.

    Kills x__graded__mutmut_* and x__rows_times__mutmut_* on several rows (row-by-row products, np.where(flat)),
    the Generator path and the alpha default: rows together equal each row alone, a flat row among them its widening."""
    data = np.array([SAMPLES[0], [0.5] * 8, [1, 1, 1, 1, 1, 1, 1, 0.9]], dtype=float)
    low, high = stats._graded(data, 6, 140)
    for row, lo, hi in zip(data, low, high):
        assert (float(lo), float(hi)) == ref.bootstrap_mean(row, seed=6, samples=140)
    low2, high2 = stats._graded(data, np.random.default_rng(6), 140, stats.ALPHA)
    assert low2.tolist() == low.tolist() and high2.tolist() == high.tolist()
    wide = stats._graded(data[:1], 6, 140, 0.5)
    assert wide[0][0] > low[0] and wide[1][0] < high[0]
    assert (float(wide[0][0]), float(wide[1][0])) == (float(ref._graded(data[:1], np.random.default_rng(6), 140, 0.5)[0][0]),
                                                      float(ref._graded(data[:1], np.random.default_rng(6), 140, 0.5)[1][0]))


def test_each_row_times_the_resampling_matrix_is_exact():
    """Each row times the resampling matrix is exactly rows[i] @ matrix.

    Kills x__rows_times__mutmut_*: one row or several, each row's product exactly rows[i] @ matrix."""
    rng = np.random.default_rng(0)
    rows, matrix = rng.random((3, 5)), rng.random((5, 4))
    got = stats._rows_times(rows, matrix)
    assert got.shape == (3, 4)
    for i in range(3):
        assert got[i].tolist() == (rows[i:i + 1] @ matrix)[0].tolist()
    assert stats._rows_times(rows[:1], matrix).tolist() == (rows[:1] @ matrix).tolist()


def test_weights_are_counts_over_n():
    """The resampling weights are draw counts over n.

    Kills x__weights__mutmut_*: column j counts how often each question is drawn in resample j of
    rng.integers(0, n, (samples, n)), divided by n."""
    n, samples = 4, 6
    idx = np.random.default_rng(11).integers(0, n, size=(samples, n))
    want = np.zeros((n, samples))
    for j in range(samples):
        for i in idx[j]:
            want[i, j] += 1
    got = stats._weights(np.random.default_rng(11), n, samples)
    assert got.shape == (n, samples) and got.tolist() == (want / n).tolist()
    assert got.sum(axis=0).tolist() == [1.0] * samples


def test_resample_weights_are_the_seeds_read_only_and_cached(monkeypatch):
    """resample_weights are those of default_rng(seed), read-only, and cached.

    Kills x_resample_weights__mutmut_*: the weights of default_rng(seed), read-only, the same array again
    (kept), the least recently used dropped past _KEPT_BYTES, one larger than _KEPT_BYTES returned but not kept."""
    monkeypatch.setattr(stats, "_kept", {})
    a = stats.resample_weights(21, 5, 10)
    assert a.tolist() == stats._weights(np.random.default_rng(21), 5, 10).tolist()
    assert not a.flags.writeable
    assert stats.resample_weights(21, 5, 10) is a
    assert list(stats._kept) == [(21, 5, 10)]
    monkeypatch.setattr(stats, "_KEPT_BYTES", 2 * a.nbytes)  # room for two of 400 bytes
    b = stats.resample_weights(22, 5, 10)
    assert list(stats._kept) == [(21, 5, 10), (22, 5, 10)]
    assert stats.resample_weights(21, 5, 10) is a  # used again: now the most recent
    assert list(stats._kept) == [(22, 5, 10), (21, 5, 10)]
    c = stats.resample_weights(23, 5, 10)  # drops 22, the least recently used
    assert list(stats._kept) == [(21, 5, 10), (23, 5, 10)]
    assert stats._kept[(23, 5, 10)] is c and not c.flags.writeable
    assert stats.resample_weights(22, 5, 10) is not b
    assert list(stats._kept) == [(23, 5, 10), (22, 5, 10)]
    big = stats.resample_weights(24, 5, 30)  # 1200 bytes > 800: returned, not kept, nothing dropped
    assert big.tolist() == stats._weights(np.random.default_rng(24), 5, 30).tolist() and not big.flags.writeable
    assert list(stats._kept) == [(23, 5, 10), (22, 5, 10)]
    monkeypatch.setattr(stats, "_KEPT_BYTES", a.nbytes)  # exactly one fits
    stats.resample_weights(25, 5, 10)
    assert list(stats._kept) == [(25, 5, 10)]
    assert stats._KEPT_BYTES == a.nbytes


def test_resampling_weights_are_kept_up_to_256_mib():
    """The resampling weights kept in memory are bounded at 256 MiB.

    Kills the _KEPT_BYTES constant mutants (not a function: mutmut leaves it; pinned for the record)."""
    assert stats._KEPT_BYTES == 256 * 1024 * 1024


@pytest.mark.parametrize("q", [0.0, 0.025, 0.3, 0.5, 0.975, 1.0, 1 / 3])
def test_row_quantiles_equal_numpy(q):
    """Row quantiles equal numpy.quantile's linear interpolation.

    Kills x__row_quantiles__mutmut_*: numpy.quantile's linear interpolation, per row and broadcast, ends included."""
    ordered = np.sort(np.random.default_rng(2).random((3, 7)), axis=1)
    got = stats._row_quantiles(ordered, q)
    assert got.tolist() == pytest.approx([np.quantile(r, q) for r in ordered], abs=1e-15)
    per_row = stats._row_quantiles(ordered, [q, 0.0, 1.0])
    assert per_row.tolist() == pytest.approx([np.quantile(ordered[0], q), ordered[1, 0], ordered[2, -1]], abs=1e-15)
    one = stats._row_quantiles(np.array([[0.25]]), q)
    assert one.tolist() == [0.25]


def test_normal_and_t_are_scipy_specials(monkeypatch):
    """The normal and t functions are scipy.special's ndtr, ndtri and stdtrit.

    Kills x__normal_and_t__mutmut_*: ndtr, ndtri, stdtrit in that order, from scipy.special, from
    scipy.special._ufuncs alone, or (neither loaded) through _bare_ufuncs."""
    import scipy.special as sp
    import scipy.special._ufuncs as uf

    assert stats._normal_and_t() == (sp.ndtr, sp.ndtri, sp.stdtrit)
    ndtr, ndtri, stdtrit = stats._normal_and_t()
    assert ndtr(0.0) == 0.5 and ndtri(0.975) == pytest.approx(stats.Z95, abs=1e-15)
    assert stdtrit(3, 0.975) == pytest.approx(3.182446305284263, abs=1e-12)
    monkeypatch.delitem(sys.modules, "scipy.special")
    assert stats._normal_and_t() == (uf.ndtr, uf.ndtri, uf.stdtrit)
    monkeypatch.delitem(sys.modules, "scipy.special._ufuncs")
    monkeypatch.setitem(sys.modules, "scipy.special._ufuncs", uf)


def test_bare_ufuncs_loads_and_removes_stand_ins(monkeypatch):
    """_bare_ufuncs loads scipy's compiled functions without scipy and removes its stand-ins.

    Kills x__bare_ufuncs__mutmut_* that break the stand-ins or leave them behind: with scipy, scipy._lib and
    scipy.special not imported, _bare_ufuncs returns scipy.special._ufuncs and the three names are gone afterwards;
    a package already imported is left as it was."""
    import scipy
    import scipy.special._ufuncs as uf

    for name in ("scipy", "scipy._lib", "scipy.special"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    seen = {}
    real_import = stats.__dict__.get("importlib")  # noqa: F841 (stats imports importlib inside the function)
    import importlib

    original = importlib.import_module

    def spy(name, *args):
        seen.update({n: sys.modules.get(n) for n in ("scipy", "scipy._lib", "scipy.special")})
        return original(name, *args)

    monkeypatch.setattr(importlib, "import_module", spy)
    assert stats._bare_ufuncs() is uf
    assert [n for n in ("scipy", "scipy._lib", "scipy.special") if n in sys.modules] == []
    for name, module in seen.items():
        assert module is not None and module.__name__ == name
        assert module.__spec__.name == name
        assert module.__path__ == list(module.__spec__.submodule_search_locations)
    # scipy itself loaded: kept, the other two stood in for and removed
    monkeypatch.setitem(sys.modules, "scipy", scipy)
    seen.clear()
    assert stats._bare_ufuncs() is uf
    assert seen["scipy"] is scipy and seen["scipy._lib"] is not None and seen["scipy.special"] is not None
    assert sys.modules["scipy"] is scipy
    assert "scipy._lib" not in sys.modules and "scipy.special" not in sys.modules
    # a stand-in replaced while loading (by the real package) stays
    real = type(sys)("scipy.special")

    def replacing(name, *args):
        sys.modules["scipy.special"] = real
        return original(name, *args)

    monkeypatch.setattr(importlib, "import_module", replacing)
    assert stats._bare_ufuncs() is uf
    assert sys.modules["scipy.special"] is real and "scipy._lib" not in sys.modules
    monkeypatch.delitem(sys.modules, "scipy.special")


# where the normal and t functions come from (a module already loaded is used as it is; _bare_ufuncs only
# when none is), the bias correction's clip with few resamples, the paired bootstrap's default sample count


def _fake(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.ndtr, module.ndtri, module.stdtrit = (object() for _ in range(3))
    return module


@pytest.fixture
def bare(monkeypatch):
    """_bare_ufuncs replaced by a spy returning a module of its own: which path _normal_and_t took shows."""
    module, calls = _fake("bare"), []

    def spy():
        calls.append(1)
        return module

    monkeypatch.setattr(stats, "_bare_ufuncs", spy)
    return module, calls


def test_a_loaded_scipy_special_is_used_as_it_is(monkeypatch, bare):
    """A scipy.special already loaded is used as it is.

    Kills x__normal_and_t__mutmut_1..5 and _9: with scipy.special in sys.modules, its own three functions are
    returned and _bare_ufuncs is not called."""
    special = _fake("scipy.special")
    monkeypatch.setitem(sys.modules, "scipy.special", special)
    assert stats._normal_and_t() == (special.ndtr, special.ndtri, special.stdtrit)
    assert bare[1] == []


def test_the_compiled_module_alone_is_used_as_it_is(monkeypatch, bare):
    """scipy.special._ufuncs loaded alone is used as it is.

    Kills x__normal_and_t__mutmut_6..8: with only scipy.special._ufuncs loaded, its functions are returned
    without a call to _bare_ufuncs."""
    monkeypatch.delitem(sys.modules, "scipy.special", raising=False)
    ufuncs = _fake("scipy.special._ufuncs")
    monkeypatch.setitem(sys.modules, "scipy.special._ufuncs", ufuncs)
    assert stats._normal_and_t() == (ufuncs.ndtr, ufuncs.ndtri, ufuncs.stdtrit)
    assert bare[1] == []


def test_with_neither_loaded_the_bare_loader_is_used(monkeypatch, bare):
    """With neither module loaded, _bare_ufuncs is called once and its functions returned."""
    monkeypatch.delitem(sys.modules, "scipy.special", raising=False)
    monkeypatch.delitem(sys.modules, "scipy.special._ufuncs", raising=False)
    module, calls = bare
    assert stats._normal_and_t() == (module.ndtr, module.ndtri, module.stdtrit)
    assert calls == [1]


@pytest.mark.parametrize("values, seed, samples", [
    ([0.0, 0.5, 1.0], 50, 3),  # every resample above the mean: the share 0, clipped up to 0.5 / samples
    ([0.0, 0.5, 1.0], 34, 3),  # every resample below it: the share 1, clipped down to 1 - 0.5 / samples
    ([1.0, 0.0, 1.0, 1.0], 4, 5),
    ([0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0], 5, 5),
])
def test_few_resamples_clip_the_bias_correction_as_the_reference_does(values, seed, samples):
    """With few resamples the bias correction is clipped as the reference clips it.

    Kills x__graded__mutmut_98, _99, _117, _118, _119 and _121 (the clip of the share of resamples below the
    mean, at 0.5 / samples and 1 - 0.5 / samples, dropped or moved): with 3 or 5 resamples the share lands on or
    past a bound, and the interval is the reference's to the last bit."""
    got = stats.bootstrap_mean(values, seed=seed, samples=samples)
    assert got == ref.bootstrap_mean(values, seed=seed, samples=samples)
    assert stats.intervals([values], "bootstrap", [seed], samples) == [got]


def test_the_paired_bootstrap_draws_1000_resamples_unless_told():
    """paired_bootstrap_delta draws 1000 resamples unless told.

    Kills x_paired_bootstrap_delta__mutmut_1 (default 1000 -> 1001): the default interval is the one of 1,000
    resamples, which differs from 1,001's here."""
    rng = np.random.default_rng(7)
    before, after = rng.random(40), rng.random(40)
    default = stats.paired_bootstrap_delta(before, after, seed=3)
    assert default == stats.paired_bootstrap_delta(before, after, seed=3, samples=1000)
    assert default == ref.paired_bootstrap_delta(before, after, seed=3, samples=1000)
    assert default != stats.paired_bootstrap_delta(before, after, seed=3, samples=1001)
