"""Kills of the surviving mutants of src/assay/gate.py, src/assay/metrics/registry.py and
src/assay/judgments/resolve.py listed in docs/mutation.md: each test pins exact outputs on a real DuckDB warehouse,
real measure files, a real corpus directory and judgments file, through assay's own API and CLI, and names the
mutants it kills (each applied by hand to a copy of the tree and seen to fail).

The registry reads the shipped measure files once, at import (``FAMILIES``); mutmut applies a mutant only while the
tests run, after that import, so the registry tests below call the functions again (a user's measure directory,
``read_families``, ``_listing_key``, ``parse_measure``) instead of reading ``FAMILIES``."""

from __future__ import annotations

import json
import locale
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay import gate
from assay.cli import cli
from assay.errors import ConfigError, JudgmentsError, UsageError
from assay.metrics import registry
from assay.warehouse import Warehouse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verdict"))  # verdict_runs (no __init__)
from verdict_runs import outcomes, write_outcomes, write_ranks  # noqa: E402

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


# --- gate.py ---------------------------------------------------------------------------------------------------

def test_a_bootstrap_interval_is_drawn_with_the_runs_seed_and_samples(runs, tmp_path):
    """Kills assay.gate.x_check__mutmut_52 (seed not passed to evaluate: seed 0 is used) and
    assay.gate.x_check__mutmut_53 (samples not passed: 1000 are drawn). RR@10 has a bootstrap interval, which
    depends on both: with seed 7 and 200 samples it is [0.30747..., 0.79166...], where seed 0 gives the upper end
    0.8333... and 1000 samples give [0.35427..., 0.82389...]. `assay gate` takes both from the run's config."""
    with Warehouse.open(runs, read_only=True) as wh:
        (result,) = gate.check(wh, "run-rr", [gate.parse_rule("RR@10:doc>=0.5")], seed=7, samples=200)
        (default,) = gate.check(wh, "run-rr", [gate.parse_rule("RR@10:doc>=0.5")], seed=0, samples=1000)
    assert result == {"rule": "RR@10:doc>=0.5", "passed": True, "fragile": True, "value": 0.5833333333333334,
                      "n": 12, "ci_low": 0.30747420650685137, "ci_high": 0.7916666666666667,
                      "reason": "0.583 >= 0.5, but the 95% interval reaches 0.307"}
    assert (default["ci_low"], default["ci_high"]) == (0.3333333333333333, 0.7916666666666665)

    import shutil

    copy = tmp_path / "w.duckdb"
    shutil.copy(runs, copy)
    with Warehouse.open(copy) as wh:
        config = json.loads(wh.con.execute("SELECT config FROM runs WHERE run_id = 'run-rr'").fetchall()[0][0])
        config.update(seed=7, bootstrap_samples=200)
        wh.con.execute("UPDATE runs SET config = ? WHERE run_id = 'run-rr'", [json.dumps(config)])
    out = CliRunner().invoke(cli, ["gate", "run-rr", "--rule", "RR@10:doc>=0.5", "--warehouse", str(copy)])
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines()[3].split() == ["PASS", "(fragile)", "RR@10:doc>=0.5", "0.583", "[0.307,", "0.792]",
                                                  "12", "0.583", ">=", "0.5,", "but", "the", "95%", "interval",
                                                  "reaches", "0.307"]


def test_a_run_of_one_question_is_gated_on_it(runs):
    """Kills assay.gate.x_check__mutmut_60 (`row.n == 0` as `row.n == 1`: a slice of one question would be
    failed as having none). Wilson's interval of 1 of 1 is [0.0546..., 1.0]."""
    with Warehouse.open(runs, read_only=True) as wh:
        results = gate.check(wh, "run-one", [gate.parse_rule("Success@1:doc>=0.5")], seed=0, samples=1000)
    assert results == [{"rule": "Success@1:doc>=0.5", "passed": True, "fragile": True, "value": 1.0, "n": 1,
                        "ci_low": 0.05462075552885198, "ci_high": 1.0,
                        "reason": "1.000 >= 0.5, but the 95% interval reaches 0.055"}]


def test_a_measure_without_values_fails_and_the_next_rule_is_still_checked(runs):
    """A run without answers has no faithfulness value in any slice: its rule fails with the vacuous-pass reason,
    every key of the result pinned, and the rule after it is checked. The second rule, `>` passing on 0.75 with
    Wilson's [0.562, 0.879], is fragile: for `>` the guarded end is ci_low.
    Kills assay.gate.x_check__mutmut_69 (fragile True), _74 (n 1), _75, _76 (the key ci_low renamed), _77, _78
    (ci_high renamed), _81 (`continue` as `break`: the second rule dropped), _92 (`">"` misspelt: ci_high taken
    for `>`, so not fragile), and assay.gate.x_render__mutmut_31 (the 95% CI column always '-')."""
    rules = [gate.parse_rule("faithfulness>=0.5"), gate.parse_rule("Success@1:doc>0.7")]
    with Warehouse.open(runs, read_only=True) as wh:
        results = gate.check(wh, "run-075", rules, seed=0, samples=1000)
    assert results == [
        {"rule": "faithfulness>=0.5", "passed": False, "fragile": False, "value": None, "n": 0, "ci_low": None,
         "ci_high": None, "reason": "no questions in slice 'all': a gate never passes vacuously"},
        {"rule": "Success@1:doc>0.7", "passed": True, "fragile": True, "value": 0.75, "n": 32,
         "ci_low": 0.5624955792052402, "ci_high": 0.8787292037034635,
         "reason": "0.750 > 0.7, but the 95% interval reaches 0.562"}]
    assert gate.render("run-075", results) == (
        "gate on run run-075\n"
        "status          rule               value          95% CI   n  reason\n"
        + "-" * 120 + "\n"
        "FAIL            faithfulness>=0.5      -               -   0  no questions in slice 'all': a gate never "
        "passes vacuously\n"
        "PASS (fragile)  Success@1:doc>0.7  0.750  [0.562, 0.879]  32  0.750 > 0.7, but the 95% interval reaches "
        "0.562\n"
        "1 passed, 1 failed; exit code 6\n")


def test_two_rules_naming_slices_the_run_lacks_are_named_together(runs):
    """Kills assay.gate.x_check_slices__mutmut_10 (the rules joined by 'XX; XX' instead of '; ')."""
    rules = [gate.parse_rule("Success@1:doc[form=gapp]>=0.5"), gate.parse_rule("Success@1[category=x]>=0.5", "t.toml")]
    with Warehouse.open(runs, read_only=True) as wh, pytest.raises(UsageError) as error:
        gate.check(wh, "run-075", rules, seed=0, samples=1000)
    assert str(error.value) == (
        "Success@1:doc[form=gapp]>=0.5 (--rule): no such slice 'form=gapp'; Success@1[category=x]>=0.5 (t.toml): "
        "no such slice 'category=x'; run run-075 has the slices all, category=normal, form=match, hard_class=normal")


@pytest.mark.parametrize("rules", ["Success@3:doc>=0.75", ["Success@3:doc>=0.75", 0.75]])
def test_gate_rules_that_are_not_a_list_of_strings_are_a_config_error(rules):
    """Kills assay.gate.x_collect_rules__mutmut_41 (`or` as `and`: a string is taken for a list of one-letter
    rules, a list holding a number is parsed as rules) and _45 (the message None)."""
    with pytest.raises(ConfigError) as error:
        gate.collect_rules({"gate": {"rules": rules}, "_path": "proj/assay.toml"}, ())
    assert str(error.value) == ('proj/assay.toml [gate] rules must be a list of strings like "Success@3:doc>=0.75"')
