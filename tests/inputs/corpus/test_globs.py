"""--include / --exclude globs, [corpus] in assay.toml, and the list of files not read."""

import pytest

from assay.inputs.corpus import ReadOptions, load_corpus
from assay.inputs.corpus.notes import notes
from assay.inputs.corpus.options import Glob, from_config
from assay.core.errors import ConfigError
from assay.inputs.project import load_config

PATHS = ["a.md", "docs/b.md", "docs/old/c.md", "docs/old/d.pdf", "drafts/e.md", "x/drafts/f.md", "g.bak.md"]


@pytest.mark.parametrize("glob, matched", [
    ("*.md", ["a.md", "docs/b.md", "docs/old/c.md", "drafts/e.md", "x/drafts/f.md", "g.bak.md"]),  # any depth
    ("docs/*.md", ["docs/b.md"]),  # * stays in its directory
    ("docs/**/*.md", ["docs/b.md", "docs/old/c.md"]),  # **/ crosses directories, or none
    ("docs/**", ["docs/b.md", "docs/old/c.md", "docs/old/d.pdf"]),
    ("docs", ["docs/b.md", "docs/old/c.md", "docs/old/d.pdf"]),  # a directory: everything under it
    ("docs/old/", ["docs/old/c.md", "docs/old/d.pdf"]),
    ("drafts", ["drafts/e.md", "x/drafts/f.md"]),  # a name at any depth
    ("/drafts", ["drafts/e.md"]),  # a leading / is the root's
    ("./a.md", ["a.md"]),
    ("?.md", ["a.md", "docs/b.md", "docs/old/c.md", "drafts/e.md", "x/drafts/f.md"]),
    ("/[ab].md", ["a.md"]),
    ("[ab].md", ["a.md", "docs/b.md"]),
    ("docs/**/[!b].*", ["docs/old/c.md", "docs/old/d.pdf"]),
    ("*.bak.md", ["g.bak.md"]),
])
def test_glob_semantics(glob, matched):
    assert [p for p in PATHS if Glob.parse(glob).matches(p)] == matched


def corpus(root):
    for rel in PATHS:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".pdf"):
            path.write_bytes(b"%PDF-1.4 never read: excluded\n")
        else:
            path.write_text(f"text of {rel}\n")
    return root


def test_exclude_wins_and_an_excluded_directory_is_listed_once_and_not_walked(tmp_path):
    root = corpus(tmp_path / "c")
    (root / "docs" / "old" / "pipe.md").unlink(missing_ok=True)
    import os

    os.mkfifo(root / "docs" / "old" / "pipe.md")  # would fail the load if the directory were walked
    read = load_corpus(root, options=ReadOptions.make(include=["docs/**", "a.md"], exclude=["docs/old", "*.bak.md"]))
    assert [d.doc_id for d in read.documents] == ["a.md", "docs/b.md"]
    assert [(s.path, s.reason) for s in read.skipped] == [
        ("docs/old/", "excluded by the glob 'docs/old'"),
        ("drafts/e.md", "matches no --include glob ('docs/**', 'a.md')"),
        ("g.bak.md", "excluded by the glob '*.bak.md'"),
        ("x/drafts/f.md", "matches no --include glob ('docs/**', 'a.md')")]
    assert notes(read) == [f"note: 3 files and 1 directory under {root} not read: excluded 2, not included 2 "
                           "(--verbose lists them)"]
    assert notes(read, verbose=True)[1:] == [
        "  not read: docs/old/: excluded by the glob 'docs/old'",
        "  not read: drafts/e.md: matches no --include glob ('docs/**', 'a.md')",
        "  not read: g.bak.md: excluded by the glob '*.bak.md'",
        "  not read: x/drafts/f.md: matches no --include glob ('docs/**', 'a.md')"]


def test_corpus_table_of_assay_toml_is_checked_and_flags_replace_it(tmp_path):
    toml = tmp_path / "assay.toml"
    toml.write_text('[corpus]\ninclude = ["docs/**"]\nexclude = ["drafts"]\nencoding = "latin-1"\n'
                    'extensionless = true\n')
    config = load_config(toml)
    options = from_config(config)
    assert ([g.pattern for g in options.include], [g.pattern for g in options.exclude], options.encoding,
            options.extensionless, options.max_file_mb) == (["docs/**"], ["drafts"], "iso8859-1", True, 50.0)
    flags = from_config(config, include=("*.pdf",), encoding="cp1252", extensionless=False, max_file_mb=2.0)
    assert ([g.pattern for g in flags.include], [g.pattern for g in flags.exclude], flags.encoding,
            flags.extensionless, flags.max_file_mb) == (["*.pdf"], ["drafts"], "cp1252", False, 2.0)


@pytest.mark.parametrize("table, says", [
    ('include = "docs/**"\nextensionless = "yes"', "[corpus] extensionless must be true or false, not 'yes'"),
    ('encoding = "latn-1"', "[corpus] unknown encoding 'latn-1'; give a name Python knows, e.g. latin-1"),
    ('encoding = "rot13"', "[corpus] 'rot13' is not a text encoding"),
    ('exclude = [""]', "[corpus] exclude: '' is not a glob"),
    ('exclude = 3', "[corpus] exclude must be a list of globs, not 3"),
    ('max_file_mb = 3', "[corpus] has unknown setting(s) max_file_mb; allowed: include, exclude, encoding, "
                        "extensionless (max_file_mb is in [run])"),
])
def test_a_bad_corpus_table_is_a_config_error_naming_the_file(tmp_path, table, says):
    toml = tmp_path / "assay.toml"
    toml.write_text("[corpus]\n" + table + "\n")
    with pytest.raises(ConfigError) as info:
        load_config(toml)
    assert str(info.value).startswith(f"{toml}: ") and says in str(info.value)
