"""A significant improvement is reported as one, and the same change the other way round as a regression, in every
format of `assay compare` and `assay regress` (one sign convention: a change is B - A, candidate - baseline).

The runs (verdict_runs.py): 32 questions, one relevant document each; the baseline finds it at rank 1 for 22 of them,
the candidate for all 32. So every rank-based measure moves from 22/32 to 32/32, change +10/32 = +0.3125 exactly,
from 10 questions won and none lost: McNemar's exact two-sided p is 2 * 2**-10 = 2**-9, and the sign-flip test of
P@5 (ten differences of +0.2, the rest 0) gives the same 2**-9. compare corrects over the 22 tests of its table
(21 at p = 2**-9, FalseAbstain at 1): Holm's adjusted p of each of the 21 is 22 * 2**-9 = 0.04296875 < 0.05.
regress's test is one-sided (H0: change >= -allowance), the lower tail of McNemar's score statistic (no continuity
correction) Z = (won - lost) / sqrt(won + lost): for the improvement Z = +sqrt(10), p = Phi(sqrt(10)) = 0.9992; for
the reverse (10 lost, none won) p = Phi(-sqrt(10)) = 0.0008 (scipy's normal tail).
"""

import json

import math

import pytest
from click.testing import CliRunner
from scipy.stats import norm

from assay.cli import cli
from assay.comparison import compare
from assay.metrics.registry import parse_measure
from assay.regression import regress
from assay.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

N, WON = 32, 10
CHANGE = WON / N
P_TWO_SIDED = 2 * 0.5**WON
P_HOLM = 22 * P_TWO_SIDED


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
        assert (row["p_value"], row["p_holm"], row["n_tests"]) == (P_TWO_SIDED, P_HOLM, 22), row
    (flips,) = [result["flips"]]
    assert (len(flips["won"]), len(flips["lost"])) == (WON, 0)


def test_compare_table_and_json_carry_the_sign_of_the_improvement(runs):
    table = invoke("compare", "worse", "better", "--flips", "Success@1", "--warehouse", str(runs))
    assert table.exit_code == 0, table.output
    row = next(line for line in table.stdout.splitlines() if line.startswith("Success@1 ") and " doc " in line)
    cells = row.split()
    assert cells[4] == "+0.312" and cells[7:10] == ["mcnemar-exact", "0.002", "0.043"] and cells[10] == "32"
    assert cells[5].startswith("[+") and cells[6].startswith("+")
    low, high = float(row.split()[5].strip("[,")), float(row.split()[6].strip("]"))
    assert 0 < low < CHANGE < high
    assert "questions that flipped on Success@1 (doc level): 10 won, 0 lost" in table.stdout
    as_json = invoke("compare", "worse", "better", "--format", "json", "--warehouse", str(runs))
    rows = [r for r in json.loads(as_json.stdout)["rows"] if r["metric"] == "Success@1" and r["slice"] == "all"]
    assert [(r["delta"], r["ci_low"] > 0, r["p_holm"]) for r in rows] == [(CHANGE, True, P_HOLM)] * 2


S1 = parse_measure("Success@1")


def test_regress_passes_an_improvement_and_fails_the_same_change_reversed(runs):
    with Warehouse.open(runs, read_only=True) as wh:
        up = regress(wh, "better", "worse", [(S1, "doc", 0.0)])
        down = regress(wh, "worse", "better", [(S1, "doc", 0.0)])
        up_threshold = regress(wh, "better", "worse", [(S1, "doc", 0.0)], mode="threshold")
    for check in up["checks"]:
        assert (check["change"], check["p_value"], check["regressed"], check["decision"]) == \
            (CHANGE, pytest.approx(norm.cdf(math.sqrt(WON)), rel=1e-12), False, "ok"), check
        assert check["ci_high"] > CHANGE  # the one-sided bound lies above the gain, far from the floor 0
    for check in down["checks"]:
        assert (check["change"], check["p_value"], check["regressed"]) == \
            (-CHANGE, pytest.approx(norm.cdf(-math.sqrt(WON)), rel=1e-12), True), check
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
