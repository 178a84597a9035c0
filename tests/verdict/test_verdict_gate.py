"""`assay gate` rules at their bars, on a real DuckDB warehouse: a run whose Success@1 is exactly 0.75
(24 of 32 questions hit at rank 1, verdict_runs.py), checked against each operator at the bar itself and a
hair either side of it.

Each case names the mutation of src/assay/verdicts/gate.py's OPS it kills (each made by hand and seen to fail).
"""

import math

import pytest
from click.testing import CliRunner

from assay.verdicts import gate
from assay.cli import cli
from assay.store.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

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
