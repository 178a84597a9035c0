"""Quote resolution on a 1 MB document, plain text and Markdown: building the normalised views
(once per document, then cached), finding a quote in them, and the nearest passage to an edited
quote and to an unrelated one (what a quote that is not found costs).

    .venv/bin/python bench/quote_speed.py
"""

from __future__ import annotations

import random
import time

SIZE = 1_000_000


def document(rng: random.Random, words: list[str], markdown: bool) -> str:
    parts, size = [], 0
    while size < SIZE:
        out = []
        for _ in range(rng.randint(40, 120)):
            word, r = rng.choice(words), rng.random()
            if markdown and r < 0.03:
                word = f"**{word}**"
            elif markdown and r < 0.05:
                word = f"*{word}*"
            elif markdown and r < 0.06:
                word = f"`{word}`"
            elif markdown and r < 0.07:
                word = f"[{word}](https://example.org/{word})"
            elif r < 0.08:
                word = f"\u201c{word}\u201d"
            elif r < 0.09:
                word += "\u2019s"
            out.append(word + ("\n" if rng.random() < 0.08 else ""))
        paragraph = ("## " + rng.choice(words) + "\n\n" if markdown else "") + " ".join(out) + "\n\n"
        parts.append(paragraph)
        size += len(paragraph)
    return "".join(parts)[:SIZE]


def timed(fn, *args):
    started = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - started


def main() -> None:
    from assay.inputs.judgments.markup import markup_syntax
    from assay.inputs.judgments.nearest import nearest_passage
    from assay.inputs.judgments.normalize import views
    from assay.inputs.judgments.resolve import find_quote

    rng = random.Random(3)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(5000)]
    for doc_id in ("big.txt", "big.md"):
        text = document(rng, words, doc_id.endswith(".md"))
        start = text.index(" ", 700_000) + 1
        quote = text[start:text.index(" ", start + 120)]
        built, t_views = timed(views, text, markup_syntax(doc_id))
        found, t_find = timed(find_quote, text, quote, doc_id)
        edited = quote[:50] + "X" + quote[51:]
        near, t_near = timed(nearest_passage, text, edited, doc_id)
        far, t_far = timed(nearest_passage, text, "an entirely different sentence about nothing at all here", doc_id)
        print(f"{doc_id}: {len(text):,} characters, {len(built)} view(s) built in {t_views:.2f} s; "
              f"find_quote {t_find * 1000:.1f} ms ({len(found)} found); nearest passage: edited quote "
              f"{t_near * 1000:.0f} ms (similarity {near.similarity:.2f}), unrelated {t_far * 1000:.0f} ms "
              f"(similarity {far.similarity:.2f})")


if __name__ == "__main__":
    main()
