"""The HTML reports' parts on their own: gold marks in a chunk's text, the chart SVG check, the page shell."""

import math
import re

import pytest

from assay.present.html import charts, page
from assay.present.html.drill import marked
from html_dom import parse


def test_marks_wrap_each_gold_stretch_and_escape_the_rest():
    text = "a <b> gold & more gold, then <i>"
    marks = [{"gold_idx": 1, "start": 6, "end": 12}, {"gold_idx": 0, "start": 10, "end": 22},
             {"gold_idx": 2, "start": 29, "end": 99}]  # overlapping marks merge; one past the end is cut
    html = marked(text, marks)
    assert html == ('a &lt;b&gt; <mark class="gold-span" data-gold="0 1">gold &amp; more gold</mark>, then '
                    '<mark class="gold-span" data-gold="2">&lt;i&gt;</mark>')
    assert marked(text, []) == "a &lt;b&gt; gold &amp; more gold, then &lt;i&gt;"
    assert marked("abc", [{"gold_idx": 0, "start": 2, "end": 2}]) == "abc"  # an empty overlap marks nothing


@pytest.mark.parametrize("svg", [
    '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><g onload="alert(1)"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">'
    '<image xlink:href="http://evil.example/x.png"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><rect fill="url(http://evil.example/#p)"/></svg>',
    '<svg xmlns="http://www.w3.org/2000/svg"><foreignObject><p>x</p></foreignObject></svg>',
])
def test_a_chart_that_is_not_a_plain_drawing_is_refused(svg):
    with pytest.raises(charts.ChartError):
        charts._check(svg)


def test_a_rendered_chart_names_no_url():
    svg = charts.forest([{"label": "<script>x</script> (doc)", "level": "doc", "value": 0.5, "ci_low": 0.4,
                          "ci_high": 0.6}])
    assert svg.startswith("<svg") and "http" not in svg and "<script" not in svg
    assert "&lt;script&gt;x&lt;/script&gt; (doc)" in svg


def test_the_shell_and_its_policy():
    with_script = parse(page.document("run", "t <x>", "<p>body</p>", with_script=True))
    assert with_script.find("title").text() == "t <x>"
    (script,) = with_script.find_all("script")
    csp = with_script.find("meta", http_equiv="Content-Security-Policy").attrs["content"]
    assert csp.endswith(f"script-src '{page.script_hash(script.text())}'")
    without = parse(page.document("history", "t", ""))
    assert without.find_all("script") == []
    assert without.find("meta", http_equiv="Content-Security-Policy").attrs["content"] == (
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'none'")
    with pytest.raises(ValueError):
        page.document("other", "t", "")


def test_write_replaces_the_file_whole(tmp_path):
    target = tmp_path / "r.html"
    target.write_text("old")
    assert page.write(target, "new é") == len("new é".encode())
    assert target.read_text(encoding="utf-8") == "new é"
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]


# -- anchors -----------------------------------------------------------------------------------------------
ODD_IDS = ["plain-id", "with space", "pipe|x", 'quo"te', "it's", "üñí©ødé", "日本語", "100%", "a#b", "<b>&amp;",
           "a/b:c@d", "header", "q-header", "a%20b", "a b", "a+b", "tab\tnewline\n"]


def test_an_anchor_is_the_question_id_percent_encoded():
    from urllib.parse import unquote

    anchors = [page.anchor(q) for q in ODD_IDS]
    assert len(set(anchors)) == len(ODD_IDS)  # "a%20b" and "a b" included: '%' itself is encoded
    for qid, a in zip(ODD_IDS, anchors):
        # an HTML id (no whitespace) and a URL fragment the browser keeps as written
        assert re.fullmatch(r"q-[A-Za-z0-9\-._~:/@%]+", a), a
        assert unquote(a[2:]) == qid
    assert page.anchor("adv-advisory-affected-versions") == "q-adv-advisory-affected-versions"
    assert page.anchor("pipe|x") == "q-pipe%7Cx" and page.anchor("日本語") == "q-%E6%97%A5%E6%9C%AC%E8%AA%9E"
    assert page.anchor("header") != "header"  # never one of the page's own section ids


# -- latency ----------------------------------------------------------------------------------------------
def tick_positions(svg: str, layer: str = "layer_0_marks") -> list[tuple[float, float]]:
    """(value, x) of each tick the chart draws: Vega labels each mark with its value."""
    dom = parse(svg)
    (group,) = [g for g in dom.find_all("g") if layer in g.classes]
    out = []
    for path in group.find_all("path", role="graphics-symbol"):
        value = float(re.search(r"\(log scale\): ([\d.e+-]+);", path.attrs["aria-label"]).group(1))
        out.append((value, float(re.match(r"M([\d.]+),", path.attrs["d"]).group(1))))
    return sorted(out)


def test_latency_is_readable_when_one_question_is_slow():
    """Four questions near 0.05 ms and one at 50 ms: on the old linear axis the four shared one pixel."""
    rows = [{"stage": "bm25", "ms": v} for v in (0.05, 0.06, 0.07, 0.08, 50.0)]
    ticks = tick_positions(charts.latency(rows, ["bm25"]))
    assert [v for v, _ in ticks] == [0.05, 0.06, 0.07, 0.08, 50.0]
    xs = [x for _, x in ticks]
    assert xs[3] - xs[0] > 25  # the fast four apart by what a reader can see
    # a log axis: equal ratios at equal distances (0.05 -> 0.5 -> 5 -> 50 would be three equal steps)
    per_decade = (xs[4] - xs[0]) / 3
    assert abs((xs[3] - xs[0]) - per_decade * math.log10(0.08 / 0.05)) < 1.5
    svg = charts.latency(rows, ["bm25"])
    labels = [t.text() for t in parse(svg).find_all("text")]
    assert {"0.05", "0.1", "0.2", "0.5", "1", "10", "50"} <= set(labels), labels


def test_log_ticks_are_one_two_five_within_the_range():
    assert charts.log_ticks(0.008, 0.5) == [0.01, 0.02, 0.05, 0.1, 0.2, 0.5]
    assert charts.log_ticks(3, 30) == [5.0, 10.0, 20.0]
