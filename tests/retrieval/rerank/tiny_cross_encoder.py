"""A tiny, real ONNX cross-encoder that fastembed loads like any other.

The score of a (query, passage) pair is the number of passage tokens that also
occur in the query, counting repeats in the passage: "paris is the capital of
france" scores 3 against "capital of france" (capital, of, france). Special
tokens ([CLS], [SEP], [PAD], [UNK]) never count, so words outside ``VOCAB`` add
nothing. Scores are whole numbers held as floats, so a test can predict each
one exactly, ties included.

The graph reads ``input_ids``, ``attention_mask`` and ``token_type_ids`` as a
BERT cross-encoder does (the segment ids tell query from passage) and writes
``logits`` of shape [batch, 1]. The tokenizer is a lower-casing WordPiece over
``VOCAB`` built with ``tokenizers``, so the fixture needs no download and no
package beyond ``onnx``.
"""

from __future__ import annotations

import json
from pathlib import Path

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = [
    "a", "capital", "cat", "city", "dog", "france", "germany", "is", "mat", "of",
    "on", "paris", "berlin", "river", "sat", "seine", "the", "what", "where",
]
VOCAB = SPECIAL_TOKENS + WORDS
FIRST_WORD_ID = len(SPECIAL_TOKENS)

OPSET = 17
IR_VERSION = 8  # onnxruntime reads older IR versions than the onnx package writes by default


def build_tiny_cross_encoder(dest: Path) -> Path:
    """Write model.onnx and the tokenizer files fastembed needs into ``dest``; return ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    _write_model(dest / "model.onnx")
    _write_tokenizer(dest)
    return dest


def fill_fastembed_cache(cache_dir: Path, hf_repo: str, model_file: str = "onnx/model.onnx") -> Path:
    """Lay the tiny model out in ``cache_dir`` as huggingface_hub caches ``hf_repo``; return the snapshot.

    fastembed then finds it offline under any registered model whose source is
    ``hf_repo`` (for ``Xenova/ms-marco-MiniLM-L-6-v2`` the repo is the same name).
    Real caches hold symlinks into a blob store; plain files resolve the same way.
    """
    repo_dir = Path(cache_dir) / ("models--" + hf_repo.replace("/", "--"))
    revision = "0" * 40
    snapshot = repo_dir / "snapshots" / revision
    build_tiny_cross_encoder(snapshot)
    if model_file != "model.onnx":
        (snapshot / model_file).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / "model.onnx").rename(snapshot / model_file)
    (repo_dir / "refs").mkdir(parents=True, exist_ok=True)
    (repo_dir / "refs" / "main").write_text(revision, encoding="utf-8")
    return snapshot


def _write_model(path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    batch_seq = ["batch", "seq"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, batch_seq)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])

    def const(name, data_type, values, dims=()):
        return helper.make_node("Constant", [], [name], value=helper.make_tensor(name, data_type, dims, values))

    nodes = [
        const("first_word_id", TensorProto.INT64, [FIRST_WORD_ID]),
        const("zero", TensorProto.INT64, [0]),
        const("one", TensorProto.INT64, [1]),
        const("no_tokens", TensorProto.FLOAT, [0.0]),
        const("axis_1", TensorProto.INT64, [1], dims=[1]),
        const("axis_2", TensorProto.INT64, [2], dims=[1]),
        # a token counts when it is a real word (not special, not [UNK]) and not padding
        helper.make_node("GreaterOrEqual", ["input_ids", "first_word_id"], ["is_word"]),
        helper.make_node("Equal", ["attention_mask", "one"], ["is_attended"]),
        helper.make_node("And", ["is_word", "is_attended"], ["counts"]),
        helper.make_node("Equal", ["token_type_ids", "zero"], ["in_query"]),
        helper.make_node("Equal", ["token_type_ids", "one"], ["in_passage"]),
        helper.make_node("And", ["counts", "in_query"], ["query_word"]),
        helper.make_node("And", ["counts", "in_passage"], ["passage_word"]),
        # same[b, i, j]: token i is a query word equal to token j
        helper.make_node("Unsqueeze", ["input_ids", "axis_2"], ["ids_i"]),
        helper.make_node("Unsqueeze", ["input_ids", "axis_1"], ["ids_j"]),
        helper.make_node("Equal", ["ids_i", "ids_j"], ["equal_ij"]),
        helper.make_node("Unsqueeze", ["query_word", "axis_2"], ["query_word_i"]),
        helper.make_node("And", ["equal_ij", "query_word_i"], ["same"]),
        helper.make_node("Cast", ["same"], ["same_f"], to=TensorProto.FLOAT),
        # token j is in the query when any query token i equals it
        helper.make_node("ReduceSum", ["same_f", "axis_1"], ["times_in_query"], keepdims=0),
        helper.make_node("Greater", ["times_in_query", "no_tokens"], ["in_query_j"]),
        helper.make_node("And", ["in_query_j", "passage_word"], ["shared"]),
        helper.make_node("Cast", ["shared"], ["shared_f"], to=TensorProto.FLOAT),
        helper.make_node("ReduceSum", ["shared_f", "axis_1"], ["logits"], keepdims=1),
    ]
    graph = helper.make_graph(nodes, "tiny_cross_encoder", inputs, [output])
    model = helper.make_model(
        graph, producer_name="assay-tests", opset_imports=[helper.make_opsetid("", OPSET)]
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(path))


def _write_tokenizer(dest: Path) -> None:
    from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece

    vocab = {token: i for i, token in enumerate(VOCAB)}
    tokenizer = Tokenizer(WordPiece(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tokenizer.add_special_tokens(SPECIAL_TOKENS)
    tokenizer.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]")
    tokenizer.save(str(dest / "tokenizer.json"))

    _write_json(dest / "tokenizer_config.json", {
        "model_max_length": 128, "pad_token": "[PAD]", "unk_token": "[UNK]",
        "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]", "do_lower_case": True,
    })
    _write_json(dest / "special_tokens_map.json", {
        "pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
        "sep_token": "[SEP]", "mask_token": "[MASK]",
    })
    _write_json(dest / "config.json", {
        "model_type": "bert", "architectures": ["BertForSequenceClassification"],
        "vocab_size": len(VOCAB), "pad_token_id": vocab["[PAD]"], "num_labels": 1,
    })


def _write_json(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")
