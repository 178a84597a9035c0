"""Gate rules that cannot mean anything are usage errors (exit code 2), never quality failures (exit 6);
the same rule given twice is checked once. On a real run of the mini set in a real DuckDB file."""

import pytest
from click.testing import CliRunner

from assay.verdicts import gate
from assay.cli import cli
from assay.core.errors import ConfigError, UsageError
from assay.runs.runner import RunOptions, run
from assay.store.warehouse import Warehouse

SLICES = ("all, category=ambiguous, category=no_answer, category=normal, form=gap, form=match, "
          "hard_class=near-duplicate, hard_class=normal, hard_class=specific-vs-general")


@pytest.fixture(scope="module")
def mini_run(tmp_path_factory):
    from conftest import MINI

    path = tmp_path_factory.mktemp("gate") / "w.duckdb"
    with Warehouse.open(path) as wh:
        rec = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=120))
    return path, rec.run_id


def invoke(path, *args):
    return CliRunner().invoke(cli, ["gate", *[str(a) for a in args], "--warehouse", str(path)])


def test_the_run_slices_are_what_its_questions_form(mini_run):
    path, run_id = mini_run
    with Warehouse.open(path, read_only=True) as wh:
        assert ", ".join(gate.run_slices(wh, run_id)) == SLICES


def test_an_unknown_slice_is_a_usage_error_listing_the_slices(mini_run):
    path, run_id = mini_run
    out = invoke(path, run_id, "--rule", "Success@3:doc>=0.1", "--rule", "Success@3:doc[form=gapp]>=0.5")
    assert out.exit_code == 2 and out.stdout == ""
    assert out.stderr == (f"error: Success@3:doc[form=gapp]>=0.5 (--rule): no such slice 'form=gapp'; run {run_id} "
                          f"has the slices {SLICES}\n")


def test_an_unknown_slice_from_assay_toml_names_the_file(mini_run, tmp_path):
    path, run_id = mini_run
    cfg = tmp_path / "assay.toml"
    cfg.write_text('[gate]\nrules = ["nDCG@10[categroy=normal]>=0.1"]\n')
    out = invoke(path, run_id, "--config", cfg)
    assert out.exit_code == 2
    assert f"nDCG@10[categroy=normal]>=0.1 ({cfg} [gate] rules): no such slice 'categroy=normal'" in out.stderr


@pytest.mark.parametrize("rule, says", [
    ("Sucess@3:doc>=0.5", "gate rule 'Sucess@3:doc>=0.5' (--rule): unknown measure 'Sucess@3'"),
    ("Success@3:doc>=1.5", "the bar 1.5 is outside [0, 1]"),
    ("Success@3:doc>=-0.1", "the bar -0.1 is outside [0, 1]"),
    ("Success@3 => 0.7", "cannot read gate rule 'Success@3 => 0.7' (--rule)"),
    ("Abstain:doc>=0.1", "Abstain has level(s) query, not doc"),
])
def test_rules_that_cannot_be_used_are_usage_errors(mini_run, rule, says):
    path, run_id = mini_run
    out = invoke(path, run_id, "--rule", rule)
    assert out.exit_code == 2 and says in out.stderr, out.output


def test_an_unknown_preset_is_a_usage_error(mini_run):
    path, run_id = mini_run
    out = invoke(path, run_id, "--preset", "strict")
    assert out.exit_code == 2 and "unknown gate preset 'strict'; known: rag, retrieval" in out.stderr


def test_a_rule_given_by_preset_toml_and_cli_is_checked_once(mini_run, tmp_path):
    path, run_id = mini_run
    cfg = tmp_path / "assay.toml"
    cfg.write_text('[gate]\nrules = ["Success@3:doc >= 0.700", "R@10>=0.2"]\n')
    junit = tmp_path / "gate.xml"
    out = invoke(path, run_id, "--preset", "retrieval", "--config", cfg, "--rule", "nDCG@10:chunk>=0.5",
                 "--rule", "R@10:chunk>=0.2", "--junit", junit)
    assert out.exit_code in (0, 6), out.output
    import xml.etree.ElementTree as ET

    names = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase")]
    assert names == ["Success@3:doc>=0.7", "nDCG@10:chunk>=0.5", "R@10:chunk>=0.75", "R@10>=0.2"]
    failed = sum(line.startswith("FAIL") for line in out.stdout.splitlines())
    assert out.stdout.splitlines()[-1] in ("4 passed, 0 failed", f"{4 - failed} passed, {failed} failed; exit code 6")
    notes = [line for line in out.stderr.splitlines() if line.startswith("note: gate rule")]
    assert notes == [
        f"note: gate rule 'Success@3:doc>=0.7' is given 2 times ('Success@3:doc>=0.7' (preset retrieval), "
        f"'Success@3:doc >= 0.700' ({cfg} [gate] rules)): checked once",
        "note: gate rule 'nDCG@10:chunk>=0.5' is given 2 times ('nDCG@10:chunk>=0.5' (preset retrieval), "
        "'nDCG@10:chunk>=0.5' (--rule)): checked once",
        f"note: gate rule 'R@10>=0.2' is given 2 times ('R@10>=0.2' ({cfg} [gate] rules), 'R@10:chunk>=0.2' "
        "(--rule)): checked once",
    ]


def test_the_library_merges_duplicates_and_keeps_distinct_rules():
    rules, notes = gate.collect_rules({}, ("Success@3:doc>=0.75", "Success@3:doc>0.75", "Success@3:doc>=0.75"))
    assert [r.text for r in rules] == ["Success@3:doc>=0.75", "Success@3:doc>0.75"] and len(notes) == 1
    assert gate.rules_from({}, ("nDCG@10>=0.5", "nDCG@10:chunk>=0.50")) == [gate.parse_rule("nDCG@10>=0.5")]
    with pytest.raises(UsageError, match="no gate rules"):
        gate.rules_from({}, ())
    assert gate.rules_from({}, (), required=False) == []


def test_a_slice_without_questions_for_its_measure_still_fails_as_a_quality_failure(mini_run):
    path, run_id = mini_run
    # category=normal exists; Abstain counts only unanswerable questions, and there is none in it
    out = invoke(path, run_id, "--rule", "Abstain[category=normal]>=0.1")
    assert out.exit_code == 6 and "no questions in slice 'category=normal'" in out.stdout


def test_gate_rules_are_required_unless_said_otherwise():
    """No gate rules is a usage error saying how to give them, unless rules are not required."""
    with pytest.raises(UsageError) as error:
        gate.collect_rules({}, ())
    assert str(error.value) == "no gate rules: give --rule 'Success@3:doc>=0.75' or [gate] rules = [...] in assay.toml"
    assert gate.collect_rules({}, (), required=False) == ([], [])


def test_gate_rules_from_assay_toml_name_the_file():
    """Rules from assay.toml name the file they came from, and a [gate] that is not a table is refused naming it."""
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
    """A rule without questions shows '-' for its value and figures, and its reason."""
    unmeasured = {"rule": "Success@3:doc[form=gap]>=0.5", "op": ">=", "bar": 0.5, "passed": False, "fragile": False,
                  "value": None, "n": 0, "ci_low": None, "ci_high": None, "bound": None, "confidence": None,
                  "p_value": None, "p_adjusted": None, "decided_at": None, "family_size": 0, "correction": "holm",
                  "alpha": 0.05, "method": None, "patterns": None, "reason": "no questions"}
    row = [line for line in gate.render("r", [unmeasured]).splitlines() if line.startswith("FAIL")][0]
    assert row.split() == ["FAIL", "Success@3:doc[form=gap]>=0.5", "-", "0", "-", "-", "-", "no", "questions"]


# gate's outputs pinned exactly: the JUnit XML a CI reads, the PASS/FAIL/fragile column of the table,
# a preset reaching rules_from, parse_rule's defaults and errors


FAMILY = {"family_size": 3, "correction": "holm", "alpha": 0.05, "method": "binomial-exact", "patterns": None}


PASSED = {"rule": "Success@3:doc>=0.5", "op": ">=", "bar": 0.5, "passed": True, "fragile": False, "value": 0.75,
          "n": 4, "ci_low": 0.6, "ci_high": 0.9, "bound": 0.55, "confidence": 0.9833, "p_value": 0.01,
          "p_adjusted": 0.03, "decided_at": 0.0167, **FAMILY, "reason": "0.750 >= 0.5"}


FRAGILE = {"rule": "nDCG@10>=0.7", "op": ">=", "bar": 0.7, "passed": True, "fragile": True, "value": 0.75, "n": 4,
           "ci_low": 0.5, "ci_high": 0.9, "bound": 0.5, "confidence": 0.975, "p_value": 0.3, "p_adjusted": 0.6,
           "decided_at": 0.025, **FAMILY, "reason": "0.750 >= 0.7, but its 97.5% bound 0.500 does not clear 0.7"}


FAILED = {"rule": "R@10<0.2", "op": "<", "bar": 0.2, "passed": False, "fragile": False, "value": 0.25, "n": 4,
          "ci_low": 0.1, "ci_high": 0.4, "bound": 0.45, "confidence": 0.95, "p_value": 0.7, "p_adjusted": 0.7,
          "decided_at": 0.05, **FAMILY, "reason": "0.250 is not < 0.2 & <more>"}


def test_junit_xml_is_exactly_one_case_per_rule_with_failures_and_fragility():
    """gate's JUnit XML, exactly: one test case a rule, a failure with its reason, a fragile pass in system-out,
    escaped."""
    assert gate.junit_xml("run-1", [PASSED, FRAGILE, FAILED]) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites tests="3" failures="1">\n'
        '  <testsuite name="assay gate run-1" tests="3" failures="1" errors="0" skipped="0">\n'
        '    <testcase classname="assay.verdicts.gate" name="Success@3:doc&gt;=0.5" time="0"></testcase>\n'
        '    <testcase classname="assay.verdicts.gate" name="nDCG@10&gt;=0.7" time="0"><system-out>fragile: 0.750 &gt;= '
        '0.7, but its 97.5% bound 0.500 does not clear 0.7</system-out></testcase>\n'
        '    <testcase classname="assay.verdicts.gate" name="R@10&lt;0.2" time="0"><failure message="0.250 is not &lt; 0.2 '
        '&amp; &lt;more&gt;">0.250 is not &lt; 0.2 &amp; &lt;more&gt;</failure></testcase>\n'
        '  </testsuite>\n</testsuites>\n')


def test_junit_xml_with_every_rule_passing_counts_no_failure():
    """JUnit XML of passing rules counts no failure and holds no failure element."""
    xml = gate.junit_xml("r", [PASSED, PASSED])
    assert '<testsuites tests="2" failures="0">' in xml and "<failure" not in xml


def test_the_table_marks_pass_fail_and_fragile_and_counts_them():
    """gate's text: the verdict sentence, PASS, PASS (fragile) and FAIL in the status column, the counts and the
    exit code."""
    text = gate.render("run-1", [PASSED, FRAGILE, FAILED])
    said, blank, table = text.partition("\n\n")
    assert said == "The run fails 1 of 3 gate rules: R@10<0.2 reads 0.250 (95% CI 0.100 to 0.400, n = 4)."
    rows = [line for line in table.splitlines() if "0.750" in line or "0.250" in line]
    assert [row.split()[0:2] for row in rows] == [["PASS", "Success@3:doc>=0.5"], ["PASS", "(fragile)"],
                                                  ["FAIL", "R@10<0.2"]]
    assert "XXXX" not in text and text.count("PASS (fragile)") == 1
    assert table.startswith("gate on run run-1\n")
    assert text.endswith("2 passed, 1 failed; exit code 6\n")
    assert gate.render("run-1", [PASSED]).endswith("1 passed, 0 failed\n")


def test_rules_from_takes_the_preset():
    """rules_from takes a preset's rules, each naming the preset as its source."""
    rules = gate.rules_from({}, (), "retrieval")
    assert [(r.text, r.source) for r in rules] == [("Success@3:doc>=0.7", "preset retrieval"),
                                                   ("nDCG@10:chunk>=0.5", "preset retrieval"),
                                                   ("R@10:chunk>=0.75", "preset retrieval")]


def test_parse_rule_defaults_and_errors_exactly():
    """parse_rule's defaults (chunk level, or the measure's only level; slice all) and its errors, exactly."""
    import pytest

    from assay.core.errors import UsageError

    rule = gate.parse_rule("Success@3>=0.5")
    assert (rule.source, rule.level, rule.slice, rule.op, rule.bar) == ("--rule", "chunk", "all", ">=", 0.5)
    assert gate.parse_rule("faithfulness>=0.5").level == "answer"
    assert gate.parse_rule("Abstain<0.5").level == "query"
    with pytest.raises(UsageError) as error:
        gate.parse_rule("R@10:answer>=0.5")
    assert str(error.value) == "gate rule 'R@10:answer>=0.5' (--rule): R@10 has level(s) chunk, doc, not answer"
    with pytest.raises(UsageError) as error:
        gate.parse_rule("Success@3>=1.5", "assay.toml")
    assert str(error.value) == ("gate rule 'Success@3>=1.5' (assay.toml): the bar 1.5 is outside [0, 1], where every "
                                "measure lies, so the rule could never fail or never pass")


@pytest.mark.parametrize("rules", ["Success@3:doc>=0.75", ["Success@3:doc>=0.75", 0.75]])
def test_gate_rules_that_are_not_a_list_of_strings_are_a_config_error(rules):
    """[gate] rules that are not a list of strings are a configuration error naming the file.

    Kills assay.verdicts.gate.x_collect_rules__mutmut_41 (`or` as `and`: a string is taken for a list of one-letter
    rules, a list holding a number is parsed as rules) and _45 (the message None)."""
    with pytest.raises(ConfigError) as error:
        gate.collect_rules({"gate": {"rules": rules}, "_path": "proj/assay.toml"}, ())
    assert str(error.value) == ('proj/assay.toml [gate] rules must be a list of strings like "Success@3:doc>=0.75"')
