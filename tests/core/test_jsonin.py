"""JSON from another party is nested at most 64 levels (assay.core.jsonin); the check itself never recurses."""

import json
import sys

import pytest

from assay.core import jsonin
from assay.core.limits import JSON_DEPTH


def test_64_levels_parse_and_65_are_refused_naming_the_limit():
    assert JSON_DEPTH == 64
    assert jsonin.loads("[" * 64 + "]" * 64) == json.loads("[" * 64 + "]" * 64)
    assert jsonin.loads('{"a": ' * 64 + "1" + "}" * 64)["a"]["a"]["a"]
    for text in ("[" * 65 + "]" * 65, '{"a": ' * 65 + "1" + "}" * 65, '[{"a": [' * 22 + "]}]" * 22):
        with pytest.raises(jsonin.TooDeep, match="^JSON nested deeper than 64 levels$"):
            jsonin.loads(text)


def test_a_depth_past_the_interpreters_recursion_is_refused_the_same_way():
    n = sys.getrecursionlimit() * 3
    with pytest.raises(jsonin.TooDeep):
        jsonin.loads("[" * n + "]" * n)
    with pytest.raises(jsonin.TooDeep):
        jsonin.loads("[" * 100_000)  # unclosed too: the parser gives up on the depth first


def test_text_that_is_not_json_is_a_plain_value_error():
    for text in ("", "{", "nope", "[" + "9" * 5000 + "]"):
        with pytest.raises(ValueError) as err:
            jsonin.loads(text)
        assert not isinstance(err.value, jsonin.TooDeep)
