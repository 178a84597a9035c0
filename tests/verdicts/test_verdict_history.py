"""`assay history`'s lasting drop at the boundary of its significance test, and the kinds of run it leaves out.

Runs have prescribed outcomes (verdict_runs.py): 32 questions, Success@1 = hits / 32. A baseline window of runs
that hit every question against runs from the drop on that miss the same k questions gives k per-question
differences of -1 and the rest 0, so the one-sided sign-flip p is exactly 2**-k (only the all-negative flip of
those k is as low): k = 4 gives 0.0625 (not lasting at alpha 0.05), k = 5 gives 0.03125 (lasting). The code
estimates p with 10,000 seeded resamples; its standard error there is under 0.0025, far from either side.
"""

import itertools
import json

import pytest
from click.testing import CliRunner

from assay.cli import cli
from assay.verdicts.drop_test import permutation_p, sign_flip_p
from assay.core.errors import ConfigError
from assay.verdicts.regression import history
from assay.store.warehouse import Warehouse
from verdict_runs import outcomes, write_outcomes

N = 32


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _series(path, misses: int, recovers: bool = False):
    """Three full runs, then two that miss the same ``misses`` questions (and a full one again if ``recovers``)."""
    with Warehouse.open(path) as wh:
        for i in range(3):
            write_outcomes(wh, f"r{i}", outcomes(N, N), minutes=i)
        for i in (3, 4):
            write_outcomes(wh, f"r{i}", outcomes(N, N - misses), minutes=i)
        if recovers:
            write_outcomes(wh, "r5", outcomes(N, N), minutes=5)
    return path


def test_a_drop_beyond_the_tolerance_but_within_noise_is_not_lasting(tmp_path):
    """4 of 32 questions lost in two runs: 0.875 against 1.0, far beyond the tolerance (the old rule called it a
    lasting drop), but p = 2**-4 = 0.0625 >= 0.05; the intervals overlap too."""
    with Warehouse.open(_series(tmp_path / "w.duckdb", 4), read_only=True) as wh:
        h = history(wh, "synthetic", "Success@1", "doc")
    t = h["drop_test"]
    assert h["lasting_drop"] is None
    assert t["candidate"] == {"run_id": "r3", "value": 0.875, "prior_best": 1.0, "prior_best_run": "r0"}
    assert (t["baseline_runs"], t["drop_runs"], t["test"], t["n"]) == (
        ["r0", "r1", "r2"], ["r3", "r4"], "paired sign-flip permutation", N)
    assert (t["baseline_mean"], t["drop_mean"], t["delta"]) == (1.0, 0.875, -0.125)
    assert t["p_value"] == pytest.approx(2 ** -4, abs=0.01) and not t["significant"]
    points = {p["run_id"]: p for p in h["points"]}
    assert points["r3"]["ci_high"] > points["r2"]["ci_low"]  # the intervals overlap


def test_a_drop_significant_against_the_baseline_window_is_lasting(tmp_path):
    """5 of 32 lost: p = 2**-5 = 0.03125 < 0.05, lasting; said in words with the test, alpha and seed."""
    path = _series(tmp_path / "w.duckdb", 5)
    with Warehouse.open(path, read_only=True) as wh:
        h = history(wh, "synthetic", "Success@1", "doc")
        assert h["lasting_drop"] == {"run_id": "r3", "value": 0.84375, "prior_best": 1.0, "prior_best_run": "r0"}
        assert h["drop_test"]["p_value"] == pytest.approx(2 ** -5, abs=0.01) and h["drop_test"]["significant"]
        # a stricter alpha turns the same drop into noise
        assert history(wh, "synthetic", "Success@1", "doc", alpha=0.01)["lasting_drop"] is None
    out = invoke("history", "--pipeline", "synthetic", "--metric", "Success@1", "--level", "doc",
                 "--warehouse", path)
    assert out.exit_code == 0
    last = out.stdout.splitlines()[-2:]
    assert last[0] == ("a lasting drop began at run r3 (0.844; best before it 1.000 at r0): no later run came back "
                       "within 0.02")
    p = h["drop_test"]["p_value"]
    assert last[1] == ("test: the 2 run(s) from r3 on (0.844) against the baseline window of the 3 run(s) before it "
                       f"(1.000): change -0.156, p = {p:.4f} < alpha 0.05 (paired sign-flip permutation test over 32 "
                       "questions, one-sided, 10000 resamples, seed 0)")
    calm = invoke("history", "--pipeline", "synthetic", "--metric", "Success@1", "--level", "doc", "--alpha", "0.01",
                  "--warehouse", path)
    assert calm.stdout.splitlines()[-2] == (
        "no lasting drop: from run r3 on no run came back within 0.02 of the best before it (1.000 at r0), but the "
        "fall is not significant")
    assert f"p = {p:.4f} >= alpha 0.01" in calm.stdout.splitlines()[-1]


def test_the_baseline_window_is_the_runs_just_before_the_drop(tmp_path):
    """With --baseline-window 1 only r2 is the baseline; the answer is the same here (r0-r2 are equal)."""
    with Warehouse.open(_series(tmp_path / "w.duckdb", 5), read_only=True) as wh:
        t = history(wh, "synthetic", "Success@1", "doc", window=1)["drop_test"]
        assert t["baseline_runs"] == ["r2"] and t["window"] == 1
        with pytest.raises(ConfigError, match="--baseline-window must be a whole number of runs, at least 1"):
            history(wh, "synthetic", "Success@1", "doc", window=0)


def test_a_recovered_drop_has_no_candidate_to_test(tmp_path):
    with Warehouse.open(_series(tmp_path / "w.duckdb", 8, recovers=True), read_only=True) as wh:
        h = history(wh, "synthetic", "Success@1", "doc")
    assert (h["lasting_drop"], h["drop_test"]) == (None, None)


# -- the tests themselves, against exact enumeration and scipy ----------------------------------------------

def _exact_sign_flip(diffs):
    observed = sum(diffs) / len(diffs)
    flips = [sum(s * d for s, d in zip(signs, diffs)) / len(diffs)
             for signs in itertools.product((1, -1), repeat=len(diffs))]
    return sum(f <= observed + 1e-12 for f in flips) / len(flips)


@pytest.mark.parametrize("diffs", [[-1, -1, -1], [-0.5, 0.25, -0.75, -0.125, 0.5, -1.0, -0.25, -0.5],
                                   [0.2, 0.1, -0.05, 0.3], [-1, -1, -1, -1, -1]])
def test_sign_flip_p_is_the_exact_enumeration(diffs):
    assert sign_flip_p(diffs, seed=3) == pytest.approx(_exact_sign_flip(diffs), abs=0.012)


def test_no_change_at_all_has_p_one():
    assert sign_flip_p([0.0] * 10, seed=0) == 1.0


def test_permutation_p_is_the_exact_enumeration_and_scipys():
    from scipy.stats import permutation_test

    before, after = [1, 1, 1, 1], [0, 0, 0, 0]
    assert permutation_p(before, after, seed=0) == pytest.approx(1 / 70, abs=0.005)  # one split in C(8, 4)
    before, after = [0.9, 0.7, 0.8, 0.6, 0.75], [0.65, 0.8, 0.5, 0.55, 0.7, 0.6]
    ref = permutation_test((after, before), lambda x, y: sum(x) / len(x) - sum(y) / len(y),
                           permutation_type="independent", alternative="less", n_resamples=50_000, random_state=1)
    assert permutation_p(before, after, seed=0) == pytest.approx(ref.pvalue, abs=0.012)


def test_the_same_history_gives_the_same_p(tmp_path):
    with Warehouse.open(_series(tmp_path / "w.duckdb", 4), read_only=True) as wh:
        first = history(wh, "synthetic", "Success@1", "doc")["drop_test"]["p_value"]
        assert history(wh, "synthetic", "Success@1", "doc")["drop_test"]["p_value"] == first


# -- kinds of run ------------------------------------------------------------------------------------------

def test_sweep_ablation_and_rescore_runs_are_left_out_unless_asked(tmp_path):
    """A pipeline's own runs at 1.0, and a sweep's two points, an ablation's rung and a derived run at 0.5 (a
    sweep's other chunk sizes would read as a drop): left out and counted by default, shown with --include."""
    path = tmp_path / "w.duckdb"
    with Warehouse.open(path) as wh:
        own = [write_outcomes(wh, f"r{i}", outcomes(N, N), minutes=i) for i in range(3)]
        for minutes, run_id in enumerate(("s1", "s2", "a1", "d1"), 3):
            write_outcomes(wh, run_id, outcomes(N, N // 2), minutes=minutes)
        # what `assay sweep`, `assay ablate` and `assay rescore` store of the runs they make
        wh.con.execute("UPDATE runs SET sweep_id = 'sweep-x' WHERE run_id IN ('s1', 's2')")
        wh.con.execute("""UPDATE runs SET stats = '{"ablation": {"ablation_id": "ablation-x"}}' WHERE run_id = 'a1'""")
        wh.con.execute("UPDATE runs SET kind = 'rescore', source_run_id = 'r2' WHERE run_id = 'd1'")
        h = history(wh, "synthetic", "Success@1", "doc")
        assert [p["run_id"] for p in h["points"]] == [r.run_id for r in own]
        assert {p["kind"] for p in h["points"]} == {"run"}
        assert h["excluded"] == {"ablation": 1, "rescore": 1, "sweep": 2} and h["lasting_drop"] is None
        with_sweep = history(wh, "synthetic", "Success@1", "doc", include=("sweep",))
        assert [(p["run_id"], p["kind"]) for p in with_sweep["points"]] == [
            ("r0", "run"), ("r1", "run"), ("r2", "run"), ("s1", "sweep"), ("s2", "sweep")]
        assert with_sweep["excluded"] == {"ablation": 1, "rescore": 1}
        assert with_sweep["lasting_drop"]["run_id"] == "s1"  # asked for, the sweep's points join the drop search
        every = history(wh, "synthetic", "Success@1", "doc", include=("sweep", "ablation", "rescore", "revalidate"))
        assert [p["kind"] for p in every["points"]][3:] == ["sweep", "sweep", "ablation", "rescore"]
        with pytest.raises(ConfigError, match="--include sweeps: not a kind of run; known: sweep, ablation, rescore"):
            history(wh, "synthetic", "Success@1", "doc", include=("sweeps",))
    # read through Ibis (a source without a DuckDB connection of its own, as a lake on Spark): the same kinds
    ibis = history(Warehouse.brief(path), "synthetic", "Success@1", "doc", include=("ablation",))
    assert [(p["run_id"], p["kind"]) for p in ibis["points"]][3:] == [("a1", "ablation")]
    assert ibis["excluded"] == {"rescore": 1, "sweep": 2}
    out = invoke("history", "--pipeline", "synthetic", "--metric", "Success@1", "--level", "doc", "--warehouse", path)
    lines = out.stdout.splitlines()
    assert lines[1] == ("note: not shown: 1 ablation, 1 rescore, 2 sweep run(s) of this pipeline (--include "
                        "ablation,rescore,sweep or --all-kinds shows them)")
    assert lines[2].split() == ["run", "started", "value", "95%", "CI", "n"]  # no kind column: all are runs
    assert lines[-1] == "no lasting drop (tolerance 0.02)"
    shown = invoke("history", "--pipeline", "synthetic", "--metric", "Success@1", "--level", "doc", "--include",
                   "sweep", "--format", "json", "--warehouse", path)
    data = json.loads(shown.stdout)
    assert [p["kind"] for p in data["points"]] == ["run"] * 3 + ["sweep"] * 2 and data["included"] == ["sweep"]
    table = invoke("history", "--pipeline", "synthetic", "--metric", "Success@1", "--level", "doc", "--all-kinds",
                   "--warehouse", path)
    assert table.stdout.splitlines()[1].split()[:3] == ["run", "started", "kind"]
    assert "not shown" not in table.stdout and len([x for x in table.stdout.splitlines() if " sweep " in x]) == 2
