"""Reference resolution as Beam joins, for databases too large for one worker.

Identifiers first: references and papers are joined on every identifier key and each reference takes the
paper of its strongest key (`JoinOnIdentifiers`). The rest is matched by title with a MinHash-LSH join built
from `mapping/matcher.py`'s pieces, and raw strings by their title-sized segments (`MatchRawStrings`), so the
resolutions equal the in-memory matcher's. No step holds the database: the largest group is one bucket or one
paper's candidate pairs. The joins step by step: docs/design.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from operator import itemgetter

import apache_beam as beam
import numpy as np
from apache_beam.io.filesystems import FileSystems
from apache_beam.options.pipeline_options import PipelineOptions
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cpdist

from mapping.ids import resolution_method
from mapping.matcher import (
    MatchConfig,
    cap_bucket,
    checked_title,
    choose_candidate,
    could_match,
    count_identifier_kinds,
    rank_candidates,
    signatures_and_keys,
    usable_title,
)
from mapping.raw_strings import RawCandidateTitle, checked_raw, first_author_surname, resolve_raw_candidates
from mapping.records import BibEntry, CounterFn, Paper, ParsedDocument, Resolution, ResolvedDocument, no_count
from pipelines.coders import SEALED, SealedDocument, sealed, unseal
from pipelines.joins import MAX_GROUP, FanOutJoin
from pipelines.tallies import TALLY, ConfiguredFn, ConfiguredTransform, Tallies, TallyingFn
from pipelines.transforms import count_resolutions

PAPERS = "papers"
REFS = "refs"
UNCOUNTED = "\x1e"
"""A reference key starting with this is matched like any other but counted by no tally: CitationR resolves every
mention and counts only the recommended ones (what `InMemoryMatcher.resolve` with a no-op counter does)."""
RECORDS = "records"
DONE = "done"
RAW = "raw"


def counter_for(ref: str, tally: Tallies) -> CounterFn:
    """The counter a reference's outcomes go to: `tally`, or none for an `UNCOUNTED` reference."""
    return no_count if ref.startswith(UNCOUNTED) else tally


def _with_first(element: tuple, tag: str) -> tuple:
    """A joined element (`CoGroupByKey`) as (key, grouped, the first value under `tag` or None when it has none)."""
    key, grouped = element
    return key, grouped, next(iter(grouped[tag]), None)


class _SignatureFn(ConfiguredFn):
    """A batch of (key, title, year, bib_id) to bucket keys and (key, record) with the signature."""

    config: MatchConfig

    def process(self, batch: list[tuple[str, str, int | None, str]]) -> Iterator:
        signatures, keys = signatures_and_keys([title for _, title, _, _ in batch], self.config)
        for (key, title, year, bib_id), signature, bands in zip(batch, signatures, keys, strict=True):
            yield beam.pvalue.TaggedOutput(RECORDS, (key, (title, year, bib_id, signature.tobytes())))
            for band, bucket in enumerate(bands.tolist()):
                yield (band, bucket), key


class CapBucketFn(beam.CombineFn):
    """The papers of one LSH bucket as `cap_bucket` keeps them, (the first `max_bucket` ids, how many were left
    out), combined without gathering the bucket: each accumulator keeps at most `max_bucket` ids."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config

    def create_accumulator(self) -> tuple[list[str], int]:
        return [], 0

    def add_input(self, accumulator: tuple[list[str], int], paper_id: str) -> tuple[list[str], int]:
        kept, skipped = accumulator
        kept, more = cap_bucket([*kept, paper_id], self.config)
        return kept, skipped + more

    def merge_accumulators(self, accumulators) -> tuple[list[str], int]:
        everything, skipped = [], 0
        for kept, more in accumulators:
            everything.extend(kept)
            skipped += more
        kept, more = cap_bucket(everything, self.config)
        return kept, skipped + more

    def extract_output(self, accumulator: tuple[list[str], int]) -> tuple[list[str], int]:
        return accumulator


class MatchStage(ConfiguredTransform):
    """A matching stage: set by a `MatchConfig`, its joins (`FanOutJoin`) hold at most `max_group` elements a
    group."""

    config: MatchConfig

    def __init__(self, config: MatchConfig, max_group: int = MAX_GROUP) -> None:
        super().__init__(config)
        self.max_group = max_group


class JoinBuckets(MatchStage):
    """`{"papers": (bucket, paper id), "refs": (bucket, ref key)}` into the candidate pairs `(paper id, ref key)`
    of every bucket holding both, and `tally` (`kind`: title or raw). A bucket's papers are capped by a combine
    (`CapBucketFn`) before the join, and its references are spread by `FanOutJoin`: no group holds a bucket's
    every paper or every reference (a title cited 100,000 times puts its references in the same buckets)."""

    def __init__(self, config: MatchConfig, kind: str = "title", max_group: int = MAX_GROUP) -> None:
        super().__init__(config, max_group)
        self.kind = kind

    def expand(self, inputs):
        capped = inputs[PAPERS] | "CapBuckets" >> beam.CombinePerKey(CapBucketFn(self.config))
        return (
            {PAPERS: capped, REFS: inputs[REFS]}
            | "Join" >> FanOutJoin(REFS, str, f"{self.kind}_bucket", self.max_group)
            | "Pairs" >> beam.ParDo(_BucketPairsFn(self.kind)).with_outputs(TALLY, main="pairs")
        )


class _BucketPairsFn(TallyingFn):
    """One LSH bucket (or one group of a hot bucket's references): (paper id, reference key) for every reference
    and capped paper in it. Counters are named `<kind>_bucket_hits_capped` and
    `<kind>_candidate_pairs_skipped_by_cap` (kind: title or raw)."""

    def __init__(self, kind: str = "title") -> None:
        self.kind = kind

    def process(self, element) -> Iterator:
        _, grouped = element
        refs = grouped[REFS]
        capped = next(iter(grouped[PAPERS]), None)
        if not refs or capped is None:
            return
        papers, skipped = capped
        counted = sum(not ref.startswith(UNCOUNTED) for ref in refs)
        if skipped and counted:
            tally = self.tallies()
            tally(f"{self.kind}_bucket_hits_capped", counted)
            tally(f"{self.kind}_candidate_pairs_skipped_by_cap", skipped * counted)
            yield from tally.emit()
        for paper_id in papers:
            for ref in refs:
                yield paper_id, ref


class _AttachPaperFn(beam.DoFn):
    """One paper: its record (id, title, year, signature, first author's surname) on each distinct reference
    that has it as a candidate."""

    def process(self, element) -> Iterator:
        paper_id, grouped, record = _with_first(element, RECORDS)
        if record is None:
            return
        title, year, surname, signature = record
        for ref in sorted(set(grouped["pairs"])):
            yield ref, (paper_id, title, year, signature, surname)


class _VerifyFn(ConfiguredFn):
    """A batch of references with their candidates: rank, verify by LCS with `cpdist`, choose."""

    config: MatchConfig

    def process(self, batch: list) -> Iterator:
        tally = self.tallies()
        chosen, left, right = [], [], []
        for ref, grouped in batch:
            records = list(grouped[RECORDS])
            if not records:
                continue
            title, year, bib_id, signature = records[0]
            candidates = [c for c in sorted(grouped["candidates"]) if could_match(len(title), len(c[1]), self.config)]
            if candidates:
                own = np.frombuffer(signature, dtype=np.uint32)
                estimated = [float((np.frombuffer(c[3], dtype=np.uint32) == own).mean()) for c in candidates]
                candidates = [
                    candidates[i] for i in rank_candidates([c[0] for c in candidates], estimated, self.config)
                ]
            chosen.append((ref, bib_id, year, candidates))
            left.extend(title for _ in candidates)
            right.extend(c[1] for c in candidates)
        scores = cpdist(left, right, scorer=LCSseq.normalized_similarity, workers=1, dtype=np.float64) if left else []
        offset = 0
        for ref, bib_id, year, candidates in chosen:
            similarities = [float(s) for s in scores[offset : offset + len(candidates)]]
            offset += len(candidates)
            resolution = choose_candidate(
                bib_id,
                year,
                [c[0] for c in candidates],
                similarities,
                [c[2] for c in candidates],
                self.config,
                counter_for(ref, tally),
            )
            yield ref, resolution
        yield from tally.emit()


class _UsableTitleFn(ConfiguredFn):
    config: MatchConfig

    def process(self, element: tuple[str, BibEntry]) -> Iterator:
        ref, entry = element
        title, problem = checked_title(entry.title, self.config)
        if title is None and entry.raw:
            yield beam.pvalue.TaggedOutput(RAW, element)  # no usable title: the raw string is matched instead
        elif title is None:
            tally = self.tallies()
            counter_for(ref, tally)(f"unresolved:{problem}", 1)
            yield beam.pvalue.TaggedOutput(DONE, (ref, Resolution(entry.bib_id, None, "unresolved")))
            yield from tally.emit()
        else:
            yield ref, title, entry.year, entry.bib_id


def _batched(pcoll, label: str):
    return pcoll | label >> beam.BatchElements(min_batch_size=256, max_batch_size=4096)


class MatchTitles(MatchStage):
    """`{"papers": Paper, "refs": (ref key, BibEntry)}` to `{"resolutions": (ref key, Resolution), "tally"}`.

    Every reference comes out exactly once: resolved by title, ambiguous, or unresolved with a counted
    reason."""

    def expand(self, inputs):
        config = self.config
        usable = inputs[REFS] | "UsableTitles" >> beam.ParDo(_UsableTitleFn(config)).with_outputs(
            DONE, RAW, TALLY, main="usable"
        )
        papers = _batched(inputs[PAPERS] | "PaperTitles" >> beam.FlatMap(_paper_title, config), "BatchPapers") | (
            "SignPapers" >> beam.ParDo(_SignatureFn(config)).with_outputs(RECORDS, main="buckets")
        )
        refs = _batched(usable.usable, "BatchRefs") | "SignRefs" >> beam.ParDo(_SignatureFn(config)).with_outputs(
            RECORDS, main="buckets"
        )
        pairs = {PAPERS: papers.buckets, REFS: refs.buckets} | "JoinBuckets" >> JoinBuckets(
            config, "title", self.max_group
        )
        candidates = (
            {"pairs": pairs.pairs, RECORDS: papers[RECORDS]}
            | "JoinPapers" >> FanOutJoin("pairs", str, "title_candidate_paper", self.max_group)
            | "AttachPapers" >> beam.ParDo(_AttachPaperFn())
        )
        verified = (
            {"candidates": candidates, RECORDS: refs[RECORDS]}
            | "JoinRefs" >> beam.CoGroupByKey()
            | "BatchVerify" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
            | "Verify" >> beam.ParDo(_VerifyFn(config)).with_outputs(TALLY, main="resolutions")
        )
        raw = {"paper_buckets": papers.buckets, "paper_records": papers[RECORDS], REFS: usable[RAW]} | (
            "ByRawString" >> MatchRawStrings(config, self.max_group)
        )
        resolutions = (verified.resolutions, usable[DONE], raw["resolutions"]) | "AllTitleResolutions" >> beam.Flatten()
        tally = (usable[TALLY], pairs[TALLY], verified[TALLY], raw[TALLY]) | "TitleTallies" >> beam.Flatten()
        return {"resolutions": resolutions, TALLY: tally}


def _paper_title(paper: Paper, config: MatchConfig) -> Iterator[tuple[str, str, int | None, str]]:
    """(paper id, title, year, first author's surname) of a paper with a usable title."""
    title = usable_title(paper.title, config)
    if title is not None:
        yield paper.paper_id, title, paper.year, first_author_surname(paper)


class _RawSegmentsFn(ConfiguredFn):
    """A batch of (ref key, BibEntry with a raw string): the segments of each string signed together, a
    bucket key per segment and band, and (ref key, record) with the parsed string and the segments'
    signatures; a string with nothing to match on is resolved here (`unresolved:<reason>`)."""

    config: MatchConfig

    def process(self, batch: list[tuple[str, BibEntry]]) -> Iterator:
        tally = self.tallies()
        kept, segments = [], []
        for ref, entry in batch:
            reference, found, problem = checked_raw(entry.raw, self.config.raw)
            if reference is None:
                counter_for(ref, tally)(f"unresolved:{problem}", 1)
                yield beam.pvalue.TaggedOutput(DONE, (ref, Resolution(entry.bib_id, None, "unresolved")))
            else:
                kept.append((ref, entry.bib_id, reference, len(found)))
                segments.extend(found)
        if segments:
            signatures, keys = signatures_and_keys(segments, self.config)
            first = 0
            for ref, bib_id, reference, n in kept:
                own = signatures[first : first + n]
                yield beam.pvalue.TaggedOutput(RECORDS, (ref, (bib_id, reference, own.tobytes())))
                for bands in keys[first : first + n]:
                    for band, bucket in enumerate(bands.tolist()):
                        yield (band, bucket), ref
                first += n
        yield from tally.emit()


class _VerifyRawFn(ConfiguredFn):
    """One raw string with its candidate papers: `resolve_raw_candidates` (what `InMemoryMatcher` decides)."""

    config: MatchConfig

    def process(self, element) -> Iterator:
        ref, grouped, record = _with_first(element, RECORDS)
        if record is None:
            return
        bib_id, reference, signatures = record
        own = np.frombuffer(signatures, dtype=np.uint32).reshape(-1, self.config.num_perm)
        candidates = [
            RawCandidateTitle(
                paper_id, title, year, surname, int((own == np.frombuffer(signature, dtype=np.uint32)).sum(1).max())
            )
            for paper_id, title, year, signature, surname in sorted(grouped["candidates"])
        ]
        tally = self.tallies()
        yield ref, resolve_raw_candidates(bib_id, reference, candidates, self.config, counter_for(ref, tally))
        yield from tally.emit()


class MatchRawStrings(MatchStage):
    """`{"paper_buckets", "paper_records": the papers as `MatchTitles` signs them, "refs": (ref key, BibEntry)
    with a raw string and no usable title}` to `{"resolutions", "tally"}`: the
    raw-string path of `mapping/raw_strings.py` as joins. The strings' segments join the papers' buckets as
    titles do, the candidates get the paper's title, year, signature and first author, and each string is
    decided by `resolve_raw_candidates`, as `InMemoryMatcher` decides it."""

    def expand(self, inputs):
        config = self.config
        refs = _batched(inputs[REFS], "BatchRawRefs") | "SignRawSegments" >> beam.ParDo(
            _RawSegmentsFn(config)
        ).with_outputs(RECORDS, DONE, TALLY, main="buckets")
        pairs = {PAPERS: inputs["paper_buckets"], REFS: refs.buckets} | "JoinRawBuckets" >> JoinBuckets(
            config, "raw", self.max_group
        )
        candidates = (
            {"pairs": pairs.pairs, RECORDS: inputs["paper_records"]}
            | "JoinRawPapers" >> FanOutJoin("pairs", str, "raw_candidate_paper", self.max_group)
            | "AttachRawPapers" >> beam.ParDo(_AttachPaperFn())
        )
        verified = (
            {"candidates": candidates, RECORDS: refs[RECORDS]}
            | "JoinRawRefs" >> beam.CoGroupByKey()
            | "VerifyRaw" >> beam.ParDo(_VerifyRawFn(config)).with_outputs(TALLY, main="resolutions")
        )
        resolutions = (verified.resolutions, refs[DONE]) | "AllRawResolutions" >> beam.Flatten()
        tally = (refs[TALLY], pairs[TALLY], verified[TALLY]) | "RawTallies" >> beam.Flatten()
        return {"resolutions": resolutions, TALLY: tally}


KEYED = "keyed"


class _IdentifierKeysFn(TallyingFn):
    """One reference: `bib_entries_with:<kind>` counted (as `InMemoryMatcher.resolve_identifier` does), then
    `(key, (position, ref))` for each of its identifier keys, position being the key's place in the entry's
    keys (strongest first), and `(ref, entry)` on the `keyed` output; a reference without keys goes on as is."""

    def process(self, element: tuple[str, BibEntry]) -> Iterator:
        ref, entry = element
        keys = entry.identifier_keys()
        tally = self.tallies()
        count_identifier_kinds(keys, counter_for(ref, tally))
        if not keys:
            yield beam.pvalue.TaggedOutput(REFS, element)
        else:
            yield beam.pvalue.TaggedOutput(KEYED, element)
            for position, key in enumerate(keys):
                yield key, (position, ref)
        yield from tally.emit()


class _MatchKeyFn(beam.DoFn):
    """One identifier key (or one group of a hot key's references): every reference holding it gets `(position,
    smallest paper id holding it, method)`; the smallest id was chosen by a combine before the join."""

    def process(self, element) -> Iterator:
        key, grouped = element
        papers = sorted(grouped[PAPERS])
        if not papers:
            return
        method = resolution_method(key)
        for position, ref in grouped[REFS]:
            yield ref, (position, papers[0], method)


class _ChooseIdentifierFn(TallyingFn):
    """One reference with its matched keys: the strongest key that found a paper resolves it; without one it
    goes on to the title join."""

    def process(self, element) -> Iterator:
        ref, grouped = element
        matches = sorted(grouped["matches"])
        tally = self.tallies()
        for entry in grouped["entries"]:
            if matches:
                _, paper_id, method = matches[0]
                counter_for(ref, tally)(f"resolved_by:{method}", 1)
                yield beam.pvalue.TaggedOutput(DONE, (ref, Resolution(entry.bib_id, paper_id, method, 1.0)))
            else:
                yield ref, entry
        yield from tally.emit()


class JoinOnIdentifiers(beam.PTransform):
    """`{"papers", "refs"}` to `{"refs" (unresolved, on to titles), "done" (ref key, Resolution), "tally"}`: one
    join of references and papers on every identifier key (`identifier_keys()`), then the strongest key of each
    reference that found a paper decides, the smallest paper id winning a shared key: what
    `InMemoryMatcher.resolve_identifier` does, with the same counts. The smallest paper id of a key is found by a
    combine and the references of a key are spread by `FanOutJoin`, so an arXiv id cited 100,000 times is not one
    group."""

    def __init__(self, max_group: int = MAX_GROUP) -> None:
        super().__init__()
        self.max_group = max_group

    def expand(self, inputs):
        refs = inputs[REFS] | "RefKeys" >> beam.ParDo(_IdentifierKeysFn()).with_outputs(
            REFS, KEYED, TALLY, main="by_key"
        )
        paper_keys = (
            inputs[PAPERS]
            | "PaperKeys" >> beam.FlatMap(lambda p: [(k, p.paper_id) for k in p.identifier_keys()])
            | "SmallestPaperPerKey" >> beam.CombinePerKey(min)
        )
        matches = (
            {REFS: refs.by_key, PAPERS: paper_keys}
            | "JoinOnKeys" >> FanOutJoin(REFS, itemgetter(1), "identifier", self.max_group)
            | "MatchKeys" >> beam.ParDo(_MatchKeyFn())
        )
        chosen = (
            {"entries": refs[KEYED], "matches": matches}
            | "JoinMatchesToRefs" >> beam.CoGroupByKey()
            | "ChooseIdentifier" >> beam.ParDo(_ChooseIdentifierFn()).with_outputs(DONE, TALLY, main="rest")
        )
        rest = (chosen.rest, refs[REFS]) | "NotIdentified" >> beam.Flatten()
        tally = (refs[TALLY], chosen[TALLY]) | "IdentifierTallies" >> beam.Flatten()
        return {REFS: rest, DONE: chosen[DONE], TALLY: tally}


class MatchReferences(MatchStage):
    """`{"papers": Paper, "refs": (ref key, BibEntry)}` to `(ref key, Resolution)`: identifiers (every kind,
    strongest first), then the title join. Outputs `resolutions` and `tally`. A reference whose key starts with
    `UNCOUNTED` is matched like any other and counted by no tally."""

    def expand(self, inputs):
        papers = inputs[PAPERS]
        by_id = {PAPERS: papers, REFS: inputs[REFS]} | "ByIdentifier" >> JoinOnIdentifiers(self.max_group)
        by_title = {PAPERS: papers, REFS: by_id[REFS]} | "ByTitle" >> MatchTitles(self.config, self.max_group)
        resolutions = (by_id[DONE], by_title["resolutions"]) | "AllResolutions" >> beam.Flatten()
        tally = (by_id[TALLY], by_title[TALLY]) | "MatchTallies" >> beam.Flatten()
        return {"resolutions": resolutions, TALLY: tally}


def _references(document: ParsedDocument | SealedDocument) -> Iterator[tuple[str, BibEntry]]:
    for position, entry in enumerate(unseal(document).bib_entries):
        yield f"{document.paper_id}\x1f{position}", entry


class _AssembleFn(TallyingFn):
    """One document with its resolutions, in bibliography order."""

    def process(self, element) -> Iterator:
        _, grouped = element
        tally = self.tallies()
        resolutions = dict(grouped["resolutions"])
        for encoded in grouped["documents"]:
            document = unseal(SEALED.decode(encoded))
            ordered = tuple(resolutions[f"{document.paper_id}\x1f{i}"] for i in range(len(document.bib_entries)))
            count_resolutions(ordered, tally)
            yield ResolvedDocument(document=document, resolutions=ordered)
        yield from tally.emit()


class ResolveReferencesByJoin(MatchStage):
    """`{"documents", "database"}` to `{"documents": ResolvedDocument, "tally"}`, with no side input. Documents
    (sealed or not) meet their resolutions as `pipelines.coders.SEALED` bytes and are opened once there."""

    def expand(self, inputs):
        documents = inputs["documents"]
        refs = documents | "References" >> beam.FlatMap(_references)
        matched = {PAPERS: inputs["database"], REFS: refs} | "Match" >> MatchReferences(self.config, self.max_group)
        assembled = (
            {
                "documents": documents
                | "DocumentsByPaperId" >> beam.Map(lambda d: (d.paper_id, SEALED.encode(sealed(d)))),
                "resolutions": matched["resolutions"]
                | "ByDocument" >> beam.Map(lambda kr: (kr[0].split("\x1f", 1)[0], (kr[0], kr[1]))),
            }
            | "JoinResolutions" >> beam.CoGroupByKey()
            | "Assemble" >> beam.ParDo(_AssembleFn()).with_outputs(TALLY, main="documents")
        )
        tally = (matched[TALLY], assembled[TALLY]) | "ResolveTallies" >> beam.Flatten()
        return {"documents": assembled.documents, TALLY: tally}


MEMORY_MATCHER_MAX_PAPERS = 500_000
METADATA_BYTES_PER_PAPER = 1_000
"""The smallest record size we know (S2ORC 2020 metadata ~1.4 kB a line, the arXiv snapshot ~1.5 kB), rounded
down, so that the estimate errs towards more papers and the join."""
DATABASE_DOCUMENTS = ("tei", "s2orc", "pdfs")
"""The input flags whose documents join the database (arsyta's); CitationR's submissions do not."""


def choose_title_matcher(
    inputs: dict[str, list[str]], choice: str, max_papers: int, documents_from: tuple[str, ...] = DATABASE_DOCUMENTS
) -> tuple[str, str]:
    """('memory' or 'join', why), deciding 'auto' from the size of the metadata files (and the number of document
    files of `documents_from`, which join the database) before the run."""
    if choice != "auto":
        return choice, f"--title_matcher={choice}"
    size = sum(m.size_in_bytes for p in inputs.get("metadata", []) for m in FileSystems.match([p])[0].metadata_list)
    documents = sum(len(FileSystems.match([p])[0].metadata_list) for k in documents_from for p in inputs.get(k, []))
    estimate = size // METADATA_BYTES_PER_PAPER + documents
    method = "join" if estimate > max_papers else "memory"
    why = f"auto: about {estimate:,} papers ({size:,} metadata bytes, {documents:,} document files)"
    return method, f"{why}, limit {max_papers:,}"


def run_title_join_files(papers_path: str, refs_path: str, config: MatchConfig, output: str) -> dict[str, str | None]:
    """The title join over JSON Lines files (`{paper_id, title, year}`, `{bib_id, title, year}`) on
    FnApiRunner; returns bib_id -> paper id or None. Used by `bench/matching.py`."""

    def paper(line: str) -> Paper:
        r = json.loads(line)
        return Paper(r["paper_id"], r["title"], year=r["year"])

    def ref(line: str) -> tuple[str, BibEntry]:
        r = json.loads(line)
        return r["bib_id"], BibEntry(r["bib_id"], title=r["title"], year=r["year"])

    options = PipelineOptions(["--runner=FnApiRunner"])
    with beam.Pipeline(options=options) as pipeline:
        inputs = {
            PAPERS: pipeline | "ReadPapers" >> beam.io.ReadFromText(papers_path) | "ParsePapers" >> beam.Map(paper),
            REFS: pipeline | "ReadRefs" >> beam.io.ReadFromText(refs_path) | "ParseRefs" >> beam.Map(ref),
        }
        matched = inputs | MatchTitles(config)
        (
            matched["resolutions"]
            | "Format" >> beam.Map(lambda kr: json.dumps([kr[0], kr[1].paper_id]))
            | "Write" >> beam.io.WriteToText(output, shard_name_template="")
        )
    with open(output) as f:
        return dict(json.loads(line) for line in f)
