"""Resolve bib entries to papers of the database: identifiers first, then titles.

An entry's identifier keys are tried strongest first (`mapping.ids.KEY_KINDS`; the smallest paper id holding a
key wins it). Titles follow ArSyTa: MinHash-LSH proposes candidates and each is verified by an LCS similarity
(longest common subsequence over the longer title); a tie is broken by the entry's year, else `ambiguous`.
Candidates whose length or symbol groups cannot reach the threshold are dropped first (exact bounds), and at most
`max_candidates` of the rest are verified: those most bands proposed, then by paper id. The
pieces here serve `mapping.in_memory.InMemoryMatcher` and the Beam join in `pipelines/matching.py` alike, so both
give the same resolutions (docs/matching.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cpdist

from mapping.ids import resolution_method
from mapping.minhash import (
    GROUP_FULL,
    Banding,
    band_keys,
    band_keys_by_band,
    grouped_symbol_counts,
    minhash_signatures,
    symbol_counts,
)
from mapping.records import CounterFn, Resolution, no_count
from mapping.titles import looks_like_venue, normalize_title


@dataclass(frozen=True)
class RawStringConfig:
    """Raw-string matching parameters (the similarity threshold and the LSH are `MatchConfig`'s).

    The defaults were chosen on the dev half of the gold set in `bench/raw_gold.py` (see bench/RESULTS.md)."""

    min_title_words: int = 3  # a database title shorter than this is never looked for inside a string
    min_title_chars: int = 20  # (normalised characters)
    min_segment_chars: int = 16  # a segment is signed from this length (and three words) on
    min_segment_jaccard: float = 0.3  # the best segment's estimated Jaccard with a candidate's title
    max_raw_chars: int = 10_000  # a longer string is not matched (`unresolved:raw_too_long`)
    max_segments: int = 24  # per string, in `raw_segments`' order


@dataclass(frozen=True)
class MatchConfig:
    """Title-matching parameters. ArSyTa's published setting is top-100 candidates verified at LCS >= 0.9;
    the shingle size and banding were chosen by measurement (`bench/matching.py --sweep`)."""

    num_perm: int = 128
    shingle_size: int = 3
    bands: int = 25
    rows: int = 5
    max_candidates: int = 100
    max_bucket: int = 1000
    min_similarity: float = 0.9
    min_title_chars: int = 8
    seed: int = 1
    raw: RawStringConfig = RawStringConfig()  # entries with no usable title but a raw string (mapping/raw_strings.py)

    @property
    def banding(self) -> Banding:
        return Banding(self.bands, self.rows)

    def as_metadata(self) -> dict[str, object]:
        return {**asdict(self), "lcs": "longest common subsequence / length of the longer normalised title"}


def shingles(normalized_title: str, size: int) -> set[bytes]:
    """Character `size`-grams of a normalised title (the whole title when it is shorter)."""
    text = normalized_title
    if len(text) <= size:
        return {text.encode()} if text else set()
    return {text[i : i + size].encode() for i in range(len(text) - size + 1)}


def lcs_similarity(a: str, b: str) -> float:
    """Longest common subsequence of `a` and `b` over the length of the longer one, in [0, 1]."""
    return LCSseq.normalized_similarity(a, b)


def checked_title(title: str | None, config: MatchConfig) -> tuple[str | None, str]:
    """(the normalised title, "") when it can be matched on, else (None, the reason it cannot)."""
    normalized = normalize_title(title)
    if len(normalized) < config.min_title_chars:
        return None, "no_usable_title"
    if looks_like_venue(normalized):
        return None, "venue_as_title"
    return normalized, ""


def usable_title(title: str | None, config: MatchConfig) -> str | None:
    """The normalised title when it is long enough and not a venue name, else None."""
    return checked_title(title, config)[0]


def signatures_and_keys(titles: Sequence[str], config: MatchConfig) -> tuple[np.ndarray, np.ndarray]:
    signatures = minhash_signatures(titles, config.num_perm, config.seed, config.shingle_size)
    return signatures, band_keys(signatures, config.banding)


def cap_bucket(members: Sequence[str], config: MatchConfig) -> tuple[list[str], int]:
    """The first `max_bucket` paper ids of a bucket in id order, and how many were left out.

    A bucket holding thousands of papers (generic titles) would make every reference in it compare with
    all of them; the cap bounds the work, and the skipped pairs are counted by the caller."""
    ordered = sorted(members)
    return ordered[: config.max_bucket], max(len(ordered) - config.max_bucket, 0)


LENGTH_SLACK = 1e-9
"""Tolerance of the length bound, so that rounding never drops a pair rapidfuzz would score at the threshold."""


def could_match(length_a: int, length_b: int, config: MatchConfig) -> bool:
    """Whether two titles of these lengths can reach `min_similarity`: their LCS is at most the shorter
    length, so the similarity is at most shorter / longer."""
    return min(length_a, length_b) / max(length_a, length_b) >= config.min_similarity - LENGTH_SLACK


_UNBOUNDED = 1 << 20
"""What a group both titles hold `GROUP_FULL` or more of adds to the common count: more than any title's length."""


def _pair_common() -> list[int]:
    """For two packed bytes (two groups each): what their groups add to the common count, indexed by `a << 8 | b`."""
    table = []
    for a in range(256):
        for b in range(256):
            smaller = (min(a >> 4, b >> 4), min(a & 15, b & 15))
            table.append(sum(_UNBOUNDED if m >= GROUP_FULL else m for m in smaller))
    return table


_PAIR_COMMON = _pair_common()


def could_match_groups(own: np.ndarray, theirs: np.ndarray, longer: np.ndarray, config: MatchConfig) -> np.ndarray:
    """Whether each pair's LCS can reach `min_similarity`, from the two titles' `group_counts` (row by row) and the
    longer length: a common subsequence takes from each symbol group at most the smaller of the two counts, and a
    group both hold `GROUP_FULL` or more of bounds nothing. Exact (it never drops a pair the LCS accepts), weaker
    than the bound on single symbols and 8 bytes a title, so the title join applies it where the pairs are made
    (`could_match_packed` is the same on `packed_group_counts`)."""
    smaller = np.minimum(own, theirs).astype(np.int64)
    common = np.where(smaller >= GROUP_FULL, _UNBOUNDED, smaller).sum(axis=1)
    return common >= (config.min_similarity - LENGTH_SLACK) * longer


def could_match_packed(own: bytes, theirs: bytes, longer: int, config: MatchConfig) -> bool:
    """`could_match_groups` for one pair, from `mapping.minhash.packed_group_counts` bytes."""
    common = sum(_PAIR_COMMON[a << 8 | b] for a, b in zip(own, theirs, strict=True))
    return common >= (config.min_similarity - LENGTH_SLACK) * longer


def rank_candidates(candidates: Sequence[str], agreeing_bands: Sequence[int], config: MatchConfig) -> list[int]:
    """Positions of the `max_candidates` best candidates: proposed by the most LSH bands first (the estimate of
    their Jaccard similarity that the banding gives, known wherever the candidates are, with no signature), then
    paper id."""
    order = sorted(range(len(candidates)), key=lambda i: (-agreeing_bands[i], candidates[i]))
    return order[: config.max_candidates]


def choose_candidate(
    bib_id: str,
    year: int | None,
    candidates: Sequence[str],
    similarities: Sequence[float],
    candidate_years: Sequence[int | None],
    config: MatchConfig,
    count: CounterFn = no_count,
) -> Resolution:
    """The verified candidate with the best similarity; ties broken by year or left ambiguous."""
    verified = [
        (s, pid, y)
        for s, pid, y in zip(similarities, candidates, candidate_years, strict=True)
        if s >= config.min_similarity
    ]
    if not verified:
        count("unresolved:no_title_match", 1)
        return Resolution(bib_id, None, "unresolved")
    best = max(s for s, _, _ in verified)
    tied = sorted({(pid, y) for s, pid, y in verified if s == best})
    if len(tied) > 1 and year is not None:
        same_year = [t for t in tied if t[1] == year]
        tied = same_year if len(same_year) == 1 else tied
    if len(tied) > 1:
        count("unresolved:ambiguous_title", 1)
        return Resolution(bib_id, None, "ambiguous", best)
    count("resolved_by:title", 1)
    return Resolution(bib_id, tied[0][0], "title", best)


def _expand_ranges(lo: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges [lo_i, lo_i + counts_i): (owner index i, position) of every element, vectorised."""
    owners = np.repeat(np.arange(len(lo)), counts)
    starts = np.zeros(len(lo), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    positions = lo[owners] + (np.arange(int(counts.sum())) - starts[owners])
    return owners, positions


def _stable_argsort(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.argsort(keys, kind="stable")` and the sorted keys, some 3x faster: numpy's default sort (SIMD),
    then the positions within each run of equal keys put back in ascending order (hashes: few runs)."""
    order = np.argsort(keys)
    ranked = keys[order]
    equal = ranked[1:] == ranked[:-1]
    if equal.any():
        tied = np.zeros(len(keys), dtype=bool)
        tied[1:] = equal
        tied[:-1] |= equal
        where = np.flatnonzero(tied)
        run = np.cumsum(np.r_[True, ~equal])[where]  # which run of equal keys each tied position is in
        order[where] = np.sort(run * len(keys) + order[where]) % len(keys)
    return order, ranked


def _object_array(values: Sequence) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


_SCAN_LIMIT = 64
"""A needle's prefix bucket holding more keys than this (a run of equal keys: generic titles) is searched
with `searchsorted` instead of scanned."""


class TitleIndex:
    """Normalised titles of database papers with their MinHash signatures and sorted LSH band keys.

    Papers are held in paper-id order, so a capped bucket keeps the same papers as the Beam join does.
    Per band, the keys are sorted with the papers' order, and a prefix table gives where the keys starting
    with each `bits`-bit prefix begin (one or two keys a prefix), so that a needle is looked up with two
    reads and a short scan instead of a binary search over the whole band."""

    def __init__(
        self, paper_ids: Sequence[str], titles: Sequence[str], years: Sequence[int | None], config: MatchConfig
    ):
        self.config = config
        # object arrays, not lists: the garbage collector does not walk them (three lists of a million would
        # be walked by the next collections of their generation: 0.1 s on the first queries after a build)
        self.paper_ids = _object_array(paper_ids)
        self.titles = _object_array(titles)
        self.years = _object_array(years)
        self.signatures = minhash_signatures(self.titles, config.num_perm, config.seed, config.shingle_size)
        self._lengths = np.fromiter(map(len, self.titles), dtype=np.float64, count=len(self.titles))
        self._symbol_counts = symbol_counts(self.titles)
        self._group_counts = grouped_symbol_counts(self._symbol_counts)
        # one contiguous row per band, sorted in place band by band: no second copy of the keys
        self._sorted_keys = band_keys_by_band(self.signatures, config.banding)
        bands, n = self._sorted_keys.shape
        bits = max(n.bit_length() - 1, 1)  # 1 to 2 keys a prefix (4 bytes a paper a band)
        self._shift = np.uint64(64 - bits)
        self._order = np.empty((bands, n), dtype=np.int32)
        self._prefix_starts = np.zeros((bands, (1 << bits) + 1), dtype=np.int32)
        for band in range(bands):
            self._order[band], self._sorted_keys[band] = _stable_argsort(self._sorted_keys[band])
            prefixes = (self._sorted_keys[band] >> self._shift).astype(np.intp)
            np.cumsum(np.bincount(prefixes, minlength=1 << bits), out=self._prefix_starts[band, 1:])

    def __len__(self) -> int:
        return len(self.paper_ids)

    def candidate_pairs(self, keys: np.ndarray, count: CounterFn = no_count) -> tuple[np.ndarray, np.ndarray]:
        """(query index, paper index) of every pair sharing a band key, each pair once, sorted."""
        q, p, _ = self.candidate_pairs_with_bands(keys, count)
        return q, p

    def candidate_pairs_with_bands(
        self, keys: np.ndarray, count: CounterFn = no_count
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`candidate_pairs` and, for each pair, how many bands proposed it (those whose capped bucket kept it)."""
        n_queries, bands = keys.shape
        n, max_bucket = len(self), self.config.max_bucket
        if not n_queries or not n:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
        # all bands at once: needle i is query i % n_queries in band i // n_queries
        needles = keys.T.ravel()
        band_of = np.repeat(np.arange(bands, dtype=np.int64), n_queries)
        prefix = (needles >> self._shift).astype(np.int64) + band_of * self._prefix_starts.shape[1]
        lo = self._prefix_starts.reshape(-1)[prefix].astype(np.int64)
        hi = self._prefix_starts.reshape(-1)[prefix + 1].astype(np.int64)
        wide = np.flatnonzero(hi - lo > _SCAN_LIMIT)
        for band in np.unique(band_of[wide]).tolist():
            these = wide[band_of[wide] == band]
            lo[these] = np.searchsorted(self._sorted_keys[band], needles[these], side="left")
            hi[these] = np.searchsorted(self._sorted_keys[band], needles[these], side="right")
        wide_sizes = hi[wide] - lo[wide]
        hi[wide] = lo[wide] + np.minimum(wide_sizes, max_bucket)
        owners, positions = _expand_ranges(lo + band_of * n, hi - lo)
        same = self._sorted_keys.reshape(-1)[positions] == needles[owners]
        owners, positions = owners[same], positions[same]
        # a needle's equal keys are consecutive: its hits are one run, in paper order
        hits = np.bincount(owners, minlength=len(needles))
        sizes = hits.copy()
        sizes[wide] = wide_sizes
        over = sizes > max_bucket
        if over.any():
            count("title_bucket_hits_capped", int(over.sum()))
            count("title_candidate_pairs_skipped_by_cap", int((sizes[over] - max_bucket).sum()))
            first = np.cumsum(hits) - hits
            kept = np.arange(len(owners)) - first[owners] < max_bucket
            owners, positions = owners[kept], positions[kept]
        pairs = np.sort(owners % n_queries * n + self._order.reshape(-1)[positions])
        first = np.flatnonzero(np.r_[True, pairs[1:] != pairs[:-1]]) if len(pairs) else pairs  # np.unique: slower
        proposing = np.diff(np.r_[first, len(pairs)])
        pairs = pairs[first]
        return pairs // n, pairs % n, proposing

    def resolve_titles(
        self,
        bib_ids: Sequence[str],
        titles: Sequence[str],
        years: Sequence[int | None],
        count: CounterFn = no_count,
    ) -> list[Resolution]:
        """Resolutions for many normalised, usable reference titles at once."""
        if not titles:
            return []
        _, keys = signatures_and_keys(titles, self.config)
        if not len(self):
            for _ in titles:
                count("unresolved:no_title_match", 1)
            return [Resolution(b, None, "unresolved") for b in bib_ids]
        q, p, proposing = self.candidate_pairs_with_bands(keys, count)
        # LCS <= the shorter length, so the similarity is at most shorter/longer; and a common subsequence takes
        # from each symbol group at most what the title with fewer holds: candidates that cannot pass are dropped
        # before the top `max_candidates` are chosen (`could_match` and `could_match_groups`, as in the join)
        lengths = np.fromiter(map(len, titles), dtype=np.float64, count=len(titles))
        a, b = lengths[q], self._lengths[p]
        possible = np.minimum(a, b) / np.maximum(a, b) >= self.config.min_similarity - LENGTH_SLACK
        q, p, proposing = q[possible], p[possible], proposing[possible]
        own = symbol_counts(titles)
        longer = np.maximum(lengths[q], self._lengths[p])
        possible = could_match_groups(grouped_symbol_counts(own)[q], self._group_counts[p], longer, self.config)
        q, p = self._top_candidates(q[possible], p[possible], proposing[possible], len(titles))
        q, p = self._could_match_symbols(q, p, own, lengths)
        similarities = cpdist(
            [titles[i] for i in q.tolist()],
            self.titles[p].tolist(),
            scorer=LCSseq.normalized_similarity,
            workers=1,
            dtype=np.float64,  # float32 would put 0.9 just below a 0.9 threshold
        )
        verified = similarities >= self.config.min_similarity
        q, p, similarities = q[verified], p[verified], similarities[verified]
        return self._choose(bib_ids, years, q, p, similarities, count)

    def _could_match_symbols(
        self, q: np.ndarray, p: np.ndarray, own: np.ndarray, lengths: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs whose LCS can reach `min_similarity`, by an exact bound on the references' `symbol_counts`
        (`own`): a common subsequence uses each symbol at most as often as the title with fewer of it. Cheaper
        than the LCS and finer than the groups' bound, so it runs first; it changes no resolution."""
        longer = np.maximum(lengths[q], self._lengths[p])
        common = np.minimum(own[q], self._symbol_counts[p]).sum(axis=1, dtype=np.int64)
        # counts stop at 255, so titles longer than that are always left to the LCS
        possible = (common >= (self.config.min_similarity - LENGTH_SLACK) * longer) | (longer > 255)
        return q[possible], p[possible]

    def _top_candidates(
        self, q: np.ndarray, p: np.ndarray, proposing: np.ndarray, n: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Keep at most `max_candidates` pairs per reference, most proposing bands first, then paper id
        (`rank_candidates`)."""
        crowded = np.bincount(q, minlength=n)[q] > self.config.max_candidates
        if not crowded.any():
            return q, p
        rows = np.flatnonzero(crowded)
        # one integer sort key: reference, then most proposing bands, then paper index
        n_papers, width = len(self), self.config.bands + 1
        key = (q[rows] * width + (self.config.bands - proposing[rows])) * n_papers + p[rows]
        ranked = rows[np.argsort(key)]
        first = np.searchsorted(q[ranked], q[ranked], side="left")
        kept = ranked[(np.arange(len(ranked)) - first) < self.config.max_candidates]
        keep = np.sort(np.concatenate((np.flatnonzero(~crowded), kept)))
        return q[keep], p[keep]

    def _choose(
        self,
        bib_ids: Sequence[str],
        years: Sequence[int | None],
        q: np.ndarray,
        p: np.ndarray,
        similarities: np.ndarray,
        count: CounterFn,
    ) -> list[Resolution]:
        """`choose_candidate` over the verified pairs (sorted by reference), vectorised for the common case
        of one best candidate."""
        resolutions: list[Resolution | None] = [None] * len(bib_ids)
        starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if len(q) else np.zeros(0, dtype=np.int64)
        if len(bib_ids) > len(starts):
            count("unresolved:no_title_match", len(bib_ids) - len(starts))
        if not len(starts):
            return [Resolution(b, None, "unresolved") for b in bib_ids]
        best = np.maximum.reduceat(similarities, starts)
        group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(q)]))
        at_best = similarities == best[group]
        ties = np.bincount(group[at_best], minlength=len(starts))
        single = np.flatnonzero(ties == 1)
        rows = np.flatnonzero(at_best)
        row_of_group = np.full(len(starts), -1)
        row_of_group[group[rows]] = rows
        chosen = row_of_group[single]
        for i, j, similarity in zip(q[chosen].tolist(), p[chosen].tolist(), similarities[chosen].tolist(), strict=True):
            resolutions[i] = Resolution(bib_ids[i], self.paper_ids[j], "title", similarity)
        if len(single):
            count("resolved_by:title", len(single))
        for g in np.flatnonzero(ties > 1).tolist():
            tied = rows[group[rows] == g]
            i = int(q[tied[0]])
            resolutions[i] = choose_candidate(
                bib_ids[i],
                years[i],
                [self.paper_ids[j] for j in p[tied]],
                [float(s) for s in similarities[tied]],
                [self.years[j] for j in p[tied]],
                self.config,
                count,
            )
        return [
            Resolution(b, None, "unresolved") if r is None else r for r, b in zip(resolutions, bib_ids, strict=True)
        ]


def count_identifier_kinds(keys: Sequence[str], count: CounterFn) -> None:
    """`bib_entries_with:<kind>` once for each kind of identifier among one entry's keys (kinds named as
    resolutions are: `arxiv_id`, `doi`, `s2_corpus_id`, `pmid`, ...), so that stats show how many entries
    carried a kind beside how many resolved through it."""
    for method in dict.fromkeys(resolution_method(k) for k in keys):
        count(f"bib_entries_with:{method}", 1)
