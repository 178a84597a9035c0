"""Shared Hypothesis strategies and settings for the fuzz suite.

Every test is derandomized (the same examples on every machine, so CI is reproducible) and has no
deadline (the first example pays for imports). Example counts are set per test, small enough that
the whole suite stays under about 20 seconds.
"""

from __future__ import annotations

import json

from hypothesis import settings
from hypothesis import strategies as st


def fuzz(max_examples: int):
    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None)


# Text of any code point, lone surrogates aside (they cannot be written as UTF-8; raw bytes cover that).
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
# Values a hostile file puts where a string, a number or a list is expected.
ODD_NUMBERS = st.sampled_from([0, -1, 1, 2**63, -(2**63) - 1, 10**30, 1.5, -0.0, 1e308, 0.0001])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), ODD_NUMBERS,
                    st.floats(allow_nan=False, allow_infinity=False), TEXT)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)), max_leaves=12)
# JSON texts no JSON parser should choke on, but some do: huge integers, deep nesting, odd constants.
HOSTILE_JSON = st.sampled_from(["1" * 5000, "[" * 100_000, "{\"a\":" * 50_000, "NaN", "-Infinity", "1e999",
                                "\"\\ud800\"", "\"\\u0000\"", "{\"a\": 1, \"a\": 2}", "[1,]", "\ufeff{}"])



def nested(depth: int, kind: str) -> str:
    """A JSON text nesting ``depth`` arrays (``[[...]]``), objects (``{"a": {...}}``) or both, alternating."""
    opens = {"array": ["["], "object": ['{"a": '], "mixed": ["[", '{"a": ']}[kind]
    closes = {"[": "]", '{"a": ': "}"}
    layers = [opens[i % len(opens)] for i in range(depth)]
    return "".join(layers) + "1" + "".join(closes[o] for o in reversed(layers))


# JSON texts of every depth around the limit and far past it (assay.core.jsonin: 64 levels)
DEEP_JSON = st.tuples(st.one_of(st.integers(0, 130), st.integers(131, 5000)),
                      st.sampled_from(["array", "object", "mixed"]))


def json_text(value) -> str:
    return json.dumps(value, allow_nan=True)
