"""Build a CitationR-style dataset: the papers peer reviewers say a submission should have cited.

    python -m pipelines.citationr --runner=FnApiRunner --output out/citationr-example
    python -m pipelines.citationr --runner=FnApiRunner \\
        --reviews '../shared/data/reviews/neurips-openreview-2023-2025/*/*.json' \\
        --metadata 'arxiv-metadata.jsonl' --output out/citationr --export_json

Without `--reviews` it runs on the bundled example (`examples/reviews`). Reviews are PeerRead JSON,
OpenReview notes (JSON/JSONL, API v1 or v2), the flat CSV export of notes, DISAPERE JSON or plain-text review
exports; every free-text field of a review is read, whatever the form calls it (`extractors/reviews/forms.py`).
`--tei`/`--s2orc`/`--pdfs` (through GROBID) give the submissions' own papers (matched by file stem = submission id,
or by title), and a `--metadata` record that lists its references gives them too, so that mentions of papers the
submission already cites are told apart; a run that cannot tell says so in stats.json. `--metadata` is the paper
database, as in arsyta. With `--grobid_citations` (or an explicit `--grobid_url`) the reviewers' reference strings
go through GROBID's processCitationList. docs/citationr.md has the rules, the outputs and the figures.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from operator import attrgetter
from pathlib import Path

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.clients.resolvers import OnlineResolver, ResolverConfig
from extractors.documents.streams import TooLarge, read_errors
from extractors.records import BibEntry, DeadLetter, ParsedDocument, Resolution, no_count
from extractors.reviews.bibliographies import (
    bibliography_of_document,
    bibliography_of_papers,
    document_keys,
    fullest,
    paper_keys,
    submission_keys,
    with_own_text,
)
from extractors.reviews.dataset import (
    CitationrConfig,
    bucket_keys,
    build_query,
    candidate,
    citationr_warnings,
    dataset_files,
    extension_keys,
    format_funnel,
    positives_for,
    summarize_review,
    title_only_candidate,
)
from extractors.reviews.forms import (
    ALL_FREE_TEXT,
    ReviewFields,
    is_review_letter,
    local_id,
    merge_submissions,
    parse_review_file,
    split_for_submission,
    with_scoped_ids,
)
from extractors.reviews.mentions import RECOMMENDED, Bibliography, MentionConfig, extract_review_mentions, mention_key
from extractors.reviews.mentions.learned import model_weights
from extractors.reviews.mentions.names import NAME_SOURCE
from extractors.reviews.mentions.spotting import DatabaseTitleSpotter
from extractors.reviews.records import Candidate, MentionRecord, Review, Submission
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
from mapping.matcher import InMemoryMatcher, MatchConfig, usable_title
from mapping.names import choose_named, mention_name_keys, title_name_key
from pipelines.arsyta import ArsytaOptions, grobid_config
from pipelines.exports import NO_EXPORTS, ExportPlan, export_rmc
from pipelines.grobid import GrobidConfig, ParsePdfs, ParseRawReferences
from pipelines.inputs import (
    MAX_DOCUMENT_BYTES,
    ParseFiles,
    ReadConfig,
    ReadTask,
    file_of,
    read_document_bytes,
    read_failure,
)
from pipelines.matching import PAPERS, REFS, UNCOUNTED, MatchReferences, choose_title_matcher
from pipelines.options import CitationrOptions, CorpusOptions
from pipelines.outputs import fail
from pipelines.skeleton import DatasetPipeline, Inputs, Plan, RunRequest, Table, WriteDataset
from pipelines.tallies import DEAD, TALLY, ConfiguredFn, ConfiguredTransform, Tallies, TallyingFn
from pipelines.transforms import ParseDocuments, ReadPaperDatabase, in_memory_matcher

NAMESPACE = "citationr"
REFERENCE_ENTRY = "reference_entry"  # a mention that is a reviewer's reference string (`PaperMention.source`)
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "reviews"
LOG = logging.getLogger("pipelines.citationr")  # named, not __name__: the module also runs as __main__


class Progress:
    """A worker's progress through a long step as INFO lines (the pipelines' loggers print at INFO): one when
    `every` more items are done or `seconds` have passed since the last line, whichever comes first, so that a
    run over thousands of reviews is never silent for long. A DoFn holds one: each worker says what it did."""

    EVERY = 1_000
    SECONDS = 10.0

    def __init__(
        self,
        step: str,
        unit: str,
        every: int | None = None,
        seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.step, self.unit, self.clock = step, unit, clock
        self.every = every or self.EVERY
        self.seconds = self.SECONDS if seconds is None else seconds
        self.done = 0
        self.counts: dict[str, int] = {}
        self._logged = 0
        self._last: float | None = None

    def add(self, n: int = 1, last: str = "", **counts: int) -> bool:
        """`n` more items done, with what they added to each of `counts` (`mentions=3`) and the `last` one's
        name; logs a line (and returns True) when one is due."""
        now = self.clock()
        if self._last is None:
            self._last = now
        self.done += n
        for name, value in counts.items():
            self.counts[name] = self.counts.get(name, 0) + value
        if self.done // self.every == self._logged // self.every and now - self._last < self.seconds:
            return False
        figures = [f"{value:,} {name}" for name, value in self.counts.items()] + ([f"last: {last}"] if last else [])
        tail = f" ({', '.join(figures)})" if figures else ""
        LOG.info("%s: %s %s done on this worker%s", self.step, f"{self.done:,}", self.unit, tail)
        self._logged, self._last = self.done, now
        return True


# ------------------------------------------------------------------------------------------ read reviews


class ParseReviewFileFn(TallyingFn):
    """A review file (read whole, decompressed by suffix, capped) into reviews, submissions, dead letters; ids
    qualified by their venue (`with_scoped_ids`). A review is counted in (`reviews_in`) as it is read or
    dead-lettered on its own (`is_review_letter`)."""

    def __init__(self, fields: ReviewFields = ALL_FREE_TEXT, max_bytes: int = MAX_DOCUMENT_BYTES) -> None:
        self.fields = fields
        self.max_bytes = max_bytes
        self.progress = Progress("reading reviews", "review files")

    def process(self, task: ReadTask) -> Iterator:
        tally = self.tallies(NAMESPACE)
        path = task.path
        tally("review_files_in")
        try:
            data = read_document_bytes(path, self.max_bytes, task)
        except TooLarge as err:
            items = [DeadLetter(path, "read", "too_large", str(err))]
        except read_errors() as err:
            items = [read_failure(path, err)]
        else:
            items = with_scoped_ids(list(parse_review_file(data, path, self.fields, tally)), path)
        if items and all(isinstance(i, DeadLetter) and i.source == path for i in items):
            tally("review_files_dead_lettered")
        for item in items:
            if isinstance(item, Review):
                tally("reviews_in")
                tally("reviews_read")
                tally(f"reviews_read:{item.review_kind}")
                yield item
            elif isinstance(item, Submission):
                yield TaggedOutput("submissions", item)
            else:
                if is_review_letter(item, path):
                    tally("reviews_in")
                    tally("reviews_dead_lettered")
                tally(f"dead:{item.stage}:{item.reason}")
                yield TaggedOutput(DEAD, item)
        self.progress.add(reviews=sum(isinstance(item, Review) for item in items), last=path)
        yield from tally.emit()


class OneReviewPerIdFn(TallyingFn):
    """The reviews read under one id into one: the first by (file, text); each other is a `duplicate_review`
    dead letter (the same review in two files, or a review id given twice), so that every review read is written
    or dead-lettered."""

    def process(self, element) -> Iterator:
        review_id, reviews = element
        tally = self.tallies(NAMESPACE)
        kept, *others = sorted(reviews, key=lambda r: (r.source, r.text))
        for other in others:
            text = "the same text" if other.text == kept.text else "another text"
            detail = f"review {review_id} ({text}) is kept as read from {kept.source}"
            tally("reviews_dead_lettered")
            tally("dead:read_reviews:duplicate_review")
            yield TaggedOutput(
                DEAD, DeadLetter(f"{other.source}#{review_id}", "read_reviews", "duplicate_review", detail)
            )
        yield kept
        yield from tally.emit()


class ReadReviews(beam.PTransform):
    """Review files into `reviews` (one per id, `OneReviewPerIdFn`), merged `submissions` (one per id: the
    records of one submission at one venue), `dead` and `tally`."""

    def __init__(
        self, patterns: list[str], fields: ReviewFields = ALL_FREE_TEXT, read: ReadConfig | None = None
    ) -> None:
        super().__init__()
        self.patterns = patterns
        self.fields = fields
        self.read = read or ReadConfig()

    def expand(self, pbegin):
        parse = ParseReviewFileFn(self.fields, self.read.max_document_bytes)
        parsed = pbegin | "ParseReviews" >> ParseFiles(
            self.patterns, "reviews", self.read, parse, "reviews", ["submissions"]
        )
        reviews = (
            parsed["reviews"]
            | "ReviewsById" >> beam.Map(lambda r: (r.review_id, r))
            | "GroupReviewIds" >> beam.GroupByKey()
            | "OneReviewPerId" >> beam.ParDo(OneReviewPerIdFn()).with_outputs(DEAD, TALLY, main="reviews")
        )
        submissions = (
            parsed["submissions"]
            | "SubmissionsById" >> beam.Map(lambda s: (s.submission_id, s))
            | "GroupSubmissions" >> beam.GroupByKey()
            | "MergeSubmissions" >> beam.MapTuple(lambda _, ss: merge_submissions(list(ss)))
        )
        count = submissions | "CountSubmissions" >> beam.Map(lambda _: ("submissions", 1))
        tally = (parsed[TALLY], reviews[TALLY], count) | "ReadTallies" >> beam.Flatten()
        dead = (parsed[DEAD], reviews[DEAD]) | "ReadDeadLetters" >> beam.Flatten()
        return {"reviews": reviews.reviews, "submissions": submissions, DEAD: dead, TALLY: tally}


# ------------------------------------------------------------------------------- submission bibliographies


def _document_keys(document: ParsedDocument) -> list[tuple[str, Bibliography]]:
    bibliography = bibliography_of_document(document)
    return [(key, bibliography) for key in document_keys(document, file_of(document.source))]


def _keyed_submissions(submission: Submission) -> list[tuple[str, str]]:
    """A submission's join keys (`submission_keys`), and its id as its source names it (`local_id`), which a
    paper's file stem or a database id may be."""
    keys = [*submission_keys(submission), f"id:{local_id(submission.submission_id)}"]
    return [(key, submission.submission_id) for key in dict.fromkeys(keys)]


def _pair_up(element) -> list[tuple[str, object]]:
    _, grouped = element
    return [(s, value) for s in dict.fromkeys(grouped["submissions"]) for value in grouped["values"]]


def _pair_by_key(element) -> Iterator:
    """`_pair_up` for a join by id or title, except that an `id:` key that several submissions share (one id at
    two venues, "304") pairs none: whose paper or record it is cannot be told (counted as
    `bibliography_ambiguous_id`)."""
    key, grouped = element
    submissions = list(dict.fromkeys(grouped["submissions"]))
    if len(submissions) > 1 and key.startswith("id:"):
        if next(iter(grouped["values"]), None) is not None:
            yield TaggedOutput(TALLY, ("bibliography_ambiguous_id", 1))
        return
    yield from _pair_up(element)


class SubmissionBibliographies(beam.PTransform):
    """(submission_id, Bibliography) for each submission whose references are known: from its own paper given
    as TEI, S2ORC or a PDF (through GROBID), or from its record in the paper database when that lists its
    references (`extractors.reviews.bibliographies`); the fullest when several are (`fullest`)."""

    def __init__(
        self,
        tei: list[str],
        s2orc: list[str],
        read: ReadConfig | None = None,
        pdfs: list[str] | None = None,
        grobid: GrobidConfig | None = None,
    ) -> None:
        super().__init__()
        self.tei, self.s2orc, self.pdfs = tei, s2orc, pdfs or []
        self.read = read
        self.grobid = grobid

    def expand(self, inputs):
        submissions, papers = inputs["submissions"], inputs["papers"]
        pbegin = submissions.pipeline
        parsed = pbegin | "ParseSubmissionPapers" >> ParseDocuments(self.tei, self.s2orc, self.read)
        documents, dead, tallies = parsed["documents"], [parsed[DEAD]], [parsed[TALLY]]
        if self.pdfs:
            if self.grobid is None:
                raise ValueError("submission PDFs need a GrobidConfig")
            pdfs = pbegin | "ParseSubmissionPdfs" >> ParsePdfs(self.pdfs, self.grobid, self.read)
            documents = (documents, pdfs["documents"]) | "WithPdfDocuments" >> beam.Flatten()
            dead.append(pdfs[DEAD])
            tallies.append(pdfs[TALLY])
        keyed = submissions | "SubmissionKeys" >> beam.FlatMap(_keyed_submissions)
        own = (
            {"values": documents | "DocumentKeys" >> beam.FlatMap(_document_keys), "submissions": keyed}
            | "JoinPapersToSubmissions" >> beam.CoGroupByKey()
            | "PairUp" >> beam.FlatMap(_pair_by_key).with_outputs(TALLY, main="pairs")
        )
        from_database = {"submissions": keyed, "papers": papers} | "FromDatabase" >> DatabaseBibliographies()
        tallies += [own[TALLY], from_database[TALLY]]
        joined = (
            (own.pairs, from_database["bibliographies"])
            | "AllBibliographies" >> beam.Flatten()
            | "GroupBibliographies" >> beam.GroupByKey()
            | "Fullest" >> beam.MapTuple(lambda s, bs: (s, fullest(bs)))
        )
        count = joined | "CountBibliographies" >> beam.FlatMap(
            lambda kv: [("submissions_with_bibliography", 1), (f"submissions_with_bibliography:{kv[1].source}", 1)]
        )
        tally = (*tallies, count) | "BibliographyTallies" >> beam.Flatten()
        return {"bibliographies": joined, DEAD: tuple(dead) | "BibliographyDead" >> beam.Flatten(), TALLY: tally}


class DatabaseBibliographies(beam.PTransform):
    """`{"submissions": (key, submission id), "papers": Paper}` to (submission id, Bibliography) for each
    submission whose database record lists what it cites: the record found by id or title (`paper_keys`), its
    cited S2 ids looked up in the same database, their titles and identifiers the bibliography. Returns
    `{"bibliographies", "tally"}`."""

    def expand(self, inputs):
        papers = inputs["papers"]
        paired = (
            {
                "submissions": inputs["submissions"],
                "values": papers | "RecordKeys" >> beam.FlatMap(lambda p: [(k, p) for k in paper_keys(p)]),
            }
            | "JoinRecordsToSubmissions" >> beam.CoGroupByKey()
            | "SubmissionRecords" >> beam.FlatMap(_pair_by_key).with_outputs(TALLY, main="pairs")
        )
        records = paired.pairs | "OneRecordPerSubmission" >> beam.combiners.Top.PerKey(
            1, key=lambda p: (len(p.outbound_s2_ids), p.paper_id)
        )
        cites = records | "CitedS2Ids" >> beam.FlatMap(
            lambda kv: [(s2_id, kv[0]) for s2_id in dict.fromkeys(kv[1][0].outbound_s2_ids)]
        )
        cited = (
            {
                "submissions": cites,
                "values": papers
                | "PapersByS2Id" >> beam.FlatMap(lambda p: [(p.s2_paper_id, p)] if p.s2_paper_id else []),
            }
            | "JoinCitedPapers" >> beam.CoGroupByKey()
            | "CitedBySubmission" >> beam.FlatMap(_pair_up)
            | "GroupCited" >> beam.GroupByKey()
            | "CitedBibliography" >> beam.MapTuple(lambda s, ps: (s, bibliography_of_papers(ps)))
        )
        return {"bibliographies": cited, TALLY: paired[TALLY]}


# ------------------------------------------------------------------------------------------ mine mentions


class MineMentionsFn(ConfiguredFn):
    """A submission's reviews into classified mentions, and a `ReviewSummary` per review on `reviews`."""

    config: MentionConfig

    def __init__(self, config: MentionConfig) -> None:
        super().__init__(config)
        self.progress = Progress("mining mentions", "reviews")

    def process(self, element, matcher: InMemoryMatcher | None = None) -> Iterator:
        submission_id, grouped = element
        tally = self.tallies(NAMESPACE)
        spotter = self._spotter(matcher)
        bibliographies = list(grouped["bibliographies"])
        bibliography = fullest(bibliographies) if bibliographies else Bibliography()
        bibliography = with_own_text(bibliography, next(iter(grouped.get("submissions", ())), None))
        reviews = sorted(grouped["reviews"], key=lambda r: r.review_id)
        if reviews:
            tally("submissions_reviewed")
            tally("submissions_cited_known" if bibliography.known else "submissions_cited_undecided")
        for review in reviews:
            found = extract_review_mentions(review.text, review.sections, bibliography, self.config, tally, spotter)
            if not bibliography.known:
                tally("recommended_cited_undecided", sum(m.kind == RECOMMENDED for m in found))
            records = [
                MentionRecord(
                    mention_key(review.review_id, m), review.review_id, submission_id, m, review_year=review.year
                )
                for m in found
            ]
            tally("mentions", len(records))
            for m in found:
                tally(f"reason:{m.kind}:{m.reason}")
            if records:
                tally("reviews_with_mentions")
            summary = summarize_review(review, records)
            if summary.recommends:
                tally("reviews_recommending")
            self.progress.add(mentions=len(records), recommended=summary.num_recommended)
            yield TaggedOutput("reviews", summary)
            yield from records
        yield from tally.emit()

    def _spotter(self, matcher: InMemoryMatcher | None) -> DatabaseTitleSpotter | None:
        """One spotter per database side input (built once per worker)."""
        if matcher is None:
            return None
        if getattr(self, "_spotter_of", (None, None))[0] is not matcher:
            self._spotter_of = (matcher, DatabaseTitleSpotter(matcher))
        return self._spotter_of[1]


class MineMentions(ConfiguredTransform):
    """`reviews` (with their submission's `bibliographies` and, when given, `submissions`: their own title and
    abstract, `with_own_text`) into `mentions` (`MentionRecord`), `reviews`
    (`ReviewSummary`) and `tally`. With `spot_titles` (a `MatchConfig`) and `papers`, the database's titles are
    also spotted in the reviews' text (`extractors.reviews.mentions.spotting`; the database in one
    `InMemoryMatcher` side input)."""

    config: MentionConfig

    def __init__(self, config: MentionConfig, spot_titles: MatchConfig | None = None) -> None:
        super().__init__(config)
        self.spot_titles = spot_titles

    def expand(self, inputs):
        side = {}
        if self.spot_titles is not None:
            side["matcher"] = in_memory_matcher(inputs["papers"], self.spot_titles)
        mined = (
            {
                "reviews": inputs["reviews"] | "ReviewsBySubmission" >> beam.Map(lambda r: (r.submission_id, r)),
                "bibliographies": inputs["bibliographies"],
                **(
                    {"submissions": inputs["submissions"] | "OwnText" >> beam.Map(lambda s: (s.submission_id, s))}
                    if "submissions" in inputs
                    else {}
                ),
            }
            | "JoinBibliographies" >> beam.CoGroupByKey()
            | "Mine" >> beam.ParDo(MineMentionsFn(self.config), **side).with_outputs("reviews", TALLY, main="mentions")
        )
        return {"mentions": mined.mentions, "reviews": mined.reviews, TALLY: mined[TALLY]}


# ---------------------------------------------------------------------------- reviewers' reference strings


def _references_of_review(element) -> ParsedDocument:
    """A review's reference entries as the bib entries of a document of its own (no title: GROBID reads them)."""
    review_id, records = element
    entries = tuple(
        BibEntry(bib_id=r.mention_id, raw=r.mention.text)
        for r in sorted(records, key=lambda r: r.mention_id)
        if r.mention.source == REFERENCE_ENTRY
    )
    return ParsedDocument(review_id, f"review:{review_id}", "review", None, None, (), (), entries)


class _WithReadingFn(beam.DoFn):
    """A mention with GROBID's reading of its reference string: GROBID's title (when usable) and identifiers
    (where the mention has none) replace the rules' cut; a mention GROBID did not read stays as it was."""

    def __init__(self, match: MatchConfig) -> None:
        self.match = match

    def process(self, element) -> Iterator:
        _, grouped = element
        readings = [r for r in grouped["readings"] if usable_title(r.title, self.match) or r.doi or r.arxiv_id]
        for record in grouped["mentions"]:
            if not readings:
                yield record
                continue
            reading, m = readings[0], record.mention
            title = reading.title if usable_title(reading.title, self.match) else m.title
            mention = replace(
                m,
                title=title,
                doi=m.doi or reading.doi,
                arxiv_id=m.arxiv_id or reading.arxiv_id,
                year=m.year or reading.year,
            )
            yield TaggedOutput(TALLY, ("reviewer_references_read_by_grobid", 1))
            yield replace(record, mention=mention)


class ReadReviewerReferences(beam.PTransform):
    """Reviewers' reference entries through GROBID's processCitationList, as a bibliography's raw strings go
    (`pipelines.grobid.ParseRawReferences`, cached alike): each review's entries become the bib entries of a
    document of its own, GROBID's reading of each string gives the mention its title and identifiers. Mentions
    in, the same mentions out (`mentions`), plus `dead` (a string GROBID failed on) and `tally`."""

    def __init__(self, grobid: GrobidConfig, match: MatchConfig) -> None:
        super().__init__()
        self.grobid, self.match = grobid, match

    def expand(self, mentions):
        documents = (
            mentions
            | "ReferenceEntries" >> beam.Filter(lambda r: r.mention.source == REFERENCE_ENTRY)
            | "EntriesByReview" >> beam.Map(lambda r: (r.review_id, r))
            | "GroupEntries" >> beam.GroupByKey()
            | "ReviewDocuments" >> beam.Map(_references_of_review)
        )
        parsed = documents | "ParseRawReferences" >> ParseRawReferences(self.grobid, self.match)
        readings = parsed["documents"] | "Readings" >> beam.FlatMap(lambda d: [(e.bib_id, e) for e in d.bib_entries])
        merged = (
            {"mentions": mentions | "MentionsById" >> beam.Map(lambda r: (r.mention_id, r)), "readings": readings}
            | "JoinReadings" >> beam.CoGroupByKey()
            | "WithReadings" >> beam.ParDo(_WithReadingFn(self.match)).with_outputs(TALLY, main="mentions")
        )
        tally = (parsed[TALLY], merged[TALLY]) | "ReferenceTallies" >> beam.Flatten()
        return {"mentions": merged.mentions, DEAD: parsed[DEAD], TALLY: tally}


# ------------------------------------------------------------------------------------------ resolve them


def mention_entry(record: MentionRecord) -> BibEntry:
    """A mention as the bib entry the matchers resolve (its id the mention's). A reviewer's reference entry keeps
    its string as the entry's raw string: without a usable title it resolves as a bibliography's raw reference
    does (`mapping.raw_strings`), with no cutting of a title out of it."""
    m = record.mention
    raw = m.text if m.source == REFERENCE_ENTRY else None
    return BibEntry(bib_id=record.mention_id, title=m.title, year=m.year, doi=m.doi, arxiv_id=m.arxiv_id, raw=raw)


def resolvable(record: MentionRecord) -> bool:
    """Whether a mention has a title, an identifier or a reference string to resolve."""
    m = record.mention
    return bool(m.title or m.arxiv_id or m.doi or m.source == REFERENCE_ENTRY)


def mention_ref(record: MentionRecord) -> str:
    """A mention's key in the join matcher: only recommended mentions are counted, as in the in-memory path."""
    return record.mention_id if record.mention.kind == RECOMMENDED else UNCOUNTED + record.mention_id


class _FinishMentionFn(TallyingFn):
    """What follows a mention's resolution whichever matcher made it: the paper it resolved to, then, for a
    recommended one the database lacks, the online resolvers when they are enabled, and the counts."""

    def __init__(self, resolver: ResolverConfig) -> None:
        self.resolver_config = resolver
        self.resolver: OnlineResolver | None = None
        self.progress = Progress("resolving mentions", "mentions")

    def setup(self) -> None:
        if self.resolver_config.names:
            self.resolver = OnlineResolver(self.resolver_config)

    def finish(self, record: MentionRecord, resolution: Resolution | None, tally: Tallies) -> Iterator:
        m = record.mention
        recommended = m.kind == RECOMMENDED
        if resolution is not None and resolution.paper_id is not None:
            record = replace(
                record, paper_id=resolution.paper_id, resolved_by=resolution.method, resolution_score=resolution.score
            )
        if recommended and record.paper_id is None and self.resolver is not None:
            paper = self.resolver.resolve(m.title)
            if paper is not None:
                tally(f"resolved_by:online:{paper.source}")
                record = replace(record, paper_id=paper.paper_id, resolved_by=paper.source, resolution_score=None)
                yield TaggedOutput("online_papers", paper)
        if recommended:
            tally("recommended_resolved" if record.paper_id else "recommended_unresolved")
            if record.paper_id is None and not resolvable(record) and m.source != NAME_SOURCE:
                tally("unresolved:no_title_or_identifier")  # a name's outcome is counted by `ResolveNames`
        self.progress.add(recommended=int(recommended), resolved=int(recommended and bool(record.paper_id)))
        yield record
        yield from tally.emit()


class ResolveMentionsFn(_FinishMentionFn):
    """Each mention with a title or identifier to a database paper through the in-memory matcher (a side input):
    identifiers first, then the title; then `finish`."""

    def process(self, record: MentionRecord, matcher: InMemoryMatcher) -> Iterator:
        tally = self.tallies(NAMESPACE)
        resolution = None
        if resolvable(record):
            recommended = record.mention.kind == RECOMMENDED
            resolution = matcher.resolve(mention_entry(record), tally if recommended else no_count)
        yield from self.finish(record, resolution, tally)


class _ApplyResolutionFn(_FinishMentionFn):
    """A mention with the join matcher's resolution of it (none for a mention with nothing to resolve); `finish`."""

    def process(self, element) -> Iterator:
        _, grouped = element
        resolution = next(iter(grouped["resolutions"]), None)
        for record in grouped["mentions"]:
            yield from self.finish(record, resolution, self.tallies(NAMESPACE))


def _looked_up(record: MentionRecord) -> bool:
    m = record.mention
    return m.source == NAME_SOURCE and m.kind == RECOMMENDED and record.paper_id is None


def name_keys_of(record: MentionRecord) -> list[str]:
    """The keys a recommended, unresolved `name` mention is looked up by (`mapping.names`); none for the rest."""
    return mention_name_keys(record.mention.text) if _looked_up(record) else []


def _heads_among(paper, wanted: dict[str, None]) -> Iterator:
    """(name key, (paper id, year)) for a database paper whose title's head is one of the `wanted` keys."""
    key = title_name_key(paper.title)
    if key is not None and key in wanted:
        yield key, (paper.paper_id, paper.year)


class _ApplyNamesFn(TallyingFn):
    """Each mention, a recommended name resolved to the paper chosen (`mapping.names.choose_named`, none dated after
    the review) for its first key that has one (`named`: the (paper id, year) pairs per key, a side input), and
    every looked-up name's outcome counted."""

    def process(self, record: MentionRecord, named: dict[str, list[tuple[str, int | None]]]) -> Iterator:
        if _looked_up(record):
            tally = self.tallies(NAMESPACE)
            keys = mention_name_keys(record.mention.text)
            chosen = (choose_named(named[k], record.review_year) for k in keys if k in named)
            paper_id = next((p for p in chosen if p is not None), None)
            if not keys:
                tally("unresolved:name_too_short")  # "SD": no key can tell its paper
            elif paper_id is not None:
                tally("resolved_by:name")
                record = replace(record, paper_id=paper_id, resolved_by="name", resolution_score=None)
            elif any(choose_named(named[k]) for k in keys if k in named):  # its papers all dated too late
                tally("unresolved:name_after_review")
            elif any(k in named for k in keys):  # several papers of one age bear the name
                tally("unresolved:name_ambiguous")
            else:
                tally("unresolved:name_not_in_database")
            yield from tally.emit()
        yield record


class ResolveNames(beam.PTransform):
    """`{"mentions", "papers"}` to `mentions` (and `tally`) with each recommended work named by name ("compare
    with LoRA") resolved to the database paper whose title's head is that name ("LoRA: Low-Rank Adaptation of
    ..."; `mapping.names`). The names' keys reach the database as a side input (a run's names are few), the
    papers per key reach the mentions as another, where each mention chooses among those not dated after its
    review; no worker holds the database."""

    def expand(self, inputs):
        keys = (
            inputs["mentions"]
            | "NameKeys" >> beam.FlatMap(name_keys_of)
            | "DistinctNameKeys" >> beam.Distinct()
            | "AsKeys" >> beam.Map(lambda key: (key, None))
        )
        named = (
            inputs["papers"]
            | "TitleHeads" >> beam.FlatMap(_heads_among, wanted=beam.pvalue.AsDict(keys))
            | "PapersByName" >> beam.GroupByKey()
            | "PapersOfName" >> beam.MapTuple(lambda key, papers: (key, sorted(set(papers), key=repr)))
        )
        resolved = inputs["mentions"] | "ApplyNames" >> beam.ParDo(
            _ApplyNamesFn(), named=beam.pvalue.AsDict(named)
        ).with_outputs(TALLY, main="mentions")
        return {"mentions": resolved.mentions, TALLY: resolved[TALLY]}


class ResolveMentions(beam.PTransform):
    """`{"mentions", "papers"}` to resolved `mentions`, `online_papers` and `tally`. `matcher` "memory": the
    database in one `InMemoryMatcher` side input; "join": `pipelines.matching.MatchReferences`, Beam joins in which
    no worker holds the database (the same resolutions and counts)."""

    def __init__(self, match: MatchConfig, resolver: ResolverConfig, matcher: str = "memory") -> None:
        super().__init__()
        if matcher not in ("memory", "join"):
            raise ValueError(f"matcher must be 'memory' or 'join', not {matcher!r}")
        self.match, self.resolver, self.matcher = match, resolver, matcher

    def expand(self, inputs):
        outputs = ("online_papers", TALLY)
        if self.matcher == "memory":
            matcher = in_memory_matcher(inputs["papers"], self.match)
            resolved = inputs["mentions"] | "Resolve" >> beam.ParDo(
                ResolveMentionsFn(self.resolver), matcher=matcher
            ).with_outputs(*outputs, main="mentions")
            return {"mentions": resolved.mentions, "online_papers": resolved.online_papers, TALLY: resolved[TALLY]}
        refs = (
            inputs["mentions"]
            | "Resolvable" >> beam.Filter(resolvable)
            | "MentionEntries" >> beam.Map(lambda record: (mention_ref(record), mention_entry(record)))
        )
        matched = {PAPERS: inputs["papers"], REFS: refs} | "Match" >> MatchReferences(self.match)
        resolved = (
            {
                "mentions": inputs["mentions"]
                | "MentionsByRef" >> beam.Map(lambda record: (mention_ref(record), record)),
                "resolutions": matched["resolutions"],
            }
            | "JoinResolutions" >> beam.CoGroupByKey()
            | "Apply" >> beam.ParDo(_ApplyResolutionFn(self.resolver)).with_outputs(*outputs, main="mentions")
        )
        tally = (matched[TALLY], resolved[TALLY]) | "ResolveTallies" >> beam.Flatten()
        return {"mentions": resolved.mentions, "online_papers": resolved.online_papers, TALLY: tally}


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


# ---------------------------------------------------------------------------------------------- writing


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
):
    """Wire the stages; returns the final PCollection (the output directory, once written). `grobid` reads the
    submissions' PDFs (`inputs["pdfs"]`) and, with `grobid_citations`, the reviewers' reference strings. With
    `spot_titles`, the database's titles are spotted in the reviews (`MineMentions`; the database in memory)."""
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
    names = {"mentions": found, "papers": database["papers"]} | "ResolveNames" >> ResolveNames()
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


# ---------------------------------------------------------------------------------------------------- run


def example_inputs() -> Inputs:
    """The bundled example, used when no --reviews is given."""
    if not EXAMPLE.is_dir():
        raise SystemExit(f"error: no --reviews given and the example is not at {EXAMPLE}")
    return {
        "reviews": [str(EXAMPLE / "reviews" / "*")],
        "tei": [],
        "s2orc": [str(EXAMPLE / "papers" / "*.json")],
        "metadata": [str(EXAMPLE / "metadata" / "*.jsonl")],
    }


def input_flags(corpus: CorpusOptions, options: CitationrOptions) -> Inputs:
    pdfs = options.view_as(ArsytaOptions).pdfs
    return {
        "reviews": options.reviews,
        "tei": corpus.tei,
        "s2orc": corpus.s2orc,
        "pdfs": pdfs,
        "metadata": corpus.metadata,
    }


def _names(flag: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in flag.split(",") if n.strip())


def configure(request: RunRequest) -> Plan:
    """The run's dataset, matching, resolver, review-field and GROBID settings, checked before any work (GROBID is
    asked for its version, and the run stops in one line when it does not answer)."""
    options = request.options.view_as(CitationrOptions)
    resolver = ResolverConfig(
        names=tuple(n.strip() for n in options.online_resolvers.split(",") if n.strip()),
        cache_dir=options.resolver_cache,
        min_interval_s=options.resolver_interval,
        timeout_s=options.resolver_timeout,
    )
    unknown = set(resolver.names) - {"dblp", "s2"}
    if unknown:
        fail(f"unknown --online_resolvers {sorted(unknown)}; choose from dblp, s2")
    corpus = request.corpus
    title_matcher, why = choose_title_matcher(
        request.inputs, corpus.title_matcher, corpus.memory_matcher_max_papers, documents_from=()
    )
    print(f"mention resolution: {title_matcher} ({why})", file=sys.stderr)
    grobid_flags = request.options.view_as(ArsytaOptions)
    explicit = request.options.get_all_options(drop_default=True)
    grobid_citations = bool(grobid_flags.grobid_citations or "grobid_url" in explicit)
    grobid = grobid_config(grobid_flags) if request.inputs.get("pdfs") or grobid_citations else None
    build = partial(
        build_pipeline,
        config=CitationrConfig(candidate_years=options.candidate_years),
        mentions=_mention_config(options.name_model),
        match=MatchConfig(min_similarity=request.corpus.title_min_similarity),
        resolver=resolver,
        fields=ReviewFields(only=_names(options.review_fields), skip=_names(options.skip_review_fields)),
        num_shards=request.corpus.num_shards,
        read_config=request.read,
        title_matcher=title_matcher,
        grobid=grobid,
        grobid_citations=grobid_citations,
        spot_titles=options.spot_database_titles,
    )
    return Plan(build, include_unresolved=options.export_unresolved)


def _mention_config(where: str) -> MentionConfig:
    """`--name_model`, checked before the run ("", "builtin" or a readable model file); a file's weights travel in
    the config, so remote workers need not see the path."""
    if not where:
        return MentionConfig()
    try:
        return MentionConfig(name_model=where, name_model_weights=model_weights(where))
    except ValueError as error:
        fail(f"--name_model: {error}")


CITATIONR = DatasetPipeline(
    name="citationr",
    description=__doc__,
    options=CitationrOptions,
    default_output="out/citationr",
    input_flags=input_flags,
    example_unless=("reviews",),
    example=example_inputs,
    example_note=f"no --reviews: using the bundled example in {EXAMPLE}",
    configure=configure,
    summarize=format_funnel,
    warnings=citationr_warnings,
)


run = CITATIONR.run
"""Parse flags, run the pipeline to completion, print the funnel, return stats.json's content."""
main = CITATIONR.main


if __name__ == "__main__":
    # Run the module imported under its own name: every DoFn and function the pipeline pickles is then
    # `pipelines.citationr.X`, which a worker imports, never `__main__.X`, which only this process has (its flags,
    # `CitationrOptions`, live in `pipelines.options` so that the two copies do not define them twice).
    from pipelines.citationr import main as imported_main

    imported_main()
