"""The house's import rules hold over the whole tree (docs/architecture.md): mapping/ at the bottom, then
extractors/, then pipelines/ (Beam only here); trainers/ beside it reading only files (torch only here); nothing
imports bench/ or tests/ except tests importing tests.support; no module cycle, deferred imports included."""

from __future__ import annotations

import subprocess
import sys

from tests.support.imports import (
    LIBRARY,
    Import,
    all_imports,
    imports_of,
    module_cycles,
    module_name,
    python_files,
    rule_breaks,
)
from tests.support.paths import REPO


def test_no_import_runs_against_the_order_of_the_packages():
    breaks = rule_breaks(all_imports(REPO))
    assert not breaks, "\n".join(breaks)


def test_no_module_cycle_in_the_library_or_the_lab():
    packages = (*LIBRARY, "bench")
    modules = [module_name(REPO, p) for p in python_files(REPO, packages)]
    assert not module_cycles(all_imports(REPO, packages), modules)


def test_the_reader_finds_deferred_relative_and_aliased_imports():
    source = (
        "import apache_beam as beam\n"
        "from . import sibling\n"
        "from ..mapping import records\n"
        "def run():\n"
        "    from bench.gold import titles\n"
        "class Model:\n"
        "    import torch\n"
    )
    found = imports_of(source, "extractors.reviews.dataset")
    assert [(i.target, i.line, i.deferred) for i in found] == [
        ("apache_beam", 1, False),
        ("extractors.reviews.sibling", 2, False),
        ("extractors.mapping.records", 3, False),
        ("bench.gold.titles", 5, True),
        ("torch", 7, True),
    ]


def test_each_rule_names_the_import_that_breaks_it():
    imports = [
        Import("mapping.records", "extractors.documents.ids.identifier_keys", 3, False),  # upward
        Import("extractors.reviews.labels", "bench.shared", 9, True),  # the library into the lab
        Import("trainers.table", "pipelines.arsyta", 4, False),  # trainers read files, not Beam code
        Import("trainers.data", "extractors.schemas", 5, False),  # allowed
        Import("trainers.data", "extractors.dataset", 6, False),  # not allowed
        Import("extractors.dataset", "apache_beam", 7, False),  # Beam outside pipelines/
        Import("pipelines.arsyta", "torch.nn", 8, True),  # torch outside trainers/
        Import("tests.test_a", "tests.test_b", 1, False),  # a test importing a test
        Import("tests.test_a", "tests.support.paths", 2, False),  # allowed
        Import("tests.test_a", "bench.gold.titles", 3, False),  # a test importing the lab
        Import("bench.grobid_throughput", "tests.support.grobid_replay", 4, False),  # the lab importing tests
        Import("bench.matching", "pipelines.matching", 5, False),  # allowed
    ]
    breaks = rule_breaks(imports)
    assert [line.split(":")[0] + ":" + line.split(":")[1].split()[0] for line in breaks] == [
        "mapping.records:3",
        "extractors.reviews.labels:9",
        "trainers.table:4",
        "trainers.data:6",
        "extractors.dataset:7",
        "pipelines.arsyta:8",
        "tests.test_a:1",
        "tests.test_a:3",
        "bench.grobid_throughput:4",
    ]


def test_a_cycle_through_a_deferred_import_is_found():
    imports = [
        Import("mapping.matcher", "mapping.raw_strings.RawStringResolver", 3, False),
        Import("mapping.raw_strings", "mapping.matcher", 9, True),
        Import("mapping.titles", "mapping.records", 1, False),
        Import("extractors.documents", "extractors.documents.tei", 1, False),  # a package naming its module
        Import("extractors.documents.tei", "extractors.documents", 1, False),
    ]
    modules = ["mapping.matcher", "mapping.raw_strings", "mapping.titles", "mapping.records"]
    modules += ["extractors.documents", "extractors.documents.tei"]
    assert module_cycles(imports, modules) == [["mapping.matcher", "mapping.raw_strings"]]


def test_the_architecture_doc_lists_every_module_as_its_docstring_says():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    for package in (*LIBRARY, "bench"):
        for path in python_files(REPO, [package]):
            relative = path.relative_to(REPO / package).as_posix()
            if path.name != "__init__.py" and not relative.startswith("tests/"):
                assert f"| `{relative}` |" in text, f"docs/architecture.md does not list {package}/{relative}"
    check = subprocess.run([sys.executable, str(REPO / ".ci" / "architecture.py"), "--check"], capture_output=True)
    assert check.returncode == 0, check.stderr.decode()
