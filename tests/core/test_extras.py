"""A feature whose extra is not installed stops before any work, with one line naming the extra and exit code 2.

A module is made missing as Python itself allows: ``sys.modules[name] = None`` makes ``import name`` fail and
``importlib.util.find_spec(name)`` answer None, exactly as for a package that is not installed. The lean install
in tests/project/test_packaging.py checks the same lines with the packages really absent.
"""

import shutil
import sys

import pytest
from click.testing import CliRunner

from assay.core import extras
from assay.cli import cli
from assay.core.errors import AssayError, ExtraMissing


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture
def without(monkeypatch):
    def block(*names):
        for name in names:
            monkeypatch.setitem(sys.modules, name, None)
    return block


def test_every_extra_is_one_of_pyprojects():
    import tomllib
    from pathlib import Path

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    declared = set(pyproject["project"]["optional-dependencies"])
    assert set(extras.EXTRAS) <= declared
    assert declared - set(extras.EXTRAS) == {"all", "test", "docs"}  # docs: the manual's builder, no feature of assay
    every = pyproject["project"]["optional-dependencies"]["all"]
    assert every == [f"assay[{','.join(extras.EXTRAS)}]"]


def test_an_installed_extra_passes_and_a_missing_one_is_one_line_with_exit_code_2(without, monkeypatch):
    extras.require("pdf", "a PDF")  # installed here (make install)
    assert extras.installed("html") and extras.missing("html") == []
    without("vl_convert")
    assert extras.missing("html") == ["vl_convert"] and not extras.installed("html")
    with pytest.raises(ExtraMissing) as caught:
        extras.require("html", "--format html")
    assert str(caught.value) == "--format html needs assay's html extra: pip install 'assay[html]'"
    assert isinstance(caught.value, AssayError) and caught.value.exit_code == 2
    assert (caught.value.extra, caught.value.what) == ("html", "--format html")
    monkeypatch.setitem(extras.EXTRAS, "nothing", extras.Extra(("assay_no_such_module.sub",), "nothing"))
    assert extras.missing("nothing") == ["assay_no_such_module.sub"]  # a missing parent is missing too


def test_report_format_html_without_the_html_extra(without, tmp_path, mini_bm25):
    without("altair")
    result = invoke("report", "--format", "html", "-o", tmp_path / "r.html", "--warehouse", mini_bm25[0])
    assert result.exit_code == 2
    assert result.stderr == "error: --format html needs assay's html extra: pip install 'assay[html]'\n"
    assert result.stdout == "" and not (tmp_path / "r.html").exists()


def test_a_dense_pipeline_without_the_dense_extra_stops_before_reading_the_corpus(without, tmp_path, mini_corpus,
                                                                                mini_judgments):
    without("fastembed")
    wh = tmp_path / "w.duckdb"
    config = tmp_path / "assay.toml"
    config.write_text('[pipelines.bm25-rerank]\nextends = "bm25"\nrerank = true\n')
    for pipeline, stage in (("hybrid", "its dense stage"), ("dense", "its dense stage"),
                            ("bm25-rerank", "its cross-encoder reranker")):
        result = invoke("run", "--corpus", mini_corpus, "--judgments", mini_judgments, "--pipeline", pipeline,
                        "--config", config, "--warehouse", wh)
        assert result.exit_code == 2, result.output
        assert result.stderr.splitlines()[-1] == (f"error: pipeline '{pipeline}' ({stage}) needs assay's dense "
                                                  "extra: pip install 'assay[dense]'")
        assert "reading corpus" not in result.stderr and "resolved" not in result.stderr
    assert invoke("runs", "--warehouse", wh, "--format", "json").stdout.strip() in ("", "[]")


def test_a_pdf_in_the_corpus_without_the_pdf_extra_names_the_file(without, tmp_path, mini_corpus, mini_judgments):
    corpus = tmp_path / "corpus"
    shutil.copytree(mini_corpus, corpus)
    (corpus / "zz-manual.pdf").write_bytes(b"%PDF-1.4\n")  # never read: the check comes first
    without("pdfminer")
    result = invoke("run", "--corpus", corpus, "--judgments", mini_judgments, "--warehouse", tmp_path / "w.duckdb")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == (f"error: {corpus / 'zz-manual.pdf'} (a PDF file) needs assay's pdf "
                                              "extra: pip install 'assay[pdf]'")


def test_the_spark_engine_without_the_spark_extra(without, tmp_path):
    without("pyspark")
    from assay.store.lake.spark import spark_session

    with pytest.raises(ExtraMissing, match=r"^the spark engine needs assay's spark extra: pip install 'assay\[spark\]'$"):
        spark_session()


def test_models_lists_what_it_can_without_the_dense_extra(without):
    without("fastembed")
    result = invoke("models")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == ("dense retrieval and reranking need assay's dense extra: "
                                              "pip install 'assay[dense]'")


def test_a_sweep_with_a_dense_point_stops_before_its_first_point(without, tmp_path, mini_corpus, mini_judgments):
    without("fastembed")
    wh = tmp_path / "w.duckdb"
    result = invoke("sweep", "--corpus", mini_corpus, "--judgments", mini_judgments, "--pipeline", "bm25",
                    "--pipeline", "dense", "--size", 200, "--warehouse", wh)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1] == ("error: pipeline 'dense' (its dense stage) needs assay's dense extra: "
                                              "pip install 'assay[dense]'")
    assert "-- point" not in result.stderr


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_an_ablation_skips_the_rungs_whose_extra_is_missing(without, tmp_path, mini_corpus, mini_judgments):
    """As a rung whose model is missing: the BM25 rung runs, each dense rung says what to install."""
    without("fastembed")
    result = invoke("ablate", "--corpus", mini_corpus, "--judgments", mini_judgments, "--warehouse",
                    tmp_path / "w.duckdb")
    assert result.exit_code == 0, result.output
    skipped = [line for line in result.stderr.splitlines() if line.startswith("warning: skipped:")]
    assert skipped and all(line.endswith("needs assay's dense extra: pip install 'assay[dense]'") for line in skipped)
    assert len(skipped) == 4  # dense, hybrid, hybrid-rerank, dense-top3
