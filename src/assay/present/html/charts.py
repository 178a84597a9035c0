"""The reports' charts: Vega-Lite specs built with Altair, rendered to static SVG by vl-convert, in this process.

No chart needs JavaScript in the page or fetches anything: vl-convert runs Vega in an embedded engine,
is allowed no base URL (the data is inline in the spec), and the SVG it returns is checked here before it
is inlined: only drawing elements, no script, no event handler, no link. Stored strings (slice names,
run ids, labels) reach the SVG as text that vl-convert escapes.

Each function takes plain rows (dicts) and returns the SVG markup of one chart.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from assay.core import escape
from assay.core.extras import require

require("html", "--format html")  # before altair's import: a missing extra is one line, not a traceback
import altair as alt  # noqa: E402

VEGA_LITE = "6.4"  # the Vega-Lite version altair 6.3 writes specs for (alt.SCHEMA_VERSION v6.4.x)
LEVEL_COLORS = {"chunk": "#1f6feb", "doc": "#d4661c", "query": "#6e7781", "answer": "#8250df"}
INTERVAL_AXIS = "mean over questions, with its 95% interval"
# What a drawing may hold: Vega's SVG renderer writes these and nothing else.
_ELEMENTS = {"svg", "g", "path", "rect", "line", "circle", "ellipse", "polygon", "polyline", "text", "tspan",
             "title", "desc", "defs", "clipPath", "linearGradient", "radialGradient", "stop", "style"}
_XMLNS = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


class ChartError(RuntimeError):
    """vl-convert returned something that is not a plain drawing: refused rather than inlined."""


def render(chart) -> str:
    """``chart`` (an Altair chart) as inline SVG: checked, and without namespace declarations (HTML5 puts an
    inline <svg> in the SVG namespace itself, and the page then names no URL at all)."""
    import vl_convert

    svg = vl_convert.vegalite_to_svg(_one_line(chart.to_dict()), vl_version=VEGA_LITE, allowed_base_urls=[])
    _check(svg)
    return _XMLNS.sub("", svg, count=2)


def _one_line(spec):
    """The spec with every string as ``assay.core.escape.terminal`` shows it: a stored label's control and
    bidirectional characters become visible escapes (``\\n``, ``\\u202e``), so Vega neither fails on a newline in
    a sort list nor draws a label that reorders the page. The spec's own strings hold none: they are unchanged."""
    if isinstance(spec, str):
        return escape.terminal(spec)
    if isinstance(spec, dict):
        return {_one_line(k): _one_line(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_one_line(v) for v in spec]
    return spec


def _check(svg: str) -> None:
    root = ET.fromstring(svg)
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag not in _ELEMENTS:
            raise ChartError(f"chart SVG holds a <{tag}> element")
        for name in el.attrib:
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on") or local in ("href", "src") or "url(" in el.attrib[name].replace(" ", ""):
                if local == "clip-path" and el.attrib[name].startswith("url(#"):
                    continue  # a reference to a clip path inside the same drawing
                raise ChartError(f"chart SVG has attribute {local}={el.attrib[name]!r} on <{tag}>")


def _level_color(levels):
    present = [lvl for lvl in LEVEL_COLORS if lvl in levels]
    return alt.Color("level:N", title="level", scale=alt.Scale(domain=present, range=[LEVEL_COLORS[x] for x in present]),
                     legend=alt.Legend(orient="bottom"))


def forest(rows: list[dict]) -> str:
    """Means with their 95% intervals, one line per measure and level (rows: label, level, value, ci_low, ci_high)."""
    order = [r["label"] for r in rows]
    base = alt.Chart(alt.Data(values=rows)).encode(
        y=alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=280)),
        color=_level_color({r["level"] for r in rows}))
    rules = base.mark_rule(strokeWidth=2.5).encode(
        x=alt.X("ci_low:Q", scale=alt.Scale(domain=[0, 1]), title=INTERVAL_AXIS), x2="ci_high:Q")
    points = base.mark_point(filled=True, size=55, opacity=1).encode(x="value:Q")
    return render((rules + points).properties(width=460, height=alt.Step(17)))


def slices(rows: list[dict], measures: list[str]) -> str:
    """Small multiples: one panel per measure, a line per slice value with its interval
    (rows: measure, slice, value, ci_low, ci_high, n)."""
    order = list(dict.fromkeys(r["slice"] for r in rows))
    base = alt.Chart().encode(y=alt.Y("slice:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)))
    rules = base.mark_rule(strokeWidth=2.5, color="#1f6feb").encode(
        x=alt.X("ci_low:Q", scale=alt.Scale(domain=[0, 1]), title=None), x2="ci_high:Q")
    points = base.mark_point(filled=True, size=45, color="#0b3d91", opacity=1).encode(x="value:Q")
    chart = alt.layer(rules, points, data=alt.Data(values=rows)).properties(width=150, height=alt.Step(18))
    return render(chart.facet(column=alt.Column("measure:N", sort=measures, title=None,
                                                header=alt.Header(labelFontWeight="bold", labelFontSize=11)))
                  .resolve_scale(y="shared"))


def funnel(panels: list[tuple[str, list[tuple[str, int]]]]) -> str:
    """Horizontal bars: for each panel (title, [(where, n)]), how many questions ended where."""
    charts = []
    for title, counts in panels:
        data = [{"where": k, "n": n} for k, n in counts]
        base = alt.Chart(alt.Data(values=data), title=title).encode(
            y=alt.Y("where:N", sort=[k for k, _ in counts], title=None), x=alt.X("n:Q", title="questions"))
        bars = base.mark_bar(color="#1f6feb").encode(
            color=alt.condition(alt.datum.where == "found", alt.value("#1a7f37"), alt.value("#d4661c")))
        labels = base.mark_text(align="left", dx=3).encode(text="n:Q")
        charts.append((bars + labels).properties(width=420, height=alt.Step(20)))
    return render(alt.vconcat(*charts))


def log_ticks(low: float, high: float) -> list[float]:
    """Axis values 1, 2 and 5 times each power of ten within [low, high] (Vega's own log ticks label every
    step from 1 to 9 and crowd the axis)."""
    import math

    out = []
    for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        for step in (1, 2, 5):
            v = float(f"{step}e{exponent}")
            if low <= v <= high:
                out.append(v)
    return out


def latency(rows: list[dict], stages: list[str]) -> str:
    """Per-question latency by stage as a strip plot on a log scale: a tick per question, a dark bar at each
    stage's median (rows: stage, ms, every ms > 0). Latencies are skewed (a few slow questions, many fast
    ones): on a linear axis the slowest flattened the rest into a few pixels; on a log axis a doubling is the
    same distance anywhere."""
    data = alt.Data(values=rows)
    low, high = min(r["ms"] for r in rows) / 1.25, max(r["ms"] for r in rows) * 1.25
    y = alt.Y("stage:N", sort=stages, title=None)
    x = alt.X("ms:Q", title="milliseconds per question (log scale)",
              scale=alt.Scale(type="log", domain=[low, high], nice=False),
              axis=alt.Axis(values=log_ticks(low, high), format="~g", grid=True))
    ticks = alt.Chart(data).mark_tick(color="#1f6feb", opacity=0.45, thickness=1.5, size=18).encode(
        x=x, y=y)
    medians = alt.Chart(data).mark_tick(color="#1d232b", thickness=3, size=26).encode(
        x=alt.X("median(ms):Q", title="milliseconds per question (log scale)"), y=y)
    return render((ticks + medians).properties(width=520, height=alt.Step(30)))


def deltas(rows: list[dict], runs: list[str]) -> str:
    """Paired differences from the first run with their 95% intervals, one panel per later run
    (rows: label, run, delta, ci_low, ci_high, significant)."""
    order = list(dict.fromkeys(r["label"] for r in rows))
    base = alt.Chart().encode(y=alt.Y("label:N", sort=order, title=None, axis=alt.Axis(labelLimit=260)))
    chart = _paired_layers(base, rows, alt.X("ci_low:Q", title="change: run - run 1 (paired 95% interval)"),
                           "Holm-adjusted p < 0.05", 45).properties(width=300, height=alt.Step(16))
    return render(chart.facet(column=alt.Column("run:N", sort=runs, title=None,
                                                header=alt.Header(labelFontWeight="bold", labelLimit=300))))


def _paired_layers(base, rows: list[dict], x, legend: str, size: int):
    """A dashed zero line, each row's paired interval (red where significant) and its point: the panel that
    ``deltas`` and ``slice_deltas`` facet."""
    zero = alt.Chart().mark_rule(color="#6e7781", strokeDash=[3, 3]).encode(x=alt.datum(0))
    rules = base.mark_rule(strokeWidth=2.5).encode(
        x=x, x2="ci_high:Q",
        color=alt.Color("significant:N", title=legend,
                        scale=alt.Scale(domain=["yes", "no"], range=["#b42318", "#6e7781"]),
                        legend=alt.Legend(orient="bottom")))
    points = base.mark_point(filled=True, size=size, opacity=1, color="#1d232b").encode(x="delta:Q")
    return alt.layer(zero, rules, points, data=alt.Data(values=rows))


def slice_deltas(rows: list[dict], measures: list[str]) -> str:
    """Paired differences from the first run within each slice, one panel per measure
    (rows: measure, slice, delta, ci_low, ci_high, significant)."""
    order = list(dict.fromkeys(r["slice"] for r in rows))
    base = alt.Chart().encode(y=alt.Y("slice:N", sort=order, title=None, axis=alt.Axis(labelLimit=220)))
    chart = _paired_layers(base, rows, alt.X("ci_low:Q", title=None, scale=alt.Scale(domain=[-1, 1])),
                           "p (Holm) < 0.05", 40).properties(width=170, height=alt.Step(18))
    return render(chart.facet(column=alt.Column("measure:N", sort=measures, title=None,
                                                header=alt.Header(labelFontWeight="bold", labelFontSize=11))))


def pareto(points: list[dict], k: int) -> str:
    """Recall against context cost, one dot per sweep point, the Pareto front drawn as a line
    (points: label, tokens, recall, pareto, best)."""
    front = sorted((p for p in points if p["pareto"]), key=lambda p: p["tokens"])
    x = alt.X("tokens:Q", title=f"mean tokens the top {k} results occupy (tokens@{k})", scale=alt.Scale(zero=True))
    y = alt.Y("recall:Q", title=f"SpanRecall@{k}", scale=alt.Scale(domain=[0, 1]))
    line = alt.Chart(alt.Data(values=front)).mark_line(color="#1a7f37", strokeWidth=2).encode(x=x, y=y)
    dots = alt.Chart(alt.Data(values=points)).mark_point(filled=True, size=80, opacity=1).encode(
        x=x, y=y,
        color=alt.Color("role:N", title=None, scale=alt.Scale(domain=["best", "on the Pareto front", "dominated"],
                                                              range=["#b42318", "#1a7f37", "#6e7781"]),
                        legend=alt.Legend(orient="bottom")))
    labels = alt.Chart(alt.Data(values=points)).mark_text(align="left", dx=7, dy=-6, fontSize=10).encode(
        x=x, y=y, text="label:N")
    return render((line + dots + labels).properties(width=520, height=320))


def history(points: list[dict], metric: str, drop_index: int | None) -> str:
    """A measure per run over time: the 95% interval as a band, the mean as a line, and a marker at the run
    where a lasting drop began (points: i, run, value, ci_low, ci_high)."""
    order = [p["run"] for p in points]
    x = alt.X("run:N", sort=order, title="run (oldest first)", axis=alt.Axis(labelAngle=-35, labelLimit=160))
    data = alt.Data(values=points)
    band = alt.Chart(data).mark_area(opacity=0.25, color="#1f6feb").encode(
        x=x, y=alt.Y("ci_low:Q", scale=alt.Scale(domain=[0, 1]), title=f"{metric}, 95% interval"), y2="ci_high:Q")
    line = alt.Chart(data).mark_line(color="#1f6feb", point=alt.OverlayMarkDef(filled=True, size=45)).encode(
        x=x, y="value:Q")
    layers = [band, line]
    if drop_index is not None:
        marker = [{"run": points[drop_index]["run"], "what": "lasting drop began"}]
        layers.append(alt.Chart(alt.Data(values=marker)).mark_rule(color="#b42318", strokeWidth=2,
                                                                   strokeDash=[5, 3]).encode(x=x))
        layers.append(alt.Chart(alt.Data(values=marker)).mark_text(color="#b42318", align="left", dx=4, y=8,
                                                                   fontWeight="bold").encode(x=x, text="what:N"))
    return render(alt.layer(*layers).properties(width=max(320, 46 * len(points)), height=260))
