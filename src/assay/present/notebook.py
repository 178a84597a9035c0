"""What the Python API returns, shown as HTML tables in a notebook and converted to pandas and Arrow.

``assay.evaluate`` returns an ``Evaluation``: the dict ``{"run_id", "report"}`` it always returned,
whose metric rows convert with ``to_arrow()`` / ``to_pandas()`` (a row per metric, level and slice)
and which Jupyter shows as a table of the headline rows with the slices folded below.
``assay.evaluate_run`` returns ``Scores``: the Arrow table of per-query values it always returned
(its attributes and methods answer as the table's do, and Arrow consumers take it through the Arrow
stream interface), shown as a table of each measure's mean with the per-query values folded below.

Every value in the HTML (run ids, pipeline names, slices, query ids) is escaped by ``escape.html``.
"""

from __future__ import annotations

from assay.core.escape import html

# the columns of Evaluation.to_arrow(), in order: the run id, then the report's metric rows
EVALUATION_COLUMNS = ("run_id", "metric", "level", "slice", "value", "n", "ci_low", "ci_high",
                      "budget_filled", "tokens_available", "shortfall", "questions_short")  # assay.measures.fill
SHOWN_QUERIES = 50  # per-query rows Scores shows in a notebook; to_pandas() and to_arrow() have them all
_STYLE = "font-variant-numeric: tabular-nums"


def _fmt(v) -> str:
    return "-" if v is None else f"{v:.3f}"


def _html_table(headers: list[str], rows: list[list], right: set[int]) -> str:
    """A plain HTML table; every header and cell is escaped here, columns in ``right`` right-aligned."""
    def cell(tag, i, v):
        align = ' style="text-align: right"' if i in right else ' style="text-align: left"'
        return f"<{tag}{align}>{html(v)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(r)) + "</tr>" for r in rows)
    return f'<table style="{_STYLE}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


class Evaluation(dict):
    """A stored run and its report: ``{"run_id": str, "report": dict}`` (``assay report --format json``'s
    object), with ``run_id`` and ``report`` as attributes too, and where it went: ``warehouse``, the file
    the run was written to, and ``config``, the assay.toml its settings came from (None: none)."""

    def __init__(self, *args, warehouse=None, config=None, **kw):
        super().__init__(*args, **kw)
        self.warehouse, self.config = warehouse, config

    @property
    def run_id(self) -> str:
        return self["run_id"]

    @property
    def report(self) -> dict:
        return self["report"]

    def to_arrow(self):
        """The report's metric rows as a pyarrow Table (``EVALUATION_COLUMNS``; a value not computed is null)."""
        import pyarrow as pa

        rows = self["report"]["metrics"]
        types = {"value": pa.float64(), "n": pa.int64(), "ci_low": pa.float64(), "ci_high": pa.float64(),
                 "budget_filled": pa.bool_(), "tokens_available": pa.float64(), "shortfall": pa.float64(),
                 "questions_short": pa.int64()}
        columns = {"run_id": pa.array([self["run_id"]] * len(rows), pa.string())}
        for key in EVALUATION_COLUMNS[1:]:
            columns[key] = pa.array([r.get(key) for r in rows], types.get(key, pa.string()))
        return pa.table(columns)

    def to_pandas(self):
        """The report's metric rows as a pandas DataFrame (the columns of ``to_arrow()``)."""
        return self.to_arrow().to_pandas()

    def _repr_html_(self) -> str:
        run = self["report"]["run"]
        rows = self["report"]["metrics"]
        headline = [[r["metric"], r["level"], _fmt(r["value"]), _ci(r), r["n"]] for r in rows if r["slice"] == "all"]
        sliced = [[r["slice"], r["metric"], r["level"], _fmt(r["value"]), _ci(r), r["n"]]
                  for r in rows if r["slice"] != "all"]
        out = [f"<div><p>assay run <code>{html(self['run_id'])}</code> &middot; pipeline "
               f"<code>{html(run.get('pipeline'))}</code> &middot; {html(run.get('n_questions'))} questions "
               f"({html(run.get('n_answerable'))} answerable)</p>",
               _html_table(["metric", "level", "value", "95% CI", "n"], headline, {2, 3, 4})]
        if sliced:
            out.append(f"<details><summary>by slice ({len(sliced)} rows)</summary>"
                       + _html_table(["slice", "metric", "level", "value", "95% CI", "n"], sliced, {3, 4, 5})
                       + "</details>")
        return "".join(out) + "</div>"


def _ci(row) -> str:
    if row.get("ci_low") is None or row.get("ci_high") is None:
        return "-"
    return f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]"


class Scores:
    """Per-query values as a pyarrow Table with columns ``measure``, ``query_id``, ``value`` (see
    assay.api.evaluate_run.evaluate_run). Attributes and methods not defined here are the table's
    (``to_pylist()``, ``column()``, ``schema``, ``num_rows``...); ``to_arrow()`` gives the table itself."""

    def __init__(self, table):
        self._table = table

    def to_arrow(self):
        return self._table

    def to_pandas(self, **kwargs):
        return self._table.to_pandas(**kwargs)

    def __getattr__(self, name):
        if name == "_table":  # not set yet (unpickling): no table to ask
            raise AttributeError(name)
        return getattr(self._table, name)

    def __arrow_c_stream__(self, requested_schema=None):
        """The Arrow PyCapsule stream interface: ``pa.table(scores)``, polars and DuckDB read it as the table."""
        return self._table.__arrow_c_stream__(requested_schema)

    def equals(self, other, check_metadata: bool = False) -> bool:
        return self._table.equals(other.to_arrow() if isinstance(other, Scores) else other, check_metadata)

    def __eq__(self, other):
        try:
            return self.equals(other)
        except TypeError:
            return NotImplemented

    __hash__ = None

    def __len__(self) -> int:
        return len(self._table)

    def __getitem__(self, key):
        return self._table[key]

    def __repr__(self) -> str:
        return repr(self._table)

    def _repr_html_(self) -> str:
        rows = self._table.to_pylist()
        measures = list(dict.fromkeys(r["measure"] for r in rows))
        per_query: dict[str, dict] = {}
        for r in rows:
            if r["query_id"] != "all":
                per_query.setdefault(r["query_id"], {})[r["measure"]] = r["value"]
        means = [[m, _fmt(next(r["value"] for r in rows if r["measure"] == m and r["query_id"] == "all")),
                  sum(1 for r in rows if r["measure"] == m and r["query_id"] != "all")] for m in measures]
        out = [_html_table(["measure", "mean", "queries"], means, {1, 2})]
        if per_query:
            shown = list(per_query.items())[:SHOWN_QUERIES]
            body = [[qid] + [_fmt(values.get(m)) for m in measures] for qid, values in shown]
            more = (f"; the first {len(shown)} shown, to_pandas() has them all"
                    if len(per_query) > len(shown) else "")
            out.append(f"<details><summary>per query ({len(per_query)} queries{more})</summary>"
                       + _html_table(["query_id"] + measures, body, set(range(1, len(measures) + 1)))
                       + "</details>")
        return "<div>" + "".join(out) + "</div>"
