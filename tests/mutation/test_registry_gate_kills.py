"""Kills of the surviving mutants of src/assay/verdicts/gate.py, src/assay/measures/registry.py and
src/assay/inputs/judgments/resolve.py listed in docs/mutation.md: each test pins exact outputs on a real DuckDB warehouse,
real measure files, a real corpus directory and judgments file, through assay's own API and CLI, and names the
mutants it kills (each applied by hand to a copy of the tree and seen to fail).

The registry reads the shipped measure files once, at import (``FAMILIES``); mutmut applies a mutant only while the
tests run, after that import, so the registry tests below call the functions again (a user's measure directory,
``read_families``, ``_listing_key``, ``parse_measure``) instead of reading ``FAMILIES``."""

from __future__ import annotations

import json
import locale
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from assay.verdicts import gate
from assay.cli import cli
from assay.core.errors import ConfigError, JudgmentsError, UsageError
from assay.measures import registry
from assay.store.warehouse import Warehouse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "verdict"))  # verdict_runs (no __init__)
from verdict_runs import outcomes, write_outcomes, write_ranks  # noqa: E402

# Reciprocal ranks of the relevant document for twelve questions (0: not found): RR@10 = 0.58333...
RANKS = [1, 2, 3, 0, 1, 5, 10, 0, 2, 1, 4, 1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One warehouse: run-075 (Success@1 exactly 24/32), run-one (one question, a hit), run-rr (RANKS)."""
    path = tmp_path_factory.mktemp("registry-gate") / "w.duckdb"
    with Warehouse.open(path) as wh:
        write_outcomes(wh, "run-075", outcomes(32, 24))
        write_outcomes(wh, "run-one", [1], minutes=1)
        write_ranks(wh, "run-rr", RANKS, minutes=2)
    return path


# --- gate.py ---------------------------------------------------------------------------------------------------

def test_a_bootstrap_interval_is_drawn_with_the_runs_seed_and_samples(runs, tmp_path):
    """Kills assay.verdicts.gate.x_check__mutmut_52 (seed not passed to evaluate: seed 0 is used) and
    assay.verdicts.gate.x_check__mutmut_53 (samples not passed: 1000 are drawn). RR@10 has a bootstrap interval, which
    depends on both: with seed 7 and 200 samples it is [0.30747..., 0.79166...], where seed 0 gives the upper end
    0.8333... and 1000 samples give [0.35427..., 0.82389...]. `assay gate` takes both from the run's config."""
    with Warehouse.open(runs, read_only=True) as wh:
        (result,) = gate.check(wh, "run-rr", [gate.parse_rule("RR@10:doc>=0.5")], seed=7, samples=200)
        (default,) = gate.check(wh, "run-rr", [gate.parse_rule("RR@10:doc>=0.5")], seed=0, samples=1000)
    assert result == {"rule": "RR@10:doc>=0.5", "op": ">=", "bar": 0.5, "passed": True, "fragile": True,
                      "value": 0.5833333333333334, "n": 12, "ci_low": 0.30747420650685137,
                      "ci_high": 0.7916666666666667, "bound": 0.4, "confidence": 0.95,
                      # the exact one-sample sign-flip p (1408 of the 4096 sign patterns; see test_verdict_gate_family)
                      "p_value": 1408 / 4096, "p_adjusted": 1408 / 4096, "decided_at": 0.05, "family_size": 1,
                      "correction": "holm", "alpha": 0.05, "method": "sign-flip", "patterns": "exact",
                      "reason": "0.583 >= 0.5, but its 95% bound 0.400 does not clear 0.5"}
    # to 1e-12: the bound moved by one ulp when the BCa upper level became -ndtri(alpha/2) (the same value, computed
    # without rounding 1 - alpha/2); the mutants it kills move it by 0.04
    assert (default["ci_low"], default["ci_high"]) == pytest.approx((0.3333333333333333, 0.7916666666666666), abs=1e-12)

    import shutil

    copy = tmp_path / "w.duckdb"
    shutil.copy(runs, copy)
    with Warehouse.open(copy) as wh:
        config = json.loads(wh.con.execute("SELECT config FROM runs WHERE run_id = 'run-rr'").fetchall()[0][0])
        config.update(seed=7, bootstrap_samples=200)
        wh.con.execute("UPDATE runs SET config = ? WHERE run_id = 'run-rr'", [json.dumps(config)])
    out = CliRunner().invoke(cli, ["gate", "run-rr", "--rule", "RR@10:doc>=0.5", "--warehouse", str(copy)])
    assert out.exit_code == 0, out.output
    out = CliRunner().invoke(cli, ["gate", "run-rr", "--rule", "RR@10:doc>=0.5", "--format", "json",
                                   "--warehouse", str(copy)])
    assert out.exit_code == 0, out.output
    (rule,) = json.loads(out.stdout)["rules"]
    assert (rule["ci_low"], rule["ci_high"]) == (0.30747420650685137, 0.7916666666666667)


def test_a_run_of_one_question_is_gated_on_it(runs):
    """Kills assay.verdicts.gate.x_check__mutmut_60 (`row.n == 0` as `row.n == 1`: a slice of one question would be
    failed as having none). Wilson's interval of 1 of 1 is [0.0546..., 1.0]."""
    with Warehouse.open(runs, read_only=True) as wh:
        results = gate.check(wh, "run-one", [gate.parse_rule("Success@1:doc>=0.5")], seed=0, samples=1000)
    # one hit of one: P(Binomial(1, 0.5) >= 1) = 0.5; the 95% lower bound m solves m**1 = 0.05
    assert results == [{"rule": "Success@1:doc>=0.5", "op": ">=", "bar": 0.5, "passed": True, "fragile": True,
                        "value": 1.0, "n": 1, "ci_low": 0.05462075552885198, "ci_high": 1.0,
                        "bound": pytest.approx(0.05, abs=1e-15), "confidence": 0.95, "p_value": 0.5,
                        "p_adjusted": 0.5, "decided_at": 0.05, "family_size": 1, "correction": "holm", "alpha": 0.05,
                        "method": "binomial-exact", "patterns": None,
                        "reason": "1.000 >= 0.5, but its 95% bound 0.050 does not clear 0.5"}]


def test_a_measure_without_values_fails_and_the_next_rule_is_still_checked(runs):
    """A run without answers has no faithfulness value in any slice: its rule fails with the vacuous-pass reason,
    every key of the result pinned, and the rule after it is checked. The second rule, `>` passing on 0.75 with
    p 0.344 (exact binomial, scipy's binomtest), is fragile: for `>` the tail is P(X >= 24).
    Kills assay.verdicts.gate.x_check__mutmut_69 (fragile True), _74 (n 1), _75, _76 (the key ci_low renamed), _77, _78
    (ci_high renamed), _81 (`continue` as `break`: the second rule dropped), _92 (`">"` misspelt: ci_high taken
    for `>`, so not fragile), and a bound column always '-'."""
    rules = [gate.parse_rule("faithfulness>=0.5"), gate.parse_rule("Success@1:doc>0.7")]
    with Warehouse.open(runs, read_only=True) as wh:
        results = gate.check(wh, "run-075", rules, seed=0, samples=1000)
    from scipy.stats import beta, binomtest

    p = binomtest(24, 32, 0.7, alternative="greater").pvalue
    assert results == [
        {"rule": "faithfulness>=0.5", "op": ">=", "bar": 0.5, "passed": False, "fragile": False, "value": None,
         "n": 0, "ci_low": None, "ci_high": None, "bound": None, "confidence": None, "p_value": None,
         "p_adjusted": None, "decided_at": None, "family_size": 1, "correction": "holm", "alpha": 0.05,
         "method": None, "patterns": None, "reason": "no questions in slice 'all': a gate never passes vacuously"},
        {"rule": "Success@1:doc>0.7", "op": ">", "bar": 0.7, "passed": True, "fragile": True, "value": 0.75, "n": 32,
         "ci_low": 0.5789344100575552, "ci_high": 0.8674759908149096,  # plain Wilson (n = 32 >= 25)
         "bound": pytest.approx(beta.ppf(0.05, 24, 9), abs=1e-12), "confidence": 0.95,
         "p_value": pytest.approx(p, rel=1e-12), "p_adjusted": pytest.approx(p, rel=1e-12), "decided_at": 0.05,
         "family_size": 1, "correction": "holm", "alpha": 0.05, "method": "binomial-exact", "patterns": None,
         "reason": "0.750 > 0.7, but its 95% bound 0.594 does not clear 0.7"}]
    assert gate.render("run-075", results) == (
        "The run fails 1 of 2 gate rules: faithfulness>=0.5 (no questions in slice 'all': a gate never passes "
        "vacuously).\n\n"
        "gate on run run-075\n"
        "(fragile) marks a pass that is not significant: one-sided test that the true value is on the passing side "
        "of the bar, Holm over 1 rule at alpha 0.05\n"
        "status          rule               value   n  bound                p  p (Holm)  reason\n"
        + "-" * 138 + "\n"
        "FAIL            faithfulness>=0.5      -   0  -                    -         -  no questions in slice 'all': "
        "a gate never passes vacuously\n"
        "PASS (fragile)  Success@1:doc>0.7  0.750  32  >= 0.594 (95%)  0.3440    0.3440  0.750 > 0.7, but its 95% "
        "bound 0.594 does not clear 0.7\n"
        "1 passed, 1 failed; exit code 6\n")


def test_two_rules_naming_slices_the_run_lacks_are_named_together(runs):
    """Kills assay.verdicts.gate.x_check_slices__mutmut_10 (the rules joined by 'XX; XX' instead of '; ')."""
    rules = [gate.parse_rule("Success@1:doc[form=gapp]>=0.5"), gate.parse_rule("Success@1[category=x]>=0.5", "t.toml")]
    with Warehouse.open(runs, read_only=True) as wh, pytest.raises(UsageError) as error:
        gate.check(wh, "run-075", rules, seed=0, samples=1000)
    assert str(error.value) == (
        "Success@1:doc[form=gapp]>=0.5 (--rule): no such slice 'form=gapp'; Success@1[category=x]>=0.5 (t.toml): "
        "no such slice 'category=x'; run run-075 has the slices all, category=normal, form=match, hard_class=normal")


@pytest.mark.parametrize("rules", ["Success@3:doc>=0.75", ["Success@3:doc>=0.75", 0.75]])
def test_gate_rules_that_are_not_a_list_of_strings_are_a_config_error(rules):
    """Kills assay.verdicts.gate.x_collect_rules__mutmut_41 (`or` as `and`: a string is taken for a list of one-letter
    rules, a list holding a number is parsed as rules) and _45 (the message None)."""
    with pytest.raises(ConfigError) as error:
        gate.collect_rules({"gate": {"rules": rules}, "_path": "proj/assay.toml"}, ())
    assert str(error.value) == ('proj/assay.toml [gate] rules must be a list of strings like "Success@3:doc>=0.75"')


# --- registry.py -----------------------------------------------------------------------------------------------

MEASURES = ("Success@k|@Ntok, R@k, P@k, RR[@k], nDCG[@k]|@Ntok, AP[@k], SpanRecall@k|@Ntok, SpanPrecision@k|@Ntok, "
            "SpanIoU@k|@Ntok, Abstain, FalseAbstain, answer_rate, refusal_rate, citation_precision, faithfulness, "
            "judged_faithfulness (other spellings: `assay measures --aliases`)")


def test_the_listing_key_of_every_shipped_measure():
    """(level group, minus the number of levels, place in the standard set or after it) for each shipped family,
    computed again (builtin_families is cached from import). Kills assay.measures.registry.x__listing_key__mutmut_1
    (standard None), _2 (LEVELS.index(None)), _3 (tuple.rindex), _4 (levels[1]), _5 (+len), _6 (every family after
    the standard set), _7 (index of a family not in it), _8 (index(None)), _9 (list.rindex), _10 (`not in`)."""
    keys = [(fam.name, registry._listing_key(fam)) for fam in registry.builtin_families()]
    assert keys == [("Success", (0, -2, 0)), ("R", (0, -2, 3)), ("P", (0, -2, 4)), ("RR", (0, -2, 5)),
                    ("nDCG", (0, -2, 6)), ("AP", (0, -2, 7)), ("SpanRecall", (0, -1, 8)),
                    ("SpanPrecision", (0, -1, 11)), ("SpanIoU", (0, -1, 12)), ("Abstain", (2, -1, 13)),
                    ("FalseAbstain", (2, -1, 14)), ("answer_rate", (3, -1, 15)), ("refusal_rate", (3, -1, 16)),
                    ("citation_precision", (3, -1, 17)), ("faithfulness", (3, -1, 18)),
                    ("judged_faithfulness", (3, -1, 19))]
    # no two keys are equal, so the listing order is the keys' alone, whatever order the files are read in
    assert sorted(reversed(registry.builtin_families()), key=registry._listing_key) == list(
        registry.builtin_families())


CLAIMS = """\
-- measure: Claimed
-- interval: wilson
-- cutoff: none
-- levels: answer
-- unit: claim
-- definition: share of claims the answer's citations support (résumé: an é read as UTF-8)
--
SELECT 1
"""
BUDGETED = """\
-- measure: Gained
-- interval: bootstrap
-- cutoff: optional
-- levels: doc, chunk
-- budget: measures/ndcg_budget
-- definition: nDCG again
--
SELECT 1
"""


@pytest.fixture
def user_measures(tmp_path):
    """A project whose [measures] dir holds CLAIMS and BUDGETED; the built-in measures alone again afterwards."""
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "claims.sql").write_text(CLAIMS, encoding="utf-8")
    (tmp_path / "mine" / "budgeted.sql").write_text(BUDGETED, encoding="utf-8")
    config = {"measures": {"dir": "mine"}, "_path": str(tmp_path / "assay.toml")}
    yield config, tmp_path / "mine"
    registry.load_user_measures({})


def test_a_users_measure_files_keep_their_unit_budget_and_non_ascii_definition(user_measures):
    """Kills assay.measures.registry.x__family__mutmut_139 (unit dropped: 'question'), _154 (value(None, ...)), _158
    ('XXunitXX'), _159 ('UNIT') — each reads the unit as 'question' — and x_read_families__mutmut_20
    (sql_path(None) raises, so an existing budget file is reported missing)."""
    config, root = user_measures
    claimed, gained = sorted(registry.load_user_measures(config), key=lambda f: f.name)
    assert claimed == registry.MeasureFamily(
        "Claimed", "user_measures/claims", "wilson", "none",
        "share of claims the answer's citations support (résumé: an é read as UTF-8)", levels=("answer",),
        answerable_only=True, unit="claim", budget_sql=None, reads_tokens=False, source=f"{root / 'claims.sql'}:1")
    assert gained == registry.MeasureFamily(
        "Gained", "user_measures/budgeted", "bootstrap", "optional", "nDCG again", levels=("chunk", "doc"),
        answerable_only=True, unit="question", budget_sql="measures/ndcg_budget", reads_tokens=False,
        source=f"{root / 'budgeted.sql'}:1")
    assert registry.parse_measure("Gained@500tok").name == "Gained@500tok"


def test_a_measure_file_is_read_as_utf8_whatever_the_locale(user_measures):
    """Under the C locale (ASCII) a file read in the locale's encoding fails on the é. Kills
    assay.measures.registry.x_read_families__mutmut_15 (encoding=None). (Under Python's UTF-8 mode the locale is not
    used and the test cannot tell; assay's tests run without it.)"""
    config, root = user_measures
    registry.load_user_measures(config)
    saved = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        (claimed,) = registry.read_families("user_measures/claims")
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert claimed.definition == "share of claims the answer's citations support (résumé: an é read as UTF-8)"


def test_a_budget_file_that_does_not_exist_is_named(user_measures):
    """The error for a budget naming no SQL file, exactly (read_families' except branch)."""
    config, root = user_measures
    (root / "budgeted.sql").write_text(BUDGETED.replace("measures/ndcg_budget", "measures/nope"), encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        registry.load_user_measures(config)
    assert str(error.value) == f"{root / 'budgeted.sql'}:1: budget: no SQL file named 'measures/nope'"


def test_an_unknown_measure_is_suggested_only_from_the_scope():
    """For a TREC run (document level only) 'Abstian' has no close name: Abstain does not apply there. Kills
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
    """Kills assay.measures.registry.x_suggestions__mutmut_1, _30, _41 and _61 (one case each, named in `kills`)."""
    with pytest.raises(ConfigError) as error:
        registry.parse_measure(text)
    assert str(error.value) == f"unknown measure {text!r}{guess} Measures: {MEASURES}"


# --- judgments/resolve.py --------------------------------------------------------------------------------------

def test_every_gold_entry_of_a_question_is_resolved_after_one_fails(tmp_path):
    """One question whose gold names a document not in the corpus, quotes an empty document, and quotes 'abxy',
    whose nearest passage 'abcd' has similarity exactly 0.5 (MIN_SHOWN_SIMILARITY: shown). Every problem is listed.
    Kills assay.inputs.judgments.resolve.x_resolve_gold__mutmut_15 (`continue` as `break` after the missing document),
    _34 (the empty-document message None), _35 (`break` after the empty document) and
    assay.inputs.judgments.resolve.x_not_found_message__mutmut_10 (`<` as `<=`: 'no passage comes close')."""
    from assay.inputs.corpus import load_corpus
    from assay.inputs.judgments import load_judgments, resolve_gold

    root = tmp_path / "corpus"
    root.mkdir()
    (root / "a.md").write_text("abcd\n", encoding="utf-8")
    (root / "empty.md").write_text("", encoding="utf-8")
    record = {"query_id": "q1", "query": "q", "category": "normal", "form": "match",
              "gold": [{"doc": "zz.md"}, {"doc": "empty.md", "quote": "x"}, {"doc": "a.md", "quote": "abxy"}]}
    path = tmp_path / "judgments.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    judgments, corpus = load_judgments(path), load_corpus(root)
    with pytest.raises(JudgmentsError) as error:
        resolve_gold(judgments, corpus)
    where = f"{judgments.path}:1 (query q1)"
    assert error.value.problems == [
        f"{where}: document 'zz.md' is not in the corpus {corpus.root}; closest: a.md",
        f"{where}: empty.md is empty (no text to quote; the corpus keeps it so it can be judged whole): drop the "
        "quote to judge the whole document, or give the file text: 'x'",
        f"{where}: quote not found in a.md: 'abxy'; nearest passage (similarity 0.50, line 1, chars 0-4): 'abcd'"]
