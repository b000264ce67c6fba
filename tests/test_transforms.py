"""Transform tests on FnApiRunner: each stage on small inputs, asserted with Beam's own matchers."""

from __future__ import annotations

import datetime as dt
import json

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from extractors.contexts import ContextConfig
from extractors.dataset import SplitConfig
from mapping.matcher import MatchConfig
from mapping.records import BibEntry, Paper
from pipelines.coders import unseal
from pipelines.tallies import TallyingFn
from pipelines.transforms import (
    DEAD,
    NAMESPACE,
    TALLY,
    AssignSplits,
    CanonicalizeIds,
    CitationGraph,
    CutContexts,
    MergeDatabase,
    ParseDocuments,
    ResolveReferences,
)
from tests.support.documents import SEGMENTED_TEI, document, paragraph
from tests.support.joins import largest_group

pytestmark = pytest.mark.beam


def test_parse_documents_keeps_good_files_and_dead_letters_bad_ones(tmp_path):
    (tmp_path / "good.tei.xml").write_bytes(SEGMENTED_TEI)
    (tmp_path / "truncated.tei.xml").write_bytes(SEGMENTED_TEI[:200])
    record = {"paper_id": "77", "body_text": [{"text": "Body.", "cite_spans": [], "section": "A"}], "bib_entries": {}}
    (tmp_path / "papers.jsonl").write_text(json.dumps(record) + "\n\n" + '{"paper_id": "78", "body' + "\n")
    with TestPipeline(runner="FnApiRunner") as p:
        out = p | ParseDocuments([str(tmp_path / "*.tei.xml")], [str(tmp_path / "*.jsonl")])
        assert_that(
            out["documents"] | beam.Map(lambda d: (d.paper_id, d.source_format)),
            equal_to([("2101.00001", "tei"), ("77", "s2orc-2020")]),
            label="Docs",
        )
        assert_that(
            out[DEAD] | beam.Map(lambda d: (d.source.rsplit("/", 1)[1], d.reason)),
            equal_to([("truncated.tei.xml", "malformed_xml"), ("papers.jsonl:3", "truncated_json")]),
            label="Dead",
        )
        assert_that(
            out[TALLY] | beam.CombinePerKey(sum),
            equal_to(
                [
                    ("documents_in", 4),
                    ("documents_dead_lettered", 2),
                    ("dead:parse:malformed_xml", 1),
                    ("dead:parse:truncated_json", 1),
                ]
            ),
            label="Tally",
        )


def _doc(paper_id, source, s2=None):
    return document(
        paper_id=paper_id, source=source, source_format="s2orc-2020", title=None, date=None, year=None, s2_paper_id=s2
    )


def test_canonicalize_and_merge_rename_by_shared_ids_and_dead_letter_duplicates():
    papers = [
        Paper(
            "1901.00001",
            "Real Title",
            arxiv_id="1901.00001",
            s2_paper_id="55",
            date=dt.date(2019, 1, 2),
            year=2019,
            source="s2orc-metadata",
        )
    ]
    docs = [_doc("55", "a.json", s2="55"), _doc("1901.00001", "b.json"), _doc("99", "c.json", s2="99")]
    with TestPipeline(runner="FnApiRunner") as p:
        meta = p | "Papers" >> beam.Create(papers)
        canon = {"documents": p | "Docs" >> beam.Create(docs), "papers": meta} | CanonicalizeIds()
        merged = {"documents": canon["documents"], "bodies": canon["bodies"], "papers": meta} | MergeDatabase()
        assert_that(
            merged["documents"] | beam.Map(unseal) | beam.Map(lambda d: (d.paper_id, d.source, d.title, d.year)),
            equal_to([("1901.00001", "a.json", "Real Title", 2019), ("99", "c.json", None, None)]),
            label="Kept",
        )
        assert_that(
            merged[DEAD] | beam.Map(lambda d: (d.source, d.reason)),
            equal_to([("b.json", "duplicate_id")]),
            label="Duplicates",
        )
        assert_that(
            merged["database"] | beam.Map(lambda p: p.paper_id), equal_to(["1901.00001", "99"]), label="Database"
        )


@pytest.mark.parametrize("database_in_memory", [False, True], ids=["join", "side_input"])
def test_resolve_cut_and_split_end_to_end_on_one_document(database_in_memory):
    text = "We build on [1] and on Older Work [2], but not on [3]."
    cites = paragraph(text, [("[1]", "b0"), ("[2]", "b1"), ("[3]", "b2")], sentences=((0, len(text)),))
    bibs = (
        BibEntry("b0", title="Some title", arxiv_id="2001.00002"),
        BibEntry("b1", title="A Study of Older Work on Citation Graphs."),
        BibEntry("b2", title="Future Paper", arxiv_id="2301.00009"),
    )
    citing = document(
        [cites], bibs, paper_id="2101.00001", source="x", title="Citing", date=dt.date(2021, 1, 5), year=2021
    )
    database = [
        Paper("2101.00001", "Citing", date=dt.date(2021, 1, 5), year=2021, arxiv_id="2101.00001"),
        Paper("2001.00002", "Some title", date=dt.date(2020, 1, 3), year=2020, arxiv_id="2001.00002"),
        Paper("1801.00003", "A study of older work on citation graphs", date=dt.date(2018, 1, 1), year=2018),
        Paper("2301.00009", "Future Paper", date=dt.date(2023, 1, 1), year=2023, arxiv_id="2301.00009"),
    ]
    with TestPipeline(runner="FnApiRunner") as p:
        db = p | "Db" >> beam.Create(database)
        resolved = {"documents": p | "Doc" >> beam.Create([citing]), "database": db} | ResolveReferences(MatchConfig())
        cut = resolved["documents"] | CutContexts(ContextConfig())
        split = {"contexts": cut["contexts"], "database": db} | AssignSplits(
            SplitConfig(dt.date(2020, 6, 1), dt.date(2022, 1, 1)), database_in_memory=database_in_memory
        )
        assert_that(
            split["contexts"] | beam.Map(lambda c: (c.context_id, c.split, c.cited_year)),
            equal_to(
                [("2101.00001_2001.00002_0", "validation", 2020), ("2101.00001_1801.00003_0", "validation", 2018)]
            ),
            label="Contexts",
        )
        assert_that(
            split[TALLY] | beam.CombinePerKey(sum),
            equal_to([("dropped_cited_after_citing", 1), ("contexts", 2), ("contexts:validation", 2)]),
            label="SplitTally",
        )


def test_the_real_arxiv_metadata_gets_categories_and_acm_classes(shared):
    from pipelines.transforms import ReadPaperDatabase

    path = shared / "arxiv/arxiv-browse_abs_derived.jsonl"
    with TestPipeline(runner="FnApiRunner") as p:
        database = p | ReadPaperDatabase([str(path)])
        no_documents = {"documents": p | "NoDocs" >> beam.Create([]), "bodies": p | "NoBodies" >> beam.Create([])}
        merged = {**no_documents, "papers": database["papers"]} | MergeDatabase()
        summary = (
            merged["database"]
            | beam.Map(
                lambda q: (
                    bool(q.acm_classes),
                    bool(q.acm_classes_author),
                    (q.primary_category or "").startswith("cs."),
                )
            )
            | beam.combiners.Count.PerElement()
        )

        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        mapped = ("cs.", "math.IT", "math.NA", "eess.SY")
        expected_acm = {r["id"] for r in records if any(c.startswith(mapped) for c in (r["categories"] or "").split())}
        expected_author = {r["id"] for r in records if r.get("acm-class")}

        def check(counts):
            counts = dict(counts)
            assert sum(n for (acm, _, _), n in counts.items() if acm) == len(expected_acm) > 50
            assert sum(n for (_, author, _), n in counts.items() if author) == len(expected_author) >= 15
            assert all(acm for (acm, _, cs), n in counts.items() if cs), "every cs primary category maps"

        assert_that(summary, check)


# ----------------------------------------------------------------------------------------------- hot keys


def test_a_paper_cited_by_every_context_is_never_one_group_of_all_its_contexts():
    """300 contexts of 300 papers all cite one paper: the split of each is what it would be alone, and no group
    holds more than about `max_group` of them (the spread is a hash, so a little over)."""
    from mapping.records import Context

    cited = Paper("hot", "The paper everyone cites", date=dt.date(2019, 1, 1), year=2019)
    contexts = [
        Context(f"c{i:03d}_hot_0", f"c{i:03d}", "hot", "b0", "text", "text", "Intro", "[1]", citing_year=2019 + i % 6)
        for i in range(300)
    ]
    expected = [(c.context_id, "train" if c.citing_year < 2024 else "validation") for c in contexts]
    p = TestPipeline(runner="FnApiRunner")
    split = {"contexts": p | "Contexts" >> beam.Create(contexts), "database": p | "Db" >> beam.Create([cited])} | (
        AssignSplits(SplitConfig(dt.date(2024, 1, 1), dt.date(2026, 1, 1)), max_group=50)
    )
    assert_that(split["contexts"] | beam.Map(lambda c: (c.context_id, c.split)), equal_to(expected))
    result = p.run()
    result.wait_until_finish()
    assert largest_group(result, "cited_paper") <= 75  # 300 contexts in 6 groups of about 50, never one of 300


def test_a_reference_cited_everywhere_resolves_as_in_memory_without_one_group_of_its_references():
    """400 references to one arXiv id and 400 to one title (no id) resolve as `InMemoryMatcher` resolves them;
    neither the identifier key, the title's LSH buckets nor the paper's candidate pairs become one group."""
    from collections import Counter

    from mapping.in_memory import InMemoryMatcher
    from pipelines.matching import MatchReferences

    papers = [
        Paper("1810.04805", "BERT: Pre-training of Deep Bidirectional Transformers", arxiv_id="1810.04805"),
        Paper("1706.03762", "Attention Is All You Need", year=2017),
        Paper("other", "Deep residual learning for image recognition", year=2016),
    ]
    refs = [(f"d{i}\x1f0", BibEntry("b0", title="BERT", arxiv_id="1810.04805")) for i in range(400)]
    refs += [(f"d{i}\x1f1", BibEntry("b1", title="Attention is all you need.", year=2017)) for i in range(400)]
    counts: Counter = Counter()
    resolutions = InMemoryMatcher(papers, MatchConfig()).resolve_many(
        [entry for _, entry in refs], lambda name, n=1: counts.update({name: n})
    )
    assert {r.paper_id for r in resolutions} == {"1810.04805", "1706.03762"}
    p = TestPipeline(runner="FnApiRunner")
    out = {"papers": p | "Papers" >> beam.Create(papers), "refs": p | "Refs" >> beam.Create(refs)} | (
        MatchReferences(MatchConfig(), max_group=40)
    )
    expected = [(key, r) for (key, _), r in zip(refs, resolutions, strict=True)]
    assert_that(out["resolutions"], equal_to(expected), label="SameResolutions")
    summed = out[TALLY] | beam.CombinePerKey(sum) | beam.Filter(lambda kv: kv[1] > 0)
    assert_that(summed, equal_to(sorted(counts.items())), label="SameCounts")
    result = p.run()
    result.wait_until_finish()
    assert largest_group(result, "identifier") <= 60  # 400 references in groups of about 40
    assert largest_group(result, "bucket") <= 60
    # a paper's candidate pairs: each reference brings one pair per LSH band it shares (up to 25), and a
    # reference's pairs stay in one group, so groups hold a few references' pairs, not the 10,000 of all 400
    assert largest_group(result, "title_candidate_paper") <= 250


# ------------------------------------------------------------------------------------------ bundled tallies


class _CountingFn(TallyingFn):
    """Counts every element, its parity weighted by its value, and a zero (a name counted 0 is still reported)."""

    def process(self, x: int):
        tally = self.tallies()
        tally("seen")
        tally(f"parity:{x % 2}", x)
        tally("zero", 0)
        yield x
        yield from tally.emit()


def test_bundled_tallies_sum_to_a_hand_count_in_one_element_per_name_and_bundle_with_equal_counters():
    from apache_beam.metrics.metric import MetricsFilter

    values = list(range(300))
    expected = {
        "seen": 300,
        "parity:0": sum(x for x in values if x % 2 == 0),
        "parity:1": sum(x for x in values if x % 2),
        "zero": 0,
    }
    p = TestPipeline(runner="FnApiRunner")
    out = p | beam.Create(values) | beam.ParDo(_CountingFn()).with_outputs(TALLY, main="values")
    assert_that(out.values, equal_to(values), label="Values")
    tallies = out[TALLY]
    assert_that(tallies | beam.CombinePerKey(sum) | beam.combiners.ToDict(), equal_to([expected]), label="Sums")
    # per element, 300 elements would carry 900 tallies; per bundle, each name comes once per bundle
    assert_that(tallies | beam.combiners.Count.Globally() | beam.Map(lambda n: n < 300), equal_to([True]), label="Few")
    result = p.run()
    result.wait_until_finish()
    for name, n in expected.items():
        found = result.metrics().query(MetricsFilter().with_namespace(NAMESPACE).with_name(name))["counters"]
        assert sum(c.committed for c in found) == n, name


def test_tallies_outside_a_bundle_are_yielded_by_each_call():
    from apache_beam.pvalue import TaggedOutput

    outputs = list(_CountingFn().process(3))
    assert outputs[0] == 3
    assert {(o.tag, o.value) for o in outputs[1:] if isinstance(o, TaggedOutput)} == {
        (TALLY, ("seen", 1)),
        (TALLY, ("parity:1", 3)),
        (TALLY, ("zero", 0)),
    }


def test_sums_per_bundle_equal_a_hand_count_in_fewer_elements_than_pairs():
    from collections import Counter

    from pipelines.tallies import SumPerBundleFn

    words = [f"w{i % 7}" for i in range(400)]
    expected = Counter()
    for i, word in enumerate(words):
        expected[word] += i
        expected["all"] += 1
    with TestPipeline(runner="FnApiRunner") as p:
        pairs = (
            p
            | beam.Create(list(enumerate(words)))
            | beam.ParDo(SumPerBundleFn(lambda iw: ((iw[1], iw[0]), ("all", 1))))
        )
        assert_that(pairs | beam.CombinePerKey(sum), equal_to(sorted(expected.items())), label="Sums")
        assert_that(
            pairs | beam.combiners.Count.Globally() | beam.Map(lambda n: n < 400), equal_to([True]), label="Few"
        )


def test_citation_rows_count_each_pair_s_contexts_and_their_distinct_headings():
    """Four contexts of one pair (two headings, one missing), one of a second pair of the same citing paper in
    another split, one of a third citing paper: rows, categories and citing papers per split by hand."""
    from extractors.dataset import citing_category_key
    from mapping.records import Context

    def context(i: int, citing: str, cited: str, heading: str | None, split: str = "train") -> Context:
        category = {"a": "cs.CL", "b": None}[citing]
        return Context(
            f"{citing}_{cited}_{i}",
            citing,
            cited,
            f"b{i}",
            "t",
            "t",
            heading,
            "[1]",
            split=split,
            citing_primary_category=category,
        )

    contexts = [
        context(0, "a", "x", "Intro"),
        context(1, "a", "x", "Related Work"),
        context(2, "a", "x", None),
        context(0, "a", "y", "Methods", split="test"),
        context(3, "a", "x", "Intro"),
        context(0, "b", "x", None),
    ]
    with TestPipeline(runner="FnApiRunner") as p:
        graph = p | beam.Create(contexts) | CitationGraph()
        assert_that(
            graph["citations"],
            equal_to(
                [
                    {
                        "citing_id": "a",
                        "cited_id": "x",
                        "num_contexts": 4,
                        "section_headings": ["Intro", "Related Work"],
                    },
                    {"citing_id": "a", "cited_id": "y", "num_contexts": 1, "section_headings": ["Methods"]},
                    {"citing_id": "b", "cited_id": "x", "num_contexts": 1, "section_headings": []},
                ]
            ),
            label="Rows",
        )
        assert_that(
            graph["categories"],
            equal_to([citing_category_key("cs.CL"), citing_category_key(None)]),
            label="Categories",
        )
        assert_that(
            graph[TALLY] | "SumTallies" >> beam.CombinePerKey(sum),
            equal_to([("citing_papers:train", 2), ("citing_papers:test", 1)]),
            label="CitingPerSplit",
        )
