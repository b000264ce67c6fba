"""`InMemoryMatcher`: identifiers, then titles (`mapping.matcher`'s `TitleIndex`), then raw strings
(`mapping.raw_strings`), for a database that fits one process; the Beam join in `pipelines/matching.py` gives the
same resolutions for millions of papers."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mapping.ids import resolution_method
from mapping.matcher import MatchConfig, TitleIndex, checked_title, count_identifier_kinds, usable_title
from mapping.raw_strings import RawStringResolver, first_author_surname
from mapping.records import BibEntry, CounterFn, Paper, Resolution, no_count


class InMemoryMatcher:
    """Identifier maps plus a `TitleIndex` of every database title, all in this process."""

    def __init__(self, papers: Iterable[Paper], config: MatchConfig = MatchConfig()) -> None:
        self.config = config
        self._by_key: dict[str, str] = {}  # every identifier key of every paper; the smallest paper id wins a key
        ids, titles, years, surnames, seen = [], [], [], [], set()
        for paper in sorted(papers, key=lambda p: p.paper_id):
            for key in paper.identifier_keys():
                self._by_key.setdefault(key, paper.paper_id)
            title = usable_title(paper.title, config)
            if title is None or paper.paper_id in seen:
                continue
            seen.add(paper.paper_id)
            ids.append(paper.paper_id)
            titles.append(title)
            years.append(paper.year)
            surnames.append(first_author_surname(paper))
        self.index = TitleIndex(ids, titles, years, config)
        self.raw_resolver = RawStringResolver(self.index, surnames, config)

    def __len__(self) -> int:
        return len(self.index)

    def resolve_identifier(self, entry: BibEntry, count: CounterFn = no_count) -> Resolution | None:
        """The paper of the entry's strongest identifier key that the database holds, or None. Counts
        `bib_entries_with:<kind>` once per kind the entry carries and `resolved_by:<kind>` for the key used."""
        keys = entry.identifier_keys()
        count_identifier_kinds(keys, count)
        for key in keys:
            if key in self._by_key:
                method = resolution_method(key)
                count(f"resolved_by:{method}", 1)
                return Resolution(entry.bib_id, self._by_key[key], method, 1.0)
        return None

    def resolve(self, entry: BibEntry, count: CounterFn = no_count) -> Resolution:
        return self.resolve_many([entry], count)[0]

    def resolve_title(self, entry: BibEntry, count: CounterFn = no_count) -> Resolution:
        return self.resolve_titles_of([entry], count)[0]

    def resolve_many(self, entries: Sequence[BibEntry], count: CounterFn = no_count) -> list[Resolution]:
        """Identifiers first; the rest by title, all in one batch."""
        resolutions: list[Resolution | None] = [self.resolve_identifier(e, count) for e in entries]
        rest = [i for i, r in enumerate(resolutions) if r is None]
        for i, resolution in zip(rest, self.resolve_titles_of([entries[i] for i in rest], count), strict=True):
            resolutions[i] = resolution
        return resolutions  # type: ignore[return-value]

    def resolve_titles_of(self, entries: Sequence[BibEntry], count: CounterFn = no_count) -> list[Resolution]:
        resolutions: list[Resolution | None] = [None] * len(entries)
        usable, raw = [], []
        for i, entry in enumerate(entries):
            title, problem = checked_title(entry.title, self.config)
            if title is None and entry.raw:
                raw.append(i)  # no usable title: the raw string is matched instead
            elif title is None:
                count(f"unresolved:{problem}", 1)
                resolutions[i] = Resolution(entry.bib_id, None, "unresolved")
            else:
                usable.append((i, title))
        if raw:
            found = self.raw_resolver.resolve([entries[i].bib_id for i in raw], [entries[i].raw for i in raw], count)
            for i, resolution in zip(raw, found, strict=True):
                resolutions[i] = resolution
        found = self.index.resolve_titles(
            [entries[i].bib_id for i, _ in usable], [t for _, t in usable], [entries[i].year for i, _ in usable], count
        )
        for (i, _), resolution in zip(usable, found, strict=True):
            resolutions[i] = resolution
        return resolutions  # type: ignore[return-value]
