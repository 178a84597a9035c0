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
from .strategies import DEEP_JSON, HOSTILE_JSON, JSON_VALUES, TEXT, fuzz, nested

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


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@fuzz(150)
@given(DEEP_JSON)
@example((64, "array"))
@example((65, "object"))
@example((500, "mixed"))
@example((60, "object"))
@example((61, "array"))
def test_reply_parsers_bound_any_depth(deep):
    """Every parser of a model's or judge's reply (the chat client's, the generator's, the judge's and
    `judgments draft`'s) takes JSON nested up to 64 levels and refuses a deeper one as a problem it records,
    never with RecursionError, wherever in the reply the depth is."""
    from assay.core.errors import ModelEndpointError
    from assay.golden.draft import read_reply
    from assay.retrieval.answer.client import ChatClient, ChatResponse

    depth, kind = deep
    text = nested(depth, kind)
    too_deep = depth > 64
    for parse in (content_payload, _tool_payload):
        message = ({"content": text} if parse is content_payload else
                   {"tool_calls": [{"function": {"name": "submit_answer", "arguments": text}}]})
        payload, problem = parse(message)
        assert (problem is not None and "JSON nested deeper than 64 levels" in problem) == too_deep
        assert (payload is None) == too_deep
    response = ChatResponse(200, {}, "", "stop", {"content": text}, 1.0, 1)
    found, reason, detail = read_reply(response)
    assert found is None and reason == "bad JSON"  # never a draft, however deep
    assert detail.startswith("JSON nested deeper than 64 levels") == too_deep
    # the whole reply: four levels (the body, choices, the choice, its message) around the depth
    body = '{"choices": [{"message": {"content": "x", "deep": ' + text + "}}]}"
    client = ChatClient("http://127.0.0.1:9", "m")
    try:
        client._parse(200, body, 1.0, 1, {}, ())
        assert depth + 4 <= 64
    except ModelEndpointError as exc:
        assert depth + 4 > 64 and "the answer is JSON nested deeper than 64 levels" in str(exc)
