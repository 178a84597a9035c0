"""Every measure, defined once, under its ir_measures name. Help text, docs and reports read this.

A measure is a file: ``sql/measures/*.sql`` (and a user's measure directory, ``[measures] dir`` in
assay.toml) hold the SQL, and each file that defines measures starts with a header this module reads.
No measure name is typed in Python except the standard sets (``STANDARD``, ``TREC_STANDARD``);
other spellings of the names (trec_eval's, ranx's) are data too, in ``aliases.toml``.

Chunk level: a retrieved chunk is relevant when its span overlaps a gold span;
each gold entry (unit) is credited once, at the first rank that overlaps it, and
that rank's gain is the highest grade among the units it newly covers. A chunk
that only overlaps already-credited units counts as not relevant, so overlapping
chunks never lift a metric above 1.
Document level: the ranking collapsed to first-seen distinct documents; each
distinct gold document is a unit, graded by its best gold entry.
Span measures (SpanRecall, SpanPrecision, SpanIoU) compare text, not items: the
retrieved text (the union of the retrieved spans, each character once) against the
gold text (the union of the gold spans), in characters of the document text, as Chroma's
chunking evaluation measures them (docs/measures.md). The standard set reports text recall
within a budget (SpanRecall@1000tok) and precision and IoU over the top 10 (SpanPrecision@10,
SpanIoU@10). At a filled budget of N tokens the retrieved text is N tokens long whatever the run,
so SpanPrecision@Ntok is SpanRecall@Ntok times the gold length over that length: recall again. It
stays parseable (runs stored it, gate rules name it), out of the standard set.
Context budgets (``@1000tok``): results are taken in rank order until 1,000 tokens
are filled, the last one cut at the token that fills the budget; tokens are word
pieces of the tokenizer assay ships (assay.store.tokens). Budgeted measures are chunk
level only: what matters is the text a prompt would hold.

The header: the file's first lines, one ``-- field: value`` each, ended by an empty ``--`` line (or the
first line of SQL). A long value goes on over lines indented two more spaces (``--   more text``). An
empty ``--`` line followed by another ``-- measure:`` line starts a second measure of the same file.

    -- measure: nDCG                  the name (letters and _), used as nDCG, nDCG@10, nDCG@1000tok
    -- interval: bootstrap            wilson (0/1 values) or bootstrap (graded values)
    -- cutoff: optional               required (R@10), optional (RR, RR@10) or none (Abstain)
    -- levels: chunk, doc             chunk and/or doc; or query; or answer
    -- budget: measures/ndcg_budget   optional: the SQL file computing @Ntok (chunk level)
    -- answerable_only: yes           optional (yes): query level only, which questions count
    -- unit: question                 optional (question): or citation, claim (these never pair across runs)
    -- reads_tokens: no               optional (no): its SQL counts tokens at any cutoff (span measures)
    -- definition: DCG of the top k (gain / log2(rank + 1), linear grades) over the ideal DCG; @Ntok: the
    --   ranks within a budget of N tokens, ...
    --

A file without a header (``measures/span_context``, included with ``-- @include``; a budget file) is no
measure. The SQL may use ``$run_id``, ``$stage``, ``$k`` (the cutoff; none: 2147483647) and ``$budget``
(tokens; none: 2147483647); only those it uses are bound. Per question it returns
``(query_id, level, value)`` at chunk/doc level, ``(query_id, answerable, value)`` at query level,
``(query_id, 'answer', value, unit_id)`` at answer level; every value lies in [0, 1] (the intervals assume it).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from assay.core import sqlfiles
from assay.core.errors import ConfigError

NO_CUTOFF = 2_147_483_647
PARAMETERS = ("run_id", "stage", "k", "budget")
USER_PREFIX = "user_measures/"  # the SQL names of the files in a user's measure directory

# The standard set, reported when no measure is named.
STANDARD = ("Success@1", "Success@3", "Success@10", "R@10", "P@5", "RR@10", "nDCG@10", "AP",
            "SpanRecall@1000tok", "Success@1000tok", "nDCG@1000tok", "SpanPrecision@10", "SpanIoU@10",
            "Abstain", "FalseAbstain",
            "answer_rate", "refusal_rate", "citation_precision", "faithfulness", "judged_faithfulness")
# `assay eval-trec`'s set when no measure is named: trec_eval's default measures that assay computes (map,
# recip_rank, P at trec_eval's cutoffs), recall at the same cutoffs (trec_eval -m recall), ndcg (-m ndcg), and
# the figures BEIR and RAG reports lead with: nDCG@10 and Success@1/5/10 (-m success).
TREC_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TREC_STANDARD = ("AP", "RR", *(f"P@{k}" for k in TREC_CUTOFFS), *(f"R@{k}" for k in TREC_CUTOFFS), "nDCG", "nDCG@10",
                 "Success@1", "Success@5", "Success@10")


@dataclass(frozen=True)
class MeasureFamily:
    name: str  # ir_measures name
    sql: str  # file under sql/measures
    interval: str  # 'wilson' for 0/1 per-question values, 'bootstrap' for graded ones
    cutoff: str  # 'required', 'optional' or 'none'
    definition: str
    levels: tuple[str, ...] = ("chunk", "doc")
    answerable_only: bool = True
    unit: str = "question"  # what one value is about: question, citation or claim (only questions pair across runs)
    budget_sql: str | None = None  # the file that computes the budgeted variant (@Ntok); None: no budgets
    reads_tokens: bool = False  # its SQL counts tokens (span measures, at any cutoff)
    source: str = ""  # 'path:line' of its header

    @property
    def user(self) -> bool:
        """A measure of a user's ``[measures] dir``: its SQL runs sandboxed (assay.store.sqlshell.sandboxed_select)."""
        return self.sql.startswith(USER_PREFIX)


# --- reading headers ---------------------------------------------------------------------------------------

FIELDS = ("measure", "interval", "cutoff", "levels", "budget", "answerable_only", "unit", "reads_tokens",
          "definition")
REQUIRED = ("interval", "cutoff", "levels", "definition")
CHOICES = {"interval": ("wilson", "bootstrap"), "cutoff": ("required", "optional", "none"),
           "unit": ("question", "citation", "claim")}
LEVELS = ("chunk", "doc", "query", "answer")
YES_NO = {"yes": True, "true": True, "no": False, "false": False}
_FIELD = re.compile(r"^--\s?([a-z_]+):\s*(.*?)\s*$")
_CONTINUED = re.compile(r"^--\s{3,}(\S.*?)\s*$")
_EMPTY = re.compile(r"^--\s*$")
_NAME = re.compile(r"[A-Za-z_]+")


def read_header(text: str, where: str) -> list[dict[str, tuple[str, int]]]:
    """The header's measure blocks ({field: (value, line)}), none when the file does not start with
    ``-- measure:``. ``where`` (the file) starts every error message."""
    lines = text.splitlines()
    first = _FIELD.match(lines[0]) if lines else None
    if not first or first.group(1) != "measure":
        if first and first.group(1) in FIELDS:
            raise ConfigError(f"{where}:1: a measure header starts with '-- measure: NAME'")
        return []
    blocks: list[dict[str, tuple[str, int]]] = []
    last = None
    for number, line in enumerate(lines, 1):
        if _EMPTY.match(line):
            if number < len(lines) and lines[number].startswith("-- measure:"):
                continue
            break
        if not line.startswith("--"):
            break
        field = _FIELD.match(line)
        if field:
            key, value = field.groups()
            if key not in FIELDS:
                raise ConfigError(f"{where}:{number}: unknown header field {key!r}; fields: {', '.join(FIELDS)}")
            if key == "measure":
                blocks.append({})
            elif key in blocks[-1]:
                raise ConfigError(f"{where}:{number}: {key} given twice for measure {blocks[-1]['measure'][0]}")
            blocks[-1][key] = (value, number)
            last = key
            continue
        more = _CONTINUED.match(line)
        if more and last is not None:
            value, at = blocks[-1][last]
            blocks[-1][last] = (f"{value} {more.group(1)}", at)
            continue
        raise ConfigError(f"{where}:{number}: expected '-- field: value', a continuation indented two more "
                          "spaces, or an empty '--' line ending the header")
    return blocks


def _family(block: dict[str, tuple[str, int]], sql: str, where: str) -> MeasureFamily:
    name, line = block["measure"]
    for key in REQUIRED:
        if key not in block:
            raise ConfigError(f"{where}:{line}: measure {name or '?'} has no '{key}' field")

    def value(key: str, default: str | None = None) -> str | None:
        return block[key][0] if key in block else default

    def fail(key: str, message: str):
        return ConfigError(f"{where}:{block[key][1]}: {key}: {message}")

    if not _NAME.fullmatch(name):
        raise fail("measure", f"{name!r} is not a measure name (letters and _ only)")
    for key, allowed in CHOICES.items():
        if key in block and value(key) not in allowed:
            raise fail(key, f"{value(key)!r}; one of {', '.join(allowed)}")
    flags = {}
    for key in ("answerable_only", "reads_tokens"):
        if key in block and value(key).lower() not in YES_NO:
            raise fail(key, f"{value(key)!r}; yes or no")
        flags[key] = YES_NO[value(key, "yes" if key == "answerable_only" else "no").lower()]
    levels = tuple(part.strip() for part in value("levels").split(","))
    if not (set(levels) <= {"chunk", "doc"} or levels in (("query",), ("answer",))) or len(set(levels)) != len(levels):
        raise fail("levels", f"{value('levels')!r}; chunk and/or doc, or query, or answer")
    budget = value("budget")
    if budget is not None and "chunk" not in levels:
        raise fail("budget", "budgets (@Ntok) are chunk level; add chunk to levels or drop budget")
    if not value("definition"):
        raise fail("definition", "empty; say what one value is")
    return MeasureFamily(name, sql, value("interval"), value("cutoff"), value("definition"),
                         levels=tuple(lv for lv in LEVELS if lv in levels), unit=value("unit", "question"),
                         budget_sql=budget, source=f"{where}:{line}", **flags)


def read_families(name: str) -> list[MeasureFamily]:
    """The measures the named SQL file's header defines (none for a working file)."""
    path = sqlfiles.sql_path(name)
    families = [_family(block, name, str(path)) for block in read_header(path.read_text(encoding="utf-8"), str(path))]
    for fam in families:
        if fam.budget_sql is not None:
            try:
                sqlfiles.sql_path(fam.budget_sql)
            except Exception:
                raise ConfigError(f"{fam.source}: budget: no SQL file named {fam.budget_sql!r}") from None
    return families


_STANDARD_FAMILIES = [re.match(r"[A-Za-z_]+", text).group(0) for text in STANDARD]


def _listing_key(fam: MeasureFamily) -> tuple:
    """Ranking measures, then span (chunk-only), per-question and answer measures; the standard set's
    order within each group."""
    standard = _STANDARD_FAMILIES
    return (LEVELS.index(fam.levels[0]), -len(fam.levels),
            standard.index(fam.name) if fam.name in standard else len(standard))


@lru_cache(maxsize=None)
def builtin_families() -> tuple[MeasureFamily, ...]:
    """The measures of sql/measures, read once."""
    found = [fam for name in sqlfiles.sql_names("measures/") for fam in read_families(name)]
    return tuple(sorted(_unique(found), key=_listing_key))  # sorted is stable: file order breaks ties


def _unique(families) -> list[MeasureFamily]:
    seen: dict[str, MeasureFamily] = {}
    for fam in families:
        other = seen.get(fam.name.lower())
        if other is not None:
            raise ConfigError(f"measure {fam.name!r} is defined twice: {other.source} and {fam.source}")
        seen[fam.name.lower()] = fam
    return list(seen.values())


FAMILIES: dict[str, MeasureFamily] = {}  # filled in place: modules that imported it see user measures too


def _install(families) -> None:
    FAMILIES.clear()
    FAMILIES.update((fam.name, fam) for fam in families)


_install(builtin_families())


def load_user_measures(config: dict) -> tuple[MeasureFamily, ...]:
    """Register the measures of ``[measures] dir`` in a parsed assay.toml (a path relative to that file),
    replacing those registered before; the built-in ones only when the table is absent. Returns the user's.
    Every ``*.sql`` there is loadable as ``user_measures/<file stem>`` (includable by that name)."""
    table = config.get("measures") or {}
    _install(builtin_families())
    sqlfiles.set_extra_files({})
    if "dir" not in table:
        return ()
    where = config.get("_path", "assay.toml")
    root = Path(where).parent / table["dir"]
    if not root.is_dir():
        raise ConfigError(f"{where}: [measures] dir {table['dir']!r} is not a directory ({root})")
    try:
        sqlfiles.set_extra_files({USER_PREFIX + path.stem: path for path in sorted(root.glob("*.sql"))})
        user = [fam for name in sqlfiles.sql_names(USER_PREFIX) for fam in read_families(name)]
        check_names(user)
        _install(_unique(list(builtin_families()) + user))
    except BaseException:
        sqlfiles.set_extra_files({})
        _install(builtin_families())
        raise
    return tuple(user)


# --- parameters --------------------------------------------------------------------------------------------

_PARSER_LOCK = threading.Lock()
_PARAMETERS: dict[str, frozenset[str]] = {}  # SQL text -> the $names it uses


@lru_cache(maxsize=1)
def _parser():
    from assay.store.warehouse import engine

    return engine().connect(":memory:")  # opening one costs ~25 ms; parsing with it well under 1 ms a file


def sql_parameters(text: str, parser=None) -> frozenset[str]:
    """The ``$names`` a SQL text uses, found by DuckDB's own parser (comments and strings never count).
    ``parser``: a DuckDB connection of the caller's thread to parse with (a warehouse's: opening a database
    only to parse costs more than a report's queries); else one kept for parsing."""
    found = _PARAMETERS.get(text)
    if found is None:
        if parser is None:
            with _PARSER_LOCK:
                statements = _parser().extract_statements(text)
        else:
            statements = parser.extract_statements(text)
        found = frozenset(name for statement in statements for name in statement.named_parameters)
        if len(_PARAMETERS) < 256:
            _PARAMETERS[text] = found
    return found


def used_parameters(name: str, parser=None) -> frozenset[str]:
    """The parameters the named measure file uses; one it may not use is a ConfigError naming the file.
    ``parser`` as for ``sql_parameters``."""
    from assay.store.warehouse import engine

    try:
        used = sql_parameters(sqlfiles.load_sql(name), parser)
    except engine().Error as exc:
        raise ConfigError(f"{sqlfiles.sql_path(name)}: the SQL does not parse ({exc})") from None
    unknown = sorted(used - set(PARAMETERS))
    if unknown:
        raise ConfigError(f"{sqlfiles.sql_path(name)} uses ${', $'.join(unknown)}; a measure may use "
                          f"{', '.join('$' + p for p in PARAMETERS)}")
    return used


# --- measures ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Measure:
    family: MeasureFamily
    cutoff: int | None
    budget: int | None = None  # a context budget in tokens (``@1000tok``) instead of a rank cutoff

    @property
    def name(self) -> str:
        if self.budget is not None:
            return f"{self.family.name}@{self.budget}tok"
        return self.family.name if self.cutoff is None else f"{self.family.name}@{self.cutoff}"

    @property
    def k(self) -> int:
        return NO_CUTOFF if self.cutoff is None else self.cutoff

    @property
    def levels(self) -> tuple[str, ...]:
        return ("chunk",) if self.budget is not None else self.family.levels

    @property
    def sql(self) -> str:
        return self.family.budget_sql if self.budget is not None else self.family.sql

    @property
    def uses_budget(self) -> bool:
        """Whether the SQL reads token counts (span and budgeted measures)."""
        return self.budget is not None or self.family.reads_tokens

    def params(self, run_id: str, stage: str, parser=None) -> dict:
        """The bound parameters of the measure's SQL: exactly those its file uses (``parser``: see
        ``sql_parameters``)."""
        values = {"run_id": run_id, "stage": stage, "k": self.k,
                  "budget": NO_CUTOFF if self.budget is None else self.budget}
        used = used_parameters(self.sql, parser)
        return {key: value for key, value in values.items() if key in used}

    def __repr__(self) -> str:
        return self.name


# --- where measures are named, and the names they go by ------------------------------------------------------

@dataclass(frozen=True)
class Scope:
    """Where measures are named: the levels a measure needs one of to apply there, and how messages call it."""
    name: str  # 'a TREC run'
    levels: tuple[str, ...]
    why: str = ""  # why the others do not apply, said after the measure's name

    def admits(self, measure: "Measure") -> bool:
        return bool(set(measure.levels) & set(self.levels))

    def families(self) -> list[MeasureFamily]:
        return [fam for fam in FAMILIES.values() if set(fam.levels) & set(self.levels)]


ANYWHERE = Scope("a run", LEVELS)


def syntax(fam: MeasureFamily, scope: Scope = ANYWHERE) -> str:
    """How a family is written: 'Success@k', 'RR[@k]', 'Abstain'; '|@Ntok' where budgets apply in ``scope``."""
    cut = {"required": "@k", "optional": "[@k]", "none": ""}[fam.cutoff]
    return fam.name + cut + ("|@Ntok" if fam.budget_sql and "chunk" in scope.levels else "")


ALIASES_FILE = Path(__file__).with_name("aliases.toml")


@dataclass(frozen=True)
class Alias:
    spelling: str  # as the tools write it: 'ndcg_cut_k' (the cutoff goes where k is) or 'mrr' (a family)
    measure: str  # the canonical name: 'nDCG@k' or 'RR'
    used_by: str
    note: str

    @property
    def family(self) -> str:
        return self.measure.removesuffix("@k")

    @property
    def takes_cutoff(self) -> bool:
        """A trec_eval-style name with its cutoff after '_' (P_10); else a family's other name (mrr@10)."""
        return self.spelling.endswith("_k")

    @property
    def base(self) -> str:
        return self.spelling.removesuffix("_k").lower()


@dataclass(frozen=True)
class Refused:
    spellings: tuple[str, ...]  # names of measures that differ from every assay measure ('hits', 'bpref')
    used_by: str
    why: str


@dataclass(frozen=True)
class NameTable:
    aliases: tuple[Alias, ...]
    refused: tuple[Refused, ...]
    families: dict[str, Alias]  # lower-case spelling -> the family it names
    cutoffs: dict[str, Alias]  # lower-case base of a '_k' spelling -> the family it names at that cutoff
    differs: dict[str, Refused]  # lower-case spelling -> why it is no assay measure


@lru_cache(maxsize=1)
def names() -> NameTable:
    """The alias table (metrics/aliases.toml), checked: every alias names a built-in family, no spelling is
    given twice or is a family's own name, and a '_k' spelling names a measure at k."""
    import tomllib

    where = str(ALIASES_FILE)
    data = tomllib.loads(ALIASES_FILE.read_text(encoding="utf-8"))
    builtin = {fam.name.lower(): fam for fam in builtin_families()}
    aliases, refused, families, cutoffs, differs = [], [], {}, {}, {}
    for entry in data.get("alias", []):
        for spelling in entry["spellings"]:
            alias = Alias(spelling, entry["measure"], entry["used_by"], entry["note"])
            target = builtin.get(alias.family.lower())
            if target is None or target.name != alias.family:
                raise ConfigError(f"{where}: alias {spelling!r} names {alias.measure!r}, which is no measure")
            if alias.takes_cutoff != alias.measure.endswith("@k") or (alias.takes_cutoff and target.cutoff == "none"):
                raise ConfigError(f"{where}: alias {spelling!r}: a spelling ending in _k names a measure at @k, "
                                  "any other a measure family")
            table = cutoffs if alias.takes_cutoff else families
            key = alias.base if alias.takes_cutoff else spelling.lower()
            if key in table or (not alias.takes_cutoff and key in builtin):
                raise ConfigError(f"{where}: spelling {spelling!r} is given twice or is a measure's own name")
            table[key] = alias
            aliases.append(alias)
    for entry in data.get("differs", []):
        refused.append(Refused(tuple(entry["spellings"]), entry["used_by"], entry["why"]))
        for spelling in entry["spellings"]:
            key = spelling.lower()
            if key in families or key in builtin or key in differs:
                raise ConfigError(f"{where}: spelling {spelling!r} is both refused and a measure's name")
            differs[key] = refused[-1]
    return NameTable(tuple(aliases), tuple(refused), families, cutoffs, differs)


def check_names(families) -> None:
    """A measure of one's own may not take a spelling the alias table gives another measure."""
    table = names()
    for fam in families:
        alias = table.families.get(fam.name.lower())
        if alias is not None:
            raise ConfigError(f"{fam.source}: measure {fam.name} would shadow {alias.spelling!r}, the "
                              f"{alias.used_by} name of {alias.measure} ({ALIASES_FILE}); name it differently")


# 'nDCG@10', 'AP', 'hit_rate@5', 'SpanRecall@1000tok', and trec_eval's 'ndcg_cut_10', 'P_5'.
_MEASURE = re.compile(r"(?P<name>[A-Za-z_][A-Za-z_-]*?)(?:_(?P<under>\d+)|@(?P<at>\d+)(?P<tok>tok)?)?")
MEASURE_TEXT = r"[A-Za-z_][A-Za-z_-]*(?:_\d+|@\d+(?:tok)?)?"  # a measure's name inside a longer text (a gate rule)
_SUFFIX = re.compile(r"(?:[_@][\d.]*(?:tok)?)$")


def _family_named(name: str, under: bool) -> MeasureFamily | None:
    """The family a name means: its own name (any case), or an alias's."""
    if under:
        alias = names().cutoffs.get(name.lower())
        return FAMILIES.get(alias.family) if alias else None
    family = FAMILIES.get(name)
    if family is not None:
        return family
    lower = {n.lower(): fam for n, fam in FAMILIES.items()}
    if name.lower() in lower:
        return lower[name.lower()]
    alias = names().families.get(name.lower())
    return FAMILIES.get(alias.family) if alias else None


def suggestions(text: str, scope: Scope = ANYWHERE, n: int = 3) -> list[str]:
    """The canonical names closest to ``text`` (difflib's ratio over the families' names and every alias: at
    least 0.6 and within 0.1 of the best), at the cutoff ``text`` gives, among the measures that apply in ``scope``."""
    import difflib

    m = re.fullmatch(r"\s*(?P<name>.*?)(?:_(?P<under>\d+)|@(?P<at>\d+)(?P<tok>tok)?)?\s*", text)
    name, number = m.group("name").lower(), m.group("under") or m.group("at")
    budget = m.group("tok") is not None
    allowed = {fam.name: fam for fam in scope.families() if not budget or (fam.budget_sql and "chunk" in scope.levels)}
    spelled = {fam.name.lower(): fam.name for fam in allowed.values()}
    for alias in names().aliases:
        if alias.family in allowed:
            spelled.setdefault(alias.base if alias.takes_cutoff else alias.spelling.lower(), alias.family)
    ratio = {key: difflib.SequenceMatcher(None, name, key).ratio() for key in spelled}
    best = max(ratio.values(), default=0.0)
    found = []
    for key in sorted((k for k, r in ratio.items() if r >= max(0.6, best - 0.1)), key=lambda k: (-ratio[k], k)):
        fam = allowed[spelled[key]]
        if fam.cutoff == "none" or (number is None and fam.cutoff == "optional"):
            shown = fam.name
        elif budget:
            shown = f"{fam.name}@{number}tok"
        else:
            shown = f"{fam.name}@{number or 10}"
        if shown not in found:
            found.append(shown)
    return found[:n]


def _unknown(text: str, scope: Scope, why: str = "") -> ConfigError:
    close = suggestions(text, scope)
    listed = ", ".join(syntax(fam, scope) for fam in scope.families())
    where = "Measures" if scope is ANYWHERE else f"Measures for {scope.name}"
    guess = f"; did you mean {' or '.join(close)}?" if close else "."
    return ConfigError(f"unknown measure {text.strip()!r}{why}{guess} {where}: {listed} "
                       "(other spellings: `assay measures --aliases`)")


def parse_measure(text: str, scope: Scope = ANYWHERE) -> Measure:
    """The measure a name means: its ir_measures name in any case (nDCG@10, ndcg@10), or an alias from
    aliases.toml (ndcg_cut_10, mrr@10, hit_rate@5), with a cutoff (@k, or _k for trec_eval's names) or a
    token budget (@Ntok). Errors suggest the closest names and list only the measures that apply in ``scope``."""
    m = _MEASURE.fullmatch(text.strip())
    family = _family_named(m.group("name"), m.group("under") is not None) if m else None
    if family is None:
        base = _SUFFIX.sub("", text.strip()).lower()
        if base in names().differs:
            refused = names().differs[base]
            raise _unknown(text, scope, f" ({refused.used_by}): {refused.why}")
        if m is None and _family_named(re.split(r"[@_]", text.strip())[0], False):
            raise _unknown(text, scope, ": a cutoff is a whole number after @ (nDCG@10), or a token budget "
                                        "(nDCG@1000tok)")
        raise _unknown(text, scope)
    number = m.group("under") or m.group("at")
    number = int(number) if number else None
    if number is not None and number < 1:
        raise ConfigError(f"measure {text!r}: the cutoff must be at least 1")
    if m.group("tok"):
        if family.budget_sql is None:
            budgeted = ", ".join(f.name for f in FAMILIES.values() if f.budget_sql)
            raise ConfigError(f"measure {family.name} takes no context budget; budgets (@Ntok) apply to {budgeted}")
        measure = Measure(family, None, number)
    elif family.cutoff == "required" and number is None:
        example = f"{family.name}@10" + (f" or {family.name}@1000tok" if family.budget_sql else "")
        raise ConfigError(f"measure {text!r} needs a cutoff, e.g. {example}")
    elif family.cutoff == "none" and number is not None:
        raise ConfigError(f"measure {family.name} takes no cutoff")
    else:
        measure = Measure(family, number)
    if not scope.admits(measure):
        listed = ", ".join(syntax(fam, scope) for fam in scope.families())
        raise ConfigError(f"measure {measure.name} does not apply to {scope.name}"
                          + (f" ({scope.why})" if scope.why else "") + f"; choose from {listed}")
    return measure


DEFAULT_MEASURES = tuple(parse_measure(name) for name in STANDARD)
MEASURES = FAMILIES
