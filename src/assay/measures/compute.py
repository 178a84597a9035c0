"""Per-question values from the measure SQL, then means with intervals over every slice."""

from __future__ import annotations

from dataclasses import dataclass

from assay.measures import memo
from assay.measures.registry import DEFAULT_MEASURES, Measure
from assay.measures.stats import intervals

SLICE_FIELDS = ("category", "form", "hard_class")


@dataclass(frozen=True)
class MetricRow:
    metric: str
    level: str
    slice: str
    value: float
    n: int
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def per_query(warehouse, run_id: str, measure: Measure, stage: str = "final") -> dict[tuple[str, str], float]:
    """{(query_id, level): value} for every question the measure covers. The measure's file is run with
    exactly the parameters it uses; a value outside [0, 1] (or NULL) is a ConfigError naming the file."""
    fam = measure.family
    if measure.uses_budget and fam.levels not in (("answer",), ("query",)):
        require_tokens(warehouse, run_id, measure)
    # parsed on the warehouse's own connection where it holds one: no second database opened just to parse
    con = getattr(warehouse, "con", None)
    parser = con if hasattr(con, "extract_statements") else None
    if fam.user:
        rows = _user_rows(warehouse, measure, measure.params(run_id, stage, parser))
    else:
        _, rows = warehouse.query(measure.sql, **measure.params(run_id, stage, parser))
    if fam.levels == ("answer",):
        # answer measures may count citations or claims: a row's unit is 'query_id|...', its question the prefix
        values = {((r[3] if len(r) > 3 else r[0]), "answer"): r[2] for r in rows}
    elif fam.levels == ("query",):
        want_answerable = fam.answerable_only
        values = {(qid, "query"): v for qid, answerable, v in rows if bool(answerable) == want_answerable}
    else:
        values = {(qid, level): v for qid, level, v in rows}
    for (qid, level), value in values.items():
        if value is None or not -1e-9 <= float(value) <= 1 + 1e-9:  # the tolerance metrics.stats allows
            from assay.core.errors import ConfigError
            from assay.core.sqlfiles import sql_path

            raise ConfigError(f"{sql_path(measure.sql)}: {measure.name} gave {value} for question {qid!r} "
                              f"({level} level); a measure's values lie in [0, 1]")
    return {key: float(value) for key, value in values.items()}


def _user_rows(warehouse, measure: Measure, params: dict) -> list[tuple]:
    """A user's measure (``[measures] dir``, found in any assay.toml up the tree) runs sandboxed as `assay sql` runs
    a query (assay.store.sqlshell.sandboxed_select); a failure is one line naming its file."""
    from contextlib import nullcontext

    con = getattr(warehouse, "con", None)
    if hasattr(con, "extract_statements"):
        held = nullcontext(warehouse)
    elif hasattr(warehouse, "reading"):  # a brief warehouse outside a transaction: one short read-only open
        held = warehouse.reading()
    else:  # Spark: its own engine, no DuckDB to sandbox in (docs/security.md says so)
        return warehouse.query(measure.sql, **params)[1]
    with held as reader:
        return sandboxed(reader.con, measure, params)


def sandboxed(con, measure: Measure, params: dict, fetch=None):
    """A user's measure SQL run on a DuckDB connection under `assay sql`'s sandbox (``fetch``: see
    assay.store.sqlshell.sandboxed_select); a refusal or failure is a ConfigError naming its file, one line."""
    from assay.core.errors import AssayError, ConfigError
    from assay.core.sqlfiles import load_sql, sql_path
    from assay.store.sqlshell import sandboxed_select

    try:
        return sandboxed_select(con, load_sql(measure.sql), params, fetch)
    except AssayError as exc:
        raise ConfigError(f"{sql_path(measure.sql)}: measure {measure.name}: {exc}; fix its SQL") from None


def require_tokens(warehouse, run_id: str, measure: Measure) -> None:
    """Span and budgeted measures count tokens: a run recorded without them cannot be scored silently as 0."""
    row = warehouse.con.execute("SELECT tokenizer_id FROM runs WHERE run_id = ?", [run_id]).fetchall()
    if row and row[0][0] is None:
        from assay.core.errors import ConfigError

        raise ConfigError(f"run {run_id} has no token counts, so {measure.name} cannot be computed; open the "
                          "warehouse once with a writing command (e.g. `assay ingest`) to add them")


def question_labels(warehouse, run_id: str) -> dict[str, dict]:
    cur = warehouse.con.execute(
        "SELECT query_id, category, form, hard_class FROM eval_questions WHERE run_id = ? ORDER BY query_id",
        [run_id],
    )
    return {qid: {"category": c, "form": f, "hard_class": h} for qid, c, f, h in cur.fetchall()}


def question_of(unit: str, questions) -> str:
    """The question a unit belongs to: the unit itself when it is a question's id (which may hold '|'), else
    the longest of its '|'-separated prefixes that is one (a citation's unit is 'query_id|claim|cite')."""
    if unit in questions:
        return unit
    parts = unit.split("|")
    for end in range(len(parts) - 1, 0, -1):
        prefix = "|".join(parts[:end])
        if prefix in questions:
            return prefix
    raise KeyError(f"{unit!r} is no unit of a question of this run")


def has_answers(warehouse, run_id: str) -> bool:
    """Whether the run's answer stage wrote answers. Answer measures score them (and the citations, claims and
    verdicts written with them), so without any they have no values: one lookup instead of a query each."""
    return bool(warehouse.con.execute("SELECT COUNT(*) FROM answers WHERE run_id = ?", [run_id]).fetchall()[0][0])


def stored_values(warehouse, run_id: str, stage: str = "final") -> dict[str, dict[tuple[str, str], float]]:
    """{measure name: {(unit, level): value}} as ``measure_values`` holds them for the run at ``stage``: what
    ``per_query`` gave when they were stored (the default measures are stored with every run), in one query."""
    by_measure: dict[str, dict[tuple[str, str], float]] = {}
    for measure, unit, level, value in warehouse.con.execute(
            "SELECT measure, unit, level, value FROM measure_values WHERE run_id = ? AND stage = ?",
            [run_id, stage]).fetchall():
        by_measure.setdefault(measure, {})[(unit, level)] = value
    return by_measure


def values_of(warehouse, run_id: str, measure: Measure, level: str, stage: str = "final") -> list[float]:
    """One measure's values at ``level`` over every question it covers, in unit order, read as ``evaluate`` reads
    them (stored where ``measure_values`` holds them, from the measure's SQL otherwise)."""
    values = stored_values(warehouse, run_id, stage).get(measure.name) or per_query(warehouse, run_id, measure, stage)
    return [v for (_, lvl), v in sorted(values.items()) if lvl == level]


def evaluate(warehouse, run_id: str, measures=DEFAULT_MEASURES, stage: str = "final",
             seed: int = 0, samples: int = 1000, remember: bool = False) -> list[MetricRow]:
    """Metric rows of every measure, level and slice. Values stored in ``measure_values`` are read, not computed
    again (a report reads one table instead of running each measure's SQL); the rest come from ``per_query``.
    Intervals the interval memo holds (``assay.measures.memo``) are read too; ``remember``: the ones computed are
    stored in it (inside the caller's transaction)."""
    return summarise(warehouse, slice_values(warehouse, run_id, measures, stage), seed, samples, remember)


def slice_values(warehouse, run_id: str, measures=DEFAULT_MEASURES, stage: str = "final") -> list[tuple]:
    """Per measure, level and slice (``all`` first): ``(measure, level, slice, values, same)``, the per-question
    values in question order; ``same`` is the index of the ``all`` group when the slice holds every question
    (the same sample), else None. Stored values are read, the rest computed (``evaluate``)."""
    labels = question_labels(warehouse, run_id)
    stored = stored_values(warehouse, run_id, stage)
    answered = None  # whether the run has answers, asked once an answer measure is not stored
    groups = []
    for measure in measures:
        values = stored.get(measure.name)
        if not values and measure.family.levels == ("answer",):
            answered = has_answers(warehouse, run_id) if answered is None else answered
            values = per_query(warehouse, run_id, measure, stage) if answered else {}
        elif not values:
            values = per_query(warehouse, run_id, measure, stage)
        for level in measure.levels:
            by_query = {qid: v for (qid, lvl), v in values.items() if lvl == level}
            slices = {"all": sorted(by_query)}
            for field in SLICE_FIELDS:
                for qid in sorted(by_query):
                    slices.setdefault(f"{field}={labels[question_of(qid, labels)][field]}", []).append(qid)
            every = len(groups)
            for name in sorted(slices, key=lambda s: (s != "all", s)):
                if slices[name]:
                    same = every if name != "all" and slices[name] == slices["all"] else None
                    groups.append((measure, level, name, [by_query[q] for q in slices[name]], same))
    return groups


def summarise(warehouse, groups: list[tuple], seed: int = 0, samples: int = 1000,
              remember: bool = False) -> list[MetricRow]:
    """The metric row (mean, n, 95% interval) of each group of ``slice_values``, in its order."""
    # the intervals of one kind together: bootstraps of one size share their resampling weights (a slice
    # holding every question repeats the "all" row instead)
    bounds: dict[int, tuple] = {}
    keys = {i: memo.memo_key(g[3], g[0].family.interval, seed, samples) for i, g in enumerate(groups) if g[4] is None}
    known = memo.recall(warehouse, keys.values())
    computed: dict[str, tuple] = {}
    for kind in sorted({g[0].family.interval for g in groups}):
        todo = [i for i, g in enumerate(groups) if g[0].family.interval == kind and g[4] is None]
        bounds.update((i, known[keys[i]]) for i in todo if keys[i] in known)
        todo = [i for i in todo if keys[i] not in known]
        if todo:  # (a bootstrap imports numpy even for nothing)
            bounds.update(zip(todo, intervals([groups[i][3] for i in todo], kind, [seed] * len(todo), samples)))
            computed.update((keys[i], bounds[i]) for i in todo)
    if remember and computed:
        memo.remember(warehouse, computed)
    rows: list[MetricRow] = []
    for i, (measure, level, name, vals, same) in enumerate(groups):
        low, high = bounds[i if same is None else same]
        rows.append(MetricRow(measure.name, level, name, sum(vals) / len(vals), len(vals), low, high))
    return rows
