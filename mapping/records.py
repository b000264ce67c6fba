"""The data model shared by every stage: small frozen dataclasses, no Beam.

A parsed document (`ParsedDocument`) carries paragraphs with character-offset citation mentions and the
bibliography those mentions link to. The paper database is a set of `Paper` records. Contexts are what the
dataset is made of. Anything that cannot be processed becomes a `DeadLetter` that keeps the input's
identity and a readable reason.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from mapping.ids import identifier_keys

# A counter callback: pure functions report what they dropped or saw as (name, increment) so that the
# pipeline can turn it into a Beam counter and tests can collect it into a dict.
CounterFn = Callable[[str, int], None]


def no_count(name: str, n: int = 1) -> None:
    """The counter callback for callers that do not care."""


# What a database record says of a paper beyond its identifiers: what a parsed document takes from its record.
DESCRIPTION_FIELDS = ("title", "abstract", "authors", "date", "year", "categories")
# The identifier fields of documents and papers, as `mapping.ids.identifier_keys` takes them.
IDENTIFIER_FIELDS = ("arxiv_id", "doi", "s2_paper_id", "s2_corpus_id", "other_ids")


def fields_of(record: object, names: tuple[str, ...]) -> dict[str, object]:
    """The named fields of `record`, as keyword arguments for another record."""
    return {name: getattr(record, name) for name in names}


class _KnownByIdentifiers:
    """`identifier_keys()` for the records that carry identifier fields (bib entries, documents and papers)."""

    arxiv_id: str | None
    doi: str | None
    s2_paper_id: str | None = None  # a bib entry has none: Semantic Scholar resolves references to corpus ids
    s2_corpus_id: str | None
    other_ids: tuple[str, ...]

    def identifier_keys(self) -> list[str]:
        """The keys the record can be found or resolved through, strongest first, in the form
        `mapping.ids.identifier_keys` gives (`mapping.ids.KEY_KINDS`)."""
        return identifier_keys(**fields_of(self, IDENTIFIER_FIELDS))


@dataclass(frozen=True)
class BibEntry(_KnownByIdentifiers):
    """One entry of a document's bibliography, as parsed; ids are normalised (see `mapping.ids`)."""

    bib_id: str
    title: str | None = None
    authors: tuple[str, ...] = ()
    year: int | None = None
    venue: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    raw: str | None = None
    s2_corpus_id: str | None = None  # the cited paper's Semantic Scholar corpus id, where S2 resolved it
    # keys of the other kinds (`pmid:…`, `pmcid:…`, …; `mapping.ids`)
    other_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mention:
    """An in-text citation marker of a parsed paper ("[3]", "(Smith et al., 2020)"): character offsets into its
    paragraph's text, and the bib entry it links to. A paper that a peer review names is another thing,
    `extractors.reviews.records.PaperMention`."""

    start: int
    end: int
    text: str
    bib_id: str | None


@dataclass(frozen=True)
class Paragraph:
    """A block of running text with its sentences (character spans) and citation mentions.

    `section_index` numbers the document's sections; paragraphs that share it belong to one section, which
    is what bounds a sentence context.
    """

    text: str
    section_index: int
    section_heading: str | None
    sentences: tuple[tuple[int, int], ...]
    mentions: tuple[Mention, ...]
    # abstract | body | caption | note | back; heading (a section heading holding markers) | marker (the markers
    # nested inside one): both only counted and dropped, never context text
    kind: str = "body"


@dataclass(frozen=True)
class ParsedDocument(_KnownByIdentifiers):
    """One input document after parsing. `source` names the input (path, or path:line for JSONL)."""

    paper_id: str
    source: str
    source_format: str
    title: str | None
    abstract: str | None
    authors: tuple[str, ...]
    paragraphs: tuple[Paragraph, ...]
    bib_entries: tuple[BibEntry, ...]
    arxiv_id: str | None = None
    doi: str | None = None
    s2_paper_id: str | None = None
    date: dt.date | None = None
    year: int | None = None
    categories: tuple[str, ...] = ()
    s2_corpus_id: str | None = None
    other_ids: tuple[str, ...] = ()

    def with_id(self, paper_id: str) -> ParsedDocument:
        return replace(self, paper_id=paper_id)

    def with_metadata(self, paper: Paper) -> ParsedDocument:
        """This document described by its database record (title, abstract, authors, date, categories)."""
        return replace(self, **fields_of(paper, DESCRIPTION_FIELDS))


@dataclass(frozen=True)
class Paper(_KnownByIdentifiers):
    """A paper of the database: the metadata a context's citing and cited papers are described by."""

    paper_id: str
    title: str | None
    abstract: str | None = None
    authors: tuple[str, ...] = ()
    date: dt.date | None = None
    year: int | None = None
    categories: tuple[str, ...] = ()
    doi: str | None = None
    arxiv_id: str | None = None
    s2_paper_id: str | None = None
    source: str = "metadata"
    primary_category: str | None = None
    acm_classes: tuple[str, ...] = ()
    acm_classes_author: tuple[str, ...] = ()
    s2_corpus_id: str | None = None
    other_ids: tuple[str, ...] = ()
    in_pool: bool = True  # a candidate under the run's recipe (`papers/`); False: there only as a citing paper
    # the S2 paper ids of the works it cites, where the database lists them (S2ORC metadata's `outbound_citations`):
    # CitationR tells a submission's already cited papers from them when its own full text is not given
    outbound_s2_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class Resolution:
    """How a bib entry was matched to a database paper (or why not)."""

    bib_id: str
    paper_id: str | None
    # arxiv_id | doi | s2_corpus_id | pmid | … (`ids.resolution_method`) | title | raw_title | unresolved | ambiguous
    method: str
    score: float | None = None


@dataclass(frozen=True)
class Context:
    """One citation context: a (citing, cited) pair and the text around one marker."""

    context_id: str
    citing_id: str
    cited_id: str
    bib_id: str
    char_context: str
    sentence_context: str
    section_heading: str | None
    marker: str
    citing_date: dt.date | None = None
    citing_year: int | None = None
    cited_date: dt.date | None = None
    cited_year: int | None = None
    split: str | None = None
    citing_categories: tuple[str, ...] = ()
    citing_primary_category: str | None = None
    citing_acm_classes: tuple[str, ...] = ()
    cited_categories: tuple[str, ...] = ()
    cited_primary_category: str | None = None
    cited_acm_classes: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeadLetter:
    """An input that could not be processed: where it came from, at which stage, and why."""

    source: str
    stage: str
    reason: str
    detail: str = ""


@dataclass(frozen=True)
class ResolvedDocument:
    """A parsed document whose metadata is merged from the database and whose bib entries are resolved."""

    document: ParsedDocument
    resolutions: tuple[Resolution, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class InputTally:
    """What became of one input file (or one failed or duplicate JSONL line): a row of the `inputs/` table.

    `records_read` = `parsed` + `dead_lettered`: a record parsed and then found to be a duplicate of
    another moves from `parsed` to `dead_lettered`, and `duplicate_of` names the copies that were kept.
    """

    path: str
    kind: str = ""
    records_read: int = 0
    parsed: int = 0
    dead_lettered: int = 0
    duplicate_of: tuple[str, ...] = ()
    reason: str | None = None

    def plus(self, other: InputTally) -> InputTally:
        return InputTally(
            path=self.path,
            kind=self.kind or other.kind,
            records_read=self.records_read + other.records_read,
            parsed=self.parsed + other.parsed,
            dead_lettered=self.dead_lettered + other.dead_lettered,
            duplicate_of=tuple(sorted(set(self.duplicate_of) | set(other.duplicate_of)))[:20],
            reason=self.reason or other.reason,
        )


@dataclass(frozen=True)
class PaperAbstract:
    """A record of the Semantic Scholar `abstracts` dataset: the abstract that the `papers` record of the same
    corpus id lacks, joined to it by `extractors.documents.s2ag.with_abstract`."""

    corpus_id: str
    abstract: str | None
