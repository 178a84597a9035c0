"""`assay.evaluate_run`: score a run against qrels held in memory, with no warehouse and no files.

For people coming from ranx and pytrec_eval. Both inputs may be

- nested dicts, as pytrec_eval and ranx take them: ``{query_id: {doc_id: relevance}}`` and
  ``{query_id: {doc_id: score}}``;
- pandas DataFrames or pyarrow Tables with a query column (``query_id``, ``q_id`` or ``qid``), a
  document column (``doc_id``, ``docno`` or ``did``) and a value column (qrels: ``relevance``,
  ``rel``, ``grade`` or ``score``; run: ``score``).

Scoring is assay's measure SQL over the same in-memory tables `assay eval-trec` builds, so the rules
are trec_eval's (see assay.trec_eval): ranking by score descending, ties by document id descending;
relevance >= 1 is relevant; the queries scored are the qrels' queries the run answers (all of the
qrels' with ``complete=True``, missing ones scoring 0).
"""

from __future__ import annotations

from assay.errors import FormatError

QUERY_COLUMNS = ("query_id", "q_id", "qid")
DOC_COLUMNS = ("doc_id", "docno", "did")
QRELS_VALUES = ("relevance", "rel", "grade", "score")
RUN_VALUES = ("score",)
DEFAULT = ("nDCG@10", "AP", "RR@10", "R@100", "P@10", "Success@1")


def evaluate_run(qrels, run, measures=DEFAULT, *, complete: bool = False):
    """Per-query values of ``measures`` (names as ``assay measures`` lists them, document level): an
    ``assay.notebook.Scores``, which answers as a pyarrow Table with columns ``measure``, ``query_id``,
    ``value`` (a row per query scored, by query id, then a row with ``query_id`` ``"all"``, the mean over
    them, null when none were scored), converts with ``to_arrow()`` / ``to_pandas()`` and shows as an
    HTML table in a notebook."""
    import pyarrow as pa

    from assay.notebook import Scores

    from assay.trec_eval import measure_values, open_trec_tables, parse_trec_measures, scored_queries

    wanted = parse_trec_measures([measures] if isinstance(measures, str) else list(measures))
    q = _table(qrels, "qrels", QRELS_VALUES, "grade")
    r = _table(run, "run", RUN_VALUES, "score")
    con = open_trec_tables(q, r, complete=complete)
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
    """An Arrow table (query_id, docno, <value_name>) from nested dicts, a DataFrame or an Arrow table."""
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
    if value_name == "grade":
        import pyarrow.compute as pc

        col = data.column(value)
        if not pa.types.is_integer(col.type) and not pc.all(pc.equal(col, pc.round(col))).as_py():
            raise FormatError(what, None, f"relevance column {value!r} holds values that are not whole numbers")
    return pa.table({"query_id": data.column(query).cast(pa.string()), "docno": data.column(doc).cast(pa.string()),
                     value_name: data.column(value)})


def _column(table, names: tuple[str, ...], what: str, role: str) -> str:
    for name in names:
        if name in table.column_names:
            return name
    raise FormatError(what, None, f"no {role} column; name it one of {', '.join(names)} "
                      f"(columns: {', '.join(table.column_names)})")


def _number(value, what: str, qid, doc):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(what, None, f"query {qid!r}, document {doc!r}: {value!r} is not a number")
    if what == "qrels":
        if value != int(value):
            raise FormatError(what, None, f"query {qid!r}, document {doc!r}: relevance {value!r} is not a whole number")
        return int(value)
    return float(value)
