"""Mutation testing of the SQL that computes figures: the measures (sql/measures/*.sql), the judged views
every measure reads, and the SQL the regression baseline and history read. No well-kept mutation tool
mutates SQL (mutmut and cosmic-ray mutate Python), so this one does, over sqlglot's DuckDB tokens:
comments and string literals are never touched, and each mutant changes one spot of one file.

    python tools/mutate_sql.py                 # every mutant, results to docs/mutation-sql.json
    python tools/mutate_sql.py --list          # the mutants only, nothing run
    python tools/mutate_sql.py --file sql/measures/ndcg.sql --jobs 1 --fresh
    python tools/mutate_sql.py --from-head     # the committed src/assay, not the working tree's Python

Operators (deterministic: mutants come in file order, then offset, then operator, then replacement):
  ROR    comparison: < -> <=, >= ; <= -> <, > ; > -> >=, <= ; >= -> >, < ; = -> <> ; <> (!=) -> =
  AOR    binary arithmetic: + -> - ; - -> + ; * -> / ; / -> *
  NUM    numeric literal: integer n -> n+1, n-1 (0 -> 1 only); decimal 0.0 -> 1.0, x -> x+1, x-1 (x > 0)
  AGG    MIN <-> MAX ; LEAST <-> GREATEST ; SUM -> COUNT ; COUNT(expr) -> COUNT(*)
  LOG    AND <-> OR (not the AND of BETWEEN) ; NOT removed ; IS NULL <-> IS NOT NULL
  CASE   searched CASE: WHEN c -> WHEN NOT (c) (the branch swap) ; ELSE x -> ELSE <first THEN value>
  NULL   COALESCE(x, d...) -> x (the default dropped: missing stays NULL)
  JOIN   LEFT [OUTER] JOIN -> JOIN
  DIST   DISTINCT removed
  ORDER  ASC <-> DESC ; a sort key with no direction -> key DESC
  FRAME  ROWS UNBOUNDED PRECEDING -> ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING ; a frame's end
         CURRENT ROW <-> 1 PRECEDING ; a frame's start UNBOUNDED PRECEDING -> 1 PRECEDING
A mutant equal to the original text, or to an earlier mutant of the same file, is dropped.

Each mutant's SQL is written into a private copy of src/assay and sql/ (one per worker, under a temporary
directory; the working tree is never written), and its file's tests run there (PYTHONPATH points at the
copy, so assay.core.sqlfiles loads the copy's sql/) with -x and a timeout. At most --jobs (default 2) at once.
A test run's warehouse is copied from one its unmutated baseline wrote (tests/sql/world.py:
opened), except for a migration's mutants, whose views live in the warehouse.
Results are cached in .mutation/sql-cache.json keyed by the mutant and a hash of the mutated file and every
file in scope (other SQL, a new migration included, does not invalidate it); a result holds while the test
files its file runs (and tests/sql's helpers) are unchanged, and a kill also while the test module
that killed it is: a rerun runs only what changed, and a new test reruns only the survivors (--fresh ignores
the cache; a change under src/ does not invalidate it).

Results file (docs/mutation-sql.json), the format H6's report (docs/mutation.md) reads:
  {"tool": "tools/mutate_sql.py", "format": 1,
   "score": {"total", "killed", "timeout", "survived", "equivalent", "error", "score"},
   "files": {FILE: {"total", "killed", "timeout", "survived", "equivalent", "error", "score"}},
   "mutants": [{"id", "file", "line", "col", "operator", "original", "replacement",
                "status",      # killed | timeout | survived | equivalent | error
                "killed_by",   # the first failing test's node id (killed), else null
                "reason"}]}    # why it is equivalent (tools/sql_mutation_equivalent.toml), else null
  score = (killed + timeout) / (total - equivalent); a survivor listed in the equivalence file is
  `equivalent`; "error" means the test run itself could not start (never counted as killed).
Equivalence list, tools/sql_mutation_equivalent.toml: [[equivalent]] file, line, change ("< -> <="),
reason. An entry that matches no surviving mutant is reported as stale.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EQUIVALENT = ROOT / "tools" / "sql_mutation_equivalent.toml"
OUTPUT = ROOT / "docs" / "mutation-sql.json"
CACHE = ROOT / ".mutation" / "sql-cache.json"

# Each file runs only the tests that read it (pytest node ids), the ones that kill most first: with -x a
# mutant's run ends at its first failure, so a kill costs seconds and only a survivor runs them all.
R = "tests/sql/test_retrieval_measures.py"
JUDGMENTS = "tests/sql/test_other_judgments.py"
SUMS = "tests/sql/test_rank_order_sums.py"
RETRIEVAL = {family: (f"{R}::test_every_run_and_stage_matches_pytrec_eval[{family}]",
                      f"{R}::test_edge_questions_by_hand", JUDGMENTS) + ((SUMS,) if family in ("nDCG", "AP") else ())
             for family in ("Success", "R", "P", "RR", "nDCG", "AP")}
S = "tests/sql/test_span_measures.py"
EDGES = "tests/sql/test_budget_edges.py"
SPAN_TEXT = f"{JUDGMENTS}::test_each_run_reads_its_own_gold_text"
SPAN_SUMS = f"{SUMS}::test_budgeted_ndcg_is_the_rank_ordered_sum_bit_for_bit"
SPAN = {family: (f"{S}::test_every_run_and_stage_matches_character_sets[{family}]",
                 "tests/measures/test_span.py::test_a_budget_cuts_the_result_that_fills_it", EDGES, SPAN_TEXT)
        + ((SPAN_SUMS,) if family == "nDCG" else ())
        for family in ("SpanRecall", "SpanPrecision", "SpanIoU", "Success", "nDCG")}
SPAN_ALL = (f"{S}::test_every_run_and_stage_matches_character_sets",
            "tests/measures/test_span.py::test_a_budget_cuts_the_result_that_fills_it", EDGES, SPAN_TEXT, SPAN_SUMS)
A = "tests/sql/test_answer_measures.py::test_every_unit_matches_the_rows_written"
ANSWER = {name: tuple(f"{A}[{run}-{family}]" for family in families for run in ("main", "decoy"))
          for name, families in (("abstention", ("Abstain", "FalseAbstain")), ("answer_rate", ("answer_rate",)),
                                 ("citation_precision", ("citation_precision",)),
                                 ("faithfulness", ("faithfulness",)),
                                 ("judged_faithfulness", ("judged_faithfulness",)),
                                 ("refusal_rate", ("refusal_rate",)))}
VIEWS = (R, "tests/sql/test_judged_views.py", JUDGMENTS, *ANSWER["abstention"])  # Abstain reads n_results
TREC = ("tests/measures/test_trec_eval.py",)
HISTORY = ("tests/sql/test_history_sql.py",)
REPORTS = ("tests/sql/test_report_sql.py",)  # the report SQL a verdict reads: the sweep's, calibration's


@dataclass(frozen=True)
class Target:
    file: str
    tests: tuple[str, ...]
    views: tuple[str, ...] = ()  # only these CREATE VIEW statements of the file (a migration's other SQL is not
    #                              a figure: its tables' shape is checked by the schema tests)


TARGETS = (
    *(Target(f"sql/measures/{name}.sql", RETRIEVAL[family])
      for name, family in (("average_precision", "AP"), ("ndcg", "nDCG"), ("precision", "P"), ("recall", "R"),
                           ("reciprocal_rank", "RR"), ("success", "Success"))),
    Target("sql/measures/span_context.sql", SPAN_ALL),
    *(Target(f"sql/measures/{name}.sql", SPAN[family])
      for name, family in (("span_iou", "SpanIoU"), ("span_precision", "SpanPrecision"),
                           ("span_recall", "SpanRecall"), ("ndcg_budget", "nDCG"), ("success_budget", "Success"))),
    *(Target(f"sql/measures/{name}.sql", tests) for name, tests in ANSWER.items()),
    Target("sql/migrations/002_judged_views.sql", VIEWS,
           ("complete_runs", "levels", "eval_questions", "gold_units", "unit_counts", "ideal_gains",
            "chunk_gold_overlaps", "chunk_credits", "doc_hits", "judged_ranking")),
    Target("sql/migrations/010_budgets_sweeps.sql",
           SPAN_ALL + ("tests/sql/test_judged_views.py::test_a_run_that_is_not_complete_is_never_judged",),
           ("budget_hits",)),
    Target("sql/migrations/013_compact_hits.sql", VIEWS, ("hits",)),
    Target("sql/trec/measure_views.sql", TREC),
    Target("sql/reports/comparable_runs.sql", HISTORY),
    Target("sql/analytics/pipeline_runs.sql", HISTORY),
    Target("sql/analytics/pipeline_values.sql", HISTORY),
    Target("sql/analytics/pipeline_slice_values.sql", HISTORY),
    Target("sql/analytics/stored_runs.sql", HISTORY),
    Target("sql/reports/context_tokens.sql", REPORTS),
    Target("sql/reports/top_scores.sql", REPORTS),
)


@dataclass(frozen=True)
class Mutant:
    file: str
    line: int
    col: int
    operator: str
    original: str
    replacement: str
    start: int  # the replaced text is source[start:end]
    end: int
    new: str  # what replaces it

    @property
    def id(self) -> str:
        key = f"{self.file}:{self.start}:{self.end}:{self.operator}:{self.new}"
        return hashlib.sha256(key.encode()).hexdigest()[:12]

    def apply(self, source: str) -> str:
        return source[:self.start] + self.new + source[self.end:]


# ---- the mutator -------------------------------------------------------------------------------------------

def tokenize(source: str):
    from sqlglot.dialects.duckdb import DuckDB

    return DuckDB().tokenize(source)


ROR = {"<": ("<=", ">="), "<=": ("<", ">"), ">": (">=", "<="), ">=": (">", "<"), "=": ("<>",), "<>": ("=",),
       "!=": ("=",)}
AOR = {"+": "-", "-": "+", "*": "/", "/": "*"}
SWAP_FUNCTIONS = {"MIN": "MAX", "MAX": "MIN", "LEAST": "GREATEST", "GREATEST": "LEAST", "SUM": "COUNT"}
OPERAND_END = {"VAR", "NUMBER", "R_PAREN", "IDENTIFIER", "STRING", "NULL", "TRUE", "FALSE", "R_BRACKET"}
CLAUSE_END = {"FROM", "WHERE", "GROUP_BY", "HAVING", "QUALIFY", "LIMIT", "UNION", "SEMICOLON", "ROWS", "RANGE",
              "WINDOW", "ORDER_BY"}


def _kind(token) -> str:
    return token.token_type.name


def _upper(token) -> str:
    return token.text.upper()


def _matching(tokens, i: int) -> int:
    """The index of the R_PAREN closing the L_PAREN at ``i``."""
    depth = 0
    for j in range(i, len(tokens)):
        if _kind(tokens[j]) == "L_PAREN":
            depth += 1
        elif _kind(tokens[j]) == "R_PAREN":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced parenthesis at offset {tokens[i].start}")


def _regions(tokens, views: tuple[str, ...]) -> list[tuple[int, int]]:
    """Token index ranges to mutate: the whole file, or only the named CREATE VIEW statements."""
    if not views:
        return [(0, len(tokens))]
    regions, start = [], 0
    for i in range(len(tokens) + 1):
        if i == len(tokens) or _kind(tokens[i]) == "SEMICOLON":
            words = [_upper(t) for t in tokens[start:start + 6]]
            if words[:1] == ["CREATE"] and "VIEW" in words:
                name = tokens[start + words.index("VIEW") + 1].text.lower()
                if name in views:
                    regions.append((start, i))
            start = i + 1
    found = {tokens[s + [_upper(t) for t in tokens[s:s + 6]].index("VIEW") + 1].text.lower() for s, _ in regions}
    missing = sorted(set(views) - found)
    if missing:
        raise SystemExit(f"mutate_sql: no CREATE VIEW for {', '.join(missing)}")
    return regions


def mutants(file: str, source: str, views: tuple[str, ...] = ()) -> list[Mutant]:
    """Every mutant of ``source`` (the text of ``file``), in a fixed order, none equal to the source."""
    tokens = tokenize(source)
    found: list[Mutant] = []

    def add(op: str, a: int, b: int, new: str) -> None:
        start, end = tokens[a].start, tokens[b].end + 1
        line = source.count("\n", 0, start) + 1
        col = start - (source.rfind("\n", 0, start) + 1) + 1
        original = " ".join(source[start:end].split())
        replacement = " ".join(new.split())
        found.append(Mutant(file, line, col, op, original, replacement, start, end, new))

    def text(a: int, b: int) -> str:
        return source[tokens[a].start:tokens[b].end + 1]

    for lo, hi in _regions(tokens, views):
        _mutate_region(tokens, lo, hi, add, text)
    found.sort(key=lambda m: (m.start, m.end, m.operator, m.new))
    kept, seen = [], {source}
    for m in found:
        mutated = m.apply(source)
        if mutated not in seen:
            seen.add(mutated)
            kept.append(m)
    return kept


def _mutate_region(tokens, lo: int, hi: int, add, text) -> None:
    between = set()  # indices of AND tokens that belong to a BETWEEN
    for i in range(lo, hi):
        t, kind, word = tokens[i], _kind(tokens[i]), _upper(tokens[i])
        prev = _kind(tokens[i - 1]) if i > lo else None
        nxt = tokens[i + 1] if i + 1 < hi else None
        if kind == "BETWEEN":
            depth = 0
            for j in range(i + 1, hi):
                depth += {"L_PAREN": 1, "R_PAREN": -1}.get(_kind(tokens[j]), 0)
                if depth == 0 and _kind(tokens[j]) == "AND":
                    between.add(j)
                    break
        if t.text in ROR and kind in {"LT", "LTE", "GT", "GTE", "EQ", "NEQ"}:
            for new in ROR[t.text]:
                add("ROR", i, i, new)
        elif kind in {"PLUS", "DASH", "STAR", "SLASH"} and prev in OPERAND_END and nxt is not None \
                and _kind(nxt) not in {"R_PAREN", "COMMA"}:
            add("AOR", i, i, AOR[t.text])
        elif kind == "NUMBER":
            for new in _numbers(t.text):
                add("NUM", i, i, new)
        elif kind == "VAR" and nxt is not None and _kind(nxt) == "L_PAREN":
            close = _matching(tokens, i + 1)
            if word in SWAP_FUNCTIONS:
                add("AGG", i, i, SWAP_FUNCTIONS[word])
            elif word == "COUNT" and _kind(tokens[i + 2]) not in {"STAR", "DISTINCT"}:
                add("AGG", i, close, "COUNT(*)")
            elif word == "COALESCE":
                first_end = _top_level_commas(tokens, i + 1, close)[0] - 1
                add("NULL", i, close, text(i + 2, first_end))
        elif kind in {"AND", "OR"} and i not in between:
            add("LOG", i, i, "OR" if kind == "AND" else "AND")
        elif kind == "NOT" and prev != "IS":
            add("LOG", i, i + 1, text(i + 1, i + 1))
        elif kind == "IS" and nxt is not None:
            if _kind(nxt) == "NULL":
                add("LOG", i, i + 1, "IS NOT NULL")
            elif _kind(nxt) == "NOT" and i + 2 < hi and _kind(tokens[i + 2]) == "NULL":
                add("LOG", i, i + 2, "IS NULL")
        elif kind == "CASE" and nxt is not None and _kind(nxt) == "WHEN":
            _mutate_case(tokens, i, hi, add, text)
        elif kind == "LEFT" and nxt is not None:
            join = i + 2 if _kind(nxt) == "OUTER" else i + 1
            if _kind(tokens[join]) == "JOIN":
                add("JOIN", i, join, "JOIN")
        elif kind == "DISTINCT":
            add("DIST", i, i + 1, text(i + 1, i + 1))
        elif kind in {"ASC", "DESC"}:
            add("ORDER", i, i, "DESC" if kind == "ASC" else "ASC")
        elif kind == "ORDER_BY":
            for end in _sort_key_ends(tokens, i, hi):
                add("ORDER", end, end, text(end, end) + " DESC")
        elif kind == "ROWS":
            _mutate_frame(tokens, i, hi, add)


def _numbers(literal: str) -> list[str]:
    if re.fullmatch(r"\d+", literal):
        n = int(literal)
        return ["1"] if n == 0 else [str(n + 1), str(n - 1)]
    if re.fullmatch(r"\d+\.\d+", literal):
        x = Decimal(literal)
        return ["1.0"] if x == 0 else [str(x + 1), str(x - 1)]
    return []


def _top_level_commas(tokens, open_: int, close: int) -> list[int]:
    """Indices of the commas directly inside the parentheses open_..close, then close itself."""
    out, depth = [], 0
    for j in range(open_ + 1, close):
        depth += {"L_PAREN": 1, "R_PAREN": -1}.get(_kind(tokens[j]), 0)
        if depth == 0 and _kind(tokens[j]) == "COMMA":
            out.append(j)
    return out + [close]


def _mutate_case(tokens, i: int, hi: int, add, text) -> None:
    """WHEN c -> WHEN NOT (c) for each branch; ELSE x -> ELSE <the first THEN value>."""
    depth, parts, mark = 0, [], None  # parts: (keyword, first token, last token) at this CASE's level
    for j in range(i + 1, hi):
        kind = _kind(tokens[j])
        if kind in {"L_PAREN", "CASE"}:
            depth += 1
        elif kind in {"R_PAREN"} or (kind == "END" and depth > 0):
            depth -= 1
        elif depth == 0 and kind in {"WHEN", "THEN", "ELSE", "END"}:
            if mark is not None:
                parts.append((tokens[mark].token_type.name, mark + 1, j - 1))
            if kind == "END":
                break
            mark = j
    first_then = next((a, b) for k, a, b in parts if k == "THEN")
    for keyword, a, b in parts:
        if keyword == "WHEN":
            add("CASE", a, b, f"NOT ({text(a, b)})")
        elif keyword == "ELSE":
            add("CASE", a, b, text(*first_then))


def _sort_key_ends(tokens, i: int, hi: int) -> list[int]:
    """The last token of each key of the ORDER BY at ``i`` that has no ASC/DESC of its own."""
    ends, depth = [], 0
    for j in range(i + 1, hi + 1):
        kind = _kind(tokens[j]) if j < hi else "SEMICOLON"
        if kind == "L_PAREN":
            depth += 1
        elif kind == "R_PAREN" and depth > 0:
            depth -= 1
        elif depth == 0 and (kind in {"COMMA", "R_PAREN"} or kind in CLAUSE_END):
            if _kind(tokens[j - 1]) not in {"ASC", "DESC", "NULLS", "FIRST", "LAST"}:
                ends.append(j - 1)
            if kind != "COMMA":
                break
    return ends


def _mutate_frame(tokens, i: int, hi: int, add) -> None:
    words = [_upper(t) for t in tokens[i:min(hi, i + 8)]]
    if words[1:3] == ["UNBOUNDED", "PRECEDING"]:
        add("FRAME", i, i + 2, "ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING")
    elif words[1:4] == ["BETWEEN", "UNBOUNDED", "PRECEDING"]:
        add("FRAME", i + 2, i + 3, "1 PRECEDING")
        end = words[5:7]
        if end == ["CURRENT", "ROW"]:
            add("FRAME", i + 5, i + 6, "1 PRECEDING")
        elif end == ["1", "PRECEDING"]:
            add("FRAME", i + 5, i + 6, "CURRENT ROW")


# ---- the runner --------------------------------------------------------------------------------------------

def _digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(hashlib.sha256(p).digest())
    return h.hexdigest()


def _test_files(tests: tuple[str, ...]) -> list[Path]:
    """The files a test selection reads: its test modules, and the helpers beside them."""
    support = [ROOT / "tests" / n for n in ("conftest.py", "synthetic.py", "core/reference_tables.py")]
    helpers = [p for p in sorted((ROOT / "tests" / "sql").glob("*.py")) if not p.name.startswith("test_")]
    return sorted({ROOT / t.split("::")[0] for t in tests}) + support + helpers


def tests_digest(tests: tuple[str, ...]) -> str:
    files = _test_files(tests)
    return _digest(" ".join(tests).encode(), *(p.read_bytes() if p.exists() else b"" for p in files))


def mutant_key(m: Mutant, mutated: str, scope: str) -> str:
    return _digest(m.id.encode(), mutated.encode(), scope.encode())


def still_valid(entry: dict, target: Target) -> bool:
    """A cached result holds while its tests are unchanged; a kill also holds while the test that killed it
    (and the helpers) are unchanged, so a new test elsewhere reruns only the survivors."""
    if entry["tests"] == tests_digest(target.tests):
        return True
    return entry["status"] == "killed" and entry["killer"] == tests_digest((entry["detail"],))


def read(file: str, from_head: bool) -> str:
    """A file of the tree under test: the working tree's, or the last commit's."""
    if from_head:
        return subprocess.run(["git", "show", f"HEAD:{file}"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout
    return (ROOT / file).read_text(encoding="utf-8")


def scope_digest(from_head: bool) -> str:
    """The SQL every result depends on: the files in scope (TARGETS). Other SQL (a report's, a new migration
    that leaves the judged views alone) does not invalidate the cache; --fresh runs everything again."""
    return _digest(*(t.file.encode() + b"\0" + read(t.file, from_head).encode() for t in TARGETS))


class Workspace:
    """A private copy of src/assay and sql/ that a mutant's tests import (never the working tree)."""

    def __init__(self, base: Path, n: int, from_head: bool = False, project: Path = ROOT):
        self.root, self.project = base / f"w{n}", project
        if from_head:  # the committed code (others may be editing theirs) with the working tree's built C
            self.root.mkdir(parents=True)
            archive = subprocess.run(["git", "archive", "HEAD", "src/assay", "sql"], cwd=project,
                                     capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(self.root)], input=archive, check=True)
            for built in (project / "src" / "assay").rglob("*.so"):
                shutil.copy2(built, self.root / built.relative_to(project))
        else:
            shutil.copytree(project / "src" / "assay", self.root / "src" / "assay",
                            ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copytree(project / "sql", self.root / "sql")

    def run(self, target: Target, mutated: str | None, timeout: float, snapshots: Path | None = None,
            save: bool = False) -> tuple[str, str | None, float]:
        path = self.root / target.file
        original = path.read_text(encoding="utf-8")
        if mutated is not None:
            path.write_text(mutated, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(self.root / "src"), PYTHONHASHSEED="0")
        env.pop("ASSAY_MUTATION_SNAPSHOTS", None)
        env.pop("ASSAY_MUTATION_SNAPSHOTS_WRITE", None)
        if snapshots is not None and not target.file.startswith("sql/migrations/"):
            env["ASSAY_MUTATION_SNAPSHOTS"] = str(snapshots)  # see tests/sql/world.py: opened
            if save:
                env["ASSAY_MUTATION_SNAPSHOTS_WRITE"] = "1"
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-rfE", "--no-header",
               "-o", "addopts=", *target.tests]
        began = time.monotonic()
        try:
            done = subprocess.run(cmd, cwd=self.project, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "timeout", None, time.monotonic() - began
        finally:
            path.write_text(original, encoding="utf-8")
        seconds = time.monotonic() - began
        if done.returncode == 0:
            return "survived", None, seconds
        failed = re.search(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M)
        if done.returncode == 1 and failed:
            return "killed", failed.group(1), seconds
        return "error", (done.stdout + done.stderr)[-400:], seconds


def load_equivalent() -> list[dict]:
    if not EQUIVALENT.exists():
        return []
    entries = tomllib.loads(EQUIVALENT.read_text(encoding="utf-8")).get("equivalent", [])
    for e in entries:
        missing = {"file", "line", "change", "reason"} - set(e)
        if missing:
            raise SystemExit(f"{EQUIVALENT}: an entry lacks {', '.join(sorted(missing))}: {e}")
    return entries


def summarize(rows: list[dict]) -> dict:
    counts = {s: sum(1 for r in rows if r["status"] == s)
              for s in ("killed", "timeout", "survived", "equivalent", "error")}
    judged = len(rows) - counts["equivalent"]
    score = round((counts["killed"] + counts["timeout"]) / judged, 4) if judged else None
    return {"total": len(rows), **counts, "score": score}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", action="append", help="only this target file (repeatable)")
    ap.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    ap.add_argument("--jobs", type=int, default=2, help="test runs at once (default 2)")
    ap.add_argument("--fresh", action="store_true", help="ignore cached results")
    ap.add_argument("--from-head", action="store_true",
                    help="test the Python of the last commit (src/assay), not the working tree's")
    ap.add_argument("--output", type=Path, default=OUTPUT, help="results file (default docs/mutation-sql.json)")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    targets = [t for t in TARGETS if not args.file or t.file in args.file]
    unknown = sorted(set(args.file or ()) - {t.file for t in targets})
    if unknown:
        ap.error(f"not a target: {', '.join(unknown)} (targets: {', '.join(t.file for t in TARGETS)})")
    work = []
    for t in targets:
        source = read(t.file, args.from_head)
        work += [(t, m, m.apply(source)) for m in mutants(t.file, source, t.views)]
    if args.list:
        for t, m, _ in work:
            print(f"{m.file}:{m.line}:{m.col} {m.operator} {m.original!r} -> {m.replacement!r}")
        print(f"{len(work)} mutants in {len(targets)} files")
        return 0
    return run(targets, work, args)


def run(targets, work, args) -> int:
    began = time.monotonic()
    cache = {} if args.fresh or not CACHE.exists() else json.loads(CACHE.read_text(encoding="utf-8"))
    scope = scope_digest(args.from_head)
    keys = {m.id: mutant_key(m, mutated, scope) for t, m, mutated in work}
    todo = [(t, m, mutated) for t, m, mutated in work
            if keys[m.id] not in cache or not still_valid(cache[keys[m.id]], t)]
    print(f"{len(work)} mutants in {len(targets)} files, {len(work) - len(todo)} cached, {len(todo)} to run "
          f"({args.jobs} at once)", flush=True)
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="assay-mutate-sql-") as base:
        spaces = [Workspace(Path(base), n, args.from_head) for n in range(args.jobs)]
        snapshots = Path(base) / "snapshots"
        snapshots.mkdir()
        free, timeouts = list(spaces), {}

        def borrowed(job):
            with lock:
                space = free.pop()
            try:
                return job(space)
            finally:
                with lock:
                    free.append(space)

        def baseline(t):  # the unmutated tests must pass; their time sets the timeout
            status, detail, seconds = borrowed(lambda space: space.run(t, None, 900, snapshots, save=True))
            if status != "survived":
                raise SystemExit(f"mutate_sql: the tests of {t.file} fail without a mutant ({status}): {detail}")
            timeouts[t.tests] = max(60.0, 4 * seconds)
            print(f"  baseline {seconds:5.1f} s  {' '.join(t.tests)}", flush=True)

        firsts = list({t.tests: t for t, _, _ in todo}.values())
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(baseline, firsts))

        def one(item):
            t, m, mutated = item
            status, detail, seconds = borrowed(lambda space: space.run(t, mutated, timeouts[t.tests], snapshots))
            with lock:
                cache[keys[m.id]] = {"status": status, "detail": detail, "seconds": round(seconds, 2),
                                     "tests": tests_digest(t.tests),
                                     "killer": tests_digest((detail,)) if status == "killed" else None}
                CACHE.parent.mkdir(exist_ok=True)
                CACHE.write_text(json.dumps(cache, indent=0, sort_keys=True), encoding="utf-8")
                print(f"  {status:9} {m.file}:{m.line}:{m.col} {m.operator} {m.original!r} -> {m.replacement!r}"
                      f" ({seconds:.1f} s){'  ' + detail if status == 'killed' else ''}", flush=True)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            list(pool.map(one, todo))
    return report(work, keys, cache, args.output, time.monotonic() - began, targets)


def _dumps(result: dict) -> str:
    """JSON with one line per file and per mutant: a rerun's changes read as a diff."""
    files = ",\n".join(f"  {json.dumps(f)}: {json.dumps(s)}" for f, s in result["files"].items())
    mutants = ",\n".join(f"  {json.dumps(m, ensure_ascii=False)}" for m in result["mutants"])
    return (f'{{"tool": {json.dumps(result["tool"])}, "format": {result["format"]},\n'
            f' "score": {json.dumps(result["score"])},\n "files": {{\n{files}\n }},\n "mutants": [\n{mutants}\n ]}}\n')


def report(work, keys, cache, output: Path, wall: float, targets) -> int:
    equivalent = load_equivalent()
    used = set()
    rows = []
    for t, m, _ in work:
        result = cache[keys[m.id]]
        status, killed_by, reason = result["status"], None, None
        if status == "killed":
            killed_by = result["detail"]
        if status == "survived":
            for n, e in enumerate(equivalent):
                if (e["file"], e["line"], e["change"]) == (m.file, m.line, f"{m.original} -> {m.replacement}"):
                    status, reason = "equivalent", e["reason"]
                    used.add(n)
        row = {k: v for k, v in asdict(m).items() if k not in ("start", "end", "new")}
        rows.append({"id": m.id, **row, "status": status, "killed_by": killed_by, "reason": reason})
    files = {t.file: summarize([r for r in rows if r["file"] == t.file]) for t in targets}
    result = {"tool": "tools/mutate_sql.py", "format": 1, "score": summarize(rows), "files": files, "mutants": rows}
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(_dumps(result), encoding="utf-8")
    width = max(len(f) for f in files)
    print(f"\n{'file':{width}}  mutants  killed  timeout  survived  equivalent  error  score")
    for f, s in [*files.items(), ("all", result["score"])]:
        score = "-" if s["score"] is None else f"{100 * s['score']:.1f}%"
        print(f"{f:{width}}  {s['total']:7}  {s['killed']:6}  {s['timeout']:7}  {s['survived']:8}  "
              f"{s['equivalent']:10}  {s['error']:5}  {score}")
    for r in rows:
        if r["status"] in ("survived", "error"):
            print(f"{r['status'].upper()}: {r['file']}:{r['line']}:{r['col']} {r['operator']} "
                  f"{r['original']!r} -> {r['replacement']!r}")
    for n, e in enumerate(equivalent):
        if n not in used and any(e["file"] == t.file for t in targets):
            print(f"stale equivalence entry (matches no surviving mutant): {e['file']}:{e['line']} {e['change']}")
    print(f"results: {output.relative_to(ROOT) if output.is_relative_to(ROOT) else output}; {wall:.0f} s wall")
    return 0


if __name__ == "__main__":
    sys.exit(main())
