"""What the Python API returns: assay.evaluate's Evaluation and assay.evaluate_run's Scores show as HTML
tables in a notebook (every value escaped) and convert to pandas and Arrow with the report's figures."""

import json
import pickle
from html.parser import HTMLParser

import pyarrow as pa
import pytest
from click.testing import CliRunner

import assay
from assay.cli import cli
from assay.core.errors import ConfigError
from assay.present.notebook import EVALUATION_COLUMNS, Evaluation, Scores

HOSTILE = "<img src=x onerror=alert(1)>&amp;\"'"


def retriever(question, limit):
    return ["storage/design.md", ("ops/backup.rst", 0.5), "storage/cache.txt"]


class Cells(HTMLParser):
    """The text of every table cell, row by row; and whether any element other than the expected ones appears."""

    ALLOWED = {"div", "p", "code", "table", "thead", "tbody", "tr", "th", "td", "details", "summary"}

    def __init__(self, text):
        super().__init__()
        self.rows, self.tags, self._row, self._cell = [], set(), None, None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr":
            self.rows.append(self._row)

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    from conftest import MINI

    wh = tmp_path_factory.mktemp("api") / "w.duckdb"
    result = assay.evaluate(retriever, MINI / "judgments.jsonl", MINI / "corpus", wh, name=HOSTILE)
    return wh, result


def test_evaluate_stores_the_name_the_caller_chose(evaluated):
    wh, result = evaluated
    assert result["report"]["run"]["pipeline"] == HOSTILE and result["report"]["run"]["config"]["pipeline"] == HOSTILE
    runs = json.loads(CliRunner().invoke(cli, ["runs", "--format", "json", "--warehouse", str(wh)]).stdout)
    assert [(r["run_id"], r["pipeline"]) for r in runs] == [(result["run_id"], HOSTILE)]


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_evaluate_without_a_name_stays_python(tmp_path):
    from conftest import MINI

    result = assay.evaluate(retriever, MINI / "judgments.jsonl", MINI / "corpus", tmp_path / "w.duckdb")
    assert result["report"]["run"]["pipeline"] == "python"


@pytest.mark.parametrize("name, says", [
    ("", "non-empty string"), (None, "non-empty string"), (3, "non-empty string"),
    ("runs/mine", "path separator ('/')"), ("..\\mine", "path separator ('\\\\')"),
    ("two\nlines", "do not print ('\\n')"), ("bell\x07", "do not print ('\\x07')"), ("rtl\u202e", "do not print"),
    (" padded", "starts or ends with a space"), ("bm25", "built-in pipeline"), ("hybrid", "built-in pipeline"),
])
def test_a_bad_name_is_refused_before_anything_runs(tmp_path, name, says):
    with pytest.raises(ConfigError, match="name") as err:
        assay.evaluate(retriever, "never-read.jsonl", "never-read", tmp_path / "w.duckdb", name=name)
    assert says in str(err.value)
    assert not (tmp_path / "w.duckdb").exists()


def test_evaluation_is_still_the_dict_it_was(evaluated):
    _, result = evaluated
    assert isinstance(result, dict) and set(result) == {"run_id", "report"}
    assert result.run_id == result["run_id"] and result.report is result["report"]
    assert json.loads(json.dumps(result)) == json.loads(json.dumps(dict(result)))
    assert pickle.loads(pickle.dumps(result)) == result


def test_evaluation_converts_to_arrow_and_pandas_with_the_reports_rows(evaluated):
    _, result = evaluated
    rows = result["report"]["metrics"]
    table = result.to_arrow()
    assert isinstance(table, pa.Table) and table.column_names == list(EVALUATION_COLUMNS)
    assert table.num_rows == len(rows)
    assert table.to_pylist() == [{"run_id": result["run_id"], **r} for r in rows]
    frame = result.to_pandas()
    assert frame.shape == (len(rows), len(EVALUATION_COLUMNS)) and list(frame.columns) == list(EVALUATION_COLUMNS)
    first = frame.iloc[0]
    assert (first["metric"], first["level"], first["slice"], first["n"]) == (
        rows[0]["metric"], rows[0]["level"], rows[0]["slice"], rows[0]["n"])
    assert first["value"] == pytest.approx(rows[0]["value"])


def test_evaluation_html_has_every_metric_row_and_escapes_the_name(evaluated):
    _, result = evaluated
    page = result._repr_html_()
    assert "<img" not in page and "onerror=alert(1)>" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;amp;&quot;&#x27;" in page
    parsed = Cells(page)
    assert parsed.tags <= Cells.ALLOWED
    shown = {tuple(r) for r in parsed.rows}
    for r in result["report"]["metrics"]:
        ci = f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        cells = [r["metric"], r["level"], f"{r['value']:.3f}", ci, str(r["n"])]
        assert tuple(cells if r["slice"] == "all" else [r["slice"]] + cells) in shown, r


QRELS = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}, HOSTILE: {"d1": 1}}
RUN = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0, "d3": 0.5}, HOSTILE: {"d9": 1.0}}


def test_scores_still_answer_as_the_arrow_table():
    scores = assay.evaluate_run(QRELS, RUN, ["AP", "RR@10"])
    table = scores.to_arrow()
    assert isinstance(scores, Scores) and isinstance(table, pa.Table)
    assert scores.schema.names == ["measure", "query_id", "value"] and scores.num_rows == len(scores) == 8
    assert scores.to_pylist() == table.to_pylist() and scores.column("measure") == table.column("measure")
    assert scores.equals(assay.evaluate_run(QRELS, RUN, ["AP", "RR@10"])) and scores.equals(table)
    assert pa.table(scores).equals(table)  # the Arrow stream interface: any Arrow consumer reads it
    assert pickle.loads(pickle.dumps(scores)).equals(table)
    frame = scores.to_pandas()
    assert frame.shape == (8, 3) and frame.to_dict("records") == table.to_pylist()


def test_scores_html_has_every_measure_and_escapes_query_ids():
    scores = assay.evaluate_run(QRELS, RUN, ["AP", "RR@10"])
    page = scores._repr_html_()
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    parsed = Cells(page)
    assert parsed.tags <= Cells.ALLOWED
    rows = {r["measure"]: r["value"] for r in scores.to_pylist() if r["query_id"] == "all"}
    assert [r for r in parsed.rows if r and r[0] in rows] == [[m, f"{v:.3f}", "3"] for m, v in rows.items()]
    per_query = {r[0]: r[1:] for r in parsed.rows[len(rows) + 2:]}
    assert per_query[HOSTILE] == ["0.000", "0.000"] and per_query["q1"] == ["1.000", "1.000"]
