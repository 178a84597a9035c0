"""`assay compare` (assay.verdicts.comparison): the configuration difference, the refusal to pair runs over
other questions or documents, the paired rows on every path (SQL, a brief warehouse, an Ibis-only source), and
the text, pinned whole.

The runs of the warehouse tests (20 questions q000-q019, odd ones category=easy, even ones category=hard; every
question's relevant document is d0.md, judged whole):

    run  unit                          rank of the first relevant result (0: not retrieved)
    a    100-character chunks          A_RANKS: Success@1 = 9/20
    d    whole documents (chunker      D_RANKS (the document's place: 1 or 2): Success@1 = 15/20
         "document")
    e    as a, but other judgments (hash k...) and depth 50, doc_depth 5, seed 3: not comparable with a
"""

from __future__ import annotations

import dataclasses
import math
import os
import subprocess
import sys
from datetime import datetime, timedelta

import pytest
from scipy.stats import chi2
from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

from assay.verdicts import comparison
from assay.measures.registry import parse_measure
from assay.inputs.chunking import Chunk
from assay.verdicts.comparison import NotComparable, compare, paired_rows, render, run_identity
from assay.store.warehouse import Warehouse
from assay.runs.sinks import store_run


# compare's pure parts: the configuration difference and how it is said, the refusal to pair runs over
# other questions or documents, the kind of test a measure gets, p-values as printed, and the text printed


def test_config_diff_is_every_differing_setting_sorted_with_whole_sections_once():
    """config_diff lists every differing setting as (dotted key, a, b), sorted, a section present on one side only
    as one entry."""
    a = {"chunker": {"size": 800, "overlap": 0}, "pipeline": "bm25", "rerank": {"model": "x"}, "depth": 100}
    b = {"chunker": {"size": 400, "overlap": 0}, "pipeline": "hybrid", "fusion": {"k": 60}, "depth": 100}
    assert comparison.config_diff(a, b) == [("chunker.size", 800, 400), ("fusion", "<absent>", {"k": 60}),
                                            ("pipeline", "bm25", "hybrid"), ("rerank", {"model": "x"}, "<absent>")]
    assert comparison.config_diff(a, a) == []
    assert comparison.config_diff({"x": {"y": {"z": 1}}}, {"x": {"y": {"z": 2}}}, "top") == [("top.x.y.z", 1, 2)]


def test_describe_diff_writes_strings_quoted_and_the_rest_as_json():
    """describe_diff writes strings quoted and other values as JSON with sorted keys, and says when the
    configurations are identical."""
    assert comparison.describe_diff([]) == ["configurations are identical"]
    assert comparison.describe_diff([("a", "bm25", "hybrid"), ("b", "<absent>", {"k": 60, "a": [1]}),
                                     ("c", None, True)]) == [
        "a: 'bm25' -> 'hybrid'", 'b: <absent> -> {"a": [1], "k": 60}', "c: null -> true"]


def identity(run_id, judgments="j" * 16, corpus="c" * 16, config=None):
    return {"run_id": run_id, "judgments_hash": judgments, "corpus_hash": corpus, "config": config or {"k": 1}}


def test_runs_over_other_questions_or_documents_are_not_comparable():
    """Runs over other judgments or another corpus are refused with NotComparable, the message naming both hashes
    and the configuration difference; a configuration difference alone is comparable."""
    comparison.check_comparable(identity("a"), identity("b", config={"k": 2}))  # only the configuration differs
    with pytest.raises(comparison.NotComparable) as error:
        comparison.check_comparable(identity("a"), identity("b", judgments="J" * 16, corpus="C" * 16,
                                                            config={"k": 2}))
    assert str(error.value) == (
        "runs a and b are not comparable: judgments differ (jjjjjjjjjjjj vs JJJJJJJJJJJJ); corpora differ "
        "(cccccccccccc vs CCCCCCCCCCCC). Their questions or documents are not the same, so no paired comparison "
        "is meaningful. Configuration difference:\n  k: 1 -> 2")
    with pytest.raises(comparison.NotComparable) as error:
        comparison.check_comparable(identity("a"), identity("b", corpus="C" * 16))
    assert "not comparable: corpora differ (cccccccccccc vs CCCCCCCCCCCC). Their" in str(error.value)
    assert str(error.value).endswith("Configuration difference:\n  configurations are identical")


def test_a_hit_measure_is_tested_as_binary_and_a_graded_one_as_continuous():
    """metric_kind: a 0/1 hit measure gets the binary test, a graded one the continuous test."""
    assert comparison.metric_kind(parse_measure("Success@3")) == "binary"
    assert comparison.metric_kind(parse_measure("nDCG@10")) == "continuous"


def test_p_values_print_to_three_places_and_below_a_thousandth_as_such():
    """p-values print to three places, and below 0.001 as '<0.001'."""
    assert [comparison._p(v) for v in (0.0009999, 0.001, 0.0426, 1.0)] == ["<0.001", "0.001", "0.043", "1.000"]


def row(metric, level, slice_, a, b, p):
    return {"metric": metric, "level": level, "slice": slice_, "n": 4, "a": a, "b": b, "delta": b - a,
            "ci_low": b - a - 0.25, "ci_high": b - a + 0.25, "test": "mcnemar", "p_value": p, "p_holm": min(1, 2 * p),
            "n_tests": 2}


RESULT = {"a": {"run_id": "A1", "pipeline": "bm25"}, "b": {"run_id": "B1", "pipeline": "hybrid"},
          "config_diff": [{"key": "pipeline", "a": "bm25", "b": "hybrid"}],
          "units": {"warning": "A retrieves chunks, B documents"},
          "rows": [row("Success@3", "doc", "all", 0.5, 0.75, 0.0004), row("RR@10", "chunk", "all", 0.5, 0.25, 0.2),
                   row("Success@3", "doc", "form=gap", 0.25, 0.5, 0.3), row("RR@10", "chunk", "form=gap", 0, 0, 1)],
          "flips": {"metric": "Success@3", "level": "doc", "won": [{"query_id": "007", "rank_a": None, "rank_b": 2}],
                    "lost": [{"query_id": "12", "rank_a": 1, "rank_b": None}]}}


def test_render_is_the_difference_the_tables_and_the_flips_exactly():
    """Every line of `assay compare`'s text: the overall table, the flips (all-digit query ids kept left, - for no
    relevant result retrieved), the headline metrics by slice (RR@10 is not one)."""
    assert comparison.render(RESULT) == (
        "compare A A1 (bm25)  ->  B B1 (hybrid)\n\nconfiguration difference:\n  pipeline: 'bm25' -> 'hybrid'\n\n"
        "WARNING: A retrieves chunks, B documents\n\n"
        "all questions: change = B - A; each 95% interval inverts the paired test beside it, so it excludes 0 "
        "exactly when p < 0.05; p (Holm) corrects p over the 2 tests of this table; MDC: the smallest true change "
        "this test finds 80% of the time at alpha 0.05 (- where n or the spread cannot tell):\n\n"
        "metric     level      A      B  change            95% CI  test          p  p (Holm)  n  MDC\n"
        "-------------------------------------------------------------------------------------------\n"
        "Success@3  doc    0.500  0.750  +0.250  [+0.000, +0.500]  mcnemar  <0.001    <0.001  4  -\n"
        "RR@10      chunk  0.500  0.250  -0.250  [-0.500, +0.000]  mcnemar   0.200     0.400  4  -\n\n"
        "questions that flipped on Success@3 (doc level): 1 won, 1 lost (rank of the first relevant result in A and "
        "in B; - when none was retrieved)\n\n"
        "flip  query_id  rank in A  rank in B\n"
        "------------------------------------\n"
        "won   007               -          2\n"
        "lost  12                1          -\n\n"
        "by slice (headline metrics; each interval inverts its p; p (Holm) corrects p within each slice over all "
        "its tests):\n\n"
        "slice     metric     level  n      A      B  change            95% CI      p  p (Holm)\n"
        "--------------------------------------------------------------------------------------\n"
        "form=gap  Success@3  doc    4  0.250  0.500  +0.250  [+0.000, +0.500]  0.300     0.600\n\n"
        "JSON output (--format json) has every metric for every slice.\n")


def test_render_without_a_unit_warning_or_flips_says_neither():
    """Without a unit warning or flipped questions the text has neither, says 0 won and 0 lost, and counts 0 tests
    for an empty table."""
    calm = dict(RESULT, units={"a": "chunk", "b": "chunk", "warning": None},
                flips={"metric": "Success@3", "level": "doc", "won": [], "lost": []})
    text = comparison.render(calm)
    assert "WARNING" not in text and "flip  query_id" not in text
    assert "questions that flipped on Success@3 (doc level): 0 won, 0 lost (rank" in text
    assert comparison.render(dict(calm, units={})) == text
    assert "p (Holm) corrects p over the 0 tests" in comparison.render(dict(calm, rows=[]))


# `assay compare` on a real warehouse, pinned whole (runs a, d and e: see the module docstring)


HIT = Chunk("d0.md", 0, 0, 100, "x" * 100)


OTHERS = [Chunk("d1.md", j, 100 * j, 100 * j + 100, "x" * 100) for j in range(10)]  # d1.md, in order


WHOLE = [Chunk("d0.md", 0, 0, DOC_LEN, "x" * DOC_LEN), Chunk("d1.md", 1, 0, DOC_LEN, "x" * DOC_LEN)]


T0 = datetime(2026, 1, 1)


A_RANKS = [1, 2, 0, 1, 3, 1, 5, 0, 1, 2, 1, 10, 1, 4, 0, 1, 2, 1, 7, 1]


D_RANKS = [1, 2, 1, 1, 0, 1, 1, 2, 1, 1, 1, 0, 1, 1, 2, 1, 1, 1, 1, 1]


class _Held:
    """Takes the record write_synthetic builds, so its start, chunk set, judgments and config can be set."""

    def hold(self, record):
        self.record = record


def write(wh, run_id, ranks, minutes, whole=False, other=False):
    """A run whose question i finds d0.md's chunk at rank ranks[i] after chunks of d1.md (0: only d1.md's first
    chunk); with ``whole``, the two whole documents (d0.md first, or second after d1.md; 0: d1.md alone)."""
    syn = Synthetic(["d0.md", "d1.md"], WHOLE if whole else [HIT, *OTHERS])
    for i, rank in enumerate(ranks):
        if whole:
            ranking = [WHOLE[1].chunk_id, WHOLE[0].chunk_id][2 - rank:] if rank else [WHOLE[1].chunk_id]
        else:
            ranking = [c.chunk_id for c in OTHERS[:rank - 1]] + [HIT.chunk_id] if rank else [OTHERS[0].chunk_id]
        syn.queries.append(QuerySpec(f"q{i:03d}", [("d0.md", None, None, 1)], ranking,
                                     category="easy" if i % 2 else "hard"))
    held = _Held()
    write_synthetic(held, syn, run_id=run_id)
    record, started = held.record, T0 + timedelta(minutes=minutes)
    config = dict(record.config, chunker={"name": "document"}) if whole else record.config
    if other:
        config = dict(config, depth=50, doc_depth=5, seed=3)
        record = dataclasses.replace(record, judgments=dataclasses.replace(record.judgments, sha256="k" * 64))
    store_run(wh, dataclasses.replace(record, started_at=started, finished_at=started, config=config,
                                     chunk_set=("w" if whole else "s") * 64))


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare2") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write(wh, "a", A_RANKS, 0)
        write(wh, "d", D_RANKS, 1, whole=True)
        write(wh, "e", A_RANKS, 2, other=True)
    return path


@pytest.fixture(scope="module")
def result(path):
    with Warehouse.open(path, read_only=True) as wh:
        return compare(wh, "a", "d")


WARNING = ("retrieval units differ: A ranks synthetic chunks (mean 100 characters, 1 tokens), B ranks whole documents "
           "(mean 1,000 characters, 1 tokens); chunk-level hit measures (Success, R, P, RR, nDCG, AP at chunk level) "
           "credit any result that overlaps a gold span, so the larger unit scores higher without being better "
           "context; read SpanRecall/SpanPrecision and the @Ntok measures (e.g. SpanRecall@1000tok, "
           "Success@1000tok), which charge each result for its size (docs/chunking.md)")


def test_compare_gives_every_key_and_the_units_of_both_runs(result):
    """compare's result: every key but the rows exactly, the units of both runs and the warning that they differ.

    Kills: in _units, each key ('a', 'b', 'warning') misspelt or upper-cased (x__units__mutmut_14-19); in
    compare, the 'units' key misspelt or upper-cased (x_compare__mutmut_86, 87). Every key but the rows, exactly
    (no seed and no sample count since issue 25: the score test draws nothing): run d ranks whole documents, run
    a 100-character chunks."""
    assert result["verdict"]["sentence"] + "\n\n" == VERDICT
    assert {k: v for k, v in result.items() if k not in ("rows", "verdict")} == {
        "a": {"run_id": "a", "pipeline": "synthetic"}, "b": {"run_id": "d", "pipeline": "synthetic"},
        "config_diff": [{"key": "chunker.name", "a": "synthetic", "b": "document"}],
        "alpha": 0.05,
        "flips": {"metric": "Success@3", "level": "doc",
                  "won": [{"query_id": "q002", "rank_a": None, "rank_b": 1},
                          {"query_id": "q007", "rank_a": None, "rank_b": 2},
                          {"query_id": "q014", "rank_a": None, "rank_b": 2}],
                  "lost": [{"query_id": "q004", "rank_a": 2, "rank_b": None},
                           {"query_id": "q011", "rank_a": 2, "rank_b": None}]},
        "units": {"a": {"kind": "chunks", "label": "synthetic chunks", "mean_chars": 100.0, "mean_tokens": 1.0,
                        "n_results": 47},
                  "b": {"kind": "documents", "label": "whole documents", "mean_chars": 1000.0, "mean_tokens": 1.0,
                        "n_results": 23},
                  "warning": WARNING},
        # the synthetic results cost a token or two: neither run fills the standard 1,000-token budget
        "budgets": {m: {"a": {"budget_filled": False, "tokens_available": pytest.approx(2.35),
                              "shortfall": pytest.approx(997.65), "questions_short": 20},
                        "b": {"budget_filled": False, "tokens_available": pytest.approx(1.15),
                              "shortfall": pytest.approx(998.85), "questions_short": 20}}
                    for m in ("SpanRecall@1000tok", "Success@1000tok", "nDCG@1000tok")}}
    assert len(result["rows"]) == 22 * 5  # 22 (measure, level) pairs of the default measures, 5 slices each


# the verdict in words on Success@3 (doc), the first of the headline measures compare has: 17 of 20 against 18,
# 3 won and 2 lost (flips below); MDC by hand: sd = sqrt(20/19 (5/20 - (1/20)**2)) = 0.5104, (t(0.975, 19) 2.0930 +
# t(0.8, 19) 0.8610) * 0.5104 / sqrt(20) = 0.337
VERDICT = ("B cannot be told from A on Success@3 (doc): the change is +0.050 (from 0.850 to 0.900; 95% CI of the "
           "change -0.195 to +0.292, p = 0.655; Holm over 22 tests: p = 1.000). With 20 questions, changes smaller "
           "than 0.337 cannot be told from noise (80% power at alpha 0.05). Elsewhere in the table, 2 other changes "
           "survive Holm's correction: SpanRecall@1000tok (chunk) +0.815 (Holm p < 0.001), SpanIoU@10 (chunk) +0.749 "
           "(Holm p < 0.001).\n\n")


HEAD = """\
compare A a (synthetic)  ->  B d (synthetic)

configuration difference:
  chunker.name: 'synthetic' -> 'document'
"""


TABLES = """\

all questions: change = B - A; each 95% interval inverts the paired test beside it, so it excludes 0 exactly \
when p < 0.05; p (Holm) corrects p over the 22 tests of this table; MDC: the smallest true change this test \
finds 80% of the time at alpha 0.05 (- where n or the spread cannot tell):

metric                level      A      B  change            95% CI  test              p  p (Holm)   n    MDC
-------------------------------------------------------------------------------------------------------------
Success@1             chunk  0.450  0.750  +0.300  [+0.091, +0.519]  tango-score   0.014     0.286  20  0.311
Success@1             doc    0.450  0.750  +0.300  [+0.091, +0.519]  tango-score   0.014     0.286  20  0.311
Success@3             chunk  0.650  0.900  +0.250  [-0.011, +0.488]  tango-score   0.059     0.752  20  0.363
Success@3             doc    0.850  0.900  +0.050  [-0.195, +0.292]  tango-score   0.655     1.000  20  0.337
Success@10            chunk  0.850  0.900  +0.050  [-0.195, +0.292]  tango-score   0.655     1.000  20  0.337
Success@10            doc    0.850  0.900  +0.050  [-0.195, +0.292]  tango-score   0.655     1.000  20  0.337
R@10                  chunk  0.850  0.900  +0.050  [-0.195, +0.292]  tango-score   0.655     1.000  20  0.337
R@10                  doc    0.850  0.900  +0.050  [-0.195, +0.292]  tango-score   0.655     1.000  20  0.337
P@5                   chunk  0.150  0.180  +0.030  [-0.020, +0.081]  score         0.209     1.000  20  0.065
P@5                   doc    0.170  0.180  +0.010  [-0.042, +0.062]  score         0.676     1.000  20  0.067
RR@10                 chunk  0.576  0.825  +0.249  [+0.059, +0.444]  score         0.016     0.286  20  0.255
RR@10                 doc    0.650  0.825  +0.175  [-0.007, +0.361]  score         0.058     0.752  20  0.246
nDCG@10               chunk  0.642  0.845  +0.203  [+0.017, +0.393]  score         0.035     0.528  20  0.250
nDCG@10               doc    0.702  0.845  +0.142  [-0.047, +0.335]  score         0.124     1.000  20  0.257
AP                    chunk  0.576  0.825  +0.249  [+0.059, +0.444]  score         0.016     0.286  20  0.255
AP                    doc    0.650  0.825  +0.175  [-0.007, +0.361]  score         0.058     0.752  20  0.246
SpanRecall@1000tok !  chunk  0.085  0.900  +0.815  [+0.630, +1.000]  score        <0.001    <0.001  20  0.208
Success@1000tok !     chunk  0.850  0.900  +0.050  [-0.195, +0.292]  tango-score   0.655     1.000  20  0.337
nDCG@1000tok !        chunk  0.642  0.845  +0.203  [+0.017, +0.393]  score         0.035     0.528  20  0.250
SpanPrecision@10      chunk  0.576  0.825  +0.249  [+0.059, +0.444]  score         0.016     0.286  20  0.255
SpanIoU@10            chunk  0.076  0.825  +0.749  [+0.567, +0.948]  score        <0.001    <0.001  20  0.214
FalseAbstain          query  0.000  0.000  +0.000  [-0.161, +0.161]  tango-score   1.000     1.000  20      -

! A: SpanRecall@1000tok, Success@1000tok, nDCG@1000tok (budget not filled: mean 2 tokens retrieved, shortfall \
998; 20 of 20 questions short)
! B: SpanRecall@1000tok, Success@1000tok, nDCG@1000tok (budget not filled: mean 1 tokens retrieved, shortfall \
999; 20 of 20 questions short)
! a question whose results hold fewer tokens than the budget is scored on all of them: the figure is that of a \
smaller context.

questions that flipped on Success@3 (doc level): 3 won, 2 lost (rank of the first relevant result in A and in \
B; - when none was retrieved)

flip  query_id  rank in A  rank in B
------------------------------------
won   q002              -          1
won   q007              -          2
won   q014              -          2
lost  q004              2          -
lost  q011              2          -

by slice (headline metrics; each interval inverts its p; p (Holm) corrects p within each slice over all its tests):

slice              metric      level   n      A      B  change            95% CI      p  p (Holm)
-------------------------------------------------------------------------------------------------
category=easy      Success@3   doc    10  0.900  0.900  +0.000  [-0.342, +0.342]  1.000     1.000
category=hard      Success@3   doc    10  0.800  0.900  +0.100  [-0.280, +0.454]  0.564     1.000
form=match         Success@3   doc    20  0.850  0.900  +0.050  [-0.195, +0.292]  0.655     1.000
hard_class=normal  Success@3   doc    20  0.850  0.900  +0.050  [-0.195, +0.292]  0.655     1.000
category=easy      Success@10  chunk  10  0.900  0.900  +0.000  [-0.342, +0.342]  1.000     1.000
category=hard      Success@10  chunk  10  0.800  0.900  +0.100  [-0.280, +0.454]  0.564     1.000
form=match         Success@10  chunk  20  0.850  0.900  +0.050  [-0.195, +0.292]  0.655     1.000
hard_class=normal  Success@10  chunk  20  0.850  0.900  +0.050  [-0.195, +0.292]  0.655     1.000
category=easy      nDCG@10     chunk  10  0.698  0.826  +0.128  [-0.106, +0.377]  0.216     1.000
category=hard      nDCG@10     chunk  10  0.585  0.863  +0.278  [-0.071, +0.659]  0.094     1.000
form=match         nDCG@10     chunk  20  0.642  0.845  +0.203  [+0.017, +0.393]  0.035     0.528
hard_class=normal  nDCG@10     chunk  20  0.642  0.845  +0.203  [+0.017, +0.393]  0.035     0.528

JSON output (--format json) has every metric for every slice.
"""


def test_render_of_a_real_comparison_is_its_whole_text(result):
    """The text of a real comparison, whole: the verdict, the table, the unit warning, the flips and the headline
    measures by slice.

    Kills: the headline set's Success@10 or nDCG@10 entries, name or level, misspelt or in another case
    (x_render__mutmut_191-200): their rows by slice would go missing. The text pinned whole, the unit warning
    included."""
    assert render(result) == VERDICT + HEAD + "\nWARNING: " + WARNING + "\n" + TABLES


def test_render_of_a_result_without_units_has_no_warning(result):
    """A result that holds no units (as written before units were recorded) prints without a warning.

    Kills: `result.get("units", None)` and `result.get("units", )` (x_render__mutmut_37, 39): a result that
    holds no units (as written before units were recorded) would raise instead of printing without a warning."""
    assert render({k: v for k, v in result.items() if k != "units"}) == VERDICT + HEAD + TABLES


ONE_ROW = HEAD + "\nWARNING: " + WARNING + "\n" + """\

all questions: change = B - A; each 95% interval inverts the paired test beside it, so it excludes 0 exactly \
when p < 0.05; p (Holm) corrects p over the 1 tests of this table; MDC: the smallest true change this test \
finds 80% of the time at alpha 0.05 (- where n or the spread cannot tell):

metric                level      A      B  change            95% CI  test        p  p (Holm)   n    MDC
-------------------------------------------------------------------------------------------------------
SpanRecall@1000tok !  chunk  0.085  0.900  +0.815  [+0.630, +1.000]  score  <0.001    <0.001  20  0.208

! A: SpanRecall@1000tok (budget not filled: mean 2 tokens retrieved, shortfall 998; 20 of 20 questions short)
! B: SpanRecall@1000tok (budget not filled: mean 1 tokens retrieved, shortfall 999; 20 of 20 questions short)
! a question whose results hold fewer tokens than the budget is scored on all of them: the figure is that of a \
smaller context.

questions that flipped on Success@3 (doc level): 3 won, 2 lost (rank of the first relevant result in A and in \
B; - when none was retrieved)

flip  query_id  rank in A  rank in B
------------------------------------
won   q002              -          1
won   q007              -          2
won   q014              -          2
lost  q004              2          -
lost  q011              2          -

by slice (headline metrics; each interval inverts its p; p (Holm) corrects p within each slice over all its tests):

slice  metric  level  n  A  B  change  95% CI  p  p (Holm)
----------------------------------------------------------

JSON output (--format json) has every metric for every slice.
"""


def test_render_of_a_comparison_over_one_measure_at_one_level(path):
    """A comparison over one measure at one level prints its one row, counting one test.

    Kills: the number of tests read from the second overall row (`overall[1]`, x_render__mutmut_115): with one
    measure at one level there is only the first."""
    with Warehouse.open(path, read_only=True) as wh:
        one = compare(wh, "a", "d", [parse_measure("SpanRecall@1000tok")])
    assert render(one) == (
        "B is better than A on SpanRecall@1000tok (chunk) by 0.815 (from 0.085 to 0.900; 95% CI of the change +0.630 "
        "to +1.000, p < 0.001; Holm over 1 test: p < 0.001); the largest gain is in category=hard questions (+0.820 "
        "over 10). With 20 questions, changes smaller than 0.208 cannot be told from noise (80% power at alpha "
        "0.05).\n\n") + ONE_ROW


# (metric, level, slice, n, a, b, delta, ci_low, ci_high, test, p_value, p_holm, n_tests) of a against d, in order:
# Success@1's 0/1 changes by Tango's score interval with McNemar's test (k won, none lost: p = chi2.sf(k, 1), checked
# against scipy below), RR@10's graded ones by the score interval (assay.verdicts.inference)
ROWS = [
    ('Success@1', 'chunk', 'all', 20, 0.45, 0.75, 0.3, 0.0905372945313349, 0.5189728183535234, 'tango-score', 0.014305878435429633, 0.05722351374171853, 4),
    ('Success@1', 'chunk', 'category=easy', 10, 0.5, 0.7, 0.2, -0.133039359835467, 0.5098375284633582, 'tango-score', 0.1572992070502852, 0.5400695263023002, 4),
    ('Success@1', 'chunk', 'category=hard', 10, 0.4, 0.8, 0.4, 0.011454080191955181, 0.6873262302663417, 'tango-score', 0.04550026389635844, 0.18200105558543375, 4),
    ('Success@1', 'chunk', 'form=match', 20, 0.45, 0.75, 0.3, 0.0905372945313349, 0.5189728183535234, 'tango-score', 0.014305878435429633, 0.05722351374171853, 4),
    ('Success@1', 'chunk', 'hard_class=normal', 20, 0.45, 0.75, 0.3, 0.0905372945313349, 0.5189728183535234, 'tango-score', 0.014305878435429633, 0.05722351374171853, 4),
    ('Success@1', 'doc', 'all', 20, 0.45, 0.75, 0.3, 0.0905372945313349, 0.5189728183535234, 'tango-score', 0.014305878435429633, 0.05722351374171853, 4),
    ('Success@1', 'doc', 'category=easy', 10, 0.5, 0.7, 0.2, -0.133039359835467, 0.5098375284633582, 'tango-score', 0.1572992070502852, 0.5400695263023002, 4),
    ('Success@1', 'doc', 'category=hard', 10, 0.4, 0.8, 0.4, 0.011454080191955181, 0.6873262302663417, 'tango-score', 0.04550026389635844, 0.18200105558543375, 4),
    ('Success@1', 'doc', 'form=match', 20, 0.45, 0.75, 0.3, 0.0905372945313349, 0.5189728183535234, 'tango-score', 0.014305878435429633, 0.05722351374171853, 4),
    ('Success@1', 'doc', 'hard_class=normal', 20, 0.45, 0.75, 0.3, 0.0905372945313349, 0.5189728183535234, 'tango-score', 0.014305878435429633, 0.05722351374171853, 4),
    ('RR@10', 'chunk', 'all', 20, 0.5763095238095237, 0.825, 0.24869047619047624, 0.05852313068968732, 0.44448854111954056, 'score', 0.015856145321342354, 0.05722351374171853, 4),
    ('RR@10', 'chunk', 'category=easy', 10, 0.635, 0.8, 0.16500000000000004, -0.07507123652874856, 0.42378407147869895, 'score', 0.13501738157557505, 0.5400695263023002, 4),
    ('RR@10', 'chunk', 'category=hard', 10, 0.5176190476190476, 0.85, 0.33238095238095233, -0.02494086766887707, 0.7273984688090369, 'score', 0.06179116190570905, 0.18200105558543375, 4),
    ('RR@10', 'chunk', 'form=match', 20, 0.5763095238095237, 0.825, 0.24869047619047624, 0.05852313068968732, 0.44448854111954056, 'score', 0.015856145321342354, 0.05722351374171853, 4),
    ('RR@10', 'chunk', 'hard_class=normal', 20, 0.5763095238095237, 0.825, 0.24869047619047624, 0.05852313068968732, 0.44448854111954056, 'score', 0.015856145321342354, 0.05722351374171853, 4),
    ('RR@10', 'doc', 'all', 20, 0.65, 0.825, 0.175, -0.007106645246422485, 0.36106890353247556, 'score', 0.05785253452273819, 0.05785253452273819, 4),
    ('RR@10', 'doc', 'category=easy', 10, 0.7, 0.8, 0.1, -0.15086522183546897, 0.36220633392634793, 'score', 0.34820167941312624, 0.5400695263023002, 4),
    ('RR@10', 'doc', 'category=hard', 10, 0.6, 0.85, 0.25, -0.07810447186066188, 0.6064572520878595, 'score', 0.10558779671958748, 0.18200105558543375, 4),
    ('RR@10', 'doc', 'form=match', 20, 0.65, 0.825, 0.175, -0.007106645246422485, 0.36106890353247556, 'score', 0.05785253452273819, 0.05785253452273819, 4),
    ('RR@10', 'doc', 'hard_class=normal', 20, 0.65, 0.825, 0.175, -0.007106645246422485, 0.36106890353247556, 'score', 0.05785253452273819, 0.05785253452273819, 4),
]


KEYS = ("metric", "level", "slice", "n", "a", "b", "delta", "ci_low", "ci_high", "test", "p_value", "p_holm",
        "n_tests")


class IbisOnly:
    """A source that offers only an Ibis backend (as the Spark lake reader does): no DuckDB connection, no
    ``query``, so only the Ibis expressions can read it."""

    def __init__(self, path):
        import ibis

        self.ibis = ibis.duckdb.connect(str(path), read_only=True)


@pytest.fixture(params=["sql", "brief", "ibis-only"])
def source(request, path):
    if request.param == "brief":
        yield Warehouse.brief(path)
    elif request.param == "ibis-only":
        held = IbisOnly(path)
        yield held
        held.ibis.disconnect()
    else:
        with Warehouse.open(path, read_only=True) as wh:
            yield wh


def test_paired_rows_are_every_slice_in_order_with_the_same_p_values_on_every_path(path, source):
    """paired_rows gives every slice of every measure and level in order, with the same floats read with SQL, from a
    brief warehouse and from an Ibis-only source.

    Kills, in paired_tests' Ibis path (a brief warehouse, or a source with only an Ibis backend): `pairs`
    None (x_paired_tests__mutmut_5); `or` for `and` before the direct read (6: a source without a DuckDB
    connection read with SQL fails); opened(None) (23); `fetched` None (24); each argument of to_pyarrow and
    paired None or dropped (25, 27-37); the run ids misspelt (38-41); the grouping key and the appended pair None,
    or their fields misspelt or upper-cased, setdefault without a default (42-58). On every path: "all" sorted
    last instead of first (`s == "all"`, 69). Every path gives the same rows, float for float: the score test
    draws nothing, so the same values give the same figures."""
    with Warehouse.open(path, read_only=True) as wh:
        a, d = run_identity(wh, "a"), run_identity(wh, "d")
    rows = paired_rows(source, a, d, [parse_measure("Success@1"), parse_measure("RR@10")], True)
    assert [tuple(r[k] for k in KEYS) for r in rows] == ROWS
    assert all(set(r) == set(KEYS) | {"sd_change", "mdc", "mdc_reason"} for r in rows)
    for r in rows[:10]:  # McNemar's p (no continuity correction) from scipy: delta * n won, none lost
        assert r["p_value"] == pytest.approx(chi2.sf(round(r["delta"] * r["n"]), 1), rel=1e-12)


def mdc(won: int, lost: int, n: int = 20) -> dict:
    """The spread of 0/1 changes and the MDC by hand: sd**2 = n/(n-1) (share discordant - net share**2), (t(0.975,
    19) 2.093024 + t(0.8, 19) 0.860951) sd / sqrt(n)."""
    sd = math.sqrt(n / (n - 1) * ((won + lost) / n - ((won - lost) / n) ** 2))
    return {"sd_change": pytest.approx(sd), "mdc": pytest.approx((2.093024 + 0.860951) * sd / math.sqrt(n), rel=1e-6),
            "mdc_reason": None}


def test_a_measure_not_stored_is_computed_from_the_warehouse_on_the_ibis_path(path):
    """A measure not stored with the runs is computed through the warehouse, on the SQL and the Ibis path alike.

    Kills: paired() given None for the warehouse (x_paired_tests__mutmut_26): Success@2 is not among the
    measures stored with a run, so the Ibis path computes its values through the warehouse (the default
    measures, stored, never need it). A brief warehouse gives the rows a Warehouse gives: 12 and 18 of 20
    questions hit within rank 2 (chunk level), 17 and 18 (document level)."""
    with Warehouse.open(path, read_only=True) as wh:
        a, d = run_identity(wh, "a"), run_identity(wh, "d")
        direct = paired_rows(wh, a, d, [parse_measure("Success@2")], False)
    expected = [
        {"metric": "Success@2", "level": "chunk", "slice": "all", "n": 20, "a": 0.6, "b": 0.9, "delta": 0.3,
         "ci_low": 0.0905372945313349, "ci_high": 0.5189728183535234, "test": "tango-score",
         "p_value": 0.014305878435429633, "p_holm": 0.028611756870859265, "n_tests": 2, **mdc(6, 0)},
        {"metric": "Success@2", "level": "doc", "slice": "all", "n": 20, "a": 0.85, "b": 0.9, "delta": 0.05,
         "ci_low": -0.19461929263029287, "ci_high": 0.29229651022363884, "test": "tango-score",
         "p_value": 0.654720846018577, "p_holm": 0.654720846018577, "n_tests": 2, **mdc(3, 2)}]
    assert direct == expected
    assert paired_rows(Warehouse.brief(path), a, d, [parse_measure("Success@2")], False) == expected
    # McNemar's p (no continuity correction) from scipy: 6 won, none lost; 3 won, 2 lost
    assert [r["p_value"] for r in direct] == pytest.approx([chi2.sf(6, 1), chi2.sf(1 / 5, 1)], rel=1e-12)


def test_compare_on_a_duckdb_warehouse_reads_the_pairs_with_sql_without_ibis(path):
    """compare on a DuckDB warehouse reads the pairs with SQL: a fresh interpreter does not import Ibis.

    Kills: holds_duckdb asked of None (x_paired_tests__mutmut_7): a warehouse holding a DuckDB connection
    would be read through the Ibis expression, importing Ibis (and pandas), which the direct SQL path exists to
    skip (assay.analytics.direct). A fresh interpreter compares a with d and has not imported Ibis."""
    code = ("import sys\nfrom assay.verdicts.comparison import compare\nfrom assay.warehouse import Warehouse\n"
            f"with Warehouse.open({str(path)!r}, read_only=True) as wh:\n"
            "    rows = compare(wh, 'a', 'd')['rows']\n"
            "print(len(rows), 'ibis' in sys.modules)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert (out.returncode, out.stdout) == (0, "110 False\n"), out.stderr


def test_runs_over_other_judgments_are_refused_with_every_configuration_line(path):
    """Runs over other judgments are refused, the message listing every configuration difference on a line of its own.

    Kills: the configuration difference's lines joined by 'XX\\n  XX' (x_check_comparable__mutmut_51): a and
    e differ in three settings, one line each."""
    with Warehouse.open(path, read_only=True) as wh, pytest.raises(NotComparable) as error:
        compare(wh, "a", "e")
    assert str(error.value) == (
        "runs a and e are not comparable: judgments differ (jjjjjjjjjjjj vs kkkkkkkkkkkk). Their questions or "
        "documents are not the same, so no paired comparison is meaningful. Configuration difference:\n"
        "  depth: 100 -> 50\n  doc_depth: 10 -> 5\n  seed: 0 -> 3")


def test_compare_on_a_duckdb_warehouse_pairs_the_values_with_sql(tmp_path, monkeypatch):
    """On a Warehouse, compare pairs the values with assay.analytics.direct (SQL), never through the Ibis expression
    (checked in this process).

    Kills x_paired_tests__mutmut_7 (holds_duckdb asked of None): on a Warehouse, compare pairs the values
    with assay.analytics.direct.paired_values (SQL), not through the Ibis expression. Checked in this process
    (test_compare_on_a_duckdb_warehouse_reads_the_pairs_with_sql_without_ibis checks the same in a fresh
    interpreter, which mutmut does not follow)."""
    from assay.analytics import direct, pairing
    from assay.verdicts.comparison import compare
    from assay.store.warehouse import Warehouse
    from assay.inputs.chunking import Chunk
    from synthetic import DOC_LEN, QuerySpec, Synthetic, write_synthetic

    path = tmp_path / "w.duckdb"
    d0, d1 = (Chunk(f"d{i}.md", i, 0, DOC_LEN, "x" * DOC_LEN).chunk_id for i in (0, 1))
    with Warehouse.open(path) as wh:
        for run_id, first in (("a", 1), ("b", 0)):
            syn = Synthetic(["d0.md", "d1.md"], [Chunk(f"d{i}.md", i, 0, DOC_LEN, "x" * DOC_LEN) for i in (0, 1)])
            for i in range(6):
                ranking = [d0, d1] if (i + first) % 2 else [d1, d0]
                syn.queries.append(QuerySpec(f"q{i}", [("d0.md", None, None, 1)], ranking))
            write_synthetic(wh, syn, run_id=run_id)
    calls = []
    real = direct.paired_values

    def recording(*args, **kwargs):
        calls.append(args[1:3])
        return real(*args, **kwargs)

    def refused(*args, **kwargs):
        raise AssertionError("a DuckDB warehouse was paired through the Ibis expression")

    monkeypatch.setattr(direct, "paired_values", recording)
    monkeypatch.setattr(pairing, "paired", refused)
    with Warehouse.open(path, read_only=True) as wh:
        rows = compare(wh, "a", "b")["rows"]
    assert calls == [("a", "b")]
    assert rows and all(r["n"] == 6 for r in rows if r["slice"] == "all")
