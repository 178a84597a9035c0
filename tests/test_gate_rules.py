"""Gate rules that cannot mean anything are usage errors (exit code 2), never quality failures (exit 6);
the same rule given twice is checked once. On a real run of the mini set in a real DuckDB file."""

import pytest
from click.testing import CliRunner

from assay.verdicts import gate
from assay.cli import cli
from assay.core.errors import UsageError
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
