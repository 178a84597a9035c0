"""eval-trec's C reader (_trec_read.c) against its twins on generated numbers and run lines: Python's float()
(correctly rounded, as the C code's strtod and DuckDB's cast are) for every score it reads, trec_eval's ranking
written in Python for the ranks it gives, and DuckDB's reading (what runs without the C code) for the measures.

Where the reader is not built in this checkout (a helper's worktree, a checkout never installed), it is compiled
here, from this checkout's source, by hatch_build.compile_extension into a scratch folder, with the flags an
install uses. The C tests skip only where it cannot be compiled (no C compiler or no Python headers), and say so.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
import shutil
import sys
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.measures import trec_eval, trec_tables
from assay.measures.trec_eval import evaluate_trec
from conftest import ROOT

SOURCE = Path("src", "assay", "measures", "_trec_read.c")
# The scores the C code reads itself (the module comment of _trec_read.c); it gives up on anything else.
GRAMMAR = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    """The compiled module: the installed build when it is current, else one compiled from this checkout."""
    if trec_eval.compiled_reader() is not None:
        from assay.measures import _trec_read

        return _trec_read
    spec = importlib.util.spec_from_file_location("assay_hatch_build", ROOT / "hatch_build.py")
    hatch_build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hatch_build)
    scratch = tmp_path_factory.mktemp("trec-read-c")
    (scratch / SOURCE).parent.mkdir(parents=True)
    shutil.copyfile(ROOT / SOURCE, scratch / SOURCE)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        built = hatch_build.compile_extension(scratch, SOURCE)
    if built is None:
        pytest.skip(f"_trec_read.c cannot be compiled here, so DuckDB's reading is what eval-trec runs (tested "
                    f"in tests/measures/test_trec_eval.py and below): {said.getvalue().strip()}")
    module_spec = importlib.util.spec_from_file_location("assay.measures._trec_read", built)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def compiled(reader, parts: int = 1):
    """evaluate_trec as it runs with the C code, the run cut into up to ``parts`` parts (one thread each)."""
    saved, module = trec_eval._COMPILED[:], sys.modules.get("assay.measures._trec_read")
    trec_eval._COMPILED[:] = [lambda qrels, run, threads: reader.read(qrels, run, parts, 1)]
    sys.modules["assay.measures._trec_read"] = reader  # _compiled_read asks it for progress()
    try:
        yield
    finally:
        trec_eval._COMPILED[:] = saved
        if module is None:
            sys.modules.pop("assay.measures._trec_read", None)
        else:
            sys.modules["assay.measures._trec_read"] = module


@contextlib.contextmanager
def by_reference():
    """evaluate_trec by DuckDB's reading and numpy's ranking: what runs without the C code."""
    saved = trec_eval._COMPILED[:]
    trec_eval._COMPILED[:] = [None]
    try:
        yield
    finally:
        trec_eval._COMPILED[:] = saved


def values(rows) -> dict:
    return {(r["metric"], r["query_id"]): r["value"] for r in rows}


# -- a negative exponent that decides a ranking -------------------------------------------------------------------

QRELS = "q1 0 b 1\n"
RUN = "q1 Q0 a 1 0.01 t\nq1 Q0 b 2 5e-3 t\nq1 Q0 c 3 0.001 t\n"
# b's 5e-3 lies between a's 0.01 and c's 0.001: rank 2, so RR is 1/2 and P@1 0. Read as 5e3 it would be rank 1.
RANK_TWO = {("RR", "q1"): 0.5, ("RR", "all"): 0.5, ("P@1", "q1"): 0.0, ("P@1", "all"): 0.0}


def files(tmp_path, qrels: str | bytes, run: str | bytes) -> tuple[Path, Path]:
    qrels_path, run_path = tmp_path / "x.qrels", tmp_path / "x.run"
    for path, text in ((qrels_path, qrels), (run_path, run)):
        path.write_bytes(text.encode() if isinstance(text, str) else text)
    return qrels_path, run_path


def test_a_negative_exponent_ranks_a_document_second_by_the_reference_reading(tmp_path):
    with by_reference():
        assert values(evaluate_trec(*files(tmp_path, QRELS, RUN), ["RR", "P@1"])) == RANK_TWO


def test_a_negative_exponent_ranks_a_document_second_by_the_c_reader(tmp_path, reader):
    qrels_path, run_path = files(tmp_path, QRELS, RUN)
    assert ranks(reader, qrels_path, run_path) == {"b": 2}
    for parts in (1, 2):
        with compiled(reader, parts):
            assert values(evaluate_trec(qrels_path, run_path, ["RR", "P@1"])) == RANK_TWO


# -- generated numbers: each read to the nearest double, as float() reads it ----------------------------------------

digits = st.text("0123456789", min_size=1, max_size=25)
mantissas = st.one_of(
    st.tuples(digits, st.none()).map(lambda t: t[0]),  # 12
    st.tuples(digits, st.text("0123456789", max_size=25)).map(lambda t: f"{t[0]}.{t[1]}"),  # 12. 12.5 007.250
    digits.map(lambda d: f".{d}"),  # .5
)
exponents = st.one_of(
    st.just(""),
    st.tuples(st.sampled_from("eE"), st.sampled_from(["", "+", "-"]),
              st.one_of(st.integers(0, 400).map(str), st.text("0123456789", min_size=1, max_size=12))
              ).map("".join),
)
grammar_scores = st.one_of(
    st.tuples(st.sampled_from(["", "+", "-"]), mantissas, exponents).map("".join),
    # what programs write: Python's repr (shortest round trip, exponents from e-324 to e+308) and printf forms
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.tuples(st.floats(allow_nan=False, allow_infinity=False, width=32), st.integers(0, 17),
              st.sampled_from("eEfg")).map(lambda t: f"{t[0]:.{t[1]}{t[2]}}"),
)


def exact(value: float) -> str:
    """A double written exactly, with no exponent: read through another path of the C code than most scores."""
    return format(Decimal(value), "f")


def trec_order(scores: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by document id descending in byte order (-0.0 is 0.0)."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0].encode()), reverse=True)]


def ranks(reader, qrels_path: Path, run_path: Path, parts: int = 1) -> dict[str, int]:
    """The rank the C code gives each relevant document of the run."""
    read = reader.read(str(qrels_path), str(run_path), parts, 1)
    assert isinstance(read, dict), read
    n_found = read["sizes"][2]
    items = trec_tables.strings(read, "judged_item", n_found).to_pylist()
    return dict(zip(items, np.frombuffer(read["judged_rank"], np.int64, n_found).tolist()))


def run_file(lines: list[list[str]], seps: list[str], newline: str, lead: str) -> str:
    return "".join(lead + seps[i % len(seps)].join(fields) + newline for i, fields in enumerate(lines))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scores=st.lists(grammar_scores, min_size=1, max_size=6),
       seps=st.lists(st.sampled_from([" ", "\t", "  ", " \t ", "\t\t"]), min_size=1, max_size=3),
       newline=st.sampled_from(["\n", "\r\n"]), lead=st.sampled_from(["", " ", "\t "]), parts=st.integers(1, 3))
@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
def test_every_generated_score_is_read_to_the_nearest_double(tmp_path, reader, scores, seps, newline, lead, parts):
    """Each generated score s (document p<i>) sits beside three documents whose scores are written exactly without
    an exponent: the double float(s) reads (q<i>), the next one up (m<i>) and the next one down (r<i>). Their ids
    make a score read one double too high or too low swap places with m<i> or r<i>, so the ranks agree with
    trec_eval's ranking of the float() values only if the C code reads every score to that very double."""
    assert all(GRAMMAR.fullmatch(s) for s in scores)
    run: dict[str, float] = {}
    lines = []
    for i, s in enumerate(scores):
        v = float(s)
        named = {f"p{i}": (s, v)}
        if math.isfinite(v):
            up, down = math.nextafter(v, math.inf), math.nextafter(v, -math.inf)
            # a tie goes to the higher id: read as the next double up, p<i> would pass m<i> (m < p); read as the
            # next one down, r<i> would pass it (r > p)
            named[f"q{i}"] = (exact(v), v)
            named |= {f"m{i}": (exact(up), up)} if math.isfinite(up) else {}
            named |= {f"r{i}": (exact(down), down)} if math.isfinite(down) else {}
        for doc, (text, value) in named.items():
            run[doc] = value
            lines.append(["q1", "Q0", doc, "1", text, "t"])
    qrels_path, run_path = files(tmp_path, "".join(f"q1 0 {d} 1\n" for d in run),
                                 run_file(lines, seps, newline, lead))
    want = {d: rank for rank, d in enumerate(trec_order(run), start=1)}
    assert ranks(reader, qrels_path, run_path, parts) == want


@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scores=st.lists(grammar_scores, min_size=2, max_size=8), parts=st.integers(1, 3))
def test_generated_runs_score_as_duckdbs_reading_scores_them(tmp_path, reader, scores, parts):
    """Distinct grades, so that the order of every document shows in nDCG and AP: the C path and the reference
    reading (DuckDB's cast, numpy's ranking) give the same values."""
    lines = "".join(f"q1 Q0 d{i} {i + 1} {s} t\n" for i, s in enumerate(scores))
    qrels = "".join(f"q1 0 d{i} {i % 4}\n" for i in range(len(scores)))
    qrels_path, run_path = files(tmp_path, qrels, lines)
    measures = ["nDCG", "AP", "RR", "P@1"]
    with by_reference():
        want = evaluate_trec(qrels_path, run_path, measures)
    with compiled(reader, parts):
        assert evaluate_trec(qrels_path, run_path, measures) == want


# -- what the C code leaves to the reference reading ------------------------------------------------------------------

refused_scores = st.one_of(
    st.sampled_from(["nan", "NaN", "-nan", "inf", "+inf", "-inf", "Infinity", "-Infinity", "infinity", "1_000",
                     "0x10", "0x1p3", "1d5", "e5", "1.5e", "1e+", "1e-", "+-1", "-", "+", ".", "-.", ".e5", "1..2",
                     "1e5.0", "1e5e5", "1,5", "١٢", "1e٥", "--1", "1e--5"]),
    # a grammar score with one character put in somewhere: refused unless the result is still in the grammar
    st.tuples(grammar_scores, st.sampled_from("+-.eE_xn,i"), st.integers(0, 40)).map(
        lambda t: t[0][:t[2]] + t[1] + t[0][t[2]:]),
)


@pytest.mark.slow  # over 1.5 s beside other work (docs/benchmarks.md, Test suite time)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(score=refused_scores)
def test_the_c_reader_takes_a_score_exactly_when_it_is_in_its_grammar(tmp_path, reader, score):
    """Outside the grammar it gives up (a str saying why), and the reference reading decides, refusing NaN and
    whatever DuckDB's cast refuses, or ranking inf as trec_eval does; inside it, it reads the score as float()."""
    qrels_path, run_path = files(tmp_path, "q1 0 b 1\n", f"q1 Q0 a 1 0.5 t\nq1 Q0 b 2 {score} t\n")
    answer = reader.read(str(qrels_path), str(run_path), 1, 1)
    if GRAMMAR.fullmatch(score):
        assert ranks(reader, qrels_path, run_path) == {"b": 1 if float(score) >= 0.5 else 2}
    else:
        assert isinstance(answer, str), (score, answer)
