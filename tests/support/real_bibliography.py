"""Real bibliographies as matcher input: every bib entry of the real GROBID TEI and S2ORC documents under
../shared/data, parsed by the library, a paper database made of their titles, and reference strings for the raw
path. For the tests that check the Beam join against the in-memory matcher on real data; no gold set involved.

- `entries`: every bib entry of every real document (`grobid/**/*.tei.xml`, `s2orc/**/*.json`), as parsed,
  identifiers kept, keyed by `file#position`.
- `papers`: one `Paper` per distinct normalised title of those entries (its first spelling, authors and year),
  except a fifth of the titles (by SHA-1), held out so that some references have no paper to find.
- `raw_queries`: the TEI entries as raw strings only (no title, identifier or year for the matcher): GROBID's own
  `raw_reference` note where it kept one, and each entry written out from its parsed authors, year, title and
  venue in two plain layouts (author-year and quoted title), as bibliographies print them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

from extractors.documents.files import parse_document_file
from mapping.records import BibEntry, Paper, ParsedDocument
from mapping.titles import normalize_title

SOURCES = (("tei", "grobid/**/*.tei.xml"), ("s2orc", "s2orc/**/*.json"))


@dataclass(frozen=True)
class RealBibliography:
    """The matcher's input taken from the real documents (the module docstring says what each part holds)."""

    entries: tuple[tuple[str, BibEntry], ...]
    papers: tuple[Paper, ...]
    raw_queries: tuple[tuple[str, BibEntry], ...]


def held_out(normalized_title: str) -> bool:
    """A fifth of the titles, chosen by content: not in the database."""
    return int(hashlib.sha1(normalized_title.encode()).hexdigest()[:8], 16) % 5 == 0


def initials(name: str) -> str:
    """Initials and surname: "Dzmitry Bahdanau" -> "D. Bahdanau"."""
    *given, family = name.split()
    return " ".join([*(f"{g[0]}." for g in given), family]) if given else family


def author_year_string(entry: BibEntry) -> str:
    """Authors. Year. Title. In Venue."""
    *first, last = entry.authors or ("",)
    names = f"{', '.join(first)}{',' if len(first) > 1 else ''} and {last}" if first else last
    parts = [
        names,
        str(entry.year) if entry.year else "",
        entry.title or "",
        f"In {entry.venue}" if entry.venue else "",
    ]
    return ". ".join(p.rstrip(".") for p in parts if p) + "."


def quoted_title_string(entry: BibEntry) -> str:
    """A. Author, B. Author, "Title," Venue, Year."""
    parts = [", ".join(initials(a) for a in entry.authors if a.split()), f'"{entry.title},"']
    tail = ", ".join(p for p in (entry.venue, str(entry.year) if entry.year else None) if p)
    return " ".join(p for p in (parts[0] + "," if parts[0] else "", parts[1], tail + "." if tail else "") if p)


def real_entries(shared: Path) -> list[tuple[str, BibEntry, str]]:
    """(file#position, bib entry, document kind) of every bib entry of every real document, in file order."""
    found = []
    for kind, pattern in SOURCES:
        for path in sorted(shared.glob(pattern)):
            for document in parse_document_file(path.read_bytes(), str(path), kind):
                if isinstance(document, ParsedDocument):
                    relative = path.relative_to(shared)
                    found.extend((f"{relative}#{i}", e, kind) for i, e in enumerate(document.bib_entries))
    return found


def real_bibliography(shared: Path) -> RealBibliography:
    entries = real_entries(shared)
    papers: dict[str, Paper] = {}
    for _, entry, _ in entries:
        normalized = normalize_title(entry.title or "")
        if normalized and not held_out(normalized) and normalized not in papers:
            paper_id = "bib:" + hashlib.sha1(normalized.encode()).hexdigest()[:16]
            papers[normalized] = Paper(paper_id, entry.title, year=entry.year, authors=entry.authors)
    raw_queries = []
    for key, entry, kind in entries:
        if kind != "tei" or not entry.title:
            continue
        strings = [("grobid", entry.raw)] if entry.raw else []
        strings += [("author_year", author_year_string(entry)), ("quoted_title", quoted_title_string(entry))]
        raw_queries.extend((f"{key}:{layout}", BibEntry(f"{key}:{layout}", raw=raw)) for layout, raw in strings)
    return RealBibliography(
        tuple((key, entry) for key, entry, _ in entries),
        tuple(sorted(papers.values(), key=lambda p: p.paper_id)),
        tuple(raw_queries),
    )


def without_identifiers(entry: BibEntry) -> BibEntry:
    """The entry as a reference that only its title, authors and year can resolve."""
    return replace(entry, doi=None, arxiv_id=None, s2_corpus_id=None, other_ids=())
