"""The code a dataset card and README's "Output layout" show, executed as written on real runs: the bundled
example, datasets with empty splits (a late --test_from, a published recipe's fixed dates, no contexts at all)
and CitationR datasets. Each card's Python runs inside the dataset's directory and again from its parent with
`DATASET` set as the card says; what it loads must hold the rows stats.json counts, every table with rows and
no other. The cards show no absolute local path, and the warnings the runs print lead with their cause.

HuggingFace `datasets` reads only local files here (tests/conftest.py sets HF_DATASETS_OFFLINE=1) and caches
under the test's own directory.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES, REPO

pytestmark = pytest.mark.e2e

ABSOLUTE = re.compile(r"(?:^|[\s\"'`(\[=])(?:/|~/|[A-Za-z]:[\\/])[\w.~*-]")
"""An absolute local path where a path token starts: `/home/...`, `~/...`, `C:\\...`."""


class Run:
    """A pipeline run: its dataset directory (always named `out`), stats.json, what it printed, what it logged."""

    def __init__(self, out: Path, stats: dict, stdout: str, stderr: str, log: list[str]) -> None:
        self.out, self.stats, self.stdout, self.stderr, self.log = out, stats, stdout, stderr, log

    @property
    def card(self) -> str:
        return (self.out / "README.md").read_text()

    @property
    def warnings(self) -> list[str]:
        return [line.removeprefix("warning: ") for line in self.stderr.splitlines() if line.startswith("warning: ")]


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _run(pipeline: str, parent: Path, *flags: str) -> Run:
    """`python -m pipelines.<pipeline>` on FnApiRunner into `parent/out`, its output and INFO log captured."""
    import importlib

    run = importlib.import_module(f"pipelines.{pipeline}").run
    out = parent / "out"
    stdout, stderr, handler = io.StringIO(), io.StringIO(), _Lines()
    logger = logging.getLogger("pipelines")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            stats = run(["--runner=FnApiRunner", "--output", str(out), *flags])
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return Run(out, stats, stdout.getvalue(), stderr.getvalue(), handler.lines)


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Run:
    return _run("arsyta", tmp_path_factory.mktemp("example"))


@pytest.fixture(scope="module")
def late_test(tmp_path_factory) -> Run:
    """The example with a test split that starts after every paper: test is empty."""
    return _run("arsyta", tmp_path_factory.mktemp("late-test"), "--test_from", "2030-01-01")


@pytest.fixture(scope="module")
def hatten(tmp_path_factory) -> Run:
    """The example under the hatten-arxiv recipe, whose fixed validation window (2020-01-01 to 2020-03-01) holds no
    citing paper of the example."""
    return _run("arsyta", tmp_path_factory.mktemp("hatten"), "--recipe", "hatten-arxiv")


@pytest.fixture(scope="module")
def no_contexts(tmp_path_factory, shared) -> Run:
    """Real GROBID TEI with no --metadata: no reference resolves, every split is empty."""
    return _run(
        "arsyta", tmp_path_factory.mktemp("no-contexts"), "--tei", str(shared / "grobid/os-ia-pipegrobid/*.xml")
    )


@pytest.fixture(scope="module")
def reviews_example(tmp_path_factory) -> Run:
    """The bundled CitationR example: its test split has no query."""
    return _run("citationr", tmp_path_factory.mktemp("reviews-example"))


@pytest.fixture(scope="module")
def neurips(tmp_path_factory, shared) -> Run:
    """The README's NeurIPS command on one year (2023) of the reviews, with the S2ORC sample as the database (it
    holds none of the recommended works), progress every 200 items."""
    from pipelines.citationr import Progress

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Progress, "EVERY", 200)
        return _run(
            "citationr",
            tmp_path_factory.mktemp("neurips"),
            "--reviews",
            str(shared / "reviews/neurips-openreview-2023-2025/neurips_2023/*.json"),
            "--metadata",
            str(shared / "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl"),
        )


@pytest.fixture
def hf_cache(tmp_path, monkeypatch) -> Path:
    """`datasets` caching under the test's directory, whatever the snippet says."""
    import datasets.config

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    return tmp_path / "hf-cache"


def python_blocks(markdown: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", markdown, re.S)


def execute(code: str, cwd: Path, monkeypatch) -> dict:
    """`code` run as a reader runs it, in `cwd`; returns what it defined."""
    monkeypatch.chdir(cwd)
    namespace: dict = {"__name__": "__card__"}
    exec(compile(code, "<card snippet>", "exec"), namespace)  # noqa: S102 - the card's own code, as a reader runs it
    return namespace


DATASET_LINE = re.compile(r'^DATASET = "\."(  # .*)?$', re.M)
"""The one line of a card's snippet a reader changes to run it from elsewhere: `DATASET = "."  # ...`."""


def card_snippet(run: Run) -> str:
    (code,) = python_blocks(run.card)
    assert len(DATASET_LINE.findall(code)) == 1, "the card says which line to change to run it from elsewhere"
    return code


def loaded_rows(namespace: dict) -> dict[str, object]:
    """Rows per thing the snippet loaded: a DatasetDict as {split: rows}, a Dataset as rows."""
    from datasets import Dataset, DatasetDict

    rows: dict[str, object] = {}
    for name, value in namespace.items():
        if isinstance(value, DatasetDict):
            rows[name] = {split: ds.num_rows for split, ds in value.items()}
        elif isinstance(value, Dataset):
            rows[name] = value.num_rows
    return rows


def arsyta_rows(stats: dict) -> dict[str, object]:
    """What an arsyta card must load, by stats.json: the contexts of each split with rows, the papers and the
    citation edges, each only when it has rows."""
    present = {split: n for split, n in stats["contexts"].items() if n}
    expected: dict[str, object] = {"contexts": present} if present else {}
    edges = stats["citation_graph"].get("edges", 0)
    expected.update({name: n for name, n in (("papers", stats["papers"]), ("citations", edges)) if n})
    return expected


def citationr_rows(stats: dict) -> dict[str, object]:
    funnel = stats["funnel"]
    present = {split: n for split, n in stats["queries"].items() if n}
    tables = {
        "positives": funnel["positives"],
        "candidates": funnel["candidates"],
        "mentions": funnel["mentions"],
        "reviews": funnel["reviews_written"],
    }
    return {**({"queries": present} if present else {}), **{name: n for name, n in tables.items() if n}}


def check_card_runs(run: Run, expected: dict, monkeypatch) -> None:
    """The card's Python, inside the dataset's directory and from its parent, loads `expected` rows."""
    code = card_snippet(run)
    inside = execute(code, run.out, monkeypatch)
    assert loaded_rows(inside) == expected
    from_parent = DATASET_LINE.sub(f'DATASET = "{run.out.name}"', code)
    assert loaded_rows(execute(from_parent, run.out.parent, monkeypatch)) == expected


def check_no_absolute_path(run: Run) -> None:
    card = run.card
    assert not ABSOLUTE.search(card), ABSOLUTE.search(card)
    for local in (str(run.out.parent), str(REPO), str(EXAMPLES), str(Path.home())):
        assert local not in card


# ----------------------------------------------------------------------------------------- arsyta cards


def test_the_example_card_loads_every_table_with_its_rows(example, hf_cache, monkeypatch):
    assert example.stats["contexts"] == {"train": 34, "validation": 7, "test": 8}  # every split has rows
    check_card_runs(example, arsyta_rows(example.stats), monkeypatch)
    check_no_absolute_path(example)
    assert example.warnings == []


def test_a_card_with_an_empty_test_split_loads_the_others(late_test, hf_cache, monkeypatch):
    stats = late_test.stats
    assert stats["contexts"]["test"] == 0 and stats["contexts"]["train"] > 0
    check_card_runs(late_test, arsyta_rows(stats), monkeypatch)
    check_no_absolute_path(late_test)
    assert late_test.warnings == [
        "split 'test' has no contexts: it takes citing papers published from 2030-01-01 on, and the contexts' "
        f"citing papers are from 2018-2025 (train {stats['contexts']['train']}, validation "
        f"{stats['contexts']['validation']}); check --validation_from/--test_from against your papers' dates"
    ]


def test_a_published_recipe_card_is_titled_by_it_and_its_warning_gives_the_fixed_dates(hatten, hf_cache, monkeypatch):
    stats = hatten.stats
    assert stats["contexts"]["validation"] == 0 and stats["contexts"]["train"] > 0
    check_card_runs(hatten, arsyta_rows(stats), monkeypatch)
    check_no_absolute_path(hatten)
    assert hatten.card.startswith('---\npretty_name: "citrec arsyta (recipe hatten-arxiv)"\n')
    (warning,) = hatten.warnings
    assert warning.startswith(
        "split 'validation' has no contexts: recipe `hatten-arxiv` fixes it to citing papers published from "
        "2020-01-01 and before 2020-03-01"
    )
    outside = stats["funnel"]["dropped_citing_outside_recipe:after_window"]
    assert f"{outside} contexts were dropped as their citing paper is outside the recipe" in warning
    assert "check --validation_from" not in warning


def test_a_card_without_contexts_loads_the_papers_as_papers(no_contexts, hf_cache, monkeypatch):
    from datasets import load_dataset

    stats = no_contexts.stats
    assert sum(stats["contexts"].values()) == 0 and stats["papers"] > 0
    check_card_runs(no_contexts, arsyta_rows(stats), monkeypatch)
    check_no_absolute_path(no_contexts)
    # the only config is the default HuggingFace picks: it must not read as a `train` split of contexts
    assert list(load_dataset(str(no_contexts.out))) == ["papers"]


def test_the_run_without_a_database_leads_with_the_resolution_warning(no_contexts):
    funnel = no_contexts.stats["funnel"]
    reached = funnel["mentions_linked"] - funnel["dropped_dangling_link"]
    assert funnel["contexts"] == 0 and reached > 0
    assert no_contexts.warnings == [
        f"only 0 of {reached:,} linked mentions (0.0%) resolve to a paper in the database "
        f"({funnel['dropped_unresolved_reference']:,} unresolved_reference dropped), and only a resolved mention "
        "becomes a context: --metadata must hold the papers your documents cite (arXiv or S2ORC records, matched "
        f"by arXiv id, DOI or title); this run had no --metadata, so the database held only the "
        f"{funnel['documents_parsed']:,} parsed documents themselves",
        f"no split has contexts: none of the {funnel['mentions']:,} mentions became a context; most were dropped "
        f"as unresolved_reference ({funnel['dropped_unresolved_reference']:,}), unlinked_mention "
        f"({funnel['dropped_unlinked_mention']:,})",
    ]


# -------------------------------------------------------------------------------------- CitationR cards


def test_the_citationr_example_card_loads_every_table_with_its_rows(reviews_example, hf_cache, monkeypatch):
    stats = reviews_example.stats
    assert min(stats["queries"][split] for split in ("train", "validation", "test")) > 0
    check_card_runs(reviews_example, citationr_rows(stats), monkeypatch)
    check_no_absolute_path(reviews_example)


def test_the_neurips_card_loads_and_its_run_warns_and_shows_progress(neurips, hf_cache, monkeypatch):
    stats = neurips.stats
    funnel = stats["funnel"]
    check_card_runs(neurips, citationr_rows(stats), monkeypatch)
    check_no_absolute_path(neurips)
    recommended, positives = funnel["mentions_kind:recommended"], funnel["positives"]
    assert recommended > 0 and funnel["recommended_resolved"] == 0 and positives > 0
    assert neurips.warnings[0] == (
        f"only 0 of {recommended:,} recommended mentions (0.0%) resolve to a paper in the database: --metadata "
        "must hold the works reviewers recommend (arXiv or S2ORC records, matched by arXiv id, DOI or title); this "
        "run's --metadata holds none of them; --online_resolvers dblp,s2 looks the rest up online. all "
        f"{positives:,} positives are title-only (`title:` ids, resolved = false), which the RMC export (--export "
        "rmc, --export_json) leaves out unless --export_unresolved"
    )
    assert neurips.warnings[1].startswith("already_cited undecided")
    mined = [line for line in neurips.log if line.startswith("mining mentions: ")]
    resolving = [line for line in neurips.log if line.startswith("resolving mentions: ")]
    assert len(mined) >= funnel["reviews_written"] // 200 and len(resolving) >= funnel["mentions"] // 200
    counts = [int(line.split()[2].replace(",", "")) for line in mined]
    assert counts == sorted(counts) and counts[-1] <= funnel["reviews_written"]
    assert all(re.search(r"\(\d[\d,]* recommended, 0 resolved\)$", line) for line in resolving), resolving


def test_the_warnings_hint_is_right_export_unresolved_keeps_the_title_only_positives(neurips, tmp_path):
    from pipelines.exports import export_rmc

    assert "leaves out unless --export_unresolved" in neurips.warnings[0]
    funnel = neurips.stats["funnel"]
    left_out = export_rmc(str(neurips.out), str(tmp_path / "without"))
    kept = export_rmc(str(neurips.out), str(tmp_path / "with"), include_unresolved=True)
    assert left_out["data/train.json"] == 0 and left_out["dropped_positives:unresolved"] == funnel["positives"]
    assert sum(kept[f"data/{split}.json"] for split in ("train", "val", "test")) == funnel["queries"]


# -------------------------------------------------------------------------------------------------- README


def readme_snippets() -> list[str]:
    text = (REPO / "README.md").read_text()
    layout = text[text.index("## Output layout") :]
    layout = layout[: layout.index("\n## ", 1)]
    blocks = [code for code in python_blocks(layout) if "load_dataset(" in code]
    assert blocks, "README's Output layout shows how to load a dataset"
    return blocks


@pytest.mark.parametrize("name", ["example", "late_test", "no_contexts"])
def test_the_readmes_snippets_run_as_written(name, request, hf_cache, tmp_path, monkeypatch):
    """Each snippet runs where its dataset directory (the path it names, else the layout's `out/`) is the run's
    output; a dataset without contexts loads as its papers, under their own name."""
    run = request.getfixturevalue(name)
    for k, code in enumerate(readme_snippets()):
        (where,) = set(re.findall(r'Path\("([^"]+)"\)', code)) or {"out"}
        cwd = tmp_path / f"readme-{k}"
        (cwd / where).parent.mkdir(parents=True, exist_ok=True)
        (cwd / where).symlink_to(run.out, target_is_directory=True)
        loaded = loaded_rows(execute(code, cwd, monkeypatch))
        present = {split: n for split, n in run.stats["contexts"].items() if n}
        assert loaded.get("papers") == run.stats["papers"]
        assert loaded.get("contexts") == (present or {"papers": run.stats["papers"]})


def test_the_readme_names_the_papers_columns_as_they_are():
    from extractors.schemas import PAPERS_SCHEMA

    text = (REPO / "README.md").read_text()
    layout = text[text.index("## Output layout") :]
    layout = layout[: layout.index("\n## ", 1)]
    papers = re.sub(r"\s+", " ", layout[layout.index("papers/papers-*.parquet") : layout.index("citations/citations")])
    assert "from: paper_id, title," in papers and " id," not in papers
    assert all(name in papers for name in PAPERS_SCHEMA.names)
