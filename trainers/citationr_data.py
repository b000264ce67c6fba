"""The CitationR dataset as RMCNet and the tiny model read it: the Parquet layout `pipelines.citationr` writes, or
RMC's JSON layout (`train.json`, `val.json`, `test.json`, `base/papers.json`, `base/bibref2info.json`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

SPLITS = ("train", "validation", "test")
RMC_SPLIT_FILES = {"train": "train.json", "validation": "val.json", "test": "test.json"}


@dataclass(frozen=True)
class Submission:
    paper_id: str
    title: str
    abstract: str
    references: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return f"{self.title} [SEP] {self.abstract}"


@dataclass
class CitationRData:
    layout: str
    papers: dict[str, Submission]
    queries: dict[str, list[tuple[str, tuple[str, ...]]]]  # split -> [(submission id, positive ids in the pool)]
    pool: list[str]  # the candidate papers every query is ranked against
    dropped_positives: int = 0
    notes: list[str] = field(default_factory=list)


def _rmc_root(directory: Path) -> Path | None:
    for root in (directory, directory / "data", directory / "export" / "rmc" / "data"):
        if any((root / name).is_file() for name in RMC_SPLIT_FILES.values()) and (
            (root / "base" / "papers.json").is_file() or (root / "extended" / "papers.json").is_file()
        ):
            return root
    return None


def load_citationr(directory: str | Path, layout: str = "auto", include_unresolved: bool = False) -> CitationRData:
    """The Parquet layout (`queries/`, `candidates/`) when present, else RMC's JSON layout; `layout` forces one."""
    directory = Path(directory)
    if layout in ("auto", "parquet") and (directory / "queries").is_dir():
        return _load_parquet(directory, include_unresolved)
    root = _rmc_root(directory) if layout in ("auto", "rmc") else None
    if root is None:
        raise FileNotFoundError(f"{directory}: neither a CitationR Parquet dataset (queries/) nor RMC's JSON layout")
    return _load_rmc(root)


def _load_parquet(directory: Path, include_unresolved: bool) -> CitationRData:
    import pyarrow.parquet as pq

    def rows(name: str) -> list[dict]:
        return [r for f in sorted((directory / name).glob("*.parquet")) for r in pq.read_table(f).to_pylist()]

    papers, pool = {}, []
    roles = {"positive", "extension"} | ({"unresolved_title"} if include_unresolved else set())
    for row in rows("candidates"):
        if row["role"] in roles and row["paper_id"] not in papers:
            papers[row["paper_id"]] = Submission(row["paper_id"], row.get("title") or "", row.get("abstract") or "")
            pool.append(row["paper_id"])
    in_pool = set(pool)
    queries: dict[str, list] = {split: [] for split in SPLITS}
    dropped = 0
    for row in rows("queries"):
        qid = row["submission_id"]
        papers[qid] = Submission(
            qid, row.get("title") or "", row.get("abstract") or "", tuple(t for t in row["reference_titles"] or [] if t)
        )
        positives = tuple(p for p in row["positive_ids"] or [] if p in in_pool)
        dropped += len(row["positive_ids"] or []) - len(positives)
        if positives:
            queries[row["split"]].append((qid, positives))
    return CitationRData("parquet", papers, queries, pool, dropped)


def _load_rmc(root: Path) -> CitationRData:
    base = root / "base" if (root / "base" / "papers.json").is_file() else root / "extended"
    info = json.loads((base / "papers.json").read_text(encoding="utf-8"))
    bibrefs_path = base / "bibref2info.json"
    bibrefs = json.loads(bibrefs_path.read_text(encoding="utf-8")) if bibrefs_path.is_file() else {}
    papers = {}
    for pid, p in info.items():
        refs = tuple(
            bibrefs[r]["title"]
            for r in p.get("bib_refs") or []
            if r in bibrefs and bibrefs[r].get("title") and not bibrefs[r].get("already_recommended")
        )
        papers[pid] = Submission(pid, p.get("title") or "", p.get("abstract") or "", refs)
    queries: dict[str, list] = {split: [] for split in SPLITS}
    dropped = 0
    for split, name in RMC_SPLIT_FILES.items():
        path = root / name
        for sample in json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []:
            positives = tuple(p for p in sample["positive_ids"] if p in papers)
            dropped += len(sample["positive_ids"]) - len(positives)
            if sample["id"] in papers and positives:
                queries[split].append((sample["id"], positives))
    # RMC ranks every paper of papers.json (other submissions included), the query itself left out
    return CitationRData("rmc", papers, queries, list(papers), dropped)


def citationr_texts(data: CitationRData) -> list[str]:
    """What a tiny local model's vocabulary is trained on: every paper's title, abstract and reference titles."""
    return [f"{p.title} {p.abstract} {' '.join(p.references)}" for p in data.papers.values()]
