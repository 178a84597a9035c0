"""Survivors of the mutmut run of 2026-12-01 outside the statistics: compare's direct SQL path, user measures
found from an assay.toml without a recorded path, chunker labels with parameters beyond size and overlap, and
quote resolution (markup before a quote, line-end hyphens, the nearest-passage boundary)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from assay.inputs.chunking import chunker_label
from assay.core.errors import ConfigError
from assay.inputs.judgments.resolve import MIN_SHOWN_SIMILARITY, find_quote, not_found_message


# -- compare reads the pairs with SQL on a DuckDB warehouse -------------------------------------------------------

def test_compare_on_a_duckdb_warehouse_pairs_the_values_with_sql(tmp_path, monkeypatch):
    """Kills x_paired_tests__mutmut_7 (holds_duckdb asked of None): on a Warehouse, compare pairs the values
    with assay.analytics.direct.paired_values (SQL), not through the Ibis expression. Checked in this process
    (tests/mutation/test_comparison_kills_2.py checks the same in a fresh interpreter, which mutmut does not
    follow)."""
    from assay.analytics import direct, pairing
    from assay.verdicts.comparison import compare
    from assay.store.warehouse import Warehouse
    from assay.inputs.chunking import Chunk
    from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

    path = tmp_path / "w.duckdb"
    d0, d1 = (Chunk(f"d{i}.md", i, 0, DOC_LEN, "x" * DOC_LEN).chunk_id for i in (0, 1))
    with Warehouse.open(path) as wh:
        for run_id, first in (("a", 1), ("b", 0)):
            syn = Synthetic(["d0.md", "d1.md"], [Chunk(f"d{i}.md", i, 0, DOC_LEN, "x" * DOC_LEN) for i in (0, 1)])
            for i in range(6):
                ranking = [d0, d1] if (i + first) % 2 else [d1, d0]
                syn.queries.append(QuerySpec(f"q{i}", [("d0.md", None, None, 1)], ranking))
            write_synthetic(wh, syn, run_id=run_id)
    calls = []
    real = direct.paired_values

    def recording(*args, **kwargs):
        calls.append(args[1:3])
        return real(*args, **kwargs)

    def refused(*args, **kwargs):
        raise AssertionError("a DuckDB warehouse was paired through the Ibis expression")

    monkeypatch.setattr(direct, "paired_values", recording)
    monkeypatch.setattr(pairing, "paired", refused)
    with Warehouse.open(path, read_only=True) as wh:
        rows = compare(wh, "a", "b")["rows"]
    assert calls == [("a", "b")]
    assert rows and all(r["n"] == 6 for r in rows if r["slice"] == "all")


# -- user measures: the directory is relative to assay.toml, "assay.toml" in the working directory by default ------

def test_a_measures_dir_without_a_recorded_path_is_relative_to_the_working_directory(tmp_path, monkeypatch):
    """Kills x_load_user_measures__mutmut_13, _15 (no default path: Path(None) fails) and _18 (the default named
    otherwise in the message): a parsed assay.toml that does not say where it was read is taken as ./assay.toml."""
    from assay.measures.registry import load_user_measures

    monkeypatch.chdir(tmp_path)
    try:
        with pytest.raises(ConfigError) as error:
            load_user_measures({"measures": {"dir": "no-such-dir"}})
        assert str(error.value) == "assay.toml: [measures] dir 'no-such-dir' is not a directory (no-such-dir)"
        (tmp_path / "measures").mkdir()
        assert load_user_measures({"measures": {"dir": "measures"}}) == ()  # an empty directory: no user measures
    finally:
        load_user_measures({})  # the built-in measures again, for the tests after this one


# -- chunker labels ------------------------------------------------------------------------------------------------

def test_a_chunker_label_puts_size_and_overlap_first_and_the_rest_by_name():
    """Kills x_chunker_label__mutmut_4, _5 (overlap left out of the order) and _16 (every key looked up in the
    order): parameters beyond size and overlap follow them, by name."""
    chunker = {"name": "semantic", "model": "m", "overlap": 50, "breakpoint": 0.9, "size": 400}
    assert chunker_label(chunker) == "semantic(size=400, overlap=50, breakpoint=0.9, model=m)"
    assert chunker_label({"name": "x", "overlap": 0, "alpha": 1}) == "x(overlap=0, alpha=1)"
    assert chunker_label({"name": "document"}) == "document"


# -- quote resolution ----------------------------------------------------------------------------------------------

def test_a_quote_with_heading_markup_covers_the_markup():
    """Kills x__loose__mutmut_10 (fragment[-1:] -> fragment[+1:]): the quote '## Install the guide' is not in the
    Markdown source as written ('*the*' is emphasised there), so it matches the rendered heading and then takes in
    the '## ' before it; that prefix ends in a space after two other characters, which the mutant misses."""
    text = "intro\n\n## Install *the* guide\n"
    assert find_quote(text, "## Install the guide", "a.md") == [(7, 29)]
    assert find_quote(text, "# Install the guide", "a.md") == [(8, 29)]


def test_a_nearest_passage_exactly_at_the_minimum_similarity_is_shown(monkeypatch):
    """Kills x_not_found_message__mutmut_10 (< -> <=): a passage scoring exactly MIN_SHOWN_SIMILARITY is shown;
    only one below it is called noise."""
    from assay.inputs.judgments import nearest

    def passage(similarity):
        return SimpleNamespace(similarity=similarity, line=3, snippet="the nearest words",
                               describe=lambda: f"similarity {similarity:.2f}, line 3")

    monkeypatch.setattr(nearest, "nearest_passage", lambda text, quote, doc_id: passage(MIN_SHOWN_SIMILARITY))
    assert not_found_message("t", "q", "a.md") == (
        "quote not found in a.md: 'q'; nearest passage (similarity 0.50, line 3): 'the nearest words'")
    below = MIN_SHOWN_SIMILARITY - 1e-9
    monkeypatch.setattr(nearest, "nearest_passage", lambda text, quote, doc_id: passage(below))
    assert not_found_message("t", "q", "a.md") == (
        "quote not found in a.md: 'q'; no passage comes close (best similarity 0.50, line 3)")


@pytest.mark.parametrize("spaces, start", [(74, 122), (75, 199)])
def test_markup_before_a_quote_is_looked_for_within_its_window(spaces, start):
    """Kills x__extend__mutmut_8..11 (the window's size): the markup a quote has before its first visible
    character ('## ' here) is looked for within 4 characters per markup character plus 64 before the match, so
    '##' and 74 spaces (76 characters, the whole window for a 3-character prefix) are taken in, and '##' and 75
    spaces are not. The heading starts at character 122, past the window's 76, so the window does not reach the
    start of the text."""
    text = "x" * 120 + "\n\n##" + " " * spaces + "Install *the* guide\n"
    assert find_quote(text, "## Install the guide", "a.md") == [(start, 122 + 2 + spaces + 19)]


def test_each_in_word_hyphen_is_tried_kept_and_dropped_against_line_end_hyphenation():
    """Kills x__needles__mutmut_12 (only the first hyphen ever dropped) and _19 (where a later dropped hyphen
    joined, counted the wrong way): the quote writes 'well-known' and 'long-lived' with their hyphens; the text
    breaks the second, or both, at a line end."""
    assert find_quote("A well-known and long-\nlived process.", "well-known and long-lived", "a.txt") == [(2, 28)]
    assert find_quote("A well-\nknown and long-\nlived process.", "well-known and long-lived", "a.txt") == [(2, 29)]
    # a hyphen the quote dropped must be a line-end one: 'wellknown' written whole is not 'well-known'
    assert find_quote("A wellknown and longlived process.", "well-known and long-lived", "a.txt") == []


def test_a_quote_starting_with_x_is_not_confused_with_a_longer_word():
    """Kills x_find_quote__mutmut_20 (the needle stripped of 'X' as well as spaces): 'XML parser' is found once,
    not also inside 'HTML parser'."""
    assert find_quote("An XML parser and an HTML parser.", "XML parser", "a.txt") == [(3, 13)]


@pytest.mark.parametrize("text", ["wel-\nlknown is here", "wellk-\nnown is here", "ab-\ncd wellknown"])
def test_a_dropped_hyphen_must_be_the_line_end_hyphen_at_that_very_place(text):
    """Kills x_find_quote__mutmut_53, _54, _57 (the line-end check looks wider than the two characters around
    the join): 'well-known' is not in a text that breaks 'wellknown' one letter earlier or later, or that has
    a line-end hyphen elsewhere before it; it is where the break is exactly at its hyphen."""
    assert find_quote(text, "well-known", "a.txt") == []
    assert find_quote("ab-\ncd well-\nknown", "well-known", "a.txt") == [(7, 18)]


# -- measure names -------------------------------------------------------------------------------------------------

def test_a_cutoff_that_is_not_a_number_gets_the_cutoff_hint_and_an_unknown_name_does_not():
    """Kills x_parse_measure__mutmut_33, _34, _35 and x__family_named__mutmut_5: 'nDCG@ten' (which the measure
    pattern cannot read) is told what a cutoff is; 'nDCG_abc' (read as one unknown name) and 'nosuch_10' (an
    unknown name with trec_eval's cutoff) are unknown measures, with no cutoff hint and no crash."""
    from assay.measures.registry import parse_measure

    with pytest.raises(ConfigError) as error:
        parse_measure("nDCG@ten")
    assert str(error.value).startswith("unknown measure 'nDCG@ten': a cutoff is a whole number after @ (nDCG@10), "
                                       "or a token budget (nDCG@1000tok); did you mean nDCG? Measures: ")
    for text in ("nDCG_abc", "nosuch_10"):
        with pytest.raises(ConfigError) as error:
            parse_measure(text)
        assert str(error.value).startswith(f"unknown measure {text!r}") and "a cutoff is" not in str(error.value)


def test_a_cutoff_below_one_and_a_budget_on_a_measure_without_one_are_refused_with_their_messages():
    """Kills x_parse_measure__mutmut_79 (the cutoff message), _84 and _86 (the list of measures that take a
    budget)."""
    from assay.measures.registry import parse_measure

    for text in ("nDCG@0", "P_0"):
        with pytest.raises(ConfigError) as error:
            parse_measure(text)
        assert str(error.value) == f"measure {text!r}: the cutoff must be at least 1"
    with pytest.raises(ConfigError) as error:
        parse_measure("AP@1000tok")
    assert str(error.value) == ("measure AP takes no context budget; budgets (@Ntok) apply to Success, nDCG, "
                                "SpanRecall, SpanPrecision, SpanIoU")


# -- stored measure values: runs that are not complete -----------------------------------------------------------

def test_store_values_says_why_a_run_that_is_not_complete_gets_no_values(tmp_path):
    """Kills x_run_status__mutmut_10 (no row read as a status) and x_store_values__mutmut_12..19 (the reason and
    the Stored record of a run that is missing or not complete)."""
    from assay.measures.registry import parse_measure
    from assay.measures.values import Stored, run_status, store_values
    from assay.store.warehouse import Warehouse
    from synthetic import QuerySpec, Synthetic, write_synthetic

    measures = (parse_measure("nDCG@10"), parse_measure("AP"))
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        assert run_status(wh, "nope") is None
        assert store_values(wh, "nope", measures) == Stored("nope", {}, {"nDCG@10": "no such run", "AP": "no such run"})
        syn = Synthetic(["d0.md"], [])
        syn.queries.append(QuerySpec("q0", [("d0.md", None, None, 1)], []))
        write_synthetic(wh, syn, run_id="r")
        wh.con.execute("UPDATE runs SET status = 'failed' WHERE run_id = 'r'")
        assert run_status(wh, "r") == "failed"
        assert store_values(wh, "r", measures) == Stored(
            "r", {}, {"nDCG@10": "run status is failed", "AP": "run status is failed"})


def test_a_measure_of_the_answer_skipped_at_a_ranking_stage_does_not_stop_the_others(tmp_path):
    """Kills x_store_values__mutmut_53 (continue -> break after a measure with no values at this stage): at the
    bm25 stage, faithfulness (it scores the final answer) is skipped and nDCG@10 after it is still stored."""
    from assay.inputs.chunking import Chunk
    from assay.measures.registry import parse_measure
    from assay.measures.values import store_values
    from assay.store.warehouse import Warehouse
    from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

    chunk = Chunk("d0.md", 0, 0, DOC_LEN, "x" * DOC_LEN)
    syn = Synthetic(["d0.md"], [chunk])
    syn.queries.append(QuerySpec("q0", [("d0.md", None, None, 1)], [chunk.chunk_id]))
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        write_synthetic(wh, syn, run_id="r", stages={"q0": {"bm25": [chunk.chunk_id], "final": [chunk.chunk_id]}})
        stored = store_values(wh, "r", (parse_measure("faithfulness"), parse_measure("nDCG@10")), stage="bm25")
    assert stored.skipped == {"faithfulness": "scores the final answer, not the bm25 stage"}
    assert stored.written == {"nDCG@10": 2}  # chunk and doc level


def test_sql_parameters_are_found_by_the_kept_parser_and_by_the_callers():
    """Kills x_sql_parameters__mutmut_4, _5, _6: a text never parsed before (so not in the cache) is parsed by
    the kept parser when none is given, and by the caller's connection when one is; '$names' in comments and
    strings do not count."""
    import uuid

    import duckdb

    from assay.measures.registry import sql_parameters

    for parser in (None, duckdb.connect()):
        text = f"-- {uuid.uuid4()} $not_this\nSELECT $a, '$nor_this', $b WHERE $a > 0"
        assert sql_parameters(text, parser) == frozenset({"a", "b"})
        assert sql_parameters(text, parser) == frozenset({"a", "b"})  # from the cache


def test_a_cutoff_missing_or_not_taken_is_refused_with_its_example():
    """Kills x_parse_measure__mutmut_102, _103 (the budget example offered for a measure without budgets) and
    _107 (a cutoff given to a measure that takes none)."""
    from assay.measures.registry import parse_measure

    cases = {"R": "measure 'R' needs a cutoff, e.g. R@10",
             "Success": "measure 'Success' needs a cutoff, e.g. Success@10 or Success@1000tok",
             "Abstain@5": "measure Abstain takes no cutoff"}
    for text, message in cases.items():
        with pytest.raises(ConfigError) as error:
            parse_measure(text)
        assert str(error.value) == message


def test_stored_values_name_their_question_whatever_the_unit(tmp_path):
    """Kills x_store_values__mutmut_54..57, _59.._63 (the query_id column of a stored value): a question's unit
    is its query id, kept whole even when it holds '|'; a citation's unit is 'query_id|claim|cite', and its
    query_id column is the part before the first '|'."""
    from assay.inputs.chunking import Chunk
    from assay.measures.registry import parse_measure
    from assay.measures.values import store_values
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse
    from conftest import MINI
    from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

    chunk = Chunk("d0.md", 0, 0, DOC_LEN, "x" * DOC_LEN)
    syn = Synthetic(["d0.md"], [chunk])
    syn.queries.append(QuerySpec("q|1", [("d0.md", None, None, 1)], [chunk.chunk_id]))
    with Warehouse.open(tmp_path / "s.duckdb") as wh:
        write_synthetic(wh, syn, run_id="s")
        store_values(wh, "s", (parse_measure("nDCG@10"),))
        rows = wh.con.execute("SELECT DISTINCT query_id, unit FROM measure_values WHERE run_id = 's'").fetchall()
    assert rows == [("q|1", "q|1")]
    with Warehouse.open(tmp_path / "m.duckdb") as wh:
        rec = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions("bm25", chunk_size=120,
                                                                           generator="extractive"))
        rows = wh.con.execute("SELECT query_id, unit FROM measure_values WHERE run_id = ? AND measure = "
                              "'citation_precision'", [rec.run_id]).fetchall()
    assert rows and all(unit.count("|") == 2 and query_id == unit.split("|")[0] for query_id, unit in rows)
