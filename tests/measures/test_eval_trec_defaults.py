"""`assay eval-trec QRELS RUN` without -m: the standard set (registry.TREC_STANDARD), per query equal to
pytrec_eval's values of trec_eval's own measures, whose keys (map, recip_rank, P_5, ndcg_cut_10, ...) the
alias table reads as assay's names. -q and -c are trec_eval's spellings of --per-query and --complete."""

import json
import random

import pytest
import pytrec_eval
from click.testing import CliRunner

from assay.cli import cli
from assay.measures.registry import TREC_STANDARD, parse_measure

# trec_eval's measures behind the standard set, at trec_eval's default cutoffs (P, recall: 5 ... 1000;
# success: 1, 5, 10), plus ndcg_cut at 10.
PYTREC_MEASURES = {"map", "recip_rank", "P", "recall", "ndcg", "ndcg_cut.10", "success"}


def collection(seed: int):
    """Graded qrels (-1 to 3), runs of up to 1,200 documents with ties, queries without a relevant
    document, a qrels query the run lacks and a run query the qrels lack."""
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(1500)]
    qrels, run = {}, {}
    for i in range(10):
        qid = f"q{i}"
        grades = [-1, 0, 1, 1, 2, 3] if i != 3 else [0, -1]
        qrels[qid] = {d: rng.choice(grades) for d in rng.sample(pool, rng.randint(1, 40))}
        if i != 7:
            docs = rng.sample(pool, rng.choice([3, 40, 250, 1200]))
            run[qid] = {d: rng.choice([1.0, 2.0, round(rng.uniform(0, 50), 1)]) for d in docs}
    run["only-in-run"] = {"d1": 1.0}
    return qrels, run


def write(tmp_path, qrels, run):
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} {i} {s!r} t\n" for q, ranking in run.items()
                                          for i, (d, s) in enumerate(ranking.items(), 1)))
    return tmp_path / "qrels", tmp_path / "run"


def pytrec(qrels, run) -> dict[str, dict[str, float]]:
    """{assay's name: {query: value}} of pytrec_eval's measures, each key read through the alias table."""
    out: dict[str, dict[str, float]] = {}
    for qid, values in pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run).items():
        for key, value in values.items():
            out.setdefault(parse_measure(key).name, {})[qid] = value
    return out


def eval_trec(*args):
    out = CliRunner().invoke(cli, ["eval-trec", *map(str, args), "--format", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


@pytest.mark.parametrize("seed", range(3))
def test_the_default_set_is_trec_evals_per_query(tmp_path, seed):
    qrels, run = collection(seed)
    rows = eval_trec(*write(tmp_path, qrels, run), "-q")
    theirs = pytrec(qrels, run)
    assert set(theirs) == set(TREC_STANDARD)
    assert list(dict.fromkeys(r["metric"] for r in rows)) == list(TREC_STANDARD)
    for name, values in theirs.items():
        ours = {r["query_id"]: r["value"] for r in rows if r["metric"] == name and r["query_id"] != "all"}
        assert ours.keys() == values.keys(), name
        for qid, value in values.items():
            assert ours[qid] == pytest.approx(value, abs=1e-9), (name, qid)
        (mean,) = [r for r in rows if r["metric"] == name and r["query_id"] == "all"]
        assert (mean["n"], mean["value"]) == (len(values), pytest.approx(sum(values.values()) / len(values)))


def test_c_scores_the_queries_the_run_lacks_as_zero(tmp_path):
    qrels, run = collection(5)
    files = write(tmp_path, qrels, run)
    complete = eval_trec(*files, "-c")
    assert complete == eval_trec(*files, "--complete")
    assert [r["query_id"] for r in complete] == ["all"] * len(TREC_STANDARD)  # no -q: the means only
    theirs = pytrec(qrels, run)
    for row in complete:
        values = theirs[row["metric"]]
        assert row["n"] == len(qrels) == len(values) + 1  # q7 is in the qrels only
        assert row["value"] == pytest.approx(sum(values.values()) / len(qrels))


def test_m_still_chooses_and_any_alias_is_shown_canonically(tmp_path):
    files = write(tmp_path, *collection(1))
    rows = eval_trec(*files, "-m", "ndcg_cut_10", "-m", "map", "-q")
    assert [r["metric"] for r in rows if r["query_id"] == "all"] == ["nDCG@10", "AP"]
    defaults = {(r["metric"], r["query_id"]): r["value"] for r in eval_trec(*files, "-q")}
    assert all(defaults[(r["metric"], r["query_id"])] == r["value"] for r in rows)
