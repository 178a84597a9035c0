"""Correcting a family as a whole (assay.verdicts.family): each test's level agrees with its adjusted p-value, and
Holm's step-down decisions are checked against hand-computed cases and statsmodels-free brute force."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.verdicts.family import correct


def test_holm_levels_by_hand():
    """p = 0.01, 0.04, 0.03, 0.5 at alpha 0.05, m = 4: sorted 0.01 < 0.05/4 (rejected), 0.03 < 0.05/3
    (no: 0.0167), so Holm stops at the second step; every later test keeps its level 0.05/3."""
    out = correct([0.01, 0.04, 0.03, 0.5], 0.05, "holm")
    assert [o["rejected"] for o in out] == [True, False, False, False]
    assert [o["level"] for o in out] == [0.05 / 4, 0.05 / 3, 0.05 / 3, 0.05 / 3]
    assert [o["p_adjusted"] for o in out] == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_holm_rejects_more_than_bonferroni():
    """p = 0.012, 0.02 at alpha 0.05: Bonferroni tests both at 0.025 (both rejected); p = 0.013, 0.03: Holm
    rejects 0.013 < 0.025 then 0.03 < 0.05; Bonferroni only the first."""
    assert [o["rejected"] for o in correct([0.013, 0.03], 0.05, "holm")] == [True, True]
    assert [o["rejected"] for o in correct([0.013, 0.03], 0.05, "bonferroni")] == [True, False]
    assert [o["rejected"] for o in correct([0.013, 0.03], 0.05, "none")] == [True, True]
    assert [o["rejected"] for o in correct([0.03, 0.06], 0.05, "none")] == [True, False]


def holm_by_definition(p, alpha):
    """Holm (1979) straight from the step-down definition."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected = [False] * len(p)
    for step, i in enumerate(order):
        if p[i] >= alpha / (len(p) - step):
            break
        rejected[i] = True
    return rejected


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.001, 0.004, 0.01, 0.0125, 0.02, 0.025, 0.04, 0.05, 0.3, 1.0])
                | st.floats(0, 1), min_size=1, max_size=30),
       st.sampled_from([0.05, 0.01, 0.1]))
def test_decisions_levels_and_adjusted_p_agree(p, alpha):
    for method in ("holm", "bonferroni", "none"):
        out = correct(p, alpha, method)
        assert [o["rejected"] for o in out] == [pv < o["level"] for pv, o in zip(p, out)]
    holm = correct(p, alpha, "holm")
    assert [o["rejected"] for o in holm] == holm_by_definition(p, alpha)
    assert [o["rejected"] for o in correct(p, alpha, "bonferroni")] == [pv < alpha / len(p) for pv in p]


def test_an_unknown_correction_is_refused():
    with pytest.raises(ValueError, match="holm, bonferroni, none"):
        correct([0.1], 0.05, "hochberg")
