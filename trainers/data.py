"""Read a built dataset for training: the Parquet shards (`contexts/`, `papers/`) or the HAtten/SymTax JSON layout.

Both layouts become the same two record types: `PaperText` (what a candidate paper says of itself) and
`ContextQuery` (one citation context with the papers it cites). Parquet is read row group by row group with pyarrow,
so a large shard never sits in memory as one Arrow table. The columns read are those of `extractors.schemas`; each
shard's schema is checked against it before any row is read, so a renamed or retyped column fails by name.
"""

from __future__ import annotations

import datetime as dt
import json
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from extractors.schemas import CONTEXTS_SCHEMA, PAPERS_SCHEMA, SCHEMA_VERSION, SPLITS

JSON_SPLIT_FILES = {"train": "train.json", "validation": "val.json", "test": "test.json"}
CONTEXT_FIELDS = ("char_context", "sentence_context")  # the local contexts of `CONTEXTS_SCHEMA` a query can use
PAPER_COLUMNS = ("paper_id", "title", "abstract", "date")  # of `PAPERS_SCHEMA`
POOL_COLUMN = "in_pool"  # of `PAPERS_SCHEMA` since schema version 2; without it every paper is a candidate
CONTEXT_COLUMNS = ("context_id", "citing_id", "cited_id", "citing_date")  # of `CONTEXTS_SCHEMA`


class DatasetSchemaError(ValueError):
    """A dataset shard lacks a column the trainers read, or holds it with another type than `extractors.schemas`."""


class EmptySplitError(ValueError):
    """A job needs the queries of a split that holds none."""


class DroppedContextsWarning(UserWarning):
    """Contexts of a dataset were left out (their reasons and counts are in `CitationDataset.dropped`)."""


@dataclass(frozen=True)
class PaperText:
    """A candidate paper: the text the encoders read and the date that decides what a query may cite."""

    paper_id: str
    title: str
    abstract: str
    date: dt.date | None = None


@dataclass(frozen=True)
class ContextQuery:
    """One citation context; `cited_ids` are the papers it cites (the relevant documents)."""

    context_id: str
    citing_id: str
    context: str
    cited_ids: tuple[str, ...]
    citing_date: dt.date | None = None


@dataclass
class CitationDataset:
    """The papers (candidates, and the citing papers a context comes from) in paper-id order and the queries of
    each split in context-id order, whichever layout they were read from, so that one dataset trains one way.
    `pool`: the candidates when not every paper is one (the `in_pool` column of `papers/`); None: all are.
    `dropped`: contexts left out, by reason (`dropped_contexts:no_char_context`, as the exports count them)."""

    papers: dict[str, PaperText]
    queries: dict[str, list[ContextQuery]]
    pool: frozenset[str] | None = None
    dropped: dict[str, int] = field(default_factory=dict)

    def split_queries(self, split: str, needed_for: str) -> list[ContextQuery]:
        """The queries of `split`, or an `EmptySplitError` that says which job needed them."""
        queries = self.queries.get(split) or []
        if not queries:
            counts = ", ".join(f"{name} {len(items)}" for name, items in self.queries.items())
            raise EmptySplitError(f"the {split} split has no contexts and {needed_for} needs them (contexts: {counts})")
        return queries

    def paper_ids(self) -> list[str]:
        """The candidate papers a recommender ranks, in paper-id order."""
        if self.pool is None:
            return list(self.papers)
        return [p for p in self.papers if p in self.pool]


def expected_columns(schema: pa.Schema, names: Sequence[str]) -> pa.Schema:
    """The fields `names` as `extractors.schemas` defines them (name and type): what a shard must hold."""
    missing = [name for name in names if name not in schema.names]
    if missing:
        raise DatasetSchemaError(f"extractors.schemas defines no column {', '.join(missing)}, which the trainers read")
    return pa.schema([schema.field(name) for name in names])


def check_columns(path: Path, found: pa.Schema, expected: pa.Schema) -> None:
    """Raise one `DatasetSchemaError` naming every expected column `found` lacks or holds with another type."""
    missing = [field.name for field in expected if field.name not in found.names]
    retyped = [
        f"{field.name} is {found.field(field.name).type}, not {field.type}"
        for field in expected
        if field.name in found.names and not found.field(field.name).type.equals(field.type)
    ]
    if missing or retyped:
        problems = ([f"no column {', '.join(missing)}"] if missing else []) + retyped
        raise DatasetSchemaError(
            f"{path}: {'; '.join(problems)} (extractors.schemas, schema version {SCHEMA_VERSION}); "
            f"the shard's columns: {', '.join(found.names)}"
        )


def _parquet_rows(paths: list[Path], expected: pa.Schema) -> Iterator[dict]:
    for path in paths:
        parquet = pq.ParquetFile(path)
        check_columns(path, parquet.schema_arrow, expected)
        for group in range(parquet.num_row_groups):
            yield from parquet.read_row_group(group, columns=expected.names).to_pylist()


def is_parquet_dataset(directory: Path) -> bool:
    return (directory / "papers").is_dir() and (directory / "contexts").is_dir()


def is_json_dataset(directory: Path) -> bool:
    return (directory / "papers.json").is_file() and (directory / "contexts.json").is_file()


def load_parquet_dataset(
    directory: Path, context_field: str = "char_context", splits: tuple[str, ...] = SPLITS
) -> CitationDataset:
    """Papers and queries from the Parquet shards `pipelines.arsyta` writes. A context without text in
    `context_field` is left out and counted, as the JSON exports leave it out, so both reads hold the same queries."""
    if context_field not in CONTEXT_FIELDS:
        raise ValueError(f"context_field must be one of {CONTEXT_FIELDS}, not {context_field!r}")
    paths = sorted((directory / "papers").glob("*.parquet"))
    with_pool = bool(paths) and POOL_COLUMN in pq.ParquetFile(paths[0]).schema_arrow.names  # older datasets: all
    paper_columns = expected_columns(PAPERS_SCHEMA, PAPER_COLUMNS + ((POOL_COLUMN,) if with_pool else ()))
    papers, outside, dropped = {}, set(), Counter()
    for row in _parquet_rows(paths, paper_columns):
        papers[row["paper_id"]] = PaperText(row["paper_id"], row["title"] or "", row["abstract"] or "", row["date"])
        if with_pool and row[POOL_COLUMN] is False:
            outside.add(row["paper_id"])
    queries: dict[str, list[ContextQuery]] = {}
    context_columns = expected_columns(CONTEXTS_SCHEMA, CONTEXT_COLUMNS + (context_field,))
    for split in splits:
        rows = _parquet_rows(sorted((directory / "contexts").glob(f"{split}-*.parquet")), context_columns)
        queries[split] = sorted(
            (
                ContextQuery(
                    row["context_id"],
                    row["citing_id"],
                    row[context_field] or "",
                    (row["cited_id"],),
                    row["citing_date"],
                )
                for row in _with_context(rows, context_field, dropped)
            ),
            key=lambda q: q.context_id,
        )
    pool = frozenset(p for p in papers if p not in outside) if outside else None
    return CitationDataset(dict(sorted(papers.items())), queries, pool, _warn_dropped(directory, dropped))


def _with_context(rows: Iterator[dict], context_field: str, dropped: Counter) -> Iterator[dict]:
    for row in rows:
        if row[context_field]:
            yield row
        else:
            dropped[f"dropped_contexts:no_{context_field}"] += 1


def _warn_dropped(directory: Path, dropped: Counter) -> dict[str, int]:
    if dropped:
        counts = ", ".join(f"{reason} {count}" for reason, count in sorted(dropped.items()))
        warnings.warn(f"{directory}: contexts left out: {counts}", DroppedContextsWarning, stacklevel=3)
    return dict(sorted(dropped.items()))


def _parse_date(value: object) -> dt.date | None:
    if isinstance(value, str) and value:
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    if isinstance(value, int):
        return dt.date(value, 1, 1)
    return None


def load_json_dataset(directory: Path, splits: tuple[str, ...] = SPLITS) -> CitationDataset:
    """Papers and queries from the HAtten/SymTax layout (`papers.json`, `contexts.json`, `train/val/test.json`).

    Published datasets carry no dates, so no candidate is excluded for being later than the citing paper unless
    a paper record has a `date` (ISO) or `year` field.
    """
    with open(directory / "papers.json", encoding="utf-8") as handle:
        raw_papers = json.load(handle)
    papers = {
        paper_id: PaperText(
            paper_id,
            record.get("title") or "",
            record.get("abstract") or "",
            _parse_date(record.get("date") or record.get("year")),
        )
        for paper_id, record in sorted(raw_papers.items())
    }
    with open(directory / "contexts.json", encoding="utf-8") as handle:
        contexts = json.load(handle)
    queries: dict[str, list[ContextQuery]] = {}
    for split in splits:
        path = directory / JSON_SPLIT_FILES[split]
        if not path.is_file():
            queries[split] = []
            continue
        with open(path, encoding="utf-8") as handle:
            items = json.load(handle)
        split_queries = []
        for item in items:
            context = contexts[item["context_id"]]
            citing = papers.get(context["citing_id"])
            split_queries.append(
                ContextQuery(
                    item["context_id"],
                    context["citing_id"],
                    context.get("masked_text") or "",
                    tuple(item.get("positive_ids") or [context["refid"]]),
                    citing.date if citing else None,
                )
            )
        queries[split] = sorted(split_queries, key=lambda q: q.context_id)
    return CitationDataset(papers, queries)


def load_dataset(directory: str | Path, context_field: str = "char_context") -> CitationDataset:
    """Either layout, detected from the files present. The JSON layout only has the character context."""
    directory = Path(directory)
    if is_parquet_dataset(directory):
        return load_parquet_dataset(directory, context_field)
    if is_json_dataset(directory):
        if context_field != "char_context":
            raise ValueError("the HAtten JSON layout only holds the character context (masked_text)")
        return load_json_dataset(directory)
    raise FileNotFoundError(f"{directory} holds neither contexts/ and papers/ shards nor papers.json and contexts.json")


def load_prefetched(directory: str | Path, split: str) -> dict[str, list[str]]:
    """A prefetcher's `prefetched_<split>.json` in `directory` (context id -> candidate ids, best first), what the
    rerankers and the Enricher read; a missing file ends the command with one line naming the prefetch to run."""
    path = Path(directory) / f"prefetched_{split}.json"
    if not path.is_file():
        raise SystemExit(f"error: {path} is missing: run `python -m trainers.hatten prefetch --split {split}` first")
    return json.loads(path.read_text(encoding="utf-8"))


def citing_paper(dataset: CitationDataset, query: ContextQuery) -> PaperText:
    """The citing paper's record, or an empty one when the database does not hold it."""
    return dataset.papers.get(query.citing_id) or PaperText(query.citing_id, "", "", query.citing_date)
