"""The demo's HTML reports opened in a real headless Chromium: what a reader sees, not what the file says.

Debian's chromium (`make browser` installs it with apt-get; ASSAY_CHROMIUM names another binary) is
driven by Playwright, which downloads no browser of its own. Every page is checked offline (no request
but the file itself and data: URIs), screenshotted into tmp_path, and read through its DOM against
`--format json` and the judgments. ASSAY_SAVE_SCREENSHOT=PATH also saves the README's picture of the
one-run report there (docs/img/report.png); a normal run writes nothing into the repository.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from assay.present.html.page import anchor
from demo_reports import HOSTILE_DOC, IMG, ODD_QUESTIONS, SCRIPT, reports  # noqa: F401  (reports: the session fixture)

CHROMIUM = os.environ.get("ASSAY_CHROMIUM", "/usr/bin/chromium")

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed; `make install` installs requirements-test.lock")
if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
    pytest.skip(f"no Chromium at {CHROMIUM}: `make browser` installs Debian's chromium with apt-get when run as "
                "root (or apt-get install chromium; ASSAY_CHROMIUM=PATH names another binary)",
                allow_module_level=True)

# A real Chromium, and the demo's reports built first (a hybrid run of the hostile corpus among them)
pytestmark = pytest.mark.slow

KINDS = ["run", "runs", "sweep", "history", "hostile", "odd"]
DATA_REPORT = {"run": "run", "runs": "runs", "sweep": "sweep", "history": "history", "hostile": "run", "odd": "run"}
CHARTS = {"run": {"headline", "slices-*", "funnel", "latency"}, "runs": {"deltas", "slice-deltas-2"},
          "sweep": {"pareto"}, "history": {"history"}, "hostile": {"headline"}, "odd": {"headline", "latency"}}
SHAPES = "path, rect, line, circle, ellipse, polygon, polyline"
WAIT_MS = 120_000

# Recorded before any of the page's own script runs (Playwright's init scripts are exempt from its CSP).
CSP_RECORDER = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation', function (e) {
  window.__cspViolations.push(e.violatedDirective + ' blocked ' + (e.blockedURI || '') + ' ' + (e.sample || ''));
});
"""


def three(x) -> str:
    return f"{x:.3f}"


@pytest.fixture(scope="session")
def browser():
    # Chromium's sandbox refuses to start as root (CI runs as root in a container).
    args = ["--disable-dev-shm-usage"] + (["--no-sandbox"] if os.geteuid() == 0 else [])
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=args)
        yield b
        b.close()


@dataclass
class Opened:
    page: object
    url: str
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def assert_quiet(self) -> None:
        """Nothing left the page, nothing failed, nothing was blocked by the page's CSP."""
        strays = [u for u in self.requests if u != self.url and not u.startswith("data:")]
        assert not strays, f"requests left the page: {strays[:5]}"
        assert not self.errors, f"script errors: {self.errors}"
        problems = [m for m in self.console if m.startswith(("error", "warning"))]
        assert not problems, f"console: {problems}"


@pytest.fixture
def open_report(browser):
    contexts = []

    def open_(path: Path, javascript: bool = True, width: int = 1280) -> Opened:
        ctx = browser.new_context(java_script_enabled=javascript, viewport={"width": width, "height": 900})
        # Every wait below ends on a page event (a load, a selector, an attribute, a frame where the element is in
        # view); this is only the bound on each, long enough that no loaded machine reaches it while the page works.
        ctx.set_default_timeout(WAIT_MS)
        contexts.append(ctx)
        opened = Opened(page=None, url=path.as_uri())

        def route(r):
            opened.requests.append(r.request.url)
            r.continue_() if r.request.url == opened.url else r.abort()

        ctx.route("**/*", route)
        if javascript:
            ctx.add_init_script(CSP_RECORDER)
        page = ctx.new_page()
        page.on("request", lambda req: opened.requests.append(req.url))
        page.on("console", lambda m: opened.console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: opened.errors.append(str(e)))
        page.goto(opened.url)
        opened.page = page
        return opened

    yield open_
    for ctx in contexts:
        ctx.close()


def box(locator) -> dict:
    b = locator.bounding_box()
    assert b and b["width"] > 0 and b["height"] > 0, f"{locator} has no box: {b}"
    return b


# -- every page --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_page_loads_offline_renders_its_charts_and_screenshots(kind, reports, open_report, tmp_path):
    o = open_report(reports.html[kind])
    page = o.page
    assert page.get_attribute("body", "data-report") == DATA_REPORT[kind]
    box(page.locator("section#header"))
    csp = page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    # the one inline script allowed by its hash; a page without a script (no question table) allows none
    scripts = page.evaluate("document.scripts.length")
    allowed = r"'sha256-[A-Za-z0-9+/=]+'" if scripts else "'none'"
    assert scripts <= 1 and "default-src 'none'" in csp and re.search(f"script-src {allowed}(;|$)", csp), csp
    assert page.evaluate("performance.getEntriesByType('resource').length") == 0
    assert page.evaluate("window.__cspViolations") == []

    charts = page.locator("figure.chart")
    names = [charts.nth(i).get_attribute("data-chart") for i in range(charts.count())]
    for wanted in CHARTS[kind]:
        assert any(re.fullmatch(wanted.replace("*", ".+"), n or "") for n in names), (wanted, names)
    for i, name in enumerate(names):
        svg = charts.nth(i).locator(":scope > svg")
        assert svg.count() == 1, f"chart {name} has no inline svg"
        svg_box = box(svg)
        marks = svg.locator(f".role-mark :is({SHAPES})")
        assert marks.count() > 0, f"chart {name} draws no marks"
        assert any(box_or_none(marks.nth(j)) for j in range(min(marks.count(), 20))), f"chart {name}: empty marks"
        assert svg_box["width"] >= 100, (name, svg_box)

    shot = tmp_path / f"{kind}.png"
    page.screenshot(path=shot, full_page=True)
    assert distinct_colours(shot) > 8, f"{shot} looks blank"
    o.assert_quiet()

    if kind == "run" and os.environ.get("ASSAY_SAVE_SCREENSHOT"):
        save_readme_screenshot(page, Path(os.environ["ASSAY_SAVE_SCREENSHOT"]))


def box_or_none(locator):
    b = locator.bounding_box()
    return b if b and (b["width"] > 0 or b["height"] > 0) else None


def distinct_colours(png: Path) -> int:
    from PIL import Image

    with Image.open(png) as im:
        return len(im.convert("RGB").resize((200, 200)).getcolors(200 * 200) or [])


def save_readme_screenshot(page, path: Path, height: int = 1500) -> None:
    """The first screen and a half at 1280 wide, as a small palette PNG."""
    from PIL import Image

    page.set_viewport_size({"width": 1280, "height": height})
    raw = path.with_suffix(".raw.png")
    page.screenshot(path=raw)
    with Image.open(raw) as im:
        im.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    raw.unlink()


# -- one run -----------------------------------------------------------------------------------------------


def headline_rows(json_report: dict) -> list[dict]:
    return [m for m in json_report["metrics"] if m["slice"] == "all"]


# each headline row: its measure, level, and each figure cell's text and whether it has a box
HEADLINE_CELLS = """rows => rows.map(r => {
  const cell = c => {
    const td = r.querySelector('td.' + c);
    if (!td) return null;
    const b = td.getBoundingClientRect();
    return [td.innerText.trim(), b.width > 0 && b.height > 0];
  };
  return [r.dataset.measure, r.dataset.level, cell('value'), cell('ci-low'), cell('ci-high')];
})"""


@pytest.mark.parametrize("kind", ["run", "hostile"])
def test_every_headline_measure_and_interval_as_in_json(kind, reports, open_report):
    page = open_report(reports.html[kind]).page
    box(page.locator("table#headline"))
    shown = {(m, lvl): cells for m, lvl, *cells in
             page.locator("table#headline tr[data-measure][data-level]").evaluate_all(HEADLINE_CELLS)}
    wanted = headline_rows(reports.json[kind])
    assert wanted and sorted(shown) == sorted((m["metric"], m["level"]) for m in wanted)
    for m in wanted:
        for (text, seen), key in zip(shown[m["metric"], m["level"]], ("value", "ci_low", "ci_high")):
            if m[key] is None:
                assert not re.search(r"\d", text), (m["metric"], m["level"], key, text)
            else:
                assert text == three(m[key]) and seen, (m["metric"], m["level"], key, text, seen)


def qids_in(page, selector: str) -> list[str]:
    return page.locator(selector).evaluate_all("els => els.map(e => e.getAttribute('data-qid'))")


def test_every_question_has_a_row_and_a_drill_down(reports, open_report):
    page = open_report(reports.html["run"]).page
    wanted = [q["query_id"] for q in reports.questions]
    assert len(wanted) > 50  # every line of judgments/demo/judgments.jsonl
    assert sorted(qids_in(page, "table#questions tr.q[data-qid]")) == sorted(wanted)
    assert sorted(qids_in(page, "details.drill[data-qid]")) == sorted(wanted)
    shown = page.locator("table#questions tr.q").evaluate_all(
        "rows => rows.map(r => [r.dataset.qid, r.innerText, r.getBoundingClientRect().height])")
    by_id = {q["query_id"]: q for q in reports.questions}
    for qid, text, height in shown:
        assert height > 0 and by_id[qid]["query"] in text, (qid, text, height)


def open_drill(page, qid: str | None = None):
    """Open a drill-down by clicking its summary, as a reader does; the first one holding a gold mark
    unless ``qid`` names one."""
    drills = page.locator("details.drill" + (f'[data-qid="{qid}"]' if qid else ":has(mark.gold-span)"))
    drill = drills.first
    assert drill.count() == 1
    assert drill.get_attribute("open") is None
    drill.locator(":scope > summary").click()
    wait_open(drill)
    return drill


def gold_docs(corpus: Path, question: dict) -> dict[str, str]:
    from assay.inputs.corpus import load_corpus

    docs = load_corpus(corpus).by_id()
    return {g["doc"]: docs[g["doc"]].text for g in question["gold"]}


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_a_drill_down_opened_by_a_click_highlights_the_gold_span(javascript, reports, open_report):
    page = open_report(reports.html["run"], javascript=javascript).page
    drill = open_drill(page)
    qid = drill.get_attribute("data-qid")
    question = next(q for q in reports.questions if q["query_id"] == qid)
    assert drill.locator(".question").first.inner_text().strip() == question["query"]
    assert drill.locator("blockquote.gold").count() == len(question["gold"])

    stages = drill.locator("div.stage[data-stage]")
    names = [stages.nth(i).get_attribute("data-stage") for i in range(stages.count())]
    assert names and names[-1] == "final", names
    assert drill.locator("li.hit[data-rank][data-chunk-id]").count() > 0

    mark = drill.locator("li.hit.relevant mark.gold-span").first
    assert mark.is_visible()
    box(mark)
    assert mark.evaluate("m => getComputedStyle(m).backgroundColor") not in ("rgba(0, 0, 0, 0)", "transparent")
    text = mark.text_content()
    assert text.strip() and any(text in doc for doc in gold_docs(reports.corpus, question).values()), text


def column_keys(page, column: int) -> list[str | None]:
    """What the sort reads from each row of the question table, in the order shown: data-v, else the text."""
    return page.evaluate(
        """c => Array.from(document.querySelectorAll('table#questions tr.q')).map(r => {
             const cell = r.cells[c];
             return cell.hasAttribute('data-v') ? cell.getAttribute('data-v') : cell.textContent; })""",
        column)


NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def sort_key(raw: str, numeric: bool):
    if not numeric:
        return raw.lower()
    m = NUMBER.match(raw)
    return float(m.group(0)) if m else None


def is_sorted(keys: list, descending: bool) -> bool:
    present = [k for k in keys if k is not None]
    missing_last = keys[len(present):] == [None] * (len(keys) - len(present))
    return missing_last and present == sorted(present, reverse=descending)


def test_the_question_table_sorts_by_each_column(reports, open_report):
    o = open_report(reports.html["run"])
    page = o.page
    headers = page.locator("table#questions th[data-sort]")
    assert headers.count() >= 3
    reordered = 0
    for i in range(headers.count()):
        th = headers.nth(i)
        column, numeric = th.evaluate("th => th.cellIndex"), th.get_attribute("data-sort") == "num"
        before = qids_in(page, "table#questions tr.q")
        th.click()
        keys = [sort_key(k, numeric) for k in column_keys(page, column)]
        assert is_sorted(keys, descending=False), (th.inner_text(), keys)
        reordered += qids_in(page, "table#questions tr.q") != before
        th.click()
        keys = [sort_key(k, numeric) for k in column_keys(page, column)]
        assert is_sorted(keys, descending=True), (th.inner_text(), keys)
    assert reordered >= 2
    assert len(qids_in(page, "table#questions tr.q")) == len(reports.questions)
    o.assert_quiet()


def test_the_question_table_filters(reports, open_report):
    o = open_report(reports.html["run"])
    page = o.page
    needle = "replica"
    wanted = {q["query_id"] for q in reports.questions if needle in (q["query_id"] + " " + q["query"]).lower()}
    assert 1 < len(wanted) < len(reports.questions)
    page.locator("input#q-filter").fill(needle)
    assert set(qids_in(page, "table#questions tr.q:visible")) == wanted
    page.locator("input#q-filter").fill("")
    assert len(qids_in(page, "table#questions tr.q:visible")) == len(reports.questions)
    o.assert_quiet()


def test_the_page_reads_without_javascript(reports, open_report):
    page = open_report(reports.html["run"], javascript=False).page
    box(page.locator("table#headline"))
    assert page.locator("table#headline tr[data-measure]:visible").count() == len(headline_rows(reports.json["run"]))
    box(page.locator("table#questions"))
    assert page.locator("table#questions tr.q:visible").count() == len(reports.questions)
    assert page.locator("figure.chart > svg:visible").count() >= 4


# -- a question's link and anchor --------------------------------------------------------------------------


# The element's top, and its first 40 pixels, inside the window.
IN_VIEW = """el => { const b = el.getBoundingClientRect();
                     return b.height > 0 && 0 <= b.top && b.top + Math.min(b.height, 40) <= innerHeight; }"""


def in_view(page, locator) -> bool:
    """Whether the element comes into view: checked on every animation frame until it is (a click on a link, or
    a script reacting to hashchange, scrolls after the click returns), False if it never is within WAIT_MS."""
    try:
        page.wait_for_function(IN_VIEW, arg=locator.element_handle(), polling="raf")
    except sync_api.TimeoutError:
        return False
    return True


def wait_open(drill) -> None:
    """The <details> gets its open attribute (at once on a click on its summary; on a link or an anchor in the URL
    when the browser or the page's hashchange handler, which runs after the navigation, opens it)."""
    sync_api.expect(drill).to_have_attribute("open", re.compile(".*"))


def drill_of(page, qid: str):
    return page.locator("details.drill").filter(has=page.locator(f'div.drill-body[id="{anchor(qid)}"]'))


def assert_opened_in_view(page, qid: str) -> None:
    drill = drill_of(page, qid)
    assert drill.count() == 1 and drill.get_attribute("data-qid") == qid
    wait_open(drill)
    summary = drill.locator(":scope > summary")
    assert in_view(page, summary), (qid, summary.bounding_box(), page.evaluate("scrollY"))
    assert in_view(page, drill.locator(".question").first), qid
    sync_api.expect(page.locator("details.drill[open]")).to_have_count(1)  # that one, no other


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_a_clicked_question_opens_its_drill_down(javascript, reports, open_report):
    """Its id or its text, in the question table: the page scrolls to the question's drill-down, opened.
    Without the script Chromium opens it on its own (the anchor lies inside the <details>)."""
    o = open_report(reports.html["run"], javascript=javascript)
    page = o.page
    rows = page.locator("table#questions tr.q")
    last = rows.nth(rows.count() - 1)  # the last drill-down lies far below the table
    qid = last.get_attribute("data-qid")
    last.locator("a.qid").click()
    assert_opened_in_view(page, qid)
    assert page.evaluate("location.hash") == "#" + anchor(qid)

    page.evaluate("scrollTo(0, 0)")
    drill_of(page, qid).locator(":scope > summary").click()  # closed again by the reader
    other = rows.nth(rows.count() // 2)
    other.locator("a.qtext").click()  # the question's text is a link too
    assert_opened_in_view(page, other.get_attribute("data-qid"))
    if javascript:
        o.assert_quiet()


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_arriving_with_a_question_in_the_url_opens_it(javascript, reports, open_report):
    o = open_report(reports.html["run"], javascript=javascript)
    qid = "whole-release-notes-2-1" if any(q["query_id"] == "whole-release-notes-2-1" for q in reports.questions) \
        else reports.questions[-1]["query_id"]
    o.page.goto(o.url + "#" + anchor(qid))
    assert_opened_in_view(o.page, qid)
    if javascript:
        o.assert_quiet()


def test_the_link_opens_a_drill_down_the_reader_closed(reports, open_report):
    """The same link twice (no hashchange): the page's script opens the <details> again."""
    page = open_report(reports.html["run"]).page
    row = page.locator("table#questions tr.q").nth(3)
    qid = row.get_attribute("data-qid")
    row.locator("a.qid").click()
    wait_open(drill_of(page, qid))  # opened (by the hashchange handler) before the reader closes it
    drill_of(page, qid).locator(":scope > summary").click()
    assert drill_of(page, qid).get_attribute("open") is None
    page.evaluate("scrollTo(0, 0)")
    row.locator("a.qid").click()
    assert_opened_in_view(page, qid)


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_odd_question_ids_link_and_anchor_safely(javascript, reports, open_report):
    """Ids with spaces, '|', quotes, '%', '#', markup and non-Latin script: each link opens its own question,
    as does its anchor in the URL; a long id stays on one line, cut with an ellipsis, whole in its title."""
    o = open_report(reports.html["odd"], javascript=javascript)
    page = o.page
    assert sorted(qids_in(page, "table#questions tr.q")) == sorted(ODD_QUESTIONS)
    for qid in ODD_QUESTIONS:
        page.goto(o.url)
        row = page.locator("table#questions tr.q").filter(has=page.locator(f'a.qid[title="{css_string(qid)}"]'))
        assert row.count() == 1 and row.get_attribute("data-qid") == qid
        row.locator("a.qid").click()
        assert_opened_in_view(page, qid)
        page.goto(o.url + "#" + anchor(qid))
        wait_open(drill_of(page, qid))
    long_id = max(ODD_QUESTIONS, key=len)
    page.goto(o.url)
    link = page.locator(f'table#questions a.qid[title="{css_string(long_id)}"]')
    assert link.inner_text() == long_id  # all there, shown cut
    assert link.evaluate("a => a.scrollWidth > a.clientWidth") and \
        link.evaluate("a => getComputedStyle(a).textOverflow") == "ellipsis"
    assert_one_line(page)
    if javascript:
        o.assert_quiet()


def css_string(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def assert_one_line(page) -> None:
    heights = page.locator("table#questions a.qid").evaluate_all(
        "els => els.map(a => [a.getBoundingClientRect().height, parseFloat(getComputedStyle(a).lineHeight) || "
        "1.45 * parseFloat(getComputedStyle(a).fontSize)])")
    assert heights and all(h <= 1.5 * line for h, line in heights), heights


def test_no_id_wraps_in_the_question_table(reports, open_report):
    page = open_report(reports.html["run"]).page
    assert_one_line(page)
    titles = page.locator("table#questions a.qid").evaluate_all("els => els.map(a => a.title === a.textContent)")
    assert titles and all(titles)


def test_a_flipped_question_leads_to_both_rankings(reports, open_report):
    page = open_report(reports.html["runs"]).page
    rows = page.locator("table.flipped tr.q")
    assert rows.count() > 0
    last = rows.nth(rows.count() - 1)
    qid = last.get_attribute("data-qid")
    last.locator("a.qid").click()
    panel = page.locator(f'div.flip[id="r2-{anchor(qid)}"]')
    assert panel.get_attribute("data-qid") == qid and in_view(page, panel.locator(":scope > h4"))


def test_the_summary_opens_each_report(reports, open_report):
    for kind in ("run", "runs"):
        page = open_report(reports.html[kind]).page
        first = page.locator("body > :is(section, nav)").first
        assert first.get_attribute("id") == "summary" and in_view(page, first)
        assert page.locator("section#summary li").count() >= 2


# -- several runs, a sweep, a history ----------------------------------------------------------------------


def test_comparison_shows_every_paired_row_and_the_flips_side_by_side(reports, open_report):
    page = open_report(reports.html["runs"]).page
    runs = [reports.runs["bm25"], reports.runs["bm25-400"]]
    table = page.locator("table#deltas")
    box(table)
    for m in reports.json["runs"]["rows"]:
        row = table.locator(f'tr[data-measure="{m["metric"]}"][data-level="{m["level"]}"][data-run="{m["run_id"]}"]')
        assert row.count() == 1, (m["metric"], m["level"], m["run_id"])
        text = row.inner_text()
        for key in ("value", "ci_low", "ci_high"):
            if m[key] is not None:
                assert three(m[key]) in text, (m["metric"], m["level"], m["run_id"], key, text)

    flips = page.locator("section#flips div.flip[data-qid]")
    assert flips.count() > 0
    for i in range(flips.count()):
        rankings = flips.nth(i).locator("div.ranking[data-run]")
        assert sorted(rankings.nth(j).get_attribute("data-run") for j in range(rankings.count())) == sorted(runs)
    first = flips.first.locator("div.ranking[data-run]")
    left, right = box(first.nth(0)), box(first.nth(1))
    assert abs(left["y"] - right["y"]) < 2 and left["x"] + left["width"] <= right["x"] + 1, (left, right)


def line_with(text: str, needle: str) -> str:
    lines = [line for line in text.splitlines() if needle in line]
    assert lines, f"{needle!r} is not on the page"
    return lines[-1]  # the table row, after any chart legend that names it too


def test_history_shows_every_run_with_its_interval(reports, open_report):
    page = open_report(reports.html["history"]).page
    points = reports.json["history"]["points"]
    assert len(points) == 3  # the BM25 run and the sweep's two BM25 points (--include sweep)
    assert [p["kind"] for p in points] == ["run", "sweep", "sweep"]
    text = page.locator("body").inner_text()
    for p in points:
        row = line_with(text, p["run_id"])
        for key in ("value", "ci_low", "ci_high"):
            assert three(p[key]) in row, (p["run_id"], key, row)


def test_sweep_shows_every_point_with_its_intervals(reports, open_report):
    page = open_report(reports.html["sweep"]).page
    text = page.locator("body").inner_text()
    sweep = reports.json["sweep"]
    assert len(sweep["points"]) == 2
    for p in sweep["points"]:
        row = line_with(text, p["label"])
        for name in sweep["columns"]:
            m = p["measures"][name]
            assert f"{three(m['value'])} [{three(m['ci_low'])}, {three(m['ci_high'])}]" in row, (p["label"], name, row)


# -- hostile text ------------------------------------------------------------------------------------------


def test_markup_in_documents_questions_and_quotes_shows_as_text_and_runs_nothing(reports, open_report):
    o = open_report(reports.html["hostile"])
    page = o.page
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("document.scripts.length") == 1  # the report's own, and no injected one
    assert page.locator("img").count() == 0

    by_id = {q["query_id"]: q for q in reports.hostile_questions}
    assert IMG in page.locator('table#questions tr.q[data-qid="xss-img"]').inner_text()
    assert SCRIPT in page.locator('table#questions tr.q[data-qid="xss-script"]').inner_text()
    for qid in ("xss-script", "xss-img"):
        drill = open_drill(page, qid)
        literal = SCRIPT if qid == "xss-script" else IMG
        assert literal in drill.locator(".question").first.inner_text()
        assert literal in drill.locator("blockquote.gold").first.inner_text()
        marks = drill.locator("mark.gold-span")
        assert marks.count() > 0 and marks.first.is_visible()
        doc = gold_docs(reports.hostile_corpus, by_id[qid])["plugins/widget.md"]
        for text in marks.all_text_contents():
            assert literal in text and text in doc, text
        stages = drill.locator("div.stage[data-stage]").evaluate_all("els => els.map(e => e.dataset.stage)")
        assert {"bm25", "dense", "final"} <= set(stages), stages  # the markup went through every stage
        answer = drill.locator("div.answer")  # the extractive answer stage ran: its claim and citation quote it
        assert answer.count() == 1 and answer.inner_text().count(literal) >= 2
    drill = open_drill(page, "xss-renderer")
    assert HOSTILE_DOC in drill.inner_text()

    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.evaluate("window.__cspViolations") == []
    o.assert_quiet()
