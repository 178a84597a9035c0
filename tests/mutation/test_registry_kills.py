"""The measure registry's reading of a measure file's header and its unknown-measure message, pinned exactly
(docs/mutation.md): a user's measure file is where these errors are read."""

from __future__ import annotations

import pytest

from assay.core.errors import ConfigError
from assay.measures.registry import _family, parse_measure

BLOCK = {"measure": ("Foo", 1), "interval": ("wilson", 2), "cutoff": ("none", 3), "levels": ("query", 4),
         "definition": ("one value per question", 5)}


def family(**changes):
    block = dict(BLOCK)
    for key, value in changes.items():
        if value is None:
            block.pop(key)
        else:
            block[key] = (value, 9)
    return _family(block, "SELECT 1", "m.sql")


def test_flags_default_to_answerable_only_and_no_tokens():
    foo = family()
    assert (foo.answerable_only, foo.reads_tokens) == (True, False)
    foo = family(answerable_only="No", reads_tokens="TRUE")
    assert (foo.answerable_only, foo.reads_tokens) == (False, True)


@pytest.mark.parametrize("changes, message", [
    ({"levels": None}, "m.sql:1: measure Foo has no 'levels' field"),
    ({"measure": ""}, "m.sql:9: measure ? has no 'interval' field"),
    ({"interval": "exact"}, "m.sql:9: interval: 'exact'; one of wilson, bootstrap"),
    ({"reads_tokens": "maybe"}, "m.sql:9: reads_tokens: 'maybe'; yes or no"),
    ({"answerable_only": "sometimes"}, "m.sql:9: answerable_only: 'sometimes'; yes or no"),
])
def test_a_header_that_cannot_be_used_says_where_and_what(changes, message):
    if changes.get("measure") == "":
        block = {"measure": ("", 9)}
        with pytest.raises(ConfigError) as error:
            _family(block, "SELECT 1", "m.sql")
    else:
        with pytest.raises(ConfigError) as error:
            family(**changes)
    assert str(error.value) == message


def test_an_unknown_measure_suggests_the_closest_or_ends_the_sentence():
    with pytest.raises(ConfigError) as error:
        parse_measure("spanpre")
    assert str(error.value).startswith("unknown measure 'spanpre'; did you mean SpanRecall@10 or SpanPrecision@10? "
                                       "Measures: Success@k|@Ntok, R@k, ")
    with pytest.raises(ConfigError) as error:
        parse_measure("zzzz")
    assert str(error.value).startswith("unknown measure 'zzzz'. Measures: Success@k|@Ntok, R@k, ")
    assert str(error.value).endswith(", judged_faithfulness (other spellings: `assay measures --aliases`)")


def test_answer_level_and_the_header_errors_of_levels_budget_and_definition():
    assert family(levels="answer").levels == ("answer",)
    assert family(levels="doc, chunk").levels == ("chunk", "doc")
    for changes, message in (
            ({"levels": "query, answer"}, "m.sql:9: levels: 'query, answer'; chunk and/or doc, or query, or answer"),
            ({"levels": "chunk, chunk"}, "m.sql:9: levels: 'chunk, chunk'; chunk and/or doc, or query, or answer"),
            ({"budget": "measures/x_budget"},
             "m.sql:9: budget: budgets (@Ntok) are chunk level; add chunk to levels or drop budget"),
            ({"definition": ""}, "m.sql:9: definition: empty; say what one value is"),
            ({"measure": "nDCG2"}, "m.sql:9: measure: 'nDCG2' is not a measure name (letters and _ only)")):
        with pytest.raises(ConfigError) as error:
            family(**changes)
        assert str(error.value) == message


def test_read_header_reads_fields_continuations_and_a_second_measure():
    from assay.measures.registry import read_header

    text = ("-- measure: Foo\n-- interval: wilson\n-- definition: one value\n--   per question\n--\n"
            "-- measure: Bar\n-- cutoff: none\n--\nSELECT 1\n")
    assert read_header(text, "m.sql") == [
        {"measure": ("Foo", 1), "interval": ("wilson", 2), "definition": ("one value per question", 3)},
        {"measure": ("Bar", 6), "cutoff": ("none", 7)}]
    # the header may be the whole file, its closing `--` the last line
    assert read_header("-- measure: Foo\n-- interval: wilson\n--", "m.sql") == [
        {"measure": ("Foo", 1), "interval": ("wilson", 2)}]
    assert read_header("", "m.sql") == []
    assert read_header("SELECT 1\n", "m.sql") == []


@pytest.mark.parametrize("text, message", [
    ("-- measure: Foo\n-- interval: wilson\n-- interval: bootstrap\n",
     "m.sql:3: interval given twice for measure Foo"),
    ("-- measure: Foo\n--\n-- measure: Bar\n-- cutoff: none\n-- cutoff: optional\n",
     "m.sql:5: cutoff given twice for measure Bar"),
    ("-- measure: Foo\n-- colour: red\n",
     "m.sql:2: unknown header field 'colour'; fields: measure, interval, cutoff, levels, budget, answerable_only, "
     "unit, reads_tokens, definition"),
    ("-- measure: Foo\n-- not a field\n",
     "m.sql:2: expected '-- field: value', a continuation indented two more spaces, or an empty '--' line ending "
     "the header"),
    ("-- interval: wilson\n-- measure: Foo\n", "m.sql:1: a measure header starts with '-- measure: NAME'"),
])
def test_read_header_errors_say_where_and_what(text, message):
    from assay.measures.registry import FIELDS, read_header

    assert FIELDS == ("measure", "interval", "cutoff", "levels", "budget", "answerable_only", "unit",
                      "reads_tokens", "definition")
    with pytest.raises(ConfigError) as error:
        read_header(text, "m.sql")
    assert str(error.value) == message
