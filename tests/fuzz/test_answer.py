"""Fuzz: the model-reply parsers never raise. A reply of any shape becomes a payload or a problem the
run records (answer/generate.py: message_text, content_payload, _tool_payload; answer/contract.py:
parse_claims, validate)."""

from __future__ import annotations

import json

from hypothesis import example, given
from hypothesis import strategies as st
import pytest

from assay.retrieval.answer.contract import Claim, parse_claims, validate
from assay.retrieval.answer.generate import _tool_payload, content_payload, message_text
from .strategies import HOSTILE_JSON, JSON_VALUES, TEXT, fuzz

ARGUMENTS = st.one_of(JSON_VALUES, HOSTILE_JSON, JSON_VALUES.map(lambda v: json.dumps(v)))
CALL = st.one_of(JSON_VALUES, st.fixed_dictionaries(
    {"function": st.one_of(JSON_VALUES, st.fixed_dictionaries(
        {"name": st.one_of(st.just("submit_answer"), JSON_VALUES)}, optional={"arguments": ARGUMENTS}))}))
MESSAGE = st.one_of(JSON_VALUES, st.fixed_dictionaries({}, optional={
    "tool_calls": st.one_of(st.lists(CALL, max_size=3), JSON_VALUES),
    "content": st.one_of(TEXT, HOSTILE_JSON, JSON_VALUES,
                         st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT}), max_size=2))}))


def _is_problem(value) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(300)
@given(MESSAGE)
@example({"tool_calls": [{"function": {"name": "submit_answer", "arguments": "[" * 100_000}}]})
@example({"tool_calls": [{"function": {"name": "submit_answer", "arguments": "1" * 5000}}]})
@example({"content": "{\"claims\": " + "[" * 100_000})
@example([{"tool_calls": None}])
def test_reply_parsers_never_raise(message):
    for parse in (_tool_payload, content_payload):
        payload, problem = parse(message)
        assert _is_problem(problem)
        assert (payload is None) or problem is None
    text, problem = message_text(message)
    assert (text is None) != (problem is None)


CLAIM = st.fixed_dictionaries({}, optional={
    "text": st.one_of(TEXT, JSON_VALUES),
    "citations": st.one_of(JSON_VALUES, st.lists(st.one_of(JSON_VALUES, st.fixed_dictionaries(
        {}, optional={"chunk_id": st.one_of(st.sampled_from(["c1", "c2"]), JSON_VALUES),
                      "quote": st.one_of(st.sampled_from(["page", " 4096 bytes ", ""]), TEXT, JSON_VALUES)})),
        max_size=3))})
PAYLOAD = st.one_of(JSON_VALUES, st.fixed_dictionaries({}, optional={
    "claims": st.one_of(JSON_VALUES, st.lists(st.one_of(CLAIM, JSON_VALUES), max_size=3)),
    "insufficient_evidence": JSON_VALUES}))
CONTEXT = {"c1": "Every page is 4096 bytes.", "c2": "Its size is set with cache_size"}


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(300)
@given(PAYLOAD, st.integers(1, 300))
def test_claims_parse_and_validate_never_raise(payload, max_quote):
    claims, insufficient, errors = parse_claims(payload)
    assert isinstance(insufficient, bool) and all(isinstance(e, str) for e in errors)
    assert not (claims and errors)
    assert all(isinstance(c, Claim) for c in claims)
    for checked in validate(claims, CONTEXT, max_quote=max_quote):
        for citation in checked.citations:
            if citation.valid:
                text = CONTEXT[citation.chunk_id]
                assert 0 <= citation.start < citation.end <= len(text)
