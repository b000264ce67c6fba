"""The datasets' tables: one explicit pyarrow schema each, defined once, with the record-to-row functions.

Pipelines write these tables; trainers and tests read them. Field names here are the datasets' contract: the
ArSyTa-style dataset's (`pipelines.arsyta`: contexts, papers, citations), the CitationR dataset's
(`pipelines.citationr`: mentions, reviews, queries, positives, candidates), and both datasets' dead letters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from mapping.records import Context, DeadLetter, InputTally, Paper

if TYPE_CHECKING:
    from extractors.reviews.records import Candidate, MentionRecord, Positive, Query, ReviewSummary

SPLITS = ("train", "validation", "test")
CONTEXT_VIEWS = ("char_context", "sentence_context")  # the two context columns of a contexts row

SCHEMA_VERSION = "3"
"""The version of the tables' columns below, stamped in stats.json, the dataset card and manifest.json.

Bump it (a whole number) on any change of a table's columns: a column added, removed, renamed or retyped, or its
nullability changed; `tests/test_stats_plots.py` holds each version's fingerprint and fails until it is bumped.
"1": every dataset written before versions were stamped (they carry no version); "2": `papers.in_pool` added.
"""

CONTEXTS_SCHEMA = pa.schema(
    [
        pa.field("context_id", pa.string(), nullable=False),
        pa.field("citing_id", pa.string(), nullable=False),
        pa.field("cited_id", pa.string(), nullable=False),
        pa.field("bib_id", pa.string()),
        pa.field("char_context", pa.string()),
        pa.field("sentence_context", pa.string()),
        pa.field("section_heading", pa.string()),
        pa.field("marker", pa.string()),
        pa.field("citing_date", pa.date32()),
        pa.field("citing_year", pa.int32()),
        pa.field("cited_date", pa.date32()),
        pa.field("cited_year", pa.int32()),
        pa.field("split", pa.string()),
        pa.field("citing_categories", pa.list_(pa.string())),
        pa.field("citing_primary_category", pa.string()),
        pa.field("citing_acm_classes", pa.list_(pa.string())),
        pa.field("cited_categories", pa.list_(pa.string())),
        pa.field("cited_primary_category", pa.string()),
        pa.field("cited_acm_classes", pa.list_(pa.string())),
    ]
)

PAPERS_SCHEMA = pa.schema(
    [
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("abstract", pa.string()),
        pa.field("authors", pa.list_(pa.string())),
        pa.field("date", pa.date32()),
        pa.field("year", pa.int32()),
        pa.field("categories", pa.list_(pa.string())),
        pa.field("primary_category", pa.string()),
        pa.field("acm_classes", pa.list_(pa.string())),
        pa.field("acm_classes_author", pa.list_(pa.string())),
        pa.field("doi", pa.string()),
        pa.field("arxiv_id", pa.string()),
        pa.field("source", pa.string()),
        pa.field("in_pool", pa.bool_()),
    ]
)

CITATIONS_SCHEMA = pa.schema(
    [
        pa.field("citing_id", pa.string(), nullable=False),
        pa.field("cited_id", pa.string(), nullable=False),
        pa.field("num_contexts", pa.int32()),
        pa.field("section_headings", pa.list_(pa.string())),
    ]
)

DEAD_LETTER_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string(), nullable=False),
        pa.field("stage", pa.string(), nullable=False),
        pa.field("reason", pa.string(), nullable=False),
        pa.field("detail", pa.string()),
    ]
)

INPUTS_SCHEMA = pa.schema(
    [
        pa.field("path", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("records_read", pa.int64()),
        pa.field("parsed", pa.int64()),
        pa.field("dead_lettered", pa.int64()),
        pa.field("duplicate_of", pa.list_(pa.string())),
        pa.field("reason", pa.string()),
    ]
)


# ------------------------------------------------------------------------------------ CitationR tables

MENTIONS_SCHEMA = pa.schema(
    [
        pa.field("mention_id", pa.string(), nullable=False),
        pa.field("review_id", pa.string(), nullable=False),
        pa.field("submission_id", pa.string(), nullable=False),
        pa.field("source", pa.string(), nullable=False),
        pa.field("text", pa.string()),
        pa.field("title", pa.string()),
        pa.field("arxiv_id", pa.string()),
        pa.field("doi", pa.string()),
        pa.field("openreview_id", pa.string()),
        pa.field("acl_id", pa.string()),
        pa.field("s2_id", pa.string()),
        pa.field("url", pa.string()),
        pa.field("authors", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("marker", pa.string()),
        pa.field("section", pa.string()),
        pa.field("context", pa.string()),
        pa.field("kind", pa.string(), nullable=False),
        pa.field("reason", pa.string()),
        pa.field("paper_id", pa.string()),
        pa.field("resolved_by", pa.string()),
        pa.field("resolution_score", pa.float64()),
    ]
)

REVIEWS_SCHEMA = pa.schema(
    [
        pa.field("review_id", pa.string(), nullable=False),
        pa.field("submission_id", pa.string(), nullable=False),
        pa.field("review_kind", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("num_chars", pa.int32()),
        pa.field("num_mentions", pa.int32()),
        pa.field("num_recommended", pa.int32()),
        pa.field("num_already_cited", pa.int32()),
        pa.field("num_discussed", pa.int32()),
        pa.field("recommends", pa.bool_()),
    ]
)

QUERIES_SCHEMA = pa.schema(
    [
        pa.field("submission_id", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("abstract", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("venue", pa.string()),
        pa.field("reference_titles", pa.list_(pa.string())),
        pa.field("num_reviews", pa.int32()),
        pa.field("num_reviews_recommending", pa.int32()),
        pa.field("positive_ids", pa.list_(pa.string())),
        pa.field("split", pa.string(), nullable=False),
    ]
)

POSITIVES_SCHEMA = pa.schema(
    [
        pa.field("submission_id", pa.string(), nullable=False),
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("resolved", pa.bool_(), nullable=False),
        pa.field("resolved_by", pa.string()),
        pa.field("review_ids", pa.list_(pa.string())),
        pa.field("split", pa.string(), nullable=False),
    ]
)

CANDIDATES_SCHEMA = pa.schema(
    [
        pa.field("paper_id", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("abstract", pa.string()),
        pa.field("year", pa.int32()),
        pa.field("authors", pa.list_(pa.string())),
        pa.field("categories", pa.list_(pa.string())),
        pa.field("doi", pa.string()),
        pa.field("arxiv_id", pa.string()),
        pa.field("role", pa.string(), nullable=False),  # positive | extension | unresolved_title
        pa.field("query_ids", pa.list_(pa.string())),  # the queries it is a candidate of
    ]
)


# ------------------------------------------------------------------------------------------ record to row


def _row(record: object, schema: pa.Schema) -> dict[str, object]:
    """A record's fields by the schema's names; tuples become lists for pyarrow's list columns."""
    row = {}
    for name in schema.names:
        value = getattr(record, name)
        row[name] = list(value) if isinstance(value, tuple) else value
    return row


def context_row(context: Context) -> dict[str, object]:
    return _row(context, CONTEXTS_SCHEMA)


def paper_row(paper: Paper) -> dict[str, object]:
    return _row(paper, PAPERS_SCHEMA)


def citation_row(citing_id: str, cited_id: str, headings: list[str | None]) -> dict[str, object]:
    return {
        "citing_id": citing_id,
        "cited_id": cited_id,
        "num_contexts": len(headings),
        "section_headings": sorted({h for h in headings if h}),
    }


def dead_letter_row(letter: DeadLetter) -> dict[str, object]:
    return _row(letter, DEAD_LETTER_SCHEMA)


def input_row(tally: InputTally) -> dict[str, object]:
    return _row(tally, INPUTS_SCHEMA)


def mention_row(record: MentionRecord) -> dict[str, object]:
    """A resolved mention: the record's ids and resolution around the mention's own fields."""
    ids = {"mention_id": record.mention_id, "review_id": record.review_id, "submission_id": record.submission_id}
    resolution = {
        "paper_id": record.paper_id,
        "resolved_by": record.resolved_by,
        "resolution_score": record.resolution_score,
    }
    row = {**ids, **resolution}
    return {name: row[name] if name in row else getattr(record.mention, name) for name in MENTIONS_SCHEMA.names}


def review_row(summary: ReviewSummary) -> dict[str, object]:
    return _row(summary, REVIEWS_SCHEMA)


def query_row(query: Query) -> dict[str, object]:
    return _row(query, QUERIES_SCHEMA)


def positive_row(positive: Positive) -> dict[str, object]:
    return _row(positive, POSITIVES_SCHEMA)


def candidate_row(candidate: Candidate) -> dict[str, object]:
    return _row(candidate, CANDIDATES_SCHEMA)
