"""The other HTML pages on real demo runs: several runs (`assay report A B --format html`), a sweep, a history,
and one run with an answer stage; read with html.parser, figures checked against --format json."""

import json
import re

import pytest
from click.testing import CliRunner

from assay.cli import cli
from conftest import DEMO
from html_dom import parse

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def ok(*args):
    out = invoke(*args)
    assert out.exit_code == 0, out.output
    return out


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    """bm25 runs of the demo at chunk sizes 800 and 400 (the second with extractive answers), and a sweep."""
    root = tmp_path_factory.mktemp("html_pages")
    path = root / "w.duckdb"
    ids = []
    for extra in ([], ["--chunk-size", "400", "--generator", "extractive"]):
        out = ok("run", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--warehouse", path, *extra)
        ids.append(out.stdout.strip().splitlines()[-1])
    ok("sweep", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--size", "400", "--size", "1600", "--warehouse", path)
    return {"root": root, "path": path, "ids": ids}


def page(wh, name, *args):
    target = wh["root"] / name
    out = ok(*args, "--format", "html", "-o", target, "--warehouse", wh["path"])
    assert out.stderr == f"wrote {target} ({target.stat().st_size} bytes)\n"
    text = target.read_text()
    assert "http:" not in text and "https:" not in text
    return text, parse(text)


def svg_of(dom, name):
    (fig,) = dom.find_all("figure", cls="chart", data_chart=name)
    svg = fig.children_nodes()[0]
    assert svg.tag == "svg" and len(svg.find_all()) > 20
    return svg


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_several_runs(wh):
    a, b = wh["ids"]
    text, dom = page(wh, "runs.html", "report", a, b)
    assert dom.find("body").attrs["data-report"] == "runs"
    assert "script-src 'none'" in dom.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert dom.find_all("script") == []
    expected = json.loads(ok("report", a, b, "--format", "json", "--warehouse", wh["path"]).stdout)
    table = dom.find("table", id="deltas")
    assert len(table.find_all("tr", data_measure=True)) == len(expected["rows"])
    for r in expected["rows"]:
        (tr,) = table.find_all("tr", data_measure=r["metric"], data_level=r["level"], data_run=r["run_id"])
        for cls, key in (("value", "value"), ("ci-low", "ci_low"), ("ci-high", "ci_high")):
            assert tr.find("td", cls=cls).text() == f"{r[key]:.3f}"
        assert tr.find("td", cls="delta").text() == ("" if r["delta"] is None else f"{r['delta']:+.3f}")
        p = tr.find("td", cls="p-holm").text()
        assert p == ("–" if r["p_holm"] is None else "<0.001" if r["p_holm"] < 0.001 else f"{r['p_holm']:.3f}")
    svg_of(dom, "deltas")

    flips = json.loads(ok("compare", a, b, "--format", "json", "--warehouse", wh["path"]).stdout)["flips"]
    flipped = [f["query_id"] for f in flips["won"] + flips["lost"]]
    assert flipped  # 800 vs 400 characters: some questions flip on Success@3 at document level
    section = dom.find("section", id="flips")
    divs = section.find_all("div", cls="flip")
    assert [d.attrs["data-qid"] for d in divs] == flipped
    for d in divs:
        rankings = d.find_all("div", cls="ranking")
        assert [r.attrs["data-run"] for r in rankings] == [a, b]
        for r in rankings:
            assert r.find("div", data_stage="final").find_all("li", cls="hit")
    assert section.find_all("mark", cls="gold-span")
    first = flips["won"][0] if flips["won"] else flips["lost"][0]
    head = _norm(section.find("div", data_qid=first["query_id"]).find("h4").text())
    assert f"rank {first['rank_a']}" in head and f"rank {first['rank_b']}" in head


def _norm(text):
    return " ".join(text.split())


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_sweep(wh):
    text, dom = page(wh, "sweep.html", "report", "--sweep", "latest")
    assert dom.find("body").attrs["data-report"] == "sweep"
    expected = json.loads(ok("report", "--sweep", "latest", "--format", "json", "--warehouse", wh["path"]).stdout)
    svg = svg_of(dom, "pareto")
    assert "SpanRecall@5" in svg.text() and "tokens@5" in svg.text()
    rows = dom.find("table", id="sweep").find_all("tr", data_point=True)
    assert [r.attrs["data-run"] for r in rows] == [p["run_id"] for p in expected["points"]]
    for tr, p in zip(rows, expected["points"]):
        cells = _norm(tr.text())
        cell = p["measures"]["SpanRecall@1000tok"]
        assert f"{cell['value']:.3f} [{cell['ci_low']:.3f}, {cell['ci_high']:.3f}]" in cells
        assert ("best" in tr.classes) == (p["verdict"] == "best")
        if p["verdict"] != "best":  # the change against the best point, with the interval of its paired test
            assert f"{p['change']:+.3f} [{p['change_ci_low']:+.3f}, {p['change_ci_high']:+.3f}]" in cells
    # the page opens with the verdict in words the JSON carries and the text output's first line says
    (said,) = [_norm(li.text()) for li in dom.find("section", id="summary").find_all("li")]
    assert said == _norm(expected["verdict"]["sentence"])
    assert said == _norm(ok("report", "--sweep", "latest", "--warehouse", wh["path"]).stdout.splitlines()[0])


def test_a_history(wh):
    """The two runs of bm25 by default (the sweep's two points are named as left out), all four with
    --include sweep."""
    text, dom = page(wh, "history.html", "history", "--pipeline", "bm25", "--metric", "nDCG@10")
    assert "Not shown: 2 sweep run(s) of this pipeline" in dom.find("section", id="header").text()
    rows = dom.find("table", id="history").find_all("tr", data_run=True)
    assert [r.attrs["data-run"] for r in rows] == wh["ids"]
    text, dom = page(wh, "history.html", "history", "--pipeline", "bm25", "--metric", "nDCG@10", "--include", "sweep")
    assert dom.find("body").attrs["data-report"] == "history"
    expected = json.loads(ok("history", "--pipeline", "bm25", "--metric", "nDCG@10", "--format", "json",
                             "--include", "sweep", "--warehouse", wh["path"]).stdout)
    svg_of(dom, "history")
    rows = dom.find("table", id="history").find_all("tr", data_run=True)
    assert [r.attrs["data-run"] for r in rows] == [p["run_id"] for p in expected["points"]] and len(rows) == 4
    assert [p["kind"] for p in expected["points"]] == ["run", "run", "sweep", "sweep"]
    for tr, p in zip(rows, expected["points"]):
        assert [tr.find("td", cls=c).text() for c in ("value", "ci-low", "ci-high")] == [
            f"{p[k]:.3f}" for k in ("value", "ci_low", "ci_high")]
    out = invoke("history", "--pipeline", "bm25", "--metric", "nDCG@10", "--format", "html", "--warehouse", wh["path"])
    assert out.exit_code == 2 and "give -o FILE" in out.stderr


def test_a_lasting_drop_is_marked():
    from assay.present.html import history

    points = [{"run_id": f"r{i}", "started_at": f"2026-01-0{i + 1}T00:00:00", "value": v, "ci_low": v - 0.1,
               "ci_high": v + 0.1, "n": 50, "judgments_hash": "j", "corpus_hash": "c"}
              for i, v in enumerate([0.7, 0.72, 0.6, 0.61])]
    h = {"pipeline": "bm25", "metric": "nDCG@10", "level": "chunk", "slice": "all", "tolerance": 0.02,
         "points": points, "comparable_groups": 1, "incomplete": [],
         "lasting_drop": {"run_id": "r2", "value": 0.6, "prior_best": 0.72, "prior_best_run": "r1"}}
    dom = parse(history.build(h))
    assert "lasting drop began" in svg_of(dom, "history").text()
    assert [tr.attrs["data-run"] for tr in dom.find_all("tr", cls="drop")] == ["r2"]
    assert "A lasting drop began at run r2 (0.600; best before it 0.720 at r1)" in _norm(
        dom.find("section", id="header").text())


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_one_run_with_answers_shows_them(wh):
    text, dom = page(wh, "answers.html", "report", wh["ids"][1])
    assert [f.attrs["data-chart"] for f in dom.find_all("figure", cls="chart")].count("funnel") == 1
    answers = dom.find_all("div", cls="answer")
    assert len(answers) == len(dom.find_all("details", cls="drill")) == 71
    assert any(a.find_all("li", cls="claim") for a in answers)
    assert any(a.find_all("li", cls="citation") for a in answers)
    assert any("refusal" in a.text() for a in answers)
    heads = [th.text() for th in dom.find("table", id="questions").find_all("th")]
    assert heads[-1] == "answer"
    assert re.search(r"Through the answer stage", dom.find("section", id="attribution").text())


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_several_runs_break_the_headline_deltas_down_by_slice_as_compare_does(wh):
    """Every by-slice row `assay compare` prints (its headline measures in each category, form and hard class) is
    on the page with the same figures, and the page opens with the summary of those runs."""
    from assay.present.html.page import anchor
    from assay.present.html.runs import flip_anchor

    a, b = wh["ids"]
    text, dom = page(wh, "runs-slices.html", "report", a, b)
    compared = json.loads(ok("compare", a, b, "--format", "json", "--warehouse", wh["path"]).stdout)
    terminal = ok("compare", a, b, "--warehouse", wh["path"]).stdout
    by_slice = terminal.split("by slice (headline metrics", 1)[1]
    shown = [line.split()[:3] for line in by_slice.splitlines() if "=" in line.split(" ", 1)[0]]
    assert len(shown) == 30  # 10 slices x 3 measures
    section = dom.find("section", id="slices")
    rows = section.find("table", cls="slice-deltas", data_run=b).find_all("tr", data_slice=True)
    assert [[r.attrs["data-slice"], r.attrs["data-measure"], r.attrs["data-level"]] for r in rows] == shown
    expected = {(r["slice"], r["metric"], r["level"]): r for r in compared["rows"]}
    for tr in rows:
        r = expected[(tr.attrs["data-slice"], tr.attrs["data-measure"], tr.attrs["data-level"])]
        cells = [td.text() for td in tr.find_all("td")]
        p = "<0.001" if r["p_holm"] < 0.001 else f"{r['p_holm']:.3f}"
        assert cells[3:] == [str(r["n"]), f"{r['a']:.3f}", f"{r['b']:.3f}", f"{r['delta']:+.3f}",
                             f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]", p], cells
        assert ("significant" in tr.classes) == (r["p_holm"] < 0.05)
    svg_of(dom, "slice-deltas-2")

    summary = [_norm(li.text()) for li in dom.find("section", id="summary").find_all("li")]
    s3 = {(r["metric"], r["level"]): r for r in compared["rows"] if r["slice"] == "all"}[("Success@3", "doc")]
    # 800- and 400-character chunks: different units, so the summary compares at document level
    assert summary[0].startswith("The runs rank different units")
    # the verdict in words, as the text report says it: better/worse exactly when compare's paired interval
    # excludes 0
    word = ("is better than" if s3["ci_low"] > 0 else "is worse than" if s3["ci_high"] < 0 else "cannot be told from")
    assert summary[1].startswith(f"Run 2 ({b}) {word} run 1 ({a}) on Success@3 (doc)")
    assert f"from {s3['a']:.3f} to {s3['b']:.3f}; 95% CI of the change {s3['ci_low']:+.3f} to {s3['ci_high']:+.3f}" \
        in summary[1]
    text_report = ok("report", a, b, "--warehouse", wh["path"]).stdout
    assert _norm(text_report.splitlines()[0]) == summary[1]
    f = compared["flips"]
    assert summary[2] == (f"On Success@3 at doc level, {len(f['won'])} questions went from miss to hit in run 2 and "
                          f"{len(f['lost'])} from hit to miss.")

    table = dom.find("table", cls="flipped", data_run=b)
    flipped = [x["query_id"] for x in f["won"] + f["lost"]]
    assert [tr.attrs["data-qid"] for tr in table.find_all("tr", cls="q")] == flipped
    panels = {d.attrs["id"]: d for d in dom.find("section", id="flips").find_all("div", cls="flip")}
    for tr in table.find_all("tr", cls="q"):
        qid = tr.attrs["data-qid"]
        href = tr.find("a", cls="qid").attrs["href"]
        assert href == f"#r2-{anchor(qid)}" == f"#{flip_anchor(2, qid)}" and panels[href[1:]].attrs["data-qid"] == qid
