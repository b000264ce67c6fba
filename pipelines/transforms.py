"""The arsyta pipeline's stages as composite PTransforms. Logic lives in `extractors/` and `mapping/`.

Counting (`Tallies`, the `tally`/`dead`/`inputs` tags) lives in `pipelines.tallies`; reading input files in
`pipelines.inputs`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from operator import itemgetter

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.contexts import ContextConfig, cut_contexts
from extractors.dataset import (
    SplitConfig,
    cited_count_key,
    citing_category_key,
    context_plot_keys,
    date_and_split,
    pool_key,
)
from extractors.documents.files import file_stem, paper_from_document
from extractors.documents.metadata import merge_papers
from extractors.documents.s2ag import with_abstract
from extractors.recipes import PaperRule, Recipe, keep_context
from extractors.schemas import citation_row
from mapping.duplicates import Copy, merge_copies, title_key
from mapping.ids import identifier_keys, identifiers_in_file_stem, key_rank, normalize_arxiv_id
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig
from mapping.records import (
    Context,
    DeadLetter,
    InputTally,
    Paper,
    PaperAbstract,
    ParsedDocument,
    Resolution,
    ResolvedDocument,
)
from mapping.taxonomy import taxonomy_fields, unmapped_categories
from pipelines.coders import (
    HEADERS,
    PAPERS,
    TALLY_TYPE,
    SealedDocument,
    pack_contexts,
    seal,
    unpack_contexts,
    unseal,
)
from pipelines.graph import GraphStatistics
from pipelines.inputs import CHANGED, ParseFiles, ReadConfig, ReadRecords, ReadRecordsFn, file_of
from pipelines.joins import MAX_GROUP, BatchByKeyFn, FanOutJoin, batch_size_for
from pipelines.tallies import (
    DEAD,
    INPUTS,
    NAMESPACE,
    TALLY,
    CombineFigures,
    ConfiguredFn,
    ConfiguredTransform,
    CountPerElementFn,
    SumDictFn,
    SumPerBundleFn,
    Tallies,
    TallyingFn,
    dead_letter_output,
)

__all__ = ["DEAD", "INPUTS", "NAMESPACE", "TALLY", "Tallies", "dead_letter_output"]

LOG = logging.getLogger(__name__)


class ParseDocuments(beam.PTransform):
    """TEI and S2ORC/unarXive files into `ParsedDocument`s; outputs `documents`, `dead`, `tally`, `inputs`."""

    def __init__(self, tei: list[str], s2orc: list[str], config: ReadConfig | None = None) -> None:
        super().__init__()
        self.inputs = [("Tei", "tei", tei), ("S2orc", "s2orc", s2orc)]
        self.config = config or ReadConfig()

    def expand(self, pbegin):
        documents, dead, tally, inputs = [], [], [], []
        for label, kind, patterns in self.inputs:
            if not patterns:
                continue
            if all(map(names_whole_xml_files, patterns)):
                # Read whole, a file's records are parsed only once it is known unchanged: no `KeepUnchangedFn`
                # waits for every file to be read, so the documents go on to be sealed in the step that parsed
                # them instead of being pickled and unpickled whole in between (8% of a 1,000-paper run's CPU).
                read = pbegin | f"Read{label}" >> ParseFiles(
                    patterns, kind, self.config, ReadRecordsFn(kind, self.config), "records", tags=(CHANGED,)
                )
                documents.append(read["records"] | f"{label}Records" >> beam.Map(itemgetter(1)))
            else:
                read = pbegin | f"Read{label}" >> ReadRecords(patterns, kind, self.config)
                documents.append(read["records"])
            dead.append(read[DEAD])
            tally.append(read[TALLY])
            inputs.append(read[INPUTS])
        return {
            "documents": _flatten(pbegin, documents, "Documents"),
            DEAD: _flatten(pbegin, dead, "DeadLetters"),
            TALLY: _flatten(pbegin, tally, "Tallies"),
            INPUTS: _flatten(pbegin, inputs, "Inputs"),
        }


_XML_NAME = re.compile(r"\.xml(\.(gz|gzip|bz2|zst|xz|lzma))?$", re.IGNORECASE)


def names_whole_xml_files(pattern: str) -> bool:
    """Whether every file `pattern` matches is an XML file, which is read whole (`pipelines.inputs.line_oriented`
    reads JSON Lines names line by line): its name ends in `.xml`, compressed or not, so whatever it matches does."""
    return bool(_XML_NAME.search(pattern))


class ReadPaperDatabase(beam.PTransform):
    """Metadata JSONL files into `Paper`s; outputs `papers`, `dead`, `tally`, `inputs`."""

    def __init__(self, patterns: list[str], config: ReadConfig | None = None) -> None:
        super().__init__()
        self.patterns = patterns
        self.config = config or ReadConfig()

    def expand(self, pbegin):
        if not self.patterns:
            return {
                "papers": _flatten(pbegin, [], "NoPapers"),
                DEAD: _flatten(pbegin, [], "NoDead"),
                TALLY: _flatten(pbegin, [], "NoTally"),
                INPUTS: _flatten(pbegin, [], "NoInputs"),
            }
        read = pbegin | "ReadMetadata" >> ReadRecords(
            self.patterns, "metadata", self.config, tagged={PaperAbstract: "abstracts"}
        )
        papers = {"papers": read["records"], "abstracts": read["abstracts"]} | "JoinAbstracts" >> JoinAbstracts()
        tally = (read[TALLY], papers[TALLY]) | "DatabaseTallies" >> beam.Flatten()
        return {"papers": papers["papers"], DEAD: read[DEAD], TALLY: tally, INPUTS: read[INPUTS]}


class _AttachAbstractsFn(TallyingFn):
    def process(self, element) -> Iterator:
        _, grouped = element
        abstracts = list(grouped["abstracts"])
        tally = self.tallies()
        papers = list(grouped["papers"])
        for paper in papers:
            filled = with_abstract(paper, abstracts)
            if filled is not paper:
                tally("metadata_abstracts_joined")
            yield filled
        if abstracts and not papers:
            tally("metadata_abstracts_without_paper", len(abstracts))
        yield from tally.emit()


class JoinAbstracts(beam.PTransform):
    """S2AG `abstracts` records onto the `papers` records of the same corpus id. Papers without a corpus id
    (arXiv snapshot, S2ORC metadata) pass by the join untouched."""

    def expand(self, inputs):
        papers, abstracts = inputs["papers"], inputs["abstracts"]
        keyed = papers | "SplitByCorpusId" >> beam.Partition(lambda p, _: 0 if p.s2_corpus_id else 1, 2)
        joined = (
            {
                "papers": keyed[0] | "PapersByCorpusId" >> beam.Map(lambda p: (p.s2_corpus_id, p)),
                "abstracts": abstracts | "AbstractsByCorpusId" >> beam.Map(lambda a: (a.corpus_id, a)),
            }
            | "JoinOnCorpusId" >> beam.CoGroupByKey()
            | "AttachAbstracts" >> beam.ParDo(_AttachAbstractsFn()).with_outputs(TALLY, main="papers")
        )
        merged = (joined.papers, keyed[1]) | "AllPapers" >> beam.Flatten()
        return {"papers": merged, TALLY: joined[TALLY]}


def _flatten(pbegin, pcolls: list, label: str):
    if not pcolls:
        return pbegin | f"Empty{label}" >> beam.Create([])
    if len(pcolls) == 1:
        return pcolls[0]
    return pcolls | f"Flatten{label}" >> beam.Flatten()


def file_name_keys(stem: str) -> list[str]:
    """The keys of the identifier a file's stem is (`identifiers_in_file_stem`: arXiv id, DOI, ACL Anthology id)."""
    named = identifiers_in_file_stem(stem)
    return identifier_keys(arxiv_id=named.arxiv_id, doi=named.doi, s2_paper_id=None, other_ids=named.other_ids)


def stem_keys(document: ParsedDocument) -> list[str]:
    """The join keys a document's file name offers when the document knows nothing more of itself: the identifier
    its stem is (arXiv id, DOI, ACL Anthology id), else the stem as a Semantic Scholar paper id (S2ORC metadata names
    papers so: a TEI saved as `77490025.tei.xml` joins the record whose S2 id that is). None for a record of a JSON
    Lines file (a shard's name is not a paper's) or a document with identifiers of its own."""
    if file_of(document.source) != document.source:
        return []
    stem = file_stem(document.source)
    keys = file_name_keys(stem)
    if not set(document.identifier_keys()) <= set(keys):
        return []
    if not keys and document.s2_paper_id is None and stem:
        keys = [f"s2:{stem}"]
    return keys


def join_keys(document: ParsedDocument) -> list[str]:
    """Every key a document may find its database record by: its identifiers, then its file name's."""
    return list(dict.fromkeys([*document.identifier_keys(), *stem_keys(document)]))


def with_name_identifiers(document: ParsedDocument) -> ParsedDocument:
    """The document with the ACL Anthology id its file name is, when it has no other identifier (`P17-1055.tei.xml`):
    the id the paper is known by where the database and the references give one."""
    acl = [k for k in stem_keys(document) if k.startswith("acl:") and k not in document.other_ids]
    return replace(document, other_ids=(*document.other_ids, *acl)) if acl else document


class _ChooseCanonicalIdFn(beam.DoFn):
    """Per identifier key: the documents holding it, and the database papers holding it."""

    def process(self, element) -> Iterator[tuple[str, tuple[int, str]]]:
        key, grouped = element
        canonical = sorted(set(grouped["papers"]))
        if not canonical:
            return
        rank = key_rank(key)
        for source in grouped["documents"]:
            yield source, (rank, canonical[0])


class _RenameDocumentFn(TallyingFn):
    def process(self, element) -> Iterator:
        _, grouped = element
        tally = self.tallies()
        candidates = sorted(grouped["ids"])
        for encoded in grouped["documents"]:
            header = with_name_identifiers(HEADERS.decode(encoded))
            if candidates and candidates[0][1] != header.paper_id:
                tally("documents_renamed_to_database_id")
                header = header.with_id(candidates[0][1])
            yield header
        yield from tally.emit()


class CanonicalizeIds(beam.PTransform):
    """Give each document the id its database record has, found through any shared identifier.

    A 2020-layout S2ORC document knows only its S2ORC `paper_id`; the metadata knows its arXiv id, which is the
    paper's id. Documents and papers join on every identifier key; the strongest key that finds a paper decides.
    Documents are sealed here and split: `documents` are their renamed headers, `bodies` wait for `MergeDatabase`,
    so a document's bytes cross one join, not every join its header does.
    """

    def expand(self, inputs):
        documents, papers = inputs["documents"], inputs["papers"]
        doc_keys = documents | "DocumentKeys" >> beam.FlatMap(lambda d: [(k, d.source) for k in join_keys(d)])
        paper_keys = papers | "PaperKeys" >> beam.FlatMap(lambda p: [(k, p.paper_id) for k in p.identifier_keys()])
        ids = (
            {"documents": doc_keys, "papers": paper_keys}
            | "JoinOnIdentifiers" >> beam.CoGroupByKey()
            | "ChooseCanonicalId" >> beam.ParDo(_ChooseCanonicalIdFn())
        )
        split = documents | "Seal" >> beam.ParDo(_SealFn()).with_outputs(BODIES, main="headers")
        renamed = (
            {"documents": split.headers, "ids": ids}
            | "JoinIdsToDocuments" >> beam.CoGroupByKey()
            | "Rename"
            >> beam.ParDo(_RenameDocumentFn())
            .with_output_types(ParsedDocument, **{TALLY: TALLY_TYPE})
            .with_outputs(TALLY, main="documents")
        )
        copies = renamed.documents | "MergeCopiesByTitle" >> MergeCopiesByTitle()
        tally = (renamed[TALLY], copies[TALLY]) | "CanonicalTallies" >> beam.Flatten()
        return {"documents": copies["documents"], BODIES: split[BODIES], TALLY: tally}


class _TitleKeyFn(beam.DoFn):
    """A header keyed by its title key (`mapping.duplicates.title_key`), or on `untitled` when it has none."""

    def process(self, document: ParsedDocument) -> Iterator:
        key = title_key(document.title, document.authors, document.year)
        if key is None:
            yield TaggedOutput("untitled", document)
        else:
            yield key, HEADERS.encode(document)


class _MergeCopiesFn(TallyingFn):
    """The headers sharing a title key: those that are one paper take one paper id (`mapping.duplicates`)."""

    def process(self, element) -> Iterator:
        _, encoded = element
        documents = [HEADERS.decode(e) for e in encoded]
        tally = self.tallies()
        if len({d.paper_id for d in documents}) > 1:
            copies = [Copy(d.source, d.paper_id, tuple(d.identifier_keys())) for d in documents]
            renames, apart = merge_copies(copies)
            if renames:
                tally("documents_merged_by_title", len(renames))
            if apart:
                tally("documents_same_title_kept_apart", apart)
            documents = [d.with_id(renames[d.source]) if d.source in renames else d for d in documents]
        yield from documents
        yield from tally.emit()


class MergeCopiesByTitle(beam.PTransform):
    """Headers (after `CanonicalizeIds`' renaming) that are copies of one paper by title, first author and year, and
    whose identifiers agree, renamed to one paper id, so that `MergeDatabase` keeps one copy: the same PDF as TEI and
    as S2ORC JSON, a copy whose arXiv id is missing. Outputs `documents`, `tally`."""

    def expand(self, documents):
        keyed = documents | "TitleKeys" >> beam.ParDo(_TitleKeyFn()).with_output_types(
            tuple[str, bytes], untitled=ParsedDocument
        ).with_outputs("untitled", main="keyed")
        merged = (
            keyed.keyed
            | "GroupByTitle" >> beam.GroupByKey()
            | "MergeCopies"
            >> beam.ParDo(_MergeCopiesFn())
            .with_output_types(ParsedDocument, **{TALLY: TALLY_TYPE})
            .with_outputs(TALLY, main="documents")
        )
        everything = (merged.documents, keyed.untitled) | "AllHeaders" >> beam.Flatten()
        return {"documents": everything, TALLY: merged[TALLY]}


BODIES = "bodies"


class _SealFn(beam.DoFn):
    """A document sealed (`pipelines.coders.seal`) and split: `(source, HEADERS bytes of its header)` on the main
    output, `(source, sealed body)` on `bodies`."""

    def process(self, document: ParsedDocument) -> Iterator:
        sealed = seal(document)
        yield document.source, HEADERS.encode(sealed.header)
        yield TaggedOutput(BODIES, (document.source, sealed.body))


class _ReuniteFn(beam.DoFn):
    """A kept header (with its metadata) and its document's sealed body: the `SealedDocument`. A body whose header
    was not kept (a duplicate, a document with no title) is dropped: its dead letter was written by the merge."""

    def process(self, element) -> Iterator[SealedDocument]:
        _, grouped = element
        headers, bodies = grouped["headers"], grouped["bodies"]
        if headers and bodies:
            yield SealedDocument(HEADERS.decode(headers[0]), bodies[0])


def names_paper(source: str, paper_id: str) -> bool:
    """Whether a document's file name is its paper id (`2101.00001v2.tei.xml` for 2101.00001, `hep-th_0101001`
    for hep-th/0101001, `doi_10.1000_x` style stems for DOIs are not guessed)."""
    if file_of(source) != source:
        return False
    stem = file_stem(source)
    if stem == paper_id:
        return True
    candidate = stem.replace("_", "/", 1) if "/" in paper_id else stem
    return normalize_arxiv_id(candidate) == paper_id and candidate.startswith(paper_id)


def keep_order(document: ParsedDocument, paper_id: str) -> tuple:
    """Which copy of a paper is kept: the file named for the paper, then a whole file before a line of a
    JSONL file, then the shorter path, then the path in order. Deterministic whatever the input order."""
    return (
        not names_paper(document.source, paper_id),
        file_of(document.source) != document.source,
        len(document.source),
        document.source,
    )


def named_only_by_file(document: ParsedDocument) -> bool:
    """Whether every identifier a document has came from its file name, or it has none (a TEI whose header lost
    title and ids): such a document needs its database record, or it has nothing a paper is known by. A document
    with ids of its own but no title (an S2ORC 2020 record, whose title lives in the metadata) goes on."""
    return set(document.identifier_keys()) <= set(file_name_keys(file_stem(document.source)))


def merge_paper_group(
    paper_id: str, documents: Iterable[ParsedDocument], papers: list[Paper]
) -> tuple[list[ParsedDocument], Paper | None, bool]:
    """One paper id's documents and database records: `(documents, merged, titled)`. The documents in the order
    they are kept (the first is kept, the others are its duplicates; a copy with a title first when no record has
    one); the database record merged from the records and the kept document (None when there is neither); and
    whether the kept document is titled, that is not `named_only_by_file` or given a title (else it is `no_title`)."""
    documents = sorted(documents, key=lambda d: keep_order(d, paper_id))
    if documents and not any(p.title for p in papers):
        documents.sort(key=lambda d: not d.title)
    titled = bool(documents) and (
        bool(documents[0].title) or any(p.title for p in papers) or not named_only_by_file(documents[0])
    )
    records = papers + ([paper_from_document(documents[0])] if titled else [])
    if not records:
        return documents, None, titled
    merged = merge_papers(records)
    return documents, replace(merged, **taxonomy_fields(merged.categories)), titled


class _MergeByIdFn(TallyingFn):
    """One paper id: merge its database records, keep one document (the rest are duplicates). A document known
    only by the id in its file name (a TEI whose header lost its title and ids) that finds no titled database
    record is dead-lettered `no_title`; its duplicates stay duplicates of it."""

    def process(self, element) -> Iterator:
        paper_id, grouped = element
        tally = self.tallies()
        papers: list[Paper] = list(map(PAPERS.decode, grouped["papers"]))
        # headers: the merge never reads paragraphs or bib entries
        documents, merged, titled = merge_paper_group(paper_id, map(HEADERS.decode, grouped["documents"]), papers)
        if len(papers) > 1:
            tally("metadata_records_merged", len(papers) - 1)
        if merged is not None:
            yield TaggedOutput("database", merged)
        if documents:
            kept = documents[0]
            if titled:
                tally("documents_parsed")
            else:
                yield dead_letter_output(
                    DeadLetter(
                        kept.source,
                        "merge",
                        "no_title",
                        f"paper id {paper_id}: no title in the document nor in a database record of that id",
                    ),
                    tally,
                    documents=True,
                )
                path = file_of(kept.source)
                yield TaggedOutput(INPUTS, InputTally(path, parsed=-1, dead_lettered=1))
                if path != kept.source:
                    yield TaggedOutput(INPUTS, InputTally(kept.source, "", 1, 0, 1, reason="no_title"))
            if len(documents) > 1:
                tally("documents_merged", len(documents) - 1)
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
                path = file_of(duplicate.source)
                yield TaggedOutput(INPUTS, InputTally(path, parsed=-1, dead_lettered=1, duplicate_of=(kept.source,)))
                if path != duplicate.source:
                    yield TaggedOutput(
                        INPUTS, InputTally(duplicate.source, "", 1, 0, 1, (kept.source,), reason="duplicate_id")
                    )
            if titled:
                yield kept.source, HEADERS.encode(kept.with_metadata(merged))
        yield from tally.emit()


class MergeDatabase(beam.PTransform):
    """Join documents with the metadata by paper id: the database (metadata plus what documents say of
    themselves, metadata first), the documents with their metadata, and duplicate documents as dead
    letters. Inputs `documents` (headers), `bodies` (`CanonicalizeIds`'s), `papers`; outputs `database`,
    `documents` (sealed), `dead`, `tally`, `inputs`. Only headers are merged; a kept header meets its sealed body in
    one join by source after it."""

    def expand(self, inputs):
        merged = (
            {
                "documents": inputs["documents"]
                | "DocumentsById" >> beam.Map(lambda d: (d.paper_id, HEADERS.encode(d))),
                "papers": inputs["papers"] | "PapersById" >> beam.Map(lambda p: (p.paper_id, PAPERS.encode(p))),
            }
            | "JoinById" >> beam.CoGroupByKey()
            | "Merge"
            >> beam.ParDo(_MergeByIdFn())
            .with_output_types(
                tuple[str, bytes], database=Paper, **{TALLY: TALLY_TYPE, DEAD: DeadLetter, INPUTS: InputTally}
            )
            .with_outputs("database", TALLY, DEAD, INPUTS, main="headers")
        )
        documents = (
            {"headers": merged.headers, "bodies": inputs[BODIES]}
            | "JoinBodies" >> beam.CoGroupByKey()
            | "Reunite" >> beam.ParDo(_ReuniteFn()).with_output_types(SealedDocument)
        )
        return {
            "database": merged.database,
            "documents": documents,
            DEAD: merged[DEAD],
            TALLY: merged[TALLY],
            INPUTS: merged[INPUTS],
        }


class ResolveReferencesFn(TallyingFn):
    """Each bib entry of a document (opened here if sealed) to a database paper, through the matcher (a side
    input)."""

    def process(self, document: ParsedDocument | SealedDocument, matcher: InMemoryMatcher) -> Iterator:
        tally = self.tallies()
        document = unseal(document)
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


def in_memory_matcher(papers, config: MatchConfig) -> beam.pvalue.AsSingleton:
    """The whole database (`papers`) in one `InMemoryMatcher`, built once, as a side input."""
    collected = papers | "CollectDatabase" >> beam.combiners.ToList()
    return beam.pvalue.AsSingleton(collected | "BuildMatcher" >> beam.Map(build_matcher, config))


class ResolveReferences(ConfiguredTransform):
    """Bib entries to database papers: identifiers first, then MinHash-LSH + LCS title matching, with the
    whole database in one `InMemoryMatcher` side input. `pipelines.matching.ResolveReferencesByJoin` does
    the same with joins, for databases too large for one worker."""

    config: MatchConfig

    def expand(self, inputs):
        matcher = in_memory_matcher(inputs["database"], self.config)
        resolved = inputs["documents"] | "Resolve" >> beam.ParDo(ResolveReferencesFn(), matcher=matcher).with_outputs(
            TALLY, main="documents"
        )
        return {"documents": resolved.documents, TALLY: resolved[TALLY]}


class CutContextsFn(ConfiguredFn):
    config: ContextConfig

    def process(self, resolved: ResolvedDocument) -> Iterator:
        tally = self.tallies()
        mapping = {r.bib_id: r.paper_id for r in resolved.resolutions}
        yield from cut_contexts(resolved.document, mapping, self.config, tally, citing_fields(resolved.document))
        yield from tally.emit()


def citing_fields(document: ParsedDocument) -> dict[str, object]:
    """The fields of a `Context` that describe its citing paper's taxonomy (`mapping.taxonomy.taxonomy_fields`)."""
    citing = taxonomy_fields(document.categories)
    return {
        "citing_categories": citing["categories"],
        "citing_primary_category": citing["primary_category"],
        "citing_acm_classes": citing["acm_classes"],
    }


class CutContexts(ConfiguredTransform):
    """Char-window and sentence contexts for every resolved citation; outputs `contexts`, `tally`."""

    config: ContextConfig

    def expand(self, documents):
        cut = documents | "Cut" >> beam.ParDo(CutContextsFn(self.config)).with_outputs(TALLY, main="contexts")
        return {"contexts": cut.contexts, TALLY: cut[TALLY]}


class _DateAndSplitFn(TallyingFn):
    def __init__(self, config: SplitConfig, recipe: Recipe | None) -> None:
        self.config = config
        self.recipe = recipe

    def process(self, element) -> Iterator:
        _, grouped = element
        tally = self.tallies()
        papers = grouped["papers"]
        cited = PAPERS.decode(papers[0]) if papers else None
        for _, _, packed in grouped["contexts"]:
            for context in unpack_contexts(packed):
                yield from _kept_and_split(context, cited, self.config, self.recipe, tally)
        yield from tally.emit()


def _kept_and_split(context: Context, cited: Paper | None, config: SplitConfig, recipe: Recipe | None, tally):
    """The context, dated and split, unless the recipe or the dates drop it (`AssignSplits`)."""
    if cited is not None and recipe is not None and not keep_context(context, cited, recipe, tally):
        return
    kept = date_and_split(context, cited, config, tally)
    if kept is not None:
        tally("contexts")
        tally(f"contexts:{kept.split}")
        yield kept


class _DateAndSplitInMemoryFn(_DateAndSplitFn):
    """`_DateAndSplitFn` for one context, its cited paper looked up in the database side input (`papers`: paper id
    to `Paper`)."""

    def process(self, context: Context, papers: dict) -> Iterator:
        tally = self.tallies()
        yield from _kept_and_split(context, papers.get(context.cited_id), self.config, self.recipe, tally)
        yield from tally.emit()


def _by_cited(context: Context) -> tuple[str, Context]:
    return context.cited_id, context


def _packed(cited_id: str, batch: list[Context]) -> tuple[str, tuple[str, int, bytes]]:
    """A batch of one cited paper's contexts as it crosses `AssignSplits`' join: `(cited id, (first context id,
    size, packed))`, packed by `pipelines.coders.pack_contexts` (a shuffle costs by its bytes and its elements)."""
    return cited_id, (batch[0].context_id, len(batch), pack_contexts(batch))


class AssignSplits(beam.PTransform):
    """Join each context with its cited paper: keep what the recipe keeps (`extractors.recipes.keep_context`), drop
    citations of later papers, then split by date. Contexts cross a `FanOutJoin` in compressed batches of one cited
    paper's contexts, papers as `PAPERS` bytes, so a much-cited paper is met in several groups, never one list.
    With `database_in_memory` each context instead finds its cited paper in a side input of the database, and nothing
    is shuffled. Both give the same contexts (docs/design.md)."""

    def __init__(
        self,
        config: SplitConfig,
        recipe: Recipe | None = None,
        max_group: int = MAX_GROUP,
        database_in_memory: bool = False,
    ) -> None:
        super().__init__()
        self.config = config
        self.recipe = recipe
        self.max_group = max_group
        self.database_in_memory = database_in_memory

    def expand(self, inputs):
        if self.database_in_memory:
            papers = beam.pvalue.AsDict(
                inputs["database"]
                | "DatabaseById" >> beam.Map(lambda p: (p.paper_id, p)).with_output_types(tuple[str, Paper])
            )
            split = inputs["contexts"] | "DateAndSplit" >> beam.ParDo(
                _DateAndSplitInMemoryFn(self.config, self.recipe), papers
            ).with_outputs(TALLY, main="contexts")
            return {"contexts": split.contexts, TALLY: split[TALLY]}
        split = (
            {
                "contexts": inputs["contexts"]
                | "BatchByCited" >> beam.ParDo(BatchByKeyFn(_by_cited, batch_size_for(self.max_group), _packed)),
                "papers": inputs["database"] | "DatabaseById" >> beam.Map(lambda p: (p.paper_id, PAPERS.encode(p))),
            }
            | "JoinCited" >> FanOutJoin("contexts", itemgetter(0), "cited_paper", self.max_group, weight=itemgetter(1))
            | "DateAndSplit"
            >> beam.ParDo(_DateAndSplitFn(self.config, self.recipe)).with_outputs(TALLY, main="contexts")
        )
        return {"contexts": split.contexts, TALLY: split[TALLY]}


POOLS = ("database", "cited")


class _PapersInUseFn(TallyingFn):
    def __init__(self, pool: PaperRule | None, mode: str) -> None:
        self.pool = pool
        self.mode = mode

    def process(self, element) -> Iterator:
        _, grouped = element
        roles = set(grouped["roles"])
        tally = self.tallies()
        for paper in list(grouped["papers"])[:1]:
            why_not = self.pool.why_not(paper) if self.pool is not None else None
            if why_not is None:
                tally("papers_in_pool")
            elif self.mode == "database":
                tally(f"papers_not_in_pool:{why_not}")
            if roles or (self.mode == "database" and why_not is None):
                tally("papers_written")
                if not roles:
                    tally("papers_uncited_in_pool")
                tally("papers_with_acm_classes" if paper.acm_classes else "papers_without_acm_classes")
                unmapped = unmapped_categories(paper.categories)
                if unmapped:
                    tally("categories_unmapped", len(unmapped))
                paper = replace(paper, in_pool=why_not is None)
                if "citing" in roles:
                    yield TaggedOutput("citing", paper)
                yield paper
        yield from tally.emit()


def _roles(context: Context) -> tuple[tuple[tuple[str, str], int], ...]:
    return ((context.citing_id, "citing"), 1), ((context.cited_id, "cited"), 1)


class SelectPapers(beam.PTransform):
    """The `papers/` table. `mode` "database": every database paper in the recipe's pool (`pool.why_not` is None),
    cited or not, and the papers some kept context comes from; "cited": only the papers some kept context cites
    or comes from. `in_pool` tells the candidates from citing papers outside the pool. Counted:
    `papers_in_pool`, `papers_not_in_pool:<reason>`, `papers_uncited_in_pool`, `papers_written`."""

    def __init__(self, pool: PaperRule | None = None, mode: str = "cited") -> None:
        super().__init__()
        if mode not in POOLS:
            raise ValueError(f"pool mode must be one of {POOLS}, not {mode!r}")
        self.pool = pool
        self.mode = mode

    def expand(self, inputs):
        roles = (
            inputs["contexts"]
            | "Roles" >> beam.ParDo(SumPerBundleFn(_roles))
            | "RoleKeys" >> beam.Keys()
            | "DistinctRoles" >> beam.Distinct()  # a combine: a paper cited 100,000 times joins with one "cited"
        )
        selected = (
            {"roles": roles, "papers": inputs["database"] | "ById" >> beam.Map(lambda p: (p.paper_id, p))}
            | "JoinRoles" >> beam.CoGroupByKey()
            | "Select" >> beam.ParDo(_PapersInUseFn(self.pool, self.mode)).with_outputs("citing", TALLY, main="papers")
        )
        return {"papers": selected.papers, TALLY: selected[TALLY]}


# ------------------------------------------------------------------------------- the graph and the figures


def _by_citing(c: Context) -> tuple[str, tuple]:
    """A context as `CitationGraph` groups it: `(citing, (cited, heading, split, citing primary category))`."""
    return c.citing_id, (c.cited_id, c.section_heading, c.split, c.citing_primary_category)


class _CitingPaperFn(TallyingFn):
    """One citing paper's contexts (every batch of them): its `citations/` rows, one per paper it cites, with
    the headings of its contexts; `citing_papers:<split>` counted once for each split its contexts are in, and
    its primary category's plot key on `categories` (each citing paper is one group, so nothing needs a
    `Distinct`)."""

    def process(self, element) -> Iterator:
        citing, batches = element
        tally = self.tallies()
        headings: dict[str, list[str | None]] = {}
        splits: set[str] = set()
        categories: set[str | None] = set()  # one: a document's contexts share its category
        for batch in batches:
            for cited, heading, split, category in batch:
                headings.setdefault(cited, []).append(heading)
                splits.add(split)
                categories.add(category)
        for split in sorted(splits):
            tally(f"citing_papers:{split}")
        for category in categories:
            yield TaggedOutput(CATEGORIES, citing_category_key(category))
        for cited in sorted(headings):
            yield citation_row(citing, cited, headings[cited])
        yield from tally.emit()


CATEGORIES = "categories"


class CitationGraph(beam.PTransform):
    """Contexts into the `citations/` table's rows (`citations`): one per (citing, cited) pair, with its contexts'
    headings. The contexts are grouped by citing paper (what one paper cites is bounded by its text, a group no
    larger than a document), so a pair's rows come from one group and the shuffle carries one batch per citing
    paper and bundle. The same groups give, once per citing paper, its primary category's plot key
    (`categories`, `extractors.dataset.citing_category_key`) and the count of citing papers per split (`tally`)."""

    def expand(self, contexts):
        rows = (
            contexts
            | "ByCiting" >> beam.ParDo(BatchByKeyFn(_by_citing))
            | "GroupByCiting" >> beam.GroupByKey()
            | "CitingPapers" >> beam.ParDo(_CitingPaperFn()).with_outputs(CATEGORIES, TALLY, main="citations")
        )
        return {"citations": rows.citations, CATEGORIES: rows[CATEGORIES], TALLY: rows[TALLY]}


class CountFigures(beam.PTransform):
    """What stats.json, Table 1 and the plots are computed from, each one small value: `years` (papers per
    publication year), `graph` (the citation graph's figures, `pipelines.graph.GraphStatistics`), `plot_sums`
    (`plot_sums`). Inputs: `contexts`, `citations`, `papers` and `categories` (`CitationGraph`'s plot key per
    citing paper)."""

    def expand(self, inputs):
        contexts, citations, papers = inputs["contexts"], inputs["citations"], inputs["papers"]
        figures = {
            "years": papers | "PaperYears" >> beam.Map(lambda p: str(p.year) if p.year else "unknown"),
            **plot_key_parts(contexts, citations, papers, inputs[CATEGORIES]),
        } | "Figures" >> CombineFigures({"years": CountPerElementFn(), **PLOT_PARTS})
        return {
            "years": figures | "Years" >> beam.Map(itemgetter("years")),
            "graph": citations | "GraphStatistics" >> GraphStatistics(),
            "plot_sums": figures | "PlotSums" >> beam.Map(summed_plot_keys),
        }


def _one_for_cited(context: Context) -> tuple[tuple[str, int]]:
    return ((context.cited_id, 1),)


PLOT_PARTS = {
    name: SumDictFn()
    for name in ("context_keys", "contexts_per_cited", "citing_papers_per_cited", "categories", "pool")
}
"""The sources of the plots' `(key, n)` pairs, each summed into a dict by `CombineFigures`."""


def plot_key_parts(contexts, citations, papers, categories) -> dict:
    """The `(small key, n)` pairs behind the plots and Table 1, by source (`PLOT_PARTS`): a few hundred keys (years,
    length buckets, citation counts, categories); contexts and citations are counted per cited paper first (a
    per-key sum across workers), so no worker holds the contexts. `categories`: one `citing_category_key` pair
    per citing paper (`CitationGraph`'s)."""
    per_cited = (
        ("contexts", "Contexts", contexts | "CitedByContext" >> beam.ParDo(SumPerBundleFn(_one_for_cited))),
        (
            "citing_papers",
            "CitingPapers",
            citations | "CitedByPaper" >> beam.ParDo(SumPerBundleFn(lambda row: ((row["cited_id"], 1),))),
        ),
    )
    counts = {
        f"{kind}_per_cited": ids
        | f"{label}PerCited" >> beam.CombinePerKey(sum)
        | f"{label}PerCitedKey" >> beam.MapTuple(lambda _, n, kind=kind: cited_count_key(kind, n))
        for kind, label, ids in per_cited
    }
    return {
        "context_keys": contexts | "ContextPlotKeys" >> beam.ParDo(SumPerBundleFn(context_plot_keys)),
        **counts,
        "categories": categories,
        "pool": papers | "PoolKeys" >> beam.Map(pool_key),
    }


def summed_plot_keys(figures: dict) -> list[tuple[object, int]]:
    """The parts' sums added up: one `(key, sum)` per key (what `extractors.dataset.plot_numbers` reads)."""
    sums: dict = {}
    for name in PLOT_PARTS:
        for key, n in figures[name].items():
            sums[key] = sums.get(key, 0) + n
    return list(sums.items())


def plot_sums(contexts, citations, papers, categories):
    """The numbers behind the plots and Table 1 as one list of (small key, sum), in one PCollection."""
    return (
        plot_key_parts(contexts, citations, papers, categories)
        | "PlotFigures" >> CombineFigures(PLOT_PARTS)
        | "PlotSums" >> beam.Map(summed_plot_keys)
    )
