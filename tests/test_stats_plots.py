"""The figures a paper prints (Table 1 of HAtten and SymTax, beside the recipe's published row), the plots behind
them, and the dataset and schema versions: hand-checked on small hand-made data, through the Beam step that
counts them, and end to end on the bundled example corpus against the written tables."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
from collections import Counter

import apache_beam as beam
import networkx as nx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import BeamAssertException, assert_that

from extractors import schemas
from extractors.dataset import (
    LENGTH_CAP,
    PLOT_CAPTIONS,
    build_stats,
    cited_count_key,
    citing_category_key,
    context_plot_keys,
    dataset_card,
    dataset_versions,
    graph_statistics,
    length_bucket,
    package_version,
    plot_key_sums,
    plot_numbers,
    pool_key,
    table_one,
    year_range,
)
from extractors.plots import DRAWERS, FIGURE_SIZE, render_plots
from extractors.recipes import RECIPES
from mapping.records import Context, Paper
from pipelines.arsyta import run
from pipelines.commit import commit_output, write_ledger
from pipelines.outputs import STAGING
from pipelines.transforms import plot_sums

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def context(citing, cited, split, char, sentence, year=None, date=None, category=None, k=0) -> Context:
    """A context of `char` and `sentence` characters (no text at all for 0)."""
    texts = ("c" * char, "s" * sentence)
    return Context(f"{citing}_{cited}_{k}", citing, cited, "b0", *texts, None, "[1]", date, year, split=split,
                   citing_primary_category=category)  # fmt: skip


# Six contexts of four citing papers (P1-P4) citing three papers (Q1-Q3); every figure below is counted by hand.
CONTEXTS = [
    context("P1", "Q1", "train", 30, 60, year=2019, category="cs.CL"),
    context("P1", "Q2", "train", 24, 0, year=2019, category="cs.CL"),
    context("P2", "Q1", "test", 5000, 26, date=dt.date(2020, 3, 2), category="cs.IR"),
    context("P2", "Q1", "test", 25, 25, date=dt.date(2020, 3, 2), category="cs.IR", k=1),
    context("P3", "Q3", "validation", 100, 0, year=2019),
    context("P4", "Q2", "test", 50, 51, year=2020, category="cs.IR"),
]
PAPERS = [Paper(p, p, in_pool=p != "P3") for p in ("P1", "P2", "P3", "P4", "Q1", "Q2", "Q3")]
EXPECTED_NUMBERS = {
    "contexts_per_year": {"2019": {"train": 2, "validation": 1}, "2020": {"test": 3}},
    # Q1: 3 contexts from 2 papers; Q2: 2 contexts from 2 papers; Q3: 1 from 1
    "citations_per_paper": {"contexts": {"1": 1, "2": 1, "3": 1}, "citing_papers": {"1": 1, "2": 2}},
    "context_lengths": {
        "bucket_width": 25,
        "cap": 5000,
        "char_context": {"0": 1, "25": 2, "50": 1, "100": 1, "5000": 1},
        "sentence_context": {"25": 2, "50": 2},
        "mean": {"char_context": 871.5, "sentence_context": 40.5},  # 5229 / 6, 162 / 4
        "missing": {"char_context": 0, "sentence_context": 2},
    },
    "citing_primary_categories": {"cs.IR": 2, "cs.CL": 1, "unknown": 1},
    "papers": {"in_pool": 6, "outside_pool": 1},
}


# ------------------------------------------------------------------------------------------- graph figures


def test_graph_figures_of_a_graph_counted_by_hand():
    # A->B, A->C, B->C, C->D: undirected, a triangle ABC with D hanging from C. Degrees 2, 2, 3, 1: average
    # 8 / 4 = 2. Clustering: A and B 1 (their two neighbours are linked), C 1/3 (one link among A, B, D), D 0:
    # (1 + 1 + 1/3 + 0) / 4 = 7/12.
    figures = graph_statistics([("A", "B"), ("A", "C"), ("B", "C"), ("C", "D")])
    assert figures == {
        "nodes": 4,
        "edges": 4,
        "average_degree": 2.0,
        "average_clustering": round(7 / 12, 4),
        "clustering": "exact",
    }
    # a star has no triangle: clustering 0; 3 edges over 4 nodes: degree 1.5
    star = graph_statistics([("A", "B"), ("A", "C"), ("A", "D")])
    assert (star["average_degree"], star["average_clustering"]) == (1.5, 0.0)
    assert graph_statistics([])["nodes"] == 0


def test_graph_figures_agree_with_networkx_on_a_random_graph():
    graph = nx.gnm_random_graph(60, 200, seed=3, directed=True)
    edges = [(str(a), str(b)) for a, b in graph.edges()]
    figures = graph_statistics(edges)
    touched = nx.DiGraph(edges)
    assert figures["average_degree"] == round(sum(d for _, d in touched.degree()) / touched.number_of_nodes(), 4)
    assert figures["average_clustering"] == round(nx.average_clustering(touched.to_undirected()), 4)


# --------------------------------------------------------------------------------------------- plot numbers


def test_length_buckets():
    assert [length_bucket(n) for n in (0, 24, 25, 49, 50, 4999, 5000, 12_345)] == [0, 0, 25, 25, 50, 4975, 5000, 5000]
    assert length_bucket(LENGTH_CAP - 1) < LENGTH_CAP == length_bucket(LENGTH_CAP + 1)
    assert length_bucket(7, width=5, cap=100) == 5
    with pytest.raises(ValueError):
        length_bucket(-1)


def test_the_keys_of_one_context():
    keys = context_plot_keys(context("P", "Q", "train", 30, 0, date=dt.date(2019, 5, 1)))
    assert keys == [
        (("year", "2019", "train"), 1),  # the year of citing_date when citing_year is unknown
        (("length", "char_context", "25"), 1),
        (("characters", "char_context"), 30),
        (("missing", "sentence_context"), 1),
    ]
    assert context_plot_keys(context("P", "Q", None, 1, 1))[0] == (("year", "unknown", "none"), 1)
    assert cited_count_key("contexts", 3) == (("cited_by", "contexts", "3"), 1)
    assert citing_category_key(None) == (("category", "unknown"), 1)
    assert pool_key(Paper("x", "t", in_pool=False)) == (("papers", "outside_pool"), 1)


def test_plot_numbers_of_the_hand_made_contexts():
    numbers = plot_numbers(plot_key_sums(CONTEXTS, PAPERS))
    assert numbers == EXPECTED_NUMBERS
    # stable order whatever the order of the sums: years and numbers ascending, categories by count
    assert plot_numbers(reversed(plot_key_sums(CONTEXTS, PAPERS))) == numbers
    assert list(numbers["context_lengths"]["char_context"]) == ["0", "25", "50", "100", "5000"]
    with pytest.raises(ValueError, match="unknown plot key"):
        plot_numbers([(("colour", "red"), 1)])


@pytest.mark.beam
def test_the_beam_step_counts_the_same_numbers():
    """The pipeline's counting (`plot_sums`), on FnApiRunner: the same dict as counting by hand."""

    def check(got):
        if len(got) != 1 or plot_numbers(got[0]) != EXPECTED_NUMBERS:
            raise BeamAssertException(f"got {got}")

    with BeamTestPipeline(runner="FnApiRunner") as p:
        contexts = p | "Contexts" >> beam.Create(CONTEXTS)
        papers = p | "Papers" >> beam.Create(PAPERS)
        citations = (
            contexts
            | beam.Map(lambda c: (c.citing_id, c.cited_id))
            | beam.Distinct()
            | beam.MapTuple(lambda a, b: {"citing_id": a, "cited_id": b})
        )
        categories = (
            contexts
            | "Categories" >> beam.Map(lambda c: (c.citing_id, c.citing_primary_category))
            | "DistinctCategories" >> beam.Distinct()
            | beam.MapTuple(lambda _, category: citing_category_key(category))
        )
        assert_that(plot_sums(contexts, citations, papers, categories), check)


def test_year_range():
    assert year_range({"2019": {}, "2007": {}, "unknown": {}}) == "2007-2019"
    assert year_range({"2020": {}}) == "2020-2020"
    assert year_range({"unknown": {}}) is None and year_range({}) is None


# ------------------------------------------------------------------------------------------------- Table 1

GRAPH = graph_statistics([(c.citing_id, c.cited_id) for c in CONTEXTS])  # 5 edges, 7 nodes, no triangle
TALLIES = {"contexts": 6, "contexts:train": 2, "contexts:validation": 1, "contexts:test": 3, "papers_written": 7}


def stats_for(recipe: str | None, plots: bool = True, files=()) -> dict:
    options = {"recipe": RECIPES[recipe].as_metadata()} if recipe else {}
    numbers = plot_numbers(plot_key_sums(CONTEXTS, PAPERS)) if plots else None
    return build_stats(TALLIES, GRAPH, {}, options, plots=numbers, plot_files=files, citrec_version="9.8.7")


def table_lines(card: str) -> list[str]:
    start = card.index("## Table 1")
    return [line for line in card[start : card.index("\n## ", start + 1)].splitlines() if line.startswith("|")]


def test_table1_figures_in_stats():
    assert GRAPH["average_degree"] == round(10 / 7, 4) and GRAPH["average_clustering"] == 0.0
    table = stats_for("acl200")["table1"]
    assert table["recipe"] == "acl200"
    assert table["run"] == {
        "contexts": {"train": 2, "validation": 1, "test": 3, "all": 6},
        "papers": 6,  # the candidates: P3 is in papers/ only as a citing paper
        "years": "2019-2020",
        "avg_clustering": 0.0,
        "avg_degree": 1.4286,
    }
    assert table["published"]["contexts"] == {"train": 30_390, "validation": 9_381, "test": 9_585, "all": 49_356}
    assert table["published"]["papers"] is None and table["published"]["years"] == "2009-2015"


def test_the_card_prints_the_published_row_beside_the_run():
    card = dataset_card(stats_for("acl200"))
    assert table_lines(card) == [
        "| | this run | published (acl200) |",
        "|---|---:|---:|",
        "| contexts: train | 2 | 30,390 |",
        "| contexts: validation | 1 | 9,381 |",
        "| contexts: test | 3 | 9,585 |",
        "| contexts: all | 6 | 49,356 |",
        "| papers (candidate pool) | 6 | not published |",
        "| years of the citing papers | 2019-2020 | 2009-2015 |",
        "| average local clustering coefficient | 0.0 | not published |",
        "| average degree | 1.4286 | not published |",
    ]
    assert "ACL-200 as nianlonggu/Local-Citation-Recommendation ships it" in card
    hatten = table_lines(dataset_card(stats_for("hatten-arxiv")))
    assert "| papers (candidate pool) | 6 | 1,661,201 |" in hatten
    assert "| contexts: train | 2 | not published |" in hatten


def test_the_card_states_the_recipes_note_and_deviations():
    arsyta = dataset_card(stats_for("arsyta"))
    assert "Published: 8.27M contexts in all." in arsyta
    assert "departs from the publication: ArSyTa's train/validation/test assignment is not in the SymTax" in arsyta
    refseer = dataset_card(stats_for("refseer"))
    assert "RefSeer's year boundaries are not available to this project" in refseer


def test_without_a_published_row_the_table_has_only_the_run():
    for card in (dataset_card(stats_for(None)), dataset_card(stats_for("citrec"))):
        lines = table_lines(card)
        assert lines[0] == "| | this run |" and "| contexts: train | 2 |" in lines
        assert not any("not published" in line for line in lines)
    assert "recipe `citrec` follows no publication" in dataset_card(stats_for("citrec"))
    # no plot numbers (an old run): what is not known is n/a
    bare = table_lines(dataset_card(stats_for(None, plots=False)))
    assert "| years of the citing papers | n/a |" in bare and "| papers (candidate pool) | 7 |" in bare
    empty = table_one({}, 0, None, graph_statistics([]), None)
    assert empty["run"]["avg_degree"] is None and empty["published"] is None


# -------------------------------------------------------------------------------------------------- plots


def _png_size(data: bytes) -> tuple[int, int]:
    try:
        from PIL import Image
    except ImportError:  # the IHDR chunk: width and height, big-endian, right after the signature
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    with Image.open(io.BytesIO(data)) as image:
        image.verify()
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG"
        return image.size


def test_every_plot_is_a_png_of_the_fixed_size_without_text_chunks():
    plots = render_plots(EXPECTED_NUMBERS)
    assert list(plots) == list(PLOT_CAPTIONS) == list(DRAWERS)
    for name, png in plots.items():
        assert png.startswith(PNG_SIGNATURE), name
        assert _png_size(png) == (int(FIGURE_SIZE[0] * 100), int(FIGURE_SIZE[1] * 100)), name
        assert b"tEXt" not in png and b"iTXt" not in png and b"tIME" not in png, name


def test_plots_are_the_same_bytes_for_the_same_numbers_and_follow_the_numbers():
    first, again = render_plots(EXPECTED_NUMBERS), render_plots(json.loads(json.dumps(EXPECTED_NUMBERS)))
    assert first == again
    other = json.loads(json.dumps(EXPECTED_NUMBERS))
    other["contexts_per_year"]["2019"]["train"] = 40
    other["citing_primary_categories"]["cs.IR"] = 9
    changed = render_plots(other)
    assert changed["contexts_per_year.png"] != first["contexts_per_year.png"]
    assert changed["categories.png"] != first["categories.png"]
    assert changed["context_lengths.png"] == first["context_lengths.png"]


def test_nothing_to_plot_gives_no_plots_and_the_card_says_so():
    assert render_plots(plot_numbers([])) == {}
    card = dataset_card(stats_for(None, plots=False))
    assert "No plots: the run has no contexts to plot." in card and "![" not in card


def test_the_card_links_every_plot_and_stats_keeps_the_numbers():
    files = [f"plots/{name}" for name in render_plots(EXPECTED_NUMBERS)]
    stats = stats_for("acl200", files=files)
    assert stats["plots"]["files"] == files
    assert {k: v for k, v in stats["plots"].items() if k != "files"} == {
        k: v for k, v in EXPECTED_NUMBERS.items() if k != "papers"
    }
    card = dataset_card(stats)
    for path in files:
        assert f"![{PLOT_CAPTIONS[path.split('/')[1]]}]({path})" in card
    # stats.json's numbers draw the same plots again
    assert render_plots(json.loads(json.dumps(stats))["plots"]) == render_plots(EXPECTED_NUMBERS)


# ------------------------------------------------------------------------------------------------ versions

SCHEMA_FINGERPRINTS = {"2": "0fd3e5526f98be81", "3": "69cafef5fb5d30ee"}
"""Every SCHEMA_VERSION's fingerprint of the tables' columns. A change of columns changes the fingerprint: bump
extractors.schemas.SCHEMA_VERSION and add the new version's fingerprint here. ("2" was 2621c50e93d0090c over the
ArSyTa tables alone, before the CitationR tables' unchanged schemas moved into extractors/schemas.py; "3" adds the CitationR
candidates' `query_ids`.)"""


def schema_fingerprint() -> str:
    tables = {
        name: [[field.name, str(field.type), field.nullable] for field in getattr(schemas, name)]
        for name in sorted(dir(schemas))
        if name.endswith("_SCHEMA") and isinstance(getattr(schemas, name), pa.Schema)
    }
    return hashlib.sha256(json.dumps(tables, sort_keys=True).encode()).hexdigest()[:16]


def test_the_schema_version_names_the_current_columns():
    assert schema_fingerprint() == SCHEMA_FINGERPRINTS.get(schemas.SCHEMA_VERSION), (
        "the tables' columns changed: bump SCHEMA_VERSION in extractors/schemas.py and record "
        f"{schema_fingerprint()!r} for it in SCHEMA_FINGERPRINTS"
    )


def test_dataset_version_is_the_package_version_and_the_recipe():
    assert dataset_versions({"recipe": {"name": "acl200"}}, "1.2.3") == {
        "dataset_version": "1.2.3+acl200",
        "schema_version": schemas.SCHEMA_VERSION,
        "citrec_version": "1.2.3",
    }
    assert dataset_versions({}, "1.2.3")["dataset_version"] == "1.2.3"
    from importlib import metadata

    assert package_version() == metadata.version("citrec")


def test_versions_are_the_same_in_stats_card_and_manifest(tmp_path):
    stats = stats_for("acl200")
    assert stats["versions"] == {"dataset_version": "9.8.7+acl200", "schema_version": "3", "citrec_version": "9.8.7"}
    card = dataset_card(stats)
    assert "- dataset version: `9.8.7+acl200` (citrec 9.8.7, recipe `acl200`)" in card
    assert f"- schema version: `{schemas.SCHEMA_VERSION}`" in card
    staging = tmp_path / "out" / STAGING
    staging.mkdir(parents=True)
    (staging / "stats.json").write_text(json.dumps(stats))
    write_ledger(None, str(staging), prefixes=[])
    manifest = commit_output(str(tmp_path / "out"), "citrec arsyta", stats["options"], stats, {})
    assert (manifest["dataset_version"], manifest["schema_version"]) == ("9.8.7+acl200", "3")
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["dataset_version"] == "9.8.7+acl200"
    # a run whose stats.json stamps no versions gets none in its manifest
    (tmp_path / "bare" / STAGING).mkdir(parents=True)
    (tmp_path / "bare" / STAGING / "stats.json").write_text("{}")
    write_ledger(None, str(tmp_path / "bare" / STAGING), prefixes=[])
    assert "dataset_version" not in commit_output(str(tmp_path / "bare"), "citrec arsyta", {}, {}, {})


# --------------------------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def hatten_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("hatten") / "out"
    stats = run(["--runner=FnApiRunner", "--output", str(out), "--recipe", "hatten-arxiv"])
    return stats, out


@pytest.mark.e2e
def test_an_example_run_writes_table1_plots_and_versions(hatten_run):
    stats, out = hatten_run
    on_disk = json.loads((out / "stats.json").read_text())
    assert on_disk == stats
    table = stats["table1"]
    assert table["recipe"] == "hatten-arxiv" and table["published"]["papers"] == 1_661_201
    assert {k: v for k, v in table["run"]["contexts"].items() if k != "all"} == stats["contexts"]
    manifest = json.loads((out / "manifest.json").read_text())
    card = (out / "README.md").read_text()
    assert stats["versions"]["dataset_version"] == f"{package_version()}+hatten-arxiv"
    for key in ("dataset_version", "schema_version"):
        assert manifest[key] == stats["versions"][key] and f"`{stats['versions'][key]}`" in card
    assert "| papers (candidate pool) |" in card and "| 1,661,201 |" in card
    listed = {f["path"] for f in manifest["files"]}
    assert stats["plots"]["files"] == [f"plots/{name}" for name in PLOT_CAPTIONS]
    for path in stats["plots"]["files"]:
        png = (out / path).read_bytes()
        assert png.startswith(PNG_SIGNATURE) and _png_size(png)[0] == int(FIGURE_SIZE[0] * 100)
        assert path in listed and f"]({path})" in card


@pytest.mark.e2e
def test_an_example_runs_figures_match_its_tables(hatten_run):
    """The numbers counted in Beam against the same numbers counted from the written Parquet tables."""
    stats, out = hatten_run
    contexts = pq.read_table(out / "contexts").to_pylist()
    citations = pq.read_table(out / "citations").to_pylist()
    papers = pq.read_table(out / "papers").to_pylist()
    plots = stats["plots"]
    assert contexts, "the hatten-arxiv recipe keeps contexts of the example corpus"
    per_year: dict = {}
    for row in contexts:
        year = str(row["citing_year"] or row["citing_date"].year)
        per_year.setdefault(year, Counter())[row["split"]] += 1
    assert plots["contexts_per_year"] == {y: dict(c) for y, c in per_year.items()}
    years = sorted(int(y) for y in per_year)
    assert stats["table1"]["run"]["years"] == f"{years[0]}-{years[-1]}"
    for view in ("char_context", "sentence_context"):
        buckets = Counter(str(min(len(r[view]) // 25 * 25, 5000)) for r in contexts if r[view])
        assert plots["context_lengths"][view] == dict(buckets)
    assert plots["citations_per_paper"]["contexts"] == dict(
        Counter(str(n) for n in Counter(r["cited_id"] for r in contexts).values())
    )
    assert plots["citations_per_paper"]["citing_papers"] == dict(
        Counter(str(n) for n in Counter(r["cited_id"] for r in citations).values())
    )
    citing = {(r["citing_id"], r["citing_primary_category"] or "unknown") for r in contexts}
    assert plots["citing_primary_categories"] == dict(Counter(category for _, category in citing))
    assert stats["table1"]["run"]["papers"] == sum(1 for p in papers if p["in_pool"])
    nodes = {r["citing_id"] for r in citations} | {r["cited_id"] for r in citations}
    assert stats["table1"]["run"]["avg_degree"] == round(2 * len(citations) / len(nodes), 4)
