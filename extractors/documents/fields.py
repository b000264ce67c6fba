"""Typed reads of fields in decoded JSON records: the value the caller expects, a coercion where the
reading is unambiguous, or `DocumentError("wrong_type:<field path>", "<field path>: expected text, got list")`.

A field path is the dotted name without list indices (`body_text.section`), so one counter counts one kind of
breakage; every reader takes null as absent. `decode_json` counts each repeated key (the last value wins, as in
`json.loads`). What each reader accepts: docs/design.md.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from extractors.documents.tei import DocumentError
from mapping.records import CounterFn, no_count

_SURROGATE = re.compile("[\ud800-\udfff]")
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d{1,18}\s*", re.ASCII)
_AUTHOR_SEPARATORS = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
_PARENTHESES = re.compile(r"\([^()]*\)")
_WS = re.compile(r"\s+")
DUPLICATE_KEY_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,39}")
"""A top-level key counted by its name when repeated (every layout's field names are such): others are `(other)`."""


def duplicate_key_counter(key: str, top_level: bool) -> str:
    """The counter of a repeated key: its name for a top-level field name, else one of two aggregates."""
    if not top_level:
        return "json_duplicate_key:(nested)"
    return f"json_duplicate_key:{key}" if DUPLICATE_KEY_NAME.fullmatch(key) else "json_duplicate_key:(other)"


def _repeated(pairs: list[tuple[str, Any]]) -> list[str]:
    seen: set[str] = set()
    repeated = []
    for key, _ in pairs:
        if key in seen:
            repeated.append(key)
        seen.add(key)
    return repeated


_REPEATS = threading.local()
"""Per thread, the objects with repeated keys the decoding under way has built, and which keys they repeat."""


def _object_from(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    built = dict(pairs)
    if len(built) != len(pairs):
        _REPEATS.found.append((built, _repeated(pairs)))
    return built


_DECODER = json.JSONDecoder(object_pairs_hook=_object_from)
"""One decoder for every call, as `json.loads` keeps one: building one per call made a metadata line's decoding
1.3x `json.loads`'s instead of 1.1x."""


def decode_json(text: str, count: CounterFn = no_count) -> Any:
    """`json.loads(text)`'s value (malformed text raises `json.JSONDecodeError` as there), with every repeated
    key counted (`duplicate_key_counter`); the last value of a repeated key is the one kept. Objects are built
    from their pairs and only their lengths compared, so a record without repeats costs one `dict` call per
    object."""
    outer = getattr(_REPEATS, "found", None)
    _REPEATS.found = found = []
    try:
        value = _DECODER.decode(text)
    finally:
        _REPEATS.found = outer
    for built, keys in found:
        for key in keys:
            count(duplicate_key_counter(key, built is value), 1)
    return value


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type, for details ("expected text, got list")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "list"
    return type(value).__name__


def wrong_type(path: str, expected: str, value: Any) -> DocumentError:
    """The error a reader raises: the reason names the field, the detail what was expected and found."""
    return DocumentError(f"wrong_type:{path}", f"{path}: expected {expected}, got {json_type(value)}")


def _containing(path: str, expected: str, item: Any) -> DocumentError:
    return DocumentError(f"wrong_type:{path}", f"{path}: expected {expected}, got list containing {json_type(item)}")


def _encodable(text: str) -> str:
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)


def _number_text(value: int | float) -> str | None:
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return None
    if value.is_integer():
        return str(int(value))
    return repr(value)


def as_text(value: Any, path: str, *, numbers: bool = True) -> str | None:
    """Text, or a number's decimal text; None for null and NaN."""
    if value is None:
        return None
    if isinstance(value, str):
        return _encodable(value)
    if numbers and isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, float) and math.isinf(value):
            raise wrong_type(path, "text", value)
        return _number_text(value)
    raise wrong_type(path, "text", value)


def as_identifier(value: Any, path: str) -> str | None:
    """An identifier's text: text, or an integer's digits."""
    if value is None:
        return None
    if isinstance(value, str):
        return _encodable(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise wrong_type(path, "identifier text", value)


def as_int(value: Any, path: str) -> int | None:
    """An integer, an integral float, or integer text."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value):
        return int(value)
    raise wrong_type(path, "integer", value)


def not_finite(value: Any) -> bool:
    """Whether a decoded value is NaN or an infinity: a number no field can mean, to be dropped and counted."""
    return isinstance(value, float) and not math.isfinite(value)


def as_year(value: Any, path: str, count: CounterFn = no_count) -> int | None:
    """A publication year in 1000..2999, or None when there is none; NaN and the infinities are dropped and
    counted (`field_dropped:<path>_not_finite`)."""
    if value is None or value == "":
        return None
    if not_finite(value):
        count(f"field_dropped:{path}_not_finite", 1)
        return None
    if isinstance(value, str):
        head = value.strip()[:4]
        year = int(head) if len(head) == 4 and head.isascii() and head.isdigit() else None
    else:
        year = as_int(value, path)
    return year if year is not None and 1000 <= year <= 2999 else None


def as_mapping(value: Any, path: str) -> Mapping[str, Any]:
    """An object (null is an empty one)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return value
    raise wrong_type(path, "object", value)


def as_mappings(value: Any, path: str) -> list[Mapping[str, Any]]:
    """A list of objects (null is an empty list)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise wrong_type(path, "list of objects", value)
    for item in value:
        if not isinstance(item, Mapping):
            raise _containing(path, "list of objects", item)
    return value


def as_texts(value: Any, path: str, split: Callable[[str], Iterable[str]] = str.split) -> tuple[str, ...]:
    """A list of text, or one text cut into several by `split`; empty items are dropped."""
    if value is None:
        return ()
    if isinstance(value, str):
        return tuple(t for t in (part.strip() for part in split(_encodable(value))) if t)
    if not isinstance(value, list):
        raise wrong_type(path, "list of text", value)
    texts = []
    for item in value:
        if isinstance(item, list | Mapping):
            raise _containing(path, "list of text", item)
        text = as_text(item, path)
        if text and text.strip():
            texts.append(text.strip())
    return tuple(texts)


def split_authors(authors: str) -> tuple[str, ...]:
    """arXiv's one-string author list ("A. Smith, B. Lee and C. Wu (MIT)") into names."""
    text = _WS.sub(" ", _PARENTHESES.sub("", authors or "")).strip()
    return tuple(name.strip() for name in _AUTHOR_SEPARATORS.split(text) if name.strip())


def _name_of(author: Mapping[str, Any], path: str) -> str:
    middle = author.get("middle")
    middles = [middle] if isinstance(middle, str) else list(as_texts(middle, f"{path}.middle"))
    parts = [as_text(author.get("first"), f"{path}.first"), *middles, as_text(author.get("last"), f"{path}.last")]
    return " ".join(p.strip() for p in parts if p and p.strip())


def as_author_names(value: Any, path: str) -> tuple[str, ...]:
    """Author names from one arXiv-style string, or a list of name strings and/or name objects."""
    if value is None:
        return ()
    if isinstance(value, str):
        return split_authors(_encodable(value))
    if not isinstance(value, list):
        raise wrong_type(path, "list of names", value)
    names = []
    for author in value:
        if author is None:
            continue
        if isinstance(author, str):
            name = _encodable(author).strip()
        elif isinstance(author, Mapping):
            name = _name_of(author, path)
        else:
            raise _containing(path, "list of names", author)
        if name:
            names.append(name)
    return tuple(names)
