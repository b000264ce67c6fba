"""The peer-review data model: submissions, reviews, the papers a review mentions, and the CitationR records.

Small frozen dataclasses; no Beam, no parsing. The tables they become are in `extractors.schemas`; the
document side (parsed papers, their citation markers, contexts) is `mapping.records`.

Two kinds of "mention" live here, and neither is `mapping.records.Mention` (a citation marker such as
"[3]" in a parsed paper's paragraph):
- `PaperMention`: one paper that a review's text names, as the rules in `extractors.reviews.mentions` find
  and classify it;
- `MentionRecord`: a `PaperMention` placed in its review and submission, with the database paper it resolved
  to: one row of the `mentions/` table.
"""

from __future__ import annotations

from dataclasses import dataclass

# What a reviewer does with a paper they mention (`PaperMention.kind`).
RECOMMENDED = "recommended"
ALREADY_CITED = "already_cited"
DISCUSSED = "discussed"
KINDS = (RECOMMENDED, ALREADY_CITED, DISCUSSED)

# The identifier fields of a `PaperMention` (beside its `url`).
IDENTIFIER_FIELDS = ("arxiv_id", "doi", "openreview_id", "acl_id", "s2_id")


@dataclass(frozen=True)
class Submission:
    """A paper under review: what the query side of the dataset is made of. `scope` is the venue its id belongs
    to as the record names it (PeerRead's `conference`, an OpenReview invitation's venue path), None when the
    record names none; a run qualifies ids by it (`extractors.reviews.forms.with_scoped_ids`), since two venues
    may number their submissions alike."""

    submission_id: str
    title: str | None
    abstract: str | None
    year: int | None
    venue: str | None
    source: str
    authors: tuple[str, ...] = ()
    scope: str | None = None


@dataclass(frozen=True)
class Review:
    """One review (or meta-review) as cleaned text; `sections` are (offset, field name) pairs into `text`.
    `scope`: the venue its ids belong to, as on `Submission`."""

    review_id: str
    submission_id: str
    text: str
    sections: tuple[tuple[int, str], ...]
    review_kind: str  # official | meta | comment
    year: int | None
    source: str
    scope: str | None = None


@dataclass(frozen=True)
class PaperMention:
    """One paper a review's text names: where (offsets into the cleaned review text), what the rules extracted,
    and the decision (`kind`) with the rule that made it (`reason`). Not a citation marker of a parsed paper
    (`mapping.records.Mention`); placed in its review and resolved, it becomes a `MentionRecord`."""

    start: int
    end: int
    text: str
    # reference_entry | quoted_title | prose_title | identifier | author_year | named_work | name | database_title
    source: str
    title: str | None = None
    arxiv_id: str | None = None
    doi: str | None = None
    openreview_id: str | None = None
    acl_id: str | None = None
    s2_id: str | None = None
    url: str | None = None
    authors: str | None = None
    year: int | None = None
    marker: str | None = None
    section: str | None = None
    context: str = ""
    kind: str = DISCUSSED
    reason: str = ""


@dataclass(frozen=True)
class MentionRecord:
    """A classified `PaperMention` in its review and submission, with the database paper it resolved to (if any):
    one row of the `mentions/` table."""

    mention_id: str
    review_id: str
    submission_id: str
    mention: PaperMention
    paper_id: str | None = None
    resolved_by: str | None = None
    resolution_score: float | None = None
    review_year: int | None = None  # the review's year: a work it names cannot be dated later (not a column)


# ------------------------------------------------------------------------ the dataset's records (`citationr`)


@dataclass(frozen=True)
class ReviewSummary:
    """One review read, with what its mentions are: one row of the `reviews/` table."""

    review_id: str
    submission_id: str
    review_kind: str
    year: int | None
    num_chars: int
    num_mentions: int
    num_recommended: int
    num_already_cited: int
    num_discussed: int
    recommends: bool


@dataclass(frozen=True)
class Positive:
    """A paper the reviews recommend to a submission: one row of the `positives/` table. `split` is the
    submission's query's, None until the queries are split."""

    submission_id: str
    paper_id: str
    title: str | None
    resolved: bool
    resolved_by: str | None
    review_ids: tuple[str, ...]
    split: str | None = None


@dataclass(frozen=True)
class Query:
    """A submission with at least one recommended paper: one row of the `queries/` tables. `split` is None
    until the queries are split."""

    submission_id: str
    title: str | None
    abstract: str | None
    year: int | None
    venue: str | None
    reference_titles: tuple[str, ...]
    num_reviews: int
    num_reviews_recommending: int
    positive_ids: tuple[str, ...]
    split: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A paper to rank: one row of the `candidates/` table. `role`: `positive` (a resolved positive),
    `extension` (a database paper the candidate extension adds to the queries in `query_ids`) or
    `unresolved_title` (a title-only positive)."""

    paper_id: str
    title: str | None
    abstract: str | None
    year: int | None
    authors: tuple[str, ...]
    categories: tuple[str, ...]
    doi: str | None
    arxiv_id: str | None
    role: str
    query_ids: tuple[str, ...] = ()  # the queries it is a candidate of: its positive's, or those it extends
