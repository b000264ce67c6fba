"""Bytes out of input files: decompression by suffix, size caps, JSON Lines split into records.

No Beam here: the pipelines open the raw bytes through Beam's filesystems and hand the file object over, so the
same code reads local files, `gs://` objects and test buffers. Decompression streams, so nothing expands past
the cap in memory: a document over it is `TooLarge`, a JSONL line over it a `Line` with `data=None`. A byte range
`[start, end)` of an uncompressed file holds the lines whose first byte falls in it (docs/design.md).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

CHUNK_BYTES = 1 << 20
COMPRESSIONS = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bzip2", ".zst": "zstd", ".xz": "xz", ".lzma": "xz"}


def read_errors() -> tuple[type[BaseException], ...]:
    """What a broken compressed or unreadable file raises while it is read (a truncated .gz, a corrupt .bz2,
    .xz or .zst stream, an I/O error)."""
    import zstandard

    return (OSError, EOFError, lzma.LZMAError, zstandard.ZstdError)


class TooLarge(ValueError):
    """A document above the size cap; `size` is how many bytes were seen before reading stopped."""

    def __init__(self, size: int, cap: int) -> None:
        super().__init__(f"more than {cap:,} bytes (read {size:,} before stopping)")
        self.size = size
        self.cap = cap


def compression_of(path: str) -> str | None:
    """The compression a file's suffix names (`.gz`, `.bz2`, `.zst`, `.xz`/`.lzma`), or None."""
    lower = path.lower()
    for suffix, name in COMPRESSIONS.items():
        if lower.endswith(suffix):
            return name
    return None


def decompressed(raw: BinaryIO, compression: str | None) -> BinaryIO:
    """A file object yielding the decompressed bytes of `raw`, read lazily and bounded per `read(n)`."""
    if compression is None:
        return raw
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bzip2":
        return bz2.BZ2File(raw, mode="rb")
    if compression == "xz":
        return lzma.LZMAFile(raw, mode="rb")
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    raise ValueError(f"unknown compression {compression!r}")


def read_capped(handle: BinaryIO, cap: int) -> bytes:
    """All of `handle`, or `TooLarge` as soon as more than `cap` bytes have come out of it."""
    parts: list[bytes] = []
    size = 0
    while True:
        chunk = handle.read(min(CHUNK_BYTES, cap + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > cap:
            raise TooLarge(size, cap)


@dataclass(frozen=True)
class Line:
    """One non-blank line: its 1-based number within what was read, the byte offset of its first byte
    in the (decompressed) file, its size without the newline, and its bytes (None when over the cap)."""

    number: int
    offset: int
    size: int
    data: bytes | None


def iter_lines(
    handle: BinaryIO,
    cap: int,
    *,
    start: int = 0,
    end: int | None = None,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Line]:
    """The non-blank lines of `handle`, which must be positioned at `start` (or `start - 1`, see below).

    With `start > 0` the handle must be positioned at `start - 1`: the bytes up to and including the first
    newline found from there belong to the previous range's last line and are skipped. Lines whose first
    byte lies at or after `end` belong to the next range and are not read. A line over `cap` bytes is
    skipped in pieces and yielded with `data=None`.
    """
    position = start - 1 if start > 0 else 0  # absolute offset of the next byte read from `handle`
    skipping_prefix = start > 0
    parts: list[bytes] = []
    line_start = start
    line_size = 0
    oversized = False
    number = 0
    while True:
        chunk = handle.read(chunk_bytes)
        if not chunk:
            break
        cursor = 0
        if skipping_prefix:
            newline = chunk.find(b"\n")
            if newline < 0:
                position += len(chunk)
                continue
            cursor = newline + 1
            skipping_prefix = False
            line_start = position + cursor
        while cursor < len(chunk):
            if end is not None and line_size == 0 and not parts and line_start >= end:
                return
            newline = chunk.find(b"\n", cursor)
            piece_end = len(chunk) if newline < 0 else newline
            piece = chunk[cursor:piece_end]
            line_size += len(piece)
            if not oversized:
                if line_size > cap:
                    oversized = True
                    parts = []
                else:
                    parts.append(piece)
            if newline < 0:
                cursor = len(chunk)
                break
            number += 1
            line = _finished(number, line_start, line_size, parts, oversized)
            if line is not None:
                yield line
            cursor = newline + 1
            line_start = position + cursor
            parts, line_size, oversized = [], 0, False
        position += len(chunk)
    if skipping_prefix:
        return
    if line_size or parts:
        if end is None or line_start < end:
            number += 1
            line = _finished(number, line_start, line_size, parts, oversized)
            if line is not None:
                yield line


def _finished(number: int, offset: int, size: int, parts: list[bytes], oversized: bool) -> Line | None:
    if oversized:
        return Line(number, offset, size, None)
    data = b"".join(parts)
    if data.endswith(b"\r"):
        data = data[:-1]
    if not data.strip():
        return None
    return Line(number, offset, size, data)


def byte_ranges(size: int, range_bytes: int) -> list[tuple[int, int]]:
    """`[start, end)` ranges of at most `range_bytes` covering `size` bytes (one range for a small file)."""
    if size <= range_bytes:
        return [(0, size)]
    return [(start, min(start + range_bytes, size)) for start in range(0, size, range_bytes)]
