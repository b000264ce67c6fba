"""What each submission cites, so that a mention of a paper it already cites is told apart: from its own paper
(TEI, S2ORC, a PDF through GROBID) or its database record, joined to it by id or title; the fullest wins.
"""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.reviews.bibliographies import (
    bibliography_of_document,
    bibliography_of_papers,
    document_keys,
    fullest,
    paper_keys,
    submission_keys,
)
from extractors.reviews.forms import local_id
from extractors.reviews.mentions import Bibliography
from extractors.reviews.records import Submission
from mapping.records import ParsedDocument
from pipelines.grobid import GrobidConfig, ParsePdfs
from pipelines.inputs import ReadConfig, file_of
from pipelines.tallies import DEAD, TALLY
from pipelines.transforms import ParseDocuments


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
