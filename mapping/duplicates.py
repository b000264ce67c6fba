"""The same paper arriving as two documents: found by title, first author and year, merged where their
identifiers agree.

Copies that share no identifier (a missing arXiv id, the same PDF as TEI and as S2ORC JSON) would otherwise
become two papers and double their contexts. Documents are grouped by normalised title, first author's surname
and year; within a group, those whose identifiers do not contradict each other take the strongest one's id.
Different values of one identifier kind (two DOIs) mean different papers, whatever the titles.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from mapping.ids import key_kind, key_rank
from mapping.titles import looks_like_venue, normalize_title

MIN_TITLE_WORDS = 3
"""Fewer normalised words ("Introduction", "Supplementary material") do not name a paper."""


def first_author_surname(authors: Sequence[str]) -> str:
    """The first author's surname as a key: the last word of the name, accents folded, lower case ('' if none)."""
    for name in authors:
        words = [w for w in str(name).replace(",", " ").split() if any(c.isalpha() for c in w)]
        if words:
            folded = unicodedata.normalize("NFKD", words[-1]).encode("ascii", "ignore").decode().lower()
            return "".join(c for c in folded if c.isalnum())
    return ""


def title_key(title: str | None, authors: Sequence[str], year: int | None) -> str | None:
    """The key two copies of one paper share: `normalised title|surname|year`, or None when the title is too short
    or a venue name, or when neither the first author nor the year is known."""
    normalized = normalize_title(title)
    if len(normalized.split()) < MIN_TITLE_WORDS or looks_like_venue(normalized):
        return None
    surname = first_author_surname(authors)
    if not surname and year is None:
        return None
    return f"{normalized}|{surname}|{year if year is not None else ''}"


@dataclass(frozen=True)
class Copy:
    """What the merge needs of one document: its source, its paper id and its identifier keys (strongest first)."""

    source: str
    paper_id: str
    keys: tuple[str, ...]


def _strength(copy: Copy) -> tuple:
    """Strongest first: a copy with identifiers before one without, stronger kinds first, then by id and source."""
    ranks = sorted(key_rank(k) for k in copy.keys)
    return (not copy.keys, ranks, copy.paper_id, copy.source)


def _components(copies: Sequence[Copy]) -> list[list[Copy]]:
    """The copies that share an identifier (the same paper by that identifier), each group strongest first."""
    graph = nx.Graph()
    graph.add_nodes_from(range(len(copies)))
    holder: dict[str, int] = {}
    for i, copy in enumerate(copies):
        for key in copy.keys:
            graph.add_edge(i, holder.setdefault(key, i))
    groups = (sorted((copies[i] for i in group), key=_strength) for group in nx.connected_components(graph))
    return sorted(groups, key=lambda g: _strength(g[0]))


def _kinds(group: Sequence[Copy]) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for copy in group:
        for key in copy.keys:
            kinds.setdefault(key_kind(key), set()).add(key)
    return kinds


def _conflict(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    return any(kind in b and values != b[kind] for kind, values in a.items())


def merge_copies(copies: Sequence[Copy]) -> tuple[dict[str, str], int]:
    """Copies sharing a title key: `({source: paper_id}` of those renamed to another copy's id, the number of groups
    and bare copies left apart)`. Copies sharing an identifier are one paper. When no two of the resulting groups
    carry different values of one identifier kind, all are one paper, named by the strongest copy; when some do
    (two arXiv ids: two papers with one title), only the copies sharing an identifier merge, and the rest, which
    could be either paper, are left apart and counted. Deterministic in any input order."""
    groups = _components(sorted(copies, key=_strength))
    keyed = [g for g in groups if g[0].keys]
    kinds = [_kinds(g) for g in keyed]
    clash = any(_conflict(kinds[i], kinds[j]) for i in range(len(kinds)) for j in range(i + 1, len(kinds)))
    merged = [[c for g in groups for c in g]] if not clash else groups
    renames: dict[str, str] = {}
    for group in merged:
        lead = min(group, key=_strength).paper_id
        renames.update({c.source: lead for c in group if c.paper_id != lead})
    return renames, len(merged) - 1
