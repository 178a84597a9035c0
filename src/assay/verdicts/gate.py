"""`assay gate`: pass/fail rules on one run's metrics, for CI.

A rule is ``METRIC[:LEVEL][[SLICE]] OP VALUE``, for example ``Success@3:doc>=0.75``,
``nDCG@10>=0.6`` (level chunk when not given; ``query`` for Abstain and
FalseAbstain) or ``Success@3:doc[form=gap]>=0.5``. OP is one of >=, >, <=, <.
Rules come from ``[gate] rules = [...]`` in assay.toml and from ``--rule``.

A rule that cannot be read, names an unknown measure or level, a bar outside
[0, 1], or a slice the run does not have (``form=gapp``) is a usage error, exit
code 2, naming where the rule came from and, for a slice, the slices the run has.
The same rule given more than once (preset, assay.toml, --rule; compared by
measure, level, slice, operator and bar) is checked once, and the merge is said.

A rule whose slice exists but has no questions for its measure fails: a gate never
passes vacuously. A rule passes or fails on its point estimate against the bar; a
rule that passes but whose one-sided test of "the true value is on the passing
side" is not significant after correcting the family of every rule checked (Holm
by default) is marked ``fragile``, a warning. Exit code 6 when any rule fails.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

from assay.core.errors import ConfigError, UsageError
from assay.measures import fill
from assay.measures.compute import SLICE_FIELDS, evaluate, question_labels
from assay.verdicts.family import NAMES as CORRECTION_NAMES
from assay.measures.registry import MEASURE_TEXT, parse_measure

GATE_FAILED = 6
OPS = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt}
_RULE = re.compile(rf"^\s*(?P<metric>{MEASURE_TEXT})(?::(?P<level>chunk|doc|query|answer))?"
                   r"(?:\[(?P<slice>[^\]]+)\])?\s*(?P<op>>=|<=|>|<)\s*(?P<value>-?\d+(?:\.\d+)?)\s*$")


@dataclass(frozen=True)
class Rule:
    text: str
    measure: object
    level: str
    slice: str
    op: str
    bar: float
    source: str = field(default="--rule", compare=False)  # where it was given: --rule, assay.toml, preset NAME

    @property
    def key(self) -> tuple:
        """What the rule checks: two rules with the same key are the same rule, however written."""
        return (self.measure.name, self.level, self.slice, self.op, self.bar)


def parse_rule(text: str, source: str = "--rule") -> Rule:
    """One rule; UsageError (exit code 2) naming ``source`` when it cannot be used."""
    where = f"gate rule {text!r} ({source})"
    m = _RULE.match(text)
    if not m:
        raise UsageError(f"cannot read {where}; write it like 'Success@3:doc>=0.75' or 'nDCG@10[form=gap]>=0.5'")
    try:
        measure = parse_measure(m.group("metric"))
    except ConfigError as exc:
        raise UsageError(f"{where}: {exc}") from None
    levels = measure.levels
    level = m.group("level") or ("chunk" if "chunk" in levels else levels[0])  # answer measures: 'answer'
    if level not in levels:
        raise UsageError(f"{where}: {measure.name} has level(s) {', '.join(levels)}, not {level}")
    bar = float(m.group("value"))
    if not 0.0 <= bar <= 1.0:
        raise UsageError(f"{where}: the bar {bar:g} is outside [0, 1], where every measure lies, so the rule "
                         "could never fail or never pass")
    shown = text[:m.start("metric")] + measure.name + text[m.end("metric"):]  # the canonical name, whatever was typed
    return Rule(shown.strip(), measure, level, (m.group("slice") or "all").strip(), m.group("op"), bar, source)


PRESETS = {
    # retrieval and answers of a RAG pipeline, as the answer stage issue sets them
    "rag": ("Success@3:doc>=0.75", "answer_rate>=0.5", "refusal_rate>=0.8", "citation_precision>=0.8",
            "faithfulness>=0.8"),
    # the top of the ranking (Success@3:doc), its order (nDCG@10:chunk) and its depth (R@10:chunk, the share of gold
    # passages in the top 10): a pipeline that returns too few results, like ablate's weakened rung (dense, top 3),
    # can pass the first two and must fail the third, since R@10 of a top-3 list is its R@3. The bars pass sound
    # pipelines on the demo and on SciFact (BM25, dense and hybrid: Success@3 0.68-0.93, R@10 0.754-0.845) and fail
    # a top-3 cut on both (R@10 0.586-0.716); docs/ablate.md gives the figures
    "retrieval": ("Success@3:doc>=0.7", "nDCG@10:chunk>=0.5", "R@10:chunk>=0.75"),
}


def collect_rules(config: dict, cli_rules: tuple[str, ...], preset: str | None = None,
                  required: bool = True) -> tuple[list[Rule], list[str]]:
    """The preset's rules, then [gate] rules, then --rule, each distinct rule once; and one note per
    rule given more than once, saying where. None at all is an error unless not ``required``
    (`assay ablate` checks its rungs against rules only when some are given)."""
    if preset is not None and preset not in PRESETS:
        raise UsageError(f"unknown gate preset {preset!r}; known: {', '.join(PRESETS)}")
    table = config.get("gate", {})
    toml = f"{config.get('_path', 'assay.toml')} [gate] rules"
    if not isinstance(table, dict):
        raise ConfigError(f"{config.get('_path', 'assay.toml')}: gate must be a table ([gate] rules = [...])")
    toml_rules = table.get("rules", [])
    if not isinstance(toml_rules, list) or not all(isinstance(t, str) for t in toml_rules):
        raise ConfigError(f"{toml} must be a list of strings like \"Success@3:doc>=0.75\"")
    given = ([(t, f"preset {preset}") for t in PRESETS.get(preset, ())] + [(t, toml) for t in toml_rules]
             + [(t, "--rule") for t in cli_rules])
    if not given and required:
        raise UsageError("no gate rules: give --rule 'Success@3:doc>=0.75' or [gate] rules = [...] in assay.toml")
    rules: dict[tuple, Rule] = {}
    sources: dict[tuple, list[str]] = {}
    for text, source in given:
        rule = parse_rule(text, source)
        rules.setdefault(rule.key, rule)
        sources.setdefault(rule.key, []).append(f"{rule.text!r} ({source})")
    notes = [f"gate rule {rules[k].text!r} is given {len(v)} times ({', '.join(v)}): checked once"
             for k, v in sources.items() if len(v) > 1]
    return list(rules.values()), notes


def rules_from(config: dict, cli_rules: tuple[str, ...], preset: str | None = None,
               required: bool = True) -> list[Rule]:
    """The distinct rules of ``collect_rules`` (duplicates merged)."""
    return collect_rules(config, cli_rules, preset, required)[0]


def run_slices(warehouse, run_id: str) -> list[str]:
    """The slices a run's questions form ('all', then 'category=...', 'form=...', 'hard_class=...')."""
    labels = question_labels(warehouse, run_id).values()
    return ["all"] + [f"{f}={v}" for f in SLICE_FIELDS for v in sorted({str(q[f]) for q in labels})]


def check_slices(warehouse, run_id: str, rules: list[Rule]) -> None:
    """UsageError (exit code 2) for a rule naming a slice the run has no question in, listing those it has."""
    known = run_slices(warehouse, run_id)
    unknown = [r for r in rules if r.slice not in known]
    if unknown:
        named = "; ".join(f"{r.text} ({r.source}): no such slice {r.slice!r}" for r in unknown)
        raise UsageError(f"{named}; run {run_id} has the slices {', '.join(known)}")


def check(warehouse, run_id: str, rules: list[Rule], seed: int, samples: int, alpha: float = 0.05,
          correction: str = "holm") -> list[dict]:
    """Each rule's result on the run. A slice the run does not have is a UsageError before anything is computed.

    A rule passes or fails on its point estimate against the bar. Each measured rule is also tested, one-sided,
    for "the true value is on the passing side of the bar" (assay.verdicts.bar_test: exact binomial for 0/1
    measures, one-sample sign-flip for graded ones); the p-values of every rule checked (each measure, level and
    slice) are corrected together (``correction``: holm, bonferroni or none), and a rule that passes but is not
    significant at ``alpha`` after correction is ``fragile``. Its ``bound`` is the one-sided bound at the level
    the rule was decided at: it clears the bar exactly when the rule is not fragile."""
    from assay.core.limits import ALPHA
    from assay.verdicts.family import CORRECTIONS

    if ALPHA.problem(alpha):
        raise UsageError(f"--alpha {ALPHA.problem(alpha)}")
    if correction not in CORRECTIONS:
        raise UsageError(f"--correction {correction!r}: choose one of {', '.join(CORRECTIONS)}")
    check_slices(warehouse, run_id, rules)
    eligible = warehouse.con.execute("SELECT COALESCE(gate_eligible, TRUE) FROM runs WHERE run_id = ?",
                                     [run_id]).fetchall()[0][0]
    untested = {"fragile": False, "value": None, "n": 0, "ci_low": None, "ci_high": None, "p_value": None,
                "p_adjusted": None, "decided_at": None, "bound": None, "confidence": None, "method": None,
                "patterns": None}
    if not eligible:
        reason = "the run used --force-generation: a diagnostic run, never a gate run"
        return [_ordered({"rule": r.text, "op": r.op, "bar": r.bar, "passed": False, **untested, "reason": reason,
                          **_family(0, alpha, correction)}) for r in rules]
    from assay.verdicts.bar_test import Sample
    from assay.measures.compute import slice_values, summarise
    from assay.verdicts.family import correct

    measures = list(dict.fromkeys(r.measure for r in rules))
    groups = slice_values(warehouse, run_id, measures)
    keyed = {(g[0].name, g[1], g[2]): (i, g, row)
             for i, (g, row) in enumerate(zip(groups, summarise(warehouse, groups, seed, samples)))}
    results, hypotheses = [], {}  # hypothesis -> (its sample, the results testing it)
    for rule in rules:
        index, group, row = keyed.get((rule.measure.name, rule.level, rule.slice), (None, None, None))
        if row is None or row.n == 0:
            results.append({"rule": rule.text, "passed": False, **untested,
                            "reason": f"no questions in slice {rule.slice!r}: a gate never passes vacuously"})
            continue
        # a slice holding every question is the overall sample: the same rule on it is the same hypothesis,
        # tested once (the family counts distinct hypotheses, as regress counts distinct checks)
        key = (index if group[4] is None else group[4], rule.op, rule.bar)
        sample = hypotheses.setdefault(key, (Sample(group[3], seed), []))[0]  # graded: signflip.SAMPLES patterns
        hypotheses[key][1].append(len(results))
        results.append({"rule": rule.text, "passed": OPS[rule.op](row.value, rule.bar), "value": row.value,
                        "n": row.n, "ci_low": row.ci_low, "ci_high": row.ci_high,
                        "p_value": sample.p(rule.op, rule.bar), "method": sample.method, "patterns": sample.patterns})
    distinct = list(hypotheses.values())
    decisions = correct([results[at[0]]["p_value"] for _, at in distinct], alpha, correction)
    for (sample, at), d in zip(distinct, decisions):
        bound = sample.bound(rules[at[0]].op, d["level"])
        for i in at:
            r, rule = results[i], rules[i]
            r.update({"p_adjusted": d["p_adjusted"], "decided_at": d["level"], "bound": bound,
                      "confidence": 1 - d["level"], "fragile": r["passed"] and not d["rejected"]})
            r["reason"] = (f"{r['value']:.3f} {rule.op} {rule.bar:g}" if r["passed"] else
                           f"{r['value']:.3f} is not {rule.op} {rule.bar:g}")
            if r["fragile"]:
                r["reason"] += f", but its {100 * r['confidence']:.4g}% bound {bound:.3f} does not clear {rule.bar:g}"
            if rule.measure.budget is not None:  # a bar on a budget the run cannot fill judges a smaller context
                r.update(fill.for_run(warehouse, run_id, rule.measure.budget, rule.slice))
                if fill.unfilled(r):
                    r["reason"] += f"; {fill.describe(r)}"
    for r, rule in zip(results, rules):
        r.update({"op": rule.op, "bar": rule.bar, **_family(len(distinct), alpha, correction)})
    return [_ordered(r) for r in results]


FIELDS = ("rule", "op", "bar", "passed", "fragile", "value", "n", "ci_low", "ci_high", "bound", "confidence",
          "p_value", "p_adjusted", "decided_at", "family_size", "correction", "alpha", "method", "patterns", "reason")
"""A rule's result, in this order whatever the path (JSON readers and the tables see the same fields)."""


def _ordered(result: dict) -> dict:
    """The fields in order; a rule on a context budget adds whether the run filled it (metrics.fill)."""
    return {k: result[k] for k in FIELDS} | {k: result[k] for k in fill.FIELDS if k in result}


def _family(size: int, alpha: float, correction: str) -> dict:
    return {"family_size": size, "correction": correction, "alpha": alpha}


def family_line(results: list[dict]) -> str:
    """How the rules were tested, in words: the correction, the family's size, alpha."""
    first = results[0] if results else _family(0, 0.05, "holm")
    size, correction = first["family_size"], first["correction"]
    rules = f"{size} rule{'' if size == 1 else 's'}"
    how = (f"{CORRECTION_NAMES[correction]} over {rules}" if correction != "none" else f"uncorrected, {rules}")
    how = how if size else "no rule could be tested"
    return (f"(fragile) marks a pass that is not significant: one-sided test that the true value is on the passing "
            f"side of the bar, {how} at alpha {first['alpha']:g}")


def render(run_id: str, results: list[dict]) -> str:
    from assay.core.escape import terminal as esc
    from assay.core.tables import render as grid

    rows = []
    for r in results:
        status = ("PASS" if r["passed"] else "FAIL") + (" (fragile)" if r["fragile"] else "")
        measured = r["value"] is not None
        side = ">=" if r["op"] in (">=", ">") else "<="
        rows.append([status, r["rule"], f"{r['value']:.3f}" if measured else "-", r["n"],
                     f"{side} {r['bound']:.3f} ({100 * r['confidence']:.4g}%)" if measured else "-",
                     _p(r["p_value"]), _p(r["p_adjusted"]), r["reason"]])
    correction = results[0]["correction"] if results else "holm"
    adjusted = f"p ({CORRECTION_NAMES[correction]})" if correction != "none" else "p (uncorrected)"
    failed = sum(not r["passed"] for r in results)
    from assay.verdicts import verdict_text

    return "\n".join([esc(verdict_text.gate(results)["sentence"]), "",  # the verdict in words first
                      f"gate on run {esc(run_id)}", family_line(results),
                      grid(["status", "rule", "value", "n", "bound", "p", adjusted, "reason"], rows),
                      f"{len(results) - failed} passed, {failed} failed"
                      + (f"; exit code {GATE_FAILED}" if failed else "")]) + "\n"


def _p(v) -> str:
    return "-" if v is None else "<0.0001" if v < 0.0001 else f"{v:.4f}"


def to_json(run_id: str, results: list[dict]) -> dict:
    """`assay gate --format json`: the run, how the family was corrected, and every rule's figures."""
    from assay.verdicts import verdict_text

    first = results[0] if results else _family(0, 0.05, "holm")
    return {"run_id": run_id, "passed": all(r["passed"] for r in results), "alpha": first["alpha"],
            "correction": first["correction"], "family_size": first["family_size"],
            "verdict": verdict_text.gate(results), "rules": results}


def junit_xml(run_id: str, results: list[dict]) -> str:
    """JUnit XML, well-formed whatever the rule texts and reasons hold (escape.xml_text, escape.xml_attr)."""
    from assay.core.escape import xml_attr, xml_text

    failed = sum(not r["passed"] for r in results)
    cases = []
    for r in results:
        body = ""
        if not r["passed"]:
            body = f"<failure message={xml_attr(r['reason'])}>{xml_text(r['reason'])}</failure>"
        elif r["fragile"]:
            body = f"<system-out>{xml_text('fragile: ' + r['reason'])}</system-out>"
        elif fill.unfilled(r):  # a pass on a budget the run could not fill: the reason says how far short
            body = f"<system-out>{xml_text(r['reason'])}</system-out>"
        cases.append(f'    <testcase classname="assay.verdicts.gate" name={xml_attr(r["rule"])} time="0">{body}</testcase>')
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            f'<testsuites tests="{len(results)}" failures="{failed}">\n'
            f'  <testsuite name={xml_attr("assay gate " + run_id)} tests="{len(results)}" failures="{failed}" '
            f'errors="0" skipped="0">\n' + "\n".join(cases) + "\n  </testsuite>\n</testsuites>\n")
