"""From classified, resolved mentions to the CitationR dataset: queries, positives, stats and the card. No Beam.

A query is a submission that at least one review recommends a paper to (a `recommended` mention that
resolved to a database paper, or that carries a title). Its positives are those papers: a resolved one by
its database id, an unresolved one by `title:<hash of the normalised title>` with `resolved = False`, so
nothing the reviewers named is lost; the RMC export keeps only resolved positives unless asked otherwise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields

from extractors import assembly
from extractors.reviews.mentions import ALREADY_CITED, DISCUSSED, RECOMMENDED
from extractors.reviews.records import Candidate, MentionRecord, Positive, Query, Review, ReviewSummary, Submission
from extractors.schemas import (
    CANDIDATES_SCHEMA,
    MENTIONS_SCHEMA,
    POSITIVES_SCHEMA,
    QUERIES_SCHEMA,
    REVIEWS_SCHEMA,
    SPLITS,
)
from mapping.records import Paper
from mapping.titles import normalize_title


@dataclass(frozen=True)
class CitationrConfig:
    """Dataset parameters, recorded in stats.json. Splits: about 8:1:1, ordered by submission year."""

    train_fraction: float = 0.8
    validation_fraction: float = 0.1
    split_seed: int = 0
    candidate_years: int = 0  # 0: no candidate extension; else the window around a recommended paper's year

    def cut_points(self) -> tuple[float, float]:
        return self.train_fraction, self.train_fraction + self.validation_fraction

    def as_metadata(self) -> dict[str, object]:
        return asdict(self)


def title_paper_id(title: str) -> str:
    """The id of a recommended paper known only by its title: stable across runs and reviews."""
    return "title:" + hashlib.sha1(normalize_title(title).encode()).hexdigest()[:16]


def summarize_review(review: Review, mentions: Sequence[MentionRecord]) -> ReviewSummary:
    """A review with its mentions counted by kind."""
    kinds = [m.mention.kind for m in mentions]
    return ReviewSummary(
        review_id=review.review_id,
        submission_id=review.submission_id,
        review_kind=review.review_kind,
        year=review.year,
        num_chars=len(review.text),
        num_mentions=len(kinds),
        num_recommended=kinds.count(RECOMMENDED),
        num_already_cited=kinds.count(ALREADY_CITED),
        num_discussed=kinds.count(DISCUSSED),
        recommends=RECOMMENDED in kinds,
    )


def recommended_paper_id(record: MentionRecord) -> str | None:
    """The paper a recommended mention names: its database id, else its title's id; None for any other mention
    and for one with neither."""
    m = record.mention
    if m.kind != RECOMMENDED:
        return None
    if record.paper_id:
        return record.paper_id
    return title_paper_id(m.title) if m.title and normalize_title(m.title) else None


def positives_for(submission_id: str, mentions: Iterable[MentionRecord]) -> list[Positive]:
    """One positive per distinct recommended paper of a submission, whichever reviews named it: resolved as the
    first mention of it was, titled by the first mention with a title."""
    by_paper: dict[str, list[MentionRecord]] = {}
    for record in mentions:
        paper_id = recommended_paper_id(record)
        if paper_id is not None:
            by_paper.setdefault(paper_id, []).append(record)
    positives = []
    for paper_id, records in sorted(by_paper.items()):
        first = records[0]
        title = next((r.mention.title for r in records if r.mention.title), first.mention.title)
        reviews = tuple(sorted({r.review_id for r in records}))
        positives.append(Positive(submission_id, paper_id, title, bool(first.paper_id), first.resolved_by, reviews))
    return positives


SUBMISSION_FIELDS = ("submission_id", "title", "abstract", "year", "venue")
"""What a query takes from its submission as it is."""


def build_query(
    submission: Submission,
    reviews: Sequence[ReviewSummary],
    positives: Sequence[Positive],
    reference_titles: Sequence[str],
) -> Query:
    """The query of a submission with recommended papers (`positives`), its `reviews` and its bibliography."""
    return Query(
        **{name: getattr(submission, name) for name in SUBMISSION_FIELDS},
        reference_titles=tuple(reference_titles),
        num_reviews=len(reviews),
        num_reviews_recommending=sum(1 for r in reviews if r.recommends),
        positive_ids=tuple(p.paper_id for p in positives),
    )


def title_only_candidate(paper_id: str, titles: Iterable[str | None], query_ids: Iterable[str] = ()) -> Candidate:
    """The candidate of a positive known only by its title: the first of its titles in order."""
    named = sorted(t for t in titles if t)
    paper = Paper(paper_id=paper_id, title=named[0] if named else None, source="review")
    return candidate(paper, "unresolved_title", query_ids)


def candidate(paper: Paper, role: str, query_ids: Iterable[str] = ()) -> Candidate:
    """A database paper as a candidate: its own fields, its `role` and the queries it is a candidate of."""
    own = {
        field.name: getattr(paper, field.name) for field in fields(Candidate) if field.name not in ("role", "query_ids")
    }
    return Candidate(**own, role=role, query_ids=tuple(sorted(set(query_ids))))


# Candidate extension (CitationR's "extended" version, RMC's `data/extended`): for each query, the database papers
# published around the years of the papers its reviewers recommend, in their categories. A paper is an extension
# candidate of query q when it shares a category with a resolved positive r of q and was published at most
# `candidate_years` years before or after r, and not after q's own year (a submission cannot have cited a later
# paper). Joined by (category, year) buckets: `extension_keys` of each positive, `bucket_keys` of each paper.


def extension_keys(positive: Paper, query_year: int | None, years: int) -> list[str]:
    """The (category, year) buckets a resolved positive opens for its query; none without a year or category, or
    when the extension is off (`years` 0)."""
    if years <= 0 or positive.year is None or not positive.categories:
        return []
    last = positive.year + years if query_year is None else min(positive.year + years, query_year)
    return [f"{c}\x1f{y}" for c in sorted(set(positive.categories)) for y in range(positive.year - years, last + 1)]


def bucket_keys(paper: Paper) -> list[str]:
    """The (category, year) buckets a database paper is in."""
    if paper.year is None:
        return []
    return [f"{c}\x1f{paper.year}" for c in sorted(set(paper.categories))]


FUNNEL_KEYS = (
    "review_files_in",
    "review_files_dead_lettered",
    "reviews_in",
    "reviews_read",
    "reviews_dead_lettered",
    "reviews_written",
    "submissions",
    "submissions_with_bibliography",
    "submissions_reviewed",
    "submissions_cited_known",
    "submissions_cited_undecided",
    "reviews_with_mentions",
    "mentions",
    "mentions_kind:recommended",
    "mentions_kind:already_cited",
    "mentions_kind:discussed",
    "reviews_recommending",
    "recommended_resolved",
    "recommended_unresolved",
    "queries",
    "positives",
    "positives_resolved",
    "candidates",
)


def build_stats(tallies: Mapping[str, int], options: Mapping) -> dict:
    """stats.json: the funnel with its balance checks, queries per split, resolution, dead letters and what reading
    had to decide (`reading`: encodings other than UTF-8, duplicate JSON keys or CSV columns, the last one kept).
    `reviews_balance`: every review read from the files is a row of `reviews/` or a dead letter (a duplicate id
    included)."""
    funnel = assembly.funnel_counts(tallies, FUNNEL_KEYS)
    kinds = sum(funnel[f"mentions_kind:{k}"] for k in (RECOMMENDED, ALREADY_CITED, DISCUSSED))
    checks = {
        "reviews_balance": funnel["reviews_in"] == funnel["reviews_written"] + funnel["reviews_dead_lettered"],
        "mentions_balance": funnel["mentions"] == kinds,
        "recommended_balance": funnel["mentions_kind:recommended"]
        == funnel["recommended_resolved"] + funnel["recommended_unresolved"],
    }
    return {
        "funnel": funnel,
        "checks": checks,
        "queries": assembly.split_counts(tallies, "queries"),
        "resolution": assembly.counts_starting(tallies, ("resolved_by:", "unresolved:")),
        "mention_sources": assembly.counts_under(tallies, "mentions"),
        "decisions": assembly.counts_under(tallies, "reason"),
        "dead_letters": assembly.counts_under(tallies, "dead"),
        "reading": assembly.counts_under(tallies, "reading"),
        "already_cited": already_cited_stats(tallies),
        "decided_by": assembly.counts_under(tallies, "decided_by"),
        "candidates": assembly.counts_under(tallies, "candidates"),
        "grobid": assembly.counts_starting(tallies, ("grobid_", "reviewer_references_")),
        "options": dict(options),
    }


def already_cited_stats(tallies: Mapping[str, int]) -> dict[str, object]:
    """Whether the run could tell `already_cited` from `recommended`: the reviewed submissions whose own references
    were known (and from where), those undecided, and the recommended mentions of undecided submissions (which
    may be papers the submission already cites); `ambiguous_ids`: the paper files or database records whose id
    several submissions share (one id at two venues), joined to none by that id."""
    undecided = int(tallies.get("submissions_cited_undecided", 0))
    reviewed = int(tallies.get("submissions_reviewed", 0))
    return {
        "decided": undecided == 0 and reviewed > 0,
        "submissions_reviewed": reviewed,
        "submissions_with_references": int(tallies.get("submissions_cited_known", 0)),
        "submissions_undecided": undecided,
        "recommended_mentions_undecided": int(tallies.get("recommended_cited_undecided", 0)),
        "references_from": assembly.counts_under(tallies, "submissions_with_bibliography"),
        "ambiguous_ids": int(tallies.get("bibliography_ambiguous_id", 0)),
    }


def citationr_warnings(stats: Mapping) -> list[str]:
    """What a reader of the run must know, the cause first: fewer than half of the recommended mentions resolving
    to a database paper (`resolution_warning`), then the submissions whose already cited papers could not be told
    apart."""
    warnings = [line for line in (resolution_warning(stats), decision_warning(stats)) if line]
    cited = stats.get("already_cited") or {}
    if cited.get("submissions_undecided"):
        warnings.append(
            f"already_cited undecided for {cited['submissions_undecided']:,} of {cited['submissions_reviewed']:,} "
            f"reviewed submissions (no --tei/--s2orc/--pdfs paper of theirs and no references list in --metadata): "
            f"their {cited['recommended_mentions_undecided']:,} recommended mentions may include papers they "
            "already cite"
        )
    return warnings


def decided_by_line(stats: Mapping) -> str:
    """Who decided which mentions are recommended, for the card: the learned decision (`decision.py`) or the rules,
    with the reviews each decided (stats.json's `decided_by`)."""
    decided = stats.get("decided_by") or {}
    if not decided:
        return "Decided by: not recorded."
    parts = []
    for who, n in sorted(decided.items()):
        what = "the learned decision (all-MiniLM-L6-v2 + a fitted head)" if who == "model" else "the rules"
        parts.append(f"{what} for {n:,} reviews")
    return "Decided by (`decided_by`): " + ", ".join(parts) + "."


def decision_warning(stats: Mapping) -> str | None:
    """One line when the learned decision was asked for (`mentions.decision` = model) and the rules decided some
    reviews instead (the encoder's package absent where they were mined)."""
    asked = ((stats.get("options") or {}).get("mentions") or {}).get("decision")
    ruled = (stats.get("decided_by") or {}).get("rules", 0)
    if asked != "model" or not ruled:
        return None
    return (
        f"the learned decision was asked for, but the rules decided {ruled:,} reviews: its encoder's package is not "
        "installed where they were mined (pip install 'citrec[models]'; --decision rules says so on purpose)"
    )


def resolution_warning(stats: Mapping) -> str | None:
    """One line when fewer than half (`2 * resolved < recommended`) of the recommended mentions resolve: the
    figures, that --metadata must hold the recommended works (or --online_resolvers look them up), and what
    becomes of the rest: title-only positives, which the RMC export leaves out unless --export_unresolved."""
    funnel = stats.get("funnel") or {}
    recommended = funnel.get("mentions_kind:recommended", 0)
    resolved = funnel.get("recommended_resolved", 0)
    if recommended <= 0 or 2 * resolved >= recommended:
        return None
    options = stats.get("options") or {}
    inputs = options.get("inputs")
    if inputs is not None and not inputs.get("metadata"):
        database = "this run had no --metadata"
    else:
        database = f"this run's --metadata holds {'none' if resolved == 0 else 'few'} of them"
    online = "" if options.get("online_resolvers") else "; --online_resolvers dblp,s2 looks the rest up online"
    positives, kept = funnel.get("positives", 0), funnel.get("positives_resolved", 0)
    line = (
        f"only {resolved:,} of {recommended:,} recommended mentions ({resolved / recommended:.1%}) resolve to a "
        f"paper in the database: --metadata must hold the works reviewers recommend (arXiv or S2ORC records, "
        f"matched by arXiv id, DOI or title); {database}{online}"
    )
    if positives > kept:
        title_only = f"all {positives:,}" if kept == 0 else f"{positives - kept:,} of the {positives:,}"
        line += (
            f". {title_only} positives are title-only (`title:` ids, resolved = false), which the RMC export "
            "(--export rmc, --export_json) leaves out unless --export_unresolved"
        )
    return line


def format_funnel(stats: Mapping) -> str:
    """The end-of-run summary: the funnel, queries per split, the dead letters by reason, the checks."""
    dead, reading = stats["dead_letters"], stats.get("reading") or {}
    lines = [assembly.per_split_line("queries", stats["queries"])]
    lines += ["dead letters: " + ", ".join(f"{k} {v:,}" for k, v in dead.items())] if dead else []
    lines += ["reading: " + ", ".join(f"{k} {v:,}" for k, v in reading.items())] if reading else []
    return assembly.format_summary(stats, lines)


def dataset_files(tallies: Mapping[str, int], options: Mapping) -> dict[str, bytes]:
    """What a run writes once every count is in: stats.json and the card."""
    stats = build_stats(tallies, options)
    return assembly.stats_and_card_files(stats, dataset_card(stats))


TABLE_ROWS = {
    "positives": "positives",
    "candidates": "candidates",
    "mentions": "mentions",
    "reviews": "reviews_written",
}
"""The tables a CitationR card lists as HuggingFace configs besides the queries, with the funnel key that counts
their rows."""

TABLE_SCHEMAS = {
    "mentions": MENTIONS_SCHEMA,
    "reviews": REVIEWS_SCHEMA,
    "queries": QUERIES_SCHEMA,
    "positives": POSITIVES_SCHEMA,
    "candidates": CANDIDATES_SCHEMA,
}


def dataset_card(stats: Mapping) -> str:
    """README.md for the written dataset: its HuggingFace configs (`default`, the queries by split, then each
    other table with rows, a split of its own name), the tables and their columns, the funnel, and how to load
    it (`extractors.assembly.load_snippet`)."""
    f = stats["funnel"]
    share = f["reviews_recommending"] / f["reviews_written"] if f["reviews_written"] else 0.0
    empty = [split for split in SPLITS if stats["queries"].get(split, 0) == 0]
    tables = [(table, f.get(key, 0)) for table, key in TABLE_ROWS.items()]
    configs = assembly.hf_configs("queries", stats["queries"], tables)
    title = assembly.card_title("citrec citationr")
    columns = {name: ", ".join(f"`{c}`" for c in schema.names) for name, schema in TABLE_SCHEMAS.items()}
    return assembly.hf_front_matter(title, configs) + "\n".join(
        [
            f"# {title}",
            "",
            "Citations that peer reviewers say a submission missed, mined from review text by rules",
            "(`extractors/reviews/mentions/`) and aligned to a paper database (`mapping/`).",
            "",
            "## Tables (Parquet, zstd)",
            "- `mentions/`: one row per paper mention in a review, with `kind` (recommended / already_cited /",
            "  discussed), the rule that decided it (`reason`), its identifiers, title and resolved `paper_id`:",
            f"  {columns['mentions']}.",
            "- `reviews/`: one row per review read (one per id), with its mention counts; ids are",
            "  `<venue>:<id>` (`neurips-2023:0Iw2dLh8uq/r0`), so that two venues' ids never meet:",
            f"  {columns['reviews']}.",
            "- `queries/{train,validation,test}`: submissions with at least one recommended paper:",
            f"  {columns['queries']}.",
            "- `positives/`: (submission, recommended paper); unresolved papers keep a `title:` id:",
            f"  {columns['positives']}.",
            "- `candidates/`: the papers to rank: resolved positives, extension papers, title-only positives:",
            f"  {columns['candidates']}.",
            "- `dead_letter/`: every input that could not be read, with a reason.",
            "",
            "## Funnel",
            "",
            *[f"- {k}: {v:,}" for k, v in f.items()],
            "",
            f"Share of reviews written that recommend a paper: {share:.1%}. Queries per split: "
            + ", ".join(f"{k} {v:,}" for k, v in stats["queries"].items())
            + ".",
            "",
            "Shares depend on how the reviews were sampled; a sample drawn for citation cues does not estimate a",
            "venue's population share.",
            "",
            decided_by_line(stats),
            "",
            *(
                [f"Splits with no queries have no files and are not in the header's configs: {', '.join(empty)}.", ""]
                if empty
                else []
            ),
            "## Load",
            "With HuggingFace `datasets`, inside this directory as it stands, or from anywhere with `DATASET` set to",
            "this directory's path:",
            "```python",
            assembly.load_snippet("queries", configs),
            "```",
            "",
        ]
    )
