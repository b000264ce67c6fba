"""`--acm_cr DIR`: the ACM-CR test collection read into the arsyta pipeline (`extractors.documents.acm_cr` parses).

Its BibTeX files become database papers and its citing papers' XML documents; both then go through the same stages
as any input (`CanonicalizeIds`, `MergeDatabase`, which merges the records one DOI has in several files,
`ResolveReferences`, `CutContexts`, ...). Files are planned and accounted for by `pipelines.inputs.ParseFiles`, so
each has its row in `inputs/`; every entry that is no record and every citation without a marker is a dead letter.
"""

from __future__ import annotations

from collections.abc import Iterator

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.pvalue import TaggedOutput

from extractors.documents.acm_cr import (
    BIB_FILES,
    BLACKLIST_FILE,
    CITING_PAPER_FILES,
    parse_bib,
    parse_blacklist,
    parse_citing_paper,
)
from extractors.documents.streams import TooLarge, read_errors
from mapping.records import DeadLetter, InputTally
from pipelines.inputs import ParseFiles, ReadConfig, ReadTask, read_document_bytes, read_failure
from pipelines.tallies import DEAD, INPUTS, TALLY, TallyingFn, dead_letter_output

BIB_KIND = "acm_cr_bib"
PAPER_KIND = "acm_cr_paper"


def acm_cr_patterns(root: str) -> list[str]:
    """What `--acm_cr DIR` reads: the BibTeX files, the citing papers' XML, the blacklist (each must match)."""
    return [FileSystems.join(root.rstrip("/"), part) for part in (BIB_FILES, CITING_PAPER_FILES, BLACKLIST_FILE)]


def read_blacklist(pattern: str) -> frozenset[str]:
    """The blacklist's DOIs, read when the job is built (a few dozen lines)."""
    with FileSystems.open(pattern) as handle:
        return parse_blacklist(handle.read().decode("utf-8"))


class _ReadFileFn(TallyingFn):
    """A file of the collection, read whole (capped, checked unchanged), into what `parse` gives it; the file's
    `inputs/` row. A file that cannot be read or decoded is one dead letter."""

    documents = False

    def __init__(self, config: ReadConfig) -> None:
        self.config = config

    def outcomes(self, data: bytes, path: str, tally) -> Iterator:
        raise NotImplementedError

    def process(self, task: ReadTask) -> Iterator:
        tally = self.tallies()
        account = InputTally(task.path, task.kind)
        if self.documents:
            tally("documents_in")
        try:
            data = read_document_bytes(task.path, self.config.max_document_bytes, task)
            outcomes = list(self.outcomes(data, task.path, tally))
        except TooLarge as err:
            outcomes = [self.unread(DeadLetter(task.path, "read", "too_large", str(err)), tally)]
        except UnicodeDecodeError as err:
            letter = DeadLetter(task.path, "read", "undecodable_bytes", f"not UTF-8 at byte {err.start}")
            outcomes = [self.unread(letter, tally)]
        except read_errors() as err:
            outcomes = [self.unread(read_failure(task.path, err), tally)]
        for outcome in outcomes:
            record = not isinstance(outcome, DeadLetter) or self.is_record(outcome, task.path)
            if record:
                account = self.count(outcome, account)
            if isinstance(outcome, DeadLetter):
                yield dead_letter_output(outcome, tally, documents=self.documents and record)
            else:
                yield outcome
        yield TaggedOutput(INPUTS, account)
        yield from tally.emit()

    def is_record(self, letter: DeadLetter, path: str) -> bool:
        """Whether a dead letter stands for a record of the file (the file, an entry), not for a part of one."""
        return True

    def unread(self, letter: DeadLetter, tally) -> DeadLetter:
        """The dead letter of a file that could not be read, counted as one record of its kind."""
        if not self.documents:
            tally("metadata_records_in")
            tally("metadata_records_dead_lettered")
        return letter

    def count(self, outcome, account: InputTally) -> InputTally:
        failed = isinstance(outcome, DeadLetter)
        return InputTally(
            account.path,
            account.kind,
            account.records_read + 1,
            account.parsed + (not failed),
            account.dead_lettered + failed,
            reason=account.reason or (outcome.reason if failed else None),
        )


class ReadBibFileFn(_ReadFileFn):
    """A BibTeX file into collection records (`Paper`) and the dead letters of the entries that are none."""

    def __init__(self, config: ReadConfig, blacklist: frozenset[str]) -> None:
        super().__init__(config)
        self.blacklist = blacklist

    def outcomes(self, data: bytes, path: str, tally) -> Iterator:
        for outcome in parse_bib(data.decode("utf-8"), path, self.blacklist, tally):
            tally("metadata_records_in")
            if isinstance(outcome, DeadLetter):
                tally("metadata_records_dead_lettered")
            yield outcome


class ReadCitingPaperFn(_ReadFileFn):
    """A citing paper's XML into its document, and the dead letters of the citations it cannot place."""

    documents = True

    def outcomes(self, data: bytes, path: str, tally) -> Iterator:
        yield from parse_citing_paper(data, path, tally)

    def is_record(self, letter: DeadLetter, path: str) -> bool:
        return letter.source == path  # the file itself; a citation's letter is `path#context/sentence`


class ReadAcmCr(beam.PTransform):
    """`acm_cr_patterns(root)` into `documents` (the citing papers), `papers` (the collection's records, one per
    entry: `MergeDatabase` merges a DOI's copies), `dead`, `tally`, `inputs`."""

    def __init__(self, patterns: list[str], config: ReadConfig | None = None) -> None:
        super().__init__()
        bib, papers, blacklist = patterns
        self.bib, self.papers, self.blacklist = bib, papers, blacklist
        self.config = config or ReadConfig()

    def expand(self, pbegin):
        blacklist = read_blacklist(self.blacklist)
        bib = pbegin | "ReadBib" >> ParseFiles(
            [self.bib], BIB_KIND, self.config, ReadBibFileFn(self.config, blacklist), "papers"
        )
        papers = pbegin | "ReadCitingPapers" >> ParseFiles(
            [self.papers], PAPER_KIND, self.config, ReadCitingPaperFn(self.config), "documents"
        )
        outputs = {
            "papers": bib["papers"],
            "documents": papers["documents"],
        }
        for name in (DEAD, TALLY, INPUTS):
            outputs[name] = (bib[name], papers[name]) | f"All{name.title()}" >> beam.Flatten()
        return outputs
