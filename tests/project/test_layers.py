"""The layer contract (docs/architecture.md): each package of assay imports only the layers below it, and no
module imports, directly or through others, a module that imports it back.

Every import counts: at the top of a module, inside a function (a lazy import is still a dependency; it only
runs later), under ``if TYPE_CHECKING``. Imports are read from the source with ``ast``, nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "assay"

# Bottom to top. A module may import its own package and the layers below; the packages of one layer are
# independent (neither imports the other). The top holds the entry points: the CLI, the Python API and the
# three public paths docs/*.md show users importing, re-exported from their layers:
# from assay.warehouse import Warehouse, from assay.lake import open_lake, assay.export.export_runs.
LAYERS = [
    ("core",),
    ("inputs",),
    ("retrieval",),
    ("store",),
    ("measures",),
    ("analytics",),
    ("verdicts",),
    ("runs", "golden"),
    ("present",),
    ("cli", "api", "warehouse", "lake", "export"),
    ("__main__",),
]
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}


def modules() -> dict[str, Path]:
    """Every module of assay by dotted name (a package by its own name; a C module by the name it is built
    under, which imports nothing of assay)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.c")):
        found[".".join(path.relative_to(SRC).with_suffix("").parts)] = path
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: dict) -> set[str]:
    """The assay modules ``name`` imports, wherever the import statement sits. ``from P import x`` is an import
    of module P.x when there is one, else of P."""
    is_package = path.name == "__init__.py"
    out = set()
    if path.suffix == ".c":
        return out
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against this module's package
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names]
            if prefix == "assay" and all(a.name == "__version__" for a in node.names):
                targets = []  # the version, set in assay/__init__.py: metadata, not a dependency on the API
        else:
            continue
        for target in targets:
            if target == "assay" or not target.startswith("assay."):
                continue
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def package_of(module: str) -> str | None:
    """The top-level package (or module) under assay that ``module`` belongs to; None for assay itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_sits_in_a_layer():
    unplaced = sorted({package_of(m) for m in modules()} - set(RANK) - {None})
    assert unplaced == [], f"add these to LAYERS in tests/project/test_layers.py and to docs/architecture.md: {unplaced}"


def test_no_module_imports_a_layer_above_its_own_or_beside_it():
    wrong = []
    for module, targets in graph().items():
        mine = package_of(module)
        if mine is None:
            continue  # assay/__init__.py: the lazy evaluate / evaluate_run, the very top
        for target in targets:
            theirs = package_of(target)
            if theirs != mine and RANK[theirs] >= RANK[mine]:
                wrong.append(f"{module} -> {target}")
    assert wrong == [], "imports upward or across one layer:\n" + "\n".join(sorted(wrong))


# Inside the top layer's CLI (assay.cli): base holds the root group and what every command shares, and imports no
# other module of the CLI; sources holds the bodies a warehouse command and its `assay lake` twin share, over base;
# each command module imports only these two, never another command module; the package's __init__ imports the
# command modules, which registers their commands.
CLI_SHARED = {"assay.cli.base": set(), "assay.cli.sources": {"assay.cli.base"}}


def test_cli_modules_import_each_other_only_through_the_shared_ones():
    g = graph()
    command_modules = sorted(m for m in g if m.startswith("assay.cli.") and m not in CLI_SHARED)
    assert {"assay.cli.runs", "assay.cli.lake", "assay.cli.judgments"} <= set(command_modules)
    wrong = []
    for module in sorted(CLI_SHARED) + command_modules:
        allowed = CLI_SHARED.get(module, set(CLI_SHARED))
        within = {t for t in g[module] if t.startswith("assay.cli.")}
        wrong += [f"{module} -> {target}" for target in sorted(within - allowed)]
    assert wrong == [], "a CLI module imports another beside base and sources:\n" + "\n".join(wrong)
    assert {"assay.cli.base", "assay.cli.sources"} <= g["assay.cli.lake"]  # the check sees the imports
    assert set(command_modules) <= g["assay.cli"]  # importing assay.cli registers every command


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycles():
    assert cycles(graph()) == []


def test_cycles_are_found():
    """The checks above would pass on an empty graph: they must see the imports that are there."""
    g = graph()
    assert "assay.store.warehouse" in g["assay.runs.sinks"]  # a lazy import, inside a method
    assert "assay.core.errors" in g["assay.store.warehouse"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("source, expected", [
    ("from assay.store.warehouse import Warehouse", {"assay.store.warehouse"}),
    ("def f():\n    from assay.store import warehouse", {"assay.store.warehouse"}),
    ("import assay.core.errors as e", {"assay.core.errors"}),
    ("from assay import __version__", set()),
    ("from assay.store import Warehouse", {"assay.store"}),
])
def test_imports_read_every_form(tmp_path, source, expected):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    known = {"assay.store", "assay.store.warehouse", "assay.core", "assay.core.errors"}
    assert imports("assay.x", path, known) == expected
