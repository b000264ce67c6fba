"""The Beam join (`pipelines/matching.py`) gives the same resolutions and counts as the in-memory matcher:
on hand-made cases (identifiers, capped buckets, venue names, ties) and on the real documents."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from extractors.documents.files import parse_metadata_line
from mapping.matcher import MatchConfig
from mapping.records import BibEntry, Paper
from pipelines.arsyta import choose_title_matcher, run
from tests.support.matching import PAPER_PER_KIND, assert_join_resolves_the_same, in_memory_resolutions
from tests.support.real_bibliography import real_bibliography, without_identifiers


@pytest.mark.beam
def test_join_equals_in_memory_on_hand_made_cases():
    config = MatchConfig(max_bucket=2)
    title = "Graph neural networks for citation recommendation"
    papers = [Paper(f"p{i}", title, year=2000 + i) for i in range(4)] + [
        Paper("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers", arxiv_id="1810.04805"),
        Paper("doi:10.1/x", "A paper with a DOI only", doi="10.1/x", year=2019),
        Paper("v", "Physical Review Letters", year=2020),
        Paper("t1", "Duplicate Title Study of Things", year=2019),
        Paper("t2", "Duplicate Title Study of Things", year=2020),
    ]
    refs = [
        ("a", BibEntry("b0", title=title, year=2001)),  # capped bucket: p0, p1 kept; the year decides
        ("b", BibEntry("b1", title=title, year=2003)),  # p3 beyond the cap
        ("c", BibEntry("b2", title="anything", arxiv_id="1810.04805")),
        ("d", BibEntry("b3", title=None, doi="10.1/x")),
        ("e", BibEntry("b4", title="bert pre-training of deep bidirectional transformers.")),
        ("f", BibEntry("b5", title="Physical review letters")),
        ("g", BibEntry("b6", title="Duplicate title study of things")),
        ("h", BibEntry("b7", title="Duplicate title study of things", year=2020)),
        ("i", BibEntry("b8", title="short")),
        ("j", BibEntry("b9", title="Nothing like any title in the database at all", arxiv_id="9999.99999")),
    ]
    expected, counts = in_memory_resolutions(papers, refs, config)
    assert counts["title_bucket_hits_capped"] > 0 and counts["resolved_by:doi"] == 1
    assert_join_resolves_the_same(papers, refs, config, expected, counts)


@pytest.mark.beam
def test_join_equals_in_memory_on_every_identifier_kind():
    """One case per kind, the strongest key first, a key shared by two papers, keys no paper holds."""
    config = MatchConfig()
    papers = [
        *PAPER_PER_KIND,
        Paper("s2corpus:7", "A paper found by its corpus id", s2_corpus_id="7", other_ids=("mag:77",)),
        Paper("b-shared", "Second holder of a shared PMID", other_ids=("pmid:9",)),
        Paper("a-shared", "First holder of a shared PMID", other_ids=("pmid:9", "pmcid:PMC99")),
        Paper("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers", arxiv_id="1810.04805"),
    ]
    refs = [
        ("a", BibEntry("b0", other_ids=("pmid:1",))),
        ("b", BibEntry("b1", other_ids=("pmcid:PMC2",))),
        ("c", BibEntry("b2", other_ids=("acl:P19-1001",))),
        ("d", BibEntry("b3", other_ids=("openalex:W4",))),
        ("e", BibEntry("b4", other_ids=("mag:5",))),
        ("f", BibEntry("b5", other_ids=("dblp:conf/x/Y6",))),
        ("g", BibEntry("b6", other_ids=("pmid:404", "mag:5"))),  # the PMID finds nothing: the MAG id does
        ("h", BibEntry("b7", s2_corpus_id="7", other_ids=("pmid:1",))),  # the corpus id outranks the PMID
        ("i", BibEntry("b8", other_ids=("pmcid:PMC99", "pmid:9"))),  # shared PMID: the smaller paper id
        ("j", BibEntry("b9", arxiv_id="1810.04805", other_ids=("mag:77",))),  # arXiv first
        ("k", BibEntry("b10", title="A paper found by its MAG id", other_ids=("mag:404",))),  # on to titles
        ("l", BibEntry("b11", doi="10.1000/none", other_ids=("dblp:none/x/y",))),
    ]
    expected, counts = in_memory_resolutions(papers, refs, config)
    assert [(r.paper_id, r.method) for _, r in expected] == [
        ("p-pmid", "pmid"),
        ("p-pmcid", "pmcid"),
        ("p-acl", "acl"),
        ("p-openalex", "openalex"),
        ("p-mag", "mag"),
        ("p-dblp", "dblp"),
        ("p-mag", "mag"),
        ("s2corpus:7", "s2_corpus_id"),
        ("a-shared", "pmid"),
        ("1810.04805", "arxiv_id"),
        ("p-mag", "title"),
        (None, "unresolved"),
    ]
    assert counts["bib_entries_with:pmid"] == 4 and counts["resolved_by:pmid"] == 2
    assert_join_resolves_the_same(papers, refs, config, expected, counts)


def _paper_for_key(key: str) -> Paper:
    """A title-less database record holding only `key`."""
    kind, value = key.split(":", 1)
    fields = {"arxiv": "arxiv_id", "doi": "doi", "s2corpus": "s2_corpus_id"}
    if kind in fields:
        return Paper(key, None, **{fields[kind]: value})
    return Paper(key, None, other_ids=(key,))


@pytest.fixture(scope="module")
def real_inputs(shared):
    """Every real bib entry (identifiers kept), and a copy without identifiers of each entry that has one, against
    the arXiv metadata plus the titles of the real bib entries (`tests/support/real_bibliography.py`)."""
    bibliography = real_bibliography(shared)
    papers = list(bibliography.papers)
    for number, line in enumerate((shared / "arxiv/arxiv-browse_abs_derived.jsonl").read_bytes().splitlines()):
        paper = parse_metadata_line(line, f"abs:{number}")
        if isinstance(paper, Paper):
            papers.append(paper)
    refs = list(bibliography.entries)
    by_title = [(f"{key}:no_ids", without_identifiers(e)) for key, e in refs if e.identifier_keys()]
    # every other cited identifier of every kind gets a database record, so the identifier join runs on real ids
    cited = sorted({key for _, e in refs for key in e.identifier_keys()})
    papers.extend(_paper_for_key(key) for key in cited[::2])
    return papers, refs + by_title


@pytest.mark.beam
def test_join_equals_in_memory_on_the_real_documents(real_inputs):
    papers, refs = real_inputs
    config = MatchConfig()
    expected, counts = in_memory_resolutions(papers, refs, config)
    methods = Counter(r.method for _, r in expected)
    assert len(refs) > 2500 and methods["title"] > 1000 and methods["arxiv_id"] > 100 and methods["doi"] > 50, methods
    assert_join_resolves_the_same(papers, refs, config, expected, counts)


def _tables(out: Path) -> dict[str, list]:
    tables = {}
    for name in ("contexts", "papers", "citations", "dead_letter"):
        rows = pq.read_table(out / name).to_pylist()
        tables[name] = sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)
    return tables


@pytest.mark.e2e
def test_arsyta_with_the_join_writes_the_same_dataset_as_in_memory(shared, tmp_path):
    args = [
        "--runner=FnApiRunner",
        "--tei",
        str(shared / "grobid/**/*.tei.xml"),
        "--s2orc",
        str(shared / "s2orc/s2orc-doc2json/**/*.json"),
        "--metadata",
        str(shared / "arxiv/arxiv-browse_abs_derived.jsonl"),
        "--metadata",
        str(shared / "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl"),
    ]
    memory = run([*args, "--output", str(tmp_path / "memory"), "--title_matcher=memory"])
    join = run([*args, "--output", str(tmp_path / "join"), "--title_matcher=join"])
    assert memory["options"]["matching"]["matcher"] == "memory" and join["options"]["matching"]["matcher"] == "join"
    assert memory["funnel"] == join["funnel"] and memory["resolution"] == join["resolution"]
    assert memory["funnel"]["bib_entries_resolved"] > 0
    assert _tables(tmp_path / "memory") == _tables(tmp_path / "join")


def test_auto_choice_follows_the_estimated_database_size(examples):
    inputs = {"metadata": [str(examples / "metadata" / "*.jsonl")], "tei": [str(examples / "tei" / "*.tei.xml")]}
    method, why = choose_title_matcher(inputs, "auto", 500_000)
    assert method == "memory" and "about" in why
    assert choose_title_matcher(inputs, "auto", 5)[0] == "join"
    assert choose_title_matcher(inputs, "join", 500_000)[0] == "join"
