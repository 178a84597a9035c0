"""assay.runs.abstention's rules, from hand-built identities and calibrations: which scores a calibration may be applied
to, how that is said, and the text `assay calibrate` prints. (Fitting and applying one on real runs: the end of
tests/retrieval/test_calibration.py.)"""

import json
import re
import time
from datetime import datetime, timezone

import pytest

from assay.runs.abstention import _differences, _rates, check_applies, describe_identity, fit_and_store, render
from assay.retrieval.calibration import CAVEAT, calibrate
from assay.inputs.chunking import Chunk
from assay.core.errors import ConfigError
from assay.core.hashing import canonical_json
from synthetic import QuerySpec, Synthetic, write_synthetic

BM25 = {"stage": "bm25", "config": {"engine": "tantivy", "k1": 1.2, "b": 0.75,
                                    "analyzer": {"lowercase": True, "stopwords": False, "stemming": True,
                                                 "remove_long": 40}}}
DENSE = {"stage": "dense", "config": {"search": "exact cosine",
                                      "embedding": {"model": "m-small", "onnx_sha256": "0123456789abcdef" * 4}}}


@pytest.mark.parametrize("identity, phrase", [
    (BM25, "BM25 scores (k1 1.2, b 0.75, analyzer: lowercase, stemming)"),
    ({"stage": "bm25", "config": {"k1": 0.9, "b": 0.4, "analyzer": {"lowercase": False}}},
     "BM25 scores (k1 0.9, b 0.4, analyzer: no filters)"),
    ({"stage": "bm25", "config": {"k1": 0.9, "b": 0.4}}, "BM25 scores (k1 0.9, b 0.4, analyzer: no filters)"),
    (DENSE, "cosine scores of m-small (onnx 0123456789ab)"),
    ({"stage": "fusion", "config": {"method": "rrf", "k": 60, "inputs": ["bm25", "dense"]}},
     "rrf fusion scores (k 60) of bm25 + dense"),
    ({"stage": "fusion", "config": {"method": "weighted", "weights": {"dense": 0.7, "bm25": 0.3},
                                    "inputs": ["bm25", "dense"]}},
     'weighted fusion scores (weights {"bm25":0.3,"dense":0.7}) of bm25 + dense'),
    ({"stage": "fusion", "config": {"method": "rrf", "k": 60}}, "rrf fusion scores (k 60) of "),  # inputs unknown
    ({"stage": "rerank", "config": {"model": "xenc", "onnx_sha256": "fedcba9876543210" * 4}},
     "cross-encoder scores of xenc (onnx fedcba987654)"),
    ({"stage": "external", "config": {"kind": "command", "name": "mine"}}, "scores of the command retriever mine"),
    ({"stage": "external", "config": {}}, "scores of the external retriever"),
])
def test_each_score_identity_is_described_by_what_sets_its_scale(identity, phrase):
    assert describe_identity(identity) == phrase


def test_differences_are_the_dotted_paths_of_the_fields_that_differ():
    other = {"stage": "bm25", "config": {**BM25["config"], "analyzer": {**BM25["config"]["analyzer"],
                                                                        "remove_long": 80}, "extra": 1}}
    assert _differences(BM25, other) == ["config.analyzer.remove_long", "config.extra"]
    assert _differences(BM25, BM25) == []
    assert _differences({"a": 1}, {"a": {"b": 2}}) == ["a"]  # a value against a dict: the field itself
    assert _differences(1, 2) == [""]


def calibration(identity: dict) -> dict:
    return {"calibration_id": "cal-1", "fitted_on_run": "run-a", "pipeline": "fitted", "stage": "final",
            "score_identity": identity}


def run_config(pipeline: str, stages: list[str], **retrieval) -> dict:
    return {"pipeline": pipeline, "stages": [*stages, "final"], "retrieval": retrieval}


def test_a_calibration_applies_to_a_run_whose_scores_have_its_identity():
    check_applies(calibration(BM25), run_config("other-name", ["bm25"], bm25=BM25["config"]))
    # another chunking or depth is the same scale
    check_applies(calibration(BM25), {**run_config("p", ["bm25"], bm25=BM25["config"]), "depth": 5, "final_k": 1})


def test_a_calibration_of_another_scale_is_refused_naming_both():
    with pytest.raises(ConfigError) as refused:
        check_applies(calibration(DENSE), run_config("lexical", ["bm25"], bm25=BM25["config"]))
    assert str(refused.value) == (
        "calibration cal-1 was fitted on run run-a (pipeline fitted), whose final scores are cosine scores of "
        "m-small (onnx 0123456789ab); this run (pipeline lexical) produces BM25 scores (k1 1.2, b 0.75, analyzer: "
        "lowercase, stemming), another scale, so its probabilities would mean nothing here. Fit one on a run of "
        "this pipeline: `assay run --pipeline lexical ...`, then `assay calibrate RUN_ID`")


def test_identities_described_alike_are_told_apart_by_the_fields_that_differ():
    longer = {**BM25["config"], "analyzer": {**BM25["config"]["analyzer"], "remove_long": 80}}
    with pytest.raises(ConfigError) as refused:
        check_applies(calibration(BM25), run_config("p", ["bm25"], bm25=longer))
    assert ("whose final scores are BM25 scores (k1 1.2, b 0.75, analyzer: lowercase, stemming) (differs in "
            "config.analyzer.remove_long); this run (pipeline p) produces BM25 scores (k1 1.2, b 0.75, analyzer: "
            "lowercase, stemming), another scale") in str(refused.value)


def test_every_field_that_differs_is_named():
    other = {**BM25["config"], "analyzer": {**BM25["config"]["analyzer"], "remove_long": 80, "tokenizer": "raw"}}
    with pytest.raises(ConfigError, match=r"\(differs in config\.analyzer\.remove_long, config\.analyzer\.tokenizer\)"):
        check_applies(calibration(BM25), run_config("p", ["bm25"], bm25=other))


def test_rates_are_cells_of_three_decimals_with_na_for_an_empty_class_and_dashes_for_no_split():
    assert _rates({"tpr": 0.25, "tnr": 1.0, "balanced_accuracy": 0.6254}) == ["0.250", "1.000", "0.625"]
    assert _rates({"tpr": None, "tnr": 0.5, "balanced_accuracy": None}) == ["n/a", "0.500", "n/a"]
    assert _rates(None) == ["-", "-", "-"]
    assert _rates({}) == ["-", "-", "-"]


DATA = {"a": 2.5, "b": -1.25, "threshold": 0.625, "n": 6, "n_answerable": 4, "n_no_answer": 2, "n_no_hits": 2,
        "fit_set_hash": "h" * 8, "stage": "final", "pipeline": "bm25", "score_identity": BM25,
        "in_sample": {"tpr": 0.25, "tnr": 1.0, "balanced_accuracy": 0.625},
        "held_out": [{"fit": "odd", "test": "even", "error": "cannot fit on the odd positions: x", "confusion": None},
                     {"fit": "even", "test": "odd", "error": None,
                      "confusion": {"tpr": None, "tnr": 0.5, "balanced_accuracy": None}}],
        "caveat": "In-sample figures are optimistic."}
HEAD = """\
calibration cal-1 fitted on run run-1
  Platt scaling: P(answerable | top score s) = 1 / (1 + exp(-(2.5 * s + -1.25)))
  threshold {threshold} (abstain below it), chosen to maximize balanced accuracy
  questions: 6 (4 answerable, 2 no_answer, 2 without hits, which always abstain)
  fit set hhhhhhhh
  scores: final stage of pipeline bm25, BM25 scores (k1 1.2, b 0.75, analyzer: lowercase, stemming); a run whose \
scores come from anything else refuses it

"""
TAIL = """
  In-sample figures are optimistic.

apply it with: assay run --calibration cal-1 ...
"""


def test_the_calibration_is_shown_with_a_note_column_only_when_a_split_failed():
    assert render("cal-1", "run-1", DATA) == HEAD.format(threshold="0.6250") + """\
  questions                        TPR    TNR  balanced accuracy  note
  --------------------------------------------------------------------------------------------------
  in-sample                      0.250  1.000              0.625
  held-out (fit odd, test even)      -      -                  -  cannot fit on the odd positions: x
  held-out (fit even, test odd)    n/a  0.500                n/a
""" + TAIL
    fitted = {"fit": "odd", "test": "even", "error": None,
              "confusion": {"tpr": 1.0, "tnr": 0.0, "balanced_accuracy": 0.5}}
    assert render("cal-1", "run-1", {**DATA, "threshold": "inf", "held_out": [fitted, DATA["held_out"][1]]}) == \
        HEAD.format(threshold="inf") + """\
  questions                        TPR    TNR  balanced accuracy
  --------------------------------------------------------------
  in-sample                      0.250  1.000              0.625
  held-out (fit odd, test even)  1.000  0.000              0.500
  held-out (fit even, test odd)    n/a  0.500                n/a
""" + TAIL


def test_a_calibration_is_fitted_on_each_questions_top_final_score_and_stored(warehouse, monkeypatch):
    # write_synthetic scores rank r of a list of length L as L - r: the top score is L - 1; no_answer questions are
    # those of category no_answer; a4 found nothing (no score)
    chunks = [Chunk("d.md", i, 10 * i, 10 * i + 10, "x" * 10) for i in range(4)]
    ranked = lambda n: [c.chunk_id for c in chunks[:n]]  # noqa: E731
    questions = [QuerySpec("a1", [("d.md", 0, 5, 1)], ranked(4)), QuerySpec("a2", [("d.md", 0, 5, 1)], ranked(3)),
                 QuerySpec("a3", [("d.md", 0, 5, 1)], ranked(1)), QuerySpec("a4", [("d.md", 0, 5, 1)], []),
                 QuerySpec("n1", [], ranked(2), category="no_answer"),
                 QuerySpec("n2", [], ranked(1), category="no_answer")]
    record = write_synthetic(warehouse, Synthetic(["d.md"], chunks, questions), run_id="fitted")
    # the stored time is UTC whatever the machine's zone (a zone far from UTC shows a local time)
    monkeypatch.setenv("TZ", "Pacific/Kiritimati")  # UTC+14
    time.tzset()
    try:
        before = datetime.now(timezone.utc).replace(tzinfo=None)
        cal_id, data = fit_and_store(warehouse, "fitted")
        after = datetime.now(timezone.utc).replace(tzinfo=None)
    finally:
        monkeypatch.undo()
        time.tzset()
    want = calibrate(["a1", "a2", "a3", "a4", "n1", "n2"], [3.0, 2.0, 0.0, None, 1.0, 0.0],
                     [1, 1, 1, 1, 0, 0]).to_dict()
    identity = {"stage": "bm25", "config": {}}  # the synthetic run names no stages: BM25, with no stored config
    assert re.fullmatch(r"cal-\d{8}T\d{6}-[0-9a-f]{6}", cal_id)
    assert data == {**want, "pipeline": "synthetic", "stage": "final", "score_identity": identity,
                    "judgments_hash": "j" * 64}
    (row,) = warehouse.con.execute(
        "SELECT calibration_id, run_id, created_at, method, a, b, threshold, fit_set_hash, config_hash, result, caveat, pipeline, "
        "stage, score_identity, judgments_hash FROM calibrations").fetchall()
    assert before <= row[2] <= after
    assert row[:2] + row[3:] == (cal_id, "fitted", "platt", want["a"], want["b"], float(want["threshold"]), want["fit_set_hash"],
                   record.config_hash, json.dumps(want), CAVEAT, "synthetic", "final", canonical_json(identity),
                   "j" * 64)
