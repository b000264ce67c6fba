"""A database with one paper per identifier kind, the in-memory matcher's answers to keyed references, and the Beam
join checked against them."""

from __future__ import annotations

from collections import Counter

from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig
from mapping.records import BibEntry, Paper, Resolution

# One database paper per identifier kind that only `other_ids` carries, titled after it.
PAPER_PER_KIND = (
    Paper("p-pmid", "A paper found by its PubMed id", other_ids=("pmid:1",)),
    Paper("p-pmcid", "A paper found by its PMC id", other_ids=("pmcid:PMC2",)),
    Paper("p-acl", "A paper found by its ACL Anthology id", other_ids=("acl:P19-1001",)),
    Paper("p-openalex", "A paper found by its OpenAlex id", other_ids=("openalex:W4",)),
    Paper("p-mag", "A paper found by its MAG id", other_ids=("mag:5",)),
    Paper("p-dblp", "A paper found by its DBLP key", other_ids=("dblp:conf/x/Y6",)),
)


def in_memory_resolutions(
    papers: list[Paper], refs: list[tuple[str, BibEntry]], config: MatchConfig
) -> tuple[list[tuple[str, Resolution]], Counter]:
    """(key, resolution) of every reference by `InMemoryMatcher.resolve_many`, and the counts it made."""
    counts: Counter = Counter()
    resolutions = InMemoryMatcher(papers, config).resolve_many(
        [entry for _, entry in refs], lambda name, n=1: counts.update({name: n})
    )
    return [(key, r) for (key, _), r in zip(refs, resolutions, strict=True)], counts


def assert_join_resolves_the_same(
    papers: list[Paper],
    refs: list[tuple[str, BibEntry]],
    config: MatchConfig,
    expected: list[tuple[str, Resolution]],
    counts: Counter,
) -> None:
    """`MatchReferences` (the Beam join) on FnApiRunner gives `expected` and the same non-zero counts."""
    import apache_beam as beam
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    from pipelines.matching import MatchReferences
    from pipelines.transforms import TALLY

    with TestPipeline(runner="FnApiRunner") as p:
        out = {"papers": p | "Papers" >> beam.Create(papers), "refs": p | "Refs" >> beam.Create(refs)} | (
            MatchReferences(config)
        )
        assert_that(out["resolutions"], equal_to(expected), label="SameResolutions")
        summed = out[TALLY] | beam.CombinePerKey(sum) | beam.Filter(lambda kv: kv[1] > 0)
        assert_that(summed, equal_to(sorted(counts.items())), label="SameCounts")
