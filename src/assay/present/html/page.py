"""The shell every HTML report shares: one self-contained document, its style, its one script and its policy.

Nothing in a page is fetched: the style and the script are inline, charts are inline SVG, and the
Content-Security-Policy allows no source at all except that one script (by its SHA-256) and inline
style. Every value the page did not write itself goes through ``e`` (``assay.core.escape.html``) where it
enters the markup, so stored text (documents, questions, quotes, names, ids) always shows as text.
"""

from __future__ import annotations

import base64
import hashlib
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from assay.core import escape
from assay.core.files import write  # noqa: F401 (page.write: how every page is written)

KINDS = ("run", "runs", "sweep", "history")
_HERE = Path(__file__).parent


@lru_cache(maxsize=None)
def style() -> str:
    return (_HERE / "page.css").read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def script() -> str:
    return (_HERE / "page.js").read_text(encoding="utf-8")


def script_hash(text: str) -> str:
    """The CSP source for an inline script: 'sha256-' and the base64 SHA-256 of its exact text."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def csp(script_text: str | None) -> str:
    """The page's policy: nothing may load; inline style; the one inline script by its hash, or none at all."""
    scripts = f"'{script_hash(script_text)}'" if script_text is not None else "'none'"
    return f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src {scripts}"


def e(value) -> str:
    """A stored value as HTML text or attribute content; None shows as a dash."""
    return "&ndash;" if value is None else escape.html(value)


def anchor(query_id: str) -> str:
    """A question's anchor on every page: ``q-`` and its id, percent-encoded as UTF-8 with letters, digits and
    ``-._~:/@`` kept. So ``report.html#q-ID`` names the same question in any run's report (a position would
    not), two ids never share an anchor (``%`` itself is encoded), and the anchor is a valid HTML id and URL
    fragment whatever the id holds (spaces, ``|``, quotes, ``#``, any script): browsers match the fragment
    to the id as written, before and after decoding it. The prefix keeps an id such as ``header`` off the
    page's own section anchors."""
    return "q-" + quote(str(query_id), safe="-._~:/@")


def num(value, places: int = 3) -> str:
    return "&ndash;" if value is None else f"{value:.{places}f}"


def attr(name: str, value) -> str:
    """`` name="value"``, the value escaped; nothing when the value is None."""
    return "" if value is None else f' {name}="{escape.html(value)}"'


def facts(pairs) -> str:
    """A definition list of (label, html) pairs; the html is already escaped by the caller."""
    items = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in pairs if v not in (None, ""))
    return f'<dl class="facts">{items}</dl>'


def summary_section(points: list[str]) -> str:
    """``section#summary``: the plain-language points (``assay.present.html.summary``) that open a report, a list item each."""
    if not points:
        return ""
    return '<section id="summary"><h2>In brief</h2><ul>' + "".join(f"<li>{e(p)}</li>" for p in points) + "</ul></section>"


def figure(name: str, svg: str, caption: str = "") -> str:
    """A chart: ``figure.chart[data-chart=name]`` holding the inline SVG and an escaped caption."""
    cap = f"<figcaption>{e(caption)}</figcaption>" if caption else ""
    return f'<figure class="chart" data-chart="{e(name)}">{svg}{cap}</figure>'


def table(headers: list[str], rows: list[list[str]], attrs: str = "", row_attrs: list[str] | None = None,
          numeric: set[int] = frozenset()) -> str:
    """A plain table of already-escaped cells; columns in ``numeric`` align right."""
    head = "".join(f'<th{" class=num" if i in numeric else ""}>{h}</th>' for i, h in enumerate(headers))
    body = []
    for n, row in enumerate(rows):
        cells = "".join(f'<td{" class=num" if i in numeric else ""}>{c}</td>' for i, c in enumerate(row))
        body.append(f"<tr{row_attrs[n] if row_attrs else ''}>{cells}</tr>")
    return f'<div class="wide"><table{attrs}><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def document(kind: str, title: str, body: str, with_script: bool = False) -> str:
    """The whole page. ``title`` is plain text (escaped here); ``body`` is markup built with ``e``."""
    if kind not in KINDS:
        raise ValueError(f"unknown report kind {kind!r}")
    js = script() if with_script else None
    tail = f"<script>{js}</script>" if with_script else ""
    body = escape.bidi_visible(body)  # what reached the body unescaped (a chart's labels) cannot reorder the page
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp(js)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{e(title)}</title><style>{style()}</style></head>"
        f'<body data-report="{kind}">{body}{tail}</body></html>\n'
    )
