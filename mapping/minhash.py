"""MinHash signatures and LSH band keys for many titles at once, in numpy.

The signatures equal `datasketch.MinHash`'s for the same shingles and seed (its permutation parameters are
used as they are; a test compares the arrays); only the loop differs: shingles of titles over 37 symbols are
integers whose hashes come from a table computed once, and whole batches are permuted at a time. How the
hashes and band keys are made: docs/design.md.
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
    lengths = np.fromiter(map(len, titles), dtype=np.int64, count=len(titles))
    counts = np.maximum(lengths - size + 1, 0)
    starts = np.zeros(len(titles) + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    code_type = np.int32 if len(ALPHABET) ** size < 2**31 else np.int64
    if not starts[-1]:
        return np.zeros(0, dtype=code_type), starts
    # every title followed by a separator, in one buffer: the k-grams at every position at once, and a
    # title's own k-grams are those with no separator in them
    data = "\n".join(titles).encode("ascii", errors="replace") + b"\n"
    symbols = _SYMBOL[np.frombuffer(data, dtype=np.uint8)]
    outside = symbols == 255
    if np.count_nonzero(outside) != len(titles):  # anything but the separators
        raise ValueError("titles must be normalised to [0-9a-z ] before shingling (see normalize_title)")
    positions = len(symbols) - size + 1
    codes = symbols[:positions].astype(code_type)
    inside = ~outside[:positions]
    for offset in range(1, size):
        codes *= len(ALPHABET)
        codes += symbols[offset : offset + positions]
        inside &= ~outside[offset : offset + positions]
    return codes[inside], starts


_TITLES_PER_CHUNK = 1 << 14
"""Titles shingled (or counted) at once: bounds the working arrays (some 4 MB of shingle codes)."""


def symbol_counts(titles: Sequence[str]) -> np.ndarray:
    """A `(len(titles), 37)` uint8 array: how often each symbol of `ALPHABET` occurs in each normalised
    title, at most 255 (exact for titles of up to 255 characters)."""
    counts = np.empty((len(titles), len(ALPHABET)), dtype=np.uint8)
    for first in range(0, len(titles), _TITLES_PER_CHUNK):
        chunk = titles[first : first + _TITLES_PER_CHUNK]
        lengths = np.fromiter(map(len, chunk), dtype=np.int64, count=len(chunk))
        symbols = _SYMBOL[np.frombuffer("".join(chunk).encode("ascii", errors="replace"), dtype=np.uint8)]
        if (symbols == 255).any():
            raise ValueError("titles must be normalised to [0-9a-z ] before counting (see normalize_title)")
        cells = np.repeat(np.arange(len(chunk), dtype=np.int64) * len(ALPHABET), lengths) + symbols
        tally = np.bincount(cells, minlength=len(chunk) * len(ALPHABET))
        np.minimum(tally, 255, out=tally)
        counts[first : first + len(chunk)] = tally.reshape(len(chunk), len(ALPHABET))
    return counts


SYMBOL_GROUPS = (" ", "e", "i", "a", "n", "t", "o", "r", "s", "cx198", "lw", "dyq", "mvzj26", "gbk354", "uh07", "pf")
"""`ALPHABET` in 16 groups of about equal frequency in real titles (ACM-CR, arXiv and S2ORC metadata): a title's
counts per group fit in 8 bytes (`packed_group_counts`), small enough to travel with every LSH band key of the
title join, and still bound the LCS of two titles (`mapping.matcher.could_match_groups`)."""
GROUP_FULL = 15
"""A group count of 15 means "15 or more" (4 bits a group)."""

_GROUP_OF = np.zeros((len(ALPHABET), len(SYMBOL_GROUPS)), dtype=np.int64)
for _group, _symbols in enumerate(SYMBOL_GROUPS):
    _GROUP_OF[[ALPHABET.index(s) for s in _symbols], _group] = 1


def group_counts(titles: Sequence[str]) -> np.ndarray:
    """A `(len(titles), 16)` uint8 array: how many symbols of each of `SYMBOL_GROUPS` a normalised title has, at
    most `GROUP_FULL` (which stands for that many or more)."""
    return grouped_symbol_counts(symbol_counts(titles))


def grouped_symbol_counts(counts: np.ndarray) -> np.ndarray:
    """`group_counts` from `symbol_counts` (a symbol counted 255, its most, fills its group)."""
    return np.minimum(counts.astype(np.int64) @ _GROUP_OF, GROUP_FULL).astype(np.uint8)


def packed_group_counts(titles: Sequence[str]) -> list[bytes]:
    """Each title's `group_counts` as 8 bytes, two groups a byte (the even-numbered group in the high half)."""
    grouped = group_counts(titles)
    flat = ((grouped[:, 0::2] << 4) | grouped[:, 1::2]).tobytes()
    width = len(SYMBOL_GROUPS) // 2
    return [flat[i : i + width] for i in range(0, len(flat), width)]


def minhash_signatures(
    titles: Sequence[str], num_perm: int = 128, seed: int = 1, shingle_size: int = 3, batch_rows: int = 1 << 13
) -> np.ndarray:
    """A `(len(titles), num_perm)` uint32 array: row i equals
    `datasketch.MinHash(num_perm, seed).update_batch(shingles of titles[i])` (all 0xFFFFFFFF for '').

    The permuted values are computed for blocks of whole titles with at most about `batch_rows` shingles
    (`batch_rows * num_perm * 4` bytes, 4 MB by default, so that the block stays in cache between the
    permutation and the minimum; larger blocks are slower, smaller ones pay numpy's per-call cost)."""
    a, b = permutations(num_perm, seed)
    signatures = np.empty((len(titles), num_perm), dtype=np.uint32)
    block = np.empty((num_perm, batch_rows), dtype=np.uint32)
    for first in range(0, len(titles), _TITLES_PER_CHUNK):
        chunk = titles[first : first + _TITLES_PER_CHUNK]
        codes, starts = shingle_codes(chunk, shingle_size)
        out = signatures[first : first + len(chunk)]
        _sign_blocks(_premixed(codes, shingle_size), starts, out, a, b, block)
        for i in np.flatnonzero(starts[1:] == starts[:-1]).tolist():
            if chunk[i]:  # shorter than a shingle: the whole title is the one shingle, as in datasketch
                out[i] = fmix32(np.array([sha1_hash32(chunk[i].encode())], dtype=np.uint32)) * a + b
            else:
                out[i] = _EMPTY
    return signatures


def _sign_blocks(
    hashed: np.ndarray, starts: np.ndarray, out: np.ndarray, a: np.ndarray, b: np.ndarray, block: np.ndarray
) -> None:
    """Rows of `out` for the titles with shingles: the minimum over each title's `a * hashed + b`.
    Permutation-major, so that the per-title minimum runs over contiguous memory."""
    first, n = 0, len(starts) - 1
    while first < n:
        last = int(np.searchsorted(starts, starts[first] + block.shape[1], side="right")) - 1
        last = min(max(last, first + 1), n)
        lo, hi = int(starts[first]), int(starts[last])
        if hi > lo:
            # one title longer than a block gets a block of its own
            permuted = block[:, : hi - lo] if hi - lo <= block.shape[1] else np.empty((len(a), hi - lo), np.uint32)
            np.multiply(a[:, None], hashed[None, lo:hi], out=permuted)
            np.add(permuted, b[:, None], out=permuted)
            offsets = starts[first:last] - lo
            nonempty = starts[first + 1 : last + 1] > starts[first:last]
            if nonempty.all():
                out[first:last] = np.minimum.reduceat(permuted, offsets, axis=1).T
            else:
                rows = np.flatnonzero(nonempty)
                out[first + rows] = np.minimum.reduceat(permuted, offsets[rows], axis=1).T
        first = last


@dataclass(frozen=True)
class Banding:
    """How a signature is cut for LSH: `bands` bands of `rows` values each (`bands * rows <= num_perm`)."""

    bands: int
    rows: int


def band_keys(signatures: np.ndarray, banding: Banding) -> np.ndarray:
    """A `(n, bands)` uint64 array: band j's key of each signature, equal iff the band's values are equal
    (up to 64-bit hash collisions). Keys of different bands are mixed with different seeds."""
    return np.ascontiguousarray(band_keys_by_band(signatures, banding).T)


_TITLES_PER_FOLD = 1 << 12
"""Signatures folded into band keys at once (2 MB of them at 128 permutations, so they stay in cache)."""


def band_keys_by_band(signatures: np.ndarray, banding: Banding) -> np.ndarray:
    """`band_keys` laid out band by band, `(bands, n)`: each band's keys contiguous, for sorting."""
    n, num_perm = signatures.shape
    if banding.bands * banding.rows > num_perm:
        raise ValueError(f"{banding.bands} bands x {banding.rows} rows need more than {num_perm} permutations")
    keys = np.empty((banding.bands, n), dtype=np.uint64)
    seeds = _GOLDEN * np.arange(1, banding.bands + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for first in range(0, n, _TITLES_PER_FOLD):
            part = signatures[first : first + _TITLES_PER_FOLD, : banding.bands * banding.rows]
            values = part.reshape(len(part), banding.bands, banding.rows)
            h = np.empty((len(part), banding.bands), dtype=np.uint64)
            h[:] = seeds
            shifted = np.empty_like(h)
            for row in range(banding.rows):
                h ^= values[:, :, row]
                h *= _MIX1
                h ^= np.right_shift(h, np.uint64(31), out=shifted)
            h ^= np.right_shift(h, np.uint64(30), out=shifted)
            h *= _MIX2
            h ^= np.right_shift(h, np.uint64(31), out=shifted)
            keys[:, first : first + len(part)] = h.T
    return keys
