import pytest

from assay.core.errors import ConfigError
from assay.retrieval.fusion import METHODS, fuse
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


# fuse()'s dispatch and its defaults, the fixed order RRF sums in, weighted_sum's default weights and doc ids


def doc_hits(*ids, scores=None):
    """Hits whose document id is not their chunk id's prefix (doc-a for a#1), so a fused hit shows which id it kept."""
    scores = scores or [float(len(ids) - i) for i in range(len(ids))]
    return [Hit(c, "doc-" + c.split("#")[0], s) for c, s in zip(ids, scores)]


LISTS = {"bm25": doc_hits("a#1", "b#1", "c#1"), "dense": doc_hits("c#1", "a#1")}


def test_fuse_rrf_uses_k_60_unless_given():
    """fuse('rrf') uses k = 60 unless given."""
    assert fuse("rrf", LISTS, {}) == [Hit("a#1", "doc-a", 1 / 61 + 1 / 62), Hit("c#1", "doc-c", 1 / 63 + 1 / 61),
                                      Hit("b#1", "doc-b", 1 / 62)]
    assert fuse("rrf", LISTS, {"rrf_k": 1}) == [Hit("a#1", "doc-a", 1 / 2 + 1 / 3),
                                                Hit("c#1", "doc-c", 1 / 4 + 1 / 2), Hit("b#1", "doc-b", 1 / 3)]


def test_fuse_weighted_uses_the_weights_given_else_equal_shares():
    """fuse('weighted') uses the weights given, else equal shares."""
    # bm25 normalizes to a 1, b 0.5, c 0; dense to c 1, a 0
    assert fuse("weighted", LISTS, {}) == [Hit("a#1", "doc-a", 0.5), Hit("c#1", "doc-c", 0.5),
                                           Hit("b#1", "doc-b", 0.25)]
    assert fuse("weighted", LISTS, {"weights": None}) == fuse("weighted", LISTS, {})
    assert fuse("weighted", LISTS, {"weights": {"bm25": 0.75, "dense": 0.25}}) == [
        Hit("a#1", "doc-a", 0.75), Hit("b#1", "doc-b", 0.375), Hit("c#1", "doc-c", 0.25)]


def test_fuse_refuses_an_unknown_method_naming_the_known_ones():
    """fuse refuses an unknown method, naming the known ones."""
    assert METHODS == ("rrf", "weighted")
    with pytest.raises(ConfigError) as error:
        fuse("max", LISTS, {})
    assert str(error.value) == "unknown fusion 'max'; choose one of: rrf, weighted"


def test_rrf_sums_the_lists_in_name_order_whatever_the_dict_order():
    """1/61 + 1/61 + 1/62 summed in the order a, b, c differs in its last bit from c, b, a: the fused score is
    the name-ordered sum on every run, whatever order the lists were put in the dict."""
    lists = {"c": doc_hits("y#1", "x#1"), "b": doc_hits("x#1"), "a": doc_hits("x#1")}  # x: ranks 2, 1, 1
    by_name = ((0.0 + 1 / 61) + 1 / 61) + 1 / 62
    assert by_name != ((0.0 + 1 / 62) + 1 / 61) + 1 / 61
    assert rrf(lists)[0] == Hit("x#1", "doc-x", by_name)
    assert rrf(lists)[1] == Hit("y#1", "doc-y", 1 / 61)


def test_weighted_default_weight_is_one_share_per_list():
    """weighted_sum's default weight is one equal share per list."""
    three = {"a": doc_hits("p#1", "q#1"), "b": doc_hits("q#1", "p#1"), "c": doc_hits("r#1")}
    # a: p 1, q 0; b: q 1, p 0; c: r 1 (a single score normalizes to 1); each list weighs 1/3
    assert weighted_sum(three, {}) == [Hit("p#1", "doc-p", 1 / 3), Hit("q#1", "doc-q", 1 / 3),
                                       Hit("r#1", "doc-r", 1 / 3)]
    # a weight given for one list only: the others keep their share
    assert weighted_sum(three, {"c": 0.5}) == [Hit("r#1", "doc-r", 0.5), Hit("p#1", "doc-p", 1 / 3),
                                               Hit("q#1", "doc-q", 1 / 3)]


def test_weighted_normalizes_between_the_lowest_and_highest_score():
    """weighted_sum normalizes each list between its lowest and highest score."""
    out = weighted_sum({"only": doc_hits("a#1", "b#1", "c#1", scores=[7.0, 4.0, 3.0])}, {"only": 1.0})
    assert out == [Hit("a#1", "doc-a", 1.0), Hit("b#1", "doc-b", 0.25), Hit("c#1", "doc-c", 0.0)]
    assert weighted_sum({"only": doc_hits("a#1", "b#1", scores=[2.0, 2.0])}, {"only": 2.0}) == [
        Hit("a#1", "doc-a", 2.0), Hit("b#1", "doc-b", 2.0)]
    assert weighted_sum({"none": []}, {}) == []
