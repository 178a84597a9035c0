"""Real PDF and DOCX files made in the tests: reportlab writes the PDF (with Bitstream Vera, embedded, so
the ligature glyph has a ToUnicode entry as in a typeset PDF), python-docx the DOCX."""

from __future__ import annotations

from pathlib import Path

# The report every PDF test reads: page 1 has a ligature glyph (U+FB01, U+FB02 as typeset) and a word
# hyphenated at a line end; page 2 has two columns drawn line by line across both (the order a reader
# must not follow); page 3 is one line.
PAGE_1 = ["Quarterly retrieval report", "",
          "The \ufb01nancial team reviewed the \ufb02ow of funds in March.",
          "Dense retrie-",
          "val finds passages by meaning, not by words."]
LEFT = ["The left column begins here", "and continues on the left", "until it ends at the bottom."]
RIGHT = ["The right column starts after", "the left one is done and", "closes the page."]
PAGE_3 = ["Appendix: the index stores 4096-byte pages."]


def _font():
    import os

    import reportlab
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    if "Vera" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("Vera", os.path.join(os.path.dirname(reportlab.__file__), "fonts", "Vera.ttf")))
    return "Vera"


def write_pdf(path: Path, pages: list) -> Path:
    """A PDF of ``pages``: each a list of lines (one column), or a (left, right) pair of line lists drawn
    row by row across both columns."""
    from reportlab.pdfgen import canvas

    path.parent.mkdir(parents=True, exist_ok=True)
    font = _font()
    c = canvas.Canvas(str(path), pagesize=(612, 792), invariant=1)  # the same bytes every time
    for page in pages:
        c.setFont(font, 11)
        if isinstance(page, tuple):
            for row, (left, right) in enumerate(zip(*page)):
                c.drawString(72, 720 - 14 * row, left)
                c.drawString(330, 720 - 14 * row, right)
        else:
            for row, line in enumerate(page):
                c.drawString(72, 720 - 14 * row, line)
        c.showPage()
    c.save()
    return path


def report_pdf(path: Path) -> Path:
    return write_pdf(path, [PAGE_1, (LEFT, RIGHT), PAGE_3])


def write_docx(path: Path) -> Path:
    """A DOCX with a heading, a paragraph with bold and italic runs, one with a line break, an empty
    paragraph, and a table with a header row."""
    import docx

    path.parent.mkdir(parents=True, exist_ok=True)
    d = docx.Document()
    d.add_heading("Onboarding guide", level=1)
    p = d.add_paragraph("New staff get ")
    p.add_run("laptops").bold = True
    p.add_run(" on their ")
    p.add_run("first day").italic = True
    p.add_run(".")
    d.add_paragraph("")
    p = d.add_paragraph("Badges are printed at reception.")
    p.add_run().add_break()
    p.add_run("Lost badges cost ten euros.")
    table = d.add_table(rows=2, cols=2)
    for cell, text in zip(table.rows[0].cells + table.rows[1].cells, ["Item", "Owner", "VPN token", "IT desk"]):
        cell.text = text
    d.add_paragraph("Questions go to the HR channel.")
    d.save(str(path))
    return path
