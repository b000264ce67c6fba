"""Identifier normalisation: arXiv ids (new and old style), DOIs, and the paper-id rule.

A paper's id is its arXiv id without version where known, else `doi:<lower-cased DOI>`, else the S2ORC
`paper_id`, else `s2corpus:<Semantic Scholar corpus id>`, else the input file's stem.
"""

from __future__ import annotations

import re
import urllib.parse

# New-style ids: YYMM.NNNN (2007-2014) or YYMM.NNNNN (2015-), optional version.
_NEW_ARXIV = re.compile(r"(?<![\w.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\w.]*\d)", re.ASCII)
# Old-style ids: archive[.SUBJ]/YYMMNNN, optional version. The subject class is not part of the id.
_OLD_ARXIV = re.compile(r"(?<![\w-])([a-z][a-z-]*)(?:\.[A-Za-z]{2})?/(\d{7})(?:v\d+)?(?!\d)", re.ASCII)
_DOI = re.compile(r"10\.\d{4,9}/\S+", re.ASCII | re.IGNORECASE)
_ARXIV_PREFIX = re.compile(r"^\s*(?:arxiv\s*:\s*|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)", re.I)

_OLD_ARCHIVES = frozenset(
    """acc-phys adap-org alg-geom ao-sci astro-ph atom-ph bayes-an chao-dyn chem-ph cmp-lg comp-gas cond-mat
    cs dg-ga funct-an gr-qc hep-ex hep-lat hep-ph hep-th math math-ph mtrl-th nlin nucl-ex nucl-th patt-sol
    physics plasm-ph q-alg q-bio quant-ph solv-int supr-con""".split()
)


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


def normalize_doi(value: str | None) -> str | None:
    """Return the lower-cased DOI in `value` without resolver prefix or trailing punctuation, or None."""
    if not value:
        return None
    text = urllib.parse.unquote(value.strip())
    match = _DOI.search(text)
    if not match:
        return None
    doi = match.group(0).rstrip(".,;:)]}>\"'")
    return doi.lower()


def identifier_keys(
    *, arxiv_id: str | None, doi: str | None, s2_paper_id: str | None, s2_corpus_id: str | None = None
) -> list[str]:
    """Join keys for a paper's identifiers, strongest first (`arxiv:…`, `doi:…`, `s2:…`, `s2corpus:…`)."""
    keys = []
    if arxiv_id:
        keys.append(f"arxiv:{arxiv_id}")
    if doi:
        keys.append(f"doi:{doi}")
    if s2_paper_id:
        keys.append(f"s2:{s2_paper_id}")
    if s2_corpus_id:
        keys.append(f"s2corpus:{s2_corpus_id}")
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


def normalize_corpus_id(value: object) -> str | None:
    """A Semantic Scholar corpus id (an int, or a string of digits) as a string without leading zeros, or None."""
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip()
    if not (text.isascii() and text.isdigit() and len(text) <= 20) or int(text) == 0:
        return None
    return str(int(text))
