"""Title normalisation, one function for database titles and reference titles alike.

Case, accents, LaTeX remnants (`{\\"o}`, `\\emph{...}`), dashes, quotes and tails such as "arXiv preprint
arXiv:1810.04805" are folded away so that two spellings of one title compare equal or nearly so. Invisible
format characters (Unicode Cf: a PDF's soft hyphen, zero-width spaces) go first, so "Glo\\u00adVe" is "GloVe".
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_LATEX_ACCENT = re.compile(r"\\[`'^\"~=.uvHtcdbrk]\s*\{?\s*([A-Za-z])\s*\}?")
_LATEX_COMMAND_WITH_ARG = re.compile(
    r"\\(?:emph|textbf|textit|textrm|textsc|mathrm|mathbf|mathcal|mbox|text)\s*\{([^{}]*)\}"
)
_LATEX_COMMAND = re.compile(r"\\([A-Za-z]+)")
_TAILS = re.compile(
    r"(?:\s+(?:arxiv\s+preprint\b|arxiv\s*:\s*\S|corr\s+abs/)"
    r"|[.,;:]\s*(?:arxiv\b|corr\b|in\s+proceedings\b|proceedings\s+of\b|in:\s))"
    r".*$",
    re.IGNORECASE | re.DOTALL,
)
_NON_WORD = re.compile(r"[^0-9a-z]+")
_VENUE = re.compile(
    r"(?:the )?(?:international )?journal of(?: the)?(?: [a-z]+){1,5}"
    r"|(?:ieee |acm )?transactions on(?: [a-z]+){1,6}"
    r"|(?:in )?proceedings of(?: the)?(?: [a-z0-9]+){0,3}"
    r" (?:conference|workshop|symposium|meeting|congress|academy|society|ieee|acm|aaai|association)(?: [a-z0-9]+){0,12}"
    r"|physical review(?: letters| [a-ex])?"
    r"|lecture notes in(?: [a-z]+){1,4}"
    r"|advances in neural information processing systems(?: [0-9]+)?"
    r"|nature(?: communications| physics| methods| machine intelligence)?|science(?: advances)?|cell"
    r"|plos one|ieee access|scientific reports|the lancet|arxiv|corr"
)


_LATEX_SIGNS = frozenset("\\${}")
"""Characters that send an ASCII title through `_unlatex_unaccent`."""
_ASCII_WORDS = bytes(c if chr(c) in "0123456789abcdefghijklmnopqrstuvwxyz" else 32 for c in range(256))
"""A `bytes.translate` table for lower-cased ASCII: letters and digits kept, everything else a space."""


_FORMAT_PLANES = (range(0x20000), range(0xE0000, 0xE1000))
"""Where Unicode puts format characters: the Basic and Supplementary Multilingual Planes and plane 14 (tags);
the other planes hold ideographs, private use and nothing (a test checks the whole range)."""


@lru_cache(maxsize=1)
def _format_characters() -> re.Pattern[str]:
    """Every character of Unicode category Cf (format: U+00AD soft hyphen, U+200B-U+200D zero-width space,
    non-joiner and joiner, U+2060 word joiner, U+FEFF byte-order mark, bidirectional marks, ...) in this
    Python's Unicode database, as one character class of ranges; built once, when first needed."""
    codes = [c for plane in _FORMAT_PLANES for c in plane if unicodedata.category(chr(c)) == "Cf"]
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return re.compile("[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs) + "]")


def without_format_characters(text: str) -> str:
    """`text` without its invisible format characters (category Cf), which split or hide words but are never
    part of one."""
    return text if text.isascii() else _format_characters().sub("", text)


def _unlatex_unaccent(title: str) -> str:
    """LaTeX accents and commands, then Unicode accents, folded to plain letters (the slow part, skipped
    for plain ASCII titles; each step runs only when its input can change)."""
    text = title
    if "\\" in text:  # every LaTeX pattern starts with a backslash
        text = _LATEX_ACCENT.sub(r"\1", text)
        for _ in range(3):
            text = _LATEX_COMMAND_WITH_ARG.sub(r"\1", text)
        text = _LATEX_COMMAND.sub(r"\1", text)
    text = text.replace("$", " ").replace("{", "").replace("}", "")
    if not text.isascii():
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
        text = text.replace("ß", "ss").replace("æ", "ae").replace("ø", "o").replace("ł", "l")
    return text


def normalize_title(title: str | None) -> str:
    """Lower-case ASCII words separated by single spaces; '' for a missing title.

    >>> normalize_title('Sch{\\\\"o}n: $\\\\alpha$-Nets -- a Study. arXiv preprint arXiv:1810.04805')
    'schon alpha nets a study'
    """
    if not title:
        return ""
    title = without_format_characters(title)  # before anything else reads the words they split
    if not title.isascii() or "\\" in title or "$" in title or "{" in title or "}" in title:  # _LATEX_SIGNS
        title = _unlatex_unaccent(title)
        if not title.isascii():
            return _fold_tails_case_punctuation(title)
    # ASCII: `_fold_tails_case_punctuation` by substring tests and a byte table, 3-4x faster (a test compares them)
    text = title.lower()
    if "arxiv" in text or "corr" in text or "proceedings" in text or "in:" in text:  # in every `_TAILS` branch
        text = _TAILS.sub(" ", text)
    return " ".join(text.encode().translate(_ASCII_WORDS).decode().split())


def _fold_tails_case_punctuation(text: str) -> str:
    """Tails cut, lower case, every run of other characters one space, by the regular expressions: the path
    for text that is still not ASCII once accents are folded, and the reference for the ASCII path."""
    return _NON_WORD.sub(" ", _TAILS.sub(" ", text).lower()).strip()


def looks_like_venue(normalized_title: str) -> bool:
    """True when a normalised "title" is a journal or proceedings name ("physical review letters"): GROBID puts
    the venue in the title field when a citation has no article title, and such a title would match any other
    citation parsed the same way, so it is not used for matching.
    """
    return _VENUE.fullmatch(normalized_title) is not None
