"""What HAtten's and SymTax's layouts share. Papers and contexts objects, one list per split, and
`ExportContextLayout`, which keeps a context only when its citing and cited papers were exported (two
`FanOutJoin`s, so a paper cited 100,000 times is no one group)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import NamedTuple

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from pipelines.exports.files import (
    DROPPED,
    PRESENT,
    SPLIT_PREFIXES,
    Entry,
    JsonFile,
    empty_rows,
    json_text,
    list_entry,
    object_entry,
    table_rows,
)
from pipelines.joins import FanOutJoin


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
            yield entry.citing_id, (self.split, entry.key, json_text(entry.value), entry.cited_id)


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
    yield layout.contexts_file, key, f"{json_text(key)}: {value}"
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
            rows = table_rows(tables, f"contexts/{split}", pbegin, f"{label}Contexts")
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
            PRESENT: empty_rows(pbegin, "NothingOptional"),
        }
