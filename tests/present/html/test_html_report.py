"""`assay report --format html` of one run, on real demo runs in a real warehouse, read with html.parser:
the page contract the browser tests rely on, the same figures as --format json, every question and its
drill-down, gold marks, no URL, the CSP hash of the one script, and hostile stored text shown as text."""

import base64
import hashlib
import json
import re
import shutil

import pytest
from click.testing import CliRunner

from assay.cli import cli
from conftest import DEMO, MINI
from html_dom import parse

CORPUS, JUDGMENTS = DEMO / "corpus", DEMO / "judgments.jsonl"
SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A bm25 run of the demo and its report as JSON and as an HTML page."""
    root = tmp_path_factory.mktemp("html_run")
    wh = root / "w.duckdb"
    out = invoke("run", "--corpus", CORPUS, "--judgments", JUDGMENTS, "--warehouse", wh)
    assert out.exit_code == 0, out.output
    run_id = out.stdout.strip().splitlines()[-1]
    page = root / "report.html"
    out = invoke("report", run_id, "--format", "html", "-o", page, "--warehouse", wh)
    assert out.exit_code == 0, out.output
    text = page.read_text(encoding="utf-8")
    report = json.loads(invoke("report", run_id, "--format", "json", "--warehouse", wh).stdout)
    return {"wh": wh, "run_id": run_id, "path": page, "text": text, "dom": parse(text), "report": report,
            "stderr": out.stderr}


def test_the_file_is_written_and_named_on_stderr(demo):
    size = demo["path"].stat().st_size
    assert demo["stderr"] == f"wrote {demo['path']} ({size} bytes)\n"
    assert [p.name for p in demo["path"].parent.iterdir() if p.name.endswith(".tmp")] == []  # no temp file left
    assert demo["text"].startswith("<!DOCTYPE html>")
    assert demo["dom"].find("body").attrs["data-report"] == "run"


def test_html_needs_an_output_and_dash_prints_the_page(demo):
    out = invoke("report", demo["run_id"], "--format", "html", "--warehouse", demo["wh"])
    assert out.exit_code == 2
    assert "--format html writes a page: give -o FILE (or -o - for standard output)" in out.stderr
    out = invoke("report", demo["run_id"], "--format", "html", "-o", "-", "--warehouse", demo["wh"])
    assert out.exit_code == 0 and out.stderr == ""
    assert out.stdout.startswith("<!DOCTYPE html>") and 'data-report="run"' in out.stdout


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_output_writes_any_format_to_a_file(demo, tmp_path):
    target = tmp_path / "r.json"
    out = invoke("report", demo["run_id"], "--format", "json", "--output", target, "--warehouse", demo["wh"])
    assert out.exit_code == 0 and out.stdout == ""
    assert json.loads(target.read_text()) == demo["report"]
    out = invoke("report", demo["run_id"], "--format", "html", "-o", tmp_path / "missing" / "r.html",
                 "--warehouse", demo["wh"])
    assert out.exit_code == 1 and out.stderr.startswith(f"error: cannot write {tmp_path / 'missing' / 'r.html'}")


def test_every_headline_measure_with_the_json_figures(demo):
    table = demo["dom"].find("table", id="headline")
    overall = [r for r in demo["report"]["metrics"] if r["slice"] == "all"]
    rows = table.find_all("tr", data_measure=True)
    assert len(rows) == len(overall)
    for r in overall:
        (tr,) = table.find_all("tr", data_measure=r["metric"], data_level=r["level"])
        for cls, key in (("value", "value"), ("ci-low", "ci_low"), ("ci-high", "ci_high")):
            assert tr.find("td", cls=cls).text() == f"{r[key]:.3f}", (r["metric"], r["level"], key)
    assert {(r["metric"], r["level"]) for r in overall} >= {("Success@3", "doc"), ("nDCG@10", "chunk"),
                                                            ("SpanRecall@1000tok", "chunk"), ("Abstain", "query")}


def test_charts_are_inline_svg(demo):
    names = {f.attrs["data-chart"]: f for f in demo["dom"].find_all("figure", cls="chart")}
    assert set(names) == {"headline", "slices-category", "slices-form", "slices-hard_class", "slices-unanswerable",
                          "funnel", "latency"}
    for name, fig in names.items():
        svg = fig.children_nodes()[0]
        assert svg.tag == "svg", name
        assert len(svg.find_all()) > 20, name  # drawn marks, not an empty frame
    forest = names["headline"].text()
    assert "Success@3 (doc)" in forest and "nDCG@10 (chunk)" in forest


def test_slices_carry_the_report_rows(demo):
    rows = {(r["metric"], r["level"], r["slice"]): r for r in demo["report"]["metrics"]}
    section = demo["dom"].find("section", id="slices")
    text = section.text()
    for value in ("adversarial", "gap", "near-duplicate", "near_miss", "out_of_corpus"):
        assert value in text
    r = rows[("Success@3", "doc", "form=gap")]
    assert f"{r['value']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" in text


def test_one_row_and_one_drill_down_per_question(demo):
    questions = [json.loads(line)["query_id"] for line in JUDGMENTS.read_text().splitlines() if line.strip()]
    dom = demo["dom"]
    table = dom.find("table", id="questions")
    assert [tr.attrs["data-qid"] for tr in table.find_all("tr", cls="q")] == sorted(questions)
    assert len(table.find("thead").find_all("th", data_sort=True)) >= 10
    assert dom.find("input", id="q-filter")
    drills = dom.find_all("details", cls="drill")
    assert [d.attrs["data-qid"] for d in drills] == sorted(questions)
    for d in drills:
        assert d.find("div", cls="question").text()
        stages = [s.attrs["data-stage"] for s in d.find_all("div", cls="stage")]
        assert stages == ["bm25", "final"]
        for s in d.find_all("div", cls="stage"):
            hits = s.find_all("li", cls="hit")
            n_hits = int(re.search(r"(\d+) hits", s.find("h4").text()).group(1))
            beyond = [h for h in hits if "beyond" in h.classes]
            assert len(hits) - len(beyond) == min(5, n_hits) and len(beyond) <= 1  # 5 hits, + the first relevant
            assert [int(h.attrs["data-rank"]) for h in hits] == sorted(int(h.attrs["data-rank"]) for h in hits)


def test_a_row_says_hit_miss_rank_and_where_lost(demo):
    tr = demo["dom"].find("tr", cls="q", data_qid="adv-advisory-affected-versions")
    cells = [td.text() for td in tr.find_all("td")]
    assert cells[:5] == ["adv-advisory-affected-versions",
                         "Which Larch versions are affected by the replication authentication bypass?",
                         "adversarial", "match", "near-duplicate"]
    assert cells[5:10] == ["hit", "hit", "3", "1", "found"]


def _norm(text: str) -> str:
    return " ".join(text.split())


def test_gold_marks_lie_inside_the_gold_quotes(demo):
    marked = 0
    for d in demo["dom"].find_all("details", cls="drill"):
        quotes = {g.attrs["data-gold"]: g for g in d.find_all("blockquote", cls="gold")}
        for mark in d.find_all("mark", cls="gold-span"):
            marked += 1
            li = mark.parent.parent
            assert "relevant" in li.classes and li.tag == "li"
            for idx in mark.attrs["data-gold"].split():
                quote = quotes[idx].find("span", cls="quote")
                assert "whole" in quote.classes or _norm(mark.text()) in _norm(quote.text()), (mark.text(), quote.text())
    assert marked > 50
    drill = demo["dom"].find("details", data_qid="adv-advisory-affected-versions")
    (rank3,) = drill.find("div", data_stage="bm25").find_all("li", data_rank="3")
    assert rank3.find("mark", cls="gold-span").text() == "Affected:    Larch 2.0.0 through 2.0.3"


def test_no_url_and_the_script_matches_its_hash(demo):
    text, dom = demo["text"], demo["dom"]
    for node in dom.iter():
        for name, value in node.attrs.items():
            if name in ("src", "href", "action", "xlink:href", "data", "poster"):
                assert not re.match(r"\s*(https?:|//)", value or ""), (node.tag, name, value)
    assert not re.search(r"url\(\s*['\"]?\s*(https?:|//)", text)
    assert "http:" not in text and "https:" not in text  # the demo corpus holds no URL either
    scripts = dom.find_all("script")
    assert len(scripts) == 1
    body = scripts[0].text()
    digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode()
    csp = dom.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert csp == (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'")


def test_the_header_names_the_run(demo):
    run = demo["report"]["run"]
    header = _norm(demo["dom"].find("section", id="header").text())
    for part in (run["run_id"], "bm25 (bm25 → final)", "recursive(size=800, overlap=0)", run["corpus_hash"][:12],
                 run["judgments_hash"][:12], "71 questions: 56 answerable, 15 no_answer", "duckdb",
                 "0; ties: score desc, chunk_id asc"):
        assert part in header, part


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """A run over a corpus whose document, quote, question, hard class and pipeline name hold markup."""
    root = tmp_path_factory.mktemp("html_hostile")
    corpus = root / "corpus"
    shutil.copytree(MINI / "corpus", corpus)
    (corpus / "evil.txt").write_text(f"Harmless intro. The tulip bulb {SCRIPT} planting depth is {IMG} ten "
                                     "centimetres & more.\n")
    lines = (MINI / "judgments.jsonl").read_text().splitlines()
    lines.append(json.dumps({"query_id": "zz-evil", "query": f"tulip planting depth {IMG}",
                             "category": "normal", "form": "match", "hard_class": f"x{IMG}",
                             "gold": [{"doc": "evil.txt", "quote": f"bulb {SCRIPT} planting depth is {IMG} ten"}]}))
    judgments = root / "judgments.jsonl"
    judgments.write_text("\n".join(lines) + "\n")
    config = root / "assay.toml"
    config.write_text(f'[pipelines."evil{IMG}"]\nextends = "bm25"\n')
    wh = root / "w.duckdb"
    out = invoke("run", "--corpus", corpus, "--judgments", judgments, "--pipeline", f"evil{IMG}", "--config", config,
                 "--warehouse", wh)
    assert out.exit_code == 0, out.output
    page = root / "evil.html"
    assert invoke("report", "--format", "html", "-o", page, "--warehouse", wh).exit_code == 0
    return page.read_text()


def test_hostile_stored_text_shows_as_text(hostile):
    dom = parse(hostile)
    assert len(dom.find_all("script")) == 1 and dom.find_all("img") == []
    for node in dom.iter():
        assert not any(name.startswith("on") for name in node.attrs), (node.tag, node.attrs)
    drill = dom.find("details", data_qid="zz-evil")
    assert drill.find("div", cls="question").text() == f"tulip planting depth {IMG}"
    assert f"bulb {SCRIPT} planting depth is {IMG} ten" in drill.find("blockquote", cls="gold").text()
    marks = [m.text() for m in drill.find_all("mark", cls="gold-span")]
    assert f"bulb {SCRIPT} planting depth is {IMG} ten" in marks
    assert dom.find("tr", cls="q", data_qid="zz-evil")
    assert f"evil{IMG}" in dom.find("section", id="header").text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in hostile and SCRIPT not in hostile.replace(
        "<script>" + _script_body(hostile) + "</script>", "")


def _script_body(text: str) -> str:
    return text.split("<script>", 1)[1].rsplit("</script>", 1)[0]


def test_each_question_links_to_its_drill_down_by_its_id(demo):
    from assay.present.html.page import anchor

    dom = demo["dom"]
    bodies = {d.attrs["data-qid"]: d.find("div", cls="drill-body") for d in dom.find_all("details", cls="drill")}
    ids = [b.attrs["id"] for b in bodies.values()]
    assert len(set(ids)) == len(ids) == 71
    for tr in dom.find("table", id="questions").find_all("tr", cls="q"):
        qid = tr.attrs["data-qid"]
        link, text = tr.find("a", cls="qid"), tr.find("a", cls="qtext")
        assert link.attrs["href"] == text.attrs["href"] == f"#{anchor(qid)}" == f"#{bodies[qid].attrs['id']}"
        assert link.attrs["title"] == link.text() == qid  # the whole id, however the cell cuts it
    assert bodies["adv-advisory-affected-versions"].attrs["id"] == "q-adv-advisory-affected-versions"
    assert not any(re.fullmatch(r"q\d+", i) for i in ids)  # no position left as an anchor


def test_the_summary_opens_the_page_with_the_reports_figures(demo):
    from assay.present.html.summary import run_summary

    body = demo["dom"].find("body").children_nodes()
    assert [n.tag for n in body[:2]] == ["h1", "section"] and body[1].attrs["id"] == "summary"
    points = [_norm(li.text()) for li in body[1].find_all("li")]
    assert points == run_summary(demo["report"])
    s3 = next(r for r in demo["report"]["metrics"] if (r["metric"], r["level"], r["slice"]) == ("Success@3", "chunk", "all"))
    assert points[0].startswith(f"Of the 56 answerable questions, {round(s3['value'] * 56)} had a relevant chunk")
    assert f"95% interval {100 * s3['ci_low']:.0f}% to {100 * s3['ci_high']:.0f}%" in points[0]
    funnel = demo["report"]["attribution"]["funnel"]
    lost = sum(funnel.values()) - funnel.get("found", 0)
    assert points[1].startswith(f"{lost} of the 56 answerable questions had no relevant chunk" if lost else
                                "Every one of the 56 answerable questions had a relevant chunk")


def test_latency_is_a_log_scale_strip_plot(demo):
    fig = demo["dom"].find("figure", cls="chart", data_chart="latency")
    assert "log scale" in fig.find("figcaption").text() and "milliseconds per question (log scale)" in fig.text()
    ticks = [p for p in fig.find_all("path", role="graphics-symbol") if p.attrs.get("aria-roledescription") == "tick"]
    qrows = demo["dom"].find("table", id="questions").find_all("tr", cls="q")
    timed = [tr for tr in qrows if float(tr.find_all("td")[10].attrs["data-v"] or 0) > 0]
    assert len(ticks) >= len(timed)  # a tick per question and stage, at least the whole question's
