"""`assay sweep`: a grid of chunkers x sizes x overlaps x pipelines, one run per point, read fairly.

Every point is a full run of the same questions over the same corpus, tagged with one
sweep id and written as it finishes (its run and its row of the sweep in one transaction), so a
sweep that is interrupted, or whose later point fails, keeps every point that finished as a
complete run, and its report says which points ran. A grid of more than ``max_points`` points
(default 100) runs only when confirmed. Embeddings are reused across points through the
warehouse's vector cache, keyed by chunk text.

The table reads measures that charge a result for its size, so chunk sizes compare:
text recall within a context budget (SpanRecall@Ntok) and budgeted Success, text precision
and IoU over what the top k results return (SpanPrecision@k, SpanIoU@k: a larger chunk brings
more text that is not gold), and document-level Success@k (the unit is the same for every
point). A point whose results hold fewer tokens than the budget for some question did not
fill it (assay.measures.fill): its row says so and the table names it below.
The best point is the one with the highest selection measure (default
SpanRecall@<budget>tok; ties go to fewer context tokens, then grid order). Every other
point is compared with it by the one paired inference `assay compare` and `assay regress`
use (assay.verdicts.inference): its change (point - best) over the same questions, the
``1 - alpha`` interval and the p-value of one paired score test (McNemar's for 0/1
values), so the interval excludes 0 exactly when p < alpha. The p-values are
Holm-adjusted across the other points: a point whose adjusted p-value is at least alpha
is statistically indistinguishable from the best.
The Pareto front is over (mean tokens the top k results occupy, SpanRecall@k): a point
is on it when no other point reaches at least its recall with at most its tokens,
strictly better in one of the two.
"""

from __future__ import annotations

import json

from assay.core import jsonout
import secrets
from dataclasses import dataclass, replace
from datetime import datetime, timezone

from assay.core.errors import ConfigError
from assay.measures import fill

DEFAULTS = {"chunkers": ["recursive"], "sizes": [200, 400, 800, 1600], "overlaps": [0], "pipelines": ["bm25"],
            "budget": 1000, "k": 5, "select": None, "alpha": 0.05}
KEYS = tuple(DEFAULTS)
SIZELESS = ("document",)  # chunkers without a size or an overlap: one point per pipeline
MAX_POINTS = 100  # points a sweep runs without asking: each is a full run of every question


@dataclass(frozen=True)
class Point:
    chunker: str
    size: int | None
    overlap: int | None
    pipeline: str

    def label(self) -> str:
        if self.size is None:
            return self.chunker
        return f"{self.chunker} {self.size}/{self.overlap}"


def spec_from(config: dict, cli: dict) -> dict:
    """The sweep's settings: CLI values over the [sweep] table of assay.toml over the defaults."""
    table = config.get("sweep", {})
    where = config.get("_path", "assay.toml")
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: sweep must be a table ([sweep]), not {type(table).__name__}")
    unknown = set(table) - set(KEYS) - {"max_points"}
    if unknown:
        raise ConfigError(f"{where}: [sweep] has unknown setting(s) {', '.join(sorted(unknown))}; "
                          f"allowed: {', '.join(KEYS + ('max_points',))}")
    spec = dict(DEFAULTS)
    spec.update({k: v for k, v in table.items() if k != "max_points"})  # how many may run is not the sweep's spec
    spec.update({k: v for k, v in cli.items() if v not in (None, (), [])})
    for key in ("chunkers", "sizes", "overlaps", "pipelines"):
        spec[key] = list(spec[key]) if isinstance(spec[key], (list, tuple)) else [spec[key]]
        if not spec[key]:
            raise ConfigError(f"sweep: {key} is empty; give at least one value")
    for key in ("chunkers", "pipelines"):
        if not all(isinstance(v, str) and v for v in spec[key]):
            raise ConfigError(f"sweep: {key} must be names, got {spec[key]!r}")
    for key in ("sizes", "overlaps"):
        if not all(_whole(v) and v >= 0 for v in spec[key]):
            raise ConfigError(f"sweep: {key} must be whole numbers of characters, got {spec[key]}")
    if not _whole(spec["budget"]) or spec["budget"] < 1:
        raise ConfigError(f"sweep: budget must be a positive number of tokens, got {spec['budget']!r}")
    if not _whole(spec["k"]) or spec["k"] < 1:
        raise ConfigError(f"sweep: k must be at least 1, got {spec['k']!r}")
    alpha = spec["alpha"]
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ConfigError(f"sweep: alpha must be a number between 0 and 1, got {alpha!r}")
    if spec["select"] is not None and not isinstance(spec["select"], str):
        raise ConfigError(f"sweep: select must be a measure name such as SpanRecall@1000tok, got {spec['select']!r}")
    spec["select"] = spec["select"] or f"SpanRecall@{spec['budget']}tok"
    from assay.measures.registry import parse_measure

    select = parse_measure(spec["select"])
    if "chunk" not in select.levels:
        raise ConfigError(f"sweep: --select {select.name} has no chunk level; choose a chunk-level measure")
    spec["select"] = select.name  # stored and shown by its canonical name, however it was typed
    grid(spec)  # refuse a grid that cannot run before anything opens the warehouse
    return spec


def max_points_from(config: dict, cli: int | None) -> int:
    """How many points the sweep runs without asking: --max-points, else [sweep] max_points, else MAX_POINTS."""
    if cli is not None:
        return cli
    table = config.get("sweep", {})
    value = table.get("max_points", MAX_POINTS) if isinstance(table, dict) else MAX_POINTS
    from assay.core.limits import SWEEP_POINTS

    problem = SWEEP_POINTS.problem(value)
    if problem:
        raise ConfigError(f"{config.get('_path', 'assay.toml')}: [sweep] max_points {problem}")
    return value


def check_size(n_points: int, max_points: int, confirm=None) -> None:
    """Refuse a grid of more than ``max_points`` points unless ``confirm(n_points, max_points)`` says yes (the CLI
    asks on a terminal; without one, as in CI, nothing can say yes): a usage error, before anything runs."""
    if n_points <= max_points or (confirm is not None and confirm(n_points, max_points)):
        return
    from assay.core.errors import UsageError

    raise UsageError(f"sweep: the grid has {n_points} points, more than --max-points {max_points} ([sweep] "
                     f"max_points), and each point is a full run of every question; nothing was run: narrow the "
                     f"grid, or give --max-points {n_points} to run them all")


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -2**31 <= value < 2**31


def grid(spec: dict) -> tuple[list[Point], list[str]]:
    """The points in grid order, and a note for every combination that cannot run (overlap >= size)."""
    from assay.inputs.chunking import chunker_names

    points, notes = [], []
    for chunker in spec["chunkers"]:
        if chunker not in chunker_names():
            raise ConfigError(f"sweep: unknown chunker {chunker!r}; choose from {', '.join(chunker_names())}")
        for pipeline in spec["pipelines"]:
            if chunker in SIZELESS:
                points.append(Point(chunker, None, None, pipeline))
                continue
            for size in spec["sizes"]:
                for overlap in spec["overlaps"]:
                    if not 0 <= overlap < size:
                        notes.append(f"skipped {chunker} size {size} overlap {overlap}: "
                                     "the overlap must be smaller than the size")
                        continue
                    points.append(Point(chunker, size, overlap, pipeline))
    if not points:
        raise ConfigError("sweep: the grid has no point that can run")
    return points, notes


def run_sweep(warehouse, corpus_dir, judgments_path, spec: dict, options, progress=None,
              max_points: int = MAX_POINTS, confirm=None) -> str:
    """Run every point, writing each as it finishes (its run and its row of the sweep, one transaction; the sweep's
    own row with the first). Returns the sweep id. A grid larger than ``max_points`` runs only when ``confirm``
    says yes (``check_size``). A point that fails stops the sweep: nothing of it is written, the points before
    it stay stored, and the sweep's report says which ran."""
    from assay.runs.runner import execute_run
    from assay.store.warehouse import JOURNAL

    from assay.core import progress as shown

    say = progress or (lambda msg: None)
    points, notes = grid(spec)
    check_size(len(points), max_points, confirm)
    _require_extras(points, options)
    warehouse.check_writable()  # before the first point, not at its write (assay.store.warehouse.check_writable)
    for note in notes:
        say(f"note: {note}")
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    sweep_id = f"sweep-{now:%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"
    JOURNAL.sweep = {"sweep_id": sweep_id, "total": len(points), "runs": set()}  # what an interrupt line counts
    inputs = None
    with shown.task("sweep points", total=len(points), unit="points") as task:
        for i, p in enumerate(points, 1):
            say(f"-- point {i}/{len(points)}: {p.label()}, pipeline {p.pipeline}")
            opts = replace(options, pipeline=p.pipeline, chunker=p.chunker, chunk_size=p.size, overlap=p.overlap)
            try:
                record = execute_run(corpus_dir, judgments_path, opts, say, warehouse=warehouse)
                record.sweep_id = sweep_id
                read = (record.corpus.corpus_hash, record.judgments.sha256)
                if inputs is not None and read != inputs:  # cannot happen with one corpus and one judgments file
                    raise ConfigError("sweep: the points did not all read the same corpus and judgments")
                JOURNAL.sweep["runs"].add(record.run_id)
                _store_point(warehouse, sweep_id, now, spec, notes, i, p, record, first=inputs is None)
            except Exception:
                if i > 1:
                    say(f"note: sweep {sweep_id} stopped at point {i} of {len(points)} ({p.label()}, pipeline "
                        f"{p.pipeline}); points 1 to {i - 1} are stored as complete runs: `assay report --sweep "
                        f"{sweep_id}` shows them")
                raise
            inputs = read
            task.advance()
    return sweep_id


def _store_point(warehouse, sweep_id, created, spec, notes, i, point, record, first: bool) -> None:
    """One finished point: its run, its measure values and its row of the sweep (with the sweep's own row when it
    is the first), in one transaction; then the BI snapshot (assay.store.snapshot.refresh)."""
    from assay.core.hashing import canonical_json
    from assay.runs.sinks import store_run_rows

    from assay.store.snapshot import refresh

    with warehouse.transaction():
        store_run_rows(warehouse, record)
        if first:
            warehouse.con.execute("INSERT INTO sweeps VALUES (?, ?, ?, ?, ?)",
                                  [sweep_id, created, canonical_json({**spec, "skipped": notes}),
                                   record.corpus.corpus_hash, record.judgments.sha256])
        warehouse.con.execute("INSERT INTO sweep_points VALUES (?, ?, ?, ?, ?, ?, ?)",
                              [sweep_id, i, record.run_id, point.chunker, point.size, point.overlap, point.pipeline])
    refresh(warehouse)  # each point, as it is stored: a dashboard follows a long sweep


def _require_extras(points, options) -> None:
    """Stop before the first point when any point's pipeline needs an extra that is not installed, or an embedding
    model that is not available (points are stored as they finish: a later point must not find it missing)."""
    from assay.inputs.project import load_config
    from assay.retrieval.pipelines import resolve_pipeline
    from assay.runs.runner import require_extras

    config = load_config(options.config_path)
    for name in dict.fromkeys(p.pipeline for p in points):
        pipeline = resolve_pipeline(name, config, replace(options, pipeline=name).overrides())
        require_extras(pipeline)
        if pipeline.settings["dense"]:
            from assay.retrieval.embedding.embedder import resolve_model

            resolve_model(pipeline.settings["embedder"])


def resolve_sweep_id(warehouse, ref: str | None) -> str:
    from assay.core.errors import AmbiguousRunId, RunNotFound

    if ref in (None, "", "latest"):
        rows = warehouse.con.execute("SELECT sweep_id FROM sweeps ORDER BY created_at DESC, sweep_id DESC "
                                     "LIMIT 1").fetchall()
        if not rows:
            raise RunNotFound(f"warehouse {warehouse.path} has no sweeps yet; start one with `assay sweep`")
        return rows[0][0]
    rows = warehouse.con.execute("SELECT sweep_id FROM sweeps WHERE substr(sweep_id, 1, length(?)) = ? "
                                 "ORDER BY sweep_id", [ref, ref]).fetchall()
    exact = [r for r in rows if r[0] == ref]
    if exact or len(rows) == 1:
        return (exact or rows)[0][0]
    if rows:
        raise AmbiguousRunId(ref, [sweep_id for (sweep_id,) in rows], what="sweep", part="prefix")
    raise RunNotFound(f"no sweep {ref!r} in {warehouse.path}; `assay sql \"SELECT * FROM sweeps\"` lists them")


def table(warehouse, sweep_id: str) -> dict:
    """The sweep's comparison, computed again from its stored runs (any later measure change applies).

    Every point's per-question values (``measure_values`` where stored, the measure SQL otherwise) are read with
    plain SQL on a DuckDB warehouse (assay.analytics.direct), as one Ibis expression on any other source
    (assay.analytics.sweeps); means, intervals (each point's seed) and paired tests are computed here from those
    values, in question order, as `assay report` computes them."""
    from assay.analytics.direct import holds_duckdb, run_values
    from assay.measures.compute import MetricRow
    from assay.measures.registry import parse_measure
    from assay.measures.stats import interval
    from assay.verdicts.units import describe

    spec = json.loads(warehouse.con.execute("SELECT spec FROM sweeps WHERE sweep_id = ?", [sweep_id]).fetchall()[0][0])
    points = warehouse.con.execute(
        "SELECT p.point, p.run_id, p.chunker, p.chunk_size, p.overlap, p.pipeline, r.seed FROM sweep_points p "
        "JOIN runs r ON r.run_id = p.run_id WHERE p.sweep_id = ? ORDER BY p.point", [sweep_id]).fetchall()
    budget, k = spec["budget"], spec["k"]
    columns = [(f"SpanRecall@{budget}tok", "chunk"), (f"Success@{budget}tok", "chunk"),
               (f"SpanPrecision@{k}", "chunk"), (f"SpanIoU@{k}", "chunk"), (f"Success@{k}", "doc")]
    select = parse_measure(spec["select"])
    recall_k = parse_measure(f"SpanRecall@{k}")
    measures = list(dict.fromkeys([parse_measure(m) for m, _ in columns] + [select, recall_k]))
    by_point: dict[tuple, list] = {}
    if holds_duckdb(warehouse):  # Ibis (an extra) only where no DuckDB connection is at hand
        by_run = run_values(warehouse, [p[1] for p in points], measures)
        for point, run_id, *_ in points:
            for (run, name, level), vals in by_run.items():
                if run == run_id:
                    by_point[(point, name, level)] = vals
    else:
        from assay.analytics import opened
        from assay.analytics.sweeps import point_values

        with opened(warehouse) as (wh, con):
            fetched = con.to_pyarrow(point_values(wh, con, sweep_id, measures, [p[1] for p in points])).to_pylist()
        for v in fetched:
            by_point.setdefault((v["point"], v["measure"], v["level"]), []).append((v["unit"], v["value"]))
    rows, per_point = [], {}
    for point, run_id, chunker, size, overlap, pipeline, seed in points:
        metrics = {}
        for measure in measures:
            for level in measure.levels:
                vals = [v for _, v in sorted(by_point.get((point, measure.name, level), []))]
                if vals:
                    low, high = interval(vals, measure.family.interval, seed=seed)
                    metrics[(measure.name, level)] = MetricRow(measure.name, level, "all", sum(vals) / len(vals),
                                                               len(vals), low, high)
        unit = describe(warehouse, run_id)
        tokens_k = _context_tokens(warehouse, run_id, k)
        per_point[point] = dict(by_point.get((point, select.name, "chunk"), []))
        rows.append({
            "point": point, "run_id": run_id, "chunker": chunker, "size": size, "overlap": overlap,
            "pipeline": pipeline, "label": Point(chunker, size, overlap, pipeline).label(),
            "n_chunks": _n_chunks(warehouse, run_id), "tokens_per_result": unit["mean_tokens"],
            "measures": {f"{m}:{lvl}" if lvl == "doc" else m: _cell(metrics[(m, lvl)]) for m, lvl in columns},
            "select": _cell(metrics[(select.name, "chunk")]),
            f"SpanRecall@{k}": metrics[(recall_k.name, "chunk")].value, f"tokens@{k}": tokens_k,
            **fill.fill(fill.available(warehouse, run_id), budget),
        })
    best = max(rows, key=lambda r: (r["select"]["value"], -r[f"tokens@{k}"], -r["point"]))
    others = [r for r in rows if r is not best]
    qids = sorted(per_point[best["point"]])
    _against_best(best, others, per_point, qids, spec["alpha"])
    _detectable(others, per_point, best["point"], qids, spec["alpha"])
    for r in rows:
        r["pareto"] = not any(_dominates(o, r, k) for o in rows if o is not r)
    result = {"sweep_id": sweep_id, "spec": spec, "select": select.name, "n_questions": len(qids),
              "columns": [f"{m}:{lvl}" if lvl == "doc" else m for m, lvl in columns], "points": rows,
              "best": best["point"]}
    planned = len(grid(spec)[0])
    if len(rows) < planned:  # interrupted, or a later point failed: the points run in grid order, these first
        result["stopped"] = {"ran": len(rows), "planned": planned}
    return result


def _detectable(others: list[dict], per_point: dict, best: int, qids: list, alpha: float) -> None:
    """Each point's minimum detectable change against the best (``mdc``, ``mdc_reason``; assay.verdicts.power):
    paired over the questions, two-sided at ``alpha`` before the correction."""
    from assay.verdicts.power import paired_mdc

    for r in others:
        found = paired_mdc([per_point[best][q] for q in qids], [per_point[r["point"]][q] for q in qids], alpha)
        r["mdc"], r["mdc_reason"] = found["mdc"], found["reason"]


def _against_best(best: dict, others: list[dict], per_point: dict, qids: list, alpha: float) -> None:
    """Each other point's change on the selection measure against the best point (point - best), with the
    ``1 - alpha`` interval and p-value of one paired inference (assay.verdicts.inference; the interval excludes 0
    exactly when p < alpha), the p-values Holm-adjusted across the other points; the verdict reads Holm's p."""
    from assay.verdicts.family import correct
    from assay.verdicts.inference import infer

    results = [infer([per_point[best["point"]][q] for q in qids], [per_point[r["point"]][q] for q in qids],
                     alpha=alpha) for r in others]
    for r, inf, fam in zip(others, results, correct([i.p_value for i in results], alpha, "holm")):
        r.update({"change": inf.change, "change_ci_low": inf.low, "change_ci_high": inf.high, "test": inf.method,
                  "p_value": inf.p_value, "p_holm": fam["p_adjusted"]})
        r["verdict"] = "indistinguishable" if fam["p_adjusted"] >= alpha else "worse"
    best.update({"verdict": "best", "change": None, "change_ci_low": None, "change_ci_high": None, "test": None,
                 "p_value": None, "p_holm": None})


def _dominates(o: dict, r: dict, k: int) -> bool:
    """Point ``o`` has at least ``r``'s SpanRecall@k with at most its tokens@k, and is strictly better in one."""
    recall, tokens = f"SpanRecall@{k}", f"tokens@{k}"
    return (o[recall] >= r[recall] and o[tokens] <= r[tokens]
            and (o[recall] > r[recall] or o[tokens] < r[tokens]))


def _cell(row) -> dict:
    return {"value": row.value, "ci_low": row.ci_low, "ci_high": row.ci_high, "n": row.n}


def _n_chunks(warehouse, run_id: str) -> int:
    return warehouse.con.execute("SELECT s.n_chunks FROM runs r JOIN chunk_sets s ON s.chunk_set = r.chunk_set "
                                 "WHERE r.run_id = ?", [run_id]).fetchall()[0][0]


def _context_tokens(warehouse, run_id: str, k: int) -> float:
    """Mean tokens the top k final results occupy, over answerable questions (a question with none: 0)."""
    _, rows = warehouse.query("reports/context_tokens", run_id=run_id, k=k)
    return float(rows[0][0] or 0.0)


# -- rendering ---------------------------------------------------------------------------
def _ci(c: dict) -> str:
    return f"{c['value']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]"


def render(result: dict, fmt: str) -> str:
    from assay.verdicts import verdict_text

    in_words = verdict_text.sweep(result)
    if fmt == "json":
        return jsonout.dumps({**result, "verdict": in_words}, indent=2, default=str) + "\n"
    if fmt == "csv":
        return _csv(result)
    from assay.core import escape, tables

    spec, k = result["spec"], result["spec"]["k"]
    level = f"{1 - spec['alpha']:.0%}"
    heads = ["#", "point", "pipeline", "chunks", "tok/result"] + result["columns"] + \
        [f"SpanRecall@{k}", f"tokens@{k}", f"change [{level} CI]", "vs best", "pareto"]
    body = []
    for r in result["points"]:
        if r["verdict"] == "best":
            change, verdict = "", "BEST"
        else:
            change = f"{r['change']:+.3f} [{r['change_ci_low']:+.3f}, {r['change_ci_high']:+.3f}]"
            verdict = (f"{'≈ best' if r['verdict'] == 'indistinguishable' else 'worse'} "
                       f"(p{_p(r['p_value'])}, Holm{_p(r['p_holm'])})")
        tpr = "-" if r["tokens_per_result"] is None else f"{r['tokens_per_result']:.0f}"
        short = fill.MARK if fill.unfilled(r) else ""
        body.append([str(r["point"]), r["label"], r["pipeline"], str(r["n_chunks"]), tpr]
                    + [_ci(r["measures"][c]) + (f" {short}" if short and c.endswith("tok") else "")
                       for c in result["columns"]]
                    + [f"{r[f'SpanRecall@{k}']:.3f}", f"{r[f'tokens@{k}']:.0f}", change, verdict,
                       "*" if r["pareto"] else ""])
    said = (escape.markdown_cell if fmt == "markdown" else escape.terminal)(in_words["sentence"])
    lines = [said, ""]  # the verdict in words first
    lines += [f"sweep {escape.terminal(result['sweep_id'])}: {len(result['points'])} points, {result['n_questions']} answerable "
             f"questions, context budget {spec['budget']} tokens, k {k}"]
    lines += stopped(result)
    lines += ["",
             tables.render(heads, body, markdown=fmt == "markdown"), "",
             f"best: point {result['best']} by {result['select']} (ties: fewer tokens@{k}, then the earlier point). "
             f"'change': the point's {result['select']} minus the best point's, over the same questions, with the "
             f"{level} interval that inverts the paired test beside it (a score test; McNemar's for 0/1 values), so "
             f"it excludes 0 exactly when p < {spec['alpha']}; 'Holm' corrects p over the "
             f"{len(result['points']) - 1} other points; '≈ best' means Holm's p >= {spec['alpha']}: "
             "statistically indistinguishable.",
             f"pareto (*): no other point has at least its SpanRecall@{k} with at most its tokens@{k} "
             f"(mean tokens the top {k} results occupy) and more recall or fewer tokens; points level on both "
             "are both on it.",
             "Chunk-level hit rates (Success@k, R@k at chunk level) are not in this table: they rise with "
             "chunk size whatever the context costs (docs/chunking.md)."]
    lines += unreached(result)
    lines += [escape.terminal(line) for line in spec.get("skipped", [])]
    return "\n".join(lines) + "\n"


def stopped(result: dict) -> list[str]:
    """The line saying which points ran, for a sweep that stopped before its last point (none: no line)."""
    if "stopped" not in result:
        return []
    ran, planned = result["stopped"]["ran"], result["stopped"]["planned"]
    return [f"stopped: {ran} of the grid's {planned} points ran (points 1 to {ran}; points {ran + 1} to {planned} did "
            f"not: the sweep was interrupted or its point {ran + 1} failed), so the best point and every comparison "
            f"are among these {ran}"]


def unreached(result: dict) -> list[str]:
    """The note naming the points that could not fill the context budget (none: no line)."""
    short = [r for r in result["points"] if fill.unfilled(r)]
    if not short:
        return []
    budget = result["spec"]["budget"]
    return [f"{fill.MARK} could not reach the {budget}-token budget: " + "; ".join(
        f"point {r['point']} ({r['label']}, {fill.describe({**r, 'n': result['n_questions']})})" for r in short)
        + f". A question short of {budget} tokens is scored on all its results hold, a smaller context."]


def _p(v: float) -> str:
    return "<0.001" if v < 0.001 else f"={v:.3f}"


def _csv(result: dict) -> str:
    import csv
    import io

    from assay.core.escape import printed_csv_cell

    k = result["spec"]["k"]
    buf = io.StringIO()
    fields = ["sweep_id", "point", "run_id", "chunker", "size", "overlap", "pipeline", "n_chunks",
              "tokens_per_result", "measure", "value", "ci_low", "ci_high", "n", f"SpanRecall@{k}", f"tokens@{k}",
              "verdict", "change", "change_ci_low", "change_ci_high", "test", "p_value", "p_holm", "pareto",
              *fill.FIELDS]
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in result["points"]:
        for name, cell in r["measures"].items():
            row = {"sweep_id": result["sweep_id"], **{f: r[f] for f in ("point", "run_id", "chunker", "size",
                   "overlap", "pipeline", "n_chunks", "tokens_per_result", f"SpanRecall@{k}", f"tokens@{k}",
                   "verdict", "change", "change_ci_low", "change_ci_high", "test", "p_value", "p_holm", "pareto")},
                   "measure": name, **cell,
                   **({f: r[f] for f in fill.FIELDS} if name.endswith("tok") else {})}  # the budget's rows only
            w.writerow({key: printed_csv_cell(v) for key, v in row.items()})
    return buf.getvalue()
