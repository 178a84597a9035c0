"""The mutation-testing set-up (`make mutate`) names things that exist, and its report reads back.

Mutation testing itself is not run here (it takes far longer than the suite): tools/mutate.py runs it."""

from __future__ import annotations

import fnmatch
import importlib.util
import re
import sys
import tomllib
from pathlib import Path

from conftest import ROOT

spec = importlib.util.spec_from_file_location("mutate_tool", ROOT / "tools" / "mutate.py")
mutate = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mutate  # its dataclasses look their module up there
spec.loader.exec_module(mutate)

CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]


def test_every_pattern_names_modules_that_exist():
    files = [p.relative_to(ROOT).as_posix() for p in (ROOT / "src").rglob("*.py")]
    for pattern in CONFIG["only_mutate"]:
        assert [f for f in files if fnmatch.fnmatch(f, pattern)], f"{pattern} matches no module"


def test_the_modules_that_decide_verdicts_are_mutated():
    names = {mutate.module_name(f) for f in mutate.module_files()}
    assert {"assay.verdicts.gate", "assay.verdicts.regression", "assay.verdicts.comparison", "assay.retrieval.fusion.rrf", "assay.measures.stats",
            "assay.inputs.chunking.recursive", "assay.inputs.judgments.resolve", "assay.inputs.judgments.normalize", "assay.runs.sweep",
            "assay.runs.ablation", "assay.retrieval.calibration", "assay.runs.abstention", "assay.store.tokens",
            "assay.verdicts.inference"} <= names
    assert "assay.cli" not in names


def test_module_names_are_mutmuts():
    assert mutate.module_name("src/assay/inputs/chunking/__init__.py") == "assay.inputs.chunking"
    assert mutate.module_name("src/assay/retrieval/fusion/rrf.py") == "assay.retrieval.fusion.rrf"


def test_every_selected_test_path_and_copied_path_exists():
    made = {"models/"}  # the offline model, installed by `make install` (and by `make mutate` before it runs)
    for path in CONFIG["pytest_add_cli_args_test_selection"] + [p for p in CONFIG["also_copy"] if p not in made]:
        assert (ROOT / path).exists(), path
    assert made <= set(CONFIG["also_copy"])


def test_the_lock_pins_every_package_with_a_hash():
    text = (ROOT / "requirements-mutate.lock").read_text(encoding="utf-8")
    entries = re.findall(r"^(\S+)==(\S+) \\\n\s+--hash=sha256:([0-9a-f]{64})", text, re.M)
    names = [name for name, _, _ in entries]
    requirement_lines = [line for line in text.splitlines() if line and not line.startswith(("#", " "))]
    assert len(entries) == len(requirement_lines) and "mutmut" in names


def test_make_test_does_not_run_mutation_testing():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test_target = re.search(r"^test:(.*)\n((?:\t.*\n)+)", makefile, re.M)
    assert "mutate" not in test_target.group(0)
    assert re.search(r"^mutate:.*\n\t.*tools/mutate\.py", makefile, re.M)


def test_the_equivalence_list_is_complete_per_entry():
    for entry in mutate.equivalence_list():
        assert (ROOT / entry["file"]).is_file(), entry
        assert entry["reason"].strip() and entry["original"].strip() != entry["mutated"].strip(), entry
    for entry in mutate.to_kill_list():
        assert (ROOT / entry["file"]).is_file() and entry["function"].startswith("x") and entry["test"].strip(), entry


def test_the_report_reads_back():
    """docs/mutation.md: the score, and one table row per mutated module whose counts add up."""
    text = (ROOT / "docs" / "mutation.md").read_text(encoding="utf-8")
    score = re.search(r"\*\*Python score: ([\d.]+)%\*\* \((\d+) of (\d+) non-equivalent mutants tested detected; "
                      r"(\d+) of (\d+) not run\)", text)
    assert score, "no score line"
    rows = {m.group(1): [int(x) for x in m.group(2, 3, 4, 5, 6, 7, 8, 9)]
            for m in re.finditer(r"^\| `([^`]+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| "
                                 r"(\d+) \|", text, re.M)}
    assert set(rows) == set(mutate.module_files())
    for path, (total, *parts) in rows.items():
        assert sum(parts) == total, path
    # columns: mutants, killed, timeout, survived, equivalent, not covered, other, not run
    detected = sum(r[1] + r[2] for r in rows.values())
    tested = sum(r[0] - r[4] - r[7] for r in rows.values())
    assert [int(g) for g in score.group(2, 3, 4, 5)] == [detected, tested, sum(r[7] for r in rows.values()),
                                                         sum(r[0] for r in rows.values())]
    assert abs(float(score.group(1)) - 100 * detected / tested) < 0.051


def test_a_surviving_mutant_is_found_at_its_line(tmp_path):
    """The report's line for a mutant is where its change is in the file, found from the function's diff."""
    source = (ROOT / "src" / "assay" / "retrieval" / "fusion" / "rrf.py").read_text(encoding="utf-8").splitlines()
    real = [" def rrf(lists: dict[str, list[Hit]], k: int = 60) -> list[Hit]:",
            "     scores: dict[str, float] = {}", "     docs: dict[str, str] = {}",
            "-    for name in sorted(lists):  # a fixed order of summation: identical floats on every run",
            "+    for name in lists:  # a fixed order of summation: identical floats on every run"]
    line = mutate.source_line("src/assay/retrieval/fusion/rrf.py", ["@@ -1,4 +1,4 @@", *real])
    assert source[line - 1].strip().startswith("for name in sorted(lists):")
    # a function no longer in the file (the source changed since the run): no line rather than a wrong one
    assert mutate.source_line("src/assay/retrieval/fusion/rrf.py", ["@@ -1,2 +1,2 @@", " def gone():", "-    x = 1",
                                                          "+    x = 2"]) == 0


def test_only_a_change_of_case_in_sql_text_is_taken_as_equivalent():
    def mutant(original, mutated):
        return mutate.Mutant("m", "f.py", "survived", original=original, mutated=mutated)

    assert mutate.sql_case_only(mutant('"SELECT COUNT(*) FROM answers WHERE run_id = ?",',
                                       '"select count(*) from answers where run_id = ?",'))
    assert not mutate.sql_case_only(mutant("\"ON j.stage = 'final' AND\"", "\"ON J.STAGE = 'FINAL' AND\""))
    assert not mutate.sql_case_only(mutant('reason = "the run used"', 'reason = "THE RUN USED"'))
    assert not mutate.sql_case_only(mutant('"SELECT a FROM t"', '"SELECT b FROM t"'))


def test_a_resumed_run_names_only_the_mutants_it_must_test(tmp_path, monkeypatch):
    """--not-run names the untested mutants only; --survivors every one not detected (untested included);
    killed and timed-out mutants are never named again (mutmut would test them anew)."""
    meta = tmp_path / "src" / "assay" / "verdicts" / "gate.py.meta"
    meta.parent.mkdir(parents=True)
    codes = {"assay.verdicts.gate.x_a__mutmut_1": 1, "assay.verdicts.gate.x_a__mutmut_2": 0, "assay.verdicts.gate.x_a__mutmut_3": None,
             "assay.verdicts.gate.x_a__mutmut_4": 36, "assay.verdicts.gate.x_a__mutmut_5": 33, "assay.verdicts.gate.x_a__mutmut_6": 3}
    meta.write_text(__import__("json").dumps({"exit_code_by_key": codes}), encoding="utf-8")
    monkeypatch.setattr(mutate, "MUTANTS", tmp_path)
    files = ["src/assay/verdicts/gate.py", "src/assay/verdicts/regression.py"]  # the second has no record yet: nothing to name
    assert mutate.to_rerun(files, survivors=False, not_run=True) == ["assay.verdicts.gate.x_a__mutmut_3"]
    assert mutate.to_rerun(files, survivors=True, not_run=False) == [
        "assay.verdicts.gate.x_a__mutmut_2", "assay.verdicts.gate.x_a__mutmut_3", "assay.verdicts.gate.x_a__mutmut_5"]
    assert mutate.to_rerun(files, survivors=True, not_run=True) == mutate.to_rerun(files, survivors=True,
                                                                                  not_run=False)
    assert mutate.to_rerun(files, survivors=False, not_run=False) == []
    # the survivors listed as equivalent are not run again: no test can kill them
    assert mutate.to_rerun(files, survivors=True, not_run=False, skip={"assay.verdicts.gate.x_a__mutmut_2"}) == [
        "assay.verdicts.gate.x_a__mutmut_3", "assay.verdicts.gate.x_a__mutmut_5"]


def test_under_mutmut_the_cheapest_test_modules_run_first(tmp_path, monkeypatch):
    """With a mutant applied, tests/conftest.py orders whole modules by their tests' total time from mutmut's
    stats, each module keeping its own order; with no mutant (a plain `make test`), the order is untouched."""
    import types

    import conftest

    (tmp_path / "mutmut-stats.json").write_text(__import__("json").dumps({"duration_by_test": {
        "tests/a.py::slow": 20.0, "tests/a.py::fast": 0.1, "tests/b.py::one": 1.0, "tests/b.py::two": 1.0,
        "tests/c.py::x": 0.5}}), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    names = ["tests/a.py::slow", "tests/a.py::fast", "tests/b.py::one", "tests/c.py::x", "tests/b.py::two"]
    items = [types.SimpleNamespace(nodeid=n) for n in names]
    monkeypatch.delenv("MUTANT_UNDER_TEST", raising=False)
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == names
    monkeypatch.setenv("MUTANT_UNDER_TEST", "stats")  # mutmut's own full runs: untouched too
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == names
    monkeypatch.setenv("MUTANT_UNDER_TEST", "assay.verdicts.gate.x_check__mutmut_7")
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == ["tests/c.py::x", "tests/b.py::one", "tests/b.py::two",
                                         "tests/a.py::slow", "tests/a.py::fast"]
