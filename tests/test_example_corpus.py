"""The bundled example corpus: the README's first command, checked against examples/corpus/expected.json
(written by examples/make_corpus.py from the same specification as the documents)."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter

import pyarrow.parquet as pq
import pytest

from extractors.documents.files import is_jsonl, numbered_lines, parse_document
from mapping.records import ParsedDocument
from pipelines.arsyta import run
from tests.support.example_corpus import contexts_per_split, database_papers, expected_contexts, expected_spec


@pytest.fixture(scope="module")
def expected(examples):
    return expected_spec(examples)


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("example") / "out"
    stats = run(["--runner=FnApiRunner", "--output", str(out), "--export_json"])
    return stats, out


def _documents(examples):
    for path in sorted(examples.glob("tei/*.xml")):
        yield parse_document(path.read_bytes(), str(path), "tei")
    for path in sorted(list(examples.glob("s2orc/*")) + list(examples.glob("unarxive/*"))):
        if is_jsonl(str(path)):
            for source, line in numbered_lines(path.read_bytes().splitlines(), str(path)):
                yield parse_document(line, source, "s2orc")
        else:
            yield parse_document(path.read_bytes(), str(path), "s2orc")


def test_every_example_parses_with_the_expected_counts(examples, expected):
    seen = set()
    for document in _documents(examples):
        assert isinstance(document, ParsedDocument), document
        paper_id = document.paper_id if document.paper_id in expected["papers"] else document.arxiv_id
        if paper_id is None:  # the S2ORC 2020 record known only by its S2ORC id until the metadata join
            paper_id = "2003.00303"
        want = expected["papers"][paper_id]
        mentions = [m for p in document.paragraphs for m in p.mentions]
        assert len(document.bib_entries) == want["bib_entries"], paper_id
        assert len(mentions) == want["mentions"], paper_id
        assert sum(1 for m in mentions if m.bib_id) == want["linked_mentions"], paper_id
        seen.add(paper_id)
    assert seen == set(expected["papers"])


@pytest.mark.e2e
def test_the_funnel_matches_the_specification(example_run, expected):
    stats, _ = example_run
    papers = expected["papers"].values()
    funnel = stats["funnel"]
    assert funnel["documents_in"] == funnel["documents_parsed"] == 12
    assert funnel["documents_dead_lettered"] == 0
    assert funnel["bib_entries"] == sum(p["bib_entries"] for p in papers)
    assert funnel["mentions"] == sum(p["mentions"] for p in papers)
    assert funnel["mentions_linked"] == sum(p["linked_mentions"] for p in papers)
    assert funnel["bib_entries_resolved"] == funnel["bib_entries"] - len(expected["unresolvable"])
    assert funnel["dropped_self_citation"] == sum(p["cited"].count(pid) for pid, p in expected["papers"].items())
    assert funnel["dropped_cited_after_citing"] == sum(
        expected["papers"][citing]["cited"].count(cited) for citing, cited in expected["cited_after_citing"]
    )
    unlinked = sum(p["mentions"] - p["linked_mentions"] for p in papers)
    assert funnel["dropped_unlinked_mention"] == unlinked
    # a mention that cites no paper (None in `cited`) is unlinked or cites the unresolvable reference
    assert funnel["dropped_unresolved_reference"] == sum(p["cited"].count(None) for p in papers) - unlinked
    assert funnel["contexts"] == sum(expected_contexts(expected).values())
    assert stats["contexts"] == contexts_per_split(expected) == {"train": 34, "validation": 7, "test": 8}
    # 2003.00303's S2ORC record knows only its S2ORC id; the S2ORC metadata line links it to its arXiv id
    assert stats["other_counts"]["documents_renamed_to_database_id"] == 1


@pytest.mark.e2e
def test_contexts_are_exactly_the_resolvable_earlier_citations(example_run, expected):
    _, out = example_run
    rows = pq.read_table(out / "contexts").to_pylist()
    assert Counter((r["citing_id"], r["cited_id"], r["split"]) for r in rows) == expected_contexts(expected)
    decoys = {"1704.08001", "1803.08002", "1902.08003"}
    assert not decoys & {r["cited_id"] for r in rows}, "a similar title of another paper must not match"
    group = [r for r in rows if r["citing_id"] == "1811.00101" and r["marker"] in ("[3,", "4]")]
    assert len(group) == 2 and all("OTHERCIT" in r["char_context"] for r in group)


@pytest.mark.e2e
def test_huggingface_datasets_loads_the_three_splits(example_run):
    from datasets import load_dataset

    stats, out = example_run
    files = {s: str(out / "contexts" / f"{s}-*.parquet") for s in ("train", "validation", "test")}
    dataset = load_dataset("parquet", data_files=files, cache_dir=str(out.parent / "hf-cache"))
    assert {s: dataset[s].num_rows for s in files} == stats["contexts"]
    assert "sentence_context" in dataset["train"].column_names


@pytest.mark.e2e
def test_export_json_holds_the_specified_contexts_in_hattens_layout(example_run, expected, examples):
    _, out = example_run
    contexts = json.loads((out / "json/contexts.json").read_text())
    want = expected_contexts(expected)
    assert Counter((c["citing_id"], c["refid"]) for c in contexts.values()) == Counter(
        {(citing, cited): n for (citing, cited, _), n in want.items()}
    )
    assert all(" TARGETCIT " in c["masked_text"] and c["context_id"] == key for key, c in contexts.items())
    first = next(iter(contexts.values()))
    assert set(first) == {"masked_text", "context_id", "citing_id", "refid"}  # HAtten's contexts.json keys
    for name, split in (("train", "train"), ("val", "validation"), ("test", "test")):
        rows = json.loads((out / f"json/{name}.json").read_text())
        assert all(row["positive_ids"] == [contexts[row["context_id"]]["refid"]] for row in rows)
        got = Counter((contexts[row["context_id"]]["citing_id"], row["positive_ids"][0]) for row in rows)
        assert got == Counter({(citing, cited): n for (citing, cited, s), n in want.items() if s == split})
    # the default pool is the whole database: every metadata record, with its own title and abstract
    papers = json.loads((out / "json/papers.json").read_text())
    records = database_papers(examples)
    titled = {pid: {"title": p["title"], "abstract": p["abstract"]} for pid, p in papers.items()}
    assert titled == {pid: {"title": r["title"], "abstract": r["abstract"] or ""} for pid, r in records.items()}
    # and each paper's date (ISO, or null), which our trainers read and HAtten's code ignores
    assert all(set(p) == {"title", "abstract", "date"} for p in papers.values())
    assert all(p["date"] is None or dt.date.fromisoformat(p["date"]) for p in papers.values())
    assert any(p["date"] for p in papers.values())


@pytest.mark.e2e
def test_dataset_card_and_stats_are_written(example_run, expected):
    stats, out = example_run
    card = (out / "README.md").read_text()
    assert "TARGETCIT" in card and "contexts/train-*.parquet" in card
    on_disk = json.loads((out / "stats.json").read_text())
    assert on_disk == stats
    assert on_disk["options"]["matching"]["min_similarity"] == 0.9
    pairs = {(citing, cited) for citing, cited, _ in expected_contexts(expected)}
    assert on_disk["citation_graph"]["edges"] == pq.read_table(out / "citations").num_rows == len(pairs) == 45


@pytest.mark.e2e
def test_papers_and_contexts_carry_categories_and_acm_classes(example_run):
    stats, out = example_run
    papers = {row["paper_id"]: row for row in pq.read_table(out / "papers").to_pylist()}
    assert papers["1901.07007"]["categories"] == ["cs.IR", "eess.SY"]  # cs.SY written, canonical kept
    assert "J.7" in papers["1901.07007"]["acm_classes"] and "H.3.3" in papers["1901.07007"]["acm_classes"]
    assert papers["1609.03003"]["categories"] == ["cs.CL", "stat.ML"]
    assert papers["1609.03003"]["acm_classes"] == ["I.2.7"]  # stat.ML passes through unmapped
    assert papers["2403.00909"]["acm_classes_author"] == ["H.3.3", "I.2.6"]
    assert papers["2403.00909"]["primary_category"] == "cs.IR"
    assert stats["other_counts"]["categories_unmapped"] >= 1
    assert stats["other_counts"]["papers_with_acm_classes"] == stats["papers"]
    for row in pq.read_table(out / "contexts").to_pylist():
        for role in ("citing", "cited"):
            paper = papers[row[f"{role}_id"]]
            assert row[f"{role}_categories"] == paper["categories"]
            assert row[f"{role}_primary_category"] == paper["primary_category"]
            assert row[f"{role}_acm_classes"] == paper["acm_classes"]
