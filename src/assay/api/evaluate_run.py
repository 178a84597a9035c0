"""`assay.evaluate_run`: score a run against qrels held in memory, with no warehouse and no files.

For people coming from ranx and pytrec_eval. Both inputs may be

- nested dicts, as pytrec_eval and ranx take them: ``{query_id: {doc_id: relevance}}`` and
  ``{query_id: {doc_id: score}}``;
- pandas DataFrames or pyarrow Tables with a query column (``query_id``, ``q_id`` or ``qid``), a
  document column (``doc_id``, ``docno`` or ``did``) and a value column (qrels: ``relevance``,
  ``rel``, ``grade`` or ``score``; run: ``score``).

Scoring is assay's measure SQL over the same in-memory tables `assay eval-trec` builds, so the rules
are trec_eval's (see assay.measures.trec_eval), and per query the values are pytrec_eval's:

- ranking by score descending, ties by document id descending; relevance >= 1 is relevant;
- the queries scored are the qrels' queries the run answers, including one answered with an empty
  ranking (``{query_id: {}}``: every measure scores it 0, and it counts in the mean, as pytrec_eval
  counts it). A table cannot hold an empty ranking: there a query with no rows is absent from the run;
- a qrels query absent from the run is left out, as pytrec_eval and ``assay eval-trec`` leave it out;
  ``complete=True`` (eval-trec's ``--complete``, trec_eval's ``-c``) scores it 0 and counts it in the
  mean. A run query absent from the qrels is never scored;
- a score must be a finite number and a relevance a whole number: NaN, an infinity or a missing value
  (None, a null, pandas' NaN) is refused with a ``FormatError`` naming the query and the document.
  A NaN has no place in a ranking (pytrec_eval puts it last, a sort may put it anywhere) and
  eval-trec refuses it in a file. eval-trec reads ``inf`` in a file, as trec_eval does, but a score
  computed in Python that overflowed or divided by zero ranks its documents by id, not by the model:
  it is refused here, to be fixed where it was computed.
"""

from __future__ import annotations

from assay.core.errors import FormatError

QUERY_COLUMNS = ("query_id", "q_id", "qid")
DOC_COLUMNS = ("doc_id", "docno", "did")
QRELS_VALUES = ("relevance", "rel", "grade", "score")
RUN_VALUES = ("score",)
DEFAULT = ("nDCG@10", "AP", "RR@10", "R@100", "P@10", "Success@1")


def evaluate_run(qrels, run, measures=DEFAULT, *, complete: bool = False):
    """Per-query values of ``measures`` (names as ``assay measures`` lists them, document level): an
    ``assay.present.notebook.Scores``, which answers as a pyarrow Table with columns ``measure``, ``query_id``,
    ``value`` (a row per query scored, by query id, then a row with ``query_id`` ``"all"``, the mean over
    them, null when none were scored), converts with ``to_arrow()`` / ``to_pandas()`` and shows as an
    HTML table in a notebook.

    The queries scored are the qrels' queries the run answers, an empty ranking included (it scores 0);
    ``complete``: also the qrels' queries absent from the run, each scoring 0 (eval-trec's
    ``--complete``, trec_eval's ``-c``). Raises ``FormatError`` for a score that is not a finite number
    or a relevance that is not a whole number, naming the query and the document."""
    import pyarrow as pa

    from assay.present.notebook import Scores

    from assay.measures.trec_eval import measure_values, open_trec_tables, parse_trec_measures, scored_queries

    wanted = parse_trec_measures([measures] if isinstance(measures, str) else list(measures))
    q = _table(qrels, "qrels", QRELS_VALUES, "grade")
    r = _table(run, "run", RUN_VALUES, "score")
    # A table has no row for an empty ranking; only nested dicts can say the run answered a query with nothing.
    answered = [str(qid) for qid, ranked in run.items() if not ranked] if isinstance(run, dict) else []
    con = open_trec_tables(q, r, complete=complete, answered=answered)
    try:
        queries = scored_queries(con)
        names, qids, values = [], [], []
        for measure in wanted:
            per = measure_values(con, measure, queries)
            for qid in sorted(per):
                names.append(measure.name), qids.append(qid), values.append(per[qid])
            names.append(measure.name), qids.append("all")
            values.append(sum(per.values()) / len(per) if per else None)
    finally:
        con.close()
    return Scores(pa.table({"measure": pa.array(names, pa.string()), "query_id": pa.array(qids, pa.string()),
                            "value": pa.array(values, pa.float64())}))


def _table(data, what: str, value_columns: tuple[str, ...], value_name: str):
    """An Arrow table (query_id, docno, <value_name>) from nested dicts, a DataFrame or an Arrow table,
    every value checked (``_check_column``)."""
    import pyarrow as pa

    if isinstance(data, dict):
        qids, docs, vals = [], [], []
        for qid, ranked in data.items():
            if not isinstance(ranked, dict):
                raise FormatError(what, None, f"query {qid!r} maps to {type(ranked).__name__}; expected "
                                  "{doc_id: value}")
            for doc, value in ranked.items():
                qids.append(str(qid)), docs.append(str(doc)), vals.append(_number(value, what, qid, doc))
        return pa.table({"query_id": pa.array(qids, pa.string()), "docno": pa.array(docs, pa.string()),
                         value_name: pa.array(vals, pa.int64() if value_name == "grade" else pa.float64())})
    if not isinstance(data, pa.Table):
        if hasattr(data, "to_arrow"):  # polars
            data = data.to_arrow()
        elif hasattr(data, "columns") and hasattr(data, "to_dict"):  # pandas
            data = pa.Table.from_pandas(data, preserve_index=False)
        else:
            raise FormatError(what, None, f"expected nested dicts, a pandas DataFrame or a pyarrow Table, "
                              f"got {type(data).__name__}")
    query = _column(data, QUERY_COLUMNS, what, "query")
    doc = _column(data, DOC_COLUMNS, what, "document")
    value = _column(data, value_columns, what, "value")
    table = pa.table({"query_id": data.column(query).cast(pa.string()), "docno": data.column(doc).cast(pa.string()),
                      value_name: data.column(value)})
    _check_column(table, value_name, value, what)
    if pa.types.is_float16(table.schema.field(value_name).type):  # DuckDB reads no half floats
        table = table.set_column(2, value_name, table.column(value_name).cast(pa.float64()))
    return table


def _check_column(table, value_name: str, column: str, what: str) -> None:
    """Refuse a table whose ids are missing, or whose value column is not numeric or holds a value
    ``_number`` refuses, naming the first such row's query and document."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = table.column(value_name)
    if not (pa.types.is_integer(values.type) or pa.types.is_floating(values.type)):
        raise FormatError(what, None, f"{column!r} column holds {values.type}; expected numbers")
    for role, name in (("query", "query_id"), ("document", "docno")):
        if table.column(name).null_count:
            row = pc.index(pc.is_null(table.column(name)), True).as_py()
            raise FormatError(what, None, f"row {row} has no {role} id")
    # float64 holds every int32 exactly, and compares with any numeric column type (float32 does not)
    wide = pc.cast(values, pa.float64(), safe=False)
    bad = pc.or_kleene(pc.is_null(values), pc.invert(pc.is_finite(wide)))
    if value_name == "grade":
        bad = pc.or_kleene(bad, pc.not_equal(wide, pc.floor(wide)))
        bad = pc.or_kleene(bad, pc.or_kleene(pc.less(wide, float(_INT32[0])), pc.greater(wide, float(_INT32[1]))))
    if pc.any(bad).as_py():
        row = pc.index(bad, True).as_py()
        qid, doc, value = (table.column(c)[row].as_py() for c in ("query_id", "docno", value_name))
        _number(value, what, qid, doc)


# The grades the measure tables hold (int32).
_INT32 = (-(1 << 31), (1 << 31) - 1)
def _column(table, names: tuple[str, ...], what: str, role: str) -> str:
    for name in names:
        if name in table.column_names:
            return name
    raise FormatError(what, None, f"no {role} column; name it one of {', '.join(names)} "
                      f"(columns: {', '.join(table.column_names)})")


def _number(value, what: str, qid, doc):
    """A value as a run's score (a finite float) or a qrels relevance (a whole int in int32); numpy's
    numbers are taken as Python's."""
    import math
    import numbers

    where, kind = f"query {qid!r}, document {doc!r}", "relevance" if what == "qrels" else "score"
    if value is None:
        raise FormatError(what, None, f"{where}: no {kind} (None, a null or pandas' NaN); give every "
                          f"document a {kind}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise FormatError(what, None, f"{where}: {value!r} is not a number")
    if not math.isfinite(value):
        raise FormatError(what, None, f"{where}: {kind} {float(value)!r} is not a finite number; "
                          + ("give a whole number" if what == "qrels" else
                             "give every document a finite score (drop those the model could not score)"))
    if what == "qrels":
        if value != int(value):
            raise FormatError(what, None, f"{where}: relevance {value!r} is not a whole number")
        if not _INT32[0] <= value <= _INT32[1]:
            raise FormatError(what, None, f"{where}: relevance {value!r} is out of range "
                              f"({_INT32[0]} to {_INT32[1]})")
        return int(value)
    return float(value)
