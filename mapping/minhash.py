"""MinHash signatures and LSH band keys for many titles at once, in numpy.

The signatures are datasketch's (`datasketch.MinHash`, scheme "affine32", its default since 2.0): each
shingle is hashed with `sha1_hash32`, pre-mixed with the MurmurHash3 finalizer, and permuted by
`a * h + b mod 2**32` with the `(a, b)` that datasketch draws from `numpy.random.RandomState(seed)`. The
permutation parameters are taken from datasketch itself, so for the same shingles and seed the signature
is the same array (a test checks it); only the loop is different: titles are normalised to the 37
symbols `[0-9a-z ]`, so a character `k`-gram is an integer below `37**k` and its SHA-1 is looked up in a
table computed once, and the permutation and minimum run over whole batches of titles.

Band keys: the signature is cut into `bands` bands of `rows` values; each band is folded into one 64-bit
key (a multiply-xorshift mix seeded by the band number). Two titles share a key in some band with
probability `1 - (1 - J**rows)**bands` for Jaccard similarity `J`, as in `datasketch.MinHashLSH`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from datasketch import MinHash

ALPHABET = " 0123456789abcdefghijklmnopqrstuvwxyz"
"""The symbols `mapping.titles.normalize_title` can produce; anything else has no shingle code."""

_SYMBOL = np.full(256, 255, dtype=np.uint8)
_SYMBOL[np.frombuffer(ALPHABET.encode(), dtype=np.uint8)] = np.arange(len(ALPHABET), dtype=np.uint8)
_FULL_TABLE_LIMIT = 2_000_000
_EMPTY = np.uint32(0xFFFFFFFF)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def sha1_hash32(data: bytes) -> int:
    """datasketch's default 32-bit hash: the first four bytes of SHA-1, little-endian."""
    return int.from_bytes(hashlib.sha1(data).digest()[:4], "little")


def fmix32(values: np.ndarray) -> np.ndarray:
    """The MurmurHash3 32-bit finalizer (a bijection), element-wise on a uint32 array."""
    h = values ^ (values >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


@lru_cache(maxsize=8)
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's `(a, b)` permutation parameters for `num_perm` and `seed`, as uint32 arrays."""
    a, b = MinHash(num_perm=num_perm, seed=seed).permutations
    return np.asarray(a, dtype=np.uint32), np.asarray(b, dtype=np.uint32)


def _decode(code: int, size: int) -> bytes:
    symbols = []
    for _ in range(size):
        code, rest = divmod(code, len(ALPHABET))
        symbols.append(ALPHABET[rest])
    return "".join(reversed(symbols)).encode()


@lru_cache(maxsize=4)
def _premixed_table(size: int) -> np.ndarray:
    """fmix32(sha1_hash32(shingle)) for every `size`-gram over the alphabet, indexed by its code."""
    count = len(ALPHABET) ** size
    values = np.fromiter((sha1_hash32(_decode(code, size)) for code in range(count)), dtype=np.uint32, count=count)
    return fmix32(values)


def _premixed(codes: np.ndarray, size: int) -> np.ndarray:
    if len(ALPHABET) ** size <= _FULL_TABLE_LIMIT:
        return _premixed_table(size)[codes]
    unique, inverse = np.unique(codes, return_inverse=True)
    hashed = np.fromiter((sha1_hash32(_decode(int(c), size)) for c in unique), dtype=np.uint32, count=len(unique))
    return fmix32(hashed)[inverse]


def shingle_codes(titles: Sequence[str], size: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of every character `size`-gram of every title, and each title's start offset.

    Titles must be normalised (`normalize_title`); a title shorter than `size` gets no codes here (its
    one shingle, the whole title, is hashed separately). Returns `(codes, starts)` with
    `codes[starts[i]:starts[i + 1]]` the i-th title's codes, duplicates included.
    """
    lengths = np.fromiter((len(t) for t in titles), dtype=np.int64, count=len(titles))
    counts = np.maximum(lengths - size + 1, 0)
    starts = np.zeros(len(titles) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    if not starts[-1]:
        return np.zeros(0, dtype=np.int64), starts
    data = "".join(titles).encode("ascii", errors="replace")
    symbols = _SYMBOL[np.frombuffer(data, dtype=np.uint8)]
    if (symbols == 255).any():
        raise ValueError("titles must be normalised to [0-9a-z ] before shingling (see normalize_title)")
    title_starts = np.zeros(len(titles), dtype=np.int64)
    np.cumsum(lengths[:-1], out=title_starts[1:])
    # position of every shingle in `symbols`: its title's start plus its index inside the title
    owner = np.repeat(np.arange(len(titles)), counts)
    positions = title_starts[owner] + (np.arange(starts[-1]) - starts[owner])
    codes = np.zeros(starts[-1], dtype=np.int64)
    for offset in range(size):
        codes = codes * len(ALPHABET) + symbols[positions + offset]
    return codes, starts


def minhash_signatures(
    titles: Sequence[str], num_perm: int = 128, seed: int = 1, shingle_size: int = 3, batch_rows: int = 1 << 15
) -> np.ndarray:
    """A `(len(titles), num_perm)` uint32 array: row i equals
    `datasketch.MinHash(num_perm, seed).update_batch(shingles of titles[i])` (all 0xFFFFFFFF for '').

    Titles are processed in batches of whole titles with at most about `batch_rows` shingles, so the
    working memory stays near `batch_rows * num_perm * 4` bytes however many titles are given."""
    a, b = permutations(num_perm, seed)
    signatures = np.full((len(titles), num_perm), _EMPTY, dtype=np.uint32)
    lengths = np.fromiter((len(t) for t in titles), dtype=np.int64, count=len(titles))
    per_title = np.maximum(lengths - shingle_size + 1, 1)
    bounds = np.concatenate(([0], np.cumsum(per_title)))
    block = np.empty((num_perm, batch_rows), dtype=np.uint32)
    first = 0
    while first < len(titles):
        last = int(np.searchsorted(bounds, bounds[first] + batch_rows, side="right")) - 1
        last = min(max(last, first + 1), len(titles))
        _sign_batch(titles[first:last], signatures[first:last], a, b, shingle_size, block)
        first = last
    return signatures


def _sign_batch(
    titles: Sequence[str], out: np.ndarray, a: np.ndarray, b: np.ndarray, size: int, block: np.ndarray
) -> None:
    codes, starts = shingle_codes(titles, size)
    counts = np.diff(starts)
    if len(codes):
        if len(codes) > block.shape[1]:  # one title longer than a batch
            block = np.empty((len(a), len(codes)), dtype=np.uint32)
        # permutation-major, so that the per-title minimum runs over contiguous memory
        permuted = block[:, : len(codes)]
        np.multiply(a[:, None], _premixed(codes, size)[None, :], out=permuted)
        np.add(permuted, b[:, None], out=permuted)
        nonempty = np.flatnonzero(counts)
        out[nonempty] = np.minimum.reduceat(permuted, starts[nonempty], axis=1).T
    for i in np.flatnonzero(counts == 0):
        if titles[i]:  # shorter than a shingle: the whole title is the one shingle, as in datasketch
            out[i] = fmix32(np.array([sha1_hash32(titles[i].encode())], dtype=np.uint32)) * a + b


@dataclass(frozen=True)
class Banding:
    """How a signature is cut for LSH: `bands` bands of `rows` values each (`bands * rows <= num_perm`)."""

    bands: int
    rows: int


def band_keys(signatures: np.ndarray, banding: Banding) -> np.ndarray:
    """A `(n, bands)` uint64 array: band j's key of each signature, equal iff the band's values are equal
    (up to 64-bit hash collisions). Keys of different bands are mixed with different seeds."""
    n, num_perm = signatures.shape
    if banding.bands * banding.rows > num_perm:
        raise ValueError(f"{banding.bands} bands x {banding.rows} rows need more than {num_perm} permutations")
    keys = np.empty((n, banding.bands), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for band in range(banding.bands):
            # one band's values widened at a time: a whole uint64 copy would double the signatures' memory
            values = signatures[:, band * banding.rows : (band + 1) * banding.rows].astype(np.uint64)
            h = np.full(n, _GOLDEN * np.uint64(band + 1), dtype=np.uint64)
            for row in range(banding.rows):
                h = (h ^ values[:, row]) * _MIX1
                h ^= h >> np.uint64(31)
            h = (h ^ (h >> np.uint64(30))) * _MIX2
            keys[:, band] = h ^ (h >> np.uint64(31))
    return keys
