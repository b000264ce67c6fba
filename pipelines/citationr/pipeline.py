"""The CitationR pipeline: its stages wired into one Beam pipeline (`build_pipeline`) and the tables it writes."""

from __future__ import annotations

from functools import partial
from operator import attrgetter

import apache_beam as beam

from extractors.clients.resolvers import ResolverConfig
from extractors.reviews.dataset import CitationrConfig, dataset_files
from extractors.reviews.forms import ALL_FREE_TEXT, ReviewFields
from extractors.reviews.mentions import MentionConfig
from extractors.schemas import (
    CANDIDATES_SCHEMA,
    MENTIONS_SCHEMA,
    POSITIVES_SCHEMA,
    QUERIES_SCHEMA,
    REVIEWS_SCHEMA,
    candidate_row,
    mention_row,
    positive_row,
    query_row,
    review_row,
)
from mapping.matcher import MatchConfig
from pipelines.citationr.bibliographies import SubmissionBibliographies
from pipelines.citationr.mentions import MineMentions, ReadReviewerReferences
from pipelines.citationr.queries import BuildQueries, SelectCandidates
from pipelines.citationr.resolution import ResolveMentions, ResolveNames
from pipelines.citationr.reviews import ReadReviews
from pipelines.exports import NO_EXPORTS, ExportPlan, export_rmc
from pipelines.grobid import GrobidConfig
from pipelines.inputs import ReadConfig
from pipelines.skeleton import Table, WriteDataset
from pipelines.tallies import DEAD, TALLY
from pipelines.transforms import ReadPaperDatabase

TABLES = (
    Table("mentions", MENTIONS_SCHEMA, mention_row),
    Table("reviews", REVIEWS_SCHEMA, review_row),
    Table("queries", QUERIES_SCHEMA, query_row, split=attrgetter("split")),
    Table("positives", POSITIVES_SCHEMA, positive_row),
    Table("candidates", CANDIDATES_SCHEMA, candidate_row),
)
"""The dataset's tables: mentions, reviews, queries per split, positives, candidates."""


def build_pipeline(
    pipeline: beam.Pipeline,
    inputs: dict[str, list[str]],
    output: str,
    *,
    config: CitationrConfig | None = None,
    mentions: MentionConfig | None = None,
    match: MatchConfig | None = None,
    resolver: ResolverConfig | None = None,
    fields: ReviewFields = ALL_FREE_TEXT,
    num_shards: int = 0,
    read_config: ReadConfig | None = None,
    title_matcher: str = "memory",
    grobid: GrobidConfig | None = None,
    grobid_citations: bool = False,
    exports: ExportPlan = NO_EXPORTS,
    spot_titles: bool = False,
    resolve_names: bool = True,
):
    """Wire the stages; returns the final PCollection (the output directory, once written). `grobid` reads the
    submissions' PDFs (`inputs["pdfs"]`) and, with `grobid_citations`, the reviewers' reference strings. With
    `spot_titles`, the database's titles are spotted in the reviews (`MineMentions`; the database in memory). Without
    `resolve_names`, works named by name stay unresolved (`ResolveNames`)."""
    read_config = read_config or ReadConfig()
    config = config or CitationrConfig()
    mentions = mentions or MentionConfig()
    match = match or MatchConfig()
    resolver = resolver or ResolverConfig()
    read = pipeline | "ReadReviews" >> ReadReviews(inputs["reviews"], fields, read_config)
    database = pipeline | "ReadPaperDatabase" >> ReadPaperDatabase(inputs.get("metadata", []), read_config)
    bib = {"submissions": read["submissions"], "papers": database["papers"]} | "SubmissionBibliographies" >> (
        SubmissionBibliographies(
            inputs.get("tei", []), inputs.get("s2orc", []), read_config, inputs.get("pdfs", []), grobid
        )
    )
    mined = {
        "reviews": read["reviews"],
        "submissions": read["submissions"],
        "bibliographies": bib["bibliographies"],
        "papers": database["papers"],
    } | "MineMentions" >> MineMentions(mentions, match if spot_titles else None)
    found, dead_letters, tallies = mined["mentions"], [read[DEAD], bib[DEAD], database[DEAD]], []
    if grobid is not None and grobid_citations:
        references = found | "ReadReviewerReferences" >> ReadReviewerReferences(grobid, match)
        found = references["mentions"]
        dead_letters.append(references[DEAD])
        tallies.append(references[TALLY])
    names = {"mentions": found, "papers": database["papers"]} | "ResolveNames" >> ResolveNames(resolve_names)
    found = names["mentions"]
    tallies.append(names[TALLY])
    resolved = {"mentions": found, "papers": database["papers"]} | "ResolveMentions" >> ResolveMentions(
        match, resolver, title_matcher
    )
    built = {
        "submissions": read["submissions"],
        "mentions": resolved["mentions"],
        "reviews": mined["reviews"],
        "bibliographies": bib["bibliographies"],
    } | "BuildQueries" >> BuildQueries(config)
    papers = (database["papers"], resolved["online_papers"]) | "WithOnlinePapers" >> beam.Flatten()
    wanted = {"positives": built["positives"], "queries": built["queries"], "papers": papers}
    candidates = wanted | "SelectCandidates" >> SelectCandidates(config)
    dead = tuple(dead_letters) | "AllDeadLetters" >> beam.Flatten()
    written = mined["reviews"] | "CountWrittenReviews" >> beam.Map(lambda _: ("reviews_written", 1))
    tallies = (
        read[TALLY],
        written,
        bib[TALLY],
        database[TALLY],
        mined[TALLY],
        *tallies,
        resolved[TALLY],
        built[TALLY],
        candidates[TALLY],
    ) | "Tallies" >> beam.Flatten()
    record = {
        "inputs": inputs,
        "reading": read_config.as_metadata(),
        "dataset": config.as_metadata(),
        "mentions": mentions.as_metadata(),
        "matching": {**match.as_metadata(), "matcher": title_matcher},
        "online_resolvers": list(resolver.names),
        "review_fields": fields.as_metadata(),
        **({"grobid": grobid.as_metadata()} if grobid is not None else {}),
        "grobid_citations": grobid is not None and grobid_citations,
        "spot_database_titles": spot_titles,
        "resolve_names": resolve_names,
    }
    return {
        "mentions": resolved["mentions"],
        "reviews": mined["reviews"],
        "queries": built["queries"],
        "positives": built["positives"],
        "candidates": candidates["candidates"],
        DEAD: dead,
        TALLY: tallies,
    } | "WriteDataset" >> WriteDataset(output, num_shards, TABLES, partial(dataset_files, options=record), exports)


# ---------------------------------------------------------------------------------------------- export


def export_rmc_json(dataset: str, output: str, include_unresolved: bool = False) -> dict[str, int]:
    """Kept for old callers: the RMC layout (`pipelines.exports.export_rmc`, `data/...` under `output`)."""
    return export_rmc(dataset, output, include_unresolved=include_unresolved)
