"""Write a finished dataset in the layout a peer's own code reads: one directory per peer, the files named and
keyed the way that peer's loader opens them, so that their scripts run on our data unchanged.

    python -m pipelines.exports --dataset out/ --export hatten,symtax      # -> out/export/hatten/, out/export/symtax/
    python -m pipelines.exports --dataset out/citationr --export rmc       # -> out/citationr/export/rmc/data/...

The pipelines do the same within a run with `--export NAME[,NAME]`: the layouts are made from the tables' rows in
the same Beam job, written by workers into the staging directory, and committed with the tables. The layouts, read
off each peer's loader (docs/exports.md goes file by file and gives the commands that run their code on these files):

- `hatten` (from a `pipelines.arsyta` dataset), nianlonggu/Local-Citation-Recommendation @ e46cae55
  (src/prefetch/datautils.py, train.py, test.py, get_prefetched_ids.py, compute_papers_embedding.py;
  src/rerank/datautils.py): `papers.json` {paper_id: {title, abstract}}, `contexts.json` {context_id:
  {masked_text, context_id, citing_id, refid}} with masked_text = `char_context` (the 200-character window,
  TARGETCIT/OTHERCIT), `train.json`/`val.json`/`test.json` [{context_id, positive_ids: [cited_id]}].
- `symtax` (from a `pipelines.arsyta` dataset), goyalkaraniit/SymTax @ e3de5b2c (per.py,
  citation_recommender.py, src/rerank/datautils.py, src/rerank/train.py): `papers_cat.json` {paper_id: {title,
  abstract, categories}} with categories[0] the paper's primary arXiv category under the name SymTax's
  category embeddings (Scibert_data.json, Specter_data.json) know it by, one of their 40 cs.* classes;
  `contexts_new_head.json` {context_id: {masked_text, citing_id, ref_id, heading}} with masked_text =
  `sentence_context` (the citing sentence and one on each side); `train_data.json`/`val_data.json`/
  `test_data.json` [{context_id, positive_ids}]. per.py builds its citation graph from the context ids alone
  (`key.split("_")[:2]` = citing, cited), so in this layout every paper id has `%` written `%25` and `_`
  written `%5F`, and every context id is `CITING_CITED_k` over those ids.
- `rmc` (from a `pipelines.citationr` dataset), ChainsawM/RMC @ 89dc46ea (src/datautils/dataset.py,
  src/utils/helper.py::prepare_config, src/modules/rankers.py::get_bib_titles): `data/train.json`,
  `data/val.json`, `data/test.json` [{id, positive_ids}]; `data/base/papers.json` {paper_id: {title, abstract,
  bib_refs: [bibref id]}}; `data/base/bibref2info.json` {bibref id: {title, already_recommended}}; with
  extension candidates (`--candidate_years`) also `data/extended/` = base plus those papers.

Whatever a peer's loader would trip over (a context without text, a paper SymTax has no category embedding
for, a positive with no paper) is left out and counted by reason; the counts come back with the file counts.
Everything is done by Beam workers (`WriteExports`): the command above reads the Parquet tables with
`ReadFromParquet`; papers and contexts are joined by `FanOutJoin`, so a paper cited 100,000 times is no one group;
each file is written in key order from sorted shards by one streaming merge (the section "the files" says why one
worker writes each file: the peers' loaders open one JSON document). The launching machine reads back only each
layout's counts, a few bytes. Every file is in key order, so it does not depend on the order of rows in the shards.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import io
import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from operator import itemgetter
from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions, SetupOptions
from apache_beam.pvalue import TaggedOutput

from mapping.taxonomy import load_categories
from mapping.titles import normalize_title
from pipelines.joins import FanOutJoin
from pipelines.outputs import OneLineArgumentParser, fail
from pipelines.ownership import LeaseHeld
from pipelines.tallies import step_label

PIPELINE_EXPORTS: dict[str, tuple[str, ...]] = {"arsyta": ("hatten", "symtax"), "citationr": ("rmc",)}
"""The layouts each pipeline can write (`--export NAME[,NAME]`)."""
EXPORT_JSON_ALIAS: dict[str, str] = {"arsyta": "hatten", "citationr": "rmc"}
"""`--export_json` is this layout, written where it always was: OUTPUT/json/."""
EXPORT_DIR = "export"
LEGACY_JSON_DIR = "json"
SPLIT_PREFIXES = ("train", "validation", "test")


@dataclass(frozen=True)
class ExportRequest:
    """One layout to write after a run, into `directory` (relative to the dataset)."""

    name: str
    directory: str


def plan_exports(names: Iterable[str], export_json: bool, pipeline: str) -> tuple[ExportRequest, ...]:
    """The exports a run asked for (`--export` values, comma-separated and repeatable, and `--export_json`),
    checked before any work: a name the pipeline does not write stops the program in one line (exit 2)."""
    known = PIPELINE_EXPORTS[pipeline]
    wanted = list(dict.fromkeys(n.strip() for value in names for n in value.split(",") if n.strip()))
    for name in wanted:
        if name not in known:
            elsewhere = [p for p, layouts in PIPELINE_EXPORTS.items() if name in layouts]
            hint = f"; {name} is written by pipelines.{elsewhere[0]}" if elsewhere else ""
            fail(f"--export {name!r}: pipelines.{pipeline} writes {', '.join(known)}{hint}")
    requests = [ExportRequest(name, f"{EXPORT_DIR}/{name}") for name in wanted]
    if export_json:
        requests.append(ExportRequest(EXPORT_JSON_ALIAS[pipeline], LEGACY_JSON_DIR))
    return tuple(requests)


@dataclass(frozen=True)
class ExportPlan:
    """The layouts a run writes, in its own Beam job (`WriteDataset`), and whether RMC keeps title-only positives."""

    requests: tuple[ExportRequest, ...] = ()
    include_unresolved: bool = False


NO_EXPORTS = ExportPlan()


def export_temp(output: str) -> str:
    """Where a run's exports keep their temporary shards and counts: a `beam-temp-` directory, which the commit
    never moves into the dataset."""
    return FileSystems.join(output, "beam-temp-export")


def write_exports(
    dataset: str, requests: Sequence[ExportRequest], *, include_unresolved: bool = False, argv: Sequence[str] = ()
) -> list[tuple[ExportRequest, dict[str, int]]]:
    """Write every requested layout of the finished dataset under `dataset` in one Beam pipeline (FnApiRunner unless
    `argv` names another runner and its flags); returns each request with its counts. Into a committed citrec
    dataset, under its lease (`pipelines.ownership`): a layout never replaces a file the dataset's manifest does not
    list, and the manifest then lists the layout's files, so that `--overwrite` removes them with the dataset."""
    from pipelines.commit import update_manifest
    from pipelines.ownership import Lease, acquire_lease, citrec_manifest, release_lease

    manifest = citrec_manifest(dataset)
    if manifest is None:
        return run_exports(dataset, requests, dataset, include_unresolved=include_unresolved, argv=argv)
    listed = {f.get("path") for f in manifest.get("files", [])}
    for request in requests:
        found = FileSystems.join(dataset, request.directory, "**")
        prefix = dataset.rstrip("/") + "/"
        present = [m.path[len(prefix) :] for m in FileSystems.match([found])[0].metadata_list]
        foreign = [path for path in present if path not in listed]
        if foreign:
            fail(
                f"{FileSystems.join(dataset, request.directory)} holds {len(foreign)} files the dataset's manifest "
                f"does not list ({', '.join(foreign[:3])}): the export would replace them; move them away first"
            )
    lease = acquire_lease(dataset, Lease.new("exports"))
    try:
        results = run_exports(dataset, requests, dataset, include_unresolved=include_unresolved, argv=argv)
        update_manifest(dataset, [request.directory for request in requests])
        return results
    finally:
        release_lease(dataset, lease)


def format_export(request: ExportRequest, counts: Mapping[str, int]) -> str:
    """One line for the end-of-run summary: the files with their item counts, then what was left out."""
    return f"export {request.name} -> {request.directory}/: " + ", ".join(f"{k} {v:,}" for k, v in counts.items())


# ---------------------------------------------------------------------------------------------- the files
# Workers write every file. A layout's entries (one per paper, context or split item, its JSON text made on the
# worker that made the entry) are cut by file into groups of at most about `EXPORT_SHARD_ENTRIES`, each sorted and
# written as a temporary shard by the worker that holds it; then one worker per file streams its sorted shards into
# the file in one merge (heapq.merge: one line per shard in memory). A peer's loader opens one JSON document per
# file (`json.load`), so the last step of every file is one sequential write; it reads nothing but the shards, and
# the launching machine reads nothing at all.

EXPORT_SHARD_ENTRIES = 100_000
"""Entries one worker sorts into a temporary shard (a few tens of MB of JSON); a file of N entries is merged from
about N / EXPORT_SHARD_ENTRIES shards."""
DROPPED = "dropped"
DECLARED = "declared"
PRESENT = "present"


@dataclass(frozen=True)
class JsonFile:
    """One file of a layout: an `object` ({"key": value, ...}) or a `list` ([value, ...]), either in key order;
    `optional`: written only when some entry or a presence marker names it (RMC's `data/extended/`)."""

    name: str
    kind: str = "object"
    optional: bool = False


Entry = tuple[str, str, str]
"""(file name, sort key, the entry's JSON text: `"key": value` in an object, `value` in a list)."""


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def object_entry(file: str, key: str, value: object) -> Entry:
    return file, key, f"{_json(key)}: {_json(value)}"


def list_entry(file: str, key: str, value: object) -> Entry:
    return file, key, _json(value)


class _SortShardFn(beam.DoFn):
    """One group of a file's entries, sorted, as a temporary shard: one `[key, text]` JSON line per entry."""

    def __init__(self, temp: str) -> None:
        self.temp = temp

    def process(self, element) -> Iterator:
        name, grouped = element
        entries = sorted(grouped["entries"])
        path = FileSystems.join(self.temp, f"{uuid.uuid4().hex}.jsonl")
        with FileSystems.create(path) as handle:
            for key, text in entries:
                handle.write((_json([key, text]) + "\n").encode("utf-8"))
        yield name, (path, len(entries))


def _shard_entries(path: str) -> Iterator[tuple[str, str]]:
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as raw:
        for line in io.TextIOWrapper(raw, encoding="utf-8"):
            key, text = json.loads(line)
            yield key, text


class _MergeShardsFn(beam.DoFn):
    """One file: its sorted shards merged into it, streamed; yields (file name, entries). An optional file that
    nothing names is not written."""

    def __init__(self, directory: str, files: Sequence[JsonFile]) -> None:
        self.directory = directory
        self.files = {f.name: f for f in files}

    def process(self, element) -> Iterator:
        name, parts = element
        parts = list(parts)
        spec = self.files[name]
        shards = sorted(p for p in parts if isinstance(p, tuple))
        total = sum(n for _, n in shards)
        if spec.optional and not total and PRESENT not in parts:
            return
        opening, closing = (b"{", b"}\n") if spec.kind == "object" else (b"[", b"]")
        with FileSystems.create(FileSystems.join(self.directory, name)) as handle:
            handle.write(opening)
            for i, (_, text) in enumerate(heapq.merge(*(_shard_entries(path) for path, _ in shards))):
                handle.write(((", " if i else "") + text).encode("utf-8"))
            handle.write(closing)
        yield name, total


class WriteJsonFiles(beam.PTransform):
    """`Entry`s into the `files` under `directory`, each in key order, written by workers through sorted temporary
    shards under `temp` (the section's comment); `present`: (file name, PRESENT) markers for optional files. Returns
    (file name, entries) per written file."""

    def __init__(self, directory: str, files: Sequence[JsonFile], temp: str, shard_entries: int = EXPORT_SHARD_ENTRIES):
        super().__init__()
        self.directory = directory
        self.files = tuple(files)
        self.temp = temp
        self.shard_entries = shard_entries

    def expand(self, inputs):
        entries, present = inputs["entries"], inputs["present"]
        shards = (
            {"entries": entries | "ByFile" >> beam.Map(lambda entry: (entry[0], (entry[1], entry[2])))}
            | "Cut" >> FanOutJoin("entries", itemgetter(0), "export_shard", self.shard_entries)
            | "SortShards" >> beam.ParDo(_SortShardFn(self.temp))
        )
        declared = entries.pipeline | "Declared" >> beam.Create([(f.name, DECLARED) for f in self.files])
        return (
            (shards, declared, present)
            | "Parts" >> beam.Flatten()
            | "PartsByFile" >> beam.GroupByKey()
            | "Merge" >> beam.ParDo(_MergeShardsFn(self.directory, self.files))
        )


class _CountsFn(beam.DoFn):
    """Writes one export's counts, with the request they belong to, as a small JSON file."""

    def __init__(self, path: str, request: ExportRequest) -> None:
        self.path = path
        self.request = request

    def process(self, _, counts: dict) -> Iterator:
        record = {
            "name": self.request.name,
            "directory": self.request.directory,
            "counts": dict(sorted(counts.items())),
        }
        with FileSystems.create(self.path) as handle:
            handle.write(_json(record).encode("utf-8"))
        yield self.path


def _empty(pbegin, label: str):
    return pbegin | label >> beam.Create([])


def _table(tables: Mapping, prefix: str, pbegin, label: str):
    return tables[prefix] if prefix in tables else _empty(pbegin, f"No{label}")


# ----------------------------------------------------------------------------- context layouts (arsyta)


class ContextEntry(NamedTuple):
    """One context as a peer keys it: its key, its JSON value, and the citing and cited ids it refers to."""

    key: str
    value: dict[str, object]
    citing_id: str
    cited_id: str


@dataclass(frozen=True)
class ContextLayout:
    """How one peer lays out a context dataset: file names, the columns read, and the row-to-entry rules
    (each returns the entry, or the reason it is left out)."""

    papers_file: str
    contexts_file: str
    split_files: Mapping[str, str]
    paper_columns: tuple[str, ...]
    context_columns: tuple[str, ...]
    paper_entry: Callable[[dict], tuple[str, dict[str, object]] | str]
    context_entry: Callable[[dict], ContextEntry | str]

    @property
    def files(self) -> tuple[JsonFile, ...]:
        """The papers and contexts objects, then the split lists in split order."""
        splits = (JsonFile(self.split_files[split], "list") for split in SPLIT_PREFIXES)
        return JsonFile(self.papers_file), JsonFile(self.contexts_file), *splits


def hatten_paper(row: dict) -> tuple[str, dict[str, object]]:
    return row["paper_id"], {"title": row["title"] or "", "abstract": row["abstract"] or ""}


def hatten_context(row: dict) -> ContextEntry | str:
    if not row["char_context"]:
        return "no_char_context"
    value = {
        "masked_text": row["char_context"],
        "context_id": row["context_id"],
        "citing_id": row["citing_id"],
        "refid": row["cited_id"],
    }
    return ContextEntry(row["context_id"], value, row["citing_id"], row["cited_id"])


HATTEN = ContextLayout(
    papers_file="papers.json",
    contexts_file="contexts.json",
    split_files={"train": "train.json", "validation": "val.json", "test": "test.json"},
    paper_columns=("paper_id", "title", "abstract"),
    context_columns=("context_id", "citing_id", "cited_id", "char_context"),
    paper_entry=hatten_paper,
    context_entry=hatten_context,
)


@cache
def symtax_classes() -> frozenset[str]:
    """The 40 cs.* categories SymTax has category embeddings for (the keys of its Scibert_data.json and
    Specter_data.json @ e3de5b2c): arXiv's cs.* names, aliases included (cs.SY, cs.NA)."""
    names, _ = load_categories()
    return frozenset(name for name in names if name.startswith("cs."))


def symtax_category(category: str) -> str:
    """The name SymTax knows a category by: our data keeps arXiv's canonical names (eess.SY, math.NA), SymTax
    keys its embeddings by the cs.* alias (cs.SY, cs.NA); any other category is returned as it is."""
    if category in symtax_classes():
        return category
    _, aliases = load_categories()
    return next((a for a, c in aliases.items() if c == category and a in symtax_classes()), category)


def symtax_categories(primary: str | None, categories: Sequence[str] | None) -> list[str]:
    """The primary category first, then the others, in SymTax's names, without repeats."""
    ordered = ([primary] if primary else []) + list(categories or [])
    return list(dict.fromkeys(symtax_category(c) for c in ordered))


def symtax_id(paper_id: str) -> str:
    """A paper id with no `_` in it (per.py splits context ids on `_`): `%` -> `%25`, `_` -> `%5F`, reversible."""
    return paper_id.replace("%", "%25").replace("_", "%5F")


def symtax_context_id(context_id: str, citing_id: str, cited_id: str) -> str:
    """`CITING_CITED_k` over SymTax ids; k is our id's tail (or, for an id of another form, a digest of it)."""
    prefix = f"{citing_id}_{cited_id}_"
    tail = context_id[len(prefix) :] if context_id.startswith(prefix) else hashlib.sha1(context_id.encode()).hexdigest()
    return f"{symtax_id(citing_id)}_{symtax_id(cited_id)}_{tail}"


def symtax_paper(row: dict) -> tuple[str, dict[str, object]] | str:
    categories = symtax_categories(row["primary_category"], row["categories"])
    if not categories or categories[0] not in symtax_classes():
        return "primary_category_not_in_symtax"
    value = {"title": row["title"] or "", "abstract": row["abstract"] or "", "categories": categories}
    return symtax_id(row["paper_id"]), value


def symtax_context(row: dict) -> ContextEntry | str:
    if not row["sentence_context"]:
        return "no_sentence_context"
    citing, cited = symtax_id(row["citing_id"]), symtax_id(row["cited_id"])
    value = {
        "masked_text": row["sentence_context"],
        "citing_id": citing,
        "ref_id": cited,
        "heading": row["section_heading"] or "",
    }
    return ContextEntry(symtax_context_id(row["context_id"], row["citing_id"], row["cited_id"]), value, citing, cited)


SYMTAX = ContextLayout(
    papers_file="papers_cat.json",
    contexts_file="contexts_new_head.json",
    split_files={"train": "train_data.json", "validation": "val_data.json", "test": "test_data.json"},
    paper_columns=("paper_id", "title", "abstract", "categories", "primary_category"),
    context_columns=("context_id", "citing_id", "cited_id", "sentence_context", "section_heading"),
    paper_entry=symtax_paper,
    context_entry=symtax_context,
)


CONTEXT_LAYOUTS: dict[str, ContextLayout] = {"hatten": HATTEN, "symtax": SYMTAX}


class _PaperEntriesFn(beam.DoFn):
    """A paper row to (the layout's paper key, its JSON value), or a dropped count."""

    def __init__(self, layout: ContextLayout) -> None:
        self.layout = layout

    def process(self, row: dict) -> Iterator:
        entry = self.layout.paper_entry(row)
        if isinstance(entry, str):
            yield TaggedOutput(DROPPED, (f"dropped_papers:{entry}", 1))
        else:
            yield entry


class _ContextEntriesFn(beam.DoFn):
    """A context row of `split` to (citing key, (split, context key, JSON value, cited key)), or a dropped count."""

    def __init__(self, layout: ContextLayout, split: str) -> None:
        self.layout = layout
        self.split = split

    def process(self, row: dict) -> Iterator:
        entry = self.layout.context_entry(row)
        if isinstance(entry, str):
            yield TaggedOutput(DROPPED, (f"dropped_contexts:{entry}", 1))
        else:
            yield entry.citing_id, (self.split, entry.key, _json(entry.value), entry.cited_id)


class _KeepIfExportedFn(beam.DoFn):
    """Contexts joined with their citing (`end` 0) or cited (`end` 1) paper: on, keyed by the cited paper (after
    the citing one), when that paper was exported; else a dropped count."""

    def __init__(self, end: int) -> None:
        self.end = end

    def process(self, element) -> Iterator:
        _, grouped = element
        exported = bool(grouped["papers"])
        reason = ("citing_paper_not_exported", "cited_paper_not_exported")[self.end]
        for context in grouped["contexts"]:
            if not exported:
                yield TaggedOutput(DROPPED, (f"dropped_contexts:{reason}", 1))
            elif self.end == 0:
                yield context[3], context
            else:
                yield context


def _context_files(context, layout: ContextLayout) -> Iterator[Entry]:
    split, key, value, cited = context
    yield layout.contexts_file, key, f"{_json(key)}: {value}"
    yield list_entry(layout.split_files[split], key, {"context_id": key, "positive_ids": [cited]})


class ExportContextLayout(beam.PTransform):
    """A context dataset's tables (`papers/papers`, `contexts/SPLIT`: rows) to `{"entries", "dropped", "present"}`
    in `layout`: a context is written when its citing and cited papers were; its split file lists it as
    {context_id, positive_ids: [cited]}. The two joins with the exported papers are `FanOutJoin`s, so a paper cited
    100,000 times is no one group."""

    def __init__(self, layout: ContextLayout) -> None:
        super().__init__()
        self.layout = layout

    def expand(self, tables):
        layout = self.layout
        pbegin = tables["papers/papers"].pipeline
        papers = tables["papers/papers"] | "Papers" >> beam.ParDo(_PaperEntriesFn(layout)).with_outputs(
            DROPPED, main="papers"
        )
        exported = papers.papers | "ExportedKeys" >> beam.Map(lambda entry: (entry[0], True))
        contexts, dropped = [], [papers[DROPPED]]
        for split in SPLIT_PREFIXES:
            label = split.title()
            rows = _table(tables, f"contexts/{split}", pbegin, f"{label}Contexts")
            cut = rows | f"{label}Contexts" >> beam.ParDo(_ContextEntriesFn(layout, split)).with_outputs(
                DROPPED, main="contexts"
            )
            contexts.append(cut.contexts)
            dropped.append(cut[DROPPED])
        citing = (
            {"contexts": contexts | "AllContexts" >> beam.Flatten(), "papers": exported}
            | "JoinCitingPapers" >> FanOutJoin("contexts", itemgetter(1), "export_citing_paper")
            | "KeepCitingExported" >> beam.ParDo(_KeepIfExportedFn(0)).with_outputs(DROPPED, main="kept")
        )
        cited = (
            {"contexts": citing.kept, "papers": exported}
            | "JoinCitedPapers" >> FanOutJoin("contexts", itemgetter(1), "export_cited_paper")
            | "KeepCitedExported" >> beam.ParDo(_KeepIfExportedFn(1)).with_outputs(DROPPED, main="kept")
        )
        dropped += [citing[DROPPED], cited[DROPPED]]
        entries = (
            papers.papers
            | "PaperEntries" >> beam.MapTuple(lambda key, value: object_entry(layout.papers_file, key, value)),
            cited.kept | "ContextEntries" >> beam.FlatMap(_context_files, layout),
        ) | "Entries" >> beam.Flatten()
        return {
            "entries": entries,
            DROPPED: dropped | "Dropped" >> beam.Flatten(),
            PRESENT: _empty(pbegin, "NothingOptional"),
        }


# ---------------------------------------------------------------------------------------- rmc (citationr)

RMC_SPLIT_FILES = {"train": "data/train.json", "validation": "data/val.json", "test": "data/test.json"}


def rmc_bibref_id(submission_id: str, position: int) -> str:
    """A bibliography entry's id: the submission and the entry's place in its reference list."""
    return f"{submission_id}#ref{position}"


def rmc_bib_refs(
    submission_id: str, reference_titles: Sequence[str], recommended_titles: Iterable[str]
) -> list[tuple[str, dict[str, object]]]:
    """The submission's bibliography as RMC's bibref2info entries. `already_recommended` marks an entry whose
    title (normalised) is one the reviewers recommended to this submission: RMC's loaders
    (dataset.py::get_paper_ref_lst, rankers.py::get_bib_titles) leave those out of the query, so the answer
    does not leak into it."""
    recommended = {normalize_title(t) for t in recommended_titles} - {""}
    return [
        (
            rmc_bibref_id(submission_id, k),
            {"title": title, "already_recommended": normalize_title(title) in recommended},
        )
        for k, title in enumerate(t for t in reference_titles if t)
    ]


RMC_FILES = (
    *(JsonFile(name, "list") for name in RMC_SPLIT_FILES.values()),
    JsonFile("data/base/papers.json"),
    JsonFile("data/base/bibref2info.json"),
    JsonFile("data/extended/papers.json", optional=True),
    JsonFile("data/extended/bibref2info.json", optional=True),
)
"""RMC's files; `data/extended/` only with extension candidates (`--candidate_years`)."""


class _KeptPositiveFn(beam.DoFn):
    """A positive row to (paper id, (submission, its title)), or a dropped count when it is title-only (unresolved)
    and those are left out."""

    def __init__(self, include_unresolved: bool) -> None:
        self.include_unresolved = include_unresolved

    def process(self, row: dict) -> Iterator:
        if not (row["resolved"] or self.include_unresolved):
            yield TaggedOutput(DROPPED, ("dropped_positives:unresolved", 1))
        else:
            yield row["paper_id"], (row["submission_id"], row["title"] or "")


def _candidate(row: dict) -> tuple[str, tuple[str, str, str]]:
    return row["paper_id"], (row["title"] or "", row["abstract"] or "", row["role"] or "")


def _rmc_paper(title: str, abstract: str) -> dict[str, object]:
    return {"title": title, "abstract": abstract, "bib_refs": []}


class _PositivePapersFn(beam.DoFn):
    """A paper with the kept positives that name it and its candidate rows: its record (the main output; the first
    row in order, where the rows disagree), each submission's `recorded` (submission, paper) and the candidate titles as
    titles the submission's reviewers recommended (`titles`); a paper no kept positive names is an `extension`
    paper when a row says so."""

    def process(self, element) -> Iterator:
        paper_id, grouped = element
        rows = sorted(set(grouped["candidates"]))
        positives = grouped["positives"]
        if positives and rows:
            title, abstract, _ = rows[0]
            yield paper_id, _rmc_paper(title, abstract)
            for submission, _ in positives:
                yield TaggedOutput("recorded", (submission, paper_id))
                for candidate_title, _, _ in rows:
                    yield TaggedOutput("titles", (submission, candidate_title))
        elif not positives:
            extension = [row for row in rows if row[2] == "extension"]
            if extension:
                yield TaggedOutput("extension", (paper_id, _rmc_paper(*extension[0][:2])))


def _query(split: str):
    def keyed(row: dict) -> tuple[str, tuple]:
        fields = (row["title"], row["abstract"], tuple(row["reference_titles"] or ()), tuple(row["positive_ids"] or ()))
        return row["submission_id"], (split, *fields)

    return keyed


class _QueryFilesFn(beam.DoFn):
    """One submission: its query in its split file with the positives that were kept and have a paper record,
    its bibliography entries (`bibrefs`) and its own paper record (`submissions`); dropped counts for the rest."""

    def process(self, element) -> Iterator:
        submission, grouped = element
        kept, recorded = set(grouped["kept"]), set(grouped["recorded"])
        titles = set(grouped["titles"])
        for split, title, abstract, references, positive_ids in sorted(grouped["queries"]):
            ids = []
            for paper_id in positive_ids:
                if paper_id not in kept:
                    continue
                if paper_id not in recorded:
                    yield TaggedOutput(DROPPED, ("dropped_positives:no_paper_record", 1))
                    continue
                ids.append(paper_id)
            if not ids:
                yield TaggedOutput(DROPPED, ("dropped_queries:no_exported_positive", 1))
                continue
            yield list_entry(RMC_SPLIT_FILES[split], submission, {"id": submission, "positive_ids": ids})
            refs = rmc_bib_refs(submission, references, titles)
            for ref_id, info in refs:
                yield TaggedOutput("bibrefs", (ref_id, (0, _json(info))))
            paper = {"title": title or "", "abstract": abstract or "", "bib_refs": [ref_id for ref_id, _ in refs]}
            yield TaggedOutput("submissions", (submission, paper))


def _ranked(rank: int):
    return lambda element: (element[0], (rank, _json(element[1])))


def _record_entries(element, name: str, wanted: int = 1) -> Iterator[Entry]:
    """A record (id, (rank, JSON text)) as an entry of `name`; none when `wanted` is 0 (no extension papers, so no
    `data/extended/`)."""
    key, (_, text) = element
    if wanted:
        yield name, key, f"{_json(key)}: {text}"


class ExportRmc(beam.PTransform):
    """A CitationR dataset's tables (`positives/positives`, `candidates/candidates`, `queries/SPLIT`: rows) to
    `{"entries", "dropped", "present"}` in RMC's layout (`export_rmc`'s docstring). Joins by paper (a `FanOutJoin`:
    a paper recommended to many submissions is no one group) and by submission; where two records share an id, the
    submission's wins over the recommended paper's, which wins over an extension paper's."""

    def __init__(self, include_unresolved: bool = False) -> None:
        super().__init__()
        self.include_unresolved = include_unresolved

    def expand(self, tables):
        pbegin = tables["positives/positives"].pipeline
        positives = tables["positives/positives"] | "KeptPositives" >> beam.ParDo(
            _KeptPositiveFn(self.include_unresolved)
        ).with_outputs(DROPPED, main="kept")
        papers = (
            {
                "positives": positives.kept,
                "candidates": tables["candidates/candidates"] | "Candidates" >> beam.Map(_candidate),
            }
            | "JoinPapers" >> FanOutJoin("positives", itemgetter(0), "export_recommended_paper")
            | "PositivePapers"
            >> beam.ParDo(_PositivePapersFn()).with_outputs("recorded", "titles", "extension", main="papers")
        )
        by_submission = positives.kept | "BySubmission" >> beam.MapTuple(lambda paper, sub_title: (sub_title[0], paper))
        titles = (
            positives.kept | "PositiveTitles" >> beam.MapTuple(lambda _, sub_title: sub_title),
            papers.titles,
        ) | "AllTitles" >> beam.Flatten()
        queries = [
            _table(tables, f"queries/{split}", pbegin, f"{split.title()}Queries")
            | f"{split.title()}QueriesBySubmission" >> beam.Map(_query(split))
            for split in SPLIT_PREFIXES
        ]
        files = (
            {
                "queries": queries | "AllQueries" >> beam.Flatten(),
                "kept": by_submission,
                "recorded": papers.recorded,
                "titles": titles,
            }
            | "JoinSubmissions" >> beam.CoGroupByKey()
            | "QueryFiles" >> beam.ParDo(_QueryFilesFn()).with_outputs(DROPPED, "bibrefs", "submissions", main="splits")
        )
        extension = beam.pvalue.AsSingleton(papers.extension | "CountExtension" >> beam.combiners.Count.Globally())
        records = (
            papers.extension | "RankExtension" >> beam.Map(_ranked(0)),
            papers.papers | "RankRecommended" >> beam.Map(_ranked(1)),
            files.submissions | "RankSubmissions" >> beam.Map(_ranked(2)),
        ) | "AllRecords" >> beam.Flatten()
        base = (
            records
            | "NotExtension" >> beam.Filter(lambda element: element[1][0] > 0)
            | "OnePerId" >> beam.CombinePerKey(max)
        )
        everything = records | "OnePerIdWithExtension" >> beam.CombinePerKey(max)
        bibrefs = files.bibrefs | "OneBibrefPerId" >> beam.CombinePerKey(max)
        paper_files = ("data/base/papers.json", "data/extended/papers.json")
        bibref_files = ("data/base/bibref2info.json", "data/extended/bibref2info.json")
        entries = (
            files.splits,
            base | "BasePapers" >> beam.FlatMap(_record_entries, paper_files[0]),
            everything | "ExtendedPapers" >> beam.FlatMap(_record_entries, paper_files[1], extension),
            bibrefs | "BaseBibrefs" >> beam.FlatMap(_record_entries, bibref_files[0]),
            bibrefs | "ExtendedBibrefs" >> beam.FlatMap(_record_entries, bibref_files[1], extension),
        ) | "Entries" >> beam.Flatten()
        present = (
            pbegin
            | "Extended" >> beam.Create([name for name in (paper_files[1], bibref_files[1])])
            | "IfExtension" >> beam.FlatMap(lambda name, n: [(name, PRESENT)] if n else [], extension)
        )
        dropped = (positives[DROPPED], files[DROPPED]) | "Dropped" >> beam.Flatten()
        return {"entries": entries, DROPPED: dropped, PRESENT: present}


# -------------------------------------------------------------------------------------------- every export


LAYOUT_TABLES: dict[str, tuple[str, ...]] = {
    "hatten": ("papers", "contexts"),
    "symtax": ("papers", "contexts"),
    "rmc": ("positives", "candidates", "queries"),
}
"""The tables each layout reads; the first ones must hold rows files (a split table may have none)."""
SPLIT_TABLES = ("contexts", "queries")


def layout_files(name: str) -> tuple[JsonFile, ...]:
    return RMC_FILES if name == "rmc" else CONTEXT_LAYOUTS[name].files


def table_prefixes(name: str) -> list[str]:
    """The Parquet prefixes a layout reads (`papers/papers`, `contexts/train`, ...)."""
    return [
        f"{table}/{split}" if table in SPLIT_TABLES else f"{table}/{table}"
        for table in LAYOUT_TABLES[name]
        for split in (SPLIT_PREFIXES if table in SPLIT_TABLES else ("",))
    ]


def counts_path(temp: str, index: int | str) -> str:
    return FileSystems.join(temp, f"counts-{index}.json")


def ordered_counts(name: str, counts: Mapping[str, int]) -> dict[str, int]:
    """A layout's counts as they are printed: its files in their order (an optional file only when written), then
    what was left out, by reason."""
    files = [f.name for f in layout_files(name) if f.name in counts]
    return {**{f: counts[f] for f in files}, **{k: v for k, v in sorted(counts.items()) if k not in files}}


def read_counts(temp: str) -> list[tuple[ExportRequest, dict[str, int]]]:
    """Each export's request and counts, in the order they were requested, from the small files the exports wrote
    under `temp` (the only thing read back); [] when there were none."""
    found = FileSystems.match([counts_path(temp, "*")])[0].metadata_list if FileSystems.exists(temp) else []
    results = []
    for path in sorted((m.path for m in found), key=lambda path: int(path.rsplit("-", 1)[1].split(".")[0])):
        with FileSystems.open(path) as handle:
            record = json.loads(handle.read().decode("utf-8"))
        request = ExportRequest(record["name"], record["directory"])
        results.append((request, ordered_counts(request.name, record["counts"])))
    return results


class WriteExports(beam.PTransform):
    """Every requested layout of a dataset's `tables` ({Parquet prefix: rows}, a missing split prefix an empty
    one) under `root/REQUEST.DIRECTORY/`, written by workers; each request's counts (files and what was left out)
    go to `counts_path(temp, i)`, its temporary shards under `temp`."""

    def __init__(
        self, requests: Sequence[ExportRequest], root: str, temp: str, include_unresolved: bool = False
    ) -> None:
        super().__init__()
        self.requests = tuple(requests)
        self.root = root
        self.temp = temp
        self.include_unresolved = include_unresolved

    def expand(self, tables):
        pbegin = next(iter(tables.values())).pipeline
        written = []
        for index, request in enumerate(self.requests):
            label = f"{request.name.title()}{index}"
            made = tables | f"Layout{label}" >> (
                ExportRmc(self.include_unresolved)
                if request.name == "rmc"
                else ExportContextLayout(CONTEXT_LAYOUTS[request.name])
            )
            files = {"entries": made["entries"], "present": made[PRESENT]} | f"Write{label}" >> WriteJsonFiles(
                FileSystems.join(self.root, request.directory),
                layout_files(request.name),
                FileSystems.join(self.temp, str(index)),
            )
            counts = (
                (files, made[DROPPED])
                | f"Counts{label}" >> beam.Flatten()
                | f"Sum{label}" >> beam.CombinePerKey(sum)
                | f"CountDict{label}" >> beam.combiners.ToDict()
            )
            written.append(
                pbegin
                | f"Finish{label}" >> beam.Create([None])
                | f"WriteCounts{label}"
                >> beam.ParDo(_CountsFn(counts_path(self.temp, index), request), beam.pvalue.AsSingleton(counts))
            )
        return written


def read_tables(pipeline: beam.Pipeline, dataset: str, requests: Sequence[ExportRequest]) -> dict:
    """The Parquet tables the requested layouts read, as rows, read by workers (`ReadFromParquet`); a layout's
    required table with no files is a `FileNotFoundError`, checked before the pipeline runs."""
    tables = {}
    for request in requests:
        for prefix in table_prefixes(request.name):
            if prefix in tables:
                continue
            pattern = FileSystems.join(dataset, f"{prefix}-*.parquet")
            label = step_label(prefix)
            if FileSystems.match([pattern])[0].metadata_list:
                tables[prefix] = pipeline | f"Read{label}" >> beam.io.ReadFromParquet(pattern)
            elif prefix.split("/")[0] in SPLIT_TABLES:
                tables[prefix] = _empty(pipeline, f"No{label}")
            else:
                raise FileNotFoundError(f"{FileSystems.join(dataset, prefix.split('/')[0])}/ holds no Parquet table")
    return tables


def run_exports(
    dataset: str,
    requests: Sequence[ExportRequest],
    root: str,
    *,
    include_unresolved: bool = False,
    argv: Sequence[str] = (),
) -> list[tuple[ExportRequest, dict[str, int]]]:
    """The requested layouts of the finished dataset `dataset`, under `root/REQUEST.DIRECTORY/`, in one Beam
    pipeline (`argv`: Beam's flags; FnApiRunner by default); returns each request with its counts."""
    if not requests:
        return []
    temp = FileSystems.join(root, f"beam-temp-export-{uuid.uuid4().hex}")
    options = PipelineOptions(["--runner=FnApiRunner", *argv])
    options.view_as(SetupOptions).save_main_session = False
    try:
        with beam.Pipeline(options=options) as pipeline:
            tables = read_tables(pipeline, dataset, requests)
            _ = tables | "Exports" >> WriteExports(requests, root, temp, include_unresolved)
        return read_counts(temp)
    finally:
        if FileSystems.exists(temp):
            FileSystems.delete([temp])


def export_hatten(dataset: str, output: str) -> dict[str, int]:
    """The layout of nianlonggu/Local-Citation-Recommendation's `data/custom/` (HAtten prefetcher + SciBERT
    reranker) in `output`; returns the items per file and what was left out."""
    return _export_one(dataset, output, "hatten")


def export_symtax(dataset: str, output: str) -> dict[str, int]:
    """The layout goyalkaraniit/SymTax's per.py and reranker read, in `output`; returns the items per file and what
    was left out (papers whose primary category SymTax has no embedding for, and the contexts that touch them)."""
    return _export_one(dataset, output, "symtax")


def export_rmc(dataset: str, output: str, include_unresolved: bool = False) -> dict[str, int]:
    """The layout ChainsawM/RMC's MCDataset reads under its project root's `data/`, in `output`; returns the items
    per file and what was left out. Title-only (unresolved) positives are left out unless `include_unresolved`."""
    return _export_one(dataset, output, "rmc", include_unresolved)


def _export_one(dataset: str, output: str, name: str, include_unresolved: bool = False) -> dict[str, int]:
    parent, directory = output.rstrip("/").rsplit("/", 1) if "/" in output.rstrip("/") else (".", output)
    [(_, counts)] = run_exports(
        dataset, [ExportRequest(name, directory)], parent, include_unresolved=include_unresolved
    )
    return counts


EXPORTERS: dict[str, Callable[..., dict[str, int]]] = {
    "hatten": export_hatten,
    "symtax": export_symtax,
    "rmc": export_rmc,
}


# -------------------------------------------------------------------------------------------------- CLI


def main(argv: Sequence[str] | None = None) -> None:
    parser = OneLineArgumentParser(
        prog="python -m pipelines.exports",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Beam's flags (--runner, --project, --region, --temp_location, ...) are passed to the export "
        "pipeline; the default runner is FnApiRunner.",
    )
    parser.add_argument(
        "--dataset", required=True, help="A dataset directory written by pipelines.arsyta or citationr."
    )
    parser.add_argument(
        "--export",
        action="append",
        default=[],
        required=True,
        metavar="NAME[,NAME]",
        help="Layouts to write: hatten, symtax (arsyta datasets), rmc (citationr datasets). Repeatable.",
    )
    parser.add_argument("--output", help="Where the NAME/ directories go (default: DATASET/export).")
    parser.add_argument("--export_unresolved", action="store_true", help="rmc: keep title-only (unresolved) positives.")
    args, beam_args = parser.parse_known_args(argv)
    names = list(dict.fromkeys(n.strip() for value in args.export for n in value.split(",") if n.strip()))
    for name in names:
        if name not in EXPORTERS:
            fail(f"--export {name!r}: choose from {', '.join(EXPORTERS)}")
    requests = [ExportRequest(name, name if args.output else f"{EXPORT_DIR}/{name}") for name in names]
    try:
        flags = {"include_unresolved": args.export_unresolved, "argv": beam_args}
        if args.output:
            root = args.output
            results = run_exports(args.dataset, requests, root, **flags)
        else:
            root = args.dataset
            results = write_exports(args.dataset, requests, **flags)
    except LeaseHeld as err:
        fail(str(err))
    except FileNotFoundError as err:
        wanted = ", ".join(f"--export {n} reads a pipelines.{_pipeline_of(n)} dataset" for n in names)
        fail(f"{err} ({wanted})")
    for request, counts in results:
        print(
            f"{request.name} -> {FileSystems.join(root, request.directory)}: "
            + ", ".join(f"{k} {v:,}" for k, v in counts.items())
        )


def _pipeline_of(name: str) -> str:
    return next(p for p, layouts in PIPELINE_EXPORTS.items() if name in layouts)


if __name__ == "__main__":
    # Run the module imported under its own name: every DoFn and function the export pipeline pickles is then
    # `pipelines.exports.X`, which a worker imports, never `__main__.X`, which only this process has.
    from pipelines.exports import main as imported_main

    imported_main()
