"""One sign convention in every output that shows a change: change = B - A (candidate or later minus baseline or
earlier), so a drop is negative, and the words beside it agree (won/lost, ▲/▼, higher/lower, ok/REGRESSED, a
lasting drop). Each command runs on a case where B is clearly better than A and one where it is clearly worse,
in every format it offers.

The runs (verdict_runs.py, 32 questions of Success@1 0/1): ``lo`` hits questions 0-7 (0.250), ``hi`` hits 0-27
(0.875), ``lo2`` (later) hits 0-7 again. From lo to hi 20 questions are won and none lost: a change of +20/32 =
+0.625 with McNemar's exact p = 2 x 2**-20; from hi to lo the mirror image, -0.625.
"""

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from assay.cli import cli
from verdict_runs import outcomes, write_outcomes

CHANGE = 20 / 32


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from assay.store.warehouse import Warehouse

    path = tmp_path_factory.mktemp("signs") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "lo", outcomes(32, 8, first_miss=8), minutes=0)
        write_outcomes(wh, "hi", outcomes(32, 28, first_miss=28), minutes=1)
        write_outcomes(wh, "lo2", outcomes(32, 8, first_miss=8), minutes=2)
    return path


def invoke(runs, *args, code=0):
    out = CliRunner().invoke(cli, [*args, "--warehouse", str(runs)])
    assert out.exit_code == code, out.output
    return out.stdout


# B better than A (lo -> hi), then B worse than A (hi -> lo): the sign of the change and the word that goes with it
CASES = [("lo", "hi", +1), ("hi", "lo", -1)]


@pytest.mark.parametrize("a, b, sign", CASES)
def test_compare(runs, a, b, sign):
    text = invoke(runs, "compare", a, b)
    assert "change = B - A" in text
    row = next(line.split() for line in text.splitlines() if line.startswith("Success@1 ") and " doc " in line)
    assert row[:5] == ["Success@1", "doc", f"{0.25 if sign > 0 else 0.875:.3f}", f"{0.875 if sign > 0 else 0.25:.3f}",
                       f"{sign * CHANGE:+.3f}"]
    low, high = (float(x) for x in re.findall(r"[+-]\d\.\d{3}", " ".join(row[5:7])))
    assert (low > 0) if sign > 0 else (high < 0)  # the interval lies on the side of the change
    assert re.search(r"flipped on Success@3 \(doc level\): (\d+) won, (\d+) lost", text).groups() == (
        ("20", "0") if sign > 0 else ("0", "20"))

    data = json.loads(invoke(runs, "compare", a, b, "--format", "json"))
    (r,) = [r for r in data["rows"] if (r["metric"], r["level"], r["slice"]) == ("Success@1", "doc", "all")]
    assert (data["a"]["run_id"], data["b"]["run_id"]) == (a, b)
    assert r["delta"] == pytest.approx(sign * CHANGE) == pytest.approx(r["b"] - r["a"])
    assert (r["ci_low"] > 0 if sign > 0 else r["ci_high"] < 0) and r["p_value"] < 0.05


@pytest.mark.slow  # ~1.9 s a case: every report format of several runs
@pytest.mark.parametrize("a, b, sign", CASES)
def test_report_of_several_runs(runs, a, b, sign, tmp_path):
    args = ["report", a, b, "-m", "Success@1", "--level", "doc"]
    mark = "▲" if sign > 0 else "▼"
    text = invoke(runs, *args)
    assert f"{0.875 if sign > 0 else 0.25:.3f}{mark} [" in text and text.count(mark) == 2  # the cell and the note
    assert "▲ / ▼: higher / lower than run 1" in text and "the run minus run 1: a drop is negative" in text
    assert mark in invoke(runs, *args, "--format", "markdown")

    (row,) = [r for r in json.loads(invoke(runs, *args, "--format", "json"))["rows"] if r["run_id"] == b]
    assert row["delta"] == pytest.approx(sign * CHANGE) and row["p_holm"] < 0.05
    (cells,) = [r for r in csv.DictReader(io.StringIO(invoke(runs, *args, "--format", "csv"))) if r["run_id"] == b]
    assert float(cells["delta"]) == pytest.approx(sign * CHANGE)

    page = tmp_path / "runs.html"
    invoke(runs, *args, "--format", "html", "-o", str(page))
    html = page.read_text(encoding="utf-8")
    (tr,) = re.findall(rf'<tr data-measure="Success@1" data-level="doc" data-run="{b}"[^>]*>.*?</tr>', html)
    assert f'<td class="num delta">{sign * CHANGE:+.3f}</td>' in tr
    assert tr.endswith(f"<td>{'higher' if sign > 0 else 'lower'}</td></tr>")
    assert "Each later run minus run 1 (a drop is negative)" in html


def test_regress(runs):
    """hi after lo is a clear gain: change +0.625, ok, exit 0; lo2 after hi a clear drop: -0.625, REGRESSED, 7."""
    drop = ["--max-drop", "Success@1:doc=0.05"]
    for candidate, baseline, sign, code, word in (("hi", "lo", +1, 0, "ok"), ("lo2", "hi", -1, 7, "REGRESSED")):
        text = invoke(runs, "regress", candidate, "--baseline", baseline, *drop, code=code)
        assert "change (candidate - baseline)" in text
        row = next(r for r in (line.split() for line in text.splitlines()) if r[1:3] == ["Success@1:doc", "all"])
        assert row[0] == word and row[5:7] == [f"{sign * CHANGE:+.3f}", "-0.050"]  # the change, the floor below 0
        data = json.loads(invoke(runs, "regress", candidate, "--baseline", baseline, *drop, "--format", "json",
                                 code=code))
        (c,) = [c for c in data["checks"] if c["slice"] == "all"]
        assert c["change"] == pytest.approx(sign * CHANGE) == pytest.approx(c["b"] - c["a"])
        assert c["null"] == -0.05 and c["max_drop"] == 0.05  # the floor is a negative change; the option its size
        assert (c["decision"], data["regressed"]) == (("ok", False) if sign > 0 else ("regressed", True))
        assert c["ci_high"] < c["null"] if sign < 0 else c["ci_high"] > 0


def test_history(runs, tmp_path):
    """lo -> hi -> lo2 ends in a lasting drop whose change is negative (the later window minus the earlier one),
    in the text, the JSON and the HTML page."""
    base = ["history", "--pipeline", "synthetic", "--metric", "Success@1", "--level", "doc"]
    text = invoke(runs, *base)
    assert "a lasting drop began at run lo2 (0.250; best before it 0.875 at hi)" in text
    # the two before lo2 average (0.25 + 0.875) / 2 = 0.5625; lo2 is 0.25: change -0.3125
    assert "against the baseline window of the 2 run(s) before it (0.562): change -0.312, p =" in text
    data = json.loads(invoke(runs, *base, "--format", "json"))
    assert data["lasting_drop"]["run_id"] == "lo2"
    t = data["drop_test"]
    assert t["delta"] == pytest.approx(t["drop_mean"] - t["baseline_mean"]) == pytest.approx(0.25 - 0.5625)
    page = tmp_path / "history.html"
    invoke(runs, *base, "--format", "html", "-o", str(page))
    assert "A lasting drop began at run" in page.read_text(encoding="utf-8")


def test_history_of_a_rise_has_no_drop(tmp_path):
    """lo -> hi only: a clear rise, no drop to test."""
    from assay.store.warehouse import Warehouse

    path = tmp_path / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "lo", outcomes(32, 8, first_miss=8), minutes=0)
        write_outcomes(wh, "hi", outcomes(32, 28, first_miss=28), minutes=1)
    base = ["history", "--pipeline", "synthetic", "--metric", "Success@1", "--level", "doc"]
    assert invoke(path, *base).splitlines()[-1] == "no lasting drop (tolerance 0.02)"
    data = json.loads(invoke(path, *base, "--format", "json"))
    assert data["lasting_drop"] is None and data["drop_test"] is None
