"""The dataset's queries, positives and candidates: a submission with recommended papers is a query (split by
year) with its positives; candidates are the resolved and title-only positives and, with --candidate_years,
the extension papers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.reviews.dataset import (
    CitationrConfig,
    bucket_keys,
    build_query,
    candidate,
    extension_keys,
    positives_for,
    title_only_candidate,
)
from extractors.reviews.forms import local_id, split_for_submission
from extractors.reviews.records import Candidate
from pipelines.tallies import TALLY, ConfiguredTransform

# ------------------------------------------------------------------------------------ queries and splits


class _QueryFn(beam.DoFn):
    def process(self, element) -> Iterator:
        submission_id, grouped = element
        submissions = list(grouped["submissions"])
        if not submissions:
            return
        positives = positives_for(submission_id, grouped["mentions"])
        if not positives:
            return
        bibliographies = list(grouped["bibliographies"])
        references = bibliographies[0].titles if bibliographies else ()
        query = build_query(submissions[0], list(grouped["reviews"]), positives, references)
        yield (query, positives)


def _assign_split(pair, year_counts: dict, config: CitationrConfig) -> Iterator:
    query, positives = pair
    # the coin is the id as its source names it: a submission's split does not hang on how its venue is spelled
    coin = local_id(query.submission_id)
    split = split_for_submission(coin, query.year, year_counts, config.cut_points(), config.split_seed)
    yield TaggedOutput(TALLY, ("queries", 1))
    yield TaggedOutput(TALLY, (f"queries:{split}", 1))
    yield TaggedOutput(TALLY, ("positives", len(positives)))
    yield TaggedOutput(TALLY, ("positives_resolved", sum(p.resolved for p in positives)))
    for positive in positives:
        yield TaggedOutput("positives", replace(positive, split=split))
    yield replace(query, split=split)


class BuildQueries(ConfiguredTransform):
    """Submissions with recommended papers into queries (split by year, about 8:1:1) and positives."""

    config: CitationrConfig

    def expand(self, inputs):
        by_id = lambda label, pcoll, key: pcoll | label >> beam.Map(lambda x: (key(x), x))  # noqa: E731
        pairs = (
            {
                "submissions": by_id("SubmissionsById", inputs["submissions"], lambda s: s.submission_id),
                "mentions": by_id("MentionsBySubmission", inputs["mentions"], lambda m: m.submission_id),
                "reviews": by_id("ReviewsBySubmission", inputs["reviews"], lambda r: r.submission_id),
                "bibliographies": inputs["bibliographies"],
            }
            | "JoinSubmission" >> beam.CoGroupByKey()
            | "Query" >> beam.ParDo(_QueryFn())
        )
        year_counts = (
            pairs
            | "QueryYear" >> beam.Map(lambda p: str(p[0].year) if p[0].year is not None else "unknown")
            | "CountYears" >> beam.combiners.Count.PerElement()
            | "YearDict" >> beam.combiners.ToDict()
        )
        split = pairs | "AssignSplits" >> beam.FlatMap(
            _assign_split, year_counts=beam.pvalue.AsSingleton(year_counts), config=self.config
        ).with_outputs("positives", TALLY, main="queries")
        return {"queries": split.queries, "positives": split.positives, TALLY: split[TALLY]}


# ---------------------------------------------------------------------------------------------- candidates


def _candidates_of(element) -> Iterator[Candidate]:
    """A database paper as a candidate: a positive of the queries it is recommended to, else an extension
    candidate of the queries whose positives' buckets it falls in; nothing for any other paper."""
    _, grouped = element
    papers = list(grouped["papers"])
    if not papers:
        return
    positive_of = set(grouped["positive_of"])
    if positive_of:
        yield candidate(papers[0], "positive", positive_of)
        return
    extends = set(grouped["extends"])
    if extends:
        yield candidate(papers[0], "extension", extends)


def _opened_buckets(element, years: int) -> Iterator[tuple[str, str]]:
    """(bucket, query) for each bucket a resolved positive opens for a query (`extension_keys`)."""
    _, grouped = element
    for paper in grouped["papers"]:
        for submission_id, query_year in grouped["queries"]:
            for key in extension_keys(paper, query_year, years):
                yield key, submission_id


class SelectCandidates(ConfiguredTransform):
    """`{"positives", "queries", "papers"}` (the database with what the online resolvers found) to `candidates`:
    resolved positives, title-only positives, and (with --candidate_years N) the extension papers: per query,
    the database papers that share a category with one of its resolved positives and were published at most N
    years before or after it, not after the query's year (`extractors.reviews.dataset.extension_keys`). Each
    candidate lists the queries it is a candidate of (`query_ids`)."""

    config: CitationrConfig

    def expand(self, inputs):
        positives, queries = inputs["positives"], inputs["queries"]
        database = (
            inputs["papers"]
            | "PapersById" >> beam.Map(lambda p: (p.paper_id, p))
            | "GroupPaperIds" >> beam.GroupByKey()
            | "OnePaperPerId"
            >> beam.MapTuple(lambda i, ps: (i, sorted(ps, key=lambda p: (p.source != "metadata", repr(p)))[0]))
        )
        resolved = positives | "Resolved" >> beam.Filter(lambda p: p.resolved)
        positive_of = resolved | "PositiveOf" >> beam.Map(lambda p: (p.paper_id, p.submission_id))
        years = self.config.candidate_years
        if years > 0:
            query_years = queries | "QueryYears" >> beam.Map(lambda q: (q.submission_id, q.year))
            positive_queries = (
                {
                    "positives": resolved
                    | "PositivesBySubmission" >> beam.Map(lambda p: (p.submission_id, p.paper_id)),
                    "years": query_years,
                }
                | "JoinQueryYears" >> beam.CoGroupByKey()
                | "PositiveQueryYears"
                >> beam.FlatMap(
                    lambda kv: [
                        (pid, (kv[0], y)) for pid in kv[1]["positives"] for y in (list(kv[1]["years"]) or [None])
                    ]
                )
            )
            opened = (
                {"papers": database, "queries": positive_queries}
                | "JoinPositivePapers" >> beam.CoGroupByKey()
                | "OpenBuckets" >> beam.FlatMap(_opened_buckets, years=years)
            )
            extends = (
                {
                    "queries": opened,
                    "papers": database
                    | "PaperBuckets" >> beam.FlatMap(lambda kv: [(b, kv[0]) for b in bucket_keys(kv[1])]),
                }
                | "JoinBuckets" >> beam.CoGroupByKey()
                | "Extends" >> beam.FlatMap(lambda kv: [(p, q) for p in kv[1]["papers"] for q in set(kv[1]["queries"])])
            )
        else:
            extends = inputs["papers"].pipeline | "NoExtension" >> beam.Create([])
        kept = (
            {"papers": database, "positive_of": positive_of, "extends": extends}
            | "JoinCandidates" >> beam.CoGroupByKey()
            | "Candidates" >> beam.FlatMap(_candidates_of)
        )
        title_only = (
            positives
            | "TitleOnly" >> beam.Filter(lambda p: not p.resolved)
            | "TitleById" >> beam.Map(lambda p: (p.paper_id, (p.title, p.submission_id)))
            | "GroupTitles" >> beam.GroupByKey()
            | "TitleCandidates"
            >> beam.MapTuple(lambda i, ts: title_only_candidate(i, [t for t, _ in ts], [s for _, s in ts]))
        )
        candidates = (kept, title_only) | "AllCandidates" >> beam.Flatten()
        count = candidates | "CountCandidates" >> beam.FlatMap(
            lambda c: [("candidates", 1), (f"candidates:{c.role}", 1)]
        )
        return {"candidates": candidates, TALLY: count}
