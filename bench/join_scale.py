"""The title join at databases of 10k to 10M titles: LSH candidates per real reference, and the bytes each join
stage shuffles per citing paper.

    python bench/join_scale.py --sizes 10000,100000,1000000,10000000 --json /tmp/join_scale.json
    python bench/join_scale.py --sizes 10000,100000 --beam /tmp/beam.json   # + a real FnApiRunner run per size
    python bench/join_scale.py --sizes 113000 --real                        # the real titles alone (a check)

References: every bib entry with a usable title of the real GROBID TEI and S2ORC documents under ../shared/data
(as `tests/support/real_bibliography.py` reads them), keyed as the pipeline keys them (`<paper id>\\x1f<position>`).
The database: the titles of those entries (less a fifth, held out by SHA-1, so that some references have nothing to
find), then synthetic titles up to the size. Synthetic titles come from a word-bigram chain over every distinct real
title under ../shared/data (ACM-CR's ACM DL BibTeX, the arXiv abs-derived and S2ORC metadata, the bib entries;
about 110,000 titles): a title's word count is drawn from the real ones, each next word follows its predecessor as
in some real title (nine times in ten) or is drawn by its real frequency, so word and bigram frequencies are the
real ones. `--real` puts the real metadata titles in instead (no synthetic ones): the check that the synthetic
database gives a reference the candidates a real one of its size does.

A database is built in chunks of `--chunk` titles (1M), each signed, banded and sorted, and every reference's 25
band keys looked up in each; the chunks' papers are numbered in id order, so capping a band's bucket at the first
`max_bucket` papers across chunks is the cap of one database of that size. Per reference: band hits, distinct
candidates, candidates of a possible length (`could_match`), crowded (more of those than `max_candidates`), kept,
and verified (LCS >= 0.9); the resolutions equal `TitleIndex`'s (checked up to `--check_upto` titles).

Bytes: each join stage's elements are made from the measured counts with the join's own coders
(`pipelines.coders.MATCH_*`) and real keys, ids and titles, and their encoded sizes summed (`stage_bytes`);
`--beam` runs `MatchTitles` on FnApiRunner at the given sizes and counts what every GroupByKey receives, the check
of the model. Per citing paper: references a paper (from the real documents) times bytes a reference, plus the
database side (bytes a database paper) times database papers per citing paper (`--db_per_paper`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cpdist

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.shared import shared_data_dir  # noqa: E402
from extractors.documents.acm_cr import read_collection  # noqa: E402
from extractors.documents.files import parse_document_file  # noqa: E402
from mapping.matcher import (  # noqa: E402
    MatchConfig,
    TitleIndex,
    choose_candidate,
    could_match,
    could_match_groups,
    signatures_and_keys,
    usable_title,
)
from mapping.minhash import band_keys_by_band, group_counts, minhash_signatures, packed_group_counts  # noqa: E402
from mapping.records import BibEntry, ParsedDocument  # noqa: E402

CACHE_VERSION = 1


# ------------------------------------------------------------------------------------------ real inputs


@dataclass(frozen=True)
class RealInputs:
    """What the bench reads under ../shared/data once (cached in `--cache`)."""

    metadata_titles: tuple[str, ...]  # distinct normalised usable titles of ACM-CR, arXiv and S2ORC metadata
    bib_titles: tuple[str, ...]  # distinct normalised usable titles of the real bib entries
    references: tuple[tuple[str, BibEntry], ...]  # (ref key, entry) of every real bib entry, in document order
    documents: int  # real documents the references come from


def held_out(normalized_title: str) -> bool:
    """A fifth of the bib titles, by content, left out of the database (as tests/support/real_bibliography.py)."""
    return int(hashlib.sha1(normalized_title.encode()).hexdigest()[:8], 16) % 5 == 0


def read_real_inputs(shared: Path, config: MatchConfig) -> RealInputs:
    references, documents = [], 0
    for kind, pattern in (("tei", "grobid/**/*.tei.xml"), ("s2orc", "s2orc/**/*.json")):
        for path in sorted(shared.glob(pattern)):
            for document in parse_document_file(path.read_bytes(), str(path), kind):
                if isinstance(document, ParsedDocument):
                    documents += 1
                    references.extend(
                        (f"{document.paper_id}\x1f{i}", entry) for i, entry in enumerate(document.bib_entries)
                    )
    titles = []
    for path in (
        shared / "arxiv/arxiv-browse_abs_derived.jsonl",
        shared / "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl",
    ):
        titles.extend(json.loads(line).get("title") for line in path.read_text().splitlines())
    papers, _ = read_collection(shared / "acm-cr")
    titles.extend(p.title for p in papers)
    metadata = sorted({t for t in (usable_title(t, config) for t in titles) if t})
    bib = sorted({t for t in (usable_title(e.title, config) for _, e in references) if t})
    return RealInputs(tuple(metadata), tuple(bib), tuple(references), documents)


def cached_real_inputs(shared: Path, cache: Path, config: MatchConfig) -> RealInputs:
    if cache.is_file():
        version, inputs = pickle.loads(cache.read_bytes())
        if version == CACHE_VERSION:
            return inputs
    inputs = read_real_inputs(shared, config)
    cache.write_bytes(pickle.dumps((CACHE_VERSION, inputs)))
    return inputs


# ------------------------------------------------------------------------------------- synthetic titles


class WordChain:
    """A word-bigram chain over normalised real titles, sampled a whole batch of titles at a time: a title's word
    count is one of the real titles' counts; its first word follows the start of a real title; each next word
    follows its predecessor as in a real title with probability `follow`, else is drawn by its frequency (the
    chain's jumps, which make titles no real one is made of)."""

    def __init__(self, titles: Sequence[str], follow: float = 0.9) -> None:
        self.follow = follow
        self.vocabulary = sorted({w for t in titles for w in t.split()})
        ids = {w: i for i, w in enumerate(self.vocabulary)}
        start = len(self.vocabulary)  # the start symbol's id
        pairs, occurrences, lengths = [], [], []
        for title in titles:
            words = [ids[w] for w in title.split()]
            lengths.append(len(words))
            occurrences.extend(words)
            pairs.extend(zip([start, *words[:-1]], words, strict=True))
        pairs_array = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
        self.followers = pairs_array[:, 1].astype(np.int32)
        counts = np.bincount(pairs_array[:, 0], minlength=start + 1)
        self.first = np.zeros(start + 2, dtype=np.int64)
        np.cumsum(counts, out=self.first[1:])
        self.counts = counts
        self.start = start
        self.unigram = np.array(occurrences, dtype=np.int32)
        self.lengths = np.array(lengths, dtype=np.int64)

    def titles(self, n: int, rng: np.random.Generator) -> list[str]:
        lengths = self.lengths[rng.integers(0, len(self.lengths), n)]
        words = np.zeros((n, int(lengths.max())), dtype=np.int32)
        previous = np.full(n, self.start, dtype=np.int64)
        for position in range(words.shape[1]):
            count = self.counts[previous]
            drawn = self.first[previous] + (rng.random(n) * count).astype(np.int64)
            jump = (rng.random(n) >= self.follow) | (count == 0)
            followed = self.followers[np.minimum(drawn, len(self.followers) - 1)]
            chosen = np.where(jump, self.unigram[rng.integers(0, len(self.unigram), n)], followed)
            words[:, position] = chosen
            previous = chosen
        vocabulary = self.vocabulary
        return [
            " ".join([vocabulary[w] for w in row[:length]])
            for row, length in zip(words.tolist(), lengths.tolist(), strict=True)
        ]


def paper_id(number: int) -> str:
    """An arXiv-shaped id (`0701.00000`, ...), in the order of `number`."""
    month, rest = divmod(number, 100_000)
    return f"{7 + month // 12:02d}{1 + month % 12:02d}.{rest:05d}"


# ------------------------------------------------------------------------------------- the band lookup


@dataclass
class Hits:
    """Band hits of references in a database: reference index, band, paper number (id order), sorted."""

    ref: np.ndarray
    band: np.ndarray
    paper: np.ndarray


def chunk_band_keys(titles: Sequence[str], config: MatchConfig, block: int = 1 << 17) -> np.ndarray:
    keys = np.empty((config.bands, len(titles)), dtype=np.uint64)
    for first in range(0, len(titles), block):
        signatures = minhash_signatures(
            titles[first : first + block], config.num_perm, config.seed, config.shingle_size
        )
        keys[:, first : first + len(signatures)] = band_keys_by_band(signatures, config.banding)
    return keys


def band_hits(needles: np.ndarray, keys: np.ndarray, offset: int) -> Hits:
    """Every (reference, band, paper) whose band keys are equal; `needles` is (references, bands)."""
    refs, bands, papers = [], [], []
    for band in range(keys.shape[0]):
        order = np.argsort(keys[band], kind="stable")
        ranked = keys[band][order]
        lo = np.searchsorted(ranked, needles[:, band], side="left")
        hi = np.searchsorted(ranked, needles[:, band], side="right")
        sizes = hi - lo
        owners = np.repeat(np.arange(len(needles)), sizes)
        starts = np.repeat(lo - (np.cumsum(sizes) - sizes), sizes)
        refs.append(owners)
        bands.append(np.full(len(owners), band))
        papers.append(order[starts + np.arange(len(owners))] + offset)
    return Hits(np.concatenate(refs), np.concatenate(bands), np.concatenate(papers))


def capped(hits: Hits, max_bucket: int) -> tuple[Hits, int, int]:
    """The hits of each (reference, band) kept by the bucket cap (its first `max_bucket` papers in id order), how
    many (reference, band) buckets were capped and how many pairs the cap left out."""
    order = np.lexsort((hits.paper, hits.band, hits.ref))
    ref, band, paper = hits.ref[order], hits.band[order], hits.paper[order]
    group = ref.astype(np.int64) * 1000 + band
    first = np.r_[True, group[1:] != group[:-1]] if len(group) else np.zeros(0, bool)
    starts = np.flatnonzero(first)
    sizes = np.diff(np.r_[starts, len(group)])
    rank = np.arange(len(group)) - np.repeat(starts, sizes)
    keep = rank < max_bucket
    over = sizes > max_bucket
    return Hits(ref[keep], band[keep], paper[keep]), int(over.sum()), int((sizes[over] - max_bucket).sum())


# ------------------------------------------------------------------------------------ the measurement


@dataclass
class Database:
    """How a database of `size` titles is made: the kept bib titles first, then synthetic (or real) ones."""

    size: int
    prefix: list[str]  # the titles numbered first (the references' own papers, and `--real`'s titles)
    chain: WordChain | None
    seed: int

    def chunk(self, first: int, n: int) -> list[str]:
        """Titles `first` to `first + n` (synthetic ones are drawn per chunk, from a seed of their own, distinct
        within the chunk)."""
        titles = self.prefix[first : first + n]
        if len(titles) < n:
            rng = np.random.default_rng([self.seed, first])
            seen = set(titles)
            while len(titles) < n:
                for title in self.chain.titles(int((n - len(titles)) * 1.05) + 16, rng):
                    if len(title) >= 8 and title not in seen and len(titles) < n:
                        seen.add(title)
                        titles.append(title)
        return titles


@dataclass
class Candidates:
    """Per distinct candidate pair (sorted by reference, paper): reference, paper number, proposing bands (band
    hits after the cap), equal signature values, whether the length and the symbol groups allow LCS >=
    `min_similarity`, the LCS similarity, and the paper's normalised title."""

    ref: np.ndarray
    paper: np.ndarray
    bands: np.ndarray
    agreeing: np.ndarray
    possible: np.ndarray
    grouped: np.ndarray
    similarity: np.ndarray
    titles: list[str]
    capped_buckets: int
    skipped_by_cap: int
    hits: np.ndarray  # band hits after the cap, per reference


def find_candidates(database: Database, ref_titles: list[str], config: MatchConfig, chunk: int) -> Candidates:
    big = MatchConfig(**{**config.__dict__, "max_bucket": 1 << 40})
    ref_signatures = minhash_signatures(ref_titles, config.num_perm, config.seed, config.shingle_size)
    needles = np.ascontiguousarray(band_keys_by_band(ref_signatures, config.banding).T)
    found, title_of = [], {}
    for first in range(0, database.size, chunk):
        titles = database.chunk(first, min(chunk, database.size - first))
        hits = band_hits(needles, chunk_band_keys(titles, big), first)
        found.append(hits)
        for number in np.unique(hits.paper).tolist():
            title_of[number] = titles[number - first]
        del titles
    hits, capped_buckets, skipped = capped(
        Hits(*(np.concatenate([getattr(h, f) for h in found]) for f in ("ref", "band", "paper"))), config.max_bucket
    )
    pair = hits.ref.astype(np.int64) * (1 << 40) + hits.paper
    pairs, bands = np.unique(pair, return_counts=True)
    ref, paper = pairs >> 40, pairs & ((1 << 40) - 1)
    titles = [title_of[p] for p in paper.tolist()]
    signatures = minhash_signatures(titles, config.num_perm, config.seed, config.shingle_size)
    agreeing = (signatures == ref_signatures[ref]).sum(axis=1) if len(ref) else np.zeros(0, np.int64)
    lengths = np.array([len(t) for t in titles], dtype=np.float64)
    own = np.array([len(t) for t in ref_titles], dtype=np.float64)[ref]
    possible = np.array([could_match(int(a), int(b), config) for a, b in zip(own, lengths, strict=True)], dtype=bool)
    grouped = possible & could_match_groups(
        group_counts(ref_titles)[ref], group_counts(titles), np.maximum(own, lengths), config
    )
    similarity = np.zeros(len(ref))
    rows = np.flatnonzero(possible)
    if len(rows):
        similarity[rows] = cpdist(
            [ref_titles[r] for r in ref[rows].tolist()],
            [titles[i] for i in rows.tolist()],
            scorer=LCSseq.normalized_similarity,
            workers=1,
            dtype=np.float64,
        )
    per_ref = np.bincount(hits.ref, minlength=len(ref_titles))
    return Candidates(
        ref, paper, bands, agreeing, possible, grouped, similarity, titles, capped_buckets, skipped, per_ref
    )


@dataclass
class Counts:
    """Per reference (arrays over the references), what each design's joins move, and the resolutions."""

    hits: np.ndarray  # band hits after the bucket cap: the pairs the bucket join emitted before (with repeats)
    candidates: np.ndarray  # distinct candidates: the papers attached to a reference with title and signature before
    possible: np.ndarray  # candidates of a possible length
    crowded: np.ndarray  # more of those than `max_candidates`
    passing_hits: np.ndarray  # band hits of pairs whose length and symbol groups allow: the pairs emitted now
    forwarded: np.ndarray  # distinct such pairs, at most `max_candidates`: the titles sent to papers now
    verified: np.ndarray  # of those, LCS >= `min_similarity`: what papers send back now
    forwarded_rows: np.ndarray  # rows of `Candidates` forwarded
    resolutions: list[tuple[int, str]]  # (paper number or -1, method), by the rule of this code
    before: list[tuple[int, str]]  # by the rule before it (the best `max_candidates` by equal signature values)


def _top(rows: np.ndarray, found: Candidates, key: np.ndarray, cap: int) -> np.ndarray:
    """The rows of at most `cap` pairs per reference, largest `key` first, then paper number."""
    order = np.lexsort((found.paper[rows], -key[rows], found.ref[rows]))
    ranked = rows[order]
    first = np.searchsorted(found.ref[ranked], found.ref[ranked], side="left")
    return np.sort(ranked[np.arange(len(ranked)) - first < cap])


def _resolve(found: Candidates, rows: np.ndarray, n: int, years: np.ndarray, config: MatchConfig) -> list:
    """(paper number or -1, method) of each reference, `choose_candidate` over its verified pairs among `rows`."""
    rows = rows[found.similarity[rows] >= config.min_similarity]
    starts = np.searchsorted(found.ref[rows], np.arange(n + 1))
    resolved = []
    for r in range(n):
        numbers = found.paper[rows[starts[r] : starts[r + 1]]].tolist()
        ids = [paper_id(p) for p in numbers]
        similarities = found.similarity[rows[starts[r] : starts[r + 1]]].tolist()
        resolution = choose_candidate(str(r), None, ids, similarities, years[numbers].tolist(), config)
        number = numbers[ids.index(resolution.paper_id)] if resolution.paper_id is not None else -1
        resolved.append((number, resolution.method))
    return resolved


def count_per_reference(found: Candidates, n: int, years: np.ndarray, config: MatchConfig) -> Counts:
    possible = np.flatnonzero(found.possible)
    grouped = np.flatnonzero(found.grouped)
    forwarded = _top(grouped, found, found.bands, config.max_candidates)
    before = _top(possible, found, found.agreeing, config.max_candidates)
    verified = forwarded[found.similarity[forwarded] >= config.min_similarity]
    per = lambda rows, weights=None: np.bincount(found.ref[rows], weights=weights, minlength=n)  # noqa: E731
    return Counts(
        hits=found.hits,
        candidates=np.bincount(found.ref, minlength=n),
        possible=per(possible),
        crowded=per(possible) > config.max_candidates,
        passing_hits=per(grouped, found.bands[grouped]).astype(np.int64),
        forwarded=per(forwarded),
        verified=per(verified),
        forwarded_rows=forwarded,
        resolutions=_resolve(found, forwarded, n, years, config),
        before=_resolve(found, before, n, years, config),
    )


# ------------------------------------------------------------------------------------------ the bytes


WINDOWED_BYTES = 13
"""What FnApiRunner's shuffle buffer (`bench.pipeline.count_shuffle_bytes`) holds for an element besides its key
and value and their lengths: timestamp, window and pane (measured: a GroupByKey of 10,000 known pairs)."""


def _varint_size(n: int) -> int:
    return max(1, (n.bit_length() + 6) // 7)


class ShuffleModel:
    """What a join's GroupByKeys receive, by step, as FnApiRunner buffers it: each element's key and value
    encoded by `FastPrimitivesCoder` (the coder Beam gives these untyped PCollections), each with its length, and
    `WINDOWED_BYTES`. A `CoGroupByKey` value travels as (tag, value) (tags under 10 characters, as here, are
    written as they are); `FanOutJoin` keys are (key, shard) and its many side is also counted per key; a lifted
    combine's accumulators are counted once an input (bundles of one: the most a distributed runner sends)."""

    def __init__(self) -> None:
        from apache_beam.coders import FastPrimitivesCoder

        self._encode = FastPrimitivesCoder().get_impl().encode
        self.bytes: dict[str, int] = {}

    def size(self, key, value) -> int:
        k, v = len(self._encode(key)), len(self._encode(value))
        return WINDOWED_BYTES + _varint_size(k) + k + _varint_size(v) + v

    def gbk(self, step: str, key, value, times: int = 1) -> None:
        self.bytes[step] = self.bytes.get(step, 0) + times * self.size(key, value)

    def cogbk(self, step: str, key, tag: str, value, times: int = 1) -> None:
        self.gbk(step, key, (tag, value), times)

    def fan_out(self, step: str, key, tag: str, value, many: bool, times: int = 1) -> None:
        if many:
            self.gbk(f"{step}/count", key, 1, times)
        self.cogbk(step, (key, 0), tag, value, times)


@dataclass
class Sample:
    """The real-shaped inputs of the byte model: references (key, title, year, bib id) with their band keys,
    database papers (a sample) with theirs, and the measured candidate pairs."""

    refs: list[tuple[str, str, int | None, str]]
    ref_keys: np.ndarray
    papers: list[tuple[str, str, int]]
    paper_keys: np.ndarray
    found: Candidates
    counts: Counts
    years: np.ndarray  # every database paper's year, by number


def bytes_before(sample: Sample, config: MatchConfig) -> tuple[dict[str, float], dict[str, float]]:
    """(bytes a reference, bytes a database paper) by step, for the title join as it was (commit 2e7d79c): bucket
    keys `(band, key)`, every band hit joined to its paper, every distinct candidate attached with its title and
    signature, the raw strings' join on the same paper buckets."""
    model, signature = ShuffleModel(), bytes(4 * config.num_perm)
    found = sample.found
    for (ref, title, year, bib_id), keys in zip(sample.refs, sample.ref_keys.tolist(), strict=True):
        for band, key in enumerate(keys):
            model.fan_out("JoinBuckets", (band, key), "refs", ref, many=True)
        model.cogbk("JoinRefs", ref, "1", (title, year, bib_id, signature))
    for r, p, bands, title in zip(
        found.ref.tolist(), found.paper.tolist(), found.bands.tolist(), found.titles, strict=True
    ):
        ref, pid = sample.refs[r][0], paper_id(p)
        model.fan_out("JoinPapers", pid, "pairs", ref, many=True, times=bands)
        model.cogbk("JoinRefs", ref, "0", (pid, title, int(sample.years[p]), signature, ""))
    per_ref = {step: b / len(sample.refs) for step, b in model.bytes.items()}
    model = ShuffleModel()
    for (pid, title, year), keys in zip(sample.papers, sample.paper_keys.tolist(), strict=True):
        for band, key in enumerate(keys):
            for kind in ("", "Raw"):
                model.gbk(f"{kind}CapBuckets", (band, key), ([pid], 0))
                model.fan_out(f"Join{kind}Buckets", (band, key), "papers", ([pid], 0), many=False)
        model.fan_out("JoinPapers", pid, "records", (title, year, "", signature), many=False)
        model.fan_out("JoinRawPapers", pid, "records", (title, year, "", signature), many=False)
    return per_ref, {step: b / len(sample.papers) for step, b in model.bytes.items()}


def bytes_after(sample: Sample, config: MatchConfig) -> tuple[dict[str, float], dict[str, float]]:
    """(bytes a reference, bytes a database paper) by step, for `pipelines.matching.MatchTitles` as it is: bucket
    keys of 9 bytes, members with their length and packed symbol groups, one id a passing band hit, a reference's
    title sent to at most `max_candidates` papers, the verified pairs sent back."""
    from pipelines.matching import bucket_keys

    model, signature = ShuffleModel(), bytes(4 * config.num_perm)
    found, counts = sample.found, sample.counts
    groups = packed_group_counts([title for _, title, _, _ in sample.refs])
    buckets = bucket_keys(sample.ref_keys)
    bands = sample.ref_keys.shape[1]
    for i, (ref, title, year, bib_id) in enumerate(sample.refs):
        for bucket in buckets[i * bands : (i + 1) * bands]:
            model.fan_out("JoinBuckets", bucket, "r", (ref, len(title), groups[i]), many=True)
        model.cogbk("JoinRefTitles", ref, "r", (title, year, bib_id))
        if counts.forwarded[i]:
            model.cogbk("JoinRefs", ref, "r", (bib_id, year))
    passing = np.flatnonzero(found.grouped)
    for r, p, times in zip(
        found.ref[passing].tolist(), found.paper[passing].tolist(), found.bands[passing].tolist(), strict=True
    ):
        model.cogbk("JoinRefTitles", sample.refs[r][0], "p", paper_id(p), times=times)
    for row in counts.forwarded_rows.tolist():
        (ref, title, _, _), p = sample.refs[found.ref[row]], int(found.paper[row])
        model.fan_out("JoinPapers", paper_id(p), "r", (ref, title), many=True)
        if found.similarity[row] >= config.min_similarity:
            model.cogbk("JoinRefs", ref, "p", (paper_id(p), float(found.similarity[row]), int(sample.years[p])))
    per_ref = {step: b / len(sample.refs) for step, b in model.bytes.items()}
    model = ShuffleModel()
    groups = packed_group_counts([title for _, title, _ in sample.papers])
    buckets = bucket_keys(sample.paper_keys)
    for i, (pid, title, year) in enumerate(sample.papers):
        member = ([(pid, len(title), groups[i])], 0)
        for bucket in buckets[i * bands : (i + 1) * bands]:  # capped and joined once, for titles and raw strings
            model.gbk("CapBuckets", bucket, member)
            model.fan_out("JoinBuckets", bucket, "p", member, many=False)
        model.fan_out("JoinPapers", pid, "p", (title, year), many=False)
        model.fan_out("JoinRawPapers", pid, "records", (title, year, "", signature), many=False)
    return per_ref, {step: b / len(sample.papers) for step, b in model.bytes.items()}


# -------------------------------------------------------------------------------------- Beam, to check


def _model_step(name: str) -> str | None:
    """The `ShuffleModel` step of a GroupByKey that `count_shuffle_bytes` names (None: not the join's)."""
    name = name.replace("-", "/") + "/"
    if "MatchTitles/" not in name:
        return None
    if "/CapBuckets/" in name:
        return "CapBuckets"
    for stage in ("JoinBuckets", "JoinRawPapers", "JoinPapers", "JoinRefTitles", "JoinRawRefs"):
        if f"/{stage}/" in name:
            return f"{stage}/count" if "/CountPerKey/" in name else stage
    return "JoinRefs" if "/JoinRefs/" in name else name


def beam_shuffle(titles: list[str], years: np.ndarray, refs: list[tuple[str, BibEntry]], config: MatchConfig) -> dict:
    """`MatchTitles` on FnApiRunner over these papers and references: bytes each of its GroupByKeys received."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions

    from bench.pipeline import count_shuffle_bytes
    from mapping.records import Paper
    from pipelines.matching import MatchTitles

    papers = [Paper(paper_id(i), t, year=int(years[i])) for i, t in enumerate(titles)]
    counted = count_shuffle_bytes()
    start = time.perf_counter()
    with beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as pipeline:
        inputs = {"papers": pipeline | "Papers" >> beam.Create(papers), "refs": pipeline | "Refs" >> beam.Create(refs)}
        _ = inputs | MatchTitles(config)
    by_step: dict[str, int] = {}
    for name, n in counted.items():
        step = _model_step(name)
        if step is not None:
            by_step[step] = by_step.get(step, 0) + n
    return {"seconds": round(time.perf_counter() - start, 1), "bytes": by_step}


# ------------------------------------------------------------------------------------------------ main


def summary(values: np.ndarray) -> dict[str, float]:
    return {
        "mean": round(float(values.mean()), 2),
        "median": float(np.median(values)),
        "p90": float(np.percentile(values, 90)),
        "p99": float(np.percentile(values, 99)),
        "max": int(values.max()),
    }


def measure(
    size: int,
    prefix: list[str],
    chain: WordChain | None,
    refs: list[tuple[str, BibEntry]],
    args: argparse.Namespace,
    truth: list[int] | None = None,
) -> dict:
    config = MatchConfig()
    usable = [(key, usable_title(entry.title, config), entry.year, entry.bib_id) for key, entry in refs]
    ref_titles = [title for _, title, _, _ in usable]
    database = Database(size, prefix, chain, args.seed)
    start = time.perf_counter()
    found = find_candidates(database, ref_titles, config, args.chunk)
    found_s = time.perf_counter() - start
    years = 1990 + np.arange(size) % 36
    counts = count_per_reference(found, len(ref_titles), years, config)
    titles = database.chunk(0, min(size, max(args.db_sample, args.check_upto if size <= args.check_upto else 0)))
    sample_titles = titles[: args.db_sample]
    _, ref_keys = signatures_and_keys(ref_titles, config)
    _, paper_keys = signatures_and_keys(sample_titles, config)
    sample = Sample(
        refs=usable,
        ref_keys=ref_keys,
        papers=[(paper_id(i), t, int(years[i])) for i, t in enumerate(sample_titles)],
        paper_keys=paper_keys,
        found=found,
        counts=counts,
        years=years,
    )
    row: dict = {
        "size": size,
        "references": len(ref_titles),
        "find_s": round(found_s, 1),
        "capped_buckets": found.capped_buckets,
        "pairs_skipped_by_cap": found.skipped_by_cap,
        "per_reference": {
            "band_hits": summary(counts.hits),
            "candidates": summary(counts.candidates),
            "possible": summary(counts.possible),
            "crowded_share": round(float(counts.crowded.mean()), 4),
            "passing_band_hits": summary(counts.passing_hits),
            "forwarded": summary(counts.forwarded),
            "verified": summary(counts.verified),
        },
        "resolved": sum(p >= 0 for p, _ in counts.resolutions),
        "resolutions_unlike_before": sum(a != b for a, b in zip(counts.resolutions, counts.before, strict=True)),
    }
    if truth is not None:
        row["correct"] = sum(p == t for (p, _), t in zip(counts.resolutions, truth, strict=True))
        row["correct_before"] = sum(p == t for (p, _), t in zip(counts.before, truth, strict=True))
    if size <= args.check_upto:
        index = TitleIndex([paper_id(i) for i in range(size)], titles, years.tolist(), config)
        found_by_index = index.resolve_titles(
            [str(i) for i in range(len(ref_titles))], ref_titles, [None] * len(usable)
        )
        ours = [(paper_id(p) if p >= 0 else None, m) for p, m in counts.resolutions]
        row["resolutions_unlike_title_index"] = sum(
            (r.paper_id, r.method) != o for r, o in zip(found_by_index, ours, strict=True)
        )
    for name in args.designs:
        per_ref, per_paper = {"before": bytes_before, "after": bytes_after}[name](sample, config)
        row[f"bytes_{name}"] = {
            "per_reference": {k: round(v, 1) for k, v in sorted(per_ref.items())},
            "per_database_paper": {k: round(v, 1) for k, v in sorted(per_paper.items())},
            "reference_total": round(sum(per_ref.values()), 1),
            "database_paper_total": round(sum(per_paper.values()), 1),
        }
    if size in args.beam:
        beam_refs = [
            (key, BibEntry(bib_id, title=entry.title, year=entry.year))
            for (key, entry), (_, _, _, bib_id) in zip(refs, usable, strict=True)
        ]
        measured = beam_shuffle(
            titles[:size] if len(titles) >= size else database.chunk(0, size), years, beam_refs, config
        )
        modelled = row[f"bytes_{args.designs[-1]}"]
        predicted = {
            step: modelled["per_reference"].get(step, 0) * len(usable)
            + modelled["per_database_paper"].get(step, 0) * size
            for step in set(modelled["per_reference"]) | set(modelled["per_database_paper"])
        }
        row["beam"] = {
            "seconds": measured["seconds"],
            "measured": measured["bytes"],
            "modelled": {k: round(v) for k, v in sorted(predicted.items())},
        }
    return row


def per_paper(row: dict, name: str, refs_per_paper: float, db_per_paper: float) -> float:
    """Bytes a citing paper: its references' bytes, and the database's bytes shared among the citing papers."""
    b = row[f"bytes_{name}"]
    return refs_per_paper * b["reference_total"] + db_per_paper * b["database_paper_total"]


def print_row(row: dict, refs_per_paper: float, db_per_paper: float) -> None:
    counts = row["per_reference"]
    c = counts["candidates"]
    print(
        f"{row['size']:>11,} titles: candidates a reference {c['mean']:.1f} (median {c['median']:g}, p90 {c['p90']:g},"
        f" max {c['max']}); of a possible length {counts['possible']['mean']:.2f}, crowded "
        f"{100 * counts['crowded_share']:.1f}%; passing band hits {counts['passing_band_hits']['mean']:.1f}, "
        f"sent {counts['forwarded']['mean']:.2f}, verified {counts['verified']['mean']:.2f}; resolved "
        f"{row['resolved']}/{row['references']}, {row['resolutions_unlike_before']} unlike the rule before"
        + (
            f", {row['resolutions_unlike_title_index']} unlike TitleIndex"
            if "resolutions_unlike_title_index" in row
            else ""
        )
        + (f"; right {row['correct']} (by the rule before: {row['correct_before']})" if "correct" in row else "")
    )
    for name in ("before", "after"):
        if f"bytes_{name}" not in row:
            continue
        b = row[f"bytes_{name}"]
        print(
            f"{'':>19}{name:>6}: {b['reference_total']:>8,.0f} B a reference, {b['database_paper_total']:>6,.0f} B a "
            f"database paper, {per_paper(row, name, refs_per_paper, db_per_paper) / 1000:>7,.1f} kB a citing paper"
        )
    if "beam" in row:
        measured, modelled = row["beam"]["measured"], row["beam"]["modelled"]
        print(f"{'':>19}FnApiRunner ({row['beam']['seconds']} s): measured, modelled bytes by step, and their ratio")
        for step in sorted(set(measured) | set(modelled)):
            m, p = measured.get(step, 0), modelled.get(step, 0)
            print(f"{'':>23}{step:<20} {m:>12,} {p:>12,} {m / p if p else float('nan'):>6.3f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000,10000000", help="database sizes, comma-separated")
    parser.add_argument(
        "--real", action="store_true", help="also the real metadata titles alone, and as many synthetic"
    )
    parser.add_argument("--beam", default="", help="sizes to run MatchTitles at on FnApiRunner too (the model's check)")
    parser.add_argument(
        "--designs",
        default="before,after",
        help="byte models: before (the join of commit 2e7d79c), after (this one); --beam checks the last",
    )
    parser.add_argument("--chunk", type=int, default=1_000_000, help="titles signed and sorted at once")
    parser.add_argument("--check_upto", type=int, default=100_000, help="compare with TitleIndex up to this size")
    parser.add_argument("--db_sample", type=int, default=20_000, help="database papers the model encodes")
    parser.add_argument("--db_per_paper", type=float, default=2.4 / 1.7, help="database papers a citing paper")
    parser.add_argument(
        "--variants",
        type=int,
        default=0,
        help="references: this many citation-style variants of database titles (a misspelled word, a dropped word, "
        "a cut tail; bench/matching.py's) instead of the real bib entries, to count right resolutions",
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--cache", default="/tmp/citrec_join_scale_inputs.pkl", help="the real inputs, read once")
    parser.add_argument("--json", help="write every figure here")
    args = parser.parse_args(argv)
    args.beam = {int(s) for s in args.beam.split(",") if s}
    args.designs = args.designs.split(",")
    config = MatchConfig()
    real = cached_real_inputs(shared_data_dir(), Path(args.cache), config)
    refs = [(key, entry) for key, entry in real.references if usable_title(entry.title, config)]
    refs_per_paper = len(real.references) / real.documents
    chain = WordChain([*real.metadata_titles, *real.bib_titles])
    prefix = [t for t in real.bib_titles if not held_out(t)]
    print(
        f"{len(refs):,} references with a usable title ({refs_per_paper:.1f} bib entries a document, "
        f"{real.documents} documents); a bigram chain of {len(chain.vocabulary):,} words over "
        f"{len(real.metadata_titles) + len(real.bib_titles):,} real titles; {args.db_per_paper:.2f} database papers "
        f"a citing paper; {uptime()}",
        flush=True,
    )
    truth = None
    if args.variants:
        refs, truth = variant_references(prefix, args.variants, args.seed, config)
        print(f"references: {len(refs):,} variants of database titles", flush=True)
    rows = []
    plans = [(int(s), prefix, chain, "synthetic") for s in args.sizes.split(",") if s]
    if args.real:
        everything = prefix + sorted(set(real.metadata_titles) - set(prefix))
        plans = [(len(everything), everything, None, "real"), (len(everything), prefix, chain, "synthetic"), *plans]
    for size, titles, source_chain, source in plans:
        row = measure(size, titles, source_chain, refs, args, truth)
        row["titles"] = source
        print(f"[{source}]", end=" ")
        print_row(row, refs_per_paper, args.db_per_paper)
        sys.stdout.flush()
        rows.append(row)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"refs_per_paper": refs_per_paper, "db_per_paper": args.db_per_paper, "rows": rows}, indent=1)
        )


def variant_references(
    titles: list[str], n: int, seed: int, config: MatchConfig
) -> tuple[list[tuple[str, BibEntry]], list[int]]:
    """`n` references citing papers among the first `titles` (the kept bib titles) with a misspelled word, a
    dropped word or a cut tail (in turn), and the number of the paper each cites."""
    import random

    from bench.matching import variant

    rng = random.Random(seed)
    refs, truth = [], []
    while len(refs) < n:
        cited = rng.randrange(len(titles))
        title = variant(titles[cited], ("misspelled", "dropped_word", "truncated")[len(refs) % 3], rng)
        if usable_title(title, config):
            refs.append((f"variant\x1f{len(refs)}", BibEntry(f"v{len(refs)}", title=title)))
            truth.append(cited)
    return refs, truth


def uptime() -> str:
    try:
        return "load " + " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "load unknown"


if __name__ == "__main__":
    main()
