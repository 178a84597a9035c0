"""What an embedding model never saw: texts longer than its maximum length, counted with its own tokenizer.

A transformer embeds at most ``max_length`` word pieces, the model's special tokens ([CLS], [SEP])
included; the tokenizer drops the rest of a longer text without a word. A dense run counts, for its
chunks and for its questions, how many were cut and how much of their text was never embedded, in
word pieces (the model's unit) and in characters (the reader's: from the end of the last embedded
piece to the end of the text). The counts are stored in the run's ``stats`` (``truncation``, keyed by
the stage that embeds), shown by the report, and `assay run` warns when more than ``WARN_SHARE`` of the
chunks or questions were cut.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

WARN_SHARE = 0.05  # more than this share of texts cut: `assay run` says so on stderr
BATCH = 2048  # texts tokenized at once: bounded memory on large corpora


@dataclass(frozen=True)
class Truncation:
    texts: int  # texts embedded
    cut: int  # texts longer than the maximum length
    pieces: int  # word pieces of all texts (the prefix and special tokens not counted)
    pieces_lost: int  # word pieces past the maximum length
    chars: int  # characters of all texts
    chars_lost: int  # characters from the end of the last embedded word piece to the end of each cut text

    def as_dict(self) -> dict:
        return asdict(self)


def count(tokenizer, texts: list[str], max_length: int, prefix: str = "") -> Truncation:
    """How ``texts`` fare embedded as ``prefix + text`` at ``max_length`` by a model with ``tokenizer``.

    ``tokenizer`` is the model's own (a ``tokenizers.Tokenizer``); a copy without truncation or padding
    is used, so every piece is counted. The pieces kept are ``max_length`` less the special tokens the
    tokenizer adds, as its truncation does.
    """
    from tokenizers import Tokenizer

    full = Tokenizer.from_str(tokenizer.to_str())
    full.no_truncation()
    full.no_padding()
    keep = max_length - full.num_special_tokens_to_add(False)
    start = len(prefix)
    n_cut = pieces = pieces_lost = chars = chars_lost = 0
    for first in range(0, len(texts), BATCH):
        batch = texts[first:first + BATCH]
        for text, enc in zip(batch, full.encode_batch([prefix + t for t in batch], add_special_tokens=False)):
            offsets = enc.offsets
            mine = sum(1 for s, _ in offsets if s >= start)  # the text's pieces, not the prefix's
            pieces += mine
            chars += len(text)
            if len(offsets) > keep:
                n_cut += 1
                pieces_lost += len(offsets) - keep
                chars_lost += len(text) - max(0, offsets[keep - 1][1] - start)
    return Truncation(len(texts), n_cut, pieces, pieces_lost, chars, chars_lost)


def _share(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "0.0%"


def describe(record: dict) -> str:
    """One stage's record (``stats["truncation"]["dense"]``) in words, for the report."""
    chunks = record.get("chunks") or {}
    text = (f"{chunks.get('cut', 0)} of {chunks.get('texts', 0)} chunks cut at {record['max_length']} word pieces "
            f"(model limit {record['model_limit']}): {_share(chunks.get('chars_lost', 0), chunks.get('chars', 0))} "
            f"of chunk characters, {_share(chunks.get('pieces_lost', 0), chunks.get('pieces', 0))} of word pieces "
            "never embedded")
    queries = record.get("queries")
    if queries is not None:
        text += f"; {queries['cut']} of {queries['texts']} questions cut"
    return text


def warning(model: str, record: dict) -> str | None:
    """The `warning:` line for a stage's record when more than ``WARN_SHARE`` of its chunks or questions were
    cut, else None."""
    lines = []
    more = (f"or a larger max_length (up to {record['model_limit']}: --max-length, or max_length in the "
            "pipeline's table of assay.toml)" if record["max_length"] < record["model_limit"]
            else f"(max_length is already the model's limit, {record['model_limit']})")
    for what, unit, fix in (("chunks", "chunk", f"use smaller chunks (--chunk-size) {more}"),
                            ("queries", "question", f"shorten the questions {more}")):
        r = record.get(what)
        if not r or not r["texts"] or r["cut"] / r["texts"] <= WARN_SHARE:
            continue
        lines.append(f"warning: {r['cut']} of {r['texts']} {unit}s ({_share(r['cut'], r['texts'])}) are longer than "
                     f"{model}'s max_length of {record['max_length']} word pieces and were cut: "
                     f"{_share(r['chars_lost'], r['chars'])} of the {unit} text (characters) was never embedded; {fix}")
    return "\n".join(lines) or None
