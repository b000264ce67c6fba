"""A gold set for raw-string matching (`mapping/raw_strings.py`) from real bibliographies, and its scoring
(precision and recall per bibliography style). `bench/raw_gold.py` prints the tables, runs the comparisons
and the speed test; `bench/tests/test_gold_raw_strings.py` holds the floors.

Queries: every biblStruct with a usable title in the GROBID TEI under `grobid/**` (parsed here with lxml),
written out by `format_reference` in four bibliography styles -- ACM, IEEE, APA and natbib's plainnat --
from its authors, title, venue, volume, issue, pages and year; `acm_pdf`: the ACM string as text extraction
from a PDF leaves it (one misspelled word in the title, words hyphenated at line ends: "adapta- tion", as in
GROBID's own raw strings); and the real `<note type="raw_reference">` strings where GROBID kept them (two
files). The matcher sees only the string (`BibEntry(raw=...)`): no
title, no identifier, no year. Identical strings are one query.

Database: one paper per distinct normalised biblStruct title (with its year and first author). Titles the
title path cannot tell apart (LCS >= 0.9: "Sentence-BERT ... BERT-Networks" and GROBID's "... bertnetworks")
are one work, and a resolution to any of its spellings is right. A fifth of the works (chosen by SHA-1 of
their first title) is held out of the database: a query citing one is a negative, any resolution of it is
wrong. Distractors: the arXiv `.abs` titles and the S2ORC metadata samples (2020 JSONL, 2019 TSV); one at
LCS >= 0.9 to any gold title (held-out ones too) is the same work and is dropped, so that a negative stays
absent.

Split: by SHA-1 of the biblStruct's place (`path#position` under the shared folder), about half the cited
references are `dev` (read while choosing the rules and parameters), the rest `test` (never printed query by
query; only its totals). All styles of one biblStruct fall on the same side. (Split by file, the two files
with real raw strings both fell into dev, leaving none of them unread.)
Metrics per split and style: precision = correct / resolved; recall = correct / queries whose paper is in
the database and whose title is long enough for the raw path (`title_is_eligible`); recall_all = correct /
queries whose paper is in the database.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from lxml import etree
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cdist

from extractors.documents.metadata import paper_from_metadata
from extractors.documents.s2orc import parse_year
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig, usable_title
from mapping.raw_strings import title_is_eligible
from mapping.records import BibEntry, Paper
from mapping.titles import normalize_title

TEI = "{http://www.tei-c.org/ns/1.0}"
STYLES = ("acm", "ieee", "apa", "natbib", "acm_pdf")
REAL = "grobid_raw"
HELD_OUT_SHARE = 5  # one title in five is not in the database


def split_of(place: str) -> str:
    """`dev` or `test`, fixed by the SHA-1 of a biblStruct's `path#position`."""
    return "dev" if hashlib.sha1(place.encode()).digest()[0] % 2 == 0 else "test"


def held_out(normalized_title: str) -> bool:
    return hashlib.sha1(normalized_title.encode()).digest()[1] % HELD_OUT_SHARE == 0


# --- biblStructs -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Author:
    forenames: tuple[str, ...]
    surname: str

    def full(self) -> str:
        return " ".join((*self.forenames, self.surname))

    def initials(self) -> str:
        return " ".join(f"{f[0]}." for f in self.forenames if f)

    def initials_first(self) -> str:  # IEEE: "A. N. Gomez"
        return f"{self.initials()} {self.surname}".strip()

    def surname_first(self) -> str:  # APA: "Gomez, A. N."
        return f"{self.surname}, {self.initials()}" if self.forenames else self.surname


@dataclass(frozen=True)
class Reference:
    """What a biblStruct says, as a style needs it."""

    title: str
    authors: tuple[Author, ...] = ()
    venue: str | None = None
    venue_is_journal: bool = False
    year: int | None = None
    volume: str | None = None
    issue: str | None = None
    pages: str | None = None
    publisher: str | None = None
    raw: str | None = None


def _text(element) -> str | None:
    if element is None:
        return None
    text = " ".join("".join(element.itertext()).split())
    return text or None


def _author(element) -> Author | None:
    pers = element.find(f"{TEI}persName")
    if pers is None:
        return None
    forenames = tuple(t for t in (_text(f) for f in pers.findall(f"{TEI}forename")) if t)
    surname = _text(pers.find(f"{TEI}surname"))
    return Author(forenames, surname) if surname else None


def read_references(data: bytes) -> list[Reference]:
    """Every biblStruct of a TEI's bibliography that has a title."""
    root = etree.fromstring(data)
    found = []
    for struct in root.iter(f"{TEI}biblStruct"):
        if struct.getparent() is None or struct.getparent().tag != f"{TEI}listBibl":
            continue
        analytic, monogr = struct.find(f"{TEI}analytic"), struct.find(f"{TEI}monogr")
        title = _text(analytic.find(f"{TEI}title")) if analytic is not None else None
        venue, journal = None, False
        if monogr is not None:
            journal_title = monogr.find(f"{TEI}title[@level='j']")
            monogr_title = _text(journal_title) or _text(monogr.find(f"{TEI}title"))
            if title is None:
                title = monogr_title
            else:
                venue, journal = monogr_title, journal_title is not None
        if not title:
            continue
        holder = analytic if analytic is not None and analytic.find(f"{TEI}author") is not None else monogr
        people = holder.findall(f"{TEI}author") if holder is not None else []
        authors = tuple(a for a in map(_author, people) if a)
        scopes: dict[str, str] = {}
        for scope in struct.iter(f"{TEI}biblScope"):
            unit = scope.get("unit")
            value = _text(scope) or "–".join(v for v in (scope.get("from"), scope.get("to")) if v)
            if unit and value and unit not in scopes:
                scopes[unit] = value
        date = struct.find(f".//{TEI}imprint/{TEI}date")
        year = parse_year((date.get("when") or _text(date) or "")[:4]) if date is not None else None
        found.append(
            Reference(
                title=title,
                authors=authors,
                venue=venue,
                venue_is_journal=journal,
                year=year,
                volume=scopes.get("volume"),
                issue=scopes.get("issue"),
                pages=scopes.get("page"),
                publisher=_text(struct.find(f".//{TEI}imprint/{TEI}publisher")),
                raw=_text(struct.find(f"{TEI}note[@type='raw_reference']")),
            )
        )
    return found


# --- bibliography styles -----------------------------------------------------------------------------------


def _listed(names: list[str], last: str = "and", serial: bool = True) -> str:
    if len(names) <= 1:
        return "".join(names)
    if len(names) == 2:
        return f"{names[0]} {last} {names[1]}"
    return ", ".join(names[:-1]) + ("," if serial else "") + f" {last} {names[-1]}"


def _end(text: str) -> str:
    """A sentence ends with one full stop (none added after ? or !)."""
    text = text.rstrip()
    return text if text.endswith((".", "?", "!")) else text + "."


def format_acm(r: Reference) -> str:
    """ACM Reference Format: full names, year, title, "In" proceedings or journal volume, issue, pages."""
    parts = []
    if r.authors:
        parts.append(_end(_listed([a.full() for a in r.authors])))
    if r.year:
        parts.append(f"{r.year}.")
    parts.append(_end(r.title))
    if r.venue and r.venue_is_journal:
        volume = " ".join(v for v in (r.venue, r.volume) if v) + (f", {r.issue}" if r.issue else "")
        parts.append(_end(volume + (f" ({r.year})" if r.year else "") + (f", {r.pages}" if r.pages else "")))
    elif r.venue:
        parts.append(_end(f"In {r.venue}" + (f", {r.pages}" if r.pages else "")))
    elif r.publisher:
        parts.append(_end(r.publisher))
    return " ".join(parts)


def format_ieee(r: Reference) -> str:
    """IEEE: initials first, "et al." past six authors, the title in quotes, vol./no./pp., year last."""
    names = [a.initials_first() for a in r.authors]
    authors = f"{names[0]} et al." if len(names) > 6 else _listed(names)
    parts = [f"{authors},"] if authors else []
    parts.append(f"“{r.title.rstrip('.')},”")
    tail = []
    if r.venue:
        tail.append(r.venue if r.venue_is_journal else f"in {r.venue}")
    elif r.publisher:
        tail.append(r.publisher)
    tail += [f"vol. {r.volume}"] if r.volume else []
    tail += [f"no. {r.issue}"] if r.issue else []
    tail += [f"pp. {r.pages}"] if r.pages else []
    tail += [str(r.year)] if r.year else []
    parts.append(_end(", ".join(tail)) if tail else "")
    return " ".join(p for p in parts if p).rstrip(",")


def format_apa(r: Reference) -> str:
    """APA 7: "Surname, I.", "&" before the last, (year), title, journal, volume(issue), pages."""
    names = [a.surname_first() for a in r.authors]
    parts = [_listed(names, "&") if len(names) <= 20 else ", ".join(names[:19]) + ", ... " + names[-1]]
    parts.append(f"({r.year})." if r.year else "(n.d.).")
    parts.append(_end(r.title))
    if r.venue:
        issue = f"({r.issue})" if r.issue else ""
        volume = f", {r.volume}{issue}" if r.volume else ""
        pages = f", {r.pages}" if r.pages else ""
        parts.append(_end(f"{r.venue}{volume}{pages}" if r.venue_is_journal else f"In {r.venue}{pages}"))
    elif r.publisher:
        parts.append(_end(r.publisher))
    return " ".join(p for p in parts if p)


def format_natbib(r: Reference) -> str:
    """plainnat (natbib): full names, title, journal volume(issue):pages or "In" booktitle, pages, year."""
    parts = [_end(_listed([a.full() for a in r.authors]))] if r.authors else []
    parts.append(_end(r.title))
    tail = []
    if r.venue and r.venue_is_journal:
        numbers = (r.volume or "") + (f"({r.issue})" if r.issue else "") + (f":{r.pages}" if r.pages else "")
        tail.append(f"{r.venue}, {numbers}" if numbers else r.venue)
    elif r.venue:
        tail.append(f"In {r.venue}")
        tail += [f"pages {r.pages}"] if r.pages else []
    elif r.publisher:
        tail.append(r.publisher)
    tail += [str(r.year)] if r.year else []
    if tail:
        parts.append(_end(", ".join(tail)))
    return " ".join(parts)


def misspell(title: str, rng: random.Random) -> str:
    """One word of four or more letters with a letter dropped or two neighbours swapped."""
    words = title.split(" ")
    long_words = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not long_words:
        return title
    i = rng.choice(long_words)
    w = words[i]
    j = rng.randrange(1, len(w) - 2)
    words[i] = w[:j] + w[j + 1 :] if rng.random() < 0.5 else w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def hyphenate_lines(text: str, rng: random.Random, width: int = 55) -> str:
    """Line ends every `width` characters or so; a word of six or more letters across one is hyphenated
    and the line break becomes a space ("adapta- tion"), as PDF text extraction leaves it."""
    out, line = [], 0
    for word in text.split(" "):
        if line + len(word) > width and len(word) >= 6 and word.isalpha():
            cut = rng.randrange(2, len(word) - 2)
            out.append(f"{word[:cut]}- {word[cut:]}")
            line = len(word) - cut
        else:
            out.append(word)
            line = 0 if line + len(word) > width else line + len(word) + 1
    return " ".join(out)


def format_acm_pdf(r: Reference) -> str:
    """The ACM string with a misspelled title word and line-end hyphenation, fixed by the title's SHA-1."""
    rng = random.Random(hashlib.sha1(r.title.encode()).digest())
    return hyphenate_lines(format_acm(Reference(**{**r.__dict__, "title": misspell(r.title, rng)})), rng)


FORMATS: dict[str, Callable[[Reference], str]] = {
    "acm": format_acm,
    "ieee": format_ieee,
    "apa": format_apa,
    "natbib": format_natbib,
    "acm_pdf": format_acm_pdf,
}


def format_reference(reference: Reference, style: str) -> str:
    return FORMATS[style](reference)


# --- the gold set ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawQuery:
    entry: BibEntry  # bib_id and raw only
    answer: str | None  # the cited work, None for a negative (its work is not in the database)
    eligible: bool  # the paper is in the database and its title is long enough for the raw path
    style: str
    split: str
    source: str  # file#position


@dataclass(frozen=True, eq=False)
class RawGoldSet:
    queries: tuple[RawQuery, ...]
    papers: tuple[Paper, ...]
    work_of: dict[str, str]  # paper id -> work, for the gold papers (distractors have none)
    composition: dict[str, int] = field(default_factory=dict)

    def correct(self, query: RawQuery, paper_id: str | None) -> bool:
        return paper_id is not None and query.answer is not None and self.work_of.get(paper_id) == query.answer


def gold_paper_id(normalized_title: str) -> str:
    return "gold:" + hashlib.sha1(normalized_title.encode()).hexdigest()[:16]


def _paper(reference: Reference, normalized: str) -> Paper:
    authors = tuple(a.full() for a in reference.authors[:1])
    return Paper(gold_paper_id(normalized), reference.title, year=reference.year, authors=authors, source="gold")


def _distractors(shared: Path, counts: Counter) -> list[Paper]:
    papers = []
    for name, path in (
        ("arxiv-abs", shared / "arxiv" / "arxiv-browse_abs_derived.jsonl"),
        ("s2orc-metadata-2020", shared / "s2orc" / "allenai-s2orc" / "metadata_sample_v20200705.jsonl"),
    ):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            if line.strip():
                paper = paper_from_metadata(json.loads(line))
                papers.append(Paper(f"{name}:{number}", paper.title, year=paper.year, authors=paper.authors[:1]))
    tsv = shared / "s2orc" / "allenai-s2orc" / "metadata_sample_2019.tsv"
    csv.field_size_limit(1 << 30)
    with tsv.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            year = parse_year(row.get("year"))
            papers.append(Paper(f"s2orc-metadata-2019:{row['pid']}", row.get("title") or None, year=year))
    counts["distractors_read"] = len(papers)
    return papers


def build_gold_set(shared: Path) -> RawGoldSet:
    counts: Counter = Counter()
    config = MatchConfig()
    records: dict[str, Paper] = {}
    cited: list[tuple[str, str, int, Reference]] = []  # (split, relative path, position, reference)
    for path in sorted((shared / "grobid").rglob("*.tei.xml")):
        relative = str(path.relative_to(shared))
        counts["tei_files"] += 1
        for position, reference in enumerate(read_references(path.read_bytes())):
            counts["biblstructs_with_title"] += 1
            normalized = usable_title(reference.title, config)
            if normalized is None:
                counts["biblstructs_skipped:title_not_usable"] += 1
                continue
            records.setdefault(normalized, _paper(reference, normalized))
            cited.append((split_of(f"{relative}#{position}"), relative, position, reference))
    gold_titles = sorted(records)
    work = works(gold_titles, config.min_similarity)
    in_db = {t for t in gold_titles if not held_out(work[t])}
    counts["gold_titles"] = len(gold_titles)
    counts["gold_works"] = len(set(work.values()))
    counts["gold_works_held_out"] = len({work[t] for t in gold_titles if t not in in_db})

    # a distractor at LCS >= 0.9 to any gold title (held out too) is the same work: dropped
    distractors = [p for p in _distractors(shared, counts) if usable_title(p.title, config)]
    near = cdist(
        [normalize_title(p.title) for p in distractors],
        gold_titles,
        scorer=LCSseq.normalized_similarity,
        score_cutoff=config.min_similarity,
        dtype=np.float64,
        workers=1,
    )
    kept = [p for p, row in zip(distractors, near, strict=True) if not row.any()]
    counts["distractors_dropped_as_same_work"] = len(distractors) - len(kept)
    papers = tuple(sorted([records[t] for t in in_db] + kept, key=lambda p: p.paper_id))
    counts["db_papers"] = len(papers)
    work_of = {records[t].paper_id: gold_paper_id(work[t]) for t in in_db}

    queries: list[RawQuery] = []
    seen: set[str] = set()
    for split, relative, position, reference in cited:
        normalized = normalize_title(reference.title)
        answer = gold_paper_id(work[normalized]) if not held_out(work[normalized]) else None
        eligible = answer is not None and title_is_eligible(normalized, config.raw)
        styles = [(s, format_reference(reference, s)) for s in STYLES]
        if reference.raw:
            styles.append((REAL, reference.raw))
        for style, raw in styles:
            if raw in seen:
                counts["queries_duplicate_string"] += 1
                continue
            seen.add(raw)
            entry = BibEntry(f"{relative}#{position}:{style}", raw=raw)
            queries.append(RawQuery(entry, answer, eligible, style, split, f"{relative}#{position}"))
            counts[f"queries:{split}"] += 1
            counts[f"queries:{split}:{'in_db' if answer else 'negative'}"] += 1
    counts["queries"] = len(queries)
    return RawGoldSet(tuple(queries), papers, work_of, dict(sorted(counts.items())))


def works(titles: list[str], threshold: float) -> dict[str, str]:
    """Each normalised title's work: the smallest title of its group of titles linked at LCS >= threshold
    (union-find over every pair, exhaustive with rapidfuzz)."""
    parent = list(range(len(titles)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    similar = cdist(titles, titles, scorer=LCSseq.normalized_similarity, score_cutoff=threshold, dtype=np.float64)
    for i, j in zip(*np.nonzero(similar), strict=True):
        a, b = find(int(i)), find(int(j))
        parent[max(a, b)] = min(a, b)
    return {t: titles[find(i)] for i, t in enumerate(titles)}


# --- scoring -----------------------------------------------------------------------------------------------


def score(gold: RawGoldSet, queries: Iterable[RawQuery], resolved: Iterable[str | None]) -> dict[str, float | int]:
    n = n_in_db = n_eligible = n_resolved = correct = wrong = negatives = 0
    for query, paper_id in zip(queries, resolved, strict=True):
        n += 1
        n_in_db += query.answer is not None
        n_eligible += query.eligible
        if paper_id is None:
            continue
        n_resolved += 1
        if gold.correct(query, paper_id):
            correct += 1
        elif query.answer is None:
            negatives += 1
        else:
            wrong += 1
    return {
        "n": n,
        "in_db": n_in_db,
        "eligible": n_eligible,
        "negative": n - n_in_db,
        "resolved": n_resolved,
        "correct": correct,
        "wrong_paper": wrong,
        "negatives_resolved": negatives,
        "precision": correct / n_resolved if n_resolved else 1.0,
        "recall": correct / n_eligible if n_eligible else 0.0,
        "recall_all": correct / n_in_db if n_in_db else 0.0,
    }


def table(gold: RawGoldSet, resolved: list[str | None]) -> list[dict]:
    """Scores per split and style, and per split over all styles."""
    rows = []
    for split in ("dev", "test"):
        for style in (*STYLES, REAL, "all"):
            chosen = [
                (q, r)
                for q, r in zip(gold.queries, resolved, strict=True)
                if q.split == split and (style == "all" or q.style == style)
            ]
            if chosen:
                rows.append(
                    {"split": split, "style": style, **score(gold, [q for q, _ in chosen], [r for _, r in chosen])}
                )
    return rows


def resolve_raw(gold: RawGoldSet, config: MatchConfig | None = None) -> tuple[list[str | None], Counter]:
    """The production path: `InMemoryMatcher.resolve_many` on entries that carry only the raw string."""
    config = config or MatchConfig()
    counts: Counter = Counter()
    matcher = InMemoryMatcher(gold.papers, config)
    resolutions = matcher.resolve_many([q.entry for q in gold.queries], lambda name, n=1: counts.update({name: n}))
    return [r.paper_id for r in resolutions], counts
