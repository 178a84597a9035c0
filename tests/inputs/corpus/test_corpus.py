"""Corpus ingest on real directories: which files count, how HTML reads, what the hashes cover, what fails."""

import hashlib
import os
import re
import shutil

import pytest

from assay.inputs.corpus import EXTENSIONS, corpus_files, html_to_text, load_corpus
from assay.core.errors import AssayError, CorpusError
from assay.core.hashing import canonical_json, config_hash, corpus_hash, sha256_bytes, sha256_text


def write(root, rel, content):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        content = content.encode("utf-8")
    path.write_bytes(content)
    return path


def reference_corpus_hash(files):
    """The corpus hash as its docstring defines it, computed independently of assay.core.hashing."""
    h = hashlib.sha256()
    for path, data in sorted(files, key=lambda pair: pair[0].encode("utf-8")):
        h.update(path.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0" + data)
    return h.hexdigest()


@pytest.fixture
def corpus_dir(tmp_path):
    root = tmp_path / "corpus"
    write(root, "a.md", "# Alpha\n\nFirst document.\n")
    write(root, "b.txt", "Plain text.\n")
    write(root, "sub/c.rst", "Title\n=====\n\nBody.\n")
    write(root, "sub/deep/d.html", "<p>Hello <b>web</b>.</p>")
    return root


# -- which files are ingested -----------------------------------------------------------------

def test_ingests_every_supported_extension_under_nested_dirs(corpus_dir):
    corpus = load_corpus(corpus_dir)
    assert [d.doc_id for d in corpus.documents] == ["a.md", "b.txt", "sub/c.rst", "sub/deep/d.html"]
    assert corpus.root == corpus_dir
    docs = corpus.by_id()
    assert docs["a.md"].text == "# Alpha\n\nFirst document.\n"
    assert docs["b.txt"].text == "Plain text.\n"
    assert docs["sub/c.rst"].text == "Title\n=====\n\nBody.\n"
    assert docs["sub/deep/d.html"].text == "Hello web.\n"
    assert set(EXTENSIONS) == {".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".pdf", ".docx"}


def test_load_corpus_accepts_a_string_path(corpus_dir):
    assert load_corpus(str(corpus_dir)).corpus_hash == load_corpus(corpus_dir).corpus_hash


def test_doc_ids_are_forward_slash_paths_sorted_as_utf8_bytes(tmp_path):
    root = tmp_path / "c"
    # '-' (0x2d) < '.' (0x2e) < '/' (0x2f); uppercase sorts before lowercase; non-ASCII after ASCII
    for rel in ["a/b.md", "a.md", "a-b.md", "B.md", "é.md", "z/y/x.txt"]:
        write(root, rel, f"text of {rel}\n")
    ids = [d.doc_id for d in load_corpus(root).documents]
    assert ids == ["B.md", "a-b.md", "a.md", "a/b.md", "z/y/x.txt", "é.md"]
    assert all("\\" not in i and not i.startswith("/") for i in ids)


def test_other_extensions_and_hidden_files_and_dirs_are_skipped_and_listed(tmp_path):
    root = tmp_path / "c"
    write(root, "keep.md", "kept\n")
    for rel in ["code.py", "data.json", "README", "notes.md.bak", "md", "image.png",
                ".hidden.md", ".git/config.md", ".cache/sub/page.html", "sub/.secret.txt"]:
        write(root, rel, "skipped\n")
    corpus = load_corpus(root)
    assert [d.doc_id for d in corpus.documents] == ["keep.md"]
    assert [p.relative_to(root).as_posix() for p in corpus_files(root)] == ["keep.md"]
    listed = {s.path: (s.extension, s.reason.split(" (")[0].split(":")[0]) for s in corpus.skipped}
    assert listed == {  # a hidden directory once, not walked
        ".cache/": ("", "hidden"), ".git/": ("", "hidden"), ".hidden.md": (".md", "hidden"),
        "README": ("", "no extension"), "code.py": (".py", "not a format assay reads"),
        "data.json": (".json", "not a format assay reads"), "image.png": (".png", "not a format assay reads"),
        "md": ("", "no extension"), "notes.md.bak": (".bak", "not a format assay reads"),
        "sub/.secret.txt": (".txt", "hidden")}


def test_extension_match_ignores_case_and_uppercase_html_is_reduced_to_text(tmp_path):
    root = tmp_path / "c"
    write(root, "NOTES.MD", "upper markdown\n")
    write(root, "PAGE.HTML", "<html><head><title>T</title></head><body><p>Shown &amp; <i>kept</i></p></body></html>")
    docs = load_corpus(root).by_id()
    assert set(docs) == {"NOTES.MD", "PAGE.HTML"}
    assert docs["PAGE.HTML"].text == "Shown & kept\n"


def test_a_corpus_in_a_hidden_directory_still_loads(tmp_path):
    root = tmp_path / ".corpus"
    write(root, "a.md", "text\n")
    assert [d.doc_id for d in load_corpus(root).documents] == ["a.md"]


def test_byte_size_and_sha256_are_of_the_raw_bytes(tmp_path):
    root = tmp_path / "c"
    raw_md = "\ufeffcafé\r\n".encode("utf-8")  # BOM and CRLF stay in the bytes
    raw_html = b"<p>x &amp; y</p>\n"
    write(root, "a.md", raw_md)
    write(root, "b.html", raw_html)
    docs = load_corpus(root).by_id()
    assert docs["a.md"].byte_size == len(raw_md) == 10
    assert docs["a.md"].sha256 == hashlib.sha256(raw_md).hexdigest()
    assert docs["a.md"].text == "café\r\n"  # the BOM is not text
    assert docs["b.html"].byte_size == len(raw_html)
    assert docs["b.html"].sha256 == hashlib.sha256(raw_html).hexdigest()
    assert docs["b.html"].text == "x & y\n"


# -- HTML reduced to text ---------------------------------------------------------------------

def test_html_drops_head_script_style_and_keeps_visible_text():
    html = """<!DOCTYPE html>
<html><head><title>Page title</title><meta charset="utf-8">
<style>p { color: red }</style><script>var hidden = 1;</script></head>
<body>
<script type="text/javascript">alert("no")</script>
<noscript>enable js</noscript><template><p>tmpl</p></template>
<h1>Heading</h1>
<p>First <b>bold</b> and <a href="x">linked</a> words.</p>
<style>.x { }</style>
<ul><li>one</li><li>two</li></ul>
</body></html>"""
    assert html_to_text(html) == "Heading\n\nFirst bold and linked words.\n\none\n\ntwo\n"


def test_html_inline_tags_vanish_without_adding_space():
    assert html_to_text("<p>un<b>bro</b><i>ken</i> word</p>") == "unbroken word\n"
    assert html_to_text("<p>a <span>b</span> <em>c</em></p>") == "a b c\n"


def test_html_block_tags_break_lines():
    assert html_to_text("<div>one</div><div>two</div>") == "one\n\ntwo\n"
    assert html_to_text("<p>line<br>break<br/>again</p>") == "line\nbreak\nagain\n"
    assert html_to_text("<table><tr><td>a</td><td>b</td></tr></table>") == "a\n\nb\n"


def test_html_entities_are_unescaped_once():
    assert html_to_text("<p>A &amp; B &lt;tag&gt; caf&eacute; &#233; &#x41; &quot;q&quot;</p>") == (
        'A & B <tag> café é A "q"\n')
    # what a browser shows for "&amp;lt;" is the four characters "&lt;"
    assert html_to_text("<p>Write &amp;lt; for a less-than sign</p>") == "Write &lt; for a less-than sign\n"
    assert html_to_text("<p>&amp;amp;</p>") == "&amp;\n"


def test_html_whitespace_collapses_within_lines_and_blank_lines_collapse():
    html = "<p>  lots   of \t space&nbsp;here </p>\n\n\n\n<p>next</p>\n\n"
    assert html_to_text(html) == "lots of space here\n\nnext\n"
    assert html_to_text("<script>x</script>") == ""


# -- corpus hash ------------------------------------------------------------------------------

def test_corpus_hash_matches_its_definition_and_is_stable(corpus_dir):
    files = [(p.relative_to(corpus_dir).as_posix(), p.read_bytes()) for p in corpus_files(corpus_dir)]
    first = load_corpus(corpus_dir).corpus_hash
    assert first == reference_corpus_hash(files)
    assert load_corpus(corpus_dir).corpus_hash == first
    assert re.fullmatch(r"[0-9a-f]{64}", first)  # a SHA-256, hex


def test_corpus_hash_does_not_depend_on_where_the_corpus_lives(corpus_dir, tmp_path):
    moved = shutil.copytree(corpus_dir, tmp_path / "elsewhere" / "deeper" / "copy")
    assert load_corpus(moved).corpus_hash == load_corpus(corpus_dir).corpus_hash


def test_corpus_hash_changes_on_rename_edit_add_and_remove(corpus_dir):
    base = load_corpus(corpus_dir).corpus_hash
    seen = {base}

    (corpus_dir / "b.txt").rename(corpus_dir / "b2.txt")
    renamed = load_corpus(corpus_dir).corpus_hash
    (corpus_dir / "b2.txt").rename(corpus_dir / "b.txt")
    assert load_corpus(corpus_dir).corpus_hash == base

    write(corpus_dir, "b.txt", "Plain text!\n")  # one byte differs
    edited = load_corpus(corpus_dir).corpus_hash
    write(corpus_dir, "b.txt", "Plain text.\n")

    write(corpus_dir, "new.md", "added\n")
    added = load_corpus(corpus_dir).corpus_hash
    (corpus_dir / "new.md").unlink()

    (corpus_dir / "a.md").unlink()
    removed = load_corpus(corpus_dir).corpus_hash

    for h in (renamed, edited, added, removed):
        assert h not in seen
        seen.add(h)


def test_corpus_hash_ignores_files_that_are_not_ingested(corpus_dir):
    base = load_corpus(corpus_dir).corpus_hash
    write(corpus_dir, "script.py", "print()\n")
    write(corpus_dir, ".hidden.md", "secret\n")
    write(corpus_dir, ".git/x.md", "vcs\n")
    assert load_corpus(corpus_dir).corpus_hash == base


def test_corpus_hash_separates_paths_from_contents():
    # moving bytes between two files, or from a path into its content, must change the hash
    assert corpus_hash([("a", b"xy"), ("b", b"z")]) != corpus_hash([("a", b"x"), ("b", b"yz")])
    assert corpus_hash([("ab", b"c")]) != corpus_hash([("a", b"bc")])
    assert corpus_hash([("a", b"1")]) != corpus_hash([("a", b"1"), ("b", b"")])
    # input order does not matter, only the sorted paths
    files = [("z.md", b"1"), ("a/b.md", b"2"), ("a.md", b"3")]
    assert corpus_hash(files) == corpus_hash(list(reversed(files))) == reference_corpus_hash(files)
    assert corpus_hash([]) == hashlib.sha256(b"").hexdigest()


def test_hash_helpers():
    assert sha256_bytes(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert sha256_text("é") == hashlib.sha256("é".encode("utf-8")).hexdigest()
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": "é"}]}) == '{"a":[1,{"c":"é","d":2}],"b":1}'
    assert config_hash({"a": 1, "b": 2}) == config_hash({"b": 2, "a": 1}) == sha256_text('{"a":1,"b":2}')
    assert config_hash({"a": 1}) != config_hash({"a": 2})


# -- errors -----------------------------------------------------------------------------------

def load_error(root) -> str:
    with pytest.raises(CorpusError) as info:
        load_corpus(root)
    assert isinstance(info.value, AssayError)
    return str(info.value)


@pytest.mark.parametrize("name, content, says", [
    ("bad-bom.txt", b"\xff\xfe\x00\xd8", "starts with a UTF-16 byte order mark but is not valid UTF-16"),
    ("binary.txt", b"PK\x03\x04\x00\x00binary", "looks binary (contains NUL bytes)"),
    ("nul.md", b"text\x00", "looks binary"),
])
def test_a_bad_file_fails_the_load_naming_the_file(tmp_path, name, content, says):
    root = tmp_path / "c"
    write(root, "good.md", "fine\n")
    bad = write(root, f"sub/{name}", content)
    message = load_error(root)
    assert message.startswith("1 corpus file(s) cannot be ingested:")
    assert f"{bad}: {says}" in message
    assert "good.md" not in message


@pytest.mark.parametrize("name, content", [
    ("empty.txt", b""), ("blank.md", b"  \n\t\r\n \n"), ("bom-only.md", b"\xef\xbb\xbf"),
    ("nbsp-only.md", "\u00a0\u3000\n".encode("utf-8")),
    ("invisible.html", b"<html><head><title>Only a title</title></head><body><script>x()</script></body></html>"),
    ("spaces.html", b"<p> &nbsp; </p><div>\n</div>"),
])
def test_a_file_without_text_is_kept_as_an_empty_document(tmp_path, name, content):
    root = tmp_path / "c"
    write(root, "good.md", "fine\n")
    write(root, f"sub/{name}", content)
    doc = load_corpus(root).by_id()[f"sub/{name}"]
    assert doc.empty and doc.byte_size == len(content)


def test_several_bad_files_are_all_reported_in_one_error(tmp_path):
    root = tmp_path / "c"
    write(root, "good.md", "fine\n")
    bad = [write(root, "a.md", b"x\x00"), write(root, "b/broken.pdf", b"%PDF-1.4 not really"),
           write(root, "c.docx", b"not a zip")]
    message = load_error(root)
    assert message.startswith("3 corpus file(s) cannot be ingested:")
    lines = message.splitlines()[1:]
    assert len(lines) == 3
    for path in bad:
        assert sum(line.startswith(f"  {path}: ") for line in lines) == 1


def test_an_unreadable_file_is_a_corpus_error(tmp_path):
    root = tmp_path / "c"
    write(root, "good.md", "fine\n")
    os.symlink(root / "nowhere.md", root / "dangling.md")  # dangling, inside the root (outside: test_corpus_safety)
    message = load_error(root)
    assert f"{root / 'dangling.md'}: cannot be read" in message


def test_missing_directory(tmp_path):
    missing = tmp_path / "nope"
    assert load_error(missing) == f"{missing}: corpus directory not found"
    a_file = write(tmp_path, "file.md", "x\n")
    assert load_error(a_file) == f"{a_file}: corpus directory not found"


def test_directory_without_corpus_files(tmp_path):
    root = tmp_path / "c"
    write(root, "code.py", "x\n")
    write(root, ".hidden.md", "x\n")
    (root / "emptydir").mkdir()
    message = load_error(root)
    assert message == (f"{root}: no .md, .markdown, .txt, .rst, .html, .htm, .pdf, .docx files found (not read: "
                       ".hidden.md: hidden (the name starts with a dot); code.py: not a format assay reads (it "
                       "reads .md, .markdown, .txt, .rst, .html, .htm, .pdf, .docx))")
    assert load_error(tmp_path / "c" / "emptydir") == f"{root / 'emptydir'}: no .md, .markdown, .txt, .rst, .html, .htm, .pdf, .docx files found"
