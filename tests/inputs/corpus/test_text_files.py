"""Text files that are not plain UTF-8, empty files, .htm and .markdown, files without an extension; what each
does to the corpus hash."""

import hashlib

import pytest

from assay.inputs.corpus import ReadOptions, load_corpus, text_digest
from assay.inputs.corpus.notes import notes
from assay.inputs.corpus.text import decode
from assay.core.errors import CorpusError
from assay.core.hashing import corpus_hash

LATIN1 = "The caf\u00e9 menu lists cr\u00e8me br\u00fbl\u00e9e.\n"


def write(root, rel, data):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def test_a_latin1_file_is_read_with_the_detected_encoding_and_said(tmp_path):
    root = tmp_path / "c"
    path = write(tmp_path / "c", "menu.txt", LATIN1.encode("latin-1"))
    corpus = load_corpus(root)
    doc = corpus.documents[0]
    assert doc.text == LATIN1
    assert (doc.encoding, doc.encoding_source) == ("cp1252", "detected")
    assert notes(corpus) == [f"note: {path}: not UTF-8; read as cp1252 (detected; --encoding NAME reads such "
                             "files as NAME)"]
    assert corpus.readers == {"decoded": {"menu.txt": "cp1252"}}


@pytest.mark.parametrize("text, codec", [
    ("Le caf\u00e9 est tr\u00e8s chaud; \u00e0 bient\u00f4t.\n", "latin-1"),
    ("Stra\u00dfe und Gr\u00fc\u00dfe aus M\u00fcnchen.\n", "latin-1"),
    ("He said \u201chello\u201d \u2014 it\u2019s fine.\n", "cp1252"),
    ("\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430? "
     "\u0412\u0441\u0451 \u0445\u043e\u0440\u043e\u0448\u043e.\n", "cp1251"),
    ("\u3053\u3093\u306b\u3061\u306f\u3001\u4e16\u754c\u3002\u4eca\u65e5\u306f\u3044\u3044\u5929\u6c17"
     "\u3067\u3059\u3002", "shift_jis"),
])
def test_detection_reads_common_legacy_encodings(text, codec):
    assert decode(text.encode(codec)).text == text


def test_encoding_given_reads_files_that_are_not_utf8_and_nothing_else(tmp_path):
    root = tmp_path / "c"
    write(root, "menu.txt", LATIN1.encode("latin-1"))
    write(root, "utf8.md", "d\u00e9j\u00e0 vu\n")
    corpus = load_corpus(root, options=ReadOptions.make(encoding="latin-1"))
    docs = corpus.by_id()
    assert docs["menu.txt"].text == LATIN1
    assert (docs["menu.txt"].encoding, docs["menu.txt"].encoding_source) == ("iso8859-1", "given")
    assert (docs["utf8.md"].text, docs["utf8.md"].encoding_source) == ("d\u00e9j\u00e0 vu\n", "default")
    assert notes(corpus) == [f"note: {root / 'menu.txt'}: not UTF-8; read as iso8859-1 (--encoding)"]


def test_an_encoding_that_does_not_fit_fails_naming_the_file_and_what_to_do(tmp_path):
    root = tmp_path / "c"
    path = write(root, "menu.txt", "caf\u00e9 \u20ac5\n".encode("cp1252"))  # 0x80 is not ASCII
    with pytest.raises(CorpusError) as info:
        load_corpus(root, options=ReadOptions.make(encoding="ascii"))
    assert str(info.value) == ("1 corpus file(s) cannot be ingested:\n  "
                               f"{path}: not valid UTF-8 (byte 3), nor valid ascii (byte 3); give the encoding it was "
                               "saved in with --encoding, or re-save it as UTF-8")


def test_utf16_with_a_byte_order_mark_is_read_as_it_says(tmp_path):
    root = tmp_path / "c"
    write(root, "w.txt", "Windows notepad \u2013 UTF-16\n".encode("utf-16"))
    corpus = load_corpus(root)
    doc = corpus.documents[0]
    assert (doc.text, doc.encoding, doc.encoding_source) == ("Windows notepad \u2013 UTF-16\n", "utf-16", "bom")
    assert notes(corpus) == [f"note: {root / 'w.txt'}: read as UTF-16, as its byte order mark says"]
    assert corpus.readers == {}  # the bytes say how to read them


def test_empty_files_are_kept_with_a_warning(tmp_path):
    root = tmp_path / "c"
    write(root, "a.md", "text\n")
    write(root, "empty.md", b"")
    write(root, "blank.txt", " \n\t\n")
    write(root, "shell.html", "<html><head><title>t</title></head><body></body></html>")
    corpus = load_corpus(root)
    docs = corpus.by_id()
    assert [d for d in docs if docs[d].empty] == ["blank.txt", "empty.md", "shell.html"]
    assert docs["empty.md"].text == "" and docs["blank.txt"].text == " \n\t\n"
    assert notes(corpus) == [
        f"warning: {root / 'blank.txt'} is empty: kept (a retriever can return it), but no quote can resolve in it",
        f"warning: {root / 'empty.md'} is empty: kept (a retriever can return it), but no quote can resolve in it",
        f"warning: {root / 'shell.html'} has no visible text: kept (a retriever can return it), but no quote can "
        "resolve in it"]


def test_htm_reads_as_html_and_markdown_as_markdown(tmp_path):
    root = tmp_path / "c"
    write(root, "page.HTM", "<p>Shown &amp; <i>kept</i></p><script>hidden()</script>")
    write(root, "notes.markdown", "Has **support for both HTTP/1.1 and HTTP/2**.\n")
    docs = load_corpus(root).by_id()
    assert (docs["page.HTM"].text, docs["page.HTM"].format) == ("Shown & kept\n", "html")
    assert (docs["notes.markdown"].text, docs["notes.markdown"].format) == (
        "Has **support for both HTTP/1.1 and HTTP/2**.\n", "markdown")  # the source; quotes skip the markup


def test_files_without_an_extension_are_read_only_when_asked(tmp_path):
    root = tmp_path / "c"
    write(root, "a.md", "text\n")
    write(root, "LICENSE", "Permission is hereby granted.\n")
    write(root, "bin/tool", b"\x7fELF\x00\x01")
    plain = load_corpus(root)
    assert [d.doc_id for d in plain.documents] == ["a.md"]
    assert {s.path: s.reason for s in plain.skipped} == {
        "LICENSE": "no extension: --extensionless reads such files as plain text",
        "bin/tool": "no extension: --extensionless reads such files as plain text"}
    asked = load_corpus(root, options=ReadOptions.make(extensionless=True))
    assert [(d.doc_id, d.format, d.text) for d in asked.documents] == [
        ("LICENSE", "text", "Permission is hereby granted.\n"), ("a.md", "markdown", "text\n")]
    assert {s.path: s.reason for s in asked.skipped} == {  # binary: not read, not a failure
        "bin/tool": "looks binary (contains NUL bytes): not read as text"}


def test_a_corpus_of_utf8_text_keeps_the_hash_it_always_had(tmp_path):
    """The hash of every corpus stored before PDF, DOCX and encodings: path, NUL, length, NUL, bytes."""
    root = tmp_path / "c"
    files = {"a.md": b"# A\n", "b.txt": b"plain\n", "sub/c.html": b"<p>x</p>", "d.rst": "\ufeffBOM\n".encode("utf-8")}
    for rel, data in files.items():
        write(root, rel, data)
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + str(len(files[rel])).encode() + b"\0" + files[rel])
    corpus = load_corpus(root, options=ReadOptions.make(encoding="latin-1", exclude=["*.png"]))
    assert corpus.corpus_hash == h.hexdigest() == load_corpus(root).corpus_hash
    assert corpus.readers == {}


def test_the_hash_changes_with_the_text_a_setting_makes_and_only_then(tmp_path):
    root = tmp_path / "c"
    write(root, "a.md", "text\n")
    write(root, "menu.txt", LATIN1.encode("latin-1"))
    write(root, "README", "readme\n")
    detected = load_corpus(root)
    given = load_corpus(root, options=ReadOptions.make(encoding="latin-1"))  # the same text as cp1252 makes
    koi8 = load_corpus(root, options=ReadOptions.make(encoding="koi8_r"))  # other text: another corpus
    extensionless = load_corpus(root, options=ReadOptions.make(extensionless=True))
    excluded = load_corpus(root, options=ReadOptions.make(exclude=["menu.txt"]))
    assert given.corpus_hash == detected.corpus_hash
    assert len({detected.corpus_hash, koi8.corpus_hash, extensionless.corpus_hash, excluded.corpus_hash}) == 4
    raw = [("a.md", b"text\n"), ("menu.txt", LATIN1.encode("latin-1"))]
    assert detected.corpus_hash == corpus_hash(raw, {"menu.txt": text_digest(detected.by_id()["menu.txt"])})
    assert excluded.corpus_hash == corpus_hash(raw[:1])
    assert (detected.readers, given.readers) == ({"decoded": {"menu.txt": "cp1252"}},
                                                 {"decoded": {"menu.txt": "iso8859-1"}})


def test_past_ten_files_of_a_kind_the_rest_are_counted_unless_verbose(tmp_path):
    root = tmp_path / "c"
    for i in range(12):
        write(root, f"old{i:02}.txt", LATIN1.encode("latin-1"))
        write(root, f"empty{i:02}.md", b"")
    said = notes(load_corpus(root))
    assert len(said) == 22
    assert said[10] == "warning: and 2 more empty file(s), kept (--verbose lists them)"
    assert said[21] == "note: and 2 more file(s) not UTF-8, read as said above (--verbose lists them)"
    assert said[11] == (f"note: {root / 'old00.txt'}: not UTF-8; read as cp1252 (detected; --encoding NAME reads "
                        "such files as NAME)")
    assert len(notes(load_corpus(root), verbose=True)) == 24
