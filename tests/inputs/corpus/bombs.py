"""Hostile PDF and DOCX files built in the tests, small on disk and huge (or endless) once read: a PDF is written
object by object (its cross-reference table computed), a DOCX is python-docx's with its body replaced."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path


def pdf(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (object i+1 is objects[i]; 1 is the catalog) with a correct cross-reference table."""
    out, offsets = io.BytesIO(), []
    out.write(b"%PDF-1.4\n")
    for i, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for at in offsets:
        out.write(b"%010d 00000 n \n" % at)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def stream(data: bytes, filters: str = "", extra: bytes = b"") -> bytes:
    head = b"<< /Length %d" % len(data) + (b" /Filter [" + filters.encode() + b"]" if filters else b"") + extra + b" >>"
    return head + b"\nstream\n" + data + b"\nendstream"


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def one_page(content: bytes, resources: bytes = b"", more: list[bytes] = ()) -> bytes:
    """A one-page PDF whose page draws ``content`` (a stream object) with Helvetica as /F1 and ``resources``."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
               b"/Resources << /Font << /F1 5 0 R >> " + resources + b" >> >>",
               content, FONT, *more]
    return pdf(objects)


def text_pdf(words: str = "hello world") -> bytes:
    return one_page(stream(b"BT /F1 12 Tf 72 720 Td (" + words.encode() + b") Tj ET"))


def flate_bomb(size: int, times: int = 1) -> bytes:
    """A page whose content stream is ``size`` spaces (harmless text), Flate-compressed ``times`` over."""
    data = b" " * size
    for _ in range(times):
        data = zlib.compress(data, 9)
    return one_page(stream(data, " ".join(["/FlateDecode"] * times)))


def run_length_bomb(size: int) -> bytes:
    """A page whose content stream is RunLength-encoded: each two bytes unpack to 128 spaces."""
    return one_page(stream(b"\x81 " * (size // 128) + b"\x80", "/RunLengthDecode"))


def lzw_bomb(size: int) -> bytes:
    """A page whose content stream is LZW-encoded runs of spaces: codes 258..509 after a clear code (9 bits each,
    the table reset before it would widen them) stand for 2..253 spaces, about 32 KB per 286 bytes."""
    segment = [256, 32] + list(range(258, 510))
    per = 1 + sum(range(2, 254))
    codes = segment * (size // per + 1) + [257]
    bits = "".join(format(code, "09b") for code in codes)
    bits += "0" * (-len(bits) % 8)
    data = int(bits, 2).to_bytes(len(bits) // 8, "big")
    return one_page(stream(data, "/LZWDecode"))


def fan_out(depth: int = 12, width: int = 10) -> bytes:
    """Form XObjects each drawing the one below ``width`` times, ``depth`` deep: width**depth draws of a leaf
    that draws nothing (no glyph, no path), so reading it never ends and holds little. Object 6 is the leaf."""
    forms = [stream(b"q Q", extra=b" /Type /XObject /Subtype /Form /BBox [0 0 10 10]")]
    for level in range(1, depth + 1):
        below = 6 + level - 1
        forms.append(stream(b"/X Do " * width, extra=b" /Type /XObject /Subtype /Form /BBox [0 0 10 10] "
                            b"/Resources << /XObject << /X %d 0 R >> >>" % below))
    return one_page(stream(b"/X Do"), b"/XObject << /X %d 0 R >>" % (6 + depth), forms)


def scattered_boxes(n: int) -> bytes:
    """A page of ``n`` one-letter words far apart: ``n`` text boxes, whose ordering compares every pair."""
    cols = 50
    ops = b"".join(b"BT /F1 1 Tf %d %d Td (a) Tj ET\n" % (10 + 11 * (i % cols), 10 + 7 * (i // cols)) for i in range(n))
    return one_page(stream(ops))


def docx_bomb(base: bytes, size: int) -> bytes:
    """``base`` (a DOCX's bytes) with its body replaced by one paragraph of ``size`` letters, deflated."""
    body = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
            b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r>'
            b"<w:t>" + b"a" * size + b"</w:t></w:r></w:p></w:body></w:document>")
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, body if info.filename == "word/document.xml" else src.read(info.filename))
    return out.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
