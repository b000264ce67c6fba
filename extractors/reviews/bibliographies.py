"""What a submission already cites, from whichever source has it, so that a reviewer's mention of a paper the
submission cites is `already_cited`, not `recommended`. No Beam.

Sources, in the order a run prefers them (`fullest`):
- **its own paper**: TEI (`--tei`), S2ORC / unarXive (`--s2orc`) or its PDF through GROBID (`--pdfs`), joined to
  the submission by file stem = submission id, paper id, or normalised title (`document_keys`);
- **its record in the paper database** (`--metadata`), found by id or normalised title (`paper_keys`), when the
  record lists what it cites (S2ORC metadata's `outbound_citations`, `Paper.outbound_s2_ids`): the cited papers'
  titles and identifiers, looked up in the same database (`bibliography_of_papers`).

Besides, the submission's own title and abstract (`with_own_text`), from its review file or submission note: a
work the reviewer names by a name the submission writes itself is not one it misses (`Bibliography.names`).

A submission for which none has its references is *undecided*: nothing can be `already_cited` there, and a run
counts it (stats.json `already_cited`) instead of passing its mentions off as decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from extractors.documents.files import file_stem
from extractors.reviews.mentions.classify import Bibliography
from extractors.reviews.records import Submission
from mapping.records import Paper, ParsedDocument
from mapping.titles import normalize_title

OWN_PAPER = "own_paper"
DATABASE = "database"


def _stem(source: str) -> str:
    stem = file_stem(source)
    return stem.removesuffix(".pdf").removesuffix(".PDF")


def bibliography_of_document(document: ParsedDocument) -> Bibliography:
    """A parsed paper's bibliography: its entries' titles, arXiv ids and DOIs."""
    return Bibliography(
        titles=tuple(e.title for e in document.bib_entries if e.title),
        arxiv_ids=frozenset(e.arxiv_id for e in document.bib_entries if e.arxiv_id),
        dois=frozenset(e.doi for e in document.bib_entries if e.doi),
        source=OWN_PAPER,
    )


def document_keys(document: ParsedDocument, source_file: str) -> list[str]:
    """The keys a submission's own paper is joined by: `id:<file stem>`, `id:<paper id>`, `title:<normalised>`."""
    keys = [f"id:{_stem(source_file)}", f"id:{document.paper_id}"]
    if normalize_title(document.title):
        keys.append(f"title:{normalize_title(document.title)}")
    return list(dict.fromkeys(keys))


def submission_keys(submission: Submission) -> list[str]:
    """The keys a submission is joined by: `id:<submission id>`, `title:<normalised title>`."""
    keys = [f"id:{submission.submission_id}"]
    if normalize_title(submission.title):
        keys.append(f"title:{normalize_title(submission.title)}")
    return keys


def paper_keys(paper: Paper) -> list[str]:
    """The keys a database record that lists its references is joined to a submission by (its ids and its
    normalised title); none for a record without references."""
    if not paper.outbound_s2_ids:
        return []
    keys = [f"id:{paper.paper_id}"] + [f"id:{i}" for i in (paper.s2_paper_id, paper.arxiv_id, paper.doi) if i]
    if normalize_title(paper.title):
        keys.append(f"title:{normalize_title(paper.title)}")
    return list(dict.fromkeys(keys))


def bibliography_of_papers(papers: Iterable[Paper]) -> Bibliography:
    """The bibliography of a submission whose database record lists its references: the cited papers' titles,
    arXiv ids and DOIs, in a fixed order."""
    ordered = sorted(papers, key=lambda p: p.paper_id)
    return Bibliography(
        titles=tuple(p.title for p in ordered if p.title),
        arxiv_ids=frozenset(p.arxiv_id for p in ordered if p.arxiv_id),
        dois=frozenset(p.doi for p in ordered if p.doi),
        source=DATABASE,
    )


def fullest(bibliographies: Iterable[Bibliography]) -> Bibliography:
    """One submission's bibliography from several: its own paper before the database, then the one with the
    most titles (a fixed order among equals)."""
    return max(
        bibliographies,
        key=lambda b: (b.source == OWN_PAPER, len(b.titles) + len(b.arxiv_ids) + len(b.dois), sorted(b.titles)),
    )


def with_own_text(bibliography: Bibliography, submission: Submission | None) -> Bibliography:
    """The bibliography with the submission's own title and abstract (`Bibliography.own_text`), when it has them."""
    if submission is None:
        return bibliography
    own = "\n".join(text for text in (submission.title, submission.abstract) if text)
    return replace(bibliography, own_text=own) if own else bibliography
