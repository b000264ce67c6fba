"""Compact, deterministic coders for the records that cross shuffles (`mapping.records`).

A `RecordCoder` writes a record as the tuple of its field values through FastPrimitivesCoder's deterministic
encoding (no pickle: equal records give equal bytes) and rebuilds the frozen dataclass without re-checking it.
Registered for `ParsedDocument`, `Paper`, `Context`, `DeadLetter` and `InputTally`. A CoGroupByKey falls back to
pickle whatever is registered, so joins carry records as bytes (`HEADERS`, `PAPERS`, `SealedDocument`,
`pack_contexts`). Why and what it saves: docs/design.md.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import zstandard  # a dependency of apache-beam
from apache_beam import coders

from mapping.records import BibEntry, Context, DeadLetter, InputTally, Paper, Paragraph, ParsedDocument

# A field's value as the encoded tuple holds it: as it is (str, int, float, bool, None and tuples of those), a
# date as its day number, a record as its tuple, a tuple of records as a tuple of their tuples.
VALUE, DATE, RECORD, RECORDS = "value", "date", "record", "records"


def field_plan(record_type: type) -> list[tuple[str, str, type | None]]:
    """(field name, how it is encoded, the nested record type) for each field of a frozen dataclass, in order,
    read from the field's type annotation."""
    if not (dataclasses.is_dataclass(record_type) and record_type.__dataclass_params__.frozen):
        raise TypeError(f"{record_type.__name__} is not a frozen dataclass")
    if hasattr(record_type, "__post_init__") or hasattr(record_type, "__slots__"):
        raise TypeError(
            f"{record_type.__name__}: a record rebuilt from its __dict__ can have no __post_init__ or slots"
        )
    hints = typing.get_type_hints(record_type)
    plan = []
    for field in dataclasses.fields(record_type):
        hint = hints[field.name]
        args = typing.get_args(hint)
        if hint is dt.date or (dt.date in args and set(args) <= {dt.date, type(None)}):
            plan.append((field.name, DATE, None))
        elif dataclasses.is_dataclass(hint):
            plan.append((field.name, RECORD, hint))
        elif (
            typing.get_origin(hint) is tuple
            and len(args) == 2
            and args[1] is Ellipsis
            and dataclasses.is_dataclass(args[0])
        ):
            plan.append((field.name, RECORDS, args[0]))
        else:
            plan.append((field.name, VALUE, None))
    return plan


def _day(value: dt.date | None) -> int | None:
    if value is None:
        return None
    if type(value) is not dt.date:  # a datetime is a date too, but would lose its time
        raise TypeError(f"expected a date, not {type(value).__name__}")
    return value.toordinal()


def _date(day: int | None) -> dt.date | None:
    return None if day is None else dt.date.fromordinal(day)


_CODECS: dict[type, tuple[Callable[[Any], tuple], Callable[[tuple], Any]]] = {}


def tuple_codec(record_type: type) -> tuple[Callable[[Any], tuple], Callable[[tuple], Any]]:
    """(to tuple, from tuple) for a record type, generated once from its field plan (as `dataclasses` generates
    `__init__`): one expression per field, no loop over fields at run time."""
    if record_type in _CODECS:
        return _CODECS[record_type]
    plan = field_plan(record_type)
    namespace: dict[str, Any] = {"_new": object.__new__, "_set": object.__setattr__, "_day": _day, "_date": _date}
    namespace["cls"] = record_type
    encoded, decoded = [], []
    for index, (name, how, nested) in enumerate(plan):
        if how in (RECORD, RECORDS):
            namespace[f"to_{name}"], namespace[f"from_{name}"] = tuple_codec(nested)
        value, item = f"o.{name}", f"t[{index}]"
        encoded.append(
            {
                VALUE: value,
                DATE: f"_day({value})",
                RECORD: f"to_{name}({value})",
                RECORDS: f"tuple(map(to_{name}, {value}))",
            }[how]
        )
        decoded.append(
            f"{name!r}: "
            + {
                VALUE: item,
                DATE: f"_date({item})",
                RECORD: f"from_{name}({item})",
                RECORDS: f"tuple(map(from_{name}, {item}))",
            }[how]
        )
    source = (
        f"def to_tuple(o):\n    return ({', '.join(encoded)},)\n"
        f"def from_tuple(t):\n    o = _new(cls)\n    _set(o, '__dict__', {{{', '.join(decoded)}}})\n    return o\n"
    )
    exec(compile(source, f"<citrec tuple codec for {record_type.__name__}>", "exec"), namespace)  # noqa: S102
    _CODECS[record_type] = namespace["to_tuple"], namespace["from_tuple"]
    return _CODECS[record_type]


_PRIMITIVES = coders.FastPrimitivesCoder().as_deterministic_coder("citrec records").get_impl()


class RecordCoder(coders.Coder):
    """A deterministic coder of one frozen dataclass record type (`record_type`, set by each subclass)."""

    record_type: ClassVar[type]

    def encode(self, value: Any) -> bytes:
        to_tuple, _ = tuple_codec(self.record_type)
        return _PRIMITIVES.encode(to_tuple(value))

    def decode(self, encoded: bytes) -> Any:
        _, from_tuple = tuple_codec(self.record_type)
        return from_tuple(_PRIMITIVES.decode(encoded))

    def is_deterministic(self) -> bool:
        return True

    def to_type_hint(self) -> type:
        return self.record_type


class DocumentCoder(RecordCoder):
    record_type = ParsedDocument


class PaperCoder(RecordCoder):
    record_type = Paper


class ContextCoder(RecordCoder):
    record_type = Context


class DeadLetterCoder(RecordCoder):
    record_type = DeadLetter


class InputTallyCoder(RecordCoder):
    record_type = InputTally


TALLY_TYPE = tuple[str, int]
"""The type of a `tally` output's elements (`pipelines.tallies.Tallies.emit`), for typed outputs."""

for _coder in (DocumentCoder, PaperCoder, ContextCoder, DeadLetterCoder, InputTallyCoder):
    coders.registry.register_coder(_coder.record_type, _coder)


class ZstdCoder(coders.Coder):
    """Another coder's bytes, compressed with Zstandard. At level 1 a parsed document's bytes shrink to 38% for
    0.2 ms to compress and 0.1 ms to decompress (zlib: 39% for 0.7 and 0.3 ms): on Dataflow a gigabyte shuffled
    costs more than the CPU seconds that save it (docs/scale.md). Deterministic when the inner coder is: one
    input, one level, one library version give one frame."""

    def __init__(self, inner: coders.Coder, level: int = 1) -> None:
        self.inner = inner
        self.level = level

    def encode(self, value: Any) -> bytes:
        return _zstd(self.level).compress(self.inner.encode(value))

    def decode(self, encoded: bytes) -> Any:
        return self.inner.decode(_zstd(0).decompress(encoded))

    def is_deterministic(self) -> bool:
        return self.inner.is_deterministic()

    def to_type_hint(self) -> Any:
        return self.inner.to_type_hint()


_ZSTD = threading.local()  # compression contexts are not shared between threads (Beam runs bundles in threads)


def _zstd(level: int):
    """This thread's compressor at `level`, or its decompressor for level 0."""
    contexts = _ZSTD.__dict__.setdefault("contexts", {})
    if level not in contexts:
        contexts[level] = zstandard.ZstdDecompressor() if level == 0 else zstandard.ZstdCompressor(level=level)
    return contexts[level]


DOCUMENTS = ZstdCoder(DocumentCoder())
"""What carries documents through joins as bytes: `DOCUMENTS.encode(document)` before, `DOCUMENTS.decode` after
(compressed: a document crosses a join in 29 kB instead of 80 kB pickled)."""
PAPERS = PaperCoder()
HEADERS = DocumentCoder()
"""What carries a document's header (a `ParsedDocument` with no paragraphs or bib entries: `SealedDocument.header`)
through the id joins as bytes."""
CONTEXTS = ContextCoder()


def pack_contexts(contexts: typing.Sequence[Context]) -> bytes:
    """Contexts as one Zstandard frame (level 1) of their tuples: how `pipelines.transforms.AssignSplits` carries
    a batch of contexts citing one paper through its join (ids, tokens and words repeat across a batch: on the
    benchmark's corpus, whose copies share no words, 30 kB a paper cross the join instead of 78 kB)."""
    to_tuple, _ = tuple_codec(Context)
    return _zstd(1).compress(_PRIMITIVES.encode(tuple(map(to_tuple, contexts))))


def unpack_contexts(packed: bytes) -> list[Context]:
    """`pack_contexts`'s contexts, in their order."""
    _, from_tuple = tuple_codec(Context)
    return list(map(from_tuple, _PRIMITIVES.decode(_zstd(0).decompress(packed))))


# ------------------------------------------------------------------------------------ sealed documents

BODY_FIELDS = ("paragraphs", "bib_entries")
"""The fields of a `ParsedDocument` that a `SealedDocument` keeps sealed: what only the matcher and the context
cutter read, and nearly all of a document's bytes."""


@dataclass(frozen=True)
class SealedDocument:
    """A parsed document as the id joins handle it (`CanonicalizeIds`, `MergeDatabase`): its `header` open (no
    paragraphs, no bib entries: what the joins read and change), its body Zstandard-compressed. `seal` compresses
    once after parsing, the header goes through the joins alone and meets its body in one join by source, and
    `unseal` opens it once, where references are resolved."""

    header: ParsedDocument
    body: bytes

    @property
    def paper_id(self) -> str:
        return self.header.paper_id

    @property
    def source(self) -> str:
        return self.header.source


def seal(document: ParsedDocument) -> SealedDocument:
    """`document` as a `SealedDocument` (its body compressed at Zstandard level 1, as `DOCUMENTS` compresses)."""
    to_paragraph, _ = tuple_codec(Paragraph)
    to_entry, _ = tuple_codec(BibEntry)
    body = (tuple(map(to_paragraph, document.paragraphs)), tuple(map(to_entry, document.bib_entries)))
    fields = dict(document.__dict__)
    fields.update(paragraphs=(), bib_entries=())
    header = object.__new__(ParsedDocument)
    object.__setattr__(header, "__dict__", fields)
    return SealedDocument(header, _zstd(1).compress(_PRIMITIVES.encode(body)))


def sealed(document: ParsedDocument | SealedDocument) -> SealedDocument:
    """`document` sealed, unless it is already."""
    return document if isinstance(document, SealedDocument) else seal(document)


def unseal(sealed: SealedDocument | ParsedDocument) -> ParsedDocument:
    """The whole document again: the header as it now is (renamed, described), with its paragraphs and bib
    entries. A `ParsedDocument` is returned as it is (a step that takes either)."""
    if isinstance(sealed, ParsedDocument):
        return sealed
    _, from_paragraph = tuple_codec(Paragraph)
    _, from_entry = tuple_codec(BibEntry)
    paragraphs, entries = _PRIMITIVES.decode(_zstd(0).decompress(sealed.body))
    fields = dict(sealed.header.__dict__)
    fields.update(paragraphs=tuple(map(from_paragraph, paragraphs)), bib_entries=tuple(map(from_entry, entries)))
    document = object.__new__(ParsedDocument)
    object.__setattr__(document, "__dict__", fields)
    return document


class SealedDocumentCoder(coders.Coder):
    """A `SealedDocument` as (its header's tuple, the sealed body's bytes): the body is copied, never decoded."""

    def encode(self, value: SealedDocument) -> bytes:
        to_tuple, _ = tuple_codec(ParsedDocument)
        return _PRIMITIVES.encode((to_tuple(value.header), value.body))

    def decode(self, encoded: bytes) -> SealedDocument:
        _, from_tuple = tuple_codec(ParsedDocument)
        header, body = _PRIMITIVES.decode(encoded)
        return SealedDocument(from_tuple(header), body)

    def is_deterministic(self) -> bool:
        return True

    def to_type_hint(self) -> type:
        return SealedDocument


coders.registry.register_coder(SealedDocument, SealedDocumentCoder)
SEALED = SealedDocumentCoder()
"""What carries sealed documents through the id joins as bytes (a CoGroupByKey would pickle them)."""
