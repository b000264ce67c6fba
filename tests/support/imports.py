"""Every import of the repository's Python files, read with `ast` (nothing is imported), and the house rules
they must keep: the packages in one direction, Beam and torch each in its own room, no module cycle."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

LIBRARY = ("mapping", "extractors", "pipelines", "trainers")
TOP_LEVEL = (*LIBRARY, "bench", "tests")
# what each library package may import of citrec: bottom to top; trainers sit beside Beam and read only files
MAY_IMPORT = {
    "mapping": {"mapping"},
    "extractors": {"mapping", "extractors"},
    "pipelines": {"mapping", "extractors", "pipelines"},
    "trainers": {"mapping", "extractors.schemas", "trainers"},
}
ONLY_IN = {  # third-party modules that only one library package may import (tests and the lab may use them too)
    "apache_beam": "pipelines",
    "torch": "trainers",
    "transformers": "trainers",
    "sentence_transformers": "trainers",
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module, dotted (`pipelines.arsyta`)
    target: str  # the imported module, dotted, as written after resolving relative imports
    line: int
    deferred: bool  # inside a function or a class body, not at module level

    def __str__(self) -> str:
        where = "deferred " if self.deferred else ""
        return f"{self.source}:{self.line} {where}imports {self.target}"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def python_files(root: Path, packages: Iterable[str] = TOP_LEVEL) -> Iterator[Path]:
    for package in packages:
        yield from sorted(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)


def imports_of(source: str, module: str, is_package: bool = False) -> list[Import]:
    """The imports a module's source names, module-level and deferred; `from a import b` names `a.b` when b
    may be a module (the rules below check prefixes, so a name that is a function changes nothing)."""
    found: list[Import] = []
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = deferred or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda)
            if isinstance(child, ast.Import):
                found.extend(Import(module, alias.name, child.lineno, deferred) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*anchor, base] if base else anchor)
                found.extend(
                    Import(module, f"{base}.{alias.name}" if alias.name != "*" else base, child.lineno, deferred)
                    for alias in child.names
                )
            visit(child, inner)

    visit(ast.parse(source), False)
    return found


def all_imports(root: Path, packages: Iterable[str] = TOP_LEVEL) -> list[Import]:
    return [
        found
        for path in python_files(root, packages)
        for found in imports_of(path.read_text(encoding="utf-8"), module_name(root, path), path.name == "__init__.py")
    ]


def _within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def rule_breaks(imports: Iterable[Import]) -> list[str]:
    """Every import that runs against the house's order, one readable line each."""
    breaks = []
    for found in imports:
        top = found.source.split(".")[0]
        target_top = found.target.split(".")[0]
        if top in LIBRARY:
            if target_top in ("bench", "tests"):
                breaks.append(f"{found}: the library never imports the lab or the tests")
            elif target_top in LIBRARY and not any(_within(found.target, p) for p in MAY_IMPORT[top]):
                breaks.append(f"{found}: {top}/ may import only {sorted(MAY_IMPORT[top])}")
            owner = ONLY_IN.get(target_top)
            if owner and top != owner:
                breaks.append(f"{found}: {target_top} is imported only in {owner}/")
        elif top == "bench" and target_top == "tests":
            breaks.append(f"{found}: the lab never imports the tests")
        elif top == "tests":
            if target_top == "bench":
                breaks.append(f"{found}: tests never import the lab")
            elif target_top == "tests" and not _within(found.target, "tests.support"):
                breaks.append(f"{found}: a test imports only tests.support, never another test")
    return breaks


def module_cycles(imports: Iterable[Import], modules: Iterable[str]) -> list[list[str]]:
    """The groups of modules that import each other in a loop (deferred imports included)."""
    known = set(modules)
    graph = nx.DiGraph()
    graph.add_nodes_from(known)
    for found in imports:
        target = found.target
        while target and target not in known:  # `from a.b import name` names module a.b
            target = target.rpartition(".")[0]
        if target and target != found.source and not found.source.startswith(target + "."):
            graph.add_edge(found.source, target)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)
