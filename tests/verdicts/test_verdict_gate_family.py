"""`assay gate`'s fragile verdict as a family-corrected test, from data where the correction decides.

One run, Success@1:doc >= 0.5 over the whole run and each category (verdict_runs: question i is a hit or a miss).
The one-sided exact binomial p of each slice at the bar 0.5, P(Binomial(n, 1/2) >= k), by hand:

    all          25 questions, 22 hits   (C(25,22) + C(25,23) + C(25,24) + 1) / 2**25 = 2626 / 33554432
    normal        6 questions,  6 hits   1 / 64                                       = 0.015625
    adversarial  11 questions,  9 hits   (55 + 11 + 1) / 2048 = 67 / 2048              = 0.0327...
    ambiguous     8 questions,  7 hits   (8 + 1) / 256 = 9 / 256                       = 0.0352...

A family of 4 at alpha 0.05 (form=match and hard_class=normal hold every question: the same hypothesis as all):

- none: every p < 0.05, nothing fragile;
- holm: step levels 0.0125, 0.0167, 0.025, 0.05; all and normal are rejected (0.015625 < 0.0167), adversarial is
  not (0.0327 >= 0.025) and stops it: adversarial and ambiguous are fragile. Adjusted p: 4 x all, then
  max(that, 3 x 1/64) = 0.046875, then max(0.046875, 2 x 67/2048) = 0.06543 for both.
- bonferroni: every p at 0.0125, adjusted 4p: normal (0.0625) is fragile too.

So each slice alone at 0.05 would pass cleanly, while the family says two (Holm) or three (Bonferroni) of the
passes are not shown by the data. Exit code 0 in every case: fragile is a warning.
"""

import itertools
import json
from fractions import Fraction

import pytest
from click.testing import CliRunner

from assay.verdicts import gate
from assay.cli import cli
from assay.verdicts.bar_test import Sample, binomial_tail
from assay.store.warehouse import Warehouse
from verdict_runs import write_outcomes, write_ranks

SLICES = {"normal": (6, 6), "adversarial": (11, 9), "ambiguous": (8, 7)}  # category: (questions, hits)
P = {"all": Fraction(2626, 2 ** 25), "category=normal": Fraction(1, 64), "category=adversarial": Fraction(67, 2048),
     "category=ambiguous": Fraction(9, 256)}
RULES = ["Success@1:doc>=0.5", "Success@1:doc[category=normal]>=0.5", "Success@1:doc[category=adversarial]>=0.5",
         "Success@1:doc[category=ambiguous]>=0.5", "Success@1:doc[form=match]>=0.5"]
FRAGILE = {"none": set(), "holm": {"category=adversarial", "category=ambiguous"},
           "bonferroni": {"category=normal", "category=adversarial", "category=ambiguous"}}


def _adjusted(method: str) -> dict:
    """Holm and Bonferroni written out from their definitions on the exact p-values (not assay's family.py)."""
    m = len(P)
    if method == "none":
        return dict(P)
    if method == "bonferroni":
        return {k: min(Fraction(1), m * p) for k, p in P.items()}
    out, running = {}, Fraction(0)
    for j, (k, p) in enumerate(sorted(P.items(), key=lambda kv: kv[1])):
        running = max(running, min(Fraction(1), (m - j) * p))
        out[k] = running
    return out


@pytest.fixture(scope="module")
def family_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("gate-family") / "w.duckdb"
    hits, categories = [], []
    for category, (n, k) in SLICES.items():
        hits += [1] * k + [0] * (n - k)
        categories += [category] * n
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "run-fam", hits, categories=categories)
        write_ranks(wh, "run-rr", [1, 2, 3, 0, 1, 5, 10, 0, 2, 1, 4, 1], minutes=1)
    return path


def _slice(rule: str) -> str:
    return rule.partition("[")[2].partition("]")[0] or "all"


@pytest.mark.parametrize("correction", ["holm", "bonferroni", "none"])
def test_the_family_of_slices_is_corrected_as_a_whole(family_run, correction):
    rules = [gate.parse_rule(r) for r in RULES]
    with Warehouse.open(family_run, read_only=True) as wh:
        results = gate.check(wh, "run-fam", rules, seed=0, samples=1000, correction=correction)
    adjusted = _adjusted(correction)
    for r in results:
        key = "all" if _slice(r["rule"]) == "form=match" else _slice(r["rule"])
        assert r["passed"] is True
        assert r["p_value"] == pytest.approx(float(P[key]), rel=1e-12), r["rule"]
        assert r["p_adjusted"] == pytest.approx(float(adjusted[key]), rel=1e-12), r["rule"]
        assert r["fragile"] is (key in FRAGILE[correction]), r["rule"]
        assert (r["family_size"], r["correction"], r["alpha"]) == (4, correction, 0.05)
        # the bound at the level the rule was decided at clears the bar exactly when the rule is not fragile
        assert (r["bound"] > 0.5) is not r["fragile"]
        assert r["confidence"] == 1 - r["decided_at"]
    # uncorrected, each slice alone is significant at 0.05: the correction alone makes these passes fragile
    assert all(p < Fraction(1, 20) for p in P.values())


def test_the_holm_levels_are_the_step_down_levels(family_run):
    with Warehouse.open(family_run, read_only=True) as wh:
        results = gate.check(wh, "run-fam", [gate.parse_rule(r) for r in RULES[:4]], seed=0, samples=1000)
    # all (0.0125), normal (0.05/3), then adversarial stops the procedure at 0.025, which ambiguous keeps
    assert [r["decided_at"] for r in results] == pytest.approx([0.0125, 0.05 / 3, 0.025, 0.025], abs=1e-15)


@pytest.mark.parametrize("correction, fragile, line", [
    ("holm", 2, "Holm over 4 rules at alpha 0.05"),
    ("bonferroni", 3, "Bonferroni over 4 rules at alpha 0.05"),
    ("none", 0, "uncorrected, 4 rules at alpha 0.05"),
])
def test_the_command_prints_the_family_and_keeps_exit_code_0(family_run, correction, fragile, line):
    args = ["gate", "run-fam", *[a for r in RULES for a in ("--rule", r)], "--warehouse", str(family_run)]
    out = CliRunner().invoke(cli, [*args, "--correction", correction])
    assert out.exit_code == 0, out.output
    said, blank, *lines = out.stdout.splitlines()
    # the verdict in words first: every rule passes; the fragile ones named with the family they were tested in
    assert said.startswith("The run passes all 5 gate rules") and blank == ""
    if fragile:
        assert said.endswith(f"; one-sided tests, {line.replace(', 4', ' over 4')}.")
        assert said.count(" does not clear ") == fragile
    else:
        assert said == "The run passes all 5 gate rules."
    assert lines[1].startswith("(fragile) marks a pass that is not significant") and lines[1].endswith(f", {line}")
    assert lines[2].split()[:8] == ["status", "rule", "value", "n", "bound", "p", "p",
                                    "(uncorrected)" if correction == "none" else f"({correction.capitalize()})"]
    assert out.stdout.count("PASS (fragile)") == fragile
    assert lines[-1] == "5 passed, 0 failed"

    data = json.loads(CliRunner().invoke(cli, [*args, "--correction", correction, "--format", "json"]).stdout)
    assert (data["family_size"], data["correction"], data["alpha"], data["passed"]) == (4, correction, 0.05, True)
    assert data["verdict"]["sentence"] == said and data["verdict"]["fragile"] == fragile
    assert [r["fragile"] for r in data["rules"]].count(True) == fragile
    assert all({"p_value", "p_adjusted", "family_size", "correction", "bound", "decided_at"} <= set(r)
               for r in data["rules"])


def test_a_failing_rule_still_exits_6_and_a_stricter_alpha_makes_more_fragile(family_run):
    args = ["gate", "run-fam", "--rule", "Success@1:doc[category=ambiguous]>=0.9", "--rule", RULES[1],
            "--warehouse", str(family_run)]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 6, out.output
    assert out.stdout.splitlines()[-1] == "1 passed, 1 failed; exit code 6"
    # normal alone with a failing rule beside it: Holm over 2, 1/64 < 0.025 clean; at alpha 0.02, 1/64 >= 0.01
    assert "PASS (fragile)" not in out.stdout
    strict = CliRunner().invoke(cli, [*args, "--alpha", "0.02"])
    assert strict.exit_code == 6 and "PASS (fragile)  Success@1:doc[category=normal]>=0.5" in strict.stdout


def test_a_bad_alpha_is_a_usage_error(family_run):
    out = CliRunner().invoke(cli, ["gate", "run-fam", "--rule", RULES[0], "--alpha", "1.5",
                                   "--warehouse", str(family_run)])
    assert out.exit_code == 2 and "--alpha" in out.output


@pytest.mark.parametrize("n, k, bar, op", [(32, 24, 0.7, ">="), (32, 24, 0.8, "<="), (10, 10, 0.9, ">"),
                                           (10, 0, 0.1, "<"), (200, 150, 0.72, ">="), (7, 3, 0.5, "<=")])
def test_the_binomial_p_and_its_bound_against_scipy(n, k, bar, op):
    from scipy.stats import beta, binomtest

    sample = Sample([1.0] * k + [0.0] * (n - k))
    above = op in (">=", ">")
    assert sample.p(op, bar) == pytest.approx(
        binomtest(k, n, bar, alternative="greater" if above else "less").pvalue, rel=1e-11)
    for a in (0.05, 0.0125, 0.001):
        expected = (beta.ppf(a, k, n - k + 1) if k else 0.0) if above else (beta.ppf(1 - a, k + 1, n - k)
                                                                           if k < n else 1.0)
        assert sample.bound(op, a) == pytest.approx(expected, abs=1e-12)
        assert (sample.bound(op, a) > bar if above else sample.bound(op, a) < bar) is (sample.p(op, bar) < a)


CHUNK_RR = [1, 1 / 2, 1 / 3, 0, 1, 1 / 5, 1 / 10, 0, 1 / 2, 1, 1 / 4, 1]  # RR@10:chunk of verdict_runs' ranks
DOC_RR = [1, 1 / 2, 1 / 2, 0, 1, 1 / 2, 1 / 2, 0, 1 / 2, 1, 1 / 2, 1]  # at document level: d1.md comes first


def _brute(values, bar, above):
    """The share of the 2**n sign patterns of (x_i - bar) whose sum is at least (``above``) or at most the
    observed one, in exact fractions."""
    d = [Fraction(x).limit_denominator(1000) - Fraction(bar).limit_denominator(1000) for x in values]
    seen = sum(d)
    flipped = (sum(s * x for s, x in zip(signs, d)) for signs in itertools.product((1, -1), repeat=len(d)))
    return Fraction(sum(1 for t in flipped if (t >= seen if above else t <= seen)), 2 ** len(d))


@pytest.mark.parametrize("values", [CHUNK_RR, DOC_RR])
def test_the_graded_p_is_the_one_sample_sign_flip_test_by_brute_force(values):
    """p = the share of sign patterns as extreme as the data (``_brute``); the bound is the smallest (largest)
    bar the test at that level does not reject."""
    sample = Sample(values)
    assert (sample.method, sample.patterns) == ("sign-flip", "exact")
    for bar in (0.3, 0.4, 0.5, 0.55, 0.7):
        assert sample.p(">=", bar) == float(_brute(values, bar, True))
        assert sample.p("<=", bar) == float(_brute(values, bar, False))
    for a in (0.05, 0.0125):
        low, high = sample.bound(">=", a), sample.bound("<=", a)
        assert sample.p(">=", low) >= a and all(sample.p(">=", low - e) < a for e in (1e-9, 1e-3))
        assert sample.p("<=", high) >= a and all(sample.p("<=", high + e) < a for e in (1e-9, 1e-3))


def test_the_graded_rule_through_gate(family_run):
    with Warehouse.open(family_run, read_only=True) as wh:
        (r,) = gate.check(wh, "run-rr", [gate.parse_rule("RR@10:doc>=0.5")], seed=0, samples=1000)
    assert (r["value"], r["method"], r["patterns"], r["family_size"]) == (7 / 12, "sign-flip", "exact", 1)
    assert r["p_value"] == float(_brute(DOC_RR, 0.5, True)) == 1408 / 4096
    assert r["fragile"] is True and r["bound"] == 0.4 and r["bound"] == Sample(DOC_RR).bound(">=", 0.05)


def test_a_bar_nothing_can_fail_has_p_0():
    assert Sample([0.0, 0.0]).p(">=", 0.0) == 0.0 and Sample([1.0, 1.0]).p("<=", 1.0) == 0.0
    assert Sample([0.2, 0.0]).p(">=", 0.0) == 0.0
    # but a strict bar at the edge is an ordinary test: P(Binomial(2, 0) >= 1) = 0, P(X >= 0) = 1
    assert Sample([1.0, 0.0]).p(">", 0.0) == 0.0 and binomial_tail(2, 0, 0.0, True) == 1.0
