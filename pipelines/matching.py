"""Reference resolution as Beam joins, for databases too large for one worker.

Identifiers first: references and papers are joined on every identifier key and each reference takes the
paper of its strongest key (`JoinOnIdentifiers`). The rest is matched by title with a MinHash-LSH join built
from `mapping/matcher.py`'s pieces, and raw strings by their title-sized segments (`MatchRawStrings`), so the
resolutions equal the in-memory matcher's. No step holds the database: the largest group is one bucket or one
paper's candidate pairs.

The title join shuffles ids until it knows which pairs to verify, so that what it moves grows with the
references, not with the database: references and papers meet in their LSH buckets with their lengths and
symbol-group counts (8 bytes), which drop the pairs that cannot pass (`JoinBuckets`); each reference gathers its
candidates' ids, keeps the `max_candidates` most bands proposed and sends its title to each (`_ChooseCandidatesFn`);
each paper verifies the titles sent to it (`_VerifyAtPapersFn`) and returns only the pairs that pass, which their
references choose among (`_ChooseFn`). The joins step by step: docs/design.md; what they shuffle: docs/scale.md.
"""

from __future__ import annotations

import json
from collections import Counter
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
    could_match_packed,
    count_identifier_kinds,
    rank_candidates,
    signatures_and_keys,
    usable_title,
)
from mapping.minhash import packed_group_counts
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
TITLES = "titles"
ENTRIES = "entries"
DONE = "done"
RAW = "raw"
FROM_PAPERS, FROM_REFS = "p", "r"
"""The sides of the title join's `CoGroupByKey`s: what papers and what references bring. One letter each, because a
`CoGroupByKey` writes its tag beside every value it shuffles (25 a reference in the bucket join)."""
RAW_PAIRS = "raw_pairs"
"""`JoinBuckets`' output of the raw strings' (paper id, ref key) pairs, beside the titles' main output."""


def counter_for(ref: str, tally: Tallies) -> CounterFn:
    """The counter a reference's outcomes go to: `tally`, or none for an `UNCOUNTED` reference."""
    return no_count if ref.startswith(UNCOUNTED) else tally


def _with_first(element: tuple, tag: str) -> tuple:
    """A joined element (`CoGroupByKey`) as (key, grouped, the first value under `tag` or None when it has none)."""
    key, grouped = element
    return key, grouped, next(iter(grouped[tag]), None)


def bucket_keys(keys: np.ndarray) -> list[bytes]:
    """The LSH buckets of `band_keys` rows as join keys, row by row and band by band: the band in one byte and its
    64-bit key in eight (big-endian). A `(band, key)` tuple of ints crosses a shuffle in 29 bytes (a key over
    2**63 is pickled), these bytes in 11."""
    n, bands = keys.shape
    if bands > 256:
        raise ValueError(f"a bucket key holds the band in one byte: {bands} bands are too many")
    cells = np.empty((n, bands, 9), dtype=np.uint8)
    cells[:, :, 0] = np.arange(bands, dtype=np.uint8)
    cells[:, :, 1:] = keys.astype(">u8").view(np.uint8).reshape(n, bands, 8)
    flat = cells.tobytes()
    return [flat[i : i + 9] for i in range(0, len(flat), 9)]


def _member_key(member: tuple | str) -> str:
    """The id of a bucket's member: a reference key, or the first field of a (key, length, groups) member."""
    return member if isinstance(member, str) else member[0]


class _SignPapersFn(ConfiguredFn):
    """A batch of (paper id, title, year, first author's surname) to `(bucket, (paper id, length, packed group
    counts))` for each band, `titles` (paper id, (title, year)) for the verification and `records` (paper id,
    (title, year, surname, signature)) for the raw strings."""

    config: MatchConfig

    def process(self, batch: list[tuple[str, str, int | None, str]]) -> Iterator:
        titles = [title for _, title, _, _ in batch]
        signatures, keys = signatures_and_keys(titles, self.config)
        buckets, bands = bucket_keys(keys), keys.shape[1]
        groups = packed_group_counts(titles)
        for i, (paper_id, title, year, surname) in enumerate(batch):
            yield beam.pvalue.TaggedOutput(TITLES, (paper_id, (title, year)))
            yield beam.pvalue.TaggedOutput(RECORDS, (paper_id, (title, year, surname, signatures[i].tobytes())))
            member = (paper_id, len(title), groups[i])
            for bucket in buckets[i * bands : (i + 1) * bands]:
                yield bucket, member


class _SignRefsFn(ConfiguredFn):
    """A batch of (ref key, title, year, bib id) to `(bucket, (ref key, length, packed group counts))` for each
    band, and `records` (ref key, (title, year, bib id))."""

    config: MatchConfig

    def process(self, batch: list[tuple[str, str, int | None, str]]) -> Iterator:
        titles = [title for _, title, _, _ in batch]
        _, keys = signatures_and_keys(titles, self.config)
        buckets, bands = bucket_keys(keys), keys.shape[1]
        groups = packed_group_counts(titles)
        for i, (ref, title, year, bib_id) in enumerate(batch):
            yield beam.pvalue.TaggedOutput(RECORDS, (ref, (title, year, bib_id)))
            member = (ref, len(title), groups[i])
            for bucket in buckets[i * bands : (i + 1) * bands]:
                yield bucket, member


class CapBucketFn(beam.CombineFn):
    """The papers of one LSH bucket as `cap_bucket` keeps them, (the first `max_bucket` members in paper id order,
    how many were left out), combined without gathering the bucket: an accumulator holds at most twice
    `max_bucket` members, capped only when it grows past that and at the end, so adding a member is an append
    (capping at every add sorted the accumulator once a member: most of the join's CPU at 100,000 titles)."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config

    def create_accumulator(self) -> tuple[list, int]:
        return [], 0

    def _bounded(self, kept: list, skipped: int) -> tuple[list, int]:
        if len(kept) <= 2 * self.config.max_bucket:
            return kept, skipped
        kept, more = cap_bucket(kept, self.config)
        return kept, skipped + more

    def add_input(self, accumulator: tuple[list, int], member: tuple) -> tuple[list, int]:
        kept, skipped = accumulator
        kept.append(member)
        return self._bounded(kept, skipped)

    def merge_accumulators(self, accumulators) -> tuple[list, int]:
        everything, skipped = [], 0
        for kept, more in accumulators:
            everything.extend(kept)
            skipped += more
        return self._bounded(everything, skipped)

    def extract_output(self, accumulator: tuple[list, int]) -> tuple[list, int]:
        kept, skipped = accumulator
        if len(kept) == 1:
            return kept, skipped
        kept, more = cap_bucket(kept, self.config)
        return kept, skipped + more


class MatchStage(ConfiguredTransform):
    """A matching stage: set by a `MatchConfig`, its joins (`FanOutJoin`) hold at most `max_group` elements a
    group."""

    config: MatchConfig

    def __init__(self, config: MatchConfig, max_group: int = MAX_GROUP) -> None:
        super().__init__(config)
        self.max_group = max_group


class JoinBuckets(MatchStage):
    """`{"papers": (bucket, capped members), "refs": (bucket, member)}` into the candidate pairs of every bucket
    holding both, one a bucket (so a pair comes once for each band proposing it), and `tally`. Titles and raw
    strings share the join, told apart by their members: a title's member is (ref key, length, packed group
    counts) and its pairs `(ref key, paper id)` (main output) those whose length and symbol groups can reach
    `min_similarity` (`could_match`, `could_match_packed`); a raw string's segments' member is its ref key and its
    pairs `(paper id, ref key)` (`raw_pairs`), all of them. One join, not one for each: the database's buckets
    are the join's bulk, and each pass over them costs the same whatever the references. A bucket's papers come
    capped (members (paper id, length, packed group counts), `CapBucketFn`), and its references are spread by
    `FanOutJoin`: no group holds a bucket's every paper or every reference (a title cited 100,000 times puts its
    references in the same buckets)."""

    def expand(self, inputs):
        return (
            {FROM_PAPERS: inputs[PAPERS], FROM_REFS: inputs[REFS]}
            | "Join" >> FanOutJoin(FROM_REFS, _member_key, "bucket", self.max_group)
            | "Pairs" >> beam.ParDo(_BucketPairsFn(self.config)).with_outputs(TALLY, RAW_PAIRS, main="pairs")
        )


class _BucketPairsFn(ConfiguredFn):
    """One LSH bucket (or one group of a hot bucket's references): its pairs as `JoinBuckets` describes them.
    Counters are named `<kind>_bucket_hits_capped` and `<kind>_candidate_pairs_skipped_by_cap` (kind: title or
    raw)."""

    config: MatchConfig

    def process(self, element) -> Iterator:
        _, grouped = element
        refs = grouped[FROM_REFS]
        capped = next(iter(grouped[FROM_PAPERS]), None)
        if not refs or capped is None:
            return
        papers, skipped = capped
        if skipped:
            counted = Counter(
                "raw" if isinstance(ref, str) else "title" for ref in refs if not _member_key(ref).startswith(UNCOUNTED)
            )
            if counted:
                tally = self.tallies()
                for kind, n in sorted(counted.items()):
                    tally(f"{kind}_bucket_hits_capped", n)
                    tally(f"{kind}_candidate_pairs_skipped_by_cap", skipped * n)
                yield from tally.emit()
        config = self.config
        for ref in refs:
            if isinstance(ref, str):
                for paper_id, _, _ in papers:
                    yield beam.pvalue.TaggedOutput(RAW_PAIRS, (paper_id, ref))
                continue
            key, length, groups = ref
            for paper_id, paper_length, paper_groups in papers:
                if could_match(length, paper_length, config) and could_match_packed(
                    groups, paper_groups, max(length, paper_length), config
                ):
                    yield key, paper_id


class _ChooseCandidatesFn(ConfiguredFn):
    """One reference with the paper ids its bands proposed (once a proposing band): the `max_candidates` that the
    most bands proposed, then by paper id (`rank_candidates`), each sent to its paper with the reference's title,
    and (ref key, (bib id, year)) on to `entries`; a reference with no candidate is resolved here (`done`)."""

    config: MatchConfig

    def process(self, element) -> Iterator:
        ref, grouped, record = _with_first(element, FROM_REFS)
        if record is None:
            return
        title, year, bib_id = record
        proposing = Counter(grouped[FROM_PAPERS])
        if not proposing:
            tally = self.tallies()
            resolution = choose_candidate(bib_id, year, [], [], [], self.config, counter_for(ref, tally))
            yield beam.pvalue.TaggedOutput(DONE, (ref, resolution))
            yield from tally.emit()
            return
        papers = sorted(proposing)
        yield beam.pvalue.TaggedOutput(ENTRIES, (ref, (bib_id, year)))
        for i in rank_candidates(papers, [proposing[p] for p in papers], self.config):
            yield papers[i], (ref, title)


class _VerifyAtPapersFn(ConfiguredFn):
    """A batch of papers, each with the (ref key, reference title) sent to it: every pair's LCS similarity at once
    (`cpdist`), and `(ref key, (paper id, similarity, year))` of those at `min_similarity` or above."""

    config: MatchConfig

    def process(self, batch: list) -> Iterator:
        pairs, left, right = [], [], []
        for paper_id, grouped in batch:
            record = next(iter(grouped[FROM_PAPERS]), None)
            if record is None:
                continue
            title, year = record
            for ref, ref_title in grouped[FROM_REFS]:
                pairs.append((ref, paper_id, year))
                left.append(ref_title)
                right.append(title)
        if not pairs:
            return
        # float64: float32 would put 0.9 just below a 0.9 threshold
        scores = cpdist(left, right, scorer=LCSseq.normalized_similarity, workers=1, dtype=np.float64)
        for (ref, paper_id, year), similarity in zip(pairs, scores.tolist(), strict=True):
            if similarity >= self.config.min_similarity:
                yield ref, (paper_id, similarity, year)


class _ChooseFn(ConfiguredFn):
    """One reference with its verified candidates: `choose_candidate`."""

    config: MatchConfig

    def process(self, element) -> Iterator:
        ref, grouped, entry = _with_first(element, FROM_REFS)
        if entry is None:
            return
        bib_id, year = entry
        verified = sorted(grouped[FROM_PAPERS])
        ids, similarities, years = ([v[i] for v in verified] for i in range(3))
        tally = self.tallies()
        yield ref, choose_candidate(bib_id, year, ids, similarities, years, self.config, counter_for(ref, tally))
        yield from tally.emit()


class _AttachPaperFn(beam.DoFn):
    """One paper: its record (id, title, year, signature, first author's surname) on each distinct reference
    that has it as a candidate (the raw strings' join)."""

    def process(self, element) -> Iterator:
        paper_id, grouped, record = _with_first(element, RECORDS)
        if record is None:
            return
        title, year, surname, signature = record
        for ref in sorted(set(grouped["pairs"])):
            yield ref, (paper_id, title, year, signature, surname)


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
            "SignPapers" >> beam.ParDo(_SignPapersFn(config)).with_outputs(TITLES, RECORDS, main="buckets")
        )
        refs = _batched(usable.usable, "BatchRefs") | "SignRefs" >> beam.ParDo(_SignRefsFn(config)).with_outputs(
            RECORDS, main="buckets"
        )
        raw_refs = _batched(usable[RAW], "BatchRawRefs") | "SignRawSegments" >> beam.ParDo(
            _RawSegmentsFn(config)
        ).with_outputs(RECORDS, DONE, TALLY, main="buckets")
        capped = papers.buckets | "CapBuckets" >> beam.CombinePerKey(CapBucketFn(config))
        ref_buckets = (refs.buckets, raw_refs.buckets) | "AllRefBuckets" >> beam.Flatten()
        pairs = {PAPERS: capped, REFS: ref_buckets} | "JoinBuckets" >> JoinBuckets(config, self.max_group)
        candidates = (
            {FROM_PAPERS: pairs.pairs, FROM_REFS: refs[RECORDS]}
            | "JoinRefTitles" >> beam.CoGroupByKey()
            | "ChooseCandidates"
            >> beam.ParDo(_ChooseCandidatesFn(config)).with_outputs(ENTRIES, DONE, TALLY, main="pairs")
        )
        verified = (
            {FROM_REFS: candidates.pairs, FROM_PAPERS: papers[TITLES]}
            | "JoinPapers" >> FanOutJoin(FROM_REFS, itemgetter(0), "title_candidate_paper", self.max_group)
            | "BatchVerify" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
            | "Verify" >> beam.ParDo(_VerifyAtPapersFn(config))
        )
        chosen = (
            {FROM_PAPERS: verified, FROM_REFS: candidates[ENTRIES]}
            | "JoinRefs" >> beam.CoGroupByKey()
            | "Choose" >> beam.ParDo(_ChooseFn(config)).with_outputs(TALLY, main="resolutions")
        )
        raw = {"pairs": pairs[RAW_PAIRS], "paper_records": papers[RECORDS], RECORDS: raw_refs[RECORDS]} | (
            "ByRawString" >> MatchRawStrings(config, self.max_group)
        )
        resolutions = (
            chosen.resolutions,
            candidates[DONE],
            usable[DONE],
            raw_refs[DONE],
            raw["resolutions"],
        ) | "AllTitleResolutions" >> beam.Flatten()
        tally = (
            usable[TALLY],
            raw_refs[TALLY],
            pairs[TALLY],
            candidates[TALLY],
            chosen[TALLY],
            raw[TALLY],
        ) | "TitleTallies" >> beam.Flatten()
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
            buckets, bands = bucket_keys(keys), keys.shape[1]
            first = 0
            for ref, bib_id, reference, n in kept:
                own = signatures[first : first + n]
                yield beam.pvalue.TaggedOutput(RECORDS, (ref, (bib_id, reference, own.tobytes())))
                for bucket in buckets[first * bands : (first + n) * bands]:
                    yield bucket, ref
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
    """`{"pairs": (paper id, ref key) from `JoinBuckets`' `raw_pairs`, "paper_records": the papers as `MatchTitles`
    signs them, "records": (ref key, (bib id, parsed string, segment signatures)) from `_RawSegmentsFn`}` to
    `{"resolutions", "tally"}`: the raw-string path of `mapping/raw_strings.py` after the bucket join. The
    candidates get the paper's title, year, signature and first author, and each string is decided by
    `resolve_raw_candidates`, as `InMemoryMatcher` decides it."""

    def expand(self, inputs):
        candidates = (
            {"pairs": inputs["pairs"], RECORDS: inputs["paper_records"]}
            | "JoinRawPapers" >> FanOutJoin("pairs", str, "raw_candidate_paper", self.max_group)
            | "AttachRawPapers" >> beam.ParDo(_AttachPaperFn())
        )
        verified = (
            {"candidates": candidates, RECORDS: inputs[RECORDS]}
            | "JoinRawRefs" >> beam.CoGroupByKey()
            | "VerifyRaw" >> beam.ParDo(_VerifyRawFn(self.config)).with_outputs(TALLY, main="resolutions")
        )
        return {"resolutions": verified.resolutions, TALLY: verified[TALLY]}


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
