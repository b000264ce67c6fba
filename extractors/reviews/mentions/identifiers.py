"""Scholarly identifiers and links written into a review: arXiv ids and URLs, DOIs, OpenReview forum links, ACL
Anthology, proceedings and Semantic Scholar links. Each is an `identifier` mention of its own, or joins the
mention (a reference entry, a quoted title) it stands in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from extractors.reviews.mentions.shapes import mention_at, overlaps
from extractors.reviews.records import IDENTIFIER_FIELDS, PaperMention
from mapping.ids import normalize_arxiv_id, normalize_doi

_ARXIV_REF = re.compile(
    r"(?:arxiv\.org/(?:abs|pdf|html)/|\barxiv\s*[:.]?\s*(?:abs/)?)"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)",
    re.I,
)
_DOI_REF = re.compile(
    r"(?:doi\.org/|\bdoi\s*:\s*|dl\.acm\.org/doi/(?:abs/|pdf/|full/)?)?\b(10\.\d{4,9}/[^\s\"'<>\]\[(){}]+)", re.I
)
_OPENREVIEW = re.compile(r"openreview\.net/(?:forum|pdf|attachment)\?(?:[^\s]*?&)?id=([A-Za-z0-9_\-]{6,})")
_ACL = re.compile(
    r"(?:aclanthology\.org/|aclweb\.org/anthology/(?:[A-Z]/[A-Z]\d{2}/)?)"
    r"((?:\d{4}\.[a-z\-]+\.\d+|[A-Z]\d{2}-\d{4}))",
)
_S2 = re.compile(r"semanticscholar\.org/(?:paper/(?:[^\s/]+/)?([0-9a-f]{40})|CorpusID:?(\d+))", re.I)
URL = re.compile(r"https?://[^\s<>\"'\])]+|\b(?:www\.)?[a-z0-9.\-]+\.(?:org|cc|press|com|net)/[^\s<>\"'\])]+", re.I)
_SCHOLARLY_HOSTS = (
    "arxiv.org",
    "doi.org",
    "openreview.net",
    "aclanthology.org",
    "aclweb.org",
    "semanticscholar.org",
    "proceedings.neurips.cc",
    "papers.nips.cc",
    "papers.neurips.cc",
    "proceedings.mlr.press",
    "openaccess.thecvf.com",
    "ojs.aaai.org",
    "ijcai.org",
    "dl.acm.org",
    "ieeexplore.ieee.org",
    "jmlr.org",
    "link.springer.com",
    "sciencedirect.com",
    "dblp.org",
    "nature.com",
    "science.org",
)


def find_identifiers(text: str) -> list[PaperMention]:
    """Scholarly identifiers and links in `text`, one `identifier` mention (not yet placed in a review section)
    per URL or bare identifier, in text order."""
    hits: list[PaperMention] = []
    for match in URL.finditer(text):
        url = match.group(0).rstrip(".,;:")
        if any(host in url.lower() for host in _SCHOLARLY_HOSTS):
            hits.append(mention_at(text, match.start(), match.start() + len(url), "identifier", (), **_ids_in_url(url)))
    for pattern, name in ((_ARXIV_REF, "arxiv_id"), (_DOI_REF, "doi")):
        for match in pattern.finditer(text):
            if overlaps(match.start(), match.end(), [(hit.start, hit.end) for hit in hits]):
                continue
            value = normalize_arxiv_id(match.group(1)) if name == "arxiv_id" else normalize_doi(match.group(1))
            if value:
                hits.append(mention_at(text, match.start(), match.end(), "identifier", (), **{name: value}))
    return sorted(hits, key=lambda h: h.start)


def _ids_in_url(url: str) -> dict[str, str | None]:
    arxiv = _ARXIV_REF.search(url)
    doi = _DOI_REF.search(url) if "doi" in url.lower() else None
    openreview = _OPENREVIEW.search(url)
    acl = _ACL.search(url)
    s2 = _S2.search(url)
    return {
        "arxiv_id": normalize_arxiv_id(arxiv.group(1)) if arxiv else None,
        "doi": normalize_doi(doi.group(1)) if doi else None,
        "openreview_id": openreview.group(1) if openreview else None,
        "acl_id": acl.group(1) if acl else None,
        "s2_id": (s2.group(1) or f"CorpusID:{s2.group(2)}") if s2 else None,
        "url": url,
    }


def with_identifiers(mention: PaperMention, hits: Iterable[PaperMention]) -> PaperMention:
    """`mention` with the identifiers and link of `hits` that it lacks (the first hit's, of each kind)."""
    values: dict[str, str] = {}
    for hit in hits:
        for name in (*IDENTIFIER_FIELDS, "url"):
            value = getattr(hit, name)
            if value and not getattr(mention, name) and name not in values:
                values[name] = value
    return replace(mention, **values)
