"""Optional online title resolvers (DBLP, Semantic Scholar) for recommended papers the database lacks.

Off by default: the pipeline only calls them with `--online_resolvers dblp,s2`. Every answer is cached on disk
(one JSON file per query, keyed by resolver and normalised title), calls are spaced by a minimum interval,
and each has a timeout; any network error is an unresolved answer, never a crash. A candidate is accepted
only at the matcher's LCS similarity (>= 0.9 by default). Tests pass a fake `session`; they never touch the
network.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mapping.ids import normalize_arxiv_id, normalize_doi
from mapping.matcher import lcs_similarity
from mapping.records import Paper
from mapping.titles import normalize_title

DBLP_URL = "https://dblp.org/search/publ/api"
S2_URL = "https://api.semanticscholar.org/graph/v1/paper/search"


class HttpSession(Protocol):
    def get(self, url: str, params: dict, timeout: float, headers: dict | None = None) -> Any: ...


@dataclass(frozen=True)
class ResolverConfig:
    names: tuple[str, ...] = ()
    cache_dir: str = ".citationr-cache"
    min_interval_s: float = 1.0
    timeout_s: float = 10.0
    min_similarity: float = 0.9


class OnlineResolver:
    """Title to `Paper` through DBLP and/or Semantic Scholar, cached and rate-limited."""

    def __init__(self, config: ResolverConfig, session: HttpSession | None = None) -> None:
        self.config = config
        if session is None:
            import requests

            session = requests.Session()
        self.session = session
        self._lock = threading.Lock()
        self._last = 0.0

    def _cache_path(self, name: str, title: str) -> Path:
        digest = hashlib.sha1(f"{name}\x1f{normalize_title(title)}".encode()).hexdigest()
        return Path(self.config.cache_dir) / name / f"{digest}.json"

    def _fetch(self, name: str, title: str) -> list[dict]:
        path = self._cache_path(name, title)
        if path.is_file():
            return json.loads(path.read_text())
        with self._lock:
            wait = self.config.min_interval_s - (time.monotonic() - self._last)
            if wait > 0:
                time.sleep(wait)
            self._last = time.monotonic()
        try:
            if name == "dblp":
                response = self.session.get(
                    DBLP_URL, params={"q": title, "format": "json", "h": 5}, timeout=self.config.timeout_s
                )
                response.raise_for_status()
                hits = response.json().get("result", {}).get("hits", {}).get("hit", []) or []
                found = [_from_dblp(h.get("info", {})) for h in hits]
            else:
                response = self.session.get(
                    S2_URL,
                    params={"query": title, "limit": 5, "fields": "title,year,externalIds,abstract,authors"},
                    timeout=self.config.timeout_s,
                )
                response.raise_for_status()
                found = [_from_s2(h) for h in response.json().get("data", []) or []]
        except Exception:  # noqa: BLE001 - any network or decoding failure is an unresolved answer
            return []
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(found))
        return found

    def resolve(self, title: str | None) -> Paper | None:
        """The best candidate at LCS >= min_similarity, from the first resolver that has one."""
        wanted = normalize_title(title)
        if len(wanted) < 8:
            return None
        for name in self.config.names:
            best = None
            for record in self._fetch(name, title or ""):
                score = lcs_similarity(wanted, normalize_title(record.get("title")))
                if score >= self.config.min_similarity and (best is None or score > best[0]):
                    best = (score, record)
            if best is not None:
                return paper_from_online(best[1], name)
        return None


def _from_dblp(info: dict) -> dict:
    authors = info.get("authors", {}).get("author", [])
    authors = authors if isinstance(authors, list) else [authors]
    return {
        "title": (info.get("title") or "").rstrip("."),
        "year": info.get("year"),
        "doi": info.get("doi"),
        "arxiv_id": None,
        "key": info.get("key"),
        "authors": [a.get("text") for a in authors if isinstance(a, dict)],
    }


def _from_s2(hit: dict) -> dict:
    ids = hit.get("externalIds") or {}
    return {
        "title": hit.get("title"),
        "year": hit.get("year"),
        "doi": ids.get("DOI"),
        "arxiv_id": ids.get("ArXiv"),
        "key": hit.get("paperId"),
        "abstract": hit.get("abstract"),
        "authors": [a.get("name") for a in hit.get("authors") or []],
    }


def paper_from_online(record: dict, resolver: str) -> Paper:
    arxiv_id = normalize_arxiv_id(record.get("arxiv_id"))
    doi = normalize_doi(record.get("doi"))
    paper_id = arxiv_id or (f"doi:{doi}" if doi else f"{resolver}:{record.get('key')}")
    year = record.get("year")
    return Paper(
        paper_id=paper_id,
        title=record.get("title"),
        abstract=record.get("abstract"),
        authors=tuple(a for a in record.get("authors") or () if a),
        year=int(year) if str(year or "").isdigit() else None,
        doi=doi,
        arxiv_id=arxiv_id,
        source=f"online:{resolver}",
    )
