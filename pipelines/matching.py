"""Reference resolution as Beam joins, for databases too large for one worker.

Identifiers first: references and papers are joined on arXiv ids, then DOIs, then S2 corpus ids. What remains is
matched by title with a MinHash-LSH join (the pieces are in `mapping/matcher.py`, shared with the
in-memory matcher, so both give the same resolutions):

1. papers and references, in batches, get numpy MinHash signatures and one key per LSH band;
2. `CoGroupByKey` on `(band, key)`: every bucket holding references and papers gives candidate pairs; a
   bucket with more than `max_bucket` papers keeps the first `max_bucket` by paper id, and the pairs it
   skips are counted;
3. `CoGroupByKey` on paper id attaches each paper's title, year and signature to its pairs (each pair
   once, however many bands it shares);
4. `CoGroupByKey` on reference: the `max_candidates` best candidates by estimated Jaccard are verified in
   batches with rapidfuzz's `cpdist` (LCS), and `choose_candidate` keeps the best at or above the
   threshold (ties: year, else ambiguous).

No step holds the database: the largest group is one bucket or one paper's candidate pairs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import apache_beam as beam
import numpy as np
from apache_beam.options.pipeline_options import PipelineOptions
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cpdist

from extractors.records import BibEntry, Paper, ParsedDocument, Resolution, ResolvedDocument
from mapping.matcher import (
    MatchConfig,
    cap_bucket,
    checked_title,
    choose_candidate,
    could_match,
    rank_candidates,
    signatures_and_keys,
    usable_title,
)
from pipelines.transforms import TALLY, Tallies, count_resolutions

PAPERS = "papers"
REFS = "refs"
RECORDS = "records"
DONE = "done"


class _SignatureFn(beam.DoFn):
    """A batch of (key, title, year, bib_id) to bucket keys and (key, record) with the signature."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config

    def process(self, batch: list[tuple[str, str, int | None, str]]) -> Iterator:
        signatures, keys = signatures_and_keys([title for _, title, _, _ in batch], self.config)
        for (key, title, year, bib_id), signature, bands in zip(batch, signatures, keys, strict=True):
            yield beam.pvalue.TaggedOutput(RECORDS, (key, (title, year, bib_id, signature.tobytes())))
            for band, bucket in enumerate(bands.tolist()):
                yield (band, bucket), key


class _BucketPairsFn(beam.DoFn):
    """One LSH bucket: (paper id, reference key) for every reference and (capped) paper in it."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config

    def process(self, element) -> Iterator:
        _, grouped = element
        refs = list(grouped[REFS])
        if not refs:
            return
        papers, skipped = cap_bucket(list(grouped[PAPERS]), self.config)
        if skipped:
            tally = Tallies()
            tally("title_bucket_hits_capped", len(refs))
            tally("title_candidate_pairs_skipped_by_cap", skipped * len(refs))
            yield from tally.emit()
        for paper_id in papers:
            for ref in refs:
                yield paper_id, ref


class _AttachPaperFn(beam.DoFn):
    """One paper: its record on each distinct reference that has it as a candidate."""

    def process(self, element) -> Iterator:
        paper_id, grouped = element
        records = list(grouped[RECORDS])
        if not records:
            return
        title, year, _, signature = records[0]
        for ref in sorted(set(grouped["pairs"])):
            yield ref, (paper_id, title, year, signature)


class _VerifyFn(beam.DoFn):
    """A batch of references with their candidates: rank, verify by LCS with `cpdist`, choose."""

    def __init__(self, config: MatchConfig) -> None:
        self.config = config

    def process(self, batch: list) -> Iterator:
        tally = Tallies()
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
                bib_id, year, [c[0] for c in candidates], similarities, [c[2] for c in candidates], self.config, tally
            )
            yield ref, resolution
        yield from tally.emit()


class _UsableTitleFn(beam.DoFn):
    def __init__(self, config: MatchConfig) -> None:
        self.config = config

    def process(self, element: tuple[str, BibEntry]) -> Iterator:
        ref, entry = element
        title, problem = checked_title(entry.title, self.config)
        if title is None:
            tally = Tallies()
            tally(f"unresolved:{problem}")
            yield beam.pvalue.TaggedOutput(DONE, (ref, Resolution(entry.bib_id, None, "unresolved")))
            yield from tally.emit()
        else:
            yield ref, title, entry.year, entry.bib_id


def _batched(pcoll, label: str):
    return pcoll | label >> beam.BatchElements(min_batch_size=256, max_batch_size=4096)


class MatchTitles(beam.PTransform):
    """`{"papers": Paper, "refs": (ref key, BibEntry)}` to `{"resolutions": (ref key, Resolution), "tally"}`.

    Every reference comes out exactly once: resolved by title, ambiguous, or unresolved with a counted
    reason."""

    def __init__(self, config: MatchConfig) -> None:
        super().__init__()
        self.config = config

    def expand(self, inputs):
        config = self.config
        usable = inputs[REFS] | "UsableTitles" >> beam.ParDo(_UsableTitleFn(config)).with_outputs(
            DONE, TALLY, main="usable"
        )
        papers = _batched(inputs[PAPERS] | "PaperTitles" >> beam.FlatMap(_paper_title, config), "BatchPapers") | (
            "SignPapers" >> beam.ParDo(_SignatureFn(config)).with_outputs(RECORDS, main="buckets")
        )
        refs = _batched(usable.usable, "BatchRefs") | "SignRefs" >> beam.ParDo(_SignatureFn(config)).with_outputs(
            RECORDS, main="buckets"
        )
        pairs = (
            {PAPERS: papers.buckets, REFS: refs.buckets}
            | "JoinBuckets" >> beam.CoGroupByKey()
            | "BucketPairs" >> beam.ParDo(_BucketPairsFn(config)).with_outputs(TALLY, main="pairs")
        )
        candidates = (
            {"pairs": pairs.pairs, RECORDS: papers[RECORDS]}
            | "JoinPapers" >> beam.CoGroupByKey()
            | "AttachPapers" >> beam.ParDo(_AttachPaperFn())
        )
        verified = (
            {"candidates": candidates, RECORDS: refs[RECORDS]}
            | "JoinRefs" >> beam.CoGroupByKey()
            | "BatchVerify" >> beam.BatchElements(min_batch_size=64, max_batch_size=1024)
            | "Verify" >> beam.ParDo(_VerifyFn(config)).with_outputs(TALLY, main="resolutions")
        )
        resolutions = (verified.resolutions, usable[DONE]) | "AllTitleResolutions" >> beam.Flatten()
        tally = (usable[TALLY], pairs[TALLY], verified[TALLY]) | "TitleTallies" >> beam.Flatten()
        return {"resolutions": resolutions, TALLY: tally}


def _paper_title(paper: Paper, config: MatchConfig) -> Iterator[tuple[str, str, int | None, str]]:
    title = usable_title(paper.title, config)
    if title is not None:
        yield paper.paper_id, title, paper.year, paper.paper_id


class _ChooseIdentifierMatchFn(beam.DoFn):
    """One identifier key: every reference holding it goes to the smallest paper id holding it, or on."""

    def __init__(self, method: str) -> None:
        self.method = method

    def process(self, element) -> Iterator:
        _, grouped = element
        papers = sorted(set(grouped[PAPERS]))
        tally = Tallies()
        for ref, entry in grouped[REFS]:
            if papers:
                tally(f"resolved_by:{self.method}")
                yield beam.pvalue.TaggedOutput(DONE, (ref, Resolution(entry.bib_id, papers[0], self.method, 1.0)))
            else:
                yield ref, entry
        yield from tally.emit()


class _JoinOnIdentifier(beam.PTransform):
    """References with an `attribute` (arxiv_id, doi or s2_corpus_id) joined to the papers with the same one."""

    def __init__(self, attribute: str, method: str) -> None:
        super().__init__()
        self.attribute, self.method = attribute, method

    def expand(self, inputs):
        attribute = self.attribute
        split = inputs[REFS] | "HasIdentifier" >> beam.Partition(lambda r, _: 0 if getattr(r[1], attribute) else 1, 2)
        joined = (
            {
                REFS: split[0] | "RefsByIdentifier" >> beam.Map(lambda r: (getattr(r[1], attribute), r)),
                PAPERS: inputs[PAPERS]
                | "PapersByIdentifier"
                >> beam.FlatMap(lambda p: [(getattr(p, attribute), p.paper_id)] if getattr(p, attribute) else []),
            }
            | "JoinIdentifier" >> beam.CoGroupByKey()
            | "Choose" >> beam.ParDo(_ChooseIdentifierMatchFn(self.method)).with_outputs(DONE, TALLY, main="rest")
        )
        rest = (joined.rest, split[1]) | "Unmatched" >> beam.Flatten()
        return {REFS: rest, DONE: joined[DONE], TALLY: joined[TALLY]}


class MatchReferences(beam.PTransform):
    """`{"papers": Paper, "refs": (ref key, BibEntry)}` to `(ref key, Resolution)`: arXiv id, then DOI,
    then S2 corpus id, then the title join. Outputs `resolutions` and `tally`."""

    def __init__(self, config: MatchConfig) -> None:
        super().__init__()
        self.config = config

    def expand(self, inputs):
        papers = inputs[PAPERS]
        by_arxiv = {PAPERS: papers, REFS: inputs[REFS]} | "ByArxivId" >> _JoinOnIdentifier("arxiv_id", "arxiv_id")
        by_doi = {PAPERS: papers, REFS: by_arxiv[REFS]} | "ByDoi" >> _JoinOnIdentifier("doi", "doi")
        by_corpus = {PAPERS: papers, REFS: by_doi[REFS]} | "ByS2CorpusId" >> _JoinOnIdentifier(
            "s2_corpus_id", "s2_corpus_id"
        )
        by_title = {PAPERS: papers, REFS: by_corpus[REFS]} | "ByTitle" >> MatchTitles(self.config)
        identified = (by_arxiv[DONE], by_doi[DONE], by_corpus[DONE])
        resolutions = (*identified, by_title["resolutions"]) | "AllResolutions" >> beam.Flatten()
        tally = (by_arxiv[TALLY], by_doi[TALLY], by_corpus[TALLY], by_title[TALLY]) | "MatchTallies" >> beam.Flatten()
        return {"resolutions": resolutions, TALLY: tally}


def _references(document: ParsedDocument) -> Iterator[tuple[str, BibEntry]]:
    for position, entry in enumerate(document.bib_entries):
        yield f"{document.paper_id}\x1f{position}", entry


class _AssembleFn(beam.DoFn):
    """One document with its resolutions, in bibliography order."""

    def process(self, element) -> Iterator:
        _, grouped = element
        tally = Tallies()
        resolutions = dict(grouped["resolutions"])
        for document in grouped["documents"]:
            ordered = tuple(resolutions[f"{document.paper_id}\x1f{i}"] for i in range(len(document.bib_entries)))
            count_resolutions(ordered, tally)
            yield ResolvedDocument(document=document, resolutions=ordered)
        yield from tally.emit()


class ResolveReferencesByJoin(beam.PTransform):
    """`{"documents", "database"}` to `{"documents": ResolvedDocument, "tally"}`, with no side input."""

    def __init__(self, config: MatchConfig) -> None:
        super().__init__()
        self.config = config

    def expand(self, inputs):
        documents = inputs["documents"]
        refs = documents | "References" >> beam.FlatMap(_references)
        matched = {PAPERS: inputs["database"], REFS: refs} | "Match" >> MatchReferences(self.config)
        assembled = (
            {
                "documents": documents | "DocumentsByPaperId" >> beam.Map(lambda d: (d.paper_id, d)),
                "resolutions": matched["resolutions"]
                | "ByDocument" >> beam.Map(lambda kr: (kr[0].split("\x1f", 1)[0], (kr[0], kr[1]))),
            }
            | "JoinResolutions" >> beam.CoGroupByKey()
            | "Assemble" >> beam.ParDo(_AssembleFn()).with_outputs(TALLY, main="documents")
        )
        tally = (matched[TALLY], assembled[TALLY]) | "ResolveTallies" >> beam.Flatten()
        return {"documents": assembled.documents, TALLY: tally}


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
