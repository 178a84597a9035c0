import json
import math
import re
import warnings

import numpy as np
import pytest

from assay.retrieval.calibration import (
    CAVEAT,
    CalibrationResult,
    best_threshold,
    calibrate,
    confusion,
    platt_fit,
    platt_predict,
)
from assay.core.errors import AssayError, CalibrationError
from assay.core.hashing import canonical_json

# Overlapping scores, so the optimum is interior and both parameters matter.
SCORES = [0.2, 0.5, 0.9, 1.1, 1.4, 1.8, 2.0, 2.3, 2.7, 3.1, 0.7, 1.6]
LABELS = [0, 0, 1, 0, 1, 0, 1, 1, 1, 1, 0, 0]


# --- an independent reference: plain gradient descent on Platt's smoothed-target loss ---------


def _targets(labels):
    n_pos = sum(labels)
    n_neg = len(labels) - n_pos
    return [(n_pos + 1) / (n_pos + 2) if y else 1 / (n_neg + 2) for y in labels]


def _reference_loss(a, b, scores, labels):
    """-sum t log p + (1 - t) log(1 - p), written out directly (fine for moderate scores)."""
    total = 0.0
    for s, t in zip(scores, _targets(labels)):
        p = 1 / (1 + math.exp(-(a * s + b)))
        total -= t * math.log(p) + (1 - t) * math.log(1 - p)
    return total


def _reference_fit(scores, labels):
    """Gradient descent with the fixed step 1/L, L = 1/4 * largest eigenvalue of sum (s, 1)(s, 1)^T."""
    s = np.asarray(scores, dtype=float)
    t = np.asarray(_targets(labels))
    gram = np.array([[s @ s, s.sum()], [s.sum(), s.size]])
    step = 1 / (0.25 * np.linalg.eigvalsh(gram).max())
    a = b = 0.0
    for _ in range(200_000):
        p = 1 / (1 + np.exp(-(a * s + b)))
        ga, gb = float(s @ (p - t)), float((p - t).sum())
        if math.hypot(ga, gb) < 1e-10:
            break
        a, b = a - step * ga, b - step * gb
    else:
        raise AssertionError("reference gradient descent did not converge")
    return a, b


def test_platt_fit_matches_gradient_descent_reference():
    a, b = platt_fit(SCORES, LABELS)
    ref_a, ref_b = _reference_fit(SCORES, LABELS)
    assert a == pytest.approx(ref_a, abs=1e-4) and b == pytest.approx(ref_b, abs=1e-4)
    assert _reference_loss(a, b, SCORES, LABELS) <= _reference_loss(ref_a, ref_b, SCORES, LABELS) + 1e-12
    assert a > 0  # higher scores are likelier answerable in this data


def test_platt_fit_symmetric_data_puts_the_midpoint_at_the_centre():
    # Scores mirrored around c with mirrored labels: the loss is symmetric in a*c + b, so the
    # unique optimum has a*c + b = 0, i.e. P = 1/2 exactly at s = c.
    c = 3.7
    offsets = [0.5, 1.0, 1.5, 2.0, 0.3]
    upper_labels = [1, 1, 0, 1, 1]
    scores = [c + d for d in offsets] + [c - d for d in offsets]
    labels = upper_labels + [1 - y for y in upper_labels]
    a, b = platt_fit(scores, labels)
    assert a > 0
    assert b / a == pytest.approx(-c, abs=1e-9)
    assert platt_predict(a, b, [c])[0] == pytest.approx(0.5, abs=1e-12)


def test_platt_fit_equal_scores_give_the_mean_target():
    # t+ = 3/4, t- = 1/3; with one score the best constant is the mean target, 11/18.
    a, b = platt_fit([2.0, 2.0, 2.0], [1, 1, 0])
    assert a == 0.0
    assert platt_predict(a, b, [2.0])[0] == pytest.approx(11 / 18, abs=1e-12)


def test_platt_fit_is_the_optimum_scipy_finds_and_the_same_on_every_call():
    from scipy.optimize import minimize

    t = np.asarray(_targets(LABELS))
    s = np.asarray(SCORES)

    def loss(ab):  # the smoothed-target log loss and its gradient, written out in scipy's terms
        z = ab[0] * s + ab[1]
        p = 1 / (1 + np.exp(-z))
        return float(np.sum(np.logaddexp(0, z) - t * z)), np.array([s @ (p - t), np.sum(p - t)])

    found = minimize(loss, [0.0, 0.0], jac=True, method="BFGS", options={"gtol": 1e-12})
    a, b = platt_fit(SCORES, LABELS)
    assert (a, b) == pytest.approx(tuple(found.x), abs=1e-7)
    assert np.abs(loss([a, b])[1]).max() < 1e-9  # the gradient vanishes at the fit
    assert platt_fit(SCORES, LABELS) == (a, b)  # and the next call gives the very same floats


def test_perfectly_separable_data_is_separated_in_sample():
    ids = [f"q{i}" for i in range(6)]
    scores = [1.0, 2.0, 3.0, 5.0, 6.0, 7.0]
    labels = [0, 0, 0, 1, 1, 1]
    result = calibrate(ids, scores, labels)
    probs = platt_predict(result.a, result.b, scores)
    assert math.isfinite(result.a) and math.isfinite(result.b)  # finite thanks to the smoothed targets
    assert probs[2] < result.threshold <= probs[3]
    assert result.threshold == probs[3]  # the lowest separating candidate
    assert result.in_sample == {"tp": 3, "fn": 0, "tn": 3, "fp": 0, "tpr": 1.0, "tnr": 1.0, "balanced_accuracy": 1.0}


def test_huge_scores_raise_no_floating_point_errors():
    scores = [1e6, 2e6, 3e6, -1.5e6, -1e6, -2e6, -3e6, 1.2e6]  # separable, at huge scale
    labels = [1, 1, 1, 0, 0, 0, 0, 1]
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = platt_fit(scores, labels)
        probs = platt_predict(a, b, scores + [1e9, -1e9])
        result = calibrate([f"q{i}" for i in range(8)], scores, labels)
        assert platt_predict(1.0, 0.0, [1e6, -1e6]).tolist() == [1.0, 0.0]
    assert np.all(np.isfinite(probs)) and probs[-2] == 1.0 and 0.0 <= probs[-1] < 1e-100
    assert result.in_sample["balanced_accuracy"] == 1.0


def test_scores_far_from_zero_with_small_spread_still_fit():
    # Same shape as SCORES, shifted by 1e6: the slope is unchanged and the intercept moves with it.
    a, b = platt_fit(SCORES, LABELS)
    shifted_a, shifted_b = platt_fit([s + 1e6 for s in SCORES], LABELS)
    assert shifted_a == pytest.approx(a, rel=1e-6)
    assert shifted_b + shifted_a * 1e6 == pytest.approx(b, abs=1e-4)


def test_one_class_raises_a_calibration_error():
    expected = r"at least one answerable and one no_answer.*got 3 answerable and 0 no_answer"
    with pytest.raises(CalibrationError, match=expected):
        platt_fit([1.0, 2.0, 3.0], [1, 1, 1])
    with pytest.raises(CalibrationError, match="got 0 answerable and 2 no_answer"):
        calibrate(["a", "b"], [1.0, 2.0], [0, 0])
    assert issubclass(CalibrationError, AssayError)


def test_one_class_among_questions_with_hits_says_no_hit_questions_are_left_out():
    with pytest.raises(CalibrationError) as refused:
        calibrate(["a", "b", "c"], [1.0, 2.0, None], [1, 1, 0])
    assert str(refused.value) == (
        "calibration needs at least one answerable and one no_answer question with hits; got 2 answerable and "
        "0 no_answer (1 question(s) with no hits are left out of the fit). Add questions of the missing kind to the "
        "judgments.")
    with pytest.raises(CalibrationError) as refused:  # every question has hits: nothing said of no-hit ones
        calibrate(["a", "b"], [1.0, 2.0], [0, 0])
    assert str(refused.value) == (
        "calibration needs at least one answerable and one no_answer question with hits; got 0 answerable and "
        "2 no_answer. Add questions of the missing kind to the judgments.")


# --- best_threshold and confusion ---------------------------------------------------------------


def test_best_threshold_hand_computed():
    # t=0.2: (3/3 + 0/3)/2 = 1/2   t=0.3: (1 + 1/3)/2   t=0.4: (1 + 2/3)/2 = 5/6   <- best
    # t=0.6: (2/3 + 2/3)/2   t=0.8: (1/3 + 2/3)/2   t=0.9: (1/3 + 1)/2   t=inf: (0 + 1)/2
    probs = [0.9, 0.8, 0.6, 0.4, 0.3, 0.2]
    labels = [1, 0, 1, 1, 0, 0]
    threshold, balanced = best_threshold(probs, labels)
    assert threshold == 0.4
    assert balanced == pytest.approx(5 / 6, abs=1e-15)


def test_best_threshold_ties_go_to_the_lowest_threshold():
    # t=0.3: 1/2   t=0.5: (1 + 1/2)/2 = 3/4   t=0.7: 1/2   t=0.9: (1/2 + 1)/2 = 3/4   t=inf: 1/2
    threshold, balanced = best_threshold([0.9, 0.7, 0.5, 0.3], [1, 0, 1, 0])
    assert (threshold, balanced) == (0.5, 0.75)
    # keeping everything and abstaining on everything both score 1/2: keep everything
    assert best_threshold([0.5, 0.5], [1, 0]) == (0.5, 0.5)


def test_best_threshold_inverted_probabilities_keep_everything():
    # Every no_answer question outscores every answerable one. Keeping everything and
    # abstaining on everything both score 1/2, every threshold between scores less: keep all.
    assert best_threshold([0.2, 0.3, 0.8, 0.9], [1, 1, 0, 0]) == (0.2, 0.5)


def test_best_threshold_never_keeps_a_question_with_no_hits():
    # Probability 0 marks no hits. A threshold of 0 would keep both answerable questions
    # (balanced accuracy 1/2, tying +inf); 0 is not a candidate, so +inf wins.
    assert best_threshold([0.0, 0.0, 0.5], [1, 1, 0]) == (math.inf, 0.5)


def test_best_threshold_needs_both_labels():
    with pytest.raises(CalibrationError, match="got 2 answerable and 0 no_answer"):
        best_threshold([0.2, 0.8], [1, 1])


def test_confusion_counts_and_rates():
    result = confusion([0.9, 0.8, 0.6, 0.4, 0.3, 0.2], [1, 0, 1, 1, 0, 0], 0.6)
    assert result == {"tp": 2, "fn": 1, "tn": 2, "fp": 1, "tpr": 2 / 3, "tnr": 2 / 3, "balanced_accuracy": 2 / 3}


def test_confusion_rates_over_an_empty_class_are_none():
    only_answerable = confusion([0.9, 0.2], [1, 1], 0.5)
    assert only_answerable == {"tp": 1, "fn": 1, "tn": 0, "fp": 0, "tpr": 0.5, "tnr": None, "balanced_accuracy": None}
    only_no_answer = confusion([0.9, 0.2, 0.1], [0, 0, 0], 0.5)
    assert only_no_answer["tpr"] is None and only_no_answer["tnr"] == pytest.approx(2 / 3)
    assert only_no_answer["balanced_accuracy"] is None
    nothing = confusion([], [], 0.5)
    assert nothing["tpr"] is None and nothing["tnr"] is None and nothing["tp"] == 0


def test_confusion_refuses_a_threshold_that_would_keep_no_hit_questions():
    for threshold in (0.0, -0.5, math.nan):
        with pytest.raises(CalibrationError) as refused:
            confusion([0.0, 0.5], [1, 0], threshold)
        assert str(refused.value) == (
            f"threshold must be above 0 (or +inf to abstain on everything); got {threshold}. "
            "Probability 0 marks a question with no hits, which is never kept.")


# --- questions with no hits --------------------------------------------------------------------


def test_no_hit_questions_are_left_out_of_the_fit_and_always_abstain():
    ids = [f"q{i}" for i in range(len(SCORES))] + ["lost", "empty"]
    scores = SCORES + [None, None]
    labels = LABELS + [1, 0]  # an answerable and a no_answer question, both without hits
    result = calibrate(ids, scores, labels)
    assert (result.a, result.b) == platt_fit(SCORES, LABELS)
    assert (result.n, result.n_answerable, result.n_no_answer, result.n_no_hits) == (14, 7, 7, 2)
    scored_only = calibrate(ids[:-2], SCORES, LABELS)
    # the answerable one is a miss, the no_answer one a correct abstention
    assert result.in_sample["fn"] == scored_only.in_sample["fn"] + 1
    assert result.in_sample["tn"] == scored_only.in_sample["tn"] + 1
    assert result.in_sample["tp"] == scored_only.in_sample["tp"]
    assert result.in_sample["fp"] == scored_only.in_sample["fp"]


def test_no_hit_probability_is_zero_whatever_the_slope():
    # With a < 0, substituting s = -inf would give probability 1.
    probs = platt_predict(-1.0, 0.0, [None, 5.0])
    assert probs[0] == 0.0
    assert probs[1] == pytest.approx(1 / (1 + math.exp(5.0)))


def test_non_finite_scores_are_refused_by_question_id():
    with pytest.raises(CalibrationError, match=r"question 'b' has score nan"):
        calibrate(["a", "b"], [1.0, float("nan")], [1, 0])


# --- held-out splits and the fit-set hash ------------------------------------------------------

IDS = ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"]
SPLIT_SCORES = [3.0, 0.5, 1.0, 2.5, 2.0, 1.5, 0.2, 2.8]
SPLIT_LABELS = [1, 0, 0, 1, 1, 0, 0, 1]
BY_ID = dict(zip(IDS, zip(SPLIT_SCORES, SPLIT_LABELS)))


def _fit_and_test(fit_ids, test_ids):
    fit_scores, fit_labels = zip(*(BY_ID[q] for q in fit_ids))
    test_scores, test_labels = zip(*(BY_ID[q] for q in test_ids))
    a, b = platt_fit(fit_scores, fit_labels)
    threshold, _ = best_threshold(platt_predict(a, b, fit_scores), fit_labels)
    return a, b, threshold, confusion(platt_predict(a, b, test_scores), test_labels, threshold)


def test_held_out_splits_use_odd_and_even_positions():
    result = calibrate(IDS, SPLIT_SCORES, SPLIT_LABELS)
    odd, even = result.held_out
    a, b, threshold, test_confusion = _fit_and_test(["q1", "q3", "q5", "q7"], ["q2", "q4", "q6", "q8"])
    assert odd == {"fit": "odd", "test": "even", "a": a, "b": b, "threshold": threshold,
                   "confusion": test_confusion, "error": None}
    a, b, threshold, test_confusion = _fit_and_test(["q2", "q4", "q6", "q8"], ["q1", "q3", "q5", "q7"])
    assert even == {"fit": "even", "test": "odd", "a": a, "b": b, "threshold": threshold,
                    "confusion": test_confusion, "error": None}
    assert odd["a"] != even["a"]  # the halves really differ


def test_held_out_split_without_both_labels_reports_an_error():
    # odd positions (q1, q3) are both answerable; even positions (q2, q4) hold both labels
    result = calibrate(["q1", "q2", "q3", "q4"], [2.0, 1.0, 3.0, 2.5], [1, 0, 1, 1])
    odd, even = result.held_out
    assert odd["error"].startswith("cannot fit on the odd positions")
    assert "got 2 answerable and 0 no_answer" in odd["error"]
    assert odd["a"] is odd["b"] is odd["threshold"] is odd["confusion"] is None
    assert even["error"] is None and even["confusion"]["tp"] + even["confusion"]["fn"] == 2


def test_fit_set_hash_ignores_order_and_sees_every_label():
    base = calibrate(IDS, SPLIT_SCORES, SPLIT_LABELS).fit_set_hash
    order = [5, 0, 7, 2, 1, 6, 3, 4]
    shuffled = calibrate([IDS[i] for i in order], [SPLIT_SCORES[i] for i in order], [SPLIT_LABELS[i] for i in order])
    assert shuffled.fit_set_hash == base
    flipped = list(SPLIT_LABELS)
    flipped[1] = 1
    assert calibrate(IDS, SPLIT_SCORES, flipped).fit_set_hash != base
    rescored = list(SPLIT_SCORES)
    rescored[0] = 3.5
    assert calibrate(IDS, rescored, SPLIT_LABELS).fit_set_hash != base
    assert re.fullmatch(r"[0-9a-f]{64}", base)  # a SHA-256, hex


def test_repeated_question_ids_are_refused():
    with pytest.raises(CalibrationError) as refused:
        calibrate(["q3", "q1", "q2", "q1", "q3"], [1.0, 2.0, 3.0, 1.5, 0.5], [1, 0, 1, 0, 1])
    assert str(refused.value) == "question ids repeat: q1, q3"  # each once, sorted; q2 is not repeated


def test_as_many_question_ids_as_scores_are_needed():
    with pytest.raises(CalibrationError) as refused:
        calibrate(["a", "b", "c"], [1.0, 2.0], [1, 0])
    assert str(refused.value) == "3 question ids but 2 scores"


def test_to_dict_is_strict_json_and_reads_back():
    result = calibrate(IDS, SPLIT_SCORES, SPLIT_LABELS)
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["a"] == result.a and data["threshold"] == result.threshold
    assert data["held_out"][0]["confusion"] == result.held_out[0]["confusion"]
    assert data["caveat"] == CAVEAT and "optimistic" in CAVEAT and "held-out" in CAVEAT
    assert data["fit_set_hash"] == result.fit_set_hash
    abstain_all = CalibrationResult(a=1.0, b=0.0, threshold=math.inf, in_sample={}, held_out=(), n=0,
                                    n_answerable=0, n_no_answer=0, n_no_hits=0, fit_set_hash="")
    encoded = json.dumps(abstain_all.to_dict(), allow_nan=False)
    assert float(json.loads(encoded)["threshold"]) == math.inf


def test_to_dict_names_every_field_and_writes_an_infinite_threshold_as_inf():
    failed = {"fit": "odd", "test": "even", "a": None, "b": None, "threshold": None, "confusion": None, "error": "x"}
    fitted = {"fit": "even", "test": "odd", "a": 1.0, "b": 0.0, "threshold": math.inf, "confusion": {"tp": 0},
              "error": None}
    result = CalibrationResult(a=1.5, b=-0.5, threshold=0.25, in_sample={"tp": 1}, held_out=(failed, fitted), n=3,
                               n_answerable=2, n_no_answer=1, n_no_hits=1, fit_set_hash="h")
    assert result.to_dict() == {
        "a": 1.5, "b": -0.5, "threshold": 0.25, "in_sample": {"tp": 1},
        "held_out": [failed, {**fitted, "threshold": "inf"}],
        "n": 3, "n_answerable": 2, "n_no_answer": 1, "n_no_hits": 1, "fit_set_hash": "h", "caveat": CAVEAT}
    assert CalibrationResult(**{**result.__dict__, "threshold": math.inf}).to_dict()["threshold"] == "inf"


# --- what a calibration was fitted on -----------------------------------------------------------

BM25_CONFIG = {"name": "bm25", "engine": "tantivy", "k1": 1.2, "b": 0.75,
               "analyzer": {"tokenizer": "simple", "lowercase": True, "stopwords": True, "stemming": True,
                            "remove_long": 40}}
DENSE_CONFIG = {"name": "dense", "search": "exact cosine",
                "embedding": {"model": "m", "onnx_sha256": "ab" * 32, "dim": 384, "normalized": True,
                              "query_prefix": "", "passage_prefix": "", "max_tokens": 256}}


def _run_config(stages, **retrieval):
    return {"pipeline": "p", "stages": stages + ["final"], "retrieval": retrieval, "chunker": {"name": "recursive"},
            "depth": 100, "final_k": 100}


def test_score_identity_of_a_single_first_stage_is_its_whole_config():
    from assay.runs.abstention import score_identity

    assert score_identity(_run_config(["bm25"], bm25=BM25_CONFIG)) == {"stage": "bm25", "config": BM25_CONFIG}
    assert score_identity(_run_config(["dense"], dense=DENSE_CONFIG)) == {"stage": "dense", "config": DENSE_CONFIG}
    external = {"name": "mine", "kind": "command", "argv": ["./search"]}
    assert score_identity(_run_config(["external"], external=external)) == {"stage": "external", "config": external}


def test_score_identity_of_fusion_and_rerank_is_the_last_scoring_stage():
    from assay.runs.abstention import score_identity

    fusion = {"method": "rrf", "k": 60}
    hybrid = _run_config(["bm25", "dense", "fusion"], bm25=BM25_CONFIG, dense=DENSE_CONFIG, fusion=fusion)
    assert score_identity(hybrid) == {"stage": "fusion", "config": {"method": "rrf", "k": 60,
                                                                    "inputs": ["bm25", "dense"]}}
    rerank = {"top_n": 50, "model": "x", "onnx_sha256": "cd" * 32}
    reranked = _run_config(["bm25", "dense", "fusion", "rerank"], bm25=BM25_CONFIG, dense=DENSE_CONFIG,
                           fusion=fusion, rerank=rerank)
    assert score_identity(reranked) == {"stage": "rerank", "config": {"model": "x", "onnx_sha256": "cd" * 32}}
    # top_n chooses which candidates are scored, not the scale of a score
    assert score_identity({**reranked, "retrieval": {**reranked["retrieval"], "rerank": {**rerank, "top_n": 5}}}) \
        == score_identity(reranked)


def test_score_identity_changes_with_the_scale_and_only_with_it():
    from assay.runs.abstention import score_identity

    dense = _run_config(["dense"], dense=DENSE_CONFIG)
    other_model = {**DENSE_CONFIG, "embedding": {**DENSE_CONFIG["embedding"], "model": "n", "onnx_sha256": "ef" * 32}}
    assert score_identity(_run_config(["dense"], dense=other_model)) != score_identity(dense)
    no_stemming = {**BM25_CONFIG, "analyzer": {**BM25_CONFIG["analyzer"], "stemming": False}}
    assert score_identity(_run_config(["bm25"], bm25=no_stemming)) != \
        score_identity(_run_config(["bm25"], bm25=BM25_CONFIG))
    weighted = _run_config(["bm25", "dense", "fusion"], bm25=BM25_CONFIG, dense=DENSE_CONFIG,
                           fusion={"method": "weighted", "weights": {"bm25": 0.5, "dense": 0.5}})
    assert score_identity(weighted) != score_identity({**weighted, "retrieval": {
        **weighted["retrieval"], "fusion": {"method": "weighted", "weights": {"bm25": 0.3, "dense": 0.7}}}})
    # chunking, depth and the final cut change which chunks score, not what a score means
    assert score_identity({**dense, "chunker": {"name": "fixed"}, "depth": 10, "final_k": 3}) == score_identity(dense)


# Over the mini corpus: two no_answer questions, one that BM25 finds words for and one it finds nothing for.
LEXICAL_JUDGMENTS = [
    {"query_id": "a-backup", "query": "how do I run an online backup", "category": "normal", "form": "match",
     "hard_class": "normal",
     "gold": [{"doc": "ops/backup.rst", "quote": "Run a backup with the online backup command."}]},
    {"query_id": "a-cache", "query": "how is the page cache size set", "category": "normal", "form": "match",
     "hard_class": "normal", "gold": [{"doc": "storage/cache.txt", "quote": "Its size is set with cache_size"}]},
    {"query_id": "a-page", "query": "how many bytes is every page", "category": "normal", "form": "match",
     "hard_class": "normal", "gold": [{"doc": "storage/design.md", "quote": "Every page is 4096 bytes."}]},
    {"query_id": "a-wal", "query": "write-ahead log readers writer", "category": "normal", "form": "match",
     "hard_class": "normal", "gold": [{"doc": "storage/design.md", "quote": "WAL mode allows concurrent readers"}]},
    {"query_id": "n-retention", "query": "retention period of disk", "category": "no_answer", "form": "gap",
     "hard_class": "normal", "gold": []},
    {"query_id": "n-tulips", "query": "when should tulips be planted", "category": "no_answer", "form": "gap",
     "hard_class": "normal", "gold": []},
]


def _judgments_file(path, items):
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")
    return path


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_dense_calibration_applied_to_a_bm25_run_is_refused(tmp_path, mini_corpus, mini_judgments):
    from click.testing import CliRunner

    from assay.runs.abstention import fit_and_store
    from assay.cli import cli
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse

    path = tmp_path / "wh.duckdb"
    with Warehouse.open(path) as wh:
        fitted = run(wh, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120))
        cal_id, data = fit_and_store(wh, fitted.run_id)
        stored = wh.con.execute("SELECT pipeline, stage, score_identity, judgments_hash FROM calibrations").fetchall()
    assert stored == [("dense", "final", canonical_json(data["score_identity"]), fitted.judgments.sha256)]
    assert data["score_identity"]["stage"] == "dense"

    result = CliRunner().invoke(cli, ["run", "--corpus", str(mini_corpus), "--judgments", str(mini_judgments),
                                      "--calibration", cal_id, "--warehouse", str(path)])
    assert result.exit_code == 1
    model = data["score_identity"]["config"]["embedding"]
    assert result.stderr.splitlines()[-1] == (
        f"error: calibration {cal_id} was fitted on run {fitted.run_id} (pipeline dense), whose final scores are "
        f"cosine scores of {model['model']} (onnx {model['onnx_sha256'][:12]}); this run (pipeline bm25) produces "
        "BM25 scores (k1 1.2, b 0.75, analyzer: lowercase, stopwords, stemming), another scale, so its "
        "probabilities would mean nothing here. Fit one on a run of this pipeline: "
        "`assay run --pipeline bm25 ...`, then `assay calibrate RUN_ID`")
    with Warehouse.open(path, read_only=True) as wh:  # refused before any question: nothing written
        assert wh.con.execute("SELECT COUNT(*) FROM runs").fetchall() == [(1,)]


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_the_same_pipeline_is_accepted_and_an_in_sample_fit_says_so(tmp_path, mini_corpus, mini_judgments):
    from assay.runs.abstention import fit_and_store
    from assay.present.report import build_report, render
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse

    other = _judgments_file(tmp_path / "other.jsonl", LEXICAL_JUDGMENTS[:4] + LEXICAL_JUDGMENTS[5:])
    with Warehouse.open(tmp_path / "wh.duckdb") as wh:
        fitted = run(wh, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120))
        cal_id, _ = fit_and_store(wh, fitted.run_id)
        # another chunking is the same scale
        same = run(wh, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=200, calibration=cal_id))
        elsewhere = run(wh, mini_corpus, other, RunOptions("dense", calibration=cal_id))
        same_text = render(build_report(wh, same.run_id), "table")
        elsewhere_text = render(build_report(wh, elsewhere.run_id), "table")
    assert same.stats["calibration"]["in_sample"] is True
    assert same.stats["calibration"]["fitted_on_run"] == fitted.run_id
    assert (f"calibration {cal_id} was fitted on run {fitted.run_id} over these questions: in-sample, so its "
            "abstention figures are optimistic; fit on other questions for an honest figure") in same_text.splitlines()
    assert elsewhere.stats["calibration"]["in_sample"] is False
    assert "in-sample" not in elsewhere_text and f"calibration {cal_id} (threshold" in elsewhere_text


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_abstained_counts_only_what_the_calibration_emptied(tmp_path, mini_corpus):
    from assay.runs.abstention import fit_and_store
    from assay.present.report import build_report, render
    from assay.runs.runner import RunOptions, run
    from assay.store.warehouse import Warehouse

    judgments = _judgments_file(tmp_path / "lexical.jsonl", LEXICAL_JUDGMENTS)
    with Warehouse.open(tmp_path / "wh.duckdb") as wh:
        fitted = run(wh, mini_corpus, judgments, RunOptions())
        cal_id, data = fit_and_store(wh, fitted.run_id)
        applied = run(wh, mini_corpus, judgments, RunOptions(calibration=cal_id))
        had_hits = {q for (q,) in wh.con.execute(
            "SELECT DISTINCT query_id FROM hits WHERE run_id = ? AND stage = 'bm25'", [applied.run_id]).fetchall()}
        empty = {q for (q,) in wh.con.execute(
            "SELECT query_id FROM run_queries WHERE run_id = ? AND n_results = 0", [applied.run_id]).fetchall()}
        text = render(build_report(wh, applied.run_id), "table")
    # BM25 finds nothing for the tulips on its own; the calibration empties the retention question
    assert data["n_no_hits"] == 1 and empty - had_hits == {"n-tulips"}
    assert "n-retention" in empty & had_hits
    stats = applied.stats["calibration"]
    assert (stats["abstained"], stats["no_results"]) == (len(empty & had_hits), 1)
    assert (f"calibration {cal_id} (threshold {data['threshold']:.3f}): abstained on {stats['abstained']} "
            "questions that had results; 1 returned nothing on their own") in text.splitlines()


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_calibration_stored_before_score_identities_uses_its_run_or_is_refused(tmp_path, mini_corpus,
                                                                                 mini_judgments):
    from assay.runs.abstention import fit_and_store
    from assay.core.errors import ConfigError
    from assay.runs.runner import RunOptions, load_calibration, run
    from assay.store.warehouse import Warehouse

    with Warehouse.open(tmp_path / "wh.duckdb") as wh:
        fitted = run(wh, mini_corpus, mini_judgments, RunOptions("dense", chunk_size=120))
        cal_id, data = fit_and_store(wh, fitted.run_id)
        wh.con.execute("UPDATE calibrations SET pipeline = NULL, stage = NULL, score_identity = NULL, "
                       "judgments_hash = NULL")
        old = load_calibration(wh, cal_id)
        assert (old["score_identity"], old["pipeline"], old["judgments_hash"]) == \
            (data["score_identity"], "dense", fitted.judgments.sha256)
        with pytest.raises(ConfigError, match=f"calibration {cal_id} was fitted on run {fitted.run_id} "
                                              r"\(pipeline dense\)"):
            run(wh, mini_corpus, mini_judgments, RunOptions("bm25", calibration=cal_id))
        wh.con.execute("DELETE FROM runs WHERE run_id = ?", [fitted.run_id])
        with pytest.raises(ConfigError, match=f"calibration {cal_id} does not record what its scores were .* "
                                              f"run {fitted.run_id}, which it was fitted on, is no longer in"):
            load_calibration(wh, cal_id)


# --- the no-hit questions count in the choice of threshold (module docstring) ----------------------------------


def test_answerable_questions_without_hits_move_the_threshold_up():
    # With hits: answerable at probabilities 0.6 and 0.9, no_answer at 0.3 and 0.7. Counted alone, balanced accuracy
    # is 0.5, 0.75, 0.5, 0.75, 0.5 at t = 0.3, 0.6, 0.7, 0.9, inf: t = 0.6 (the lower of the tie). Two answerable
    # questions with no hits (p = 0, never kept) make N+ = 4: t = 0.6 keeps 2 of 4 and abstains on 1 of 2 (0.5),
    # t = 0.9 keeps 1 of 4 and abstains on both (0.625), the others 0.25, 0.375, 0.5: t = 0.9.
    with_hits, labels = [0.3, 0.6, 0.7, 0.9], [0, 1, 0, 1]
    assert best_threshold(with_hits, labels) == (0.6, 0.75)
    assert best_threshold(with_hits + [0.0, 0.0], labels + [1, 1]) == (0.9, 0.625)


def test_calibrate_chooses_its_threshold_counting_the_no_hit_questions():
    # The same questions through calibrate: the fit sees the four with hits (a > 0, so probabilities keep the
    # scores' order) and the threshold is chosen over all six, so it is the probability of the 0.9 question, not of
    # the 0.6 one that the four with hits alone would choose.
    result = calibrate(list("abcdef"), [0.3, 0.6, 0.7, 0.9, None, None], [0, 1, 0, 1, 1, 1])
    probs = platt_predict(result.a, result.b, [0.3, 0.6, 0.7, 0.9])
    assert result.a > 0 and list(probs) == sorted(probs)
    assert result.threshold == probs[3]
    assert result.in_sample == {"tp": 1, "fn": 3, "tn": 2, "fp": 0, "tpr": 0.25, "tnr": 1.0,
                                "balanced_accuracy": 0.625}
    assert (result.n, result.n_answerable, result.n_no_answer, result.n_no_hits) == (6, 4, 2, 2)
    # the same four questions without the two that found nothing: the threshold is the 0.6 question's probability
    alone = calibrate(list("abcd"), [0.3, 0.6, 0.7, 0.9], [0, 1, 0, 1])
    assert alone.threshold == platt_predict(alone.a, alone.b, [0.6])[0]
    assert alone.in_sample == {"tp": 2, "fn": 0, "tn": 1, "fp": 1, "tpr": 1.0, "tnr": 0.5, "balanced_accuracy": 0.75}
