"""The HTML reports' parts on their own: gold marks in a chunk's text, the chart SVG check, the page shell."""

import pytest

from assay.html import charts, page
from assay.html.drill import marked
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
