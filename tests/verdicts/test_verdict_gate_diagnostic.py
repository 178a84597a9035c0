"""gate.check on a diagnostic run (recorded with --force-generation, `runs.gate_eligible` false): every rule
fails with the same reason and no figure, whatever the run's values. Kills the surviving mutants of
gate.check's early return listed in docs/mutation.md (the reason text replaced or set to None, `passed`,
`fragile`, `n` or the interval ends changed, the branch skipped) — the verdict tests gate ordinary runs only."""

import pytest

from assay.verdicts import gate
from assay.store.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

REASON = "the run used --force-generation: a diagnostic run, never a gate run"


@pytest.fixture(scope="module")
def diagnostic_run(tmp_path_factory):
    path = tmp_path_factory.mktemp("gate-diagnostic") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "run-diag", outcomes(32, 24))  # Success@1 exactly 0.75: every rule below would pass
        wh.con.execute("UPDATE runs SET gate_eligible = FALSE WHERE run_id = 'run-diag'")
    return path


def test_every_rule_of_a_diagnostic_run_fails_with_the_reason_and_no_figure(diagnostic_run):
    rules = [gate.parse_rule("Success@1:doc>=0.5"), gate.parse_rule("Success@1:doc<=0.9"),
             gate.parse_rule("Success@1:doc>=0.75")]
    with Warehouse.open(diagnostic_run, read_only=True) as wh:
        results = gate.check(wh, "run-diag", rules, seed=0, samples=1000)
    assert results == [{"rule": r.text, "op": r.op, "bar": r.bar, "passed": False, "fragile": False, "value": None,
                        "n": 0, "ci_low": None, "ci_high": None, "bound": None, "confidence": None, "p_value": None,
                        "p_adjusted": None, "decided_at": None, "family_size": 0, "correction": "holm",
                        "alpha": 0.05, "method": None, "patterns": None, "reason": REASON} for r in rules]
    assert [r["rule"] for r in results] == ["Success@1:doc>=0.5", "Success@1:doc<=0.9", "Success@1:doc>=0.75"]


def test_the_same_rules_pass_once_the_run_is_eligible(diagnostic_run, tmp_path):
    """The control: the early return, not the values, fails them (a mutant that always takes it is killed)."""
    import shutil

    copy = tmp_path / "w.duckdb"
    shutil.copy(diagnostic_run, copy)
    with Warehouse.open(copy) as wh:
        wh.con.execute("UPDATE runs SET gate_eligible = TRUE WHERE run_id = 'run-diag'")
        results = gate.check(wh, "run-diag", [gate.parse_rule("Success@1:doc>=0.5")], seed=0, samples=1000)
    assert [(r["passed"], r["value"], r["n"]) for r in results] == [(True, 0.75, 32)]
