"""Context budgets and the merging of overlapping text on their edges (sql/measures/span_context.sql, the
budget_hits view): a result whose pieces fill the budget exactly although its text runs on past its last
piece (trailing spaces belong to no piece), a result that starts exactly at the budget next to a gold span
that straddles its first character, a result inside an earlier one after a shorter one ended, results and
gold spans that start at one character, and text of no length. Checked against
tests/measures/test_span.py's computation over sets of characters."""

import pytest

from assay.store.tokens import token_spans
from assay.inputs.chunking import Chunk
from assay.measures.compute import per_query
from assay.measures.registry import NO_CUTOFF, parse_measure
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic
from test_span_measures import REF
from world import opened

TEXT = ("alpha beta gamma delta epsilon zeta eta theta iota kappa " * 20)[:DOC_LEN]
FIRST = Chunk("e.md", 0, 0, 11, TEXT[0:11])     # 'alpha beta ': two pieces, then a space of no piece
SECOND = Chunk("e.md", 1, 17, 36, TEXT[17:36])  # 'delta epsilon zeta ': starts at the budget of 2
EMPTY = Chunk("e.md", 2, 40, 40, "")        # a result with no text
BIG, INNER, LATER = (Chunk("e.md", 3 + i, s, e, TEXT[s:e]) for i, (s, e) in enumerate(((0, 200), (10, 20), (50, 60))))
SHORT, LONG = Chunk("e.md", 6, 300, 320, TEXT[300:320]), Chunk("e.md", 7, 300, 340, TEXT[300:340])
ids = lambda *chunks: [c.chunk_id for c in chunks]  # noqa: E731
QUESTIONS = [QuerySpec("trailing", [("e.md", 3, 11, 1)], ids(FIRST, SECOND)),
             QuerySpec("straddle", [("e.md", 14, 20, 2), ("e.md", 3, 5, 1)], ids(FIRST, SECOND)),
             # the third result lies inside the first, after the second ended: one stretch of text, not two
             QuerySpec("nested", [("e.md", 55, 58, 1)], ids(BIG, INNER, LATER)),
             # two results (and two gold spans) start at one character, after a gap: one stretch each
             QuerySpec("samestart", [("e.md", 3, 5, 1), ("e.md", 305, 310, 2), ("e.md", 305, 330, 1)],
                       ids(FIRST, SHORT, LONG))]
# gold with no text (a whole document that has none): nothing retrieved, or only a result with no text
NO_TEXT = [QuerySpec("emptygold", [("e.md", 5, 5, 1)], []),
           QuerySpec("emptyboth", [("e.md", 40, 40, 1)], [EMPTY.chunk_id])]
QUESTIONS += [QuerySpec("touchend", [("e.md", 11, 16, 1)], ids(FIRST)),  # gold starts where the result ends
              QuerySpec("onechar", [("e.md", 100, 101, 1)], [])]           # one character of gold, none retrieved
# gold with no text inside a result: no recall (nothing to cover), no precision gained, but the result that
# holds its place is credited by nDCG, as a result is for any gold entry it overlaps
INSIDE = QuerySpec("emptyinside", [("e.md", 5, 5, 1)], ids(FIRST))


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    syn = Synthetic(["e.md"], [FIRST, SECOND, EMPTY, BIG, INNER, LATER, SHORT, LONG], QUESTIONS + NO_TEXT + [INSIDE])
    wh = opened(tmp_path_factory, "budget-edges", lambda wh: write_synthetic(wh, syn, texts={"e.md": TEXT}))
    yield wh, syn
    wh.close()


def test_the_text_is_where_the_edges_need_it():
    pieces = token_spans([TEXT])[0]
    assert [p for p in pieces if p[0] < 11] == [(0, 5), (6, 10)]  # FIRST: two pieces, ending before its end
    assert [i for i, p in enumerate(pieces) if p[0] == 17] == [3]  # SECOND starts with the fourth piece


@pytest.mark.parametrize("family", ["SpanRecall", "SpanPrecision", "SpanIoU", "Success", "nDCG"])
@pytest.mark.parametrize("budget", [1, 2, 3, 5, 1000])
def test_budget_edges_match_character_sets(wh, family, budget):
    wh, syn = wh
    tokens = {"e.md": token_spans([TEXT])[0]}
    got = per_query(wh, "synthetic-run", parse_measure(f"{family}@{budget}tok"))
    want = {(q.query_id, "chunk"): REF.expected(syn, tokens, q, NO_CUTOFF, budget)[family] for q in QUESTIONS}
    if family in ("Success", "nDCG"):  # text of no length overlaps nothing
        want.update({(q.query_id, "chunk"): 0.0 for q in NO_TEXT})
    # FIRST holds [0, 11) from a budget of 2 pieces, [0, 5) from 1
    want[("emptyinside", "chunk")] = {"SpanPrecision": 0.0, "SpanIoU": 0.0, "Success": 0.0,
                                      "nDCG": 1.0 if budget >= 2 else 0.0}.get(family)
    if family == "SpanRecall":
        del want[("emptyinside", "chunk")]
    # the span measures leave out a question with no text on either side (no length to divide by)
    assert got == pytest.approx(want, abs=1e-12)
