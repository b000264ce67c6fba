"""Identifier normalisation: arXiv ids (new and old style), DOIs, the other kinds of identifier a reference or a
paper can carry (PubMed, PubMed Central, ACL Anthology, OpenAlex, Microsoft Academic, DBLP), and the paper-id rule.

Every identifier is also a join key `kind:value` (`identifier_key`); `KEY_KINDS` orders the kinds strongest
first, the order in which references are resolved and document ids canonicalised. The paper-id rule and
the normalised forms: docs/design.md.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass

# New-style ids: YYMM.NNNN (2007-2014) or YYMM.NNNNN (2015-), optional version.
_NEW_ARXIV = re.compile(r"(?<![\w.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\w.]*\d)", re.ASCII)
# Old-style ids: archive[.SUBJ]/YYMMNNN, optional version. The subject class is not part of the id.
_OLD_ARXIV = re.compile(r"(?<![\w-])([a-z][a-z-]*)(?:\.[A-Za-z]{2})?/(\d{7})(?:v\d+)?(?!\d)", re.ASCII)
_DOI = re.compile(r"10\.\d{4,9}/\S+", re.ASCII | re.IGNORECASE)
_ARXIV_PREFIX = re.compile(r"^\s*(?:arxiv\s*:\s*|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.I)
_DOI_TRAILING = ".,;:]}>\"'"

_OLD_ARCHIVES = frozenset(
    """acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas cond-mat
    cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin nucl-ex nucl-th patt-sol
    physics plasm-ph q-alg q-bio quant-ph solv-int supr-con""".split()
)

KEY_KINDS = ("arxiv", "doi", "s2corpus", "s2", "pmid", "pmcid", "acl", "openalex", "mag", "dblp")
"""Identifier kinds, strongest first: references resolve through the first key that finds a paper."""
OTHER_KINDS = ("pmid", "pmcid", "acl", "openalex", "mag", "dblp")
"""The kinds kept in `other_ids` (arXiv ids, DOIs, S2 ids and corpus ids have fields of their own)."""
_METHODS = {"arxiv": "arxiv_id", "s2corpus": "s2_corpus_id", "s2": "s2_paper_id"}


def normalize_arxiv_id(value: str | None) -> str | None:
    """Return the versionless arXiv id in `value` (`arXiv:1905.00003v2` -> `1905.00003`), or None.

    Old-style ids lose their subject class, as arXiv itself does (`math.GT/0309136` -> `math/0309136`).
    """
    if not value:
        return None
    text = _ARXIV_PREFIX.sub("", value.strip())
    match = _OLD_ARXIV.search(text)
    if match and match.group(1).lower() in _OLD_ARCHIVES:
        return f"{match.group(1).lower()}/{match.group(2)}"
    match = _NEW_ARXIV.search(text)
    if match:
        return match.group(1)
    return None


def _strip_doi_tail(doi: str) -> str:
    """Trailing punctuation off a DOI; a closing parenthesis only when it closes nothing inside the DOI."""
    while doi:
        stripped = doi.rstrip(_DOI_TRAILING)
        if stripped.endswith(")") and stripped.count("(") < stripped.count(")"):
            stripped = stripped[:-1]
        if stripped == doi:
            break
        doi = stripped
    return doi


def normalize_doi(value: str | None) -> str | None:
    """Return the lower-cased DOI in `value` without resolver prefix or trailing punctuation, or None."""
    if not value:
        return None
    text = urllib.parse.unquote(value.strip())
    match = _DOI.search(text)
    if not match:
        return None
    doi = _strip_doi_tail(match.group(0))
    return doi.lower() if "/" in doi and not doi.endswith("/") else None


def _text_of(value: object) -> str | None:
    """An identifier value as stripped text: text as is, an integer as its digits; anything else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value.strip() or None
    return None


def _digits(text: str, max_digits: int) -> str | None:
    if text.isascii() and text.isdigit() and len(text.lstrip("0")) <= max_digits and int(text) > 0:
        return str(int(text))
    return None


_PMID_URL = re.compile(r"^(?:https?://)?(?:www\.)?(?:pubmed\.ncbi\.nlm\.nih\.gov|ncbi\.nlm\.nih\.gov/pubmed)/", re.I)
_PMID_PREFIX = re.compile(r"^(?:pmid|pubmed(?:\s*id)?)\s*:?\s*", re.I)


def normalize_pmid(value: object) -> str | None:
    """A PubMed id (`12345678`, `PMID: 12345678`, a pubmed.ncbi.nlm.nih.gov URL) as digits, or None."""
    text = _text_of(value)
    if text is None:
        return None
    text = _PMID_PREFIX.sub("", _PMID_URL.sub("", text)).rstrip("/")
    return _digits(text, 9)


_PMC_URL = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:ncbi\.nlm\.nih\.gov/pmc/articles|pmc\.ncbi\.nlm\.nih\.gov/articles)/", re.I
)
_PMC_PREFIX = re.compile(r"^(?:pmcid\s*:?\s*)?(?:pmc\s*)?", re.I)


def normalize_pmcid(value: object) -> str | None:
    """A PubMed Central id (`PMC1950857`, `pmc1950857`, bare digits as S2 and OpenAlex give them, a PMC article
    URL) as `PMC<digits>`, or None."""
    text = _text_of(value)
    if text is None:
        return None
    digits = _digits(_PMC_PREFIX.sub("", _PMC_URL.sub("", text).rstrip("/")), 10)
    return f"PMC{digits}" if digits else None


_OPENALEX = re.compile(r"^(?:(?:https?://)?(?:api\.)?(?:sem)?openalex\.org/(?:works?/)?)?(W)(\d{1,12})/?$", re.I)


def normalize_openalex_id(value: object) -> str | None:
    """An OpenAlex work id (`W2741809807`, `https://openalex.org/W2741809807`, or its SemOpenAlex URL) as
    `W<digits>`, or None. Author, venue and concept ids (`A…`, `S…`, `C…`) are not works and give None."""
    text = _text_of(value)
    match = _OPENALEX.match(text) if text else None
    if not match or int(match.group(2)) == 0:
        return None
    return f"W{int(match.group(2))}"


_MAG_URL = re.compile(r"^(?:https?://)?academic\.microsoft\.com/(?:#/)?(?:detail|paper)/", re.I)


def normalize_mag_id(value: object) -> str | None:
    """A Microsoft Academic Graph paper id (digits, or an academic.microsoft.com URL) without leading zeros."""
    text = _text_of(value)
    if text is None:
        return None
    return _digits(_MAG_URL.sub("", text).split("/", 1)[0], 20)


_ACL_URL = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:aclanthology\.org|aclweb\.org/anthology|aclanthology\.info/papers)/", re.I
)
_ACL_OLD = re.compile(r"(?:[A-Za-z]/[A-Za-z]\d{2}/)?([A-Za-z]\d{2}-\d{4})")
_ACL_NEW = re.compile(r"(\d{4}\.[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\.\d+)")


def normalize_acl_id(value: object) -> str | None:
    """An ACL Anthology id: old style `P19-1001` (upper-cased) or new style `2020.acl-main.207` (lower-cased),
    bare or in an anthology URL (`.pdf` and trailing slash dropped), or None."""
    text = _text_of(value)
    if text is None:
        return None
    text = _ACL_URL.sub("", text).rstrip("/").removesuffix(".pdf").removesuffix(".bib")
    match = _ACL_OLD.fullmatch(text)
    if match:
        return match.group(1).upper()
    match = _ACL_NEW.fullmatch(text)
    return match.group(1).lower() if match else None


_DBLP_URL = re.compile(r"^(?:https?://)?(?:www\.)?dblp(?:\.uni-trier\.de|\.org)/rec/(?:bibtex/|xml/)?", re.I)
_DBLP_KEY = re.compile(r"[a-z]+/[A-Za-z0-9_\-]+(?:/[A-Za-z0-9_\-.'+]+)+")


def normalize_dblp_key(value: object) -> str | None:
    """A DBLP record key (`conf/acl/LoWNKW20`, `journals/corr/abs-1810-04805`), bare or in a dblp.org/rec URL
    (`.html`, `.bib`, `.xml` dropped); DBLP keys are case sensitive and are kept as given."""
    text = _text_of(value)
    if text is None:
        return None
    text = _DBLP_URL.sub("", text)
    for suffix in (".html", ".bib", ".xml"):
        text = text.removesuffix(suffix)
    return text if _DBLP_KEY.fullmatch(text) else None


def normalize_corpus_id(value: object) -> str | None:
    """A Semantic Scholar corpus id (an int, or a string of digits) as a string without leading zeros, or None."""
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 20) or int(text) == 0:
        return None
    return str(int(text))


def _normalize_arxiv(value: object) -> str | None:
    return normalize_arxiv_id(_text_of(value))


def _normalize_doi(value: object) -> str | None:
    return normalize_doi(_text_of(value))


def _normalize_s2(value: object) -> str | None:
    return _text_of(value)


NORMALIZERS: dict[str, Callable[[object], str | None]] = {
    "arxiv": _normalize_arxiv,
    "doi": _normalize_doi,
    "s2corpus": normalize_corpus_id,
    "s2": _normalize_s2,
    "pmid": normalize_pmid,
    "pmcid": normalize_pmcid,
    "acl": normalize_acl_id,
    "openalex": normalize_openalex_id,
    "mag": normalize_mag_id,
    "dblp": normalize_dblp_key,
}


def identifier_key(kind: str, value: object) -> str | None:
    """The join key `kind:<normalised value>` of one identifier, or None when `value` is not one of that kind."""
    normalized = NORMALIZERS[kind](value)
    return f"{kind}:{normalized}" if normalized else None


def key_kind(key: str) -> str:
    return key.split(":", 1)[0]


def key_rank(key: str) -> int:
    """A key's place in `KEY_KINDS` (unknown kinds last): lower is stronger."""
    kind = key_kind(key)
    return KEY_KINDS.index(kind) if kind in KEY_KINDS else len(KEY_KINDS)


def resolution_method(key: str) -> str:
    """The name a resolution through `key` goes by (`Resolution.method`, `resolved_by:<method>`): `arxiv_id`,
    `doi`, `s2_corpus_id`, `s2_paper_id`, or the kind itself (`pmid`, `pmcid`, `acl`, `openalex`, `mag`, `dblp`)."""
    kind = key_kind(key)
    return _METHODS.get(kind, kind)


def other_id_keys(keys: Iterable[str | None]) -> tuple[str, ...]:
    """The keys of `OTHER_KINDS` among `keys`, each once, strongest kind first (first seen first within a kind)."""
    kept = dict.fromkeys(k for k in keys if k and key_kind(k) in OTHER_KINDS)
    return tuple(sorted(kept, key=key_rank))


@dataclass(frozen=True)
class Identifiers:
    """What a list of keys (strongest evidence first) says a record's identifier fields are: the first arXiv id,
    DOI and corpus id, and every key of the other kinds (`other_ids`)."""

    arxiv_id: str | None = None
    doi: str | None = None
    s2_corpus_id: str | None = None
    other_ids: tuple[str, ...] = ()

    @classmethod
    def from_keys(cls, keys: Iterable[str | None]) -> Identifiers:
        keys = [k for k in keys if k]
        first = {}
        for key in keys:
            first.setdefault(key_kind(key), key.split(":", 1)[1])
        return cls(first.get("arxiv"), first.get("doi"), first.get("s2corpus"), other_id_keys(keys))


def identifier_keys(
    *,
    arxiv_id: str | None,
    doi: str | None,
    s2_paper_id: str | None,
    s2_corpus_id: str | None = None,
    other_ids: Iterable[str] = (),
) -> list[str]:
    """Join keys for a record's identifiers, strongest first (`arxiv:…`, `doi:…`, `s2corpus:…`, `s2:…`, then
    `other_ids` in `KEY_KINDS` order)."""
    keys = []
    if arxiv_id:
        keys.append(f"arxiv:{arxiv_id}")
    if doi:
        keys.append(f"doi:{doi}")
    if s2_corpus_id:
        keys.append(f"s2corpus:{s2_corpus_id}")
    if s2_paper_id:
        keys.append(f"s2:{s2_paper_id}")
    keys.extend(other_id_keys(other_ids))
    return keys


def paper_id_for(
    *,
    arxiv_id: str | None,
    doi: str | None,
    s2_paper_id: str | None,
    fallback: str | None,
    s2_corpus_id: str | None = None,
) -> str | None:
    """The paper-id rule: arXiv id, else `doi:<doi>`, else the S2ORC paper_id, else `s2corpus:<corpus id>`
    (the Semantic Scholar Datasets API's `corpusid`), else `fallback`."""
    if arxiv_id:
        return arxiv_id
    if doi:
        return f"doi:{doi}"
    if s2_paper_id:
        return str(s2_paper_id)
    if s2_corpus_id:
        return f"s2corpus:{s2_corpus_id}"
    return fallback or None


def document_ids(
    *, arxiv_id: str | None, doi: str | None, s2_paper_id: str | None, stem: str
) -> tuple[str | None, str | None, str | None]:
    """A parsed full text's (paper id, arXiv id, DOI). One that gives no identifier of its own takes them from its
    file's stem when that is one (`2101.00001v2.tei.xml`, `10.1145_3292500.3330701.json`), so that its database
    record can find it; the stem is its paper id when nothing else is."""
    if not (arxiv_id or doi or s2_paper_id):
        named = identifiers_in_file_stem(stem)
        arxiv_id, doi = named.arxiv_id, named.doi
    return paper_id_for(arxiv_id=arxiv_id, doi=doi, s2_paper_id=s2_paper_id, fallback=stem), arxiv_id, doi


# ------------------------------------------------------------------------------ identifiers in URLs and text

_URL_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/", re.I), "arxiv"),
    (re.compile(r"^(?:doi:\s*|(?:https?://)?(?:dx\.|www\.)?doi\.org/)", re.I), "doi"),
    (_PMID_URL, "pmid"),
    (_PMC_URL, "pmcid"),
    (_ACL_URL, "acl"),
    (re.compile(r"^(?:https?://)?(?:api\.)?(?:sem)?openalex\.org/", re.I), "openalex"),
    (_DBLP_URL, "dblp"),
    (re.compile(r"^(?:https?://)?api\.semanticscholar\.org/corpusid:", re.I), "s2corpus"),
)
_PUBLISHER_DOI_PATH = re.compile(
    r"^(?:https?://)?[\w.-]+/(?:[\w.-]+/)*doi/(?:abs/|pdf/|full/|epdf/)?(10\.\d{4,9}/\S+)", re.I
)


def identifier_key_in_url(url: str | None) -> str | None:
    """The identifier a link stands for, by its host (arxiv.org/abs|pdf, doi.org, PubMed, PMC, ACL Anthology,
    OpenAlex, dblp.org/rec, api.semanticscholar.org/CorpusID:) or a publisher's `/doi/10.…` path, as a key;
    None for any other link."""
    text = (url or "").strip()
    for pattern, kind in _URL_KINDS:
        match = pattern.match(text)
        if match:
            return identifier_key(kind, text[match.end() :] if kind == "s2corpus" else text)
    match = _PUBLISHER_DOI_PATH.search(text)
    return identifier_key("doi", match.group(1)) if match else None


# A new-style arXiv id in free text counts only after a cue that names arXiv: the word arXiv (or CoRR), or an
# `abs/` path, no further than `_CUE_WINDOW` characters before it; its YYMM must be a month arXiv used.
_ARXIV_CUE = re.compile(r"arxiv|\bcorr\b|abs/", re.I)
_CUE_WINDOW = 30
_TEXT_NEW_ARXIV = re.compile(r"(?<![\w.])(\d{2})(\d{2})\.(\d{4,5})(?:v\d+)?(?![\w.]*\d)", re.ASCII)
_TEXT_OLD_ARXIV = re.compile(
    r"(?<![\w-])([a-z][a-z-]*)(?:\.[A-Za-z]{2})?/(\d{2})(\d{2})(\d{3})(?:v\d+)?(?!\d)", re.ASCII
)
_BROKEN_ID = re.compile(r"(?<=[a-z]-)\s+(?=[a-z]+/\d)|(?<=\b10\.\d{4}/)\s+|(?<=\b10\.\d{5}/)\s+", re.ASCII)
_TEXT_DOI = re.compile(r"(?<![\w./-])10\.\d{4,9}/[^\s\"<>¦]+", re.ASCII | re.IGNORECASE)


def _arxiv_month(yy: str, mm: str, digits: int) -> bool:
    """Whether YYMM with a `digits`-digit number is a new-style id arXiv could have issued (April 2007 on;
    five digits from 2015)."""
    year, month = int(yy), int(mm)
    if not 1 <= month <= 12:
        return False
    return (7, 4) <= (year, month) <= (14, 12) if digits == 4 else year >= 15


def arxiv_id_in_text(text: str | None) -> str | None:
    """The arXiv id a free-text reference gives, or None: a new-style id (a valid YYMM) no more than 30
    characters after the word arXiv, CoRR or an `abs/` path (`arXiv preprint arXiv:1810.04805`, `CoRR
    abs/1706.03762`, `arxiv.org/abs/2101.00001v2`), or an old-style id with its archive name
    (`hep-ph/0412102`, which names arXiv by itself). Ids without such a cue (page numbers, report numbers)
    are not taken."""
    if not text:
        return None
    text = _BROKEN_ID.sub("", text)
    for match in _TEXT_OLD_ARXIV.finditer(text):
        archive = match.group(1).lower()
        if archive in _OLD_ARCHIVES and 1 <= int(match.group(3)) <= 12:
            return f"{archive}/{match.group(2)}{match.group(3)}{match.group(4)}"
    for match in _TEXT_NEW_ARXIV.finditer(text):
        yy, mm, number = match.groups()
        if not _arxiv_month(yy, mm, len(number)):
            continue
        if _ARXIV_CUE.search(text, max(0, match.start() - _CUE_WINDOW), match.start()):
            return f"{yy}{mm}.{number}"
    return None


def doi_in_text(text: str | None) -> str | None:
    """The first DOI-shaped token (`10.<4-9 digits>/<suffix>`, not inside another token) of a free-text reference,
    lower-cased without trailing punctuation, or None. A space a line break left after the DOI's slash is
    closed up (`10.2337/ diacare.24.8.1448`)."""
    if not text or "10." not in text:
        return None
    match = _TEXT_DOI.search(_BROKEN_ID.sub("", urllib.parse.unquote(text)))
    return normalize_doi(match.group(0)) if match else None


def keys_in_reference_text(text: str | None) -> list[str | None]:
    """The `arxiv:` and `doi:` keys of a free-text reference (`arxiv_id_in_text`, `doi_in_text`), None where it
    gives none: the weakest evidence of a parsed bib entry's identifiers, tried after its structured fields."""
    return [identifier_key("arxiv", arxiv_id_in_text(text)), identifier_key("doi", doi_in_text(text))]


# --------------------------------------------------------------------------------------- ids in file names

_STEM_NEW_ARXIV = re.compile(r"(?:arxiv[_:.-]?)?(\d{4}\.\d{4,5})(?:v\d+)?", re.I)
_STEM_OLD_ARXIV = re.compile(r"(?:arxiv[_:.-]?)?([a-z][a-z-]*)(?:\.[A-Za-z]{2})?[_/]?(\d{7})(?:v\d+)?", re.I)
_STEM_DOI = re.compile(r"(?:doi[_:]?)?(10\.\d{4,9})[_/](\S+)", re.I)


def identifiers_in_file_stem(stem: str | None) -> Identifiers:
    """The identifier a file's stem is, when the whole stem is one: an arXiv id with or without version
    (`2101.00001v2`, `arXiv_2101.00001`), an old-style one with `_` or nothing for its slash (`hep-th_0101001`,
    `hep-th0101001`), a DOI with `_` for its first slash (`10.1145_3292500.3330701`), or an ACL Anthology id
    (`P17-1055`, `2020.acl-main.207`; in `other_ids`). A bare number is not taken for a Semantic Scholar or PubMed
    id: nothing in the name says which it would be."""
    text = (stem or "").strip()
    match = _STEM_NEW_ARXIV.fullmatch(text)
    if match and _arxiv_month(match.group(1)[:2], match.group(1)[2:4], len(match.group(1)) - 5):
        return Identifiers(arxiv_id=match.group(1))
    match = _STEM_OLD_ARXIV.fullmatch(text)
    if match and match.group(1).lower() in _OLD_ARCHIVES:
        return Identifiers(arxiv_id=f"{match.group(1).lower()}/{match.group(2)}")
    match = _STEM_DOI.fullmatch(text)
    if match:
        return Identifiers(doi=normalize_doi(f"{match.group(1)}/{match.group(2)}"))
    acl = normalize_acl_id(text) if "/" not in text else None
    if acl:
        return Identifiers(other_ids=(f"acl:{acl}",))
    return Identifiers()
