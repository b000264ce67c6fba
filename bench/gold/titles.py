"""A gold set for title matching from the real documents in ../shared/data, and its precision and recall
(`python bench/matching_gold.py` prints the table; `bench/tests/test_gold_titles.py` holds the floors).

Identity is known from identifiers, never from titles: a bib entry that carries an arXiv id, a DOI or an
S2ORC `link` (Semantic Scholar paper id) is a query whose answer is that identifier; the matcher sees only
its title and year (`BibEntry(arxiv_id=None, doi=None)`). Identifiers are joined into one identity when a
record carries several (an entry with both an arXiv id and a DOI; `10.48550/arXiv.X` is arXiv id X).

Where the queries come from:
- every bib entry with an identifier in the TEI under `grobid/**` and the S2ORC JSON under `s2orc/**` and
  `grobid/**` (parsed by `extractors.documents.parse_document_file`; the S2ORC `link` read from the JSON);
- unarXive's `refs.db`: bibitem strings with a `cited_arxiv_id` whose title is in quotes (“…”, "…", ``…'');
  strings without quotes are left out, as no title can be cut from them without guessing.

Where the database records come from, one record per identity, first source wins:
1. arXiv `.abs` metadata (`arxiv/arxiv-browse_abs_derived.jsonl`), the S2ORC metadata samples (2020 JSONL
   and 2019 TSV), and the parsed documents' own TEI/S2ORC headers (title plus arXiv id or DOI);
2. for an identity cited by two or more *different* works (a work is a file stem, so a PDF's TEI and its
   S2ORC JSON are one work; for unarXive it is the citing arXiv id): the citation of the first work, in
   sorted order, is the record; the citations of the other works are queries, those of its own work are not.
   When another work's citation names an unrelated title (LCS similarity below 0.5 with the first's),
   GROBID put the id on the wrong entry in one of them: the identity is left out (no record, no queries).
An identity with no record is a negative: any resolution of its queries is a false positive.

Distractors: every title without an identifier (bib entries of the documents, unquoted-identifier unarXive
titles) is a paper of its own. A database record that is not the gold identity but has the same normalised
title as a gold identity's record or query (spaces aside: GROBID joins "BERT-Networks" into one word in
one citation and not in another), with years at most one apart (or unknown) or a title of at
least four words whatever the years (an edition, an arXiv version, a journal version), is the same work
without its identifier: it is dropped from the database and counted, so a negative stays a paper that is
not in the database. Near-duplicates (a GROBID misspelling of the same title) are not caught by that rule;
`--show-errors` lists them among the false positives for a person to judge.

Queries are deduplicated on (identity, normalised title, year): the matcher is deterministic, so the same
string cited by several works is one test. Metrics per similarity, path and threshold:
precision = correct / resolved; recall_resolvable = correct / queries whose identity has a record and whose
query and record titles both have at least `MatchConfig.min_title_chars` normalised characters;
recall_all = correct / queries whose identity has a record.
Paths: `lsh` is the production `InMemoryMatcher.resolve_title` (subsequence only); `exhaustive` scores
every database title and applies the same rule (best at or above the threshold; a tie between papers is
broken by the entry's year when exactly one tied paper has it, else unresolved).
"""

from __future__ import annotations

import csv
import difflib
import json
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import LCSseq

from extractors.documents.files import file_stem, parse_document_file
from extractors.documents.metadata import paper_from_metadata
from extractors.documents.s2orc import parse_year
from mapping.ids import normalize_arxiv_id, normalize_doi
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig, usable_title
from mapping.records import BibEntry, DeadLetter, Paper, Resolution
from mapping.titles import normalize_title

THRESHOLDS = (0.80, 0.85, 0.88, 0.90, 0.92, 0.95)
REPORT_THRESHOLD = 0.90
CONFIG = MatchConfig()
MIN_TITLE_CHARS = CONFIG.min_title_chars
# Record sources in order of precedence when several describe one identity.
RECORD_SOURCES = ("arxiv-abs", "s2orc-metadata-2020", "s2orc-metadata-2019", "document-header", "citation")
_ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$")
_UNARXIVE_OLD_ID = re.compile(r"^([a-z][a-z-]*)(\d{7})$")
_QUOTED_TITLE = re.compile(r"“([^”\"]{10,300}?)[,.]?\s*[”\"]|\"([^\"”]{10,300}?)[,.]?\s*\"|``(.{10,300}?)[,.]?\s*''")
_YEAR_IN_PARENS = re.compile(r"\((?:[^()]*?\s)?((?:19|20)\d{2})[a-z]?\)")


# --- similarities ------------------------------------------------------------------------------------


def lcs_subsequence(a: str, b: str) -> float:
    """Longest common subsequence over the longer length (what `mapping.matcher.lcs_similarity` computes)."""
    return LCSseq.normalized_similarity(a, b)


def longest_common_substring(a: str, b: str) -> int:
    """Length of the longest common contiguous substring (difflib without junk heuristics is exact)."""
    if not a or not b:
        return 0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b)).size


def lcs_substring(a: str, b: str) -> float:
    """Longest common substring over the longer length, in [0, 1]; never above `lcs_subsequence`."""
    longer = max(len(a), len(b))
    return longest_common_substring(a, b) / longer if longer else 1.0


SIMILARITIES: dict[str, Callable[[str, str], float]] = {"subsequence": lcs_subsequence, "substring": lcs_substring}


# --- the gold set ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldQuery:
    """A citation whose paper is known by identifier; `entry` is what the matcher sees (no identifiers)."""

    entry: BibEntry
    identity: str
    source: str  # tei | s2orc | unarxive
    origin: str  # file#bib_id, or refs.db#uuid
    work: str


@dataclass(frozen=True, eq=False)
class GoldSet:
    """Queries, the database they are resolved against, and which identity each database paper is."""

    queries: tuple[GoldQuery, ...]
    papers: tuple[Paper, ...]
    identity_of: Mapping[str, str | None]  # paper_id -> identity (None for a distractor)
    record_of: Mapping[str, str]  # identity -> paper_id of its record
    record_work: Mapping[str, str]  # identity -> citing work, for records taken from a citation
    composition: Mapping[str, int] = field(default_factory=dict)

    def in_db(self, query: GoldQuery) -> bool:
        return query.identity in self.record_of

    def resolvable(self, query: GoldQuery) -> bool:
        if not self.in_db(query):
            return False
        record = self.paper(self.record_of[query.identity])
        usable = (usable_title(t, CONFIG) is not None for t in (query.entry.title, record.title))
        return all(usable)

    def paper(self, paper_id: str) -> Paper:
        return self._papers_by_id()[paper_id]

    @lru_cache(maxsize=1)  # noqa: B019 -- one GoldSet lives for the whole run
    def _papers_by_id(self) -> dict[str, Paper]:
        return {p.paper_id: p for p in self.papers}


@dataclass(frozen=True)
class _Citation:
    title: str | None
    year: int | None
    keys: tuple[str, ...]
    source: str
    origin: str
    work: str


class _Identities:
    """Union-find over identifier keys (`arxiv:…`, `doi:…`, `s2:…`); an identity is its component's best key."""

    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self._parent.setdefault(key, key)
        while self._parent[key] != key:
            self._parent[key] = self._parent[self._parent[key]]
            key = self._parent[key]
        return key

    def join(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        for other in keys[1:]:
            a, b = sorted((self.find(keys[0]), self.find(other)), key=_key_rank)
            self._parent[b] = a

    def identity(self, keys: Iterable[str]) -> str:
        return self.find(next(iter(keys)))

    def components_with_two_arxiv_ids(self) -> int:
        arxiv_by_root: dict[str, set[str]] = defaultdict(set)
        for key in list(self._parent):
            if key.startswith("arxiv:"):
                arxiv_by_root[self.find(key)].add(key)
        return sum(1 for keys in arxiv_by_root.values() if len(keys) > 1)


def _key_rank(key: str) -> tuple[int, str]:
    return ({"arxiv": 0, "doi": 1, "s2": 2}[key.split(":", 1)[0]], key)


def identifier_keys(arxiv_id: str | None = None, doi: str | None = None, s2_id: str | None = None) -> tuple[str, ...]:
    """The identity keys a record carries; an arXiv DOI (10.48550/arXiv.X) also gives arXiv id X."""
    keys = []
    if arxiv_id:
        keys.append(f"arxiv:{arxiv_id}")
    if doi:
        keys.append(f"doi:{doi}")
        match = _ARXIV_DOI.match(doi)
        arxiv_from_doi = normalize_arxiv_id(match.group(1)) if match else None
        if arxiv_from_doi:
            keys.append(f"arxiv:{arxiv_from_doi}")
    if s2_id:
        keys.append(f"s2:{s2_id}")
    return tuple(dict.fromkeys(keys))


def _document_files(shared: Path) -> list[tuple[Path, str]]:
    tei = sorted((shared / "grobid").rglob("*.tei.xml"))
    json_files = sorted((shared / "s2orc").rglob("*.json")) + sorted((shared / "grobid").rglob("*.json"))
    return [(p, "tei") for p in tei] + [(p, "s2orc") for p in json_files]


def _s2orc_links(data: bytes) -> dict[str, str]:
    """bib_id -> S2 paper id from every `bib_entries` mapping of an S2ORC JSON (`link` or 2019's `links`)."""
    links: dict[str, set[str]] = defaultdict(set)

    def walk(node: object) -> None:
        if isinstance(node, dict):
            entries = node.get("bib_entries")
            if isinstance(entries, dict):
                for key, entry in entries.items():
                    link = entry.get("link") or entry.get("links") if isinstance(entry, dict) else None
                    if isinstance(link, (str, int)) and str(link).strip():
                        links[str(key)].add(str(link).strip())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    try:
        walk(json.loads(data))
    except ValueError:
        return {}
    return {key: next(iter(ids)) for key, ids in links.items() if len(ids) == 1}


def _document_records(shared: Path, counts: Counter) -> tuple[list[_Citation], list[Paper]]:
    """Citations (with or without identifiers) of every document, and each document's own header record."""
    citations: list[_Citation] = []
    headers: list[Paper] = []
    for path, kind in _document_files(shared):
        data = path.read_bytes()
        links = _s2orc_links(data) if kind == "s2orc" else {}
        rel = str(path.relative_to(shared))
        for document in parse_document_file(data, rel, kind):
            if isinstance(document, DeadLetter):
                counts[f"documents_dead_letter:{document.reason}"] += 1
                continue
            counts[f"documents:{kind}"] += 1
            work = file_stem(rel)
            header_keys = identifier_keys(document.arxiv_id, document.doi)
            if document.title and header_keys:
                headers.append(
                    Paper(
                        paper_id=header_keys[0],
                        title=document.title,
                        year=document.year,
                        arxiv_id=document.arxiv_id,
                        doi=document.doi,
                        source=f"document-header:{rel}",
                    )
                )
            for entry in document.bib_entries:
                counts[f"bib_entries:{kind}"] += 1
                keys = identifier_keys(entry.arxiv_id, entry.doi, links.get(entry.bib_id))
                citations.append(_Citation(entry.title, entry.year, keys, kind, f"{rel}#{entry.bib_id}", work))
    return citations, headers


def _metadata_records(shared: Path, counts: Counter) -> list[Paper]:
    papers = []
    sources = (
        ("arxiv-abs", shared / "arxiv" / "arxiv-browse_abs_derived.jsonl"),
        ("s2orc-metadata-2020", shared / "s2orc" / "allenai-s2orc" / "metadata_sample_v20200705.jsonl"),
    )
    for name, path in sources:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                paper = paper_from_metadata(json.loads(line))
                papers.append(replace(paper, source=name))
                counts[f"metadata:{name}"] += 1
    tsv = shared / "s2orc" / "allenai-s2orc" / "metadata_sample_2019.tsv"
    if tsv.is_file():
        csv.field_size_limit(1 << 30)
        with tsv.open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                doi = normalize_doi(row.get("has_doi"))
                papers.append(
                    Paper(
                        paper_id=row["pid"],
                        title=row.get("title") or None,
                        year=parse_year(row.get("year")),
                        doi=doi,
                        s2_paper_id=row["pid"],
                        source="s2orc-metadata-2019",
                    )
                )
                counts["metadata:s2orc-metadata-2019"] += 1
    return papers


def _unarxive_arxiv_id(value: str | None) -> str | None:
    """unarXive writes old-style ids without the slash (`hep-ph0606272`)."""
    if not value:
        return None
    match = _UNARXIVE_OLD_ID.match(value.strip())
    return normalize_arxiv_id(f"{match.group(1)}/{match.group(2)}" if match else value)


def quoted_title(bibitem: str) -> str | None:
    """The title of a reference string that puts it in quotes (physics style), or None: no guessing."""
    match = _QUOTED_TITLE.search(bibitem)
    return next(g for g in match.groups() if g).strip() if match else None


def _unarxive_citations(shared: Path, counts: Counter) -> list[_Citation]:
    path = shared / "unarxive2020" / "paper_centered_sample" / "papers" / "refs.db"
    if not path.is_file():
        return []
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = connection.execute(
            "SELECT uuid, citing_arxiv_id, cited_arxiv_id, bibitem_string FROM bibitem ORDER BY uuid"
        ).fetchall()
    finally:
        connection.close()
    citations = []
    for uuid, citing, cited, bibitem in rows:
        counts["bibitems:unarxive"] += 1
        title = quoted_title(bibitem or "")
        if title is None:
            continue
        counts["bibitems:unarxive_quoted_title"] += 1
        year_match = _YEAR_IN_PARENS.search(bibitem)
        arxiv_id = _unarxive_arxiv_id(cited)
        keys = identifier_keys(arxiv_id) if arxiv_id else ()
        work = f"unarxive:{citing}"
        year = int(year_match.group(1)) if year_match else None
        citations.append(_Citation(title, year, keys, "unarxive", f"refs.db#{uuid}", work))
    return citations


def _years_compatible(a: int | None, b: int | None) -> bool:
    return a is None or b is None or abs(a - b) <= 1


LONG_TITLE_WORDS = 4


def _squashed(title: str | None) -> str:
    """A normalised title without its spaces: GROBID joins or splits words at line breaks ("BERT-Networks" comes
    out as "bertnetworks" in one citation and "bert networks" in another), so two records of one work whose
    titles differ only there are one work."""
    return normalize_title(title).replace(" ", "")


CONFLICT_SIMILARITY = 0.5


def _names_two_works(citations: list[_Citation]) -> bool:
    """Whether citations of one identifier in different works name unrelated titles (a longest-common-subsequence
    similarity below `CONFLICT_SIMILARITY` with the first work's): GROBID attached the id to the wrong entry in
    one of them, so neither can be the record the others are judged against."""
    if not citations:
        return False
    first = normalize_title(citations[0].title)
    return any(
        c.work != citations[0].work
        and LCSseq.normalized_similarity(first, normalize_title(c.title)) < CONFLICT_SIMILARITY
        for c in citations[1:]
    )


def _same_work(title: str, a: int | None, b: int | None) -> bool:
    """Two records with this same normalised title are one work: years at most one apart (or unknown), or a
    title of at least `LONG_TITLE_WORDS` words whatever the years (a later edition, an arXiv version, the
    journal version of a conference paper: a title matcher cannot and should not tell them apart)."""
    return _years_compatible(a, b) or len(title.split()) >= LONG_TITLE_WORDS


def build_gold_set(shared: Path) -> GoldSet:
    """Read every real source under `shared` and assemble queries, database and identities (see module doc)."""
    counts: Counter = Counter()
    citations, headers = _document_records(shared, counts)
    citations += _unarxive_citations(shared, counts)
    metadata = _metadata_records(shared, counts)

    identities = _Identities()
    record_keys = [identifier_keys(p.arxiv_id, p.doi, p.s2_paper_id) for p in metadata + headers]
    for keys in [c.keys for c in citations] + record_keys:
        if keys:
            identities.join(keys)
    counts["identity_components_with_two_arxiv_ids"] = identities.components_with_two_arxiv_ids()

    # 1. records from independent metadata and document headers, first source wins
    records: dict[str, Paper] = {}
    record_source: dict[str, str] = {}
    ranked = sorted(
        metadata + headers, key=lambda p: (RECORD_SOURCES.index(p.source.split(":", 1)[0]), p.source, p.paper_id)
    )
    for paper in ranked:
        keys = identifier_keys(paper.arxiv_id, paper.doi, paper.s2_paper_id)
        if not keys or not normalize_title(paper.title):
            continue
        identity = identities.identity(keys)
        if identity not in records:
            records[identity] = paper
            record_source[identity] = paper.source.split(":", 1)[0]

    # 2. identified citations: a record from the first citing work when no metadata has one, queries otherwise
    by_identity: dict[str, list[_Citation]] = defaultdict(list)
    for citation in citations:
        if citation.keys:
            by_identity[identities.identity(citation.keys)].append(citation)
            counts[f"identified_citations:{citation.source}"] += 1
    raw_queries: list[tuple[str, _Citation]] = []
    record_work: dict[str, str] = {}
    for identity in sorted(by_identity):
        cited = sorted(by_identity[identity], key=lambda c: (c.work, c.origin))
        usable = [c for c in cited if len(normalize_title(c.title)) >= MIN_TITLE_CHARS]
        if identity not in records and _names_two_works(usable):
            counts["identities_dropped_conflicting_titles"] += 1  # GROBID put the id on the wrong entry
            continue
        if identity not in records and len({c.work for c in usable}) >= 2:
            first = usable[0]
            records[identity] = Paper(identity, first.title, year=first.year, source=f"citation:{first.origin}")
            record_source[identity] = f"citation:{first.source}"
            record_work[identity] = first.work
            cited = [c for c in cited if c.work != first.work]
        raw_queries += [(identity, c) for c in cited]

    # 3. queries, identifiers hidden, deduplicated on (identity, normalised title, year)
    queries: list[GoldQuery] = []
    seen: set[tuple[str, str, int | None]] = set()
    for identity, citation in raw_queries:
        key = (identity, normalize_title(citation.title), citation.year)
        if key in seen:
            counts["queries_duplicate_string"] += 1
            continue
        seen.add(key)
        entry = BibEntry(bib_id=citation.origin, title=citation.title, year=citation.year, arxiv_id=None, doi=None)
        queries.append(GoldQuery(entry, identity, citation.source, citation.origin, citation.work))

    # 4. the database: one record per identity, then distractors; drop unmarked duplicates of gold papers
    gold_titles: dict[str, list[tuple[str, int | None]]] = defaultdict(list)
    gold_identities = {q.identity for q in queries}
    for query in queries:
        gold_titles[_squashed(query.entry.title)].append((query.identity, query.entry.year))
    for identity in gold_identities & set(records):
        gold_titles[_squashed(records[identity].title)].append((identity, records[identity].year))

    candidates: list[tuple[str | None, str, Paper]] = [
        (identity, record_source[identity], paper) for identity, paper in sorted(records.items())
    ]
    distractor_titles = [c for c in citations if not c.keys]
    for citation in sorted(distractor_titles, key=lambda c: c.origin):
        paper = Paper(paper_id="", title=citation.title, year=citation.year, source=f"distractor:{citation.origin}")
        candidates.append((None, f"distractor:{citation.source}", paper))
    papers: list[Paper] = []
    identity_of: dict[str, str | None] = {}
    record_of: dict[str, str] = {}
    titles_taken: set[str] = set()
    for identity, source, paper in candidates:
        title = normalize_title(paper.title)
        if len(title) < MIN_TITLE_CHARS:
            counts[f"db_dropped_short_title:{source}"] += 1
            continue
        duplicate = any(
            other != identity and _same_work(title, year, paper.year)
            for other, year in gold_titles.get(_squashed(paper.title), ())
        )
        if duplicate:
            counts[f"db_dropped_duplicate_of_gold:{source}"] += 1
            continue
        if identity is None and title in titles_taken:
            counts[f"db_dropped_same_title:{source}"] += 1
            continue
        titles_taken.add(title)
        paper_id = identity if identity is not None else f"distractor:{len(papers):05d}"
        papers.append(Paper(paper_id=paper_id, title=paper.title, year=paper.year, source=paper.source or source))
        identity_of[paper_id] = identity
        if identity is not None:
            record_of[identity] = paper_id
        counts[f"db_papers:{source}"] += 1

    for query in queries:
        in_db = query.identity in record_of
        counts[f"queries:{query.source}:{'in_db' if in_db else 'negative'}"] += 1
        if in_db:
            counts[f"queries_in_db_by_record_source:{record_source[query.identity]}"] += 1
    gold = GoldSet(tuple(queries), tuple(papers), identity_of, record_of, record_work)
    counts["queries"] = len(queries)
    counts["queries_in_db"] = sum(gold.in_db(q) for q in queries)
    counts["queries_resolvable"] = sum(gold.resolvable(q) for q in queries)
    counts["queries_negative"] = len(queries) - counts["queries_in_db"]
    counts["db_papers"] = len(papers)
    return GoldSet(gold.queries, gold.papers, identity_of, record_of, record_work, dict(sorted(counts.items())))


# --- resolving and scoring ----------------------------------------------------------------------------


def _pick(scored: list[tuple[float, str]], year: int | None, years: Mapping[str, int | None]) -> str | None:
    """The production rule: the best score wins; a tie is broken by year when exactly one tied paper has it."""
    if not scored:
        return None
    best = max(s for s, _ in scored)
    tied = sorted(pid for s, pid in scored if s == best)
    if len(tied) > 1 and year is not None:
        same_year = [pid for pid in tied if years.get(pid) == year]
        tied = same_year if len(same_year) == 1 else tied
    return tied[0] if len(tied) == 1 else None


@lru_cache(maxsize=4)
def _scored_pairs(gold: GoldSet, similarity: str) -> tuple[tuple[tuple[float, str], ...], ...]:
    """Per query, every database paper scoring at least min(THRESHOLDS) under `similarity`, exhaustively.

    The substring similarity never exceeds the subsequence one, so pairs are prefiltered by subsequence at
    the same floor (no pair is lost) and scored exactly on the survivors.
    """
    floor = min(THRESHOLDS)
    db_ids = [p.paper_id for p in gold.papers]
    # the production rule for what can be matched (length, venue names) applies to both sides
    db_titles = [usable_title(p.title, CONFIG) or "" for p in gold.papers]
    query_titles = [usable_title(q.entry.title, CONFIG) or "" for q in gold.queries]
    matrix = process.cdist(
        query_titles, db_titles, scorer=LCSseq.normalized_similarity, dtype=np.float64, score_cutoff=floor
    )
    result = []
    for row, title in zip(matrix, query_titles, strict=True):
        if not title:
            result.append(())
            continue
        hits = np.nonzero(row >= floor)[0]
        scorer = SIMILARITIES[similarity]
        scored = (
            (float(row[j]) if similarity == "subsequence" else scorer(title, db_titles[j]), db_ids[j]) for j in hits
        )
        result.append(tuple((s, pid) for s, pid in scored if s >= floor))
    return tuple(result)


def resolve_exhaustive(gold: GoldSet, similarity: str, threshold: float) -> list[str | None]:
    years = {p.paper_id: p.year for p in gold.papers}
    return [
        _pick([(s, pid) for s, pid in scored if s >= threshold], query.entry.year, years)
        for query, scored in zip(gold.queries, _scored_pairs(gold, similarity), strict=True)
    ]


def resolve_lsh(gold: GoldSet, threshold: float) -> list[str | None]:
    """The production path: `InMemoryMatcher.resolve_title` on the query's title and year only."""
    matcher = InMemoryMatcher(gold.papers, MatchConfig(min_similarity=threshold))
    resolutions: list[Resolution] = [matcher.resolve_title(q.entry) for q in gold.queries]
    return [r.paper_id for r in resolutions]


def score_resolutions(gold: GoldSet, resolved: list[str | None]) -> dict[str, float | int]:
    """Precision and recall of one run. Wrong resolutions are split into a wrong paper for a query whose paper
    is in the database and a resolution of a negative; `fp_same_title` counts those whose two normalised
    titles are identical (no title matcher can tell them apart: an unmarked duplicate or a bogus title)."""
    correct = wrong_paper = negatives_resolved = same_title = n_resolved = 0
    for query, paper_id in zip(gold.queries, resolved, strict=True):
        if paper_id is None:
            continue
        n_resolved += 1
        if gold.identity_of.get(paper_id) == query.identity:
            correct += 1
            continue
        if gold.in_db(query):
            wrong_paper += 1
        else:
            negatives_resolved += 1
        same_title += normalize_title(query.entry.title) == normalize_title(gold.paper(paper_id).title)
    n_in_db = sum(gold.in_db(q) for q in gold.queries)
    n_resolvable = sum(gold.resolvable(q) for q in gold.queries)
    n_negative = len(gold.queries) - n_in_db
    counts = dict(n=len(gold.queries), n_in_db=n_in_db, n_resolvable=n_resolvable, n_negative=n_negative)
    counts |= dict(resolved=n_resolved, correct=correct, wrong_paper=wrong_paper)
    counts |= dict(negatives_resolved=negatives_resolved, fp_same_title=same_title)
    return counts | {
        "precision": _share(correct, n_resolved, empty=1.0),  # nothing resolved: nothing wrong
        "recall_resolvable": _share(correct, n_resolvable),
        "recall_all": _share(correct, n_in_db),
        "negative_fp_rate": _share(negatives_resolved, n_negative),
    }


def _share(part: int, whole: int, empty: float = 0.0) -> float:
    return part / whole if whole else empty


def resolve(gold: GoldSet, similarity: str, threshold: float, path: str) -> list[str | None]:
    if path == "lsh":
        if similarity != "subsequence":
            raise ValueError("the production (LSH) path only implements the subsequence similarity")
        return resolve_lsh(gold, threshold)
    return resolve_exhaustive(gold, similarity, threshold)


def evaluate(gold: GoldSet, similarity: str = "subsequence", threshold: float = 0.9, path: str = "lsh") -> dict:
    """Precision/recall of `similarity` at `threshold` on `path` ("lsh": production matcher, "exhaustive")."""
    return {"similarity": similarity, "path": path, "threshold": threshold} | score_resolutions(
        gold, resolve(gold, similarity, threshold, path)
    )


def errors(gold: GoldSet, resolved: list[str | None], similarity: str) -> Iterator[dict[str, object]]:
    """Every false positive and false negative of one run, with both titles and their similarity."""
    score = SIMILARITIES[similarity]
    for query, paper_id in zip(gold.queries, resolved, strict=True):
        title = normalize_title(query.entry.title)
        right = gold.identity_of.get(paper_id) == query.identity if paper_id else False
        if paper_id is not None and not right:
            got = gold.paper(paper_id)
            kind = "fp_wrong_paper" if gold.in_db(query) else "fp_negative"
            yield {
                "kind": kind,
                "query": query.entry.title,
                "query_origin": query.origin,
                "identity": query.identity,
                "matched": got.title,
                "matched_source": got.source,
                "score": round(score(title, normalize_title(got.title)), 4),
            }
        if paper_id is None and gold.in_db(query):
            record = gold.paper(gold.record_of[query.identity])
            yield {
                "kind": "fn" if gold.resolvable(query) else "fn_unusable_title",
                "query": query.entry.title,
                "query_origin": query.origin,
                "identity": query.identity,
                "record": record.title,
                "record_source": record.source,
                "score": round(score(title, normalize_title(record.title)), 4),
            }


def paths_for(similarity: str) -> tuple[str, ...]:
    """The paths a similarity runs on: LSH (production) serves only the subsequence one."""
    return ("lsh", "exhaustive") if similarity == "subsequence" else ("exhaustive",)


def run_all(gold: GoldSet) -> list[dict]:
    """Every similarity on each of its paths at every threshold."""
    rows = []
    for similarity in SIMILARITIES:
        for path in paths_for(similarity):
            for threshold in THRESHOLDS:
                rows.append(evaluate(gold, similarity, threshold, path))
    return rows
