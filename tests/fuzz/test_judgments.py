"""Fuzz: the judgments parser raises JudgmentsError (an AssayError, exit code 3) or returns judgments,
whatever bytes it is given, and never anything else."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st
import pytest

from assay.core.errors import JudgmentsError
from assay.inputs.judgments.model import JudgmentSet
from assay.inputs.judgments.parse import parse_judgments
from .strategies import HOSTILE_JSON, JSON_VALUES, TEXT, fuzz

PATH = Path("judgments.jsonl")
VALID = {"query_id": "q1", "query": "what is the page size", "category": "normal", "form": "match",
         "hard_class": "normal", "gold": [{"doc": "storage/design.md", "quote": "Every page is 4096 bytes."}]}
FIELDS = ("query_id", "query", "category", "form", "hard_class", "gold", "unanswerable", "notes", "extra")


def parse(data: bytes):
    """The parse's outcome; any exception but JudgmentsError fails the test."""
    try:
        result = parse_judgments(data, PATH)
    except JudgmentsError as exc:
        assert exc.exit_code == 3 and exc.problems and all(isinstance(p, str) for p in exc.problems)
        str(exc).encode("utf-8")  # the message can be printed
        return exc
    assert isinstance(result, JudgmentSet) and result.judgments
    return result


@fuzz(300)
@given(st.binary(max_size=300))
@example(b"\xff\xfe")
@example(b"\n\n\n")
@example(b'{"query_id": "q"}\r\n')
def test_any_bytes(data):
    parse(data)


def _mutated(fields: dict) -> dict:
    record = dict(VALID)
    for key, value in fields.items():
        if value is _DROP:
            record.pop(key, None)
        else:
            record[key] = value
    return record


_DROP = object()
GOLD = st.lists(st.one_of(st.fixed_dictionaries({"doc": st.one_of(TEXT, JSON_VALUES)},
                                                optional={"quote": st.one_of(TEXT, JSON_VALUES),
                                                          "grade": JSON_VALUES}),
                          JSON_VALUES), max_size=3)
VALUES = {"query_id": st.one_of(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,6}", fullmatch=True), TEXT,
                                JSON_VALUES),
          "category": st.one_of(st.sampled_from(["normal", "ambiguous", "adversarial", "no_answer"]), JSON_VALUES),
          "form": st.one_of(st.sampled_from(["match", "gap"]), JSON_VALUES),
          "unanswerable": st.one_of(st.sampled_from(["near_miss", "out_of_corpus"]), JSON_VALUES),
          "gold": st.one_of(GOLD, JSON_VALUES)}
MUTATION = st.dictionaries(st.sampled_from(FIELDS),
                           st.one_of(st.just(_DROP), st.deferred(lambda: st.one_of(JSON_VALUES, TEXT))), max_size=3)
RECORD = st.one_of(
    MUTATION.map(_mutated),
    st.builds(lambda key, value: _mutated({key: value}), st.sampled_from(sorted(VALUES)),
              st.one_of(*VALUES.values())))


@fuzz(300)
@given(st.lists(st.one_of(RECORD.map(json.dumps), HOSTILE_JSON, TEXT), min_size=1, max_size=5),
       st.sampled_from(["\n", "\r\n", "\n\n"]))
@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@example(["1" * 5000], "\n")
@example(["[" * 100_000], "\n")
@example([json.dumps(dict(VALID, gold=[{"doc": "a.md", "grade": 2**64}]))], "\n")
@example([json.dumps(VALID)[:-1] + ', "notes": ' + "1" * 5000 + "}"], "\n")
def test_near_valid_jsonl(lines, newline):
    parse(newline.join(lines).encode("utf-8", "surrogatepass"))


def test_the_strategy_reaches_valid_files():
    """A fuzz test that never parses a valid file tests only the error path: this one does both."""
    assert isinstance(parse(json.dumps(VALID).encode()), JudgmentSet)
    assert isinstance(parse(json.dumps(dict(VALID, hard_class="x")).encode()), JudgmentSet)


def test_huge_integers_and_deep_nesting_are_judgments_errors_naming_the_line():
    """Found by test_near_valid_jsonl: json.loads raised ValueError (over 4300 digits) and RecursionError."""
    good = json.dumps(VALID)
    for bad, why in (('{"query_id": ' + "1" * 5000 + "}", "Exceeds the limit (4300 digits)"),
                     ("[" * 100_000, "nested too deeply")):
        err = parse(f"{good}\n{bad}\n".encode())
        assert isinstance(err, JudgmentsError)
        assert len(err.problems) == 1
        assert err.problems[0].startswith(f"{PATH}:2: not valid JSON for judgments ({why}")
        assert err.problems[0].endswith("write one flat object per line")
