"""The arsyta pipeline's stages as composite PTransforms. Logic lives in `extractors/` and `mapping/`.

Every DoFn reports what it counts twice: as a Beam counter (`Metrics.counter("arsyta", name)`, for the
runner's monitoring) and as a `(name, n)` element on its `tally` output, which the pipeline sums into
`stats.json`, so the funnel is data and does not depend on the runner's metrics support.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.metrics import Metrics
from apache_beam.pvalue import TaggedOutput

from extractors.contexts import ContextConfig, cut_contexts
from extractors.dataset import SplitConfig, date_and_split
from extractors.documents import (
    is_jsonl,
    numbered_lines,
    paper_from_document,
    parse_document,
    parse_document_file,
    parse_metadata_line,
)
from extractors.metadata import merge_papers
from extractors.records import DeadLetter, Paper, ParsedDocument, Resolution, ResolvedDocument
from mapping.matcher import InMemoryMatcher, MatchConfig
from mapping.taxonomy import taxonomy_fields, unmapped_categories

NAMESPACE = "arsyta"
TALLY = "tally"
DEAD = "dead"
LOG = logging.getLogger(__name__)


class Tallies:
    """Collects counts inside one DoFn call; `emit()` yields them as tagged outputs and Beam counters."""

    def __init__(self, namespace: str = NAMESPACE) -> None:
        self.namespace = namespace
        self.counts: Counter[str] = Counter()

    def __call__(self, name: str, n: int = 1) -> None:
        self.counts[name] += n

    def emit(self) -> Iterator[TaggedOutput]:
        for name, n in self.counts.items():
            Metrics.counter(self.namespace, name).inc(n)
            yield TaggedOutput(TALLY, (name, n))
        self.counts.clear()


def dead_letter_output(letter: DeadLetter, tally: Tallies, documents: bool) -> TaggedOutput:
    tally(f"dead:{letter.stage}:{letter.reason}")
    if documents:
        tally("documents_dead_lettered")
    return TaggedOutput(DEAD, letter)


class ParseDocumentFileFn(beam.DoFn):
    """A matched file into parsed documents (one per file, or one per JSONL line) and dead letters."""

    PROGRESS_EVERY = 1000

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._seen = 0

    def process(self, readable: fileio.ReadableFile) -> Iterator:
        tally = Tallies()
        path = readable.metadata.path
        if is_jsonl(path):
            with readable.open() as handle:
                for source, line in numbered_lines(handle, path):
                    yield from self._one(line, source, tally)
        else:
            for result in parse_document_file(readable.read(), path, self.kind):
                yield from self._count(result, tally)
        yield from tally.emit()

    def _one(self, data: bytes, source: str, tally: Tallies) -> Iterator:
        yield from self._count(parse_document(data, source, self.kind), tally)

    def _count(self, result: ParsedDocument | DeadLetter, tally: Tallies) -> Iterator:
        tally("documents_in")
        self._seen += 1
        if self._seen % self.PROGRESS_EVERY == 0:
            LOG.info("parsed %d %s documents on this worker (last: %s)", self._seen, self.kind, result.source)
        if isinstance(result, DeadLetter):
            yield dead_letter_output(result, tally, documents=True)
        else:
            yield result


class ParseMetadataFileFn(beam.DoFn):
    """A metadata JSONL file into papers and dead letters, streamed line by line."""

    def process(self, readable: fileio.ReadableFile) -> Iterator:
        tally = Tallies()
        with readable.open() as handle:
            for source, line in numbered_lines(handle, readable.metadata.path):
                tally("metadata_records_in")
                result = parse_metadata_line(line, source)
                if isinstance(result, DeadLetter):
                    tally("metadata_records_dead_lettered")
                    yield dead_letter_output(result, tally, documents=False)
                else:
                    yield result
        yield from tally.emit()


class MatchFiles(beam.PTransform):
    """Glob patterns into readable files, spread over workers by a Reshuffle."""

    def __init__(self, patterns: list[str]) -> None:
        super().__init__()
        self.patterns = patterns

    def expand(self, pbegin):
        return (
            pbegin
            | "Patterns" >> beam.Create(self.patterns)
            | "Match" >> fileio.MatchAll()
            | "Spread" >> beam.Reshuffle()
            | "Open" >> fileio.ReadMatches()
        )


class ParseDocuments(beam.PTransform):
    """TEI and S2ORC/unarXive files into `ParsedDocument`s; outputs `documents`, `dead`, `tally`."""

    def __init__(self, tei: list[str], s2orc: list[str]) -> None:
        super().__init__()
        self.inputs = [("Tei", "tei", tei), ("S2orc", "s2orc", s2orc)]

    def expand(self, pbegin):
        documents, dead, tally = [], [], []
        for label, kind, patterns in self.inputs:
            if not patterns:
                continue
            parsed = (
                pbegin
                | f"Match{label}" >> MatchFiles(patterns)
                | f"Parse{label}" >> beam.ParDo(ParseDocumentFileFn(kind)).with_outputs(TALLY, DEAD, main="docs")
            )
            documents.append(parsed.docs)
            dead.append(parsed[DEAD])
            tally.append(parsed[TALLY])
        return {
            "documents": _flatten(pbegin, documents, "Documents"),
            DEAD: _flatten(pbegin, dead, "DeadLetters"),
            TALLY: _flatten(pbegin, tally, "Tallies"),
        }


class ReadPaperDatabase(beam.PTransform):
    """Metadata JSONL files into `Paper`s; outputs `papers`, `dead`, `tally`."""

    def __init__(self, patterns: list[str]) -> None:
        super().__init__()
        self.patterns = patterns

    def expand(self, pbegin):
        if not self.patterns:
            return {
                "papers": _flatten(pbegin, [], "NoPapers"),
                DEAD: _flatten(pbegin, [], "NoDead"),
                TALLY: _flatten(pbegin, [], "NoTally"),
            }
        parsed = (
            pbegin
            | "MatchMetadata" >> MatchFiles(self.patterns)
            | "ParseMetadata" >> beam.ParDo(ParseMetadataFileFn()).with_outputs(TALLY, DEAD, main="papers")
        )
        return {"papers": parsed.papers, DEAD: parsed[DEAD], TALLY: parsed[TALLY]}


def _flatten(pbegin, pcolls: list, label: str):
    if not pcolls:
        return pbegin | f"Empty{label}" >> beam.Create([])
    if len(pcolls) == 1:
        return pcolls[0]
    return pcolls | f"Flatten{label}" >> beam.Flatten()


class _ChooseCanonicalIdFn(beam.DoFn):
    """Per identifier key: the documents holding it, and the database papers holding it."""

    def process(self, element) -> Iterator[tuple[str, tuple[int, str]]]:
        key, grouped = element
        canonical = sorted(set(grouped["papers"]))
        if not canonical:
            return
        rank = {"arxiv": 0, "doi": 1, "s2": 2}[key.split(":", 1)[0]]
        for source in grouped["documents"]:
            yield source, (rank, canonical[0])


class _RenameDocumentFn(beam.DoFn):
    def process(self, element) -> Iterator:
        _, grouped = element
        tally = Tallies()
        candidates = sorted(grouped["ids"])
        for document in grouped["documents"]:
            if candidates and candidates[0][1] != document.paper_id:
                tally("documents_renamed_to_database_id")
                document = document.with_id(candidates[0][1])
            yield document
        yield from tally.emit()


class CanonicalizeIds(beam.PTransform):
    """Give each document the id its database record has, found through any shared identifier.

    A 2020-layout S2ORC document knows only its S2ORC `paper_id`; the S2ORC metadata knows that the same
    paper has an arXiv id, which is the paper's id. Documents and papers are joined on every identifier
    key (`arxiv:`, `doi:`, `s2:`); the strongest key that finds a paper decides.
    """

    def expand(self, inputs):
        documents, papers = inputs["documents"], inputs["papers"]
        doc_keys = documents | "DocumentKeys" >> beam.FlatMap(lambda d: [(k, d.source) for k in d.identifier_keys()])
        paper_keys = papers | "PaperKeys" >> beam.FlatMap(lambda p: [(k, p.paper_id) for k in p.identifier_keys()])
        ids = (
            {"documents": doc_keys, "papers": paper_keys}
            | "JoinOnIdentifiers" >> beam.CoGroupByKey()
            | "ChooseCanonicalId" >> beam.ParDo(_ChooseCanonicalIdFn())
        )
        renamed = (
            {"documents": documents | "BySource" >> beam.Map(lambda d: (d.source, d)), "ids": ids}
            | "JoinIdsToDocuments" >> beam.CoGroupByKey()
            | "Rename" >> beam.ParDo(_RenameDocumentFn()).with_outputs(TALLY, main="documents")
        )
        return {"documents": renamed.documents, TALLY: renamed[TALLY]}


class _MergeByIdFn(beam.DoFn):
    """One paper id: merge its database records, keep one document (the rest are duplicates)."""

    def process(self, element) -> Iterator:
        paper_id, grouped = element
        tally = Tallies()
        documents: list[ParsedDocument] = sorted(grouped["documents"], key=lambda d: d.source)
        papers: list[Paper] = list(grouped["papers"])
        if len(papers) > 1:
            tally("metadata_records_merged", len(papers) - 1)
        records = papers + ([paper_from_document(documents[0])] if documents else [])
        merged = merge_papers(records)
        merged = replace(merged, **taxonomy_fields(merged.categories))
        yield TaggedOutput("database", merged)
        if documents:
            kept = documents[0]
            tally("documents_parsed")
            for duplicate in documents[1:]:
                yield dead_letter_output(
                    DeadLetter(
                        duplicate.source,
                        "deduplicate",
                        "duplicate_id",
                        f"paper id {paper_id} is also {kept.source}, which is kept",
                    ),
                    tally,
                    documents=True,
                )
            yield kept.with_metadata(merged)
        yield from tally.emit()


class MergeDatabase(beam.PTransform):
    """Join documents with the metadata by paper id: the database (metadata plus what documents say of
    themselves, metadata first), the documents with their metadata, and duplicate documents as dead
    letters. Outputs `database`, `documents`, `dead`, `tally`."""

    def expand(self, inputs):
        merged = (
            {
                "documents": inputs["documents"] | "DocumentsById" >> beam.Map(lambda d: (d.paper_id, d)),
                "papers": inputs["papers"] | "PapersById" >> beam.Map(lambda p: (p.paper_id, p)),
            }
            | "JoinById" >> beam.CoGroupByKey()
            | "Merge" >> beam.ParDo(_MergeByIdFn()).with_outputs("database", TALLY, DEAD, main="documents")
        )
        return {"database": merged.database, "documents": merged.documents, DEAD: merged[DEAD], TALLY: merged[TALLY]}


class ResolveReferencesFn(beam.DoFn):
    """Each bib entry of a document to a database paper, through the matcher (a side input)."""

    def process(self, document: ParsedDocument, matcher: InMemoryMatcher) -> Iterator:
        tally = Tallies()
        resolutions = tuple(matcher.resolve_many(document.bib_entries, tally))
        count_resolutions(resolutions, tally)
        yield ResolvedDocument(document=document, resolutions=resolutions)
        yield from tally.emit()


def count_resolutions(resolutions: tuple[Resolution, ...], tally: Tallies) -> None:
    """One document's `bib_entries` and `bib_entries_resolved` (no key for a zero, as one call per entry
    would give)."""
    for name, n in (
        ("bib_entries", len(resolutions)),
        ("bib_entries_resolved", sum(r.paper_id is not None for r in resolutions)),
    ):
        if n:
            tally(name, n)


def build_matcher(papers: Iterable[Paper], config: MatchConfig) -> InMemoryMatcher:
    papers = list(papers)
    LOG.info("building the in-memory title index over %d database papers", len(papers))
    return InMemoryMatcher(papers, config)


class ResolveReferences(beam.PTransform):
    """Bib entries to database papers: identifiers first, then MinHash-LSH + LCS title matching, with the
    whole database in one `InMemoryMatcher` side input. `pipelines.matching.ResolveReferencesByJoin` does
    the same with joins, for databases too large for one worker."""

    def __init__(self, config: MatchConfig) -> None:
        super().__init__()
        self.config = config

    def expand(self, inputs):
        matcher = (
            inputs["database"]
            | "CollectDatabase" >> beam.combiners.ToList()
            | "BuildMatcher" >> beam.Map(build_matcher, self.config)
        )
        resolved = inputs["documents"] | "Resolve" >> beam.ParDo(
            ResolveReferencesFn(), matcher=beam.pvalue.AsSingleton(matcher)
        ).with_outputs(TALLY, main="documents")
        return {"documents": resolved.documents, TALLY: resolved[TALLY]}


class CutContextsFn(beam.DoFn):
    def __init__(self, config: ContextConfig) -> None:
        self.config = config

    def process(self, resolved: ResolvedDocument) -> Iterator:
        tally = Tallies()
        mapping = {r.bib_id: r.paper_id for r in resolved.resolutions}
        citing = taxonomy_fields(resolved.document.categories)
        for context in cut_contexts(resolved.document, mapping, self.config, tally):
            yield replace(
                context,
                citing_categories=citing["categories"],
                citing_primary_category=citing["primary_category"],
                citing_acm_classes=citing["acm_classes"],
            )
        yield from tally.emit()


class CutContexts(beam.PTransform):
    """Char-window and sentence contexts for every resolved citation; outputs `contexts`, `tally`."""

    def __init__(self, config: ContextConfig) -> None:
        super().__init__()
        self.config = config

    def expand(self, documents):
        cut = documents | "Cut" >> beam.ParDo(CutContextsFn(self.config)).with_outputs(TALLY, main="contexts")
        return {"contexts": cut.contexts, TALLY: cut[TALLY]}


class _DateAndSplitFn(beam.DoFn):
    def __init__(self, config: SplitConfig) -> None:
        self.config = config

    def process(self, element) -> Iterator:
        _, grouped = element
        tally = Tallies()
        papers = list(grouped["papers"])
        cited = papers[0] if papers else None
        for context in grouped["contexts"]:
            kept = date_and_split(context, cited, self.config, tally)
            if kept is not None:
                tally("contexts")
                tally(f"contexts:{kept.split}")
                yield kept
        yield from tally.emit()


class AssignSplits(beam.PTransform):
    """Join each context with its cited paper: drop citations of later papers, then split by date."""

    def __init__(self, config: SplitConfig) -> None:
        super().__init__()
        self.config = config

    def expand(self, inputs):
        split = (
            {
                "contexts": inputs["contexts"] | "ContextsByCited" >> beam.Map(lambda c: (c.cited_id, c)),
                "papers": inputs["database"] | "DatabaseById" >> beam.Map(lambda p: (p.paper_id, p)),
            }
            | "JoinCited" >> beam.CoGroupByKey()
            | "DateAndSplit" >> beam.ParDo(_DateAndSplitFn(self.config)).with_outputs(TALLY, main="contexts")
        )
        return {"contexts": split.contexts, TALLY: split[TALLY]}


class _PapersInUseFn(beam.DoFn):
    def process(self, element) -> Iterator:
        _, grouped = element
        roles = set(grouped["roles"])
        tally = Tallies()
        for paper in list(grouped["papers"])[:1]:
            if roles:
                tally("papers_written")
                tally("papers_with_acm_classes" if paper.acm_classes else "papers_without_acm_classes")
                unmapped = unmapped_categories(paper.categories)
                if unmapped:
                    tally("categories_unmapped", len(unmapped))
                if "citing" in roles:
                    yield TaggedOutput("citing", paper)
                yield paper
        yield from tally.emit()


class SelectPapers(beam.PTransform):
    """The database papers that some kept context cites or comes from."""

    def expand(self, inputs):
        roles = inputs["contexts"] | "Roles" >> beam.FlatMap(lambda c: [(c.citing_id, "citing"), (c.cited_id, "cited")])
        selected = (
            {"roles": roles, "papers": inputs["database"] | "ById" >> beam.Map(lambda p: (p.paper_id, p))}
            | "JoinRoles" >> beam.CoGroupByKey()
            | "Select" >> beam.ParDo(_PapersInUseFn()).with_outputs("citing", TALLY, main="papers")
        )
        return {"papers": selected.papers, TALLY: selected[TALLY]}
