"""A work named by name ("LoRA", "Self-Refine", "Smoothed Energy Guidance (SEG)") to the database paper that bears
that name: the paper whose title's head, before a colon, is the name ("LoRA: Low-Rank Adaptation of Large Language
Models", "Self-Refine: Iterative Refinement with Self-Feedback").

Names and heads meet on a key of letters and digits, case folded ("U-ViT" = "uvit"); a head of at most four words
is a name. A key several papers share goes to the strictly oldest (the work a reviewer who writes "BERT"
means), else to none.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

MAX_HEAD_WORDS = 4
MIN_KEY, MAX_KEY = 3, 40
_HEAD = re.compile(r"^\s*([^:]{2,80}?)\s*:\s*\S")
_ACRONYM = re.compile(r"\s*\(([A-Za-z][A-Za-z0-9\-]{1,11})\)\s*$")


def name_key(name: str) -> str | None:
    """The key a name is looked up by: its letters and digits, case folded; None when too short or too long."""
    folded = unicodedata.normalize("NFKD", name).casefold()
    key = "".join(c for c in folded if c.isalnum() and c.isascii())
    return key if MIN_KEY <= len(key) <= MAX_KEY else None


def title_name(title: str | None) -> str | None:
    """The name a title gives its work: its head before a colon, when that is at most `MAX_HEAD_WORDS` words."""
    match = _HEAD.match(title or "")
    if match is None or len(match.group(1).split()) > MAX_HEAD_WORDS:
        return None
    return match.group(1)


def title_name_key(title: str | None) -> str | None:
    head = title_name(title)
    return name_key(head) if head else None


def mention_name_keys(name: str) -> list[str]:
    """The keys a reviewer's name is looked up by, best first: the whole name, then without a bracketed acronym and
    the acronym itself ("Smoothed Energy Guidance (SEG)" -> "smoothedenergyguidance", "seg")."""
    keys = [name_key(name)]
    acronym = _ACRONYM.search(name)
    if acronym:
        keys += [name_key(name[: acronym.start()]), name_key(acronym.group(1))]
    return [k for k in dict.fromkeys(keys) if k]


# A paper's database year may be its venue's, a year after the preprint a reviewer read.
PREPRINT_YEARS = 1


def choose_named(candidates: Iterable[tuple[str, int | None]], review_year: int | None = None) -> str | None:
    """The paper a name means among the (paper id, year) pairs bearing it: the only one, or the strictly oldest;
    None when that is not one paper. With `review_year`, papers dated more than `PREPRINT_YEARS` after it are left
    out first: a review cannot suggest a paper written after it, and in a database of millions a short name ("TIE")
    meets the heads of unrelated later papers."""
    latest = None if review_year is None else review_year + PREPRINT_YEARS
    papers = sorted(
        {c for c in candidates if latest is None or c[1] is None or c[1] <= latest},
        key=lambda c: (c[1] is None, c[1] or 0, c[0]),
    )
    if not papers:
        return None
    if len(papers) == 1:
        return papers[0][0]
    (first, year), (_, next_year) = papers[0], papers[1]
    return first if year is not None and (next_year is None or year < next_year) else None
