"""How much of the library is docstring: every module, class and function docstring over a length limit, and the
docstrings' share of the source characters, read with `ast` from mapping/, extractors/, pipelines/ and trainers/.

    python bench/docstrings.py [--limit 600] [--quiet] [PATH ...]

PATHs (files or folders, relative to the repository) narrow the listing; the share is always printed for them.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("mapping", "extractors", "pipelines", "trainers")
DEFINITIONS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(frozen=True)
class Docstring:
    """One docstring: where it is, whose it is, its text's length and its literal's length in the source."""

    path: str
    line: int
    owner: str
    text_chars: int
    source_chars: int


def docstrings(path: Path, relative: str) -> Iterator[Docstring]:
    """Every module, class and function docstring of one file, nested definitions included."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for node in ast.walk(tree):
        if not isinstance(node, DEFINITIONS):
            continue
        text = ast.get_docstring(node, clean=True)
        if text is None:
            continue
        literal = node.body[0]
        start = offsets[literal.lineno - 1] + literal.col_offset
        end = offsets[literal.end_lineno - 1] + literal.end_col_offset
        owner = "<module>" if isinstance(node, ast.Module) else node.name
        yield Docstring(relative, literal.lineno, owner, len(text), end - start)


def library_files(paths: list[str]) -> list[Path]:
    """The .py files of the library packages, or of the given files and folders, tests and caches left out."""
    roots = [REPO / p for p in paths] if paths else [REPO / p for p in PACKAGES]
    files: list[Path] = []
    for root in roots:
        candidates = [root] if root.is_file() else sorted(root.rglob("*.py"))
        files += [f for f in candidates if "__pycache__" not in f.parts and f.suffix == ".py"]
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, default=600, help="List docstrings whose text exceeds this many chars.")
    parser.add_argument("--quiet", action="store_true", help="Print only the summary, not each long docstring.")
    parser.add_argument("paths", nargs="*", help="Files or folders to read instead of the four library packages.")
    args = parser.parse_args()
    total_source = total_doc = count = 0
    long: list[Docstring] = []
    for path in library_files(args.paths):
        relative = path.relative_to(REPO).as_posix()
        total_source += len(path.read_text(encoding="utf-8"))
        for doc in docstrings(path, relative):
            count += 1
            total_doc += doc.source_chars
            if doc.text_chars > args.limit:
                long.append(doc)
    if not args.quiet:
        for doc in sorted(long, key=lambda d: -d.text_chars):
            print(f"{doc.text_chars:6,}  {doc.path}:{doc.line}  {doc.owner}")
    share = total_doc / total_source if total_source else 0.0
    print(
        f"{len(long)} of {count} docstrings over {args.limit} chars; docstrings are {total_doc:,} of "
        f"{total_source:,} source chars ({share:.1%})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
