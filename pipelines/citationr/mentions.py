"""Mining mentions: a submission's reviews into classified mentions (`extractors.reviews.mentions`) and a summary
per review; with GROBID, the reviewers' reference strings read by its processCitationList.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.reviews.bibliographies import fullest, with_own_text
from extractors.reviews.dataset import summarize_review
from extractors.reviews.mentions import RECOMMENDED, Bibliography, MentionConfig, extract_review_mentions, mention_key
from extractors.reviews.mentions.decision import MODEL, decision_status, load_decision
from extractors.reviews.mentions.spotting import DatabaseTitleSpotter
from extractors.reviews.records import MentionRecord
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig, usable_title
from mapping.records import BibEntry, ParsedDocument
from pipelines.citationr.progress import LOG, NAMESPACE, Progress
from pipelines.grobid import GrobidConfig, ParseRawReferences
from pipelines.tallies import DEAD, TALLY, ConfiguredFn, ConfiguredTransform
from pipelines.transforms import in_memory_matcher

REFERENCE_ENTRY = "reference_entry"  # a mention that is a reviewer's reference string (`PaperMention.source`)


# ------------------------------------------------------------------------------------------ mine mentions


class MineMentionsFn(ConfiguredFn):
    """A submission's reviews into classified mentions, and a `ReviewSummary` per review on `reviews`."""

    config: MentionConfig

    def __init__(self, config: MentionConfig) -> None:
        super().__init__(config)
        self.progress = Progress("mining mentions", "reviews")

    def setup(self) -> None:
        """With the learned decision asked for, its encoder and head loaded once per worker, or a warning that the
        rules decide here (stats.json's `decided_by` counts the reviews each decided)."""
        if self.config.decision != MODEL:
            return
        why = decision_status()
        if why:
            LOG.warning("the learned decision cannot run on this worker (%s): the rules decide", why)
        else:
            load_decision()

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
