import pytest

from assay.core.errors import ConfigError
from assay.retrieval.fusion import fuse
from assay.retrieval.fusion.rrf import rrf
from assay.retrieval.fusion.weighted import weighted_sum
from assay.retrieval import Hit


def hits(*ids, scores=None):
    scores = scores or [float(len(ids) - i) for i in range(len(ids))]
    return [Hit(c, c.split("#")[0], s) for c, s in zip(ids, scores)]


def test_rrf_formula():
    out = rrf({"bm25": hits("a#1", "b#1", "c#1"), "dense": hits("c#1", "a#1")}, k=60)
    got = {h.chunk_id: h.score for h in out}
    assert got["a#1"] == pytest.approx(1 / 61 + 1 / 62)
    assert got["c#1"] == pytest.approx(1 / 63 + 1 / 61)
    assert got["b#1"] == pytest.approx(1 / 62)
    assert [h.chunk_id for h in out] == ["a#1", "c#1", "b#1"]


def test_rrf_ties_break_by_chunk_id():
    # each chunk is first in one list: equal fused scores, ordered by chunk id
    out = rrf({"bm25": hits("z#1"), "dense": hits("m#1")})
    assert [h.chunk_id for h in out] == ["m#1", "z#1"]
    assert out[0].score == out[1].score


def test_rrf_empty_lists():
    assert rrf({"bm25": [], "dense": []}) == []
    only = rrf({"bm25": [], "dense": hits("a#1", "b#1")})
    assert [h.chunk_id for h in only] == ["a#1", "b#1"]


def test_rrf_k_changes_scores_not_single_list_order():
    lists = {"bm25": hits("a#1", "b#1"), "dense": hits("b#1", "c#1")}
    assert [h.chunk_id for h in rrf(lists, k=1)] == ["b#1", "a#1", "c#1"]
    assert rrf(lists, k=1)[0].score == pytest.approx(1 / 3 + 1 / 2)


def test_weighted_sum_normalizes_each_list():
    out = weighted_sum({"bm25": hits("a#1", "b#1", scores=[10.0, 0.0]),
                        "dense": hits("b#1", "c#1", scores=[0.9, 0.5])}, {"bm25": 0.5, "dense": 0.5})
    got = {h.chunk_id: h.score for h in out}
    assert got == pytest.approx({"a#1": 0.5, "b#1": 0.5, "c#1": 0.0})
    assert [h.chunk_id for h in out] == ["a#1", "b#1", "c#1"]  # a and b tie: chunk id decides


def test_weighted_sum_weights_and_constant_lists():
    out = weighted_sum({"bm25": hits("a#1", scores=[3.0]), "dense": hits("b#1", "c#1", scores=[0.7, 0.7])},
                       {"bm25": 0.2, "dense": 0.8})
    got = {h.chunk_id: h.score for h in out}
    assert got == pytest.approx({"a#1": 0.2, "b#1": 0.8, "c#1": 0.8})
    assert weighted_sum({"bm25": [], "dense": []}, {}) == []


def test_unknown_fusion():
    with pytest.raises(ConfigError, match="unknown fusion 'max'"):
        fuse("max", {}, {})
