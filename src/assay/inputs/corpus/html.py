"""HTML reduced to the text a browser shows: what quotes written against a rendered page resolve to."""

from __future__ import annotations

from html.parser import HTMLParser

# Tags whose start or end breaks a line when HTML is reduced to text.
_BLOCK_TAGS = {
    "address", "article", "aside", "blockquote", "br", "dd", "details", "div", "dl", "dt",
    "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr",
    "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td",
    "tfoot", "th", "thead", "title", "tr", "ul",
}
# Tags whose content is not text a reader sees.
_SKIP_TAGS = {"script", "style", "head", "noscript", "template"}


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in _SKIP_TAGS:
            self._skip_depth += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_startendtag(self, tag, attrs):
        if tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if tag in _SKIP_TAGS:
            self._skip_depth = max(0, self._skip_depth - 1)
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self._skip_depth:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    """Visible text of an HTML page: block tags break lines, inline tags vanish, entities unescaped.

    Whitespace inside a line collapses to one space and runs of blank lines to one
    blank line, so quotes written against what a browser shows resolve.
    """
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    # convert_charrefs already unescaped entities once; unescaping again would turn a
    # displayed "&lt;" (written "&amp;lt;") into "<".
    raw = "".join(parser.parts)
    lines = [" ".join(line.split()) for line in raw.split("\n")]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    paragraphs = "\n".join(out)
    return paragraphs + "\n" if paragraphs else ""
