"""One file's bytes to a ``Document``, by its format (``assay.inputs.corpus.files.FORMATS``)."""

from __future__ import annotations

from collections import OrderedDict

from assay.inputs.corpus.documents import Document
from assay.inputs.corpus.files import CorpusFile, extension
from assay.inputs.corpus.html import html_to_text
from assay.inputs.corpus.options import ReadOptions
from assay.inputs.corpus.text import Binary, Undecodable, decode
from assay.core.hashing import sha256_bytes

# PDF and DOCX text by (file SHA-256, format): a sweep or an ablation reads the same corpus once per point
_EXTRACTED: OrderedDict = OrderedDict()
_EXTRACTED_MAX = 4096


class Unreadable(Exception):
    """A file that cannot be read; ``skip``: list it as not read (a file read only because it has no
    extension) instead of failing the load."""

    def __init__(self, message: str, skip: bool = False):
        super().__init__(message)
        self.skip = skip


def read_document(f: CorpusFile, data: bytes, options: ReadOptions) -> tuple[Document, dict | None]:
    """The document, and the identity of what extracted its text (None for the formats read by decoding)."""
    sha = sha256_bytes(data)
    if f.format in ("pdf", "docx"):
        return _extracted(f, data, sha, options)
    try:
        decoded = decode(data, options.encoding)
    except Binary:
        if not extension(f.path.name):
            raise Unreadable("looks binary (contains NUL bytes): not read as text", skip=True) from None
        raise Unreadable("looks binary (contains NUL bytes); only text files can be ingested") from None
    except Undecodable as exc:
        raise Unreadable(str(exc)) from None
    text = decoded.text
    if f.format == "html":
        text = html_to_text(text)
    return Document(f.rel, text, len(data), sha, format=f.format, encoding=decoded.encoding,
                    encoding_source=decoded.source), None


def _extracted(f: CorpusFile, data: bytes, sha: str, options: ReadOptions) -> tuple[Document, dict]:
    from assay.inputs.corpus import docx, pdf
    from assay.core.extras import require

    require(f.format, f"{f.path} (a {f.format.upper()} file)")
    module = pdf if f.format == "pdf" else docx
    key = (sha, f.format)
    hit = _EXTRACTED.get(key)
    if hit is None:
        try:
            hit = module.extract(data, options.budget())
        except (pdf.PdfUnreadable, docx.DocxUnreadable) as exc:
            raise Unreadable(str(exc)) from None
        _EXTRACTED[key] = hit
        while len(_EXTRACTED) > _EXTRACTED_MAX:
            _EXTRACTED.popitem(last=False)
    else:
        _EXTRACTED.move_to_end(key)
    if f.format == "pdf":
        doc = Document(f.rel, hit.text, len(data), sha, pages=hit.pages, format="pdf", unmapped=hit.unmapped)
    else:
        doc = Document(f.rel, hit, len(data), sha, format="docx")
    return doc, module.identity()
