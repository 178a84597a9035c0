"""Per-question values stored in the warehouse (`measure_values`), so BI tools and history read them as rows.

The values are computed by the measure SQL itself (``compute.per_query``) on the connection of the caller's
transaction: what is stored equals what `assay report` computes, value for value. Each row's ``unit`` is what
one value is about: the question id, or ``query_id|claim|cite`` for citation and claim measures.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

from assay.measures.compute import per_query, question_labels, question_of
from assay.measures.registry import DEFAULT_MEASURES, Measure

COLUMNS = ["run_id", "stage", "level", "query_id", "measure", "family", "cutoff", "budget", "unit", "value"]
CATALOG_COLUMNS = ["measure", "family", "cutoff", "budget", "interval_kind", "unit_kind", "definition"]
RANKING_LEVELS = ("chunk", "doc")  # the levels whose values depend on the stage scored


@dataclass(frozen=True)
class Stored:
    """What ``store_values`` did for one run: values written per measure, and measures it left alone and why."""

    run_id: str
    written: dict  # {measure name: number of values written}
    skipped: dict  # {measure name: why nothing was computed}
    kept: int = 0  # values computed that were stored already

    @property
    def total(self) -> int:
        return sum(self.written.values())


def run_status(warehouse, run_id: str) -> str | None:
    row = warehouse.con.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchall()
    return row[0][0] if row else None


def store_values(warehouse, run_id: str, measures=DEFAULT_MEASURES, stage: str = "final") -> Stored:
    """Compute ``measures`` for ``run_id`` at ``stage`` and insert every value not stored yet.

    Runs inside the caller's transaction (``warehouse.con`` is its connection). A run that is not complete
    (failed, blocked) has no metrics: nothing is stored. Question and answer measures score the final
    answer, not a stage's list, so they are stored only for ``stage="final"``.
    """
    written, skipped = {}, {}
    status = run_status(warehouse, run_id)
    if status != "complete":
        reason = f"run status is {status}" if status else "no such run"
        return Stored(run_id, {}, {m.name: reason for m in measures})
    stored = _stored_units(warehouse, run_id, stage)
    rows, catalog, kept = [], {}, 0
    unique = list({m.name: m for m in measures}.values())
    with run_views(warehouse, run_id, stage):
        values_of = {m.name: _values(warehouse, run_id, m, stage, skipped) for m in unique}
    questions = None  # the run's question ids, read for the first measure whose units are not questions
    for measure in unique:
        values = values_of[measure.name]
        if values is None:
            continue
        per_question = measure.family.unit == "question"
        if not per_question and questions is None:
            questions = set(question_labels(warehouse, run_id))
        new = [(run_id, stage, level, unit if per_question else question_of(unit, questions), measure.name,
                measure.family.name, measure.cutoff, measure.budget, unit, value)
               for (unit, level), value in sorted(values.items())
               if level in measure.levels and (level, measure.name, unit) not in stored]
        rows += new
        written[measure.name] = len(new)
        kept += sum(level in measure.levels for _, level in values) - len(new)
        catalog[measure.name] = _catalog_row(measure)
    # one row per (run, stage, level, measure, unit): no index checks it since migration 014, the filter above does
    warehouse._insert("measure_values", COLUMNS, rows)
    _write_catalog(warehouse, list(catalog.values()))
    return Stored(run_id, written, skipped, kept)


def _values(warehouse, run_id: str, measure: Measure, stage: str, skipped: dict) -> dict | None:
    if stage != "final" and not set(measure.levels) <= set(RANKING_LEVELS):
        skipped[measure.name] = f"scores the final answer, not the {stage} stage"
        return None
    return per_query(warehouse, run_id, measure, stage)


# The views the measures of one run read, with whether they have a stage column. Each measure reads them only for
# its $run_id (and $stage), and each would compute them again from the hits: ``run_views`` computes them once.
RUN_VIEWS = (("judged_ranking", True), ("budget_hits", True), ("gold_units", False), ("ideal_gains", False),
             ("unit_counts", False), ("eval_questions", False))


@contextmanager
def run_views(warehouse, run_id: str, stage: str):
    """While inside, each of ``RUN_VIEWS`` is a temporary table of the view's rows for ``run_id`` (and ``stage``)
    under the view's name, which DuckDB resolves before the view's: a measure of this run reads the same rows,
    computed once for all measures instead of once each (on SciFact, 0.72 -> 0.47 s of CPU for the 19 default
    measures). Dropped on the way out; inside a transaction an error's rollback drops them."""
    con = warehouse.con
    try:
        for view, staged in RUN_VIEWS:
            where, params = ("run_id = ? AND stage = ?", [run_id, stage]) if staged else ("run_id = ?", [run_id])
            con.execute(f"CREATE TEMPORARY TABLE {view} AS SELECT * FROM main.{view} WHERE {where}", params)
        yield
    finally:
        for view, _ in RUN_VIEWS:
            try:
                con.execute(f"DROP TABLE IF EXISTS temp.main.{view}")
            except Exception:  # an aborted transaction refuses even this; its rollback drops them
                pass


def _stored_units(warehouse, run_id: str, stage: str) -> set:
    return set(warehouse.con.execute(
        "SELECT level, measure, unit FROM measure_values WHERE run_id = ? AND stage = ?", [run_id, stage]).fetchall())


def _catalog_row(measure: Measure) -> tuple:
    fam = measure.family
    return (measure.name, fam.name, measure.cutoff, measure.budget, fam.interval, fam.unit, fam.definition)


def _write_catalog(warehouse, rows: list[tuple]) -> None:
    """Record what each stored measure is (the registry's entry); an entry the registry has changed since is
    updated (never deleted and inserted again: DuckDB refuses that for a key within one transaction)."""
    known = {r[0]: tuple(r) for r in warehouse.con.execute(
        f"SELECT {', '.join(CATALOG_COLUMNS)} FROM measure_catalog").fetchall()}
    warehouse._insert("measure_catalog", CATALOG_COLUMNS, [r for r in rows if r[0] not in known])
    for row in rows:
        if row[0] in known and known[row[0]] != row:
            sets = ", ".join(f"{c} = ?" for c in CATALOG_COLUMNS[1:])
            warehouse.con.execute(f"UPDATE measure_catalog SET {sets} WHERE measure = ?", [*row[1:], row[0]])


def stored_values(warehouse, run_id: str, measure: Measure, stage: str = "final") -> dict[tuple[str, str], float]:
    """{(unit, level): value} as stored: the shape ``per_query`` returns."""
    rows = warehouse.con.execute(
        "SELECT unit, level, value FROM measure_values WHERE run_id = ? AND stage = ? AND measure = ?",
        [run_id, stage, measure.name]).fetchall()
    return {(unit, level): value for unit, level, value in rows}


def complete_runs(warehouse) -> list[str]:
    """Every complete run, oldest first: what `assay measures compute --all-runs` visits."""
    return [r for r, in warehouse.con.execute(
        "SELECT run_id FROM complete_runs ORDER BY started_at, run_id").fetchall()]


def compute(warehouse, run_refs=(), all_runs: bool = False, measures=DEFAULT_MEASURES, stage: str = "final",
            on_run=None) -> list[Stored]:
    """`assay measures compute`: store the values of ``measures`` for the runs named (ids, prefixes,
    ``latest``) or every complete run, one transaction per run, keeping what is stored already.
    ``on_run(Stored)`` is called after each run's commit."""
    if all_runs:
        run_ids = complete_runs(warehouse)
    else:
        run_ids = list(dict.fromkeys(warehouse.resolve_run_id(ref) for ref in run_refs))
    done = []
    for run_id in run_ids:
        with warehouse.transaction():
            result = store_values(warehouse, run_id, measures, stage)
        done.append(result)
        if on_run is not None:
            on_run(result)
    return done


def score_run(warehouse, run_id: str) -> None:
    """A run scored as it is stored: the default measures' per-question values (``store_values``) and the
    intervals its report shows (``remember_intervals``), inside the caller's transaction, after its rows are
    written. The runner composes this with the warehouse's write (assay.runs.sinks.store_run)."""
    store_values(warehouse, run_id)
    remember_intervals(warehouse, run_id)


def remember_intervals(warehouse, run_id: str) -> None:
    """The intervals a report of the run shows (the default measures, seeded as the run is, read from its row),
    computed now and kept in the interval memo, so the report reads them (assay.measures.memo). Inside the
    caller's transaction, after the run's row is written."""
    import json

    from assay.measures.compute import evaluate
    from assay.store.warehouse import MEMO_MIGRATION

    if warehouse.schema_version() < MEMO_MIGRATION:  # (a connection of an older schema's code has no memo)
        return
    seed, config = warehouse.con.execute("SELECT seed, config FROM runs WHERE run_id = ?", [run_id]).fetchall()[0]
    evaluate(warehouse, run_id, seed=seed, samples=json.loads(config).get("bootstrap_samples", 1000), remember=True)
