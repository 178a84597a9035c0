"""Other spellings of the measures (metrics/aliases.toml): each resolves to its canonical name, gives that
name's values through eval-trec and report, and every output shows the canonical name. Errors suggest the
closest names and list only the measures that apply where they were asked."""

import csv
import json
import random
import shutil

import pytest
from click.testing import CliRunner

from assay.verdicts import gate, regression
from assay.runs import sweep
from assay.cli import cli
from assay.core.errors import ConfigError
from assay.measures.registry import (
    FAMILIES,
    TREC_STANDARD,
    load_user_measures,
    names,
    parse_measure,
    suggestions,
)
from assay.runs.runner import RunOptions, run
from assay.measures.trec_eval import SCOPE, parse_trec_measures
from assay.store.warehouse import Warehouse
from assay.measures import registry


def examples() -> list[tuple[str, str]]:
    """(alias as typed, canonical name) for every alias of the table: a trec_eval name at cutoff 10, a
    family's other name bare (when its family allows that) and at @10 (when it takes a cutoff)."""
    out = []
    for alias in names().aliases:
        family = FAMILIES[alias.family]
        if alias.takes_cutoff:
            out.append((alias.spelling[:-1] + "10", alias.measure.replace("@k", "@10")))
            continue
        if family.cutoff != "required":
            out.append((alias.spelling, family.name))
        if family.cutoff != "none":
            out.append((alias.spelling + "@10", f"{family.name}@10"))
    return out


EXAMPLES = examples()


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


@pytest.fixture(scope="module")
def mini_run(tmp_path_factory):
    from conftest import MINI

    path = tmp_path_factory.mktemp("aliases") / "w.duckdb"
    with Warehouse.open(path) as wh:
        rec = run(wh, MINI / "corpus", MINI / "judgments.jsonl", RunOptions(chunk_size=120))
    return path, rec.run_id


# -- names ------------------------------------------------------------------------------------------------
def test_the_table_covers_the_names_people_type():
    typed = {"ndcg_cut_10": "nDCG@10", "ndcg@10": "nDCG@10", "NDCG@10": "nDCG@10", "ndcg": "nDCG", "map": "AP",
             "MAP@100": "AP@100", "map_cut_10": "AP@10", "recip_rank": "RR", "mrr": "RR", "MRR@10": "RR@10",
             "P_10": "P@10", "precision@10": "P@10", "recall_100": "R@100", "recall@100": "R@100",
             "Recall@100": "R@100", "R@100": "R@100", "success_3": "Success@3", "hit_rate@5": "Success@5",
             "Success@5": "Success@5", "success@5": "Success@5", "ap": "AP", "rr@10": "RR@10",
             "spanrecall@1000tok": "SpanRecall@1000tok", "abstain": "Abstain"}
    assert {text: parse_measure(text).name for text in typed} == typed


@pytest.mark.parametrize("text, canonical", EXAMPLES)
def test_every_alias_resolves_to_its_canonical_name_in_any_case(text, canonical):
    for spelled in (text, text.upper(), text.lower()):
        assert parse_measure(spelled).name == canonical
        assert parse_measure(spelled) == parse_measure(canonical)


def test_no_alias_is_a_measure_that_differs():
    refused = {s.lower() for r in names().refused for s in r.spellings}
    spelled = {a.spelling.lower() for a in names().aliases}
    assert not refused & spelled
    assert {"hits", "ndcg_burges", "recall_cap", "bpref", "rprec"} <= refused


@pytest.mark.parametrize("text, says", [
    ("hits@10", "unknown measure 'hits@10' (ranx): hits@k counts the relevant results in the top k"),
    ("ndcg_burges@10", "unknown measure 'ndcg_burges@10' (ranx): nDCG with exponential gains"),
    ("Rprec", "unknown measure 'Rprec' (trec_eval, ranx): precision at rank R"),
    ("iprec_at_recall_0.10", "unknown measure 'iprec_at_recall_0.10' (trec_eval): interpolated precision"),
    ("recall_cap@100", "unknown measure 'recall_cap@100' (BEIR): capped recall divides by min(k, relevant"),
])
def test_names_that_mean_another_measure_are_refused_saying_why(text, says):
    with pytest.raises(ConfigError) as exc:
        parse_measure(text)
    assert str(exc.value).startswith(says), str(exc.value)


def test_errors_suggest_the_closest_names_at_the_cutoff_typed():
    assert suggestions("ndgc@10") == ["nDCG@10"]
    assert suggestions("Sucess@3") == ["Success@3"]
    assert suggestions("ndcg_10") == ["nDCG@10"]
    assert suggestions("hitrate@5") == ["Success@5"]
    assert suggestions("recal_100") == ["R@100"]
    assert suggestions("recal_100", SCOPE) == ["R@100"]
    assert suggestions("SpanRecal@1000tok") == ["SpanRecall@1000tok"]
    assert suggestions("SpanRecal@1000tok", SCOPE) == []  # a span measure never applies to a TREC run
    with pytest.raises(ConfigError) as exc:
        parse_measure("ndgc@10")
    assert str(exc.value).startswith("unknown measure 'ndgc@10'; did you mean nDCG@10? Measures: Success@k|@Ntok, "
                                     "R@k, P@k, RR[@k], nDCG[@k]|@Ntok, AP[@k], SpanRecall@k|@Ntok,")
    assert str(exc.value).endswith("judged_faithfulness (other spellings: `assay measures --aliases`)")


def test_eval_trec_lists_only_the_measures_of_a_trec_run():
    with pytest.raises(ConfigError) as exc:
        parse_trec_measures(["ndgc@10"])
    assert str(exc.value) == ("unknown measure 'ndgc@10'; did you mean nDCG@10? Measures for a TREC run: Success@k, "
                              "R@k, P@k, RR[@k], nDCG[@k], AP[@k] (other spellings: `assay measures --aliases`)")
    for text in ("Abstain", "answer_rate", "SpanRecall@10", "nDCG@1000tok", "hit_rate@1000tok"):
        with pytest.raises(ConfigError, match=r"does not apply to a TREC run \(it needs what only an assay run "
                                              r"stores\); choose from Success@k, R@k, P@k, RR\[@k\], nDCG\[@k\], "
                                              r"AP\[@k\]$"):
            parse_trec_measures([text])
    out = invoke("eval-trec", __file__, __file__, "-m", "faithfulness")
    assert out.exit_code == 1 and "measure faithfulness does not apply to a TREC run" in out.stderr


def test_a_measure_of_ones_own_may_not_take_an_aliased_name(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "mrr.sql").write_text("-- measure: MRR\n-- interval: bootstrap\n-- cutoff: optional\n"
                                    "-- levels: chunk, doc\n-- definition: a reciprocal rank of my own\n--\n"
                                    "SELECT 1\n", encoding="utf-8")
    try:
        with pytest.raises(ConfigError, match=r"mrr\.sql:1: measure MRR would shadow 'mrr', the ranx \(mrr, mrr@k\), "
                                              r"BEIR \(MRR@k\), LlamaIndex \(mrr\) name of RR"):
            load_user_measures({"measures": {"dir": "mine"}, "_path": str(tmp_path / "assay.toml")})
        assert parse_measure("mrr").name == "RR"  # the built-in measures stand
    finally:
        load_user_measures({})


def test_measures_aliases_prints_the_table_from_the_registry():
    out = invoke("measures", "--aliases")
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines[0].split()[:3] == ["alias", "measure", "used"]
    for alias in names().aliases:
        assert any(line.split()[:2] == [alias.spelling, alias.measure] for line in lines), alias
    for refused in names().refused:
        assert any(line.startswith(", ".join(refused.spellings) + " ") for line in lines), refused


# -- values ----------------------------------------------------------------------------------------------
def trec_files(tmp_path):
    """Graded qrels and a run with ties and unjudged documents, 12 queries."""
    rng = random.Random(15)
    docs = [f"d{i}" for i in range(40)]
    qrels, run_lines = [], []
    for q in range(12):
        for d in rng.sample(docs, 8):
            qrels.append(f"q{q} 0 {d} {rng.choice([0, 1, 1, 2, 3])}\n")
        for rank, d in enumerate(rng.sample(docs, 30), 1):
            run_lines.append(f"q{q} Q0 {d} {rank} {rng.choice([1.0, 2.0, 2.5, 3.0, rng.random()])!r} x\n")
    (tmp_path / "qrels").write_text("".join(qrels))
    (tmp_path / "run").write_text("".join(run_lines))
    return tmp_path / "qrels", tmp_path / "run"


def measure_args(texts):
    return [arg for text in texts for arg in ("-m", text)]


def test_every_alias_gives_the_canonical_values_through_eval_trec(tmp_path):
    qrels, run_file = trec_files(tmp_path)
    typed = [text for text, _ in EXAMPLES]
    canonical = [name for _, name in EXAMPLES]
    by_alias = invoke("eval-trec", qrels, run_file, *measure_args(typed), "-q", "--format", "json")
    by_name = invoke("eval-trec", qrels, run_file, *measure_args(canonical), "--per-query", "--format", "json")
    assert by_alias.exit_code == 0 and by_name.exit_code == 0, by_alias.output + by_name.output
    rows = json.loads(by_alias.stdout)
    assert rows == json.loads(by_name.stdout)
    assert [r["metric"] for r in rows if r["query_id"] == "all"] == list(dict.fromkeys(canonical))


def test_every_alias_gives_the_canonical_values_through_report(mini_run):
    path, run_id = mini_run
    typed = [text for text, _ in EXAMPLES]
    canonical = [name for _, name in EXAMPLES]
    by_alias = invoke("report", run_id, *measure_args(typed), "--format", "json", "--warehouse", path)
    by_name = invoke("report", run_id, *measure_args(canonical), "--format", "json", "--warehouse", path)
    assert by_alias.exit_code == 0 and by_name.exit_code == 0, by_alias.output + by_name.output
    metrics = json.loads(by_alias.stdout)["metrics"]
    assert metrics == json.loads(by_name.stdout)["metrics"]
    assert {r["metric"] for r in metrics} == set(canonical)


# -- every output shows the canonical name ------------------------------------------------------------------
@pytest.mark.slow  # over 4 s beside other work (docs/benchmarks.md, Test suite time)
def test_gate_regress_history_export_and_compute_show_the_canonical_name(mini_run, tmp_path):
    path, run_id = mini_run
    gated = invoke("gate", run_id, "--rule", "ndcg_cut_10:chunk >= 0", "--rule", "hit_rate@3:doc>=0",
                   "--warehouse", path)
    assert gated.exit_code == 0, gated.output
    assert "nDCG@10:chunk >= 0" in gated.stdout and "Success@3:doc>=0" in gated.stdout
    assert "ndcg_cut" not in gated.stdout and "hit_rate" not in gated.stdout
    assert [r.text for r in gate.rules_from({}, ("MRR@10>=0.1", "RR@10>=0.1"))] == ["RR@10>=0.1"]  # one rule

    regress = invoke("regress", run_id, "--baseline", run_id, "--max-drop", "P_5:doc=0.05", "--warehouse", path)
    assert regress.exit_code == 0, regress.output
    assert "P@5:doc" in regress.stdout and "P_5" not in regress.stdout
    assert regression.parse_drop("recall_100=0.1")[0].name == "R@100"

    history = invoke("history", "--pipeline", "bm25", "--metric", "map", "--warehouse", path)
    assert history.exit_code == 0, history.output
    assert history.stdout.startswith("history of AP (chunk, slice all) for pipeline bm25\n")

    exported = invoke("export", run_id, "--format", "csv", "-m", "map_cut_5", "-m", "mrr", "--out", tmp_path / "out",
                      "--warehouse", path)
    assert exported.exit_code == 0, exported.output
    with open(tmp_path / "out" / "metrics.csv", newline="") as f:
        metrics = {r["metric"] for r in csv.DictReader(f)}
    assert {"AP@5", "RR"} <= metrics and not {"map_cut_5", "mrr"} & metrics

    copy = tmp_path / "copy.duckdb"
    shutil.copy(path, copy)
    computed = invoke("measures", "compute", "ndcg_cut_3", "--run", run_id, "--warehouse", copy)
    assert computed.exit_code == 0, computed.output
    assert "(nDCG@3 " in computed.stdout
    with Warehouse.open(copy, read_only=True) as wh:
        stored = {m for (m,) in wh.con.execute("SELECT DISTINCT measure FROM measure_values").fetchall()}
    assert "nDCG@3" in stored and "ndcg_cut_3" not in stored


def test_a_sweep_stores_its_selection_measure_by_the_canonical_name():
    spec = sweep.spec_from({}, {"chunkers": [], "sizes": [], "overlaps": [], "pipelines": [], "budget": None,
                                "k": None, "select": "ndcg_cut_5", "alpha": None})
    assert spec["select"] == "nDCG@5"


def test_the_trec_standard_set_is_named_canonically():
    assert [m.name for m in parse_trec_measures(None)] == list(TREC_STANDARD)


def test_the_manual_shows_the_alias_table_the_registry_prints():
    from conftest import ROOT

    out = invoke("measures", "--aliases")
    page = (ROOT / "docs" / "measures.md").read_text(encoding="utf-8")
    assert f"$ assay measures --aliases\n{out.stdout}```" in page


def test_a_cutoff_that_is_not_a_number_gets_the_cutoff_hint_and_an_unknown_name_does_not():
    """A cutoff that is not a number gets the cutoff hint; an unknown name gets none.

    Kills x_parse_measure__mutmut_33, _34, _35 and x__family_named__mutmut_5: 'nDCG@ten' (which the measure
    pattern cannot read) is told what a cutoff is; 'nDCG_abc' (read as one unknown name) and 'nosuch_10' (an
    unknown name with trec_eval's cutoff) are unknown measures, with no cutoff hint and no crash."""
    from assay.measures.registry import parse_measure

    with pytest.raises(ConfigError) as error:
        parse_measure("nDCG@ten")
    assert str(error.value).startswith("unknown measure 'nDCG@ten': a cutoff is a whole number after @ (nDCG@10), "
                                       "or a token budget (nDCG@1000tok); did you mean nDCG? Measures: ")
    for text in ("nDCG_abc", "nosuch_10"):
        with pytest.raises(ConfigError) as error:
            parse_measure(text)
        assert str(error.value).startswith(f"unknown measure {text!r}") and "a cutoff is" not in str(error.value)


def test_a_cutoff_below_one_and_a_budget_on_a_measure_without_one_are_refused_with_their_messages():
    """A cutoff below 1, and a budget on a measure that takes none, are refused with their messages.

    Kills x_parse_measure__mutmut_79 (the cutoff message), _84 and _86 (the list of measures that take a
    budget)."""
    from assay.measures.registry import parse_measure

    for text in ("nDCG@0", "P_0"):
        with pytest.raises(ConfigError) as error:
            parse_measure(text)
        assert str(error.value) == f"measure {text!r}: the cutoff must be at least 1"
    with pytest.raises(ConfigError) as error:
        parse_measure("AP@1000tok")
    assert str(error.value) == ("measure AP takes no context budget; budgets (@Ntok) apply to Success, nDCG, "
                                "SpanRecall, SpanPrecision, SpanIoU")


def test_a_cutoff_missing_or_not_taken_is_refused_with_its_example():
    """A measure missing its cutoff is refused with an example (a budget one where it takes budgets); a cutoff on a
    measure without one is refused.

    Kills x_parse_measure__mutmut_102, _103 (the budget example offered for a measure without budgets) and
    _107 (a cutoff given to a measure that takes none)."""
    from assay.measures.registry import parse_measure

    cases = {"R": "measure 'R' needs a cutoff, e.g. R@10",
             "Success": "measure 'Success' needs a cutoff, e.g. Success@10 or Success@1000tok",
             "Abstain@5": "measure Abstain takes no cutoff"}
    for text, message in cases.items():
        with pytest.raises(ConfigError) as error:
            parse_measure(text)
        assert str(error.value) == message


@pytest.mark.parametrize("typed, suggested", [
    ("ndcg", ["nDCG"]), ("ndgc@10", ["nDCG@10"]), ("Sucess", ["Success@10"]), ("sucess@3", ["Success@3"]),
    ("Succes_5", ["Success@5"]), ("mrr@10", ["RR@10"]), ("recal@10", ["R@10"]), ("SpanRecal", ["SpanRecall@10"]),
    ("SpanRecal@1000tok", ["SpanRecall@1000tok"]), ("Sucess@1000tok", ["Success@1000tok"]),
    ("abstain_rate", ["Abstain"]), ("faithfulnes", ["faithfulness"]), ("citation", ["citation_precision"]),
    ("spanpre", ["SpanRecall@10", "SpanPrecision@10"]), ("spanr@5", ["SpanIoU@5", "SpanRecall@5"]),
    ("xyz", []), ("faith", [])])
def test_suggestions_for_a_misspelled_measure(typed, suggested):
    """suggestions for misspelled measure names: the close ones, at the cutoff or budget typed, none for a name
    close to nothing."""
    from assay.measures.registry import suggestions

    assert suggestions(typed, n=5) == suggested
    assert suggestions(typed, n=1) == suggested[:1]


MEASURES = ("Success@k|@Ntok, R@k, P@k, RR[@k], nDCG[@k]|@Ntok, AP[@k], SpanRecall@k|@Ntok, SpanPrecision@k|@Ntok, "
            "SpanIoU@k|@Ntok, Abstain, FalseAbstain, answer_rate, refusal_rate, citation_precision, faithfulness, "
            "judged_faithfulness (other spellings: `assay measures --aliases`)")


def test_an_unknown_measure_is_suggested_only_from_the_scope():
    """An unknown measure is suggested only from the measures of the scope (a TREC run's).

    For a TREC run (document level only) 'Abstian' has no close name: Abstain does not apply there. Kills
    assay.measures.registry.x__unknown__mutmut_6 (suggestions from every measure: 'did you mean Abstain?')."""
    from assay.measures import trec_eval

    with pytest.raises(ConfigError) as error:
        registry.parse_measure("Abstian", trec_eval.SCOPE)
    assert str(error.value) == ("unknown measure 'Abstian'. Measures for a TREC run: Success@k, R@k, P@k, RR[@k], "
                                "nDCG[@k], AP[@k] (other spellings: `assay measures --aliases`)")


@pytest.mark.parametrize("text, guess, kills", [
    # four measures are within 0.1 of the best (0.667): the first three by ratio, then name, are named
    ("precan", "; did you mean P@10 or R@10 or RR?", "x_suggestions__mutmut_1 (n=4: SpanRecall@10 named too)"),
    # a budget: only the measures that take one are close; Abstain takes none
    ("Abstan@1000tok", ".", "x_suggestions__mutmut_30 (`or`: every measure allowed, 'did you mean Abstain?')"),
    # 'cut' is close to map_cut (AP@k's trec_eval name, without its _k) only
    ("cut", "; did you mean AP?", "x_suggestions__mutmut_41 (the '_k' kept: 'map_cut_k' is not close)"),
    # 'abs' against 'abstain': ratio exactly 0.6, the least that is named
    ("abs", "; did you mean Abstain?", "x_suggestions__mutmut_61 (`>` 0.6: nothing named)"),
])
def test_the_names_an_unknown_measure_suggests(text, guess, kills):
    """The names an unknown measure suggests: at most three close names, a budget only among measures that take one,
    trec_eval names without their _k, a ratio of 0.6 the least named.

    Kills assay.measures.registry.x_suggestions__mutmut_1, _30, _41 and _61 (one case each, named in `kills`)."""
    with pytest.raises(ConfigError) as error:
        registry.parse_measure(text)
    assert str(error.value) == f"unknown measure {text!r}{guess} Measures: {MEASURES}"


def test_an_unknown_measure_suggests_the_closest_or_ends_the_sentence():
    """An unknown measure's message suggests the closest names, or ends the sentence when none is close, then lists
    the measures."""
    with pytest.raises(ConfigError) as error:
        parse_measure("spanpre")
    assert str(error.value).startswith("unknown measure 'spanpre'; did you mean SpanRecall@10 or SpanPrecision@10? "
                                       "Measures: Success@k|@Ntok, R@k, ")
    with pytest.raises(ConfigError) as error:
        parse_measure("zzzz")
    assert str(error.value).startswith("unknown measure 'zzzz'. Measures: Success@k|@Ntok, R@k, ")
    assert str(error.value).endswith(", judged_faithfulness (other spellings: `assay measures --aliases`)")
