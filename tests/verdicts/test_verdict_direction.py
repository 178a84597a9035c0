"""A significant improvement is reported as one, and the same change the other way round as a regression, in every
format of `assay compare` and `assay regress` (one sign convention: a change is B - A, candidate - baseline).

The runs (verdict_runs.py): 32 questions, one relevant document each; the baseline finds it at rank 1 for 22 of them,
the candidate for all 32. So every rank-based measure moves from 22/32 to 32/32, change +10/32 = +0.3125 exactly,
from 10 questions won and none lost: McNemar's test (no continuity correction) gives Z = 10 / sqrt(10), two-sided
p = P(chi2_1 > 10) = 0.00157. compare corrects over the 22 tests of its table; the 17 rank-based rows hold its
smallest p-values, so Holm's adjusted p of each is 22 * 0.00157 = 0.0344 < 0.05. regress's test is one-sided (H0:
change >= -allowance): for the improvement p = Phi(sqrt(10)) = 0.9992; for the reverse (10 lost, none won)
p = 1 - Phi(sqrt(10)) = 0.00078. References from scipy, not from assay's inference.
"""

import json

import pytest
from click.testing import CliRunner
from scipy.stats import chi2, norm

from assay.cli import cli
from assay.verdicts.comparison import compare
from assay.measures.registry import parse_measure
from assay.verdicts.regression import regress
from assay.store.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

N, WON = 32, 10
CHANGE = WON / N
P_TWO_SIDED = chi2.sf(WON, 1)  # McNemar: (b - c)**2 / (b + c) = 10
P_HOLM = 22 * P_TWO_SIDED
P_ONE_SIDED = norm.sf(WON ** 0.5)  # Z = (b - c) / sqrt(b + c) = sqrt(10)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    path = tmp_path_factory.mktemp("direction") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "worse", outcomes(N, N - WON), minutes=0)
        write_outcomes(wh, "better", outcomes(N, N), minutes=1)
    return path


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_compare_reports_a_significant_improvement_as_a_positive_change(runs):
    with Warehouse.open(runs, read_only=True) as wh:
        result = compare(wh, "worse", "better", flip_metric="Success@1")
    rank_based = [r for r in result["rows"] if r["slice"] == "all" and r["metric"] not in ("P@5", "SpanRecall@1000tok",
                                                                                            "SpanIoU@10", "FalseAbstain")]
    assert len(rank_based) == 17
    for row in rank_based:
        assert (row["a"], row["b"], row["delta"]) == (22 / 32, 1.0, CHANGE), row
        assert 0 < row["ci_low"] < CHANGE < row["ci_high"], row  # the interval excludes 0 on the side of a gain
        assert row["p_value"] == pytest.approx(P_TWO_SIDED, rel=1e-12), row
        assert (row["p_holm"], row["n_tests"]) == (pytest.approx(P_HOLM, rel=1e-12), 22), row
    (flips,) = [result["flips"]]
    assert (len(flips["won"]), len(flips["lost"])) == (WON, 0)


def test_compare_table_and_json_carry_the_sign_of_the_improvement(runs):
    table = invoke("compare", "worse", "better", "--flips", "Success@1", "--warehouse", str(runs))
    assert table.exit_code == 0, table.output
    row = next(line for line in table.stdout.splitlines() if line.startswith("Success@1 ") and " doc " in line)
    cells = row.split()
    assert cells[4] == "+0.312" and cells[7:10] == ["tango-score", "0.002", "0.034"] and cells[10] == "32"
    assert cells[5].startswith("[+") and cells[6].startswith("+")
    low, high = float(row.split()[5].strip("[,")), float(row.split()[6].strip("]"))
    assert 0 < low < CHANGE < high
    assert "questions that flipped on Success@1 (doc level): 10 won, 0 lost" in table.stdout
    as_json = invoke("compare", "worse", "better", "--format", "json", "--warehouse", str(runs))
    rows = [r for r in json.loads(as_json.stdout)["rows"] if r["metric"] == "Success@1" and r["slice"] == "all"]
    assert [(r["delta"], r["ci_low"] > 0, r["p_holm"]) for r in rows] == [(CHANGE, True, pytest.approx(P_HOLM))] * 2


S1 = parse_measure("Success@1")


def test_regress_passes_an_improvement_and_fails_the_same_change_reversed(runs):
    with Warehouse.open(runs, read_only=True) as wh:
        up = regress(wh, "better", "worse", [(S1, "doc", 0.0)])
        down = regress(wh, "worse", "better", [(S1, "doc", 0.0)])
        up_threshold = regress(wh, "better", "worse", [(S1, "doc", 0.0)], mode="threshold")
    for check in up["checks"]:
        assert (check["change"], check["p_value"], check["regressed"], check["decision"]) == \
            (CHANGE, pytest.approx(1 - P_ONE_SIDED, rel=1e-12), False, "ok"), check
        assert check["ci_high"] > CHANGE  # the one-sided bound lies above the gain, far from the floor 0
    for check in down["checks"]:
        assert (check["change"], check["p_value"], check["regressed"]) == \
            (-CHANGE, pytest.approx(P_ONE_SIDED, rel=1e-9), True), check
        assert check["ci_high"] < 0
    assert not any(c["regressed"] for c in up_threshold["checks"])


def test_regress_table_and_json_say_ok_with_a_positive_change(runs):
    table = invoke("regress", "better", "--baseline", "worse", "--max-drop", "Success@1:doc=0", "--warehouse", str(runs))
    assert table.exit_code == 0, table.output
    line = next(line for line in table.stdout.splitlines() if line.startswith("ok ") and " all " in line)
    assert line.split()[:7] == ["ok", "Success@1:doc", "all", "0.688", "1.000", "+0.312", "+0.000"]
    assert table.stdout.splitlines()[-1] == "0 regression(s): no significant regression"
    as_json = json.loads(invoke("regress", "better", "--baseline", "worse", "--max-drop", "Success@1:doc=0",
                                "--format", "json", "--warehouse", str(runs)).stdout)
    assert {(c["change"], c["decision"], c["regressed"]) for c in as_json["checks"]} == {(CHANGE, "ok", False)}
    reverse = invoke("regress", "worse", "--baseline", "better", "--max-drop", "Success@1:doc=0", "--warehouse",
                     str(runs))
    assert reverse.exit_code == 7
    line = next(line for line in reverse.stdout.splitlines() if " all " in line)
    assert line.split()[:7] == ["REGRESSED", "Success@1:doc", "all", "1.000", "0.688", "-0.312", "+0.000"]
