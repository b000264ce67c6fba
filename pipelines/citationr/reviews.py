"""Reading reviews: review files (every format `extractors.reviews.forms` reads) into one review per id and one
merged submission per id; a file or review that cannot be read, and each duplicate review, is a dead letter.
"""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.documents.streams import TooLarge, read_errors
from extractors.reviews.forms import (
    ALL_FREE_TEXT,
    ReviewFields,
    is_review_letter,
    merge_submissions,
    parse_review_file,
    with_scoped_ids,
)
from extractors.reviews.records import Review, Submission
from mapping.records import DeadLetter
from pipelines.citationr.progress import NAMESPACE, Progress
from pipelines.inputs import MAX_DOCUMENT_BYTES, ParseFiles, ReadConfig, ReadTask, read_document_bytes, read_failure
from pipelines.tallies import DEAD, TALLY, TallyingFn


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
