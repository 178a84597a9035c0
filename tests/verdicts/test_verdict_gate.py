"""`assay gate` rules at their bars, on a real DuckDB warehouse: a run whose Success@1 is exactly 0.75
(24 of 32 questions hit at rank 1, verdict_runs.py), checked against each operator at the bar itself and a
hair either side of it.

Each case names the mutation of src/assay/verdicts/gate.py's OPS it kills (each made by hand and seen to fail).
"""

import math
import json

import pytest
from click.testing import CliRunner
from verdict_runs import outcomes, write_outcomes, write_ranks

from assay.verdicts import gate
from assay.cli import cli
from assay.store.warehouse import Warehouse
from assay.core.errors import UsageError

BELOW, ABOVE = math.nextafter(0.75, 0), math.nextafter(0.75, 1)


@pytest.fixture(scope="module")
def run_075(tmp_path_factory):
    path = tmp_path_factory.mktemp("gate") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "run-075", outcomes(32, 24))
    return path


@pytest.mark.parametrize("op, bar, passes", [
    # at the bar: kills `>=` behaving as `>` (and `>` as `>=`, `<=` as `<`, `<` as `<=`)
    (">=", 0.75, True), (">", 0.75, False), ("<=", 0.75, True), ("<", 0.75, False),
    # a hair either side: kills an operator turned the other way (`>=` as `<=`, `>` as `<`, ...)
    (">=", BELOW, True), (">=", ABOVE, False), (">", BELOW, True), (">", ABOVE, False),
    ("<=", BELOW, False), ("<=", ABOVE, True), ("<", BELOW, False), ("<", ABOVE, True),
])
def test_a_value_at_or_beside_the_bar(run_075, op, bar, passes):
    rule = gate.parse_rule(f"Success@1:doc{op}{bar!r}")  # repr round-trips: the bar is exactly `bar`
    assert (rule.op, rule.bar) == (op, bar)
    with Warehouse.open(run_075, read_only=True) as wh:
        (result,) = gate.check(wh, "run-075", [rule], seed=0, samples=1000)
    assert result["value"] == 0.75 and result["n"] == 32
    assert result["passed"] is passes
    assert result["reason"] == (f"0.750 {op} {bar:g}" if passes else f"0.750 is not {op} {bar:g}") + (
        f", but its 95% bound {result['bound']:.3f} does not clear {bar:g}" if result["fragile"] else "")
    # at the bar itself the data cannot show the true value on the passing side (p about 0.5): a pass is fragile
    assert result["fragile"] is passes


@pytest.mark.parametrize("rule, code, last", [
    ("Success@1:doc>=0.75", 0, "1 passed, 0 failed"),
    ("Success@1:doc>0.75", 6, "0 passed, 1 failed; exit code 6"),
    ("Success@1:doc<=0.75", 0, "1 passed, 0 failed"),
    ("Success@1:doc<0.75", 6, "0 passed, 1 failed; exit code 6"),
])
def test_a_rule_written_at_the_value_on_the_command_line(run_075, rule, code, last):
    """Kills the same mutations through the rule text the CLI parses (the bar 0.75 read as exactly 24/32)."""
    out = CliRunner().invoke(cli, ["gate", "run-075", "--rule", rule, "--warehouse", str(run_075)])
    assert out.exit_code == code, out.output
    assert out.stdout.splitlines()[-1] == last


@pytest.mark.parametrize("rule, fragile", [
    # 24 of 32 pass each; the exact one-sided binomial p at the bar (scipy below) is 0.35 and 0.29 for the first
    # two, 0.0035 and 0.011 for the last two
    ("Success@1:doc>=0.7", True), ("Success@1:doc<=0.8", True),
    ("Success@1:doc>=0.5", False), ("Success@1:doc<=0.9", False),
])
def test_a_pass_is_fragile_when_the_one_sided_test_is_not_significant(run_075, rule, fragile):
    """Kills: the test's tail taken on the wrong side (P(X <= k) for `>=`, P(X >= k) for `<=`) and the fragile
    test inverted: each rule passes, and is fragile exactly when the exact binomial p of "the true value is on
    the failing side" is not below 0.05 (one rule: a family of one). The bound is the one-sided Clopper-Pearson
    bound at 95%, which clears the bar exactly then. The report's 95% interval (Wilson) is kept in the result."""
    from scipy.stats import beta, binomtest

    from assay.measures.stats import wilson

    parsed = gate.parse_rule(rule)
    with Warehouse.open(run_075, read_only=True) as wh:
        (result,) = gate.check(wh, "run-075", [parsed], seed=0, samples=1000)
    assert (result["ci_low"], result["ci_high"]) == wilson(24, 32)
    above = parsed.op == ">="
    expected = binomtest(24, 32, parsed.bar, alternative="greater" if above else "less").pvalue
    assert result["p_value"] == pytest.approx(expected, rel=1e-12) and result["p_adjusted"] == result["p_value"]
    assert (result["family_size"], result["decided_at"], result["method"]) == (1, 0.05, "binomial-exact")
    assert result["bound"] == pytest.approx(beta.ppf(0.05, 24, 9) if above else beta.ppf(0.95, 25, 8), abs=1e-12)
    assert result["passed"] is True and result["fragile"] is fragile
    assert (result["bound"] > parsed.bar if above else result["bound"] < parsed.bar) is not fragile


# gate.check on run-075 (Success@1 exactly 24/32), run-one (one question, a hit) and run-rr (RANKS)


# Reciprocal ranks of the relevant document for twelve questions (0: not found): RR@10 = 0.58333...
RANKS = [1, 2, 3, 0, 1, 5, 10, 0, 2, 1, 4, 1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One warehouse: run-075 (Success@1 exactly 24/32), run-one (one question, a hit), run-rr (RANKS)."""
    path = tmp_path_factory.mktemp("registry-gate") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "run-075", outcomes(32, 24))
        write_outcomes(wh, "run-one", [1], minutes=1)
        write_ranks(wh, "run-rr", RANKS, minutes=2)
    return path


def test_a_bootstrap_interval_is_drawn_with_the_runs_seed_and_samples(runs, tmp_path):
    """A rule on a bootstrap measure is checked with the run's seed and sample count, in the library and through `assay
    gate`.

    Kills assay.verdicts.gate.x_check__mutmut_52 (seed not passed to evaluate: seed 0 is used) and
    assay.verdicts.gate.x_check__mutmut_53 (samples not passed: 1000 are drawn). RR@10 has a bootstrap interval, which
    depends on both: with seed 7 and 200 samples it is [0.30747..., 0.79166...], where seed 0 gives the upper end
    0.8333... and 1000 samples give [0.35427..., 0.82389...]. `assay gate` takes both from the run's config."""
    with Warehouse.open(runs, read_only=True) as wh:
        (result,) = gate.check(wh, "run-rr", [gate.parse_rule("RR@10:doc>=0.5")], seed=7, samples=200)
        (default,) = gate.check(wh, "run-rr", [gate.parse_rule("RR@10:doc>=0.5")], seed=0, samples=1000)
    assert result == {"rule": "RR@10:doc>=0.5", "op": ">=", "bar": 0.5, "passed": True, "fragile": True,
                      "value": 0.5833333333333334, "n": 12, "ci_low": 0.30747420650685137,
                      "ci_high": 0.7916666666666667, "bound": 0.4, "confidence": 0.95,
                      # the exact one-sample sign-flip p (1408 of the 4096 sign patterns; see test_verdict_gate_family)
                      "p_value": 1408 / 4096, "p_adjusted": 1408 / 4096, "decided_at": 0.05, "family_size": 1,
                      "correction": "holm", "alpha": 0.05, "method": "sign-flip", "patterns": "exact",
                      "reason": "0.583 >= 0.5, but its 95% bound 0.400 does not clear 0.5"}
    # to 1e-12: the bound moved by one ulp when the BCa upper level became -ndtri(alpha/2) (the same value, computed
    # without rounding 1 - alpha/2); the mutants it kills move it by 0.04
    assert (default["ci_low"], default["ci_high"]) == pytest.approx((0.3333333333333333, 0.7916666666666666), abs=1e-12)

    import shutil

    copy = tmp_path / "w.duckdb"
    shutil.copy(runs, copy)
    with Warehouse.open(copy) as wh:
        config = json.loads(wh.con.execute("SELECT config FROM runs WHERE run_id = 'run-rr'").fetchall()[0][0])
        config.update(seed=7, bootstrap_samples=200)
        wh.con.execute("UPDATE runs SET config = ? WHERE run_id = 'run-rr'", [json.dumps(config)])
    out = CliRunner().invoke(cli, ["gate", "run-rr", "--rule", "RR@10:doc>=0.5", "--warehouse", str(copy)])
    assert out.exit_code == 0, out.output
    out = CliRunner().invoke(cli, ["gate", "run-rr", "--rule", "RR@10:doc>=0.5", "--format", "json",
                                   "--warehouse", str(copy)])
    assert out.exit_code == 0, out.output
    (rule,) = json.loads(out.stdout)["rules"]
    assert (rule["ci_low"], rule["ci_high"]) == (0.30747420650685137, 0.7916666666666667)


def test_a_run_of_one_question_is_gated_on_it(runs):
    """A run of one question is gated on that question (n = 1 is not 'no questions').

    Kills assay.verdicts.gate.x_check__mutmut_60 (`row.n == 0` as `row.n == 1`: a slice of one question would be
    failed as having none). Wilson's interval of 1 of 1 is [0.0546..., 1.0]."""
    with Warehouse.open(runs, read_only=True) as wh:
        results = gate.check(wh, "run-one", [gate.parse_rule("Success@1:doc>=0.5")], seed=0, samples=1000)
    # one hit of one: P(Binomial(1, 0.5) >= 1) = 0.5; the 95% lower bound m solves m**1 = 0.05
    assert results == [{"rule": "Success@1:doc>=0.5", "op": ">=", "bar": 0.5, "passed": True, "fragile": True,
                        "value": 1.0, "n": 1, "ci_low": 0.05462075552885198, "ci_high": 1.0,
                        "bound": pytest.approx(0.05, abs=1e-15), "confidence": 0.95, "p_value": 0.5,
                        "p_adjusted": 0.5, "decided_at": 0.05, "family_size": 1, "correction": "holm", "alpha": 0.05,
                        "method": "binomial-exact", "patterns": None,
                        "reason": "1.000 >= 0.5, but its 95% bound 0.050 does not clear 0.5"}]


def test_a_measure_without_values_fails_and_the_next_rule_is_still_checked(runs):
    """A measure without values fails its rule (a gate never passes vacuously) and the rule after it is still checked;
    every key and the text pinned.

    A run without answers has no faithfulness value in any slice: its rule fails with the vacuous-pass reason,
    every key of the result pinned, and the rule after it is checked. The second rule, `>` passing on 0.75 with
    p 0.344 (exact binomial, scipy's binomtest), is fragile: for `>` the tail is P(X >= 24).
    Kills assay.verdicts.gate.x_check__mutmut_69 (fragile True), _74 (n 1), _75, _76 (the key ci_low renamed), _77, _78
    (ci_high renamed), _81 (`continue` as `break`: the second rule dropped), _92 (`">"` misspelt: ci_high taken
    for `>`, so not fragile), and a bound column always '-'."""
    rules = [gate.parse_rule("faithfulness>=0.5"), gate.parse_rule("Success@1:doc>0.7")]
    with Warehouse.open(runs, read_only=True) as wh:
        results = gate.check(wh, "run-075", rules, seed=0, samples=1000)
    from scipy.stats import beta, binomtest

    p = binomtest(24, 32, 0.7, alternative="greater").pvalue
    assert results == [
        {"rule": "faithfulness>=0.5", "op": ">=", "bar": 0.5, "passed": False, "fragile": False, "value": None,
         "n": 0, "ci_low": None, "ci_high": None, "bound": None, "confidence": None, "p_value": None,
         "p_adjusted": None, "decided_at": None, "family_size": 1, "correction": "holm", "alpha": 0.05,
         "method": None, "patterns": None, "reason": "no questions in slice 'all': a gate never passes vacuously"},
        {"rule": "Success@1:doc>0.7", "op": ">", "bar": 0.7, "passed": True, "fragile": True, "value": 0.75, "n": 32,
         "ci_low": 0.5789344100575552, "ci_high": 0.8674759908149096,  # plain Wilson (n = 32 >= 25)
         "bound": pytest.approx(beta.ppf(0.05, 24, 9), abs=1e-12), "confidence": 0.95,
         "p_value": pytest.approx(p, rel=1e-12), "p_adjusted": pytest.approx(p, rel=1e-12), "decided_at": 0.05,
         "family_size": 1, "correction": "holm", "alpha": 0.05, "method": "binomial-exact", "patterns": None,
         "reason": "0.750 > 0.7, but its 95% bound 0.594 does not clear 0.7"}]
    assert gate.render("run-075", results) == (
        "The run fails 1 of 2 gate rules: faithfulness>=0.5 (no questions in slice 'all': a gate never passes "
        "vacuously).\n\n"
        "gate on run run-075\n"
        "(fragile) marks a pass that is not significant: one-sided test that the true value is on the passing side "
        "of the bar, Holm over 1 rule at alpha 0.05\n"
        "status          rule               value   n  bound                p  p (Holm)  reason\n"
        + "-" * 138 + "\n"
        "FAIL            faithfulness>=0.5      -   0  -                    -         -  no questions in slice 'all': "
        "a gate never passes vacuously\n"
        "PASS (fragile)  Success@1:doc>0.7  0.750  32  >= 0.594 (95%)  0.3440    0.3440  0.750 > 0.7, but its 95% "
        "bound 0.594 does not clear 0.7\n"
        "1 passed, 1 failed; exit code 6\n")


def test_two_rules_naming_slices_the_run_lacks_are_named_together(runs):
    """Two rules naming slices the run lacks are refused together, in one message listing the run's slices.

    Kills assay.verdicts.gate.x_check_slices__mutmut_10 (the rules joined by 'XX; XX' instead of '; ')."""
    rules = [gate.parse_rule("Success@1:doc[form=gapp]>=0.5"), gate.parse_rule("Success@1[category=x]>=0.5", "t.toml")]
    with Warehouse.open(runs, read_only=True) as wh, pytest.raises(UsageError) as error:
        gate.check(wh, "run-075", rules, seed=0, samples=1000)
    assert str(error.value) == (
        "Success@1:doc[form=gapp]>=0.5 (--rule): no such slice 'form=gapp'; Success@1[category=x]>=0.5 (t.toml): "
        "no such slice 'category=x'; run run-075 has the slices all, category=normal, form=match, hard_class=normal")


# -- the gate's words: the family line, the table, JSON (their exact text is what CI logs and PR comments show) ---

def _rule(rule="nDCG@10>=0.5", passed=True, fragile=False, value=0.6, op=">=", bound=0.55, p=0.01, p_adj=0.02,
          size=2, correction="holm", alpha=0.05, reason="ok"):
    return {"rule": rule, "passed": passed, "fragile": fragile, "value": value, "op": op, "n": 40, "bound": bound,
            "confidence": 0.95, "p_value": p, "p_adjusted": p_adj, "reason": reason, "ci_low": 0.5, "ci_high": 0.7,
            "family_size": size, "correction": correction, "alpha": alpha}


@pytest.mark.parametrize("size, correction, alpha, how", [
    (2, "holm", 0.05, "Holm over 2 rules at alpha 0.05"),
    (1, "holm", 0.05, "Holm over 1 rule at alpha 0.05"),
    (3, "bonferroni", 0.1, "Bonferroni over 3 rules at alpha 0.1"),
    (2, "none", 0.01, "uncorrected, 2 rules at alpha 0.01"),
    (1, "none", 0.05, "uncorrected, 1 rule at alpha 0.05"),
    (0, "holm", 0.05, "no rule could be tested at alpha 0.05"),
])
def test_the_family_line_names_the_correction_the_number_of_rules_and_alpha(size, correction, alpha, how):
    head = ("(fragile) marks a pass that is not significant: one-sided test that the true value is on the passing "
            "side of the bar, ")
    assert gate.family_line([_rule(size=size, correction=correction, alpha=alpha)]) == head + how
    assert gate.family_line([]) == head + "no rule could be tested at alpha 0.05"


@pytest.mark.parametrize("p, shown", [(None, "-"), (0.00009, "<0.0001"), (0.0001, "0.0001"), (0.5, "0.5000"),
                                      (1.0, "1.0000")])
def test_p_values_show_four_decimals_and_below_0_0001_as_a_bound(p, shown):
    assert gate._p(p) == shown


def test_the_table_shows_each_rule_its_bound_on_the_passing_side_and_the_count():
    results = [_rule(), _rule(rule="R@10<=0.9", op="<=", value=0.8, bound=0.85, p=0.00001, p_adj=None,
                              passed=True, fragile=True, reason="fragile: p 0.2"),
               _rule(rule="P@5>0.7", op=">", value=None, passed=False, p=None, p_adj=None, reason="no values")]
    text = gate.render("run-1", results)
    lines = text.splitlines()
    assert lines[1:4] == ["", "gate on run run-1", gate.family_line(results)]
    assert lines[0].startswith("The run fails 1 of 3 gate rules: P@5>0.7 (no values).")
    header = lines[4].split()
    assert header == ["status", "rule", "value", "n", "bound", "p", "p", "(Holm)", "reason"]
    rows = [line.split() for line in lines[6:9]]
    assert rows[0] == ["PASS", "nDCG@10>=0.5", "0.600", "40", ">=", "0.550", "(95%)", "0.0100", "0.0200", "ok"]
    assert rows[1] == ["PASS", "(fragile)", "R@10<=0.9", "0.800", "40", "<=", "0.850", "(95%)", "<0.0001", "-",
                       "fragile:", "p", "0.2"]
    assert rows[2] == ["FAIL", "P@5>0.7", "-", "40", "-", "-", "-", "no", "values"]
    assert lines[-1] == "2 passed, 1 failed; exit code 6" and text.endswith("\n")
    none = gate.render("run-0", []).splitlines()  # no rule: Holm's column, as `assay gate` corrects by default
    assert none[4].split()[-3:] == ["p", "(Holm)", "reason"] and none[-1] == "0 passed, 0 failed"
    passing = gate.render("run-1", [_rule(correction="none")]).splitlines()
    assert passing[-1] == "1 passed, 0 failed"
    assert passing[4].split()[-3:] == ["p", "(uncorrected)", "reason"]


def test_json_holds_the_run_the_family_and_every_rule():
    results = [_rule(size=2, correction="bonferroni", alpha=0.1), _rule(rule="R@10>=0.2", passed=False)]
    out = gate.to_json("run-9", results)
    assert {k: out[k] for k in ("run_id", "passed", "alpha", "correction", "family_size")} == \
        {"run_id": "run-9", "passed": False, "alpha": 0.1, "correction": "bonferroni", "family_size": 2}
    assert out["rules"] is results and out["verdict"]["decision"] == "fail"
    assert gate.to_json("run-9", results[:1])["passed"] is True
    empty = gate.to_json("run-0", [])
    assert {k: empty[k] for k in ("passed", "alpha", "correction", "family_size", "rules")} == \
        {"passed": True, "alpha": 0.05, "correction": "holm", "family_size": 0, "rules": []}
