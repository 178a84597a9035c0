import hashlib
import shutil
import socket
import time

import pytest
from tiny_cross_encoder import build_tiny_cross_encoder, fill_fastembed_cache

from assay.core.errors import ConfigError, ModelNotAvailable
from assay.retrieval.rerank.cross_encoder import DEFAULT_MODEL, CrossEncoderReranker, rerank_hits
from assay.retrieval import Hit

TINY = "assay-test/tiny-cross-encoder"

# The tiny model scores a pair by how many passage words occur in the query (see tiny_cross_encoder).
QUERY = "What is the capital of France?"
PASSAGES = [
    "Paris is the capital of France.",  # is, the, capital, of, france
    "Berlin is the capital of Germany",  # is, the, capital, of
    "The cat sat on the mat",  # the, the
    "France, France!",  # france, france
    "Quite unknown words",  # none of them in the tiny vocabulary
    "",
]
EXPECTED = [5.0, 4.0, 2.0, 2.0, 0.0, 0.0]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


@pytest.fixture(scope="module")
def reranker(tiny_dir):
    return CrossEncoderReranker(TINY, model_path=tiny_dir)


@pytest.fixture
def no_network(monkeypatch):
    """Records and refuses every name lookup and connection, so a cache miss is proven to stay offline.

    Name lookup is guarded as well as connect: without DNS a download attempt
    fails in getaddrinfo before it ever connects (and fastembed then retries for ~40 s).
    """
    attempts = []

    def refuse(*args, **kwargs):
        attempts.append(args)
        raise OSError(f"network attempted: {args}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield attempts
    assert attempts == []


def test_tiny_model_scores_through_fastembed(reranker):
    assert reranker.rerank(QUERY, PASSAGES) == EXPECTED


def test_scores_are_deterministic_and_independent_of_batching(reranker, tiny_dir):
    small_batches = CrossEncoderReranker(TINY, model_path=tiny_dir, batch_size=2)
    assert small_batches.rerank(QUERY, PASSAGES) == EXPECTED
    assert reranker.rerank(QUERY, PASSAGES) == reranker.rerank(QUERY, PASSAGES)
    assert reranker.rerank(QUERY, list(reversed(PASSAGES))) == list(reversed(EXPECTED))


def test_rerank_of_no_texts_is_empty(reranker):
    assert reranker.rerank(QUERY, []) == []


def test_rerank_hits_keeps_top_n_and_breaks_ties_by_chunk_id(reranker):
    texts = {
        "c-mat": "the cat sat on the mat",  # 0
        "c-paris": "paris is the capital of france",  # 3
        "c-france": "france france",  # 2
        "c-berlin": "berlin is the capital of germany",  # 2
        "c-zzz": "paris is the capital of france",  # would score 3, but falls outside the top 4
    }
    first_stage = [
        Hit("c-zzz", "d5", 7.0),  # ties c-berlin at the cut and loses on chunk id
        Hit("c-berlin", "d2", 7.0),
        Hit("c-france", "d3", 7.5),
        Hit("c-mat", "d1", 9.0),
        Hit("c-paris", "d4", 8.0),
    ]
    reranked = rerank_hits(reranker, "capital of france", first_stage, texts, top_n=4)
    assert reranked == [
        Hit("c-paris", "d4", 3.0),
        Hit("c-berlin", "d2", 2.0),  # ties c-france, which ranked above it before reranking
        Hit("c-france", "d3", 2.0),
        Hit("c-mat", "d1", 0.0),
    ]
    assert rerank_hits(reranker, "capital of france", list(reversed(first_stage)), texts, top_n=4) == reranked


def test_rerank_hits_with_fewer_hits_than_top_n(reranker):
    texts = {"a": "the mat", "b": "capital of france"}
    hits = [Hit("a", "d1", 2.0), Hit("b", "d2", 1.0)]
    assert rerank_hits(reranker, "capital of france", hits, texts, top_n=10) == [
        Hit("b", "d2", 3.0),
        Hit("a", "d1", 0.0),
    ]


def test_rerank_hits_of_nothing_is_empty(reranker):
    assert rerank_hits(reranker, QUERY, [], {}, top_n=5) == []


def test_rerank_hits_refuses_a_depth_below_one(reranker):
    with pytest.raises(ConfigError, match="top_n"):
        rerank_hits(reranker, QUERY, [Hit("a", "d1", 1.0)], {"a": "x"}, top_n=0)


def test_identity_names_the_model_and_hashes_the_onnx_file(reranker, tiny_dir):
    expected = hashlib.sha256((tiny_dir / "model.onnx").read_bytes()).hexdigest()
    assert reranker.identity() == {"model": TINY, "onnx_sha256": expected}


def test_a_known_name_loads_from_a_directory_with_another_layout(tiny_dir):
    # fastembed registers Xenova/ms-marco-MiniLM-L-6-v2 with onnx/model.onnx; this directory has model.onnx
    local = CrossEncoderReranker(DEFAULT_MODEL, model_path=tiny_dir)
    assert local.rerank(QUERY, PASSAGES) == EXPECTED
    assert local.identity()["model"] == DEFAULT_MODEL


def test_named_model_loads_from_the_cache_without_network(tmp_path, monkeypatch, no_network):
    snapshot = fill_fastembed_cache(tmp_path / "cache", DEFAULT_MODEL)
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path / "cache"))
    cached = CrossEncoderReranker()
    assert cached.rerank(QUERY, PASSAGES) == EXPECTED
    expected = hashlib.sha256((snapshot / "onnx" / "model.onnx").read_bytes()).hexdigest()
    assert cached.identity() == {"model": DEFAULT_MODEL, "onnx_sha256": expected}


def test_missing_named_model_fails_fast_without_network(tmp_path, monkeypatch, no_network):
    cache = tmp_path / "empty-cache"
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(cache))
    started = time.monotonic()
    with pytest.raises(ModelNotAvailable) as caught:
        CrossEncoderReranker(DEFAULT_MODEL)
    # no_network proves no download was tried; a tried one would retry for ~40 s (the fixture's docstring)
    assert time.monotonic() - started < 30
    message = str(caught.value)
    assert DEFAULT_MODEL in message
    assert str(cache) in message
    assert "FASTEMBED_CACHE_PATH" in message
    assert f'TextCrossEncoder("{DEFAULT_MODEL}")' in message
    assert caught.value.exit_code == 4


def test_unknown_name_without_a_path_says_to_give_one(tmp_path, monkeypatch, no_network):
    monkeypatch.setenv("FASTEMBED_CACHE_PATH", str(tmp_path))
    with pytest.raises(ModelNotAvailable, match=r"'nobody/no-such-reranker' is not one fastembed knows.*model_path"):
        CrossEncoderReranker("nobody/no-such-reranker")


def test_model_path_without_onnx_file_names_the_path(tiny_dir, tmp_path):
    bare = tmp_path / "no-onnx"
    shutil.copytree(tiny_dir, bare)
    (bare / "model.onnx").unlink()
    with pytest.raises(ModelNotAvailable) as caught:
        CrossEncoderReranker(TINY, model_path=bare)
    assert str(bare) in str(caught.value)
    assert "model.onnx" in str(caught.value)


def test_model_path_that_does_not_exist(tmp_path):
    with pytest.raises(ModelNotAvailable, match="does not exist"):
        CrossEncoderReranker(TINY, model_path=tmp_path / "nowhere")


def test_model_path_with_a_corrupt_onnx_file(tiny_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_dir, broken)
    (broken / "model.onnx").write_bytes(b"not a protobuf")
    with pytest.raises(ModelNotAvailable, match=f"cannot load cross-encoder from {broken}"):
        CrossEncoderReranker(TINY, model_path=broken)


def test_batch_size_below_one_is_a_config_error(tiny_dir):
    with pytest.raises(ConfigError, match="batch size"):
        CrossEncoderReranker(TINY, model_path=tiny_dir, batch_size=0)
