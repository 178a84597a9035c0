"""The sweep's verdict rules, each on data where it decides: real DuckDB warehouses holding runs with chosen
rankings (tests/synthetic.py), tagged as the points of a sweep the way `assay sweep` tags them, read back by
``assay.runs.sweep.table`` and printed by the CLI.

The documents are ``"the " * 250``: the word piece i covers characters [4i, 4i + 3), so a chunk [4a, 4b) costs
exactly b - a tokens, and every expected figure below is counted by hand, never with the code's formula. The
selection measure changes by 0 or 1 on each question in every comparison here, so the paired inference is Tango's
score statistic: its p-value is McNemar's without continuity correction, computed here as scipy's
chi2.sf((b - c)**2 / (b + c), 1) (b questions won, c lost), and its interval's ends are found by scipy's brentq
on Tango's statistic, written below from its definition.
Each test names the hand mutation of src/assay/runs/sweep.py or sql/reports/context_tokens.sql it catches; each was
made and seen to fail.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from scipy.optimize import brentq
from scipy.stats import chi2, norm

from assay.runs import sweep
from assay.inputs.chunking import Chunk
from assay.cli import cli
from assay.store.warehouse import Warehouse
from synthetic import QuerySpec, Synthetic, write_synthetic

TEXT = "the " * 250
DOCS = ["d0.md", "d1.md"]


def span(doc: str, a: int, b: int) -> Chunk:
    """The chunk of word pieces [a, b) of ``doc``: characters [4a, 4b), b - a tokens."""
    return Chunk(doc, a, 4 * a, 4 * b, TEXT[4 * a:4 * b])


GOLD = ("d0.md", 0, 40, 1)  # the gold text of every question: word pieces 0-9 of d0.md (40 characters)
WIDE = span("d0.md", 0, 25)  # covers the gold, 25 tokens
EXACT = span("d0.md", 0, 10)  # is the gold, 10 tokens
HALF = span("d0.md", 0, 5)  # half the gold (20 of 40 characters), 5 tokens
MISS = span("d1.md", 0, 10)  # no gold, 10 tokens
OTHER = span("d1.md", 10, 20)  # no gold, 10 tokens
SHORT_MISS = span("d1.md", 20, 25)  # no gold, 5 tokens
CHUNKS = [WIDE, EXACT, HALF, MISS, OTHER, SHORT_MISS]


def write_sweep(path, points: list[list[list[Chunk]]], k: int = 5, budget: int = 1000, alpha: float = 0.05,
                select: str | None = None, chunks=CHUNKS) -> str:
    """A warehouse at ``path`` with one sweep whose point i ranks, for question j, ``points[i][j]`` (best first).
    Every question's gold is GOLD. Returns the sweep id."""
    sweep_id = "sweep-test"
    # the grid is the points written (chunk sizes 100, 200, ...): a grid larger than its points is a stopped sweep
    spec = {**sweep.DEFAULTS, "sizes": [100 * i for i in range(1, len(points) + 1)], "budget": budget, "k": k,
            "alpha": alpha,
            "select": select or f"SpanRecall@{budget}tok", "skipped": []}
    with Warehouse.open(path) as wh:
        for i, rankings in enumerate(points, 1):
            syn = Synthetic(DOCS, list(chunks))
            for j, ranking in enumerate(rankings):
                syn.queries.append(QuerySpec(f"q{j:02d}", [GOLD], [c.chunk_id for c in ranking]))
            write_synthetic(wh, syn, run_id=f"run-{i}", texts={d: TEXT for d in DOCS})
        wh.con.execute("INSERT INTO sweeps VALUES (?, TIMESTAMP '2026-01-01', ?, ?, ?)",
                       [sweep_id, json.dumps(spec), "c" * 64, "j" * 64])
        for i in range(1, len(points) + 1):
            wh.con.execute("INSERT INTO sweep_points VALUES (?, ?, ?, 'synthetic', ?, 0, 'synthetic')",
                           [sweep_id, i, f"run-{i}", 100 * i])
    return sweep_id


def read(path, sweep_id="sweep-test") -> dict:
    with Warehouse.open(path, read_only=True) as wh:
        return sweep.table(wh, sweep_id)


def printed(path) -> list[str]:
    out = CliRunner().invoke(cli, ["report", "--sweep", "latest", "--warehouse", str(path)], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[1] == "" and lines[2].startswith("sweep ")  # the verdict in words, then the table's own lines
    return lines[2:]


# -- the best point: ties on the selection measure go to fewer tokens@k, then to the earlier point -------------
@pytest.fixture(scope="module")
def tied(tmp_path_factory):
    """Three points, 4 questions, every one retrieving all of the gold text (SpanRecall@1000tok 1 on each):
    point 1 with a 25-token chunk, points 2 and 3 with the 10-token gold chunk itself."""
    path = tmp_path_factory.mktemp("tied") / "w.duckdb"
    write_sweep(path, [[[WIDE]] * 4, [[EXACT]] * 4, [[EXACT]] * 4])
    return path


def test_a_tie_on_the_selection_measure_goes_to_fewer_tokens_then_the_earlier_point(tied):
    """Kills: the tie broken toward MORE tokens@k (best would be point 1), and grid order reversed (point 3)."""
    result = read(tied)
    assert [p["select"]["value"] for p in result["points"]] == [1.0, 1.0, 1.0]
    assert [p["tokens@5"] for p in result["points"]] == [25.0, 10.0, 10.0]
    assert result["best"] == 2
    assert [p["verdict"] for p in result["points"]] == ["indistinguishable", "best", "indistinguishable"]
    # a change of exactly 0 on each of 4 questions: p = 1. With no question changed, Tango's restricted share of
    # lost questions is max(0, -delta) (it leaves the most to the unchanged ones), so V = |delta| (1 - |delta|),
    # |Z| = sqrt(n |delta| / (1 - |delta|)), and |Z| <= k ends at |delta| = k**2 / (n + k**2): 0.490 for n = 4
    k2 = norm.ppf(0.975) ** 2
    for p in (result["points"][0], result["points"][2]):
        assert (p["change"], p["p_value"], p["p_holm"]) == (0, 1, 1)
        assert (p["change_ci_low"], p["change_ci_high"]) == pytest.approx((-k2 / (4 + k2), k2 / (4 + k2)), abs=1e-12)
    best = result["points"][1]  # compared with nothing: every figure of the comparison is absent, not 0
    assert [best[f] for f in ("change", "change_ci_low", "change_ci_high", "test", "p_value", "p_holm")] == [None] * 6
    lines = printed(tied)
    assert next(line for line in lines if line.startswith("best: ")).startswith(
        "best: point 2 by SpanRecall@1000tok (ties: fewer tokens@5, then the earlier point)")
    assert lines[5].split()[:2] == ["2", "synthetic"] and "BEST" in lines[5]


# -- Pareto: level on both measures keeps both points; at least as good on both and better on one dominates -----
def test_pareto_front_keeps_twins_and_drops_a_weakly_dominated_point(tied):
    """Points 2 and 3 are level on SpanRecall@5 (1) and tokens@5 (10): neither dominates the other, both are on
    the front (kills dominance without 'strictly better in one', which drops both). Point 1 has the same recall
    with 25 tokens: weakly dominated, off the front (kills dominance made strict on both measures, and the
    front dropped: every point on it)."""
    result = read(tied)
    assert [p["SpanRecall@5"] for p in result["points"]] == [1.0, 1.0, 1.0]
    assert [p["pareto"] for p in result["points"]] == [False, True, True]


@pytest.fixture(scope="module")
def pareto(tmp_path_factory):
    """Four points, 2 questions; (SpanRecall@5, tokens@5) by hand:
    1: WIDE on both            (1.0, 25)
    2: HALF on both            (0.5, 5)
    3: HALF, then MISS         (0.5, 15)   weakly dominated by 2 (same recall, more tokens)
    4: MISS, then OTHER        (0.0, 20)   dominated by 2 (less recall, more tokens)
    and a fifth, EXACT then HALF on one question and WIDE on the other: (1.0, (15 + 25) / 2 = 20), which
    dominates point 1 on tokens alone (same recall); a sixth, SHORT_MISS on both: (0.0, 5), dominated by 2 on
    recall alone (same tokens)."""
    path = tmp_path_factory.mktemp("pareto") / "w.duckdb"
    write_sweep(path, [[[WIDE]] * 2, [[HALF]] * 2, [[HALF, MISS]] * 2, [[MISS, OTHER]] * 2, [[EXACT, HALF], [WIDE]],
                       [[SHORT_MISS]] * 2])
    return path


def test_pareto_front_from_hand_counted_recall_and_tokens(pareto):
    result = read(pareto)
    assert [(p["SpanRecall@5"], p["tokens@5"]) for p in result["points"]] == [
        (1.0, 25.0), (0.5, 5.0), (0.5, 15.0), (0.0, 20.0), (1.0, 20.0), (0.0, 5.0)]
    # the front, by the definition: 2 (the most recall at the fewest tokens) and 5 (the most recall at the fewest
    # tokens reaching it). Kills dominance that needs strictly fewer tokens (6 would stay on the front)
    assert [p["pareto"] for p in result["points"]] == [False, True, False, False, True, False]


# -- tokens@k: the top k results of every answerable question, a question that returned nothing counting 0 -------
@pytest.fixture(scope="module")
def budgets(tmp_path_factory):
    """k = 2; one point, 4 questions: [WIDE, EXACT, MISS] (top 2: 25 + 10), [HALF] (5), [] (nothing: 0),
    [MISS, HALF] (10 + 5). tokens@2 = (35 + 5 + 0 + 15) / 4 = 13.75 (the top k - 1: (25 + 5 + 0 + 10) / 4 = 10;
    only the questions that returned something: 55 / 3)."""
    path = tmp_path_factory.mktemp("tokens") / "w.duckdb"
    write_sweep(path, [[[WIDE, EXACT, MISS], [HALF], [], [MISS, HALF]]], k=2)
    return path


def test_tokens_at_k_counts_the_top_k_of_every_question_and_nothing_as_0(budgets):
    """Kills: tokens@k over the top k - 1 (10.0), over the top k + 1 (16.25), and averaged over the questions that
    returned something only (18.33)."""
    result = read(budgets)
    (point,) = result["points"]
    assert point["tokens@2"] == 13.75
    assert result["n_questions"] == 4
    # SpanRecall@2 by hand: 1, 0.5, 0 (nothing returned), 0.5
    assert point["SpanRecall@2"] == pytest.approx((1 + 0.5 + 0 + 0.5) / 4)
    assert printed(budgets)[4].split()[-4:] == ["0.500", "14", "BEST", "*"]


# -- indistinguishable reads Holm's adjusted p, never the raw one ------------------------------------------------
def mcnemar_p(won: int, lost: int) -> float:
    """McNemar's test without continuity correction: Tango's score test at 0."""
    return chi2.sf((won - lost) ** 2 / (won + lost), 1)


def tango_z(lost: int, n: int, delta: float) -> float:
    """Tango's score statistic when no question was won and ``lost`` were (every comparison here): the restricted
    share q of lost questions maximises lost log q + (n - lost) log(1 - 2q - delta) over q >= max(0, -delta) (the
    won share q + delta cannot be negative). Setting the derivative to 0 gives q = lost (1 - delta) / (2n); where
    that falls below -delta the likelihood decreases in q there, so q = -delta. Derived here by hand, apart from
    the code's root of a quadratic."""
    q = max(lost * (1 - delta) / (2 * n), -delta, 0.0)
    return (-lost - n * delta) / math.sqrt(n * (2 * q + delta - delta ** 2))


def tango_interval(lost: int, n: int, alpha: float) -> tuple[float, float]:
    """The deltas Tango's test at ``alpha`` does not reject: Z(delta) = +k below the mean change, -k above it."""
    k, mean = norm.ppf(1 - alpha / 2), -lost / n
    return (brentq(lambda x: tango_z(lost, n, x) - k, -1 + 1e-12, mean, xtol=1e-15),
            brentq(lambda x: tango_z(lost, n, x) + k, mean, 1 - 1e-12, xtol=1e-15))


@pytest.fixture(scope="module")
def holm_decides(tmp_path_factory):
    """Three points, 8 questions. Point 1 retrieves the gold text for all 8 (SpanRecall@1000tok 1 each); points
    2 and 3 miss it on 4 questions (0) and find it on 4. Each against the best: four changes of -1 and four of 0,
    McNemar's p = chi2.sf(4, 1) = 0.0455 < 0.05; Holm over the 2 points: both 2 * 0.0455 = 0.091 >= 0.05. Why 4
    lost: a raw p in [0.025, 0.05) is what makes Holm with 2 equal p-values decide against the raw p; 4 lost and
    none won gives 0.0455, well inside (5 gives 0.0253, a hair above 0.025; 3 gives 0.083, not significant)."""
    path = tmp_path_factory.mktemp("holm") / "w.duckdb"
    worse = [[MISS]] * 4 + [[EXACT]] * 4
    write_sweep(path, [[[EXACT]] * 8, worse, worse])
    return path


def test_a_point_significant_before_holm_but_not_after_is_indistinguishable(holm_decides):
    """Kills: 'indistinguishable' read from the raw p (0.0455 < 0.05: 'worse')."""
    result = read(holm_decides)
    raw = mcnemar_p(0, 4)
    assert raw < 0.05 <= 2 * raw
    low, high = tango_interval(4, 8, 0.05)
    assert result["best"] == 1
    for p in result["points"][1:]:
        assert p["p_value"] == pytest.approx(raw, rel=1e-12)
        assert p["p_holm"] == 2 * p["p_value"]  # Holm with m = 2 equal p-values: both times 2
        assert p["verdict"] == "indistinguishable"
        assert p["test"] == "tango-score"
        # the change and its interval: -4/8, and the interval that inverts the same test, so it excludes 0 (p < 0.05)
        assert (p["change"], p["change_ci_low"], p["change_ci_high"]) == pytest.approx((-0.5, low, high), abs=1e-12)
        assert high < 0
    assert all("≈ best (p=0.046, Holm=0.091)" in line for line in printed(holm_decides)[5:7])


@pytest.fixture(scope="module")
def step_down(tmp_path_factory):
    """Three points, 9 questions. Point 1 finds the gold for all 9; point 2 misses it on 7 (p = chi2.sf(7, 1) =
    0.0082), point 3 on 4 (p = chi2.sf(4, 1) = 0.0455). Holm, step down: 2 * 0.0082 = 0.0163 < 0.05, then point 3
    at the full alpha: max(0.0163, 1 * 0.0455) = 0.0455 < 0.05: both worse. Why these counts: point 3's p must lie
    in [0.025, 0.05), below alpha but not below alpha / 2 (Bonferroni gives it 2 * 0.0455 = 0.091), and point 2's
    below alpha / 2 so that Holm takes the second step."""
    path = tmp_path_factory.mktemp("stepdown") / "w.duckdb"
    write_sweep(path, [[[EXACT]] * 9, [[MISS]] * 7 + [[EXACT]] * 2, [[MISS]] * 4 + [[EXACT]] * 5])
    return path


def test_holm_steps_down_a_second_point_is_tested_at_the_full_alpha(step_down):
    """Kills: Holm's step-down replaced by Bonferroni's m * p (point 3: 0.091, 'indistinguishable'); the verdict
    read as p_holm > alpha instead of >= (no effect here) is left to the boundary test below."""
    result = read(step_down)
    p2, p3 = mcnemar_p(0, 7), mcnemar_p(0, 4)
    assert 2 * p2 < 0.05 and 0.025 <= p3 < 0.05
    points = result["points"]
    assert [(p["p_value"], p["p_holm"]) for p in points[1:]] == [
        pytest.approx((p2, 2 * p2), rel=1e-12), pytest.approx((p3, max(2 * p2, p3)), rel=1e-12)]
    assert [p["verdict"] for p in points[1:]] == ["worse", "worse"]
    assert [p["change"] for p in points[1:]] == [-7 / 9, -4 / 9]


def test_holm_p_exactly_at_alpha_is_indistinguishable(holm_decides, tmp_path):
    """alpha set to Holm's p of the fixture above (two points at 0.0455, Holm 0.091): 'indistinguishable' means
    Holm's p >= alpha, so a p exactly at alpha is not worse, and one ulp above it the same points are worse.

    The boundary cannot be the reference value 2 * chi2.sf(4, 1) itself: the code's p (erfc of Z = -2) and scipy's
    chi-square tail differ in the last few bits (0.04550026389635844 and ...857). So alpha is the code's own Holm p,
    read from the fixture (a p-value does not depend on alpha), after checking it against the reference; the test
    is then of the comparison alone. Kills `>=` read as `>`; and, as the interval is checked at this alpha (about
    0.091, not 0.05), alpha dropped from the inference in _against_best."""
    at = read(holm_decides)["points"][1]["p_holm"]
    assert at == pytest.approx(2 * mcnemar_p(0, 4), rel=1e-12)
    worse = [[MISS]] * 4 + [[EXACT]] * 4
    write_sweep(tmp_path / "at.duckdb", [[[EXACT]] * 8, worse, worse], alpha=at)
    result = read(tmp_path / "at.duckdb")
    assert [p["p_holm"] for p in result["points"][1:]] == [at, at]
    assert [p["verdict"] for p in result["points"]] == ["best", "indistinguishable", "indistinguishable"]
    low, high = tango_interval(4, 8, at)
    assert (result["points"][1]["change_ci_low"], result["points"][1]["change_ci_high"]) == pytest.approx(
        (low, high), abs=1e-12)
    assert (low, high) != pytest.approx(tango_interval(4, 8, 0.05), abs=1e-3)
    write_sweep(tmp_path / "above.duckdb", [[[EXACT]] * 8, worse, worse], alpha=math.nextafter(at, 1.0))
    assert [p["verdict"] for p in read(tmp_path / "above.duckdb")["points"]] == ["best", "worse", "worse"]
