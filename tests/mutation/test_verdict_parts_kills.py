"""Survivors of mutmut's cheap mutants in gate, regression, significance, the measure registry and quote
resolution, each pinned exactly (docs/mutation.md)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from assay.verdicts import gate, regression
from assay.inputs.corpus import Corpus
from assay.inputs.corpus.files import Skipped
from assay.core.errors import ConfigError, UsageError
from assay.inputs.judgments.resolve import _why_not_read, line_of
from assay.measures.registry import builtin_families
from assay.verdicts.significance import EXACT_MAX_N, paired_test


def test_gate_rules_are_required_unless_said_otherwise():
    with pytest.raises(UsageError) as error:
        gate.collect_rules({}, ())
    assert str(error.value) == "no gate rules: give --rule 'Success@3:doc>=0.75' or [gate] rules = [...] in assay.toml"
    assert gate.collect_rules({}, (), required=False) == ([], [])


def test_gate_rules_from_assay_toml_name_the_file():
    rules, _ = gate.collect_rules({"gate": {"rules": ["Success@3:doc>=0.75"]}}, ())
    assert rules[0].source == "assay.toml [gate] rules"
    rules, _ = gate.collect_rules({"_path": "p/assay.toml", "gate": {"rules": ["Success@3:doc>=0.75"]}}, ())
    assert rules[0].source == "p/assay.toml [gate] rules"
    with pytest.raises(ConfigError) as error:
        gate.collect_rules({"gate": ["Success@3:doc>=0.75"]}, ())
    assert str(error.value) == "assay.toml: gate must be a table ([gate] rules = [...])"
    with pytest.raises(ConfigError) as error:
        gate.collect_rules({"_path": "p/assay.toml", "gate": 1}, ())
    assert str(error.value) == "p/assay.toml: gate must be a table ([gate] rules = [...])"


def test_gate_table_shows_a_dash_for_a_rule_without_questions():
    unmeasured = {"rule": "Success@3:doc[form=gap]>=0.5", "op": ">=", "bar": 0.5, "passed": False, "fragile": False,
                  "value": None, "n": 0, "ci_low": None, "ci_high": None, "bound": None, "confidence": None,
                  "p_value": None, "p_adjusted": None, "decided_at": None, "family_size": 0, "correction": "holm",
                  "alpha": 0.05, "method": None, "patterns": None, "reason": "no questions"}
    row = [line for line in gate.render("r", [unmeasured]).splitlines() if line.startswith("FAIL")][0]
    assert row.split() == ["FAIL", "Success@3:doc[form=gap]>=0.5", "-", "0", "-", "-", "-", "no", "questions"]


def test_values_by_run_of_one_row_and_of_runs_with_one_value_each():
    one = pa.table({"run_id": ["a"], "unit": ["q1"], "value": [0.5]})
    assert regression._values_by_run(one) == {"a": [0.5]}
    two = pa.table({"run_id": ["b", "a"], "unit": ["q1", "q1"], "value": [2.0, 1.0]})
    assert regression._values_by_run(two) == {"a": [1.0], "b": [2.0]}


def test_the_randomization_test_is_exact_up_to_16_questions():
    assert EXACT_MAX_N == 16
    before = [0.0] * EXACT_MAX_N
    after = [0.5] * (EXACT_MAX_N - 1) + [0.25]
    assert paired_test(before, after, "continuous", seed=0, samples=100)["samples"] == "exact"
    assert paired_test(before + [0.0], after + [1.0], "continuous", seed=0, samples=100)["samples"] == 100


def test_measures_are_listed_ranking_then_span_then_per_question_then_answer():
    from assay.measures.registry import _listing_key

    # builtin_families is cached for the process: sort again here so the key itself is what the test runs
    assert [f.name for f in sorted(builtin_families()[::-1], key=_listing_key)] == [f.name for f in builtin_families()]
    assert [f.name for f in builtin_families()] == [
        "Success", "R", "P", "RR", "nDCG", "AP", "SpanRecall", "SpanPrecision", "SpanIoU", "Abstain", "FalseAbstain",
        "answer_rate", "refusal_rate", "citation_precision", "faithfulness", "judged_faithfulness"]


def test_line_of_counts_the_newlines_before_the_offset():
    assert line_of("\nabc", 2) == 2
    assert line_of("\nabc", 0) == 1
    assert line_of("a\nb\nc", 4) == 3


def corpus(*skipped):
    return Corpus(Path("."), "h", (), skipped=tuple(Skipped(path, "", reason) for path, reason in skipped))


def test_why_a_file_was_not_read():
    assert _why_not_read(corpus(("a.pdf", "encrypted")), "a.pdf") == (
        ": the file is there but was not read (encrypted)")
    assert _why_not_read(corpus(("dir/", "unreadable")), "dir/a.txt") == (
        ": it lies under dir/, which is there but was not read (unreadable)")
    # a skipped file is not a directory: another file whose id starts with its name was not skipped with it
    assert _why_not_read(corpus(("a.pdf", "encrypted")), "a.pdf.txt") == ""
    assert _why_not_read(corpus(("dir/", "unreadable")), "other/a.txt") == ""
    assert _why_not_read(corpus(), "a.txt") == ""


def test_the_randomization_test_draws_10000_samples_by_default():
    before, after = [0.0] * (EXACT_MAX_N + 1), [0.5] * (EXACT_MAX_N + 1)
    assert paired_test(before, after, "continuous", seed=0)["samples"] == 10000


@pytest.mark.parametrize("typed, suggested", [
    ("ndcg", ["nDCG"]), ("ndgc@10", ["nDCG@10"]), ("Sucess", ["Success@10"]), ("sucess@3", ["Success@3"]),
    ("Succes_5", ["Success@5"]), ("mrr@10", ["RR@10"]), ("recal@10", ["R@10"]), ("SpanRecal", ["SpanRecall@10"]),
    ("SpanRecal@1000tok", ["SpanRecall@1000tok"]), ("Sucess@1000tok", ["Success@1000tok"]),
    ("abstain_rate", ["Abstain"]), ("faithfulnes", ["faithfulness"]), ("citation", ["citation_precision"]),
    ("spanpre", ["SpanRecall@10", "SpanPrecision@10"]), ("spanr@5", ["SpanIoU@5", "SpanRecall@5"]),
    ("xyz", []), ("faith", [])])
def test_suggestions_for_a_misspelled_measure(typed, suggested):
    from assay.measures.registry import suggestions

    assert suggestions(typed, n=5) == suggested
    assert suggestions(typed, n=1) == suggested[:1]
