"""The measure registry's reading of a measure file's header and its unknown-measure message, pinned exactly
(docs/mutation.md): a user's measure file is where these errors are read."""

from __future__ import annotations

import pytest

from assay.errors import ConfigError
from assay.metrics.registry import _family, parse_measure

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
