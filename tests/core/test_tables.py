"""assay.core.tables: one renderer for every plain-text table, aligned whatever the cells hold."""

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_tables
from assay.core.tables import render

LONG = [["bm25", "0.554", 56], ["dense-top3", "0.607", 5], ["hybrid-rerank-with-a-very-long-name", "-", 1234]]


def test_every_row_starts_each_column_at_the_same_offset():
    text = render(["pipeline", "value", "n"], LONG)
    lines = text.splitlines()
    assert lines[0].split() == ["pipeline", "value", "n"]
    assert set(lines[1]) == {"-"} and len(lines[1]) == max(len(line) for line in lines)
    # left-aligned names start together; right-aligned figures end together
    width = len("hybrid-rerank-with-a-very-long-name")
    for line in lines[2:]:
        assert line[width:width + 2] == "  ", line
    value_end = lines[0].index("value") + len("value")
    assert [line[:value_end].rstrip()[-5:] for line in lines[2:4]] == ["0.554", "0.607"]
    assert lines[4][:value_end].endswith("-")
    assert {len(line) for line in lines[2:]} == {len(lines[0])}  # n: right-aligned, all end in the same column
    assert text == "\n".join([
        "pipeline                             value     n",
        "------------------------------------------------",
        "bm25                                 0.554    56",
        "dense-top3                           0.607     5",
        "hybrid-rerank-with-a-very-long-name      -  1234"])


def test_wide_characters_keep_the_columns_in_line():
    lines = render(["name", "n"], [["日本語のパイプライン", 1], ["x", 22]]).splitlines()
    from rich.cells import cell_len

    assert len({cell_len(line) for line in lines}) == 1


def test_align_overrides_the_guess():
    text = render(["query_id", "n"], [["101", 1], ["7", 2]], align=["left", None])
    assert text.splitlines()[2:] == ["101       1", "7         2"]
    assert render(["query_id"], [["101"], ["7"]]).splitlines()[2:] == ["     101", "       7"]  # figures: right
    with pytest.raises(ValueError, match="align"):
        render(["a"], [["x"]], align=["center"])
    with pytest.raises(ValueError, match="row 0 has 2 cells for 1 columns"):
        render(["a"], [["x", "y"]])


def test_no_rows_gives_the_header_and_its_rule():
    assert render(["metric", "n"], []) == "metric  n\n---------"


def test_none_is_an_empty_cell():
    assert render(["a", "b"], [[None, "x"]]).splitlines()[2] == "   x"


@pytest.mark.parametrize("columns", ["20", "5"])
def test_never_wraps_or_truncates_on_a_narrow_terminal(columns):
    name = "a-pipeline-name-far-wider-than-any-terminal-" * 4
    code = ("import sys; from assay.core.tables import render; "
            f"sys.stdout.write(render(['pipeline', 'value'], [[{name!r}, '0.5'], ['x', '0.25']]))")
    env = {"COLUMNS": columns, "LINES": "5", "TERM": "xterm-256color", "FORCE_COLOR": "1", "PATH": ""}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out == render(["pipeline", "value"], [[name, "0.5"], ["x", "0.25"]])
    lines = out.splitlines()
    assert len(lines) == 4 and lines[2] == f"{name}    0.5" and "…" not in out and "\x1b" not in out


def test_markup_and_terminal_escapes_are_shown_not_acted_on():
    hostile = ["[bold red]x[/]", "\x1b[31mred\x1b]0;title\x07", ":smile: [link=http://e.example]y[/link]"]
    text = render(["pipeline"], [[h] for h in hostile])
    assert "\x1b" not in text and "\x07" not in text
    lines = text.splitlines()
    assert lines[2] == "[bold red]x[/]"
    assert lines[3] == "\\x1b[31mred\\x1b]0;title\\x07"
    assert lines[4] == ":smile: [link=http://e.example]y[/link]"
    assert render(["[b]head[/b]"], []).splitlines()[0] == "[b]head[/b]"


def test_a_newline_in_a_cell_stays_on_one_row():
    lines = render(["query_id", "n"], [["two\nlines", 1]]).splitlines()
    assert lines[2] == "two\\nlines  1"


def test_markdown_mode_writes_a_github_table_with_escaped_cells():
    text = render(["pipeline", "n"], [["a|b <i>", 3], [None, "x\ny"]], markdown=True)
    assert text == "| pipeline | n |\n|---|---|\n| a\\|b &lt;i&gt; | 3 |\n|  | x y |"


def test_importing_assay_does_not_import_rich():
    code = "import sys, assay.core.tables, assay.cli; print('rich' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


CASES = [
    (["pipeline", "value", "n"], LONG),
    (["name", "n", "note"], [["日本語のパイプライン", 1, "wide"], ["x", 22, ""], ["", None, "trailing  "]]),
    (["q", "delta", "ci"], [["a", "+0.012", "[-0.1, 0.2]"], ["b", "0.5  ", "-"], ["c", "<0.001", "[0.416, 0.684]"]]),
    (["only"], [[""], ["\x1b[2J"], ["[b]x[/b]"]]),
]


@pytest.mark.parametrize("headers, rows", CASES)
def test_the_layout_is_rich_tables(headers, rows):
    for body in (rows, rows * 50, []):
        for align in (None, ["left"] * len(headers), ["right"] * len(headers)):
            assert render(headers, body, align=align) == reference_tables.render(headers, body, align=align)


cells = st.one_of(st.none(), st.integers(-10**6, 10**6), st.floats(allow_nan=False, width=32),
                  st.text(st.characters(codec="utf-8"), max_size=12),
                  st.sampled_from(["0.554", "+0.012", "[0.416, 0.684]", "-", "", "日本語", "e\u0301", "a  ", " b"]))


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.lists(st.text(max_size=8), min_size=n, max_size=n),
    st.lists(st.lists(cells, min_size=n, max_size=n), max_size=6),
    st.lists(st.sampled_from(["left", "right", None]), min_size=n, max_size=n))))
@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_any_table_is_laid_out_as_rich_lays_it_out(table):
    headers, rows, align = table
    assert render(headers, rows, align=align) == reference_tables.render(headers, rows, align=align)
