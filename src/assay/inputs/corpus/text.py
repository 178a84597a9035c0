"""Bytes to text for the plain formats (Markdown, reStructuredText, plain text, HTML).

UTF-8 first, as every file should be. A byte order mark names its encoding (UTF-16 and UTF-32 files have
one); a UTF-8 one is dropped. A file that is not UTF-8 is decoded with the encoding given (``--encoding``),
else the one charset-normalizer detects, preferring Windows-1252 (cp1252, a superset of latin-1's
printable characters and the most common legacy encoding of Western text) whenever it decodes the bytes
and reads no messier than the detector's own pick: on a few words of French or German the detector
alone often names an Eastern European or Arabic code page. What decoded each file is kept with it.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

# (byte order mark, codec): UTF-32's marks first, as UTF-32 LE's starts with UTF-16 LE's
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
WESTERN = "cp1252"

# how a file's encoding was decided (documents.encoding_source)
DEFAULT, BOM, GIVEN, DETECTED = "default", "bom", "given", "detected"


class Binary(Exception):
    """The bytes hold NUL bytes (and no byte order mark): not a text file."""


class Undecodable(Exception):
    """The bytes are not valid in any encoding tried; the message says which and what to do."""


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # Python's codec name: 'utf-8', 'utf-16', 'cp1252', ...
    source: str  # DEFAULT (UTF-8), BOM, GIVEN (--encoding) or DETECTED


def decode(data: bytes, given: str | None = None) -> Decoded:
    for mark, codec in _BOMS:
        if data.startswith(mark):
            try:
                text = data[len(mark):].decode(codec.replace("-", "_") + _endian(mark))
            except UnicodeDecodeError as exc:
                raise Undecodable(f"starts with a {codec.upper()} byte order mark but is not valid {codec.upper()} "
                                  f"(byte {exc.start + len(mark)}); re-save it as UTF-8") from None
            return Decoded(text, "utf-8", DEFAULT) if codec == "utf-8" else Decoded(text, codec, BOM)
    if b"\0" in data:
        raise Binary()
    try:
        return Decoded(data.decode("utf-8"), "utf-8", DEFAULT)
    except UnicodeDecodeError as exc:
        bad = exc.start
    if given is not None:
        try:
            return Decoded(data.decode(given), given, GIVEN)
        except UnicodeDecodeError as exc:
            raise Undecodable(f"not valid UTF-8 (byte {bad}), nor valid {given} (byte {exc.start}); give the "
                              "encoding it was saved in with --encoding, or re-save it as UTF-8") from None
    found = detect(data)
    if found is None:
        raise Undecodable(f"not valid UTF-8 (byte {bad}) and its encoding could not be detected; give it with "
                          "--encoding (e.g. --encoding latin-1), or re-save the file as UTF-8")
    return found


def _endian(mark: bytes) -> str:
    if mark in (codecs.BOM_UTF16_LE, codecs.BOM_UTF32_LE):
        return "_le"
    if mark in (codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE):
        return "_be"
    return ""


def detect(data: bytes) -> Decoded | None:
    """The detected decoding of bytes that are not UTF-8, or None when nothing fits."""
    import charset_normalizer

    best = charset_normalizer.from_bytes(data).best()
    try:
        western = data.decode(WESTERN)
    except UnicodeDecodeError:
        western = None
    if western is not None:
        scored = charset_normalizer.from_bytes(data, cp_isolation=[WESTERN]).best()
        if best is None or (scored is not None and scored.chaos <= best.chaos):
            return Decoded(western, WESTERN, DETECTED)
    if best is None:
        return None
    return Decoded(str(best), codecs.lookup(best.encoding).name, DETECTED)
