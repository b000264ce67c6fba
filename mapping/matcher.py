"""Resolve bib entries to papers of the database: identifiers first, then titles.

Title matching follows ArSyTa: MinHash-LSH (datasketch) proposes candidates, at most `max_candidates`
ranked by estimated Jaccard similarity of character shingles, and each is verified by an LCS similarity of
at least `min_similarity` (rapidfuzz). The LCS is the longest common *subsequence* of the two normalised
titles (`mapping.titles.normalize_title`), divided by the length of the longer one
(`rapidfuzz.distance.LCSseq.normalized_similarity`): a subsequence tolerates a misspelled or dropped word,
and dividing by the longer title keeps a short generic title from matching inside a long one.

The best verified candidate wins; a tie between different papers is resolved by the entry's year when
exactly one tied paper has it, and otherwise left unresolved as `ambiguous`.

`InMemoryMatcher` holds the whole database; it is the correct, simple version. A later stage replaces it
for databases of millions of papers behind the same `ReferenceMatcher` interface.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Protocol

from datasketch import MinHash, MinHashLSH
from rapidfuzz.distance import LCSseq

from extractors.records import BibEntry, CounterFn, Paper, Resolution, no_count
from mapping.titles import normalize_title


@dataclass(frozen=True)
class MatchConfig:
    """Title-matching parameters; the defaults are ArSyTa's published setting (top 100, LCS >= 0.9)."""

    num_perm: int = 128
    shingle_size: int = 3
    lsh_threshold: float = 0.5
    max_candidates: int = 100
    min_similarity: float = 0.9
    min_title_chars: int = 8
    seed: int = 1

    def as_metadata(self) -> dict[str, object]:
        return {**asdict(self), "lcs": "longest common subsequence / length of the longer normalised title"}


class ReferenceMatcher(Protocol):
    def resolve(self, entry: BibEntry, count: CounterFn = no_count) -> Resolution: ...


def shingles(normalized_title: str, size: int) -> set[bytes]:
    """Character `size`-grams of a normalised title (the whole title when it is shorter)."""
    text = normalized_title
    if len(text) <= size:
        return {text.encode()} if text else set()
    return {text[i : i + size].encode() for i in range(len(text) - size + 1)}


def lcs_similarity(a: str, b: str) -> float:
    """Longest common subsequence of `a` and `b` over the length of the longer one, in [0, 1]."""
    return LCSseq.normalized_similarity(a, b)


class InMemoryMatcher:
    """Identifier maps plus a MinHash-LSH index of every database title, all in this process."""

    def __init__(self, papers: Iterable[Paper], config: MatchConfig = MatchConfig()) -> None:
        self.config = config
        self._by_arxiv: dict[str, str] = {}
        self._by_doi: dict[str, str] = {}
        self._titles: dict[str, str] = {}
        self._years: dict[str, int | None] = {}
        self._signatures: dict[str, MinHash] = {}
        self._lsh = MinHashLSH(threshold=config.lsh_threshold, num_perm=config.num_perm)
        for paper in sorted(papers, key=lambda p: p.paper_id):
            self._add(paper)

    def _add(self, paper: Paper) -> None:
        if paper.arxiv_id:
            self._by_arxiv.setdefault(paper.arxiv_id, paper.paper_id)
        if paper.doi:
            self._by_doi.setdefault(paper.doi, paper.paper_id)
        title = normalize_title(paper.title)
        if len(title) < self.config.min_title_chars or paper.paper_id in self._titles:
            return
        self._titles[paper.paper_id] = title
        self._years[paper.paper_id] = paper.year
        signature = self._minhash(title)
        self._signatures[paper.paper_id] = signature
        self._lsh.insert(paper.paper_id, signature)

    def _minhash(self, title: str) -> MinHash:
        signature = MinHash(num_perm=self.config.num_perm, seed=self.config.seed)
        signature.update_batch(sorted(shingles(title, self.config.shingle_size)))
        return signature

    def __len__(self) -> int:
        return len(self._titles)

    def resolve(self, entry: BibEntry, count: CounterFn = no_count) -> Resolution:
        if entry.arxiv_id and entry.arxiv_id in self._by_arxiv:
            count("resolved_by:arxiv_id", 1)
            return Resolution(entry.bib_id, self._by_arxiv[entry.arxiv_id], "arxiv_id", 1.0)
        if entry.doi and entry.doi in self._by_doi:
            count("resolved_by:doi", 1)
            return Resolution(entry.bib_id, self._by_doi[entry.doi], "doi", 1.0)
        return self.resolve_title(entry, count)

    def candidates(self, title: str) -> list[str]:
        """Up to `max_candidates` paper ids sharing an LSH bucket, best estimated Jaccard first."""
        signature = self._minhash(title)
        found = self._lsh.query(signature)
        ranked = sorted(found, key=lambda pid: (-signature.jaccard(self._signatures[pid]), pid))
        return ranked[: self.config.max_candidates]

    def resolve_title(self, entry: BibEntry, count: CounterFn = no_count) -> Resolution:
        title = normalize_title(entry.title)
        if len(title) < self.config.min_title_chars:
            count("unresolved:no_usable_title", 1)
            return Resolution(entry.bib_id, None, "unresolved")
        scored = [(lcs_similarity(title, self._titles[pid]), pid) for pid in self.candidates(title)]
        scored = [(s, pid) for s, pid in scored if s >= self.config.min_similarity]
        if not scored:
            count("unresolved:no_title_match", 1)
            return Resolution(entry.bib_id, None, "unresolved")
        best = max(s for s, _ in scored)
        tied = sorted(pid for s, pid in scored if s == best)
        if len(tied) > 1 and entry.year is not None:
            same_year = [pid for pid in tied if self._years.get(pid) == entry.year]
            tied = same_year if len(same_year) == 1 else tied
        if len(tied) > 1:
            count("unresolved:ambiguous_title", 1)
            return Resolution(entry.bib_id, None, "ambiguous", best)
        count("resolved_by:title", 1)
        return Resolution(entry.bib_id, tied[0], "title", best)
