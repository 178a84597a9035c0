"""The recursive chunker against the one it replaced, side by side in one process: MB/s and the ratio.

Two text kinds (characters counted as code points, MB = 10**6 of them):

- prose: SciFact's 5,183 abstracts as ``assay import`` stores them (title, blank line, abstract),
  from ../shared/collections/scifact when that is there, else generated prose (a title line and
  paragraphs of sentences ending in . ! or ?, about as long), said in the output;
- no punctuation: paragraphs of one long line of words and no . ! or ? (transcripts, OCR, tables
  flattened to text), 1,500 documents of 600-2,400 characters.

Chunkers, each over every document, making the ``Chunk`` objects a run gets:

- before: tests/inputs/chunking/reference_recursive.py (the chunker as it was, kept verbatim) with the
  frozen-dataclass Chunk it had (constructing those is part of what it cost);
- C: today's chunker with its compiled code (src/assay/inputs/chunking/_recursive.c), when built;
- python: today's chunker without it (python_spans), what runs where no C compiler was at hand.

Each repeat times every chunker on the same batches of 250 documents, one after another in turn
(the best of 3 passes a batch, summed), in CPU seconds of this process (``time.process_time``: one
thread, so less moved by other processes than wall time). It prints MB/s and each ratio to
"before", then the ratios' spread (min-max) over the repeats and the load average seen
(``/proc/loadavg``, 1/5/15 minutes, before and after). The spans are checked equal to "before"'s
on the first repeat. The last lines time the fixed and document chunkers with today's Chunk
against the frozen-dataclass Chunk (the one change they share).

Run: .venv/bin/python bench/chunk_speed.py [--repeats 3] [--size 800] [--overlap 0]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "inputs" / "chunking"))

import reference_recursive  # noqa: E402  (the old chunker, verbatim)

from assay.inputs.chunking import chunk_document  # noqa: E402
from assay.inputs.chunking import document as document_module  # noqa: E402
from assay.inputs.chunking import fixed as fixed_module  # noqa: E402
from assay.inputs.chunking.recursive import compiled_spans, python_spans  # noqa: E402

SCIFACT = ROOT.parent / "shared" / "collections" / "scifact" / "corpus.jsonl"
BATCH, PASSES = 250, 3
WORDS = ("cell protein expression patients study analysis gene risk disease treatment model data effect "
         "response level increased reduced associated human clinical results mice tissue signal pathway "
         "the of and in to with for by on from between after during").split()


@dataclass(frozen=True)
class DataclassChunk:
    """The Chunk before this change: a frozen dataclass (same fields)."""

    doc_id: str
    ordinal: int
    start: int
    end: int
    text: str


def dataclass_chunks(doc_id, text, spans):
    return [DataclassChunk(doc_id, i, s, e, text[s:e]) for i, (s, e) in enumerate(spans)]


# -- texts ------------------------------------------------------------------------------------------
def prose() -> tuple[str, list[str]]:
    if SCIFACT.exists():
        from assay.inputs.formats.beir import read_corpus
        from assay.store.imports import _doc_text

        return "SciFact (5,183 abstracts)", [_doc_text(d.title, d.text) for d in read_corpus(SCIFACT)]
    rng = random.Random(7)

    def sentence():
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 30))).capitalize() + rng.choice("..!?")

    docs = []  # shaped like SciFact's: about 1,500 characters, nine in ten longer than 800
    for _ in range(5183):
        title = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."
        paragraphs = [" ".join(sentence() for _ in range(rng.randint(5, 12))) for _ in range(rng.choice((1, 1, 1, 2)))]
        docs.append(title + "\n\n" + "\n\n".join(paragraphs))
    return f"generated prose ({len(docs)} documents; {SCIFACT} not found)", docs


def no_punctuation() -> tuple[str, list[str]]:
    rng = random.Random(11)
    docs = []
    for _ in range(1500):
        length = rng.randint(600, 2400)
        paragraphs = []
        while sum(map(len, paragraphs)) < length:
            paragraphs.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(60, 300))))
        docs.append("\n\n".join(paragraphs)[:length].strip())
    return "no punctuation (1,500 generated documents)", docs


# -- timing ---------------------------------------------------------------------------------------
def loadavg() -> str:
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "?"


def timed(runners: dict, docs: list[str]) -> dict[str, float]:
    """CPU seconds per runner over all documents: per batch the best of PASSES, runners in turn."""
    total = dict.fromkeys(runners, 0.0)
    for i in range(0, len(docs), BATCH):
        batch = docs[i:i + BATCH]
        best = dict.fromkeys(runners, float("inf"))
        for _ in range(PASSES):
            for name, run in runners.items():
                t = time.process_time()
                run(batch)
                best[name] = min(best[name], time.process_time() - t)
        for name in runners:
            total[name] += best[name]
    return total


def recursive_runners(size: int, overlap: int) -> dict:
    before = reference_recursive.RecursiveChunker(size, overlap)
    compiled = compiled_spans()

    def run_before(docs):
        reference_recursive.chunk_document = dataclass_chunks  # the old Chunk, as it was built then
        try:
            return [before.chunk("d", t) for t in docs]
        finally:
            reference_recursive.chunk_document = chunk_document

    runners = {"before": run_before}
    if compiled is not None:
        runners["C"] = lambda docs: [chunk_document("d", t, compiled(t, size, overlap)) for t in docs]
    runners["python"] = lambda docs: [chunk_document("d", t, python_spans(t, size, overlap)) for t in docs]
    return runners


def check_same(runners: dict, docs: list[str]) -> None:
    expected = [[(c.start, c.end) for c in chunks] for chunks in runners["before"](docs)]
    for name, run in runners.items():
        got = [[(c.start, c.end) for c in chunks] for chunks in run(docs)]
        if got != expected:
            raise SystemExit(f"{name}: spans differ from before's")


def other_chunkers() -> None:
    _, docs = no_punctuation()
    print("\nfixed and document chunkers, today's Chunk against the frozen dataclass (CPU s, ratio):")
    for label, module, chunker in (("fixed(800, 100)", fixed_module, fixed_module.FixedChunker(800, 100)),
                                   ("document", document_module, document_module.DocumentChunker())):
        def old(batch, module=module, chunker=chunker):
            module.chunk_document = dataclass_chunks
            try:
                return [chunker.chunk("d", t) for t in batch]
            finally:
                module.chunk_document = chunk_document

        times = timed({"dataclass Chunk": old, "today": lambda batch, c=chunker: [c.chunk("d", t) for t in batch]},
                      docs)
        print(f"  {label:16} dataclass Chunk {times['dataclass Chunk']:.3f} s  today {times['today']:.3f} s  "
              f"ratio {times['dataclass Chunk'] / times['today']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--size", type=int, default=800)
    parser.add_argument("--overlap", type=int, default=0)
    args = parser.parse_args()
    runners = recursive_runners(args.size, args.overlap)
    if "C" not in runners:
        print("the C code is not built (see hatch_build.py): timing the Python path only")
    print(f"recursive chunker, size {args.size}, overlap {args.overlap}; load average before: {loadavg()}")
    kinds = [prose(), no_punctuation()]
    ratios: dict[tuple[str, str], list[float]] = {}
    for label, docs in kinds:
        check_same(runners, docs[:1000])
    for repeat in range(1, args.repeats + 1):
        for label, docs in kinds:
            mb = sum(map(len, docs)) / 1e6
            times = timed(runners, docs)
            cells = [f"before {mb / times['before']:6.1f} MB/s"]
            for name in runners:
                if name != "before":
                    ratio = times["before"] / times[name]
                    ratios.setdefault((label, name), []).append(ratio)
                    cells.append(f"{name} {mb / times[name]:6.1f} MB/s ({ratio:5.1f}x)")
            print(f"repeat {repeat}  {label}: " + "  ".join(cells) + f"  [load {loadavg()}]")
    print("\nratio to before, min-max over repeats:")
    for (label, name), values in ratios.items():
        print(f"  {label} / {name}: {min(values):.1f}x - {max(values):.1f}x")
    other_chunkers()
    print(f"\nload average after: {loadavg()}")


if __name__ == "__main__":
    main()
