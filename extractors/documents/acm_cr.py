"""ACM-CR (Boudin 2021, boudinfl/acm-cr), a citation-recommendation test collection, into citrec's records.

The collection is ACM DL BibTeX files (`data/acm-dl/<venue>/<venue-year>.bib`) and 50 open-access citing papers
whose citation contexts were extracted by hand (`data/topics+qrels/papers/<venue-year>/<doi>.xml`: `<context>`
excerpts of `<s>` sentences, `cites="13,14"` on a citing sentence, `<reference id="13">DOI</reference>`).

Records are `Paper`s defined as ACM-CR's own `bibtex_to_trec.py` defines its collection: `article` and
`inproceedings` entries, no session papers (a title starting "Session" and no abstract), none of `blacklist.txt`
(the citing papers). The DOI is the entry's key: ACM DL keys every record by its DOI, and ACM's unregistered
`10.5555/` DOIs have no `doi` field at all; a `doi` field that disagrees with the key is counted and the key kept.
A DOI held by several files (journal and proceedings copies) is one paper, merged field by field
(`one_paper_per_doi`). `keywords` are counted but not kept: `Paper` has no field for them.

A citing paper becomes a `ParsedDocument`: each `<context>` a paragraph of its own section (so the ±1-sentence
view never joins two excerpts), each `[n, m-k]` bracket group split into one marker per reference number. A
number the sentence's `cites` names is linked to that reference; any other is unlinked (masked OTHERCIT, never a
context). A cited number written in no bracket of its sentence has no marker: it is a dead letter.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lxml import etree

from extractors.documents.metadata import merge_papers
from mapping.ids import Identifiers, identifier_key_in_url, normalize_doi, paper_id_for
from mapping.records import BibEntry, CounterFn, DeadLetter, Mention, Paper, Paragraph, ParsedDocument, no_count

BIB_FILES = "data/acm-dl/*/*.bib"
CITING_PAPER_FILES = "data/topics+qrels/papers/*/*.xml"
BLACKLIST_FILE = "data/topics+qrels/blacklist.txt"
"""The collection's layout, relative to its root (the repository's checkout)."""

SOURCE = "acm-dl"
"""`Paper.source` of a collection record: what a recipe's pool names to admit only the collection."""
SOURCE_FORMAT = "acm-cr"
STAGE = "acm_cr"
ENTRY_TYPES = ("article", "inproceedings")

_TAG = re.compile(r"</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>")
_WS = re.compile(r"\s+")
_LATEX_SPECIAL = re.compile(r"(?<!\\)([%$&#_])")
_YEAR = re.compile(r"\d{4}")
_VENUE_YEAR = re.compile(r"-((?:19|20)\d\d)$")
_BRACKET = re.compile(r"\[([^\[\]]*)\]")
_ITEM = re.compile(r"(\d+)(?:\s*[-–—]\s*(\d+))?")
_ITEM_LIST = re.compile(r"\s*\d+(?:\s*[-–—]\s*\d+)?(?:\s*[,;]\s*\d+(?:\s*[-–—]\s*\d+)?)*\s*")
_DOI_FORMS = ("10.", "doi:", "https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/")
MAX_RANGE = 100
"""A range marker `[a–b]` spanning more reference numbers than this is no marker (a year range, a page range)."""


# ------------------------------------------------------------------------------------------- BibTeX records


@functools.cache
def _latex_to_text() -> Callable[[str], str]:
    from pylatexenc.latex2text import LatexNodes2Text  # bibtexparser's own LaTeX decoder

    return LatexNodes2Text().latex_to_text


def clean_text(value: str) -> str:
    """A BibTeX field's value as plain text: HTML/JATS tags (`<i>`, `<sup>`, `<inline-formula>`) removed, HTML
    entities (`&amp;`) decoded, LaTeX accents and symbols (`B\\'{e}atrice`, `\\texttimes`) decoded, protecting
    braces removed, whitespace runs squeezed. ACM's abstracts are text, not LaTeX: `%`, `$`, `&`, `#` and `_`
    stay as written (a LaTeX reading would take `10%` for a comment)."""
    text = html.unescape(_TAG.sub("", value))
    if "\\" in text:
        text = _latex_to_text()(_LATEX_SPECIAL.sub(r"\\\1", text))
    return _WS.sub(" ", text.replace("{", "").replace("}", "")).strip()


def _authors(value: str) -> tuple[str, ...]:
    """`Last, First and Other, Name` as `("First Last", "Name Other")`."""
    names = []
    for name in re.split(r"\s+and\s+", clean_text(value)):
        last, _, first = name.partition(",")
        names.append(f"{first.strip()} {last.strip()}".strip() if first else name.strip())
    return tuple(n for n in names if n)


def paper_from_entry(
    entry_type: str,
    key: str,
    fields: Mapping[str, str],
    source: str,
    blacklist: frozenset[str] = frozenset(),
    count: CounterFn = no_count,
) -> Paper | DeadLetter:
    """One BibTeX entry (`fields` by lower-cased name, values as written) as a collection record, or the dead letter
    saying why it is not one (`entry_type`, `no_doi`, `blacklisted`, `session_paper`). `source`: where it was read,
    `path#key` in dead letters."""
    where = f"{source}#{key}"
    kind = entry_type.lower()
    if kind not in ENTRY_TYPES:
        return DeadLetter(where, STAGE, "entry_type", f"@{kind}: only {' and '.join(ENTRY_TYPES)} are records")
    doi = normalize_doi(key)
    if doi is None:
        return DeadLetter(where, STAGE, "no_doi", f"the key {key!r} is no DOI")
    if doi in blacklist:
        return DeadLetter(where, STAGE, "blacklisted", f"{doi} is in {BLACKLIST_FILE} (a citing paper)")
    title = clean_text(fields.get("title", ""))
    abstract = clean_text(fields.get("abstract", ""))
    if title.lower().startswith("session") and not abstract:
        return DeadLetter(where, STAGE, "session_paper", f"title {title[:80]!r} and no abstract")
    stated = normalize_doi(fields.get("doi"))
    if stated is not None and stated != doi:
        count("acm_cr_doi_field_disagrees_with_key", 1)
    if fields.get("keywords", "").strip():
        count("acm_cr_records_with_keywords", 1)
    year = _YEAR.search(fields.get("year", ""))
    return Paper(
        paper_id=paper_id_for(arxiv_id=None, doi=doi, s2_paper_id=None, fallback=None),
        title=title or None,
        abstract=abstract or None,
        authors=_authors(fields.get("author", "")),
        year=int(year.group(0)) if year else None,
        doi=doi,
        source=SOURCE,
    )


def parse_bib(
    text: str, source: str, blacklist: frozenset[str] = frozenset(), count: CounterFn = no_count
) -> Iterator[Paper | DeadLetter]:
    """Every entry of one BibTeX file (bibtexparser) as a record or a dead letter; a block bibtexparser cannot
    read, or a key repeated within the file, is a dead letter too (`bibtex_syntax`, `duplicate_key_in_file`)."""
    import bibtexparser
    from bibtexparser.model import DuplicateBlockKeyBlock

    library = bibtexparser.parse_string(text)
    for entry in library.entries:
        count("acm_cr_entries", 1)
        fields = {f.key.lower(): str(f.value) for f in entry.fields}
        yield paper_from_entry(entry.entry_type, entry.key, fields, source, blacklist, count)
    for block in library.failed_blocks:
        count("acm_cr_entries", 1)
        where = f"{source}#line{block.start_line + 1}"
        if isinstance(block, DuplicateBlockKeyBlock):
            yield DeadLetter(f"{source}#{block.key}", STAGE, "duplicate_key_in_file", "the key is repeated in the file")
        else:
            yield DeadLetter(where, STAGE, "bibtex_syntax", f"{type(block).__name__}: {block.raw[:200]}")


def parse_blacklist(text: str) -> frozenset[str]:
    """`blacklist.txt`: one DOI a line, normalised."""
    return frozenset(d for d in (normalize_doi(line) for line in text.splitlines()) if d)


def one_paper_per_doi(papers: Iterable[Paper], count: CounterFn = no_count) -> list[Paper]:
    """The records merged per paper id (the DOI), in id order: `extractors.documents.metadata.merge_papers` takes
    each field from the first copy that has it, copies in a fixed order, so the result is the same whatever order
    the files are read in (the pipeline's `MergeDatabase` merges the same way). Counts `acm_cr_copies_merged`."""
    by_id: dict[str, list[Paper]] = {}
    for paper in papers:
        by_id.setdefault(paper.paper_id, []).append(paper)
    merged = []
    for paper_id in sorted(by_id):
        copies = by_id[paper_id]
        if len(copies) > 1:
            count("acm_cr_copies_merged", len(copies) - 1)
        merged.append(copies[0] if len(copies) == 1 else merge_papers(copies))
    return merged


# ---------------------------------------------------------------------------------------- citing papers


@dataclass(frozen=True)
class MarkerPiece:
    """One reference number's share of a bracket group, in the sentence's characters: the group's pieces are
    contiguous and cover it ("[46, " and "47]" of "[46, 47]"). A range item `13–15` is the piece of 13; 14 and 15
    get a zero-length piece at its end, which overlaps nothing."""

    start: int
    end: int
    number: str


def marker_pieces(sentence: str, reference_ids: frozenset[str]) -> list[MarkerPiece]:
    """The citation markers of a sentence: bracket groups holding only reference numbers and ranges of them
    (`[3]`, `[21, 33, 35]`, `[13–15, 20]`), split into one piece per number. `[−1, 1]`, `[CLS]` or a number that
    is no reference id of the paper make a group no marker."""
    pieces: list[MarkerPiece] = []
    for group in _BRACKET.finditer(sentence):
        content = group.group(1)
        if not _ITEM_LIST.fullmatch(content):
            continue
        items = list(_ITEM.finditer(content))
        numbers = []
        for item in items:
            first, last = int(item.group(1)), int(item.group(2) or item.group(1))
            numbers.append([str(n) for n in range(first, last + 1)] if 0 <= last - first <= MAX_RANGE else [])
        if not all(numbers) or not all(n in reference_ids for ns in numbers for n in ns):
            continue
        base = group.start(1)
        for k, (item, ns) in enumerate(zip(items, numbers, strict=True)):
            start = group.start() if k == 0 else base + item.start()
            end = group.end() if k == len(items) - 1 else base + items[k + 1].start()
            pieces.append(MarkerPiece(start, end, ns[0]))
            pieces.extend(MarkerPiece(end, end, n) for n in ns[1:])
    return pieces


def _text(element: etree._Element | None) -> str:
    return _WS.sub(" ", "".join(element.itertext())).strip() if element is not None else ""


def bib_entry(bib_id: str, value: str) -> BibEntry:
    """A `<reference>`: its DOI, or the identifier its link stands for (arXiv, ACL Anthology, PubMed; by
    `mapping.ids.identifier_key_in_url`), or nothing ("None", a PDF link). No raw string: the references are
    resolved by identifier only, as ACM-CR's qrels are."""
    doi = normalize_doi(value) if value.lower().startswith(_DOI_FORMS) else None
    if doi:
        return BibEntry(bib_id=bib_id, doi=doi)
    found = Identifiers.from_keys([identifier_key_in_url(value)])
    return BibEntry(bib_id=bib_id, doi=found.doi, arxiv_id=found.arxiv_id, other_ids=found.other_ids)


def citing_year(source: str) -> int | None:
    """The year of a citing paper, from its folder (`papers/sigir-2020/…`): the XML gives none."""
    found = _VENUE_YEAR.search(PurePosixPath(source).parent.name)
    return int(found.group(1)) if found else None


def parse_citing_paper(data: bytes, source: str, count: CounterFn = no_count) -> Iterator[ParsedDocument | DeadLetter]:
    """One citing paper's XML: the document, then a dead letter (`cite_without_marker`, source
    `path#context/sentence`) for each number a sentence's `cites` names but none of its brackets shows. A file that
    is no such XML is one dead letter (`xml_syntax`, `no_doi`)."""
    try:
        root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))
    except etree.XMLSyntaxError as err:
        yield DeadLetter(source, STAGE, "xml_syntax", str(err)[:500])
        return
    doi = normalize_doi(_text(root.find("doi")))
    if doi is None:
        yield DeadLetter(source, STAGE, "no_doi", f"<doi> holds {_text(root.find('doi'))[:80]!r}")
        return
    bib_entries = tuple(bib_entry(r.get("id", ""), _text(r)) for r in root.iter("reference") if r.get("id"))
    reference_ids = frozenset(e.bib_id for e in bib_entries)
    paragraphs, letters = [], []
    for section_index, context in enumerate(root.iter("context")):
        text, spans, mentions = "", [], []
        for s_index, sentence in enumerate(context.iter("s")):
            words = _text(sentence)
            if not words:
                continue
            offset = len(text) + (1 if text else 0)
            text = f"{text} {words}" if text else words
            spans.append((offset, offset + len(words)))
            cited = {c.strip() for c in (sentence.get("cites") or "").split(",") if c.strip()}
            pieces = marker_pieces(words, reference_ids)
            for piece in pieces:
                linked = piece.number if piece.number in cited else None
                mentions.append(
                    Mention(offset + piece.start, offset + piece.end, words[piece.start : piece.end], linked)
                )
            shown = {p.number for p in pieces}
            for number in sorted(cited - shown, key=lambda n: (len(n), n)):
                count("acm_cr_cites_without_marker", 1)
                letters.append(
                    DeadLetter(
                        f"{source}#{context.get('id')}/{s_index + 1}",
                        STAGE,
                        "cite_without_marker",
                        f"cites {number}, which no bracket of the sentence shows: {words[:160]!r}",
                    )
                )
        if text:
            section = context.get("section") or None
            paragraphs.append(Paragraph(text, section_index, section, tuple(spans), tuple(mentions)))
    yield ParsedDocument(
        paper_id=paper_id_for(arxiv_id=None, doi=doi, s2_paper_id=None, fallback=None),
        source=source,
        source_format=SOURCE_FORMAT,
        title=_text(root.find("title")) or None,
        abstract=_text(root.find("abstract")) or None,
        authors=(),
        paragraphs=tuple(paragraphs),
        bib_entries=bib_entries,
        doi=doi,
        year=citing_year(source),
    )
    yield from letters


# ------------------------------------------------------------------------------------ the whole collection


def _files(root: Path, pattern: str) -> list[Path]:
    return sorted(root.glob(pattern))


def read_blacklist(root: Path) -> frozenset[str]:
    path = root / BLACKLIST_FILE
    return parse_blacklist(path.read_text(encoding="utf-8")) if path.is_file() else frozenset()


def read_collection(root: Path, count: CounterFn = no_count) -> tuple[list[Paper], list[DeadLetter]]:
    """The collection's records under `root` (one per DOI, in id order) and the entries that are none."""
    blacklist = read_blacklist(root)
    records, letters = [], []
    for path in _files(root, BIB_FILES):
        for outcome in parse_bib(path.read_text(encoding="utf-8"), str(path), blacklist, count):
            (letters if isinstance(outcome, DeadLetter) else records).append(outcome)
    return one_paper_per_doi(records, count), letters


def read_citing_papers(root: Path, count: CounterFn = no_count) -> tuple[list[ParsedDocument], list[DeadLetter]]:
    """The citing papers under `root`, in path order, and the dead letters of their files and citations."""
    documents, letters = [], []
    for path in _files(root, CITING_PAPER_FILES):
        for outcome in parse_citing_paper(path.read_bytes(), str(path), count):
            (letters if isinstance(outcome, DeadLetter) else documents).append(outcome)
    return documents, letters
