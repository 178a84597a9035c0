"""HTML reports: one self-contained file per report, readable offline and without JavaScript.

``run.build`` (one run), ``runs.build`` (several runs against the first), ``sweep.build`` (a sweep's table
and Pareto chart) and ``history.build`` (a measure over a pipeline's runs) each return the page's text;
``page.write`` writes it atomically. Altair and vl-convert are imported only here, never by ``assay --help``.
"""


def report(source, run_ids: list[str], measures, level: str | None = None) -> str:
    """The page of `assay report RUN... --format html`: one run's report, or several runs against the first."""
    if len(run_ids) == 1:
        from assay.present.html import run

        return run.build(source, run_ids[0], measures, level)
    from assay.present.html import runs

    return runs.build(source, run_ids, measures, level)
