"""Fuzz: the bounds issue 27 added hold for any value, not only the ones the probe tried.

- Retry-After: whatever a 429 or 503 says (numbers of any size, inf, nan, negatives, dates, junk), one
  request waits at most max_retry_wait_s in all, every wait is a finite number of seconds, and the request
  ends as an answer or assay's own error (once: OverflowError tracebacks and 28-hour sleeps). A real loopback
  server answers; the client's clock is a fake one, so nothing sleeps.
- Ranges: every depth-like setting, given any integer, either runs within limits.DEPTH_MAX or is a
  ConfigError (once: 2**31 - 1 passed validation and aborted tantivy with a 34 GB allocation).
- Judgments: a question of any length either parses (at most limits.QUESTION_CHARS characters) or is a
  JudgmentsError naming its line.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from assay.core import limits
from assay.core.errors import ConfigError, JudgmentsError, ModelEndpointError, RunBlocked
from assay.retrieval.answer.client import ChatClient
from assay.retrieval.pipelines import resolve_pipeline
from retrieval.answer.chat_server import ChatServer, FakeTime, content, status

from .strategies import fuzz

KEY_ENV = "ASSAY_TEST_FUZZ_KEY"
MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
RETRY_AFTER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-(10**30), 10**30).map(str),
    st.sampled_from(["inf", "-inf", "nan", "Infinity", "1e10", "1e309", "100000", "121", "0", "-0", " 7 ",
                     "Wed, 21 Oct 2015 07:28:00 GMT", "", "0x10", "1_000"]),
    st.text(st.characters(codec="latin-1", exclude_categories=("Cc",)), max_size=12),
)


@pytest.fixture(scope="module")
def server():
    with ChatServer([]) as running:
        yield running


@pytest.fixture(autouse=True, scope="module")
def loopback():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("no_proxy", "127.0.0.1,localhost")
        patch.setenv("NO_PROXY", "127.0.0.1,localhost")
        patch.setenv(KEY_ENV, "sk-fuzz-key-1234")
        yield


@pytest.mark.slow  # a real server answers each example's requests: seconds in all
@fuzz(150)
@given(answers=st.lists(st.tuples(st.sampled_from([429, 503]), RETRY_AFTER), min_size=1, max_size=3),
       cap=st.one_of(st.just(120.0), st.floats(0, 400)))
@example(answers=[(429, "inf")], cap=120.0)
@example(answers=[(503, "1e10")], cap=120.0)
@example(answers=[(429, "100000")], cap=120.0)
@example(answers=[(503, "50"), (503, "80")], cap=120.0)
def test_any_retry_after_waits_at_most_the_cap_and_ends_in_assays_error(server, answers, cap):
    server.replies.clear()
    server.replies.extend(status(code, headers={"Retry-After": value}) for code, value in answers)
    server.replies.append(content("Paris"))
    clock = FakeTime()
    client = ChatClient(server.url, "fuzz-model", api_key_env=KEY_ENV, sleep=clock.sleep, clock=clock.clock,
                        max_retry_wait_s=cap)
    try:
        client.chat(MESSAGES)
    except (ModelEndpointError, RunBlocked) as exc:
        assert "Traceback" not in str(exc) and "\n" not in str(exc)
    assert all(math.isfinite(s) and s >= 0 for s in clock.sleeps)
    assert sum(clock.sleeps) <= cap
    json.dumps(client.log, allow_nan=False)  # the log stays writable as strict JSON whatever the header said


DEPTHS = ("depth", "doc_depth", "rerank_top_n", "final_k", "context_k")


@fuzz(200)
@given(key=st.sampled_from(DEPTHS),
       value=st.one_of(st.integers(-(2**64), 2**64), st.integers(limits.DEPTH_MAX - 3, limits.DEPTH_MAX + 3),
                       st.sampled_from([2**31 - 1, 2**31, 2**63 - 1, 0, -1, 1])))
def test_a_depth_of_any_size_is_within_range_or_a_config_error(key, value):
    try:
        settings = resolve_pipeline("bm25", {}, {key: value})
    except ConfigError as exc:
        assert str(exc) and "\n" not in str(exc)
        assert not 1 <= value <= limits.DEPTH_MAX
        return
    assert settings.settings[key] == value and 1 <= value <= limits.DEPTH_MAX


@fuzz(60)
@given(length=st.one_of(st.integers(0, 50), st.integers(limits.QUESTION_CHARS - 2, limits.QUESTION_CHARS + 2),
                        st.integers(limits.QUESTION_CHARS, 3 * limits.QUESTION_CHARS)))
def test_a_question_of_any_length_parses_or_names_its_line(length):
    from assay.inputs.judgments.parse import parse_judgments

    path = Path("judgments.jsonl")
    first = {"query_id": "q1", "query": "What is a page?", "gold": [{"doc": "a.md", "quote": "page"}]}
    second = {"query_id": "q2", "query": "w" * length, "gold": [{"doc": "a.md", "quote": "page"}]}
    data = (json.dumps(first) + "\n" + json.dumps(second) + "\n").encode("utf-8")
    try:
        parsed = parse_judgments(data, path)
    except JudgmentsError as exc:
        assert length == 0 or length > limits.QUESTION_CHARS
        assert f"{path}:2" in str(exc) or "line 2" in str(exc)
        return
    assert 0 < length <= limits.QUESTION_CHARS and [j.query_id for j in parsed.judgments] == ["q1", "q2"]
