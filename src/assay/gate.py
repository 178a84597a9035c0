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
passes vacuously. A rule that passes on the point estimate while its 95% interval
reaches past the bar is marked ``fragile``. Exit code 6 when any rule fails.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass, field

from assay.errors import ConfigError, UsageError
from assay.metrics.compute import SLICE_FIELDS, evaluate, question_labels
from assay.metrics.registry import MEASURE_TEXT, parse_measure

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


def check(warehouse, run_id: str, rules: list[Rule], seed: int, samples: int) -> list[dict]:
    """Each rule's result on the run. A slice the run does not have is a UsageError before anything is computed."""
    check_slices(warehouse, run_id, rules)
    eligible = warehouse.con.execute("SELECT COALESCE(gate_eligible, TRUE) FROM runs WHERE run_id = ?",
                                     [run_id]).fetchall()[0][0]
    if not eligible:
        reason = "the run used --force-generation: a diagnostic run, never a gate run"
        return [{"rule": r.text, "passed": False, "fragile": False, "value": None, "n": 0, "ci_low": None,
                 "ci_high": None, "reason": reason} for r in rules]
    measures = list(dict.fromkeys(r.measure for r in rules))
    rows = {(r.metric, r.level, r.slice): r for r in evaluate(warehouse, run_id, measures, seed=seed, samples=samples)}
    results = []
    for rule in rules:
        row = rows.get((rule.measure.name, rule.level, rule.slice))
        if row is None or row.n == 0:
            results.append({"rule": rule.text, "passed": False, "fragile": False, "value": None, "n": 0,
                            "ci_low": None, "ci_high": None,
                            "reason": f"no questions in slice {rule.slice!r}: a gate never passes vacuously"})
            continue
        passed = OPS[rule.op](row.value, rule.bar)
        # the far end of the interval, in the direction the rule guards against
        far = row.ci_low if rule.op in (">=", ">") else row.ci_high
        fragile = passed and not OPS[rule.op](far, rule.bar)
        reason = (f"{row.value:.3f} {rule.op} {rule.bar:g}" if passed else
                  f"{row.value:.3f} is not {rule.op} {rule.bar:g}")
        if fragile:
            reason += f", but the 95% interval reaches {far:.3f}"
        results.append({"rule": rule.text, "passed": passed, "fragile": fragile, "value": row.value, "n": row.n,
                        "ci_low": row.ci_low, "ci_high": row.ci_high, "reason": reason})
    return results


def render(run_id: str, results: list[dict]) -> str:
    from assay.escape import terminal as esc
    from assay.tables import render as grid

    rows = []
    for r in results:
        status = ("PASS" if r["passed"] else "FAIL") + (" (fragile)" if r["fragile"] else "")
        measured = r["value"] is not None
        rows.append([status, r["rule"], f"{r['value']:.3f}" if measured else "-",
                     f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]" if measured else "-", r["n"], r["reason"]])
    failed = sum(not r["passed"] for r in results)
    return "\n".join([f"gate on run {esc(run_id)}", grid(["status", "rule", "value", "95% CI", "n", "reason"], rows),
                      f"{len(results) - failed} passed, {failed} failed"
                      + (f"; exit code {GATE_FAILED}" if failed else "")]) + "\n"


def junit_xml(run_id: str, results: list[dict]) -> str:
    """JUnit XML, well-formed whatever the rule texts and reasons hold (escape.xml_text, escape.xml_attr)."""
    from assay.escape import xml_attr, xml_text

    failed = sum(not r["passed"] for r in results)
    cases = []
    for r in results:
        body = ""
        if not r["passed"]:
            body = f"<failure message={xml_attr(r['reason'])}>{xml_text(r['reason'])}</failure>"
        elif r["fragile"]:
            body = f"<system-out>{xml_text('fragile: ' + r['reason'])}</system-out>"
        cases.append(f'    <testcase classname="assay.gate" name={xml_attr(r["rule"])} time="0">{body}</testcase>')
    return ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            f'<testsuites tests="{len(results)}" failures="{failed}">\n'
            f'  <testsuite name={xml_attr("assay gate " + run_id)} tests="{len(results)}" failures="{failed}" '
            f'errors="0" skipped="0">\n' + "\n".join(cases) + "\n  </testsuite>\n</testsuites>\n")
