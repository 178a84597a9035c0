"""assay gate's outputs pinned exactly, where mutmut's survivors showed the tests were loose (docs/mutation.md):
the JUnit XML a CI reads, the PASS/FAIL/fragile column of the table, and a preset reaching rules_from."""

from __future__ import annotations

from assay.verdicts import gate

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
    xml = gate.junit_xml("r", [PASSED, PASSED])
    assert '<testsuites tests="2" failures="0">' in xml and "<failure" not in xml


def test_the_table_marks_pass_fail_and_fragile_and_counts_them():
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
    rules = gate.rules_from({}, (), "retrieval")
    assert [(r.text, r.source) for r in rules] == [("Success@3:doc>=0.7", "preset retrieval"),
                                                   ("nDCG@10:chunk>=0.5", "preset retrieval"),
                                                   ("R@10:chunk>=0.75", "preset retrieval")]


def test_parse_rule_defaults_and_errors_exactly():
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
