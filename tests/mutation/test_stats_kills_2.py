"""Survivors of assay.measures.stats after the mutmut rerun of 2026-12-01: where the normal and t functions come
from (a module already loaded is used as it is; _bare_ufuncs only when none is), the bias correction's clip
with few resamples, and the paired bootstrap's default sample count. Intervals are held, float for float, to
the verbatim reference in tests/metrics/reference_stats.py."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

from assay.measures import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "metrics"))  # reference_stats (no __init__)
import reference_stats as ref  # noqa: E402


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
    """Kills x__normal_and_t__mutmut_1..5 and _9: with scipy.special in sys.modules, its own three functions are
    returned and _bare_ufuncs is not called."""
    special = _fake("scipy.special")
    monkeypatch.setitem(sys.modules, "scipy.special", special)
    assert stats._normal_and_t() == (special.ndtr, special.ndtri, special.stdtrit)
    assert bare[1] == []


def test_the_compiled_module_alone_is_used_as_it_is(monkeypatch, bare):
    """Kills x__normal_and_t__mutmut_6..8: with only scipy.special._ufuncs loaded, its functions are returned
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
    """Kills x__graded__mutmut_98, _99, _117, _118, _119 and _121 (the clip of the share of resamples below the
    mean, at 0.5 / samples and 1 - 0.5 / samples, dropped or moved): with 3 or 5 resamples the share lands on or
    past a bound, and the interval is the reference's to the last bit."""
    got = stats.bootstrap_mean(values, seed=seed, samples=samples)
    assert got == ref.bootstrap_mean(values, seed=seed, samples=samples)
    assert stats.intervals([values], "bootstrap", [seed], samples) == [got]


def test_the_paired_bootstrap_draws_1000_resamples_unless_told():
    """Kills x_paired_bootstrap_delta__mutmut_1 (default 1000 -> 1001): the default interval is the one of 1,000
    resamples, which differs from 1,001's here."""
    rng = np.random.default_rng(7)
    before, after = rng.random(40), rng.random(40)
    default = stats.paired_bootstrap_delta(before, after, seed=3)
    assert default == stats.paired_bootstrap_delta(before, after, seed=3, samples=1000)
    assert default == ref.paired_bootstrap_delta(before, after, seed=3, samples=1000)
    assert default != stats.paired_bootstrap_delta(before, after, seed=3, samples=1001)
