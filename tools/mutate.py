"""Mutation testing of the Python modules that decide verdicts and compute figures (`make mutate`).

    python tools/mutate.py                     mutmut over every module (one run); then the report
    python tools/mutate.py --module assay.verdicts.gate only that module (repeatable); then the report
    python tools/mutate.py --survivors         run again only the mutants that did not die (after new tests)
    python tools/mutate.py --not-run           only the mutants not tested yet (resume a run cut short)
    python tools/mutate.py --report            only the report, from the results mutmut keeps in mutants/
    --jobs N                                   mutants tested at once (default 2)

The modules are the files [tool.mutmut] only_mutate names in pyproject.toml. mutmut (requirements-mutate.lock)
copies the tree to mutants/, mutates inside functions only, and runs for each mutant only the tests that called
its function during one run of [tool.mutmut] pytest_add_cli_args_test_selection. The C chunker
(src/assay/inputs/chunking/_recursive.c) is not mutated: no Python tool mutates C; its Python twin is.

The report, docs/mutation.md, gives per module the mutants killed, timed out (counted as detected), survived,
equivalent (listed in tools/mutation_equivalent.toml with the reason) and not covered (no selected test calls the
function: counted as not detected), the score, and every mutant that did not die with its file, line and diff.

    score = (killed + timeout) / (mutants tested - equivalent)

A mutant mutmut has not tested yet (a run cut short) is counted apart as "not run", in no score.

When tools/mutate_sql.py (the SQL mutation runner) is present it runs afterwards, unless --no-sql, and the
report adds its results (docs/mutation-sql.json). The printed last line is the Python score.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "tools" / "mutation_equivalent.toml"
REPORT = ROOT / "docs" / "mutation.md"
SQL_RUNNER = ROOT / "tools" / "mutate_sql.py"
SQL_RESULTS = ROOT / "docs" / "mutation-sql.json"
MUTANTS = ROOT / "mutants"

# mutmut's exit codes (mutmut/stats.py), in the report's words; anything else is "other"
STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "not covered", 33: "not covered", 36: "timeout",
          -24: "timeout", 24: "timeout", 152: "timeout", 255: "timeout", None: "not run"}
DETECTED = ("killed", "timeout")


def config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]


def module_files(cfg: dict | None = None) -> list[str]:
    """The files mutated, as paths from the repository root, in the order only_mutate names them."""
    cfg = cfg or config()
    found: list[str] = []
    for source in cfg["source_paths"]:
        for path in sorted((ROOT / source).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if any(fnmatch.fnmatch(rel, p) for p in cfg["only_mutate"]) and rel not in found:
                found.append(rel)
    order = {p: i for i, p in enumerate(cfg["only_mutate"])}
    return sorted(found, key=lambda f: (min(order[p] for p in order if fnmatch.fnmatch(f, p)), f))


def module_name(path: str) -> str:
    """src/assay/inputs/chunking/__init__.py -> assay.inputs.chunking (mutmut's mutant names start so)."""
    parts = Path(path).with_suffix("").parts
    parts = parts[1:] if parts[0] == "src" else parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def mutmut(*args: str) -> list[str]:
    return [sys.executable, "-m", "mutmut", *args]


def run_mutmut(files: list[str], jobs: int, names: list[str] | None = None) -> tuple[int, float]:
    """One mutmut run over the modules' mutants (or ``names`` of them), its output to mutants/logs/run.log.
    One run, not one per module: each run first checks every mutated file and runs the clean tests (minutes),
    and mutmut orders the mutants of one run fastest first, so a run cut short has tested the cheap ones of
    every module."""
    log = MUTANTS / "logs" / "run.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    # a module's own functions are named `<module>.x_...` (methods `<module>.xǁClassǁ...`): not a submodule's
    patterns = names or [f"{module_name(path)}.x*" for path in files]
    # mutmut copies tests/ over its old copy and never deletes: a test file removed or moved since would still run
    shutil.rmtree(MUTANTS / "tests", ignore_errors=True)
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(mutmut("run", "--max-children", str(jobs), *patterns), cwd=ROOT, stdout=out,
                              stderr=subprocess.STDOUT)
    return done.returncode, time.monotonic() - start


def results(path: str) -> dict[str, str]:
    """{mutant name: status} for one module, from mutmut's record (mutants/<path>.meta)."""
    meta = MUTANTS / f"{path}.meta"
    if not meta.is_file():
        return {}
    codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
    return {name: STATUS.get(code, "other") for name, code in codes.items()}


def to_rerun(files: list[str], *, survivors: bool, not_run: bool, skip=frozenset()) -> list[str]:
    """The mutants of ``files`` a run must name: those not detected (``survivors``: survived, not covered,
    other, not run) and/or those not tested yet (``not_run``), less those in ``skip`` (the survivors listed as
    equivalent: no test can kill them, and a survivor costs every test that calls its function). mutmut reruns
    every mutant a run names, and tests only the untested ones of a run naming none."""
    return [n for path in files for n, status in results(path).items()
            if ((survivors and status not in DETECTED) or (not_run and status == "not run")) and n not in skip]


def equivalent_names() -> set[str]:
    """The survivors tools/mutation_equivalent.toml (or the SQL case rule) names as equivalent."""
    by_file, _ = collect()
    return {m.name for ms in by_file.values() for m in ms if m.status == "equivalent"}


@dataclass
class Mutant:
    name: str
    file: str
    status: str
    line: int = 0
    original: str = ""
    mutated: str = ""
    diff: str = ""
    note: dict = field(default_factory=dict)


def describe(mutant: Mutant) -> None:
    """Fill in the mutant's diff, the line it changes in the source file, and that line before and after."""
    os.chdir(ROOT)  # mutmut reads pyproject.toml and mutants/ from the working directory
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    try:
        diff = get_diff_for_mutant(mutant.name, path=mutant.file)
    except Exception as error:  # a stale mutants/ (source edited since the run): say so, do not stop
        mutant.diff = f"(no diff: {error}; run `make mutate` again)"
        return
    lines = diff.splitlines()[2:]  # past the ---/+++ header
    mutant.diff = "\n".join(lines)
    removed = [line[1:] for line in lines if line.startswith("-")]
    added = [line[1:] for line in lines if line.startswith("+")]
    mutant.original, mutant.mutated = "\n".join(s.strip() for s in removed), "\n".join(s.strip() for s in added)
    mutant.line = source_line(mutant.file, lines)


def source_line(file: str, hunk_lines: list[str]) -> int:
    """The line of ``file`` where the diff's first change is: its hunks are of the function alone, so the
    function's unchanged and removed lines are looked up in the file, as a block."""
    source = [s.strip() for s in (ROOT / file).read_text(encoding="utf-8").splitlines()]
    before: list[str] = []
    first = None
    for line in hunk_lines:
        if line.startswith("@@"):
            continue
        if line.startswith("-") and first is None:
            first = len(before)
        if not line.startswith("+"):
            before.append(line[1:].strip())
    if first is None:
        return 0
    for start in range(len(source) - len(before) + 1):
        if source[start:start + len(before)] == before:
            return start + first + 1
    return 0


def to_kill_list() -> list[dict]:
    """[[to_kill]] entries of the equivalence file: survivors (or mutants no selected test reaches) of one function (file, function as mutmut names it,
    e.g. x__means) that are not equivalent, with the test that will kill them (`test`)."""
    if not EQUIVALENT.is_file():
        return []
    return tomllib.loads(EQUIVALENT.read_text(encoding="utf-8")).get("to_kill", [])


def equivalence_list() -> list[dict]:
    if not EQUIVALENT.is_file():
        return []
    entries = tomllib.loads(EQUIVALENT.read_text(encoding="utf-8")).get("equivalent", [])
    for entry in entries:
        missing = {"file", "line", "original", "mutated", "reason"} - entry.keys()
        if missing:
            raise SystemExit(f"{EQUIVALENT.relative_to(ROOT)}: an entry lacks {', '.join(sorted(missing))}: {entry}")
    return entries


def matches(entry: dict, mutant: Mutant) -> bool:
    return (entry["file"] == mutant.file and entry["original"].strip() == mutant.original
            and entry["mutated"].strip() == mutant.mutated)


SQL_CASE = {"file": "", "line": 0, "original": "", "mutated": "",
            "reason": "Only the case of SQL keywords and unquoted names changed (string literals in '...' are the "
                      "same): SQL reads keywords in any case and DuckDB matches unquoted names in any case, so it "
                      "is the same query. (Recognised by tools/mutate.py, not listed one by one.)"}
_SQL_WORD = re.compile(r"\b(select|from|where|join|group by|order by|coalesce|count)\b", re.I)
_SQL_LITERAL = re.compile(r"'[^']*'")


def sql_case_only(mutant: Mutant) -> bool:
    """The mutant changes only the case of a SQL text's keywords and unquoted names."""
    o, m = mutant.original, mutant.mutated
    return (bool(o) and "\n" not in o and o != m and o.lower() == m.lower() and bool(_SQL_WORD.search(o))
            and _SQL_LITERAL.findall(o) == _SQL_LITERAL.findall(m))


def apply_equivalence(mutants: list[Mutant], entries: list[dict]) -> list[dict]:
    """Mark the survivors the list names as equivalent (same file and change; the nearest line when the change
    occurs more than once); returns the entries that matched no survivor (stale)."""
    stale = []
    for entry in entries:
        candidates = [m for m in mutants if m.status == "survived" and not m.note and matches(entry, m)]
        if not candidates:
            stale.append(entry)
            continue
        chosen = min(candidates, key=lambda m: abs(m.line - entry["line"]))
        chosen.status, chosen.note = "equivalent", entry
    for m in mutants:
        if m.status == "survived" and not m.note and sql_case_only(m):
            m.status, m.note = "equivalent", SQL_CASE
    return stale


COLUMNS = ("killed", "timeout", "survived", "equivalent", "not covered", "other", "not run")


def counts(mutants: list[Mutant]) -> dict[str, int]:
    c = {k: 0 for k in COLUMNS}
    for m in mutants:
        c[m.status if m.status in c else "other"] += 1
    c["total"] = len(mutants)
    return c


def score(c: dict[str, int]) -> float | None:
    """Over the mutants tested: one mutmut has not run yet (a run cut short) counts in no score."""
    denominator = c["total"] - c["equivalent"] - c["not run"]
    return (c["killed"] + c["timeout"]) / denominator if denominator else None


def percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def collect() -> tuple[dict[str, list[Mutant]], list[dict]]:
    by_file: dict[str, list[Mutant]] = {}
    for path in module_files():
        by_file[path] = [Mutant(name, path, status) for name, status in sorted(results(path).items(),
                                                                               key=lambda kv: natural(kv[0]))]
    for mutants in by_file.values():
        for m in mutants:
            if m.status not in (*DETECTED, "not run"):
                describe(m)
    everything = [m for ms in by_file.values() for m in ms]
    stale = apply_equivalence(everything, equivalence_list())
    for entry in to_kill_list():
        for m in everything:
            if (m.status in ("survived", "not covered") and m.file == entry["file"]
                    and m.name.rpartition(".")[2].split("__mutmut_")[0] == entry["function"]):
                m.note = entry
    return by_file, stale


def natural(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("__mutmut_")
    return head, int(number) if number.isdigit() else 0


def sql_section() -> list[str]:
    if not SQL_RESULTS.is_file():
        hook = ("tools/mutate_sql.py is present; its results file is not there yet"
                if SQL_RUNNER.is_file() else "no SQL mutation runner (tools/mutate_sql.py) in this tree")
        return ["## SQL", "", f"Not run: {hook}.", ""]
    data = json.loads(SQL_RESULTS.read_text(encoding="utf-8"))
    s = data.get("score", {})
    out = ["## SQL", "",
           f"From {data.get('tool', 'tools/mutate_sql.py')}, results in "
           f"[mutation-sql.json](mutation-sql.json): {s.get('total', '?')} mutants, {s.get('killed', '?')} killed, "
           f"{s.get('timeout', '?')} timeout, {s.get('survived', '?')} survived, {s.get('equivalent', '?')} "
           f"equivalent, {s.get('error', 0)} errors; score {percent(s.get('score'))}.", ""]
    survivors = [m for m in data.get("mutants", []) if m.get("status") == "survived"]
    if survivors:
        out += ["Surviving SQL mutants:", ""]
        out += [f"- `{m['file']}:{m['line']}` {m['operator']}: `{m['original']}` -> `{m['replacement']}`"
                for m in survivors]
        out.append("")
    return out


def render(by_file: dict[str, list[Mutant]], stale: list[dict], seconds: float | None) -> str:
    cfg = config()
    import importlib.metadata as md

    total = counts([m for ms in by_file.values() for m in ms])
    out = ["# Mutation testing", "",
           "Written by `make mutate` (tools/mutate.py); do not edit by hand. "
           f"mutmut {md.version('mutmut')} (requirements-mutate.lock) mutates, inside functions, the Python modules "
           "that decide verdicts and compute figures ([tool.mutmut] in pyproject.toml); each mutant runs the "
           "tests, of the selection below, that called its function. The C chunker (_recursive.c) is not "
           "mutated (no Python tool mutates C); its Python twin `python_spans` is, and tests/inputs/chunking holds "
           "both to one reference.", "",
           "Score = (killed + timeout) / (mutants tested - equivalent). Not covered: no selected test calls the "
           "function (counted as not detected). Equivalent: listed in tools/mutation_equivalent.toml with the "
           "reason. Not run: not tested yet (a run cut short), in no score.", "",
           f"**Python score: {percent(score(total))}** ({total['killed'] + total['timeout']} of "
           f"{total['total'] - total['equivalent'] - total['not run']} non-equivalent mutants tested detected; "
           f"{total['not run']} of {total['total']} not run).", "",
           "Tests run: " + ", ".join(f"`{t}`" for t in cfg["pytest_add_cli_args_test_selection"]) + ".", "",
           "| module | mutants | killed | timeout | survived | equivalent | not covered | other | not run | score |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for path, mutants in by_file.items():
        c = counts(mutants)
        out.append(f"| `{path}` | {c['total']} | " + " | ".join(str(c[k]) for k in COLUMNS)
                   + f" | {percent(score(c))} |")
    out.append("| **all** | " + str(total["total"]) + " | " + " | ".join(str(total[k]) for k in COLUMNS)
               + f" | **{percent(score(total))}** |")
    out.append("")
    if seconds is not None:
        out += [f"The mutmut run that wrote this took {seconds / 60:.1f} minutes (wall, `--jobs` mutants at once).",
                ""]
    out += sql_section()
    not_run = [m for ms in by_file.values() for m in ms if m.status == "not run"]
    if not_run:
        modules = sorted({m.file for m in not_run}, key=list(by_file).index)
        out += [f"## Not run ({len(not_run)})", "", "mutmut has not tested these yet (the run was cut short): "
                "`make mutate` runs them. Modules with mutants not run: "
                + ", ".join(f"`{f}` ({sum(m.file == f for m in not_run)})" for f in modules) + ".", ""]
    for title, wanted in (("Surviving mutants", ("survived", "other")),
                          ("Not covered", ("not covered",)), ("Equivalent mutants", ("equivalent",))):
        listed = [m for ms in by_file.values() for m in ms if m.status in wanted]
        out += [f"## {title} ({len(listed)})", ""]
        for m in listed:
            why = (f" Reason: {m.note['reason']}" if m.note.get("reason") else
                   f" Not killed yet; the test that will kill it: {m.note['test']}" if m.note.get("test") else "")
            status = f" ({m.status})" if m.status not in ("survived", "equivalent", "not covered") else ""
            out += [f"### `{m.file}:{m.line}` {m.name}{status}", "", *([why.strip(), ""] if why else []),
                    "```diff", m.diff, "```", ""]
    if stale:
        out += ["## Stale equivalence entries", "", "These entries of tools/mutation_equivalent.toml match no "
                "surviving mutant (the code changed, or a test now kills it):", ""]
        out += [f"- `{e['file']}:{e['line']}` `{e['original']}` -> `{e['mutated']}`" for e in stale]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--module", action="append", help="only this module, e.g. assay.verdicts.gate (repeatable)")
    ap.add_argument("--survivors", action="store_true", help="run again only the mutants that did not die (not "
                    "those listed as equivalent)")
    ap.add_argument("--not-run", action="store_true", help="run only the mutants not tested yet (resume a run "
                    "cut short)")
    ap.add_argument("--report", action="store_true", help="write the report from the last run; run nothing")
    ap.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    ap.add_argument("--no-sql", action="store_true", help="do not run tools/mutate_sql.py")
    args = ap.parse_args(argv)
    files = module_files()
    if args.module:
        unknown = set(args.module) - {module_name(f) for f in files}
        if unknown:
            ap.error(f"not a mutated module: {', '.join(sorted(unknown))}; choose from "
                     + ", ".join(module_name(f) for f in files))
        files = [f for f in files if module_name(f) in args.module]
    seconds = None
    if not args.report:
        names = None
        if args.survivors or args.not_run:
            skip = equivalent_names() if args.survivors else frozenset()
            names = to_rerun(files, survivors=args.survivors, not_run=args.not_run, skip=skip)
        if names != []:
            code, seconds = run_mutmut(files, args.jobs, names)
            if code not in (0, None):
                print(f"mutmut run failed (exit {code}); see mutants/logs/run.log", file=sys.stderr)
                return code
        if SQL_RUNNER.is_file() and not args.no_sql and not args.module:
            sql = subprocess.run([sys.executable, str(SQL_RUNNER), "--jobs", str(args.jobs)], cwd=ROOT)
            if sql.returncode != 0:
                print(f"tools/mutate_sql.py failed (exit {sql.returncode})", file=sys.stderr)
                return sql.returncode
    by_file, stale = collect()
    REPORT.write_text(render(by_file, stale, seconds), encoding="utf-8")
    total = counts([m for ms in by_file.values() for m in ms])
    print(f"Python mutation score: {percent(score(total))} ({total['killed'] + total['timeout']} of "
          f"{total['total'] - total['equivalent'] - total['not run']} non-equivalent mutants tested detected; "
          f"{total['survived']} survived, {total['not covered']} not covered, {total['equivalent']} equivalent, "
          f"{total['not run']} not run); report: docs/mutation.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
