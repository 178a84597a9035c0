import pytest

from assay.metrics.stats import bootstrap_mean, wilson


@pytest.mark.parametrize("k, n, low, high", [
    (0, 10, 0.0, 0.27753),
    (5, 10, 0.23659, 0.76341),
    (10, 10, 0.72247, 1.0),
    (81, 263, 0.25529, 0.36621),
])
def test_wilson_known_values(k, n, low, high):
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=1e-4) and hi == pytest.approx(high, abs=1e-4)


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [0.0, 0.2, 0.5, 0.9, 1.0, 0.3, 0.7, 0.1]
    a = bootstrap_mean(values, seed=0)
    assert a == bootstrap_mean(values, seed=0)
    assert a != bootstrap_mean(values, seed=1)
    mean = sum(values) / len(values)
    assert a[0] < mean < a[1]


def test_bootstrap_degenerate_cases():
    assert bootstrap_mean([0.4], seed=0) == (0.4, 0.4)
    assert bootstrap_mean([1.0, 1.0, 1.0], seed=0) == (1.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_mean([], seed=0)
