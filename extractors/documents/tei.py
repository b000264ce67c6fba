"""GROBID `processFulltextDocument` TEI (GROBID 0.5 to 0.8) into a `ParsedDocument`, with lxml.

Paragraphs are the outermost text elements of the abstract, body and back matter, in document order; a `div` is
a section; sentences are GROBID's `<s>` where present; whitespace runs collapse as the text is assembled, so
offsets stay exact. Markers in a heading or nested in another marker become paragraphs no context is cut from.
Where each piece of text and each identifier is read from: docs/design.md.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import fields
from pathlib import PurePosixPath
from typing import ParamSpec, TypeVar

from lxml import etree

from extractors.documents.sentences import split_sentences
from mapping.ids import (
    Identifiers,
    document_ids,
    identifier_key,
    identifier_key_in_url,
    keys_in_reference_text,
    normalize_arxiv_id,
    normalize_doi,
    other_id_keys,
)
from mapping.records import BibEntry, Mention, Paragraph, ParsedDocument

TEI_NS = "http://www.tei-c.org/ns/1.0"
NS = {"t": TEI_NS}
_CONTAINERS = frozenset(f"{{{TEI_NS}}}{tag}" for tag in ("p", "figDesc", "note", "item", "cell"))
_WS = re.compile(r"\s+")
# Qualified tag names read in the per-element loops, made once (an f-string per element was a tenth of parsing).
_REF, _S, _DIV, _FIGURE, _NOTE, _HEAD, _LABEL, _LIST_BIBL = (
    f"{{{TEI_NS}}}{tag}" for tag in ("ref", "s", "div", "figure", "note", "head", "label", "listBibl")
)
_PERS_NAME, _FORENAME, _SURNAME, _AUTHOR = (
    f"{{{TEI_NS}}}{tag}" for tag in ("persName", "forename", "surname", "author")
)
_ANALYTIC, _MONOGR, _TITLE, _IMPRINT, _DATE = (
    f"{{{TEI_NS}}}{tag}" for tag in ("analytic", "monogr", "title", "imprint", "date")
)
# The kinds of paragraph that carry markers but no running text (see the module docstring).
HEADING, MARKER = "heading", "marker"
_CATEGORY_IN_IDNO = re.compile(r"\[([a-z\-]+(?:\.[A-Za-z\-]+)?)\]")


class DocumentError(ValueError):
    """A document that cannot become a record; `reason` is the short drop reason (a counter name)."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


# What a parser's own bug or an unforeseen input shape raises; `raises_only_document_errors` names them.
PARSER_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    LookupError,
    AttributeError,
    ArithmeticError,
    RecursionError,
)
_P = ParamSpec("_P")
_R = TypeVar("_R")


def raises_only_document_errors(parse: Callable[_P, _R]) -> Callable[_P, _R]:
    """Let `parse` raise nothing but `DocumentError`: anything in `PARSER_ERRORS` becomes
    `DocumentError("parser_error", "<Type>: <message>")`, so a caller that only handles DocumentError (one
    metadata line in a file of millions) never crashes on one record."""

    @functools.wraps(parse)
    def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return parse(*args, **kwargs)
        except DocumentError:
            raise
        except PARSER_ERRORS as err:
            raise DocumentError("parser_error", f"{type(err).__name__}: {err}") from err

    return guarded


def _q(tag: str) -> str:
    return f"{{{TEI_NS}}}{tag}"


def _collapse(text: str) -> str:
    """Whitespace runs as one space. Every whitespace character but the space is unprintable, so printable text
    with no double space is what the substitution gives back unchanged (most text is; both checks run at C
    speed, a fifth of the substitution's cost)."""
    return text if text.isprintable() and "  " not in text else _WS.sub(" ", text)


def _clean(text: str | None) -> str | None:
    """Whitespace runs collapsed to one space, ends stripped; None when nothing is left. `str.split()` splits on
    exactly the characters `\\s` matches in a str pattern (both are `str.isspace`; tests/test_tei.py checks every
    code point), at a third of the regex's cost."""
    if text is None:
        return None
    return " ".join(text.split()) or None


def _child(
    elem: etree._Element, tag: str, attribute: str | None = None, value: str | None = None
) -> etree._Element | None:
    """The first child of `elem` with `tag` (and `attribute` equal to `value`): what `elem.find(tag)` (or
    `elem.find(f"{tag}[@{attribute}='{value}']")`) finds, without ElementPath's cost per call (a bib entry
    made a dozen such calls)."""
    for child in elem:
        if child.tag == tag and (attribute is None or child.get(attribute) == value):
            return child
    return None


def _text_of(elem: etree._Element | None) -> str | None:
    if elem is None:
        return None
    return _clean("".join(elem.itertext()))


def parse_date(value: str | None) -> tuple[dt.date | None, int | None]:
    """`2018-06-01` -> (date, 2018); `2018-06` and `2018` -> (None, 2018): a date only when it is a day."""
    if not value:
        return None, None
    match = re.match(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?", value)
    if not match:
        return None, None
    year = int(match.group(1))
    if not 1000 <= year <= 2999:
        return None, None
    if match.group(3):
        try:
            return dt.date(year, int(match.group(2)), int(match.group(3))), year
        except ValueError:
            return None, year
    return None, year


# Steps of `_TextBuilder.walk`'s stack: read an element's text and queue its children; handle one child;
# append a child's tail; close an `<s>` sentence (then its tail); close a marker read inside another (then its tail).
_OPEN, _CHILD, _TAIL, _CLOSE_SENTENCE, _CLOSE_MARKER = range(5)


def _holds_marker(elem: etree._Element) -> bool:
    """Whether a marker lies anywhere below `elem`."""
    return any(ref.get("type") == "bibr" for ref in elem.iterdescendants(_REF))


class _TextBuilder:
    """Assembles a paragraph's text from an element tree, recording mention and `<s>` spans.

    A marker is one mention with its whole text; a marker with markers inside is kept in `outer_markers`, whose
    `marker_paragraphs` read each again in `inside_marker` mode, where every marker below it is a mention.
    """

    __slots__ = ("parts", "length", "mentions", "sentences", "outer_markers", "inside_marker", "spans")

    def __init__(self, inside_marker: bool = False) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.mentions: list[Mention] = []
        self.sentences: list[tuple[int, int]] = []
        self.outer_markers: list[etree._Element] = []
        self.inside_marker = inside_marker
        self.spans: list[list] = []  # inside a marker: [start, end, bib id] of each marker below it, as met

    def _ends_with_space(self) -> bool:
        return not self.parts or self.parts[-1].endswith(" ")

    def append(self, raw: str | None) -> None:
        if not raw:
            return
        text = _collapse(raw)
        if text.startswith(" ") and self._ends_with_space():
            text = text[1:]
        if text:
            self.parts.append(text)
            self.length += len(text)

    def walk(self, elem: etree._Element) -> None:
        """Depth first through `elem`: each element's text, then its children, each followed by its tail; `<s>`
        spans and mentions recorded. The container's own children are read in a loop where they are markers
        or childless markup (most are); anything nested goes through `_walk_stack`."""
        self.append(elem.text)
        for child in elem:
            tag = child.tag
            if tag == _REF and child.get("type") == "bibr":
                self._add_mention(child)
                self.append(child.tail)
            elif isinstance(tag, str) and tag != _S and not len(child):
                self.append(child.text)
                self.append(child.tail)
            else:
                self._walk_stack([(_CHILD, child, 0)])

    def _walk_stack(self, stack: list[tuple[int, etree._Element, int]]) -> None:
        """The walk with an explicit stack (inline markup can nest thousands deep), until `stack` is empty."""
        while stack:
            step, node, start = stack.pop()
            if step == _TAIL:
                self.append(node.tail)
            elif step == _CLOSE_SENTENCE:
                end = self.length
                if self.parts and self.parts[-1].endswith(" "):
                    end -= 1
                if end > start:
                    self.sentences.append((start, end))
                self.append(node.tail)
            elif step == _CLOSE_MARKER:  # `start` is the marker's place in `spans`
                self.spans[start][1] = self.length
                self.append(node.tail)
            elif step == _OPEN:
                self.append(node.text)
                stack.extend((_CHILD, child, 0) for child in reversed(node))
            elif not isinstance(node.tag, str):  # comments, processing instructions
                self.append(node.tail)
            elif node.tag == _REF and node.get("type") == "bibr":
                if self.inside_marker:  # a nested marker: its span, and the markers inside it, read on
                    self.spans.append([self.length, self.length, _bib_id(node)])
                    stack.append((_CLOSE_MARKER, node, len(self.spans) - 1))
                    stack.append((_OPEN, node, 0))
                else:
                    self._add_mention(node)
                    self.append(node.tail)
            elif node.tag == _S:
                if not self._ends_with_space():
                    self.append(" ")
                stack.append((_CLOSE_SENTENCE, node, self.length))
                stack.append((_OPEN, node, 0))
            else:
                stack.append((_TAIL, node, 0))
                stack.append((_OPEN, node, 0))

    def _add_mention(self, ref: etree._Element) -> None:
        raw = _collapse("".join(ref.itertext()))
        self.append(raw)
        stripped = raw.strip()
        end = self.length - (len(raw) - len(raw.rstrip(" ")))
        start = end - len(stripped)
        bib_id = _bib_id(ref)
        if len(ref) and _holds_marker(ref):
            self.outer_markers.append(ref)
        if stripped:
            self.mentions.append(Mention(start=start, end=end, text=stripped, bib_id=bib_id))
        else:  # an empty marker still counts as a mention, at the position where it stood
            self.mentions.append(Mention(start=self.length, end=self.length, text="", bib_id=bib_id))

    def paragraph(
        self, section_index: int, heading: str | None, kind: str, unmarked: _UnmarkedSentences | None = None
    ) -> Paragraph | None:
        text = "".join(self.parts)
        stripped = text.rstrip(" ")
        mentions = list(self.mentions)
        for start, end, bib_id in self.spans:  # the markers read inside a marker, the spaces at their ends left out
            raw = stripped[start:end]
            marker = raw.strip(" ")
            start = start + len(raw) - len(raw.lstrip(" ")) if marker else min(end, len(stripped))
            mentions.append(Mention(start=start, end=start + len(marker), text=marker, bib_id=bib_id))
        if not stripped and not mentions:
            return None
        length = len(stripped)
        sentences = tuple((a, min(b, length)) for a, b in self.sentences if a < length) if self.sentences else ()
        if not sentences:
            if mentions or unmarked is None:
                sentences = split_sentences(stripped, [(m.start, m.end) for m in mentions])
            else:
                sentences = unmarked.of(stripped)
        return Paragraph(
            text=stripped,
            section_index=section_index,
            section_heading=heading,
            sentences=sentences,
            mentions=tuple(mentions),
            kind=kind,
        )

    def marker_paragraphs(self, section_index: int, heading: str | None) -> list[Paragraph]:
        """A paragraph of kind "marker" for each marker with markers inside it: its text, and each marker below
        it (at any depth) as a mention."""
        paragraphs = []
        for ref in self.outer_markers:
            builder = _TextBuilder(inside_marker=True)
            builder._walk_stack([(_OPEN, ref, 0)])
            paragraph = builder.paragraph(section_index, heading, MARKER)
            if paragraph is not None:
                paragraphs.append(paragraph)
        return paragraphs


class _UnmarkedSentences:
    """`split_sentences` of the paragraphs of one document that hold no marker, each distinct text split once: a
    document repeats many short texts (a fifth of its table cells, on the real papers), and the splitter answers
    a text alone, so a repeat's sentences are the first one's."""

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[int, int], ...]] = {}

    def of(self, text: str) -> tuple[tuple[int, int], ...]:
        sentences = self._known.get(text)
        if sentences is None:
            sentences = self._known[text] = split_sentences(text)
        return sentences


def _bib_id(ref: etree._Element) -> str | None:
    """The bib id a marker links to: its `target` without the leading "#"; None without one."""
    target = (ref.get("target") or "").strip()
    return target[1:] if target.startswith("#") else (target or None)


def _own_section(elem: etree._Element) -> str | None:
    """The paragraph kind of a section that `elem` opens whatever encloses it: a figure's, a footnote's."""
    if elem.tag == _FIGURE:
        return "caption"
    if elem.tag == _NOTE and elem.get("place") == "foot":
        return "note"
    return None


def _outermost_containers(
    root: etree._Element, skip: frozenset[str] = frozenset()
) -> list[tuple[etree._Element, etree._Element, str]]:
    """Paragraph-like elements under `root` with no paragraph-like ancestor below `root`, in order, each with the
    element that defines its section and the paragraph kind that implies: the innermost figure or footnote
    around it (itself included), else its innermost `div`, else `root` ("body"). A `head` holding a marker is
    one too, read whole (it becomes a "heading" paragraph). Sections are handed down the walk, so no container
    looks up its ancestors."""
    found: list[tuple[etree._Element, etree._Element, str]] = []
    # an explicit stack, not recursion: markup can nest thousands deep; each entry carries the innermost
    # figure or footnote above it (with its kind) and the innermost div
    stack: list[tuple[etree._Element, etree._Element | None, str, etree._Element | None]] = [
        (child, None, "body", None) for child in reversed(root)
    ]
    while stack:
        child, special, special_kind, div = stack.pop()
        tag = child.tag
        if not isinstance(tag, str) or tag in skip:
            continue
        if tag == _FIGURE or tag == _NOTE:  # `_own_section`, inlined: this loop meets every element
            kind = _own_section(child)
            if kind is not None:
                special, special_kind = child, kind
        if tag in _CONTAINERS or (tag == _HEAD and _holds_marker(child)):
            if special is not None:
                found.append((child, special, special_kind))
            else:
                found.append((child, div if div is not None else root, "body"))
        elif len(child):  # a leaf that holds no text of a paragraph (a label, a graphic) adds nothing
            if tag == _DIV:
                div = child
            stack.extend([(grandchild, special, special_kind, div) for grandchild in reversed(child)])
    return found


def _heading_of(section: etree._Element, kind: str) -> str | None:
    head = _child(section, _HEAD)
    heading = _text_of(head)
    if kind == "caption":
        label = _text_of(_child(section, _LABEL))
        return heading or (f"Figure {label}" if label else "Figure caption")
    if kind == "note":
        return heading or "Footnote"
    return heading


_SKIPPED_AREAS = frozenset({_LIST_BIBL})


def _paragraphs(tree: etree._Element) -> tuple[Paragraph, ...]:
    paragraphs: list[Paragraph] = []
    # A section's number and heading, by order of its first paragraph (see below). Keyed by the element itself, not
    # id(): lxml makes element proxies on access and frees them, so an id() can be reused by another section's proxy;
    # a dict key keeps the proxy (and its identity) alive. A section's kind follows from its element and area, so
    # its heading is read once, not once per paragraph.
    sections: dict[etree._Element, tuple[int, str | None]] = {}
    areas: list[tuple[etree._Element, str]] = []
    abstract = tree.find(f"{_q('teiHeader')}/{_q('profileDesc')}/{_q('abstract')}")
    if abstract is not None:
        areas.append((abstract, "abstract"))
    text = tree.find(_q("text"))
    if text is not None:
        for area_tag, kind in (("front", "body"), ("body", "body"), ("back", "back")):
            area = text.find(_q(area_tag))
            if area is not None:
                areas.append((area, kind))
    found = [
        (area, container, section, area_kind if kind == "body" else kind)
        for area, area_kind in areas
        for container, section, kind in _outermost_containers(area, skip=_SKIPPED_AREAS)
    ]

    def number(area: etree._Element, section: etree._Element, kind: str) -> None:
        if section not in sections:
            heading = _heading_of(section, kind) if section is not area else None
            if kind == "abstract":
                heading = heading or "Abstract"
            sections[section] = (len(sections), heading)

    # sections are numbered by their first paragraph of running text; one that only a heading has comes after all
    for area, container, section, kind in found:
        if container.tag != _HEAD:
            number(area, section, kind)
    unmarked = _UnmarkedSentences()
    for area, container, section, kind in found:
        number(area, section, kind)
        index, heading = sections[section]
        if len(container):
            builder = _TextBuilder()
            builder.walk(container)
            paragraph = builder.paragraph(index, heading, HEADING if container.tag == _HEAD else kind, unmarked)
            nested = builder.marker_paragraphs(index, heading)
        else:  # a childless container (most table cells): what the builder makes of its text alone
            text = _clean(container.text)
            paragraph = (
                Paragraph(
                    text=text,
                    section_index=index,
                    section_heading=heading,
                    sentences=unmarked.of(text),
                    mentions=(),
                    kind=kind,
                )
                if text
                else None
            )
            nested = []
        if paragraph is not None:
            paragraphs.append(paragraph)
        paragraphs.extend(nested)
    return tuple(paragraphs)


def _person_name(author: etree._Element) -> str | None:
    """The forenames (each one's own text) then the first surname (all its text) of the author's `persName`."""
    pers = _child(author, _PERS_NAME)
    if pers is None:
        return None
    names: list[str] = []
    surname = None
    surname_seen = False
    for child in pers:  # one pass over the children, not a search per name part
        if child.tag == _FORENAME:
            name = _clean(child.text)
            if name:
                names.append(name)
        elif child.tag == _SURNAME and not surname_seen:
            surname_seen = True
            surname = _clean("".join(child.itertext()) if len(child) else child.text)
    if surname:
        names.append(surname)
    return " ".join(names) or None


# `idno/@type` (lower-cased) to key kinds; an untyped idno is what GROBID makes of "abs/1901.00596" or "doi: …"
_IDNO_KINDS = {"arxiv": "arxiv", "doi": "doi", "pmid": "pmid", "pmcid": "pmcid"}
_BROKEN_IDNO = re.compile(r"(?<=[/-])\s+")


def _idno_key(idno: etree._Element) -> str | None:
    """The key of an `idno`: typed arXiv/DOI/PMID/PMCID, or an untyped one that reads as a DOI or arXiv id. An id
    holds no space, so one a line break left after its `/` or `-` is closed up (`10.1212/ WNL.57.9.1701`)."""
    kind = (idno.get("type") or "").lower()
    value = _BROKEN_IDNO.sub("", _text_of(idno) or "")
    if not kind:
        kind = "doi" if "doi" in value.lower() or value.startswith("10.") else "arxiv"
    return identifier_key(_IDNO_KINDS[kind], value) if kind in _IDNO_KINDS else None


def _bib_keys(struct: etree._Element, raw: str | None) -> list[str | None]:
    """A biblStruct's identifier keys, strongest evidence first: its `idno`s in document order, the links of its
    `ptr/@target`s (arxiv.org, doi.org, PubMed, ...), then an arXiv id or DOI in the raw reference string."""
    keys = [_idno_key(idno) for idno in struct.iter(_q("idno"))]
    keys.extend(identifier_key_in_url(ptr.get("target")) for ptr in struct.iter(_q("ptr")))
    keys.extend(keys_in_reference_text(raw))
    return keys


_IDENTIFIER_FIELDS = tuple(f.name for f in fields(Identifiers))


def _titles_and_authors(part: etree._Element | None) -> tuple[dict[str, etree._Element], list[etree._Element]]:
    """An `analytic` or `monogr` read in one pass: its first `title` (key ""), first `title[@type='main']`
    ("main"), first `title[@level='j']` and `[@level='m']` ("j", "m"), and its `author` children in order."""
    titles: dict[str, etree._Element] = {}
    authors: list[etree._Element] = []
    if part is None:
        return titles, authors
    for child in part:
        if child.tag == _AUTHOR:
            authors.append(child)
        elif child.tag == _TITLE:
            titles.setdefault("", child)
            if child.get("type") == "main":
                titles.setdefault("main", child)
            level = child.get("level")
            if level == "j" or level == "m":
                titles.setdefault(level, child)
    return titles, authors


def _bib_entry(struct: etree._Element, index: int) -> BibEntry:
    bib_id = struct.get("{http://www.w3.org/XML/1998/namespace}id") or f"b{index}"
    analytic = monogr = raw_note = None
    for child in struct:  # the first analytic, monogr and raw_reference note, in one pass
        if child.tag == _ANALYTIC and analytic is None:
            analytic = child
        elif child.tag == _MONOGR and monogr is None:
            monogr = child
        elif child.tag == _NOTE and raw_note is None and child.get("type") == "raw_reference":
            raw_note = child
    analytic_titles, analytic_authors = _titles_and_authors(analytic)
    monogr_titles, monogr_authors = _titles_and_authors(monogr)
    title = None
    venue = None
    if analytic is not None:
        title = _text_of(analytic_titles.get("main")) or _text_of(analytic_titles.get(""))
    if monogr is not None:
        monogr_title = (
            _text_of(monogr_titles.get("j")) or _text_of(monogr_titles.get("m")) or _text_of(monogr_titles.get(""))
        )
        if title is None:
            title = monogr_title
        else:
            venue = monogr_title
    names = (_person_name(a) for a in (analytic_authors or monogr_authors))
    authors = tuple(n for n in names if n)
    year = None
    # `.//imprint/date`: the first date child of the first imprint (in document order) that has one
    date = next((d for imprint in struct.iter(_IMPRINT) for d in imprint if d.tag == _DATE), None)
    if date is not None:
        _, year = parse_date(date.get("when") or _text_of(date))
    raw = _text_of(raw_note)
    ids = Identifiers.from_keys(_bib_keys(struct, raw))
    return BibEntry(
        bib_id=bib_id,
        title=title,
        authors=authors,
        year=year,
        venue=venue,
        raw=raw,
        **{name: getattr(ids, name) for name in _IDENTIFIER_FIELDS},
    )


@raises_only_document_errors
def bib_entry_from_struct(data: bytes, bib_id: str) -> BibEntry:
    """One serialised `biblStruct` (as GROBID's processCitationList answers for a raw reference string) into the
    `BibEntry` that `parse_tei` would make of it, named `bib_id`. Raises `DocumentError` when it cannot."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        struct = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as err:
        raise DocumentError("malformed_xml", str(err)) from err
    if struct.tag != _q("biblStruct"):
        raise DocumentError("not_biblstruct", f"root element is {struct.tag!r}, not a TEI biblStruct")
    struct.set("{http://www.w3.org/XML/1998/namespace}id", bib_id)
    return _bib_entry(struct, 0)


def _parse_deep_xml(data: bytes) -> etree._Element:
    """A document nested deeper than libxml2 allows (2,048 levels even with `huge_tree`), read with the
    standard library's expat, which has no depth limit, into an lxml tree the rest of the parser walks."""
    builder = etree.TreeBuilder()
    parser = ElementTree.XMLParser(target=builder)  # expat: no external entities are fetched
    try:
        parser.feed(data)
        return parser.close()
    except ElementTree.ParseError as err:
        raise DocumentError("malformed_xml", str(err)) from err


def parse_xml_root(data: bytes) -> etree._Element:
    """A TEI file's XML tree (no entities resolved, nothing fetched, any depth), or `DocumentError`: `empty_file`,
    `undecodable_bytes`, `malformed_xml` (also what a GROBID answer cut short or an HTML page gives)."""
    if not data or not data.strip():
        raise DocumentError("empty_file", "the file has no content")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True, remove_comments=False)
    try:
        return etree.fromstring(data, parser)
    except etree.XMLSyntaxError as err:
        if "Excessive depth" in str(err):
            return _parse_deep_xml(data)
        if "encoding" in str(err).lower() or "utf-8" in str(err).lower() or "bytes" in str(err).lower():
            raise DocumentError("undecodable_bytes", str(err)) from err
        raise DocumentError("malformed_xml", str(err)) from err


@raises_only_document_errors
def parse_tei(data: bytes, source: str) -> ParsedDocument:
    """Parse one GROBID TEI document. Raises `DocumentError` with a drop reason when it cannot."""
    root = parse_xml_root(data)
    if root.tag != _q("TEI"):
        raise DocumentError("not_tei", f"root element is {root.tag!r}, not TEI")

    header = root.find(_q("teiHeader"))
    file_desc = header.find(_q("fileDesc")) if header is not None else None
    title = None
    source_struct = None
    if file_desc is not None:
        title = _text_of(file_desc.find(f"{_q('titleStmt')}/{_q('title')}[@type='main']")) or _text_of(
            file_desc.find(f"{_q('titleStmt')}/{_q('title')}")
        )
        source_struct = file_desc.find(f"{_q('sourceDesc')}/{_q('biblStruct')}")
    authors: tuple[str, ...] = ()
    arxiv_id = doi = None
    other_keys: list[str | None] = []
    categories: tuple[str, ...] = ()
    date = year = None
    if source_struct is not None:
        if title is None:
            title = _text_of(source_struct.find(f"{_q('analytic')}/{_q('title')}"))
        analytic = source_struct.find(_q("analytic"))
        if analytic is not None:
            authors = tuple(n for n in (_person_name(a) for a in analytic.findall(_q("author"))) if n)
        for idno in source_struct.findall(_q("idno")):
            kind = (idno.get("type") or "").lower()
            value = _text_of(idno)
            if kind == "arxiv" and arxiv_id is None:
                arxiv_id = normalize_arxiv_id(value)
                cat = _CATEGORY_IN_IDNO.search(value or "")
                categories = (cat.group(1),) if cat else ()
            elif kind == "doi" and doi is None:
                doi = normalize_doi(value)
            elif kind in ("pmid", "pmcid"):
                other_keys.append(identifier_key(kind, value))
        when = source_struct.find(f"{_q('monogr')}/{_q('imprint')}/{_q('date')}")
        if when is not None:
            date, year = parse_date(when.get("when"))
    if year is None and file_desc is not None:
        pub = file_desc.find(f"{_q('publicationStmt')}/{_q('date')}")
        if pub is not None:
            date, year = parse_date(pub.get("when"))

    paragraphs = _paragraphs(root)
    abstract_text = " ".join(p.text for p in paragraphs if p.kind == "abstract") or None
    bib_entries = tuple(
        _bib_entry(struct, i) for i, struct in enumerate(root.iterfind(f".//{_q('listBibl')}/{_q('biblStruct')}"))
    )
    body = [p for p in paragraphs if p.kind not in ("abstract", HEADING, MARKER)]
    if not body:
        raise DocumentError("no_body", "the TEI has no paragraph outside the abstract")
    stem = PurePosixPath(source.split("#", 1)[0]).name
    for suffix in (".gz", ".xml", ".tei", ".grobid", ".pdf"):
        stem = stem.removesuffix(suffix)
    # A TEI without a title goes on: its header's or its file name's identifiers (an arXiv id, a DOI, an ACL
    # Anthology id, a database record's paper id) may find its title in the database; the merge dead-letters it
    # `no_title` when none does.
    paper_id, arxiv_id, doi = document_ids(arxiv_id=arxiv_id, doi=doi, s2_paper_id=None, stem=stem)
    return ParsedDocument(
        paper_id=paper_id,
        source=source,
        source_format="tei",
        title=title,
        abstract=abstract_text,
        authors=authors,
        paragraphs=paragraphs,
        bib_entries=bib_entries,
        arxiv_id=arxiv_id,
        doi=doi,
        date=date,
        year=year,
        categories=categories,
        other_ids=other_id_keys(other_keys),
    )
