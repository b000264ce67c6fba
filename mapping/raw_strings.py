"""Resolve a reference given only as a raw string ("A. Author, B. Author. 2017. Title. In Venue.") against
the titles of the database, without a reference parser.

The string is cut into pieces (`parse_raw_reference`), its title-sized segments are looked up in the title
index (`raw_segments`), each candidate title is verified against its best-aligned span of the string
(`best_span_similarity`) and one is chosen (`choose_raw_candidate`); in memory (`RawStringResolver`) and in
the Beam join (`resolve_raw_candidates`) alike. Why, step by step: docs/design.md.
"""

from __future__ import annotations

import math
import operator
import re
import unicodedata
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from itertools import chain

import numpy as np
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cpdist

from mapping.matcher import LENGTH_SLACK, MatchConfig, RawStringConfig, TitleIndex, signatures_and_keys
from mapping.records import CounterFn, Paper, Resolution, no_count
from mapping.titles import looks_like_venue, normalize_title

_CUT = re.compile(
    # the first character of every cut, consumed first: a character set the engine looks for at C speed, where
    # a lookahead before the alternatives would run the engine at every position; what the character starts
    # is then told apart behind it, in the order the alternatives are tried:
    r"(?P<cut>[,.?!;\"“”„‟«»¦'`\[\]\\12](?:"
    # weak: the full stop of an initial (a capital not after a word character or a full stop), a comma; before a
    # space or the end
    r"(?:(?<=(?<![\w.])[A-Z]\.)|(?<=,))(?=\s|$)"
    # strong: sentence punctuation before a space, quotes, '' and ``, square brackets, BibTeX's \newblock
    r"|(?P<strong>)(?:(?<=[.?!;])[.?!;]*(?=\s|$)|(?<=[\"“”„‟«»¦])|(?<=')'|(?<=`)`|(?<=[\[\]])|(?<=\\)newblock\b)"
    # a year standing alone: 1500-2099, maybe a letter ("2017a"), not inside a word or a number range
    r"|(?P<year>)(?<![\w-][12])(?:(?<=1)[5-9]|(?<=2)0)\d\d[a-z]?(?![\w-])"
    r"))"
)
"""Where a piece ends. `split` gives, for every cut, the cut's text, then "" in `strong` for a strong cut and
in `year` for a year (None otherwise); a cut that is neither is weak."""
_FONT_COMMAND = re.compile(r"\\(?:em|it|bf|sl|sc|rm|tt|sf|bibinfo\s*\{[a-z]*\}|bibfield\s*\{[a-z]*\})(?![A-Za-z])")
_YEAR_VALUE = re.compile(r"(?<!\d)((?:1[5-9]|20)\d\d)(?!\d)")


@dataclass(frozen=True, slots=True)
class RawReference:
    """A raw reference string cut into normalised pieces.

    `text` is the pieces joined by single spaces; piece i is `text[starts[i]:ends[i]]`. `strong[i]` tells
    whether the cut after piece i is a strong one. `years`: the years standing alone in the string, once each."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    strong: tuple[bool, ...]
    years: tuple[int, ...]


def parse_raw_reference(raw: str) -> RawReference:
    """Cut `raw` into pieces at the places a title can begin or end (module docstring, step 1).

    >>> r = parse_raw_reference('D. Bahdanau and K. Cho, "Neural machine translation," in Proc. ICLR, 2015.')
    >>> [r.text[s:e] for s, e in zip(r.starts, r.ends)]
    ['d', 'bahdanau and k', 'cho', 'neural machine translation', 'in proc', 'iclr', '2015']
    """
    text = _FONT_COMMAND.sub(" ", raw) if "\\" in raw else raw
    parts = _CUT.split(text)  # piece, then the three groups of the cut after it (cut, strong, year), ...
    unnormalized, strong_after, years = [], [], []
    for i in range(0, len(parts) - 1, 4):
        unnormalized.append(parts[i])
        if parts[i + 3] is not None:  # a year: a piece of its own; the punctuation around it decides the groups
            year = parts[i + 1]
            strong_after.append(False)
            unnormalized.append(year)
            strong_after.append(False)
            years.append(int(year[:4]))
        else:
            strong_after.append(parts[i + 2] is not None)
    unnormalized.append(parts[-1])
    strong_after.append(True)
    pieces: list[str] = []
    strong: list[bool] = []
    for piece, is_strong in zip(normalize_pieces(unnormalized), strong_after, strict=True):
        if piece:
            pieces.append(piece)
            strong.append(is_strong)
        elif strong and is_strong:
            strong[-1] = True  # an empty piece between two cuts: the stronger cut counts
    starts, ends, offset = [], [], 0
    for piece in pieces:
        starts.append(offset)
        offset += len(piece)
        ends.append(offset)
        offset += 1
    return RawReference(
        text=" ".join(pieces),
        starts=tuple(starts),
        ends=tuple(ends),
        strong=tuple(strong),
        years=tuple(dict.fromkeys(years)),
    )


_IS_SET = partial(operator.is_not, None)  # whether a group of `_CUT` took part in the match


@dataclass(frozen=True, eq=False)
class _Pieces:
    """Many parsed strings as arrays, their texts laid end to end in `text` (each followed by a space): string
    r is `text[begin[r]:end[r]]` and holds pieces `bounds[r]` to `bounds[r + 1] - 1`; piece i is
    `text[starts[i]:ends[i]]` (positions in `text`, increasing), `strong[i]` whether the cut after it is
    strong; `years[r]` as in `RawReference`."""

    text: str
    begin: np.ndarray
    end: np.ndarray
    bounds: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    strong: np.ndarray
    years: list[tuple[int, ...]]

    def __len__(self) -> int:
        return len(self.begin)

    def reference(self, r: int) -> RawReference:
        """String r as `parse_raw_reference` gives it."""
        begin, a, b = int(self.begin[r]), int(self.bounds[r]), int(self.bounds[r + 1])
        return RawReference(
            self.text[begin : int(self.end[r])],
            tuple((self.starts[a:b] - begin).tolist()),
            tuple((self.ends[a:b] - begin).tolist()),
            tuple(self.strong[a:b].tolist()),
            self.years[r],
        )

    @staticmethod
    def of(references: Sequence[RawReference]) -> _Pieces:
        """The arrays of parsed strings."""
        sizes = np.fromiter((len(r.text) + 1 for r in references), dtype=np.int64, count=len(references))
        begin = np.cumsum(sizes) - sizes
        n_pieces = np.fromiter((len(r.starts) for r in references), dtype=np.int64, count=len(references))
        bounds = np.zeros(len(references) + 1, dtype=np.int64)
        np.cumsum(n_pieces, out=bounds[1:])
        shift = np.repeat(begin, n_pieces)
        return _Pieces(
            "".join(r.text + " " for r in references),
            begin,
            begin + sizes - 1,
            bounds,
            np.fromiter(chain.from_iterable(r.starts for r in references), np.int64, int(bounds[-1])) + shift,
            np.fromiter(chain.from_iterable(r.ends for r in references), np.int64, int(bounds[-1])) + shift,
            np.fromiter(chain.from_iterable(r.strong for r in references), bool, int(bounds[-1])),
            [r.years for r in references],
        )


def parse_raw_references(raws: Sequence[str]) -> list[RawReference]:
    """`[parse_raw_reference(r) for r in raws]` (a test compares the two), vectorised over the strings
    (`_parse_batch`)."""
    pieces = _parse_batch(raws)
    return [pieces.reference(r) for r in range(len(pieces))]


def _parse_batch(raws: Sequence[str]) -> _Pieces:
    """`parse_raw_reference` of every string, as arrays: each string is cut as there and its pieces folded in
    one string (`_folded_joined`); then the characters of all the strings are made letters, digits and spaces
    in one pass, and the spaces collapsed, the empty pieces dropped (the stronger cut counting) and the
    offsets found with numpy, instead of a Python loop a piece."""
    folded: list[str] = []  # per string: its pieces (years among them), folded and joined by "\x00"
    flags = bytearray()  # per piece: whether the cut after it is strong
    n_pieces = array("q")
    years_of: list[tuple[int, ...]] = []
    for raw in raws:
        text = _FONT_COMMAND.sub(" ", raw) if "\\" in raw else raw
        if "\x00" in text:  # the separator below: this string's final pieces, parsed alone
            reference = parse_raw_reference(raw)
            pieces = map(reference.text.__getitem__, map(slice, reference.starts, reference.ends))
            folded.append("\x00".join(pieces))
            flags += bytes(reference.strong or (False,))  # no piece: one empty piece, dropped below
            n_pieces.append(max(len(reference.starts), 1))
            years_of.append(reference.years)
            continue
        parts = _CUT.split(text)
        pieces = parts[0::4]
        strong = [*map(_IS_SET, parts[2::4]), True]
        found = parts[3::4]  # "" after a year
        years: tuple[int, ...] = ()
        n_years = len(found) - found.count(None)
        if n_years:  # a year: a piece of its own, weak cuts on both sides
            cuts = parts[1::4]
            at = [found.index("")]
            while len(at) < n_years:
                at.append(found.index("", at[-1] + 1))
            for j in reversed(at):
                pieces.insert(j + 1, cuts[j])
                strong.insert(j + 1, False)
            years = tuple(dict.fromkeys(int(cuts[j][:4]) for j in at)) if n_years > 1 else (int(cuts[at[0]][:4]),)
        folded.append(_folded_joined(pieces))
        flags += bytes(strong)
        n_pieces.append(len(pieces))
        years_of.append(years)
    # every piece of every string followed by one "\x00", its words separated by single spaces
    data = ("\x00" + "\x00".join(folded) + "\x00").encode("ascii", "replace").translate(_KEEP_WORDS)
    codes = np.frombuffer(data, dtype=np.uint8)
    space = codes == 32
    keep = ~space
    keep[1:] |= space[1:] & ~space[:-1]  # one space of a run
    codes = codes[keep]
    space = np.flatnonzero(codes == 32)  # never first or last: the string begins and ends with "\x00"
    chars = np.delete(codes, space[(codes[space - 1] == 0) | (codes[space + 1] == 0)])[1:]  # nor beside one
    ends = np.flatnonzero(chars == 0)  # of each piece
    lengths = np.diff(ends, prepend=-1) - 1
    nonempty = np.flatnonzero(lengths)
    # the strong cut of an empty piece goes to the last piece before it (one of an earlier string when the
    # string has none before it: that is its string's last piece, whose cut is strong already)
    owner = np.repeat(np.arange(len(years_of)), np.frombuffer(n_pieces, dtype=np.int64))
    last = np.cumsum(lengths > 0) - 1
    strong_cut = np.zeros(len(nonempty), dtype=bool)
    strong_cut[last[np.flatnonzero(np.frombuffer(flags, dtype=bool) & (last >= 0))]] = True
    # the nonempty pieces of each string joined by single spaces, each string's text followed by one
    chars = np.delete(chars, ends[lengths == 0])
    piece_ends = np.flatnonzero(chars == 0)
    chars[piece_ends] = 32
    piece_starts = piece_ends - lengths[nonempty]
    bounds = np.zeros(len(years_of) + 1, dtype=np.int64)  # each string's first piece
    np.cumsum(np.bincount(owner[nonempty], minlength=len(years_of)), out=bounds[1:])
    begin = np.append(piece_starts, len(chars))[bounds[:-1]]  # a string without pieces: where the next begins
    end = np.where(bounds[1:] > bounds[:-1], np.append(piece_ends, 0)[bounds[1:] - 1], begin)
    return _Pieces(chars.tobytes().decode("ascii"), begin, end, bounds, piece_starts, piece_ends, strong_cut, years_of)


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_BACKSLASH = re.compile(r"\\")
_TAIL_WORD = re.compile(r"arxiv|corr|in:")
_TAIL_PROCEEDINGS = re.compile(r"[.,;:]\s*(?:in\s+)?proceedings")
"""A word that could start a tail `normalize_title` cuts (each alternative of its tail pattern starts with one
of these; "proceedings" only counts after punctuation, as it does there): a piece holding one is left to
`normalize_title` itself. Two patterns, each looked for only where its words occur, as each starts with a
character set the engine scans for quickly."""
_KEEP_WORDS = bytes(c if chr(c) in "0123456789abcdefghijklmnopqrstuvwxyz\x00" else 32 for c in range(256))


def _folded_alone(character: str) -> str:
    folded = normalize_title(character)
    vanishes = unicodedata.combining(character) or unicodedata.category(character) == "Cf"
    return folded or ("" if vanishes else " ")


_FOLD_LATIN = {c: _folded_alone(chr(c)) for c in [*range(0x80, 0x250), *range(0x300, 0x370), *range(0x2010, 0x2040)]}
"""What `normalize_title` makes of each Latin letter with a diacritic, combining mark, dash and quote, alone
(a combining mark or a format character such as the soft hyphen vanishes, other punctuation is a space): per
character, as NFKD and the folding are."""


def normalize_pieces(pieces: Sequence[str]) -> list[str]:
    """`[normalize_title(p) for p in pieces]` (a test compares the two on the gold strings and random ones),
    faster: the pieces are folded together (`_folded_joined`), then every character but a letter or digit
    made a space in one pass over all of them."""
    if any("\x00" in p for p in pieces):
        return [normalize_title(p) for p in pieces]
    coded = _folded_joined(pieces).encode("ascii", "replace").translate(_KEEP_WORDS).decode()
    return [" ".join(p.split()) for p in coded.split("\x00")]


def _folded_joined(pieces: Sequence[str]) -> str:
    """The pieces (none holding "\\x00") joined by "\\x00", lower-cased, and each folded so that making every
    character but [0-9a-z] a space and collapsing the spaces gives `normalize_title(piece)`: a character that
    is not ASCII by `_FOLD_LATIN` (throughout the string, one `str.replace` a character), "$" made a space
    and braces dropped, as `normalize_title` does; a piece holding LaTeX (a backslash), another character that
    is not ASCII, or a word a tail may start with (`_TAIL_WORD`, `_TAIL_PROCEEDINGS`, looked for once the rest
    is folded) is replaced by `normalize_title(piece)` itself."""
    joined = "\x00".join(pieces)
    text = joined
    slow: set[int] = set()  # pieces left to normalize_title
    if not text.isascii():  # the commonest first (dashes, the apostrophe: a space), then one by one
        text = text.replace("\u2013", " ").replace("\u2014", " ").replace("\u2019", " ")
    if not text.isascii():
        unfoldable = False
        for character in set(_NON_ASCII.findall(text)):
            folded = _FOLD_LATIN.get(ord(character))
            if folded is None:
                unfoldable = True
            else:
                text = text.replace(character, folded)
        if unfoldable:
            slow.update(
                joined.count("\x00", 0, m.start()) for m in _NON_ASCII.finditer(joined) if ord(m[0]) not in _FOLD_LATIN
            )
    if "\\" in joined:
        slow.update(joined.count("\x00", 0, m.start()) for m in _BACKSLASH.finditer(joined))
    if "$" in text or "{" in text or "}" in text:
        text = text.replace("$", " ").replace("{", "").replace("}", "")
    text = text.lower()
    if "arxiv" in text or "corr" in text or "in:" in text:
        slow.update(text.count("\x00", 0, m.start()) for m in _TAIL_WORD.finditer(text))
    if "proceedings" in text:
        slow.update(text.count("\x00", 0, m.start()) for m in _TAIL_PROCEEDINGS.finditer(text))
    if slow:
        folded_pieces = text.split("\x00")
        for i in slow:
            folded_pieces[i] = normalize_title(pieces[i])
        text = "\x00".join(folded_pieces)
    return text


def raw_segments(reference: RawReference, config: RawStringConfig = RawStringConfig()) -> list[str]:
    """The title-sized segments of a parsed string that are signed for LSH (module docstring, step 2), in
    a fixed order, without repeats: each group of pieces between two strong cuts, two neighbouring groups
    joined, three when the middle one is short (not a year), and the comma pieces of a group that has
    several; at least `min_segment_chars` long and three words. Left out: a first group that reads as an
    author list, a group that is a year alone or a venue name, and what is joined to it."""
    text, starts, ends = reference.text, reference.starts, reference.ends
    groups: list[tuple[int, int]] = []  # (first piece, last piece) between strong cuts
    first = 0
    for i, is_strong in enumerate(reference.strong):
        if is_strong:
            groups.append((first, i))
            first = i + 1
    words = [text[starts[a] : ends[b]] for a, b in groups]
    skip = [_is_year(w) if len(w) < config.min_segment_chars else _is_venue(w) for w in words]
    if groups and _is_author_list(reference, *groups[0]):
        skip[0] = True
    found: list[str] = []
    for g, (a, _) in enumerate(groups):
        if skip[g]:
            continue
        found.append(words[g])
        if g + 1 < len(groups) and not skip[g + 1]:
            found.append(text[starts[a] : ends[groups[g + 1][1]]])
        if g + 2 < len(groups) and _bridged(words[g + 1], config) and not skip[g + 2]:
            found.append(text[starts[a] : ends[groups[g + 2][1]]])
    for g, (a, b) in enumerate(groups):  # comma pieces last: a long list must not use up `max_segments`
        if b > a and not skip[g]:
            found.extend(text[starts[i] : ends[i]] for i in range(a, b + 1))
    segments = [s for s in dict.fromkeys(found) if len(s) >= config.min_segment_chars and s.count(" ") >= 2]
    return segments[: config.max_segments]


def _batch_segments(pieces: _Pieces, config: RawStringConfig) -> tuple[list[str], np.ndarray]:
    """`raw_segments` of every string of `pieces` (a test compares the two): the segments, and the string of
    each (ascending). The groups, the author lists, the years and the spans are found with numpy over all
    the strings; only the venue test of the longer groups (`_is_venue`) and the dropping of repeats see each
    string."""
    text, shortest = pieces.text, config.min_segment_chars
    if not len(pieces.starts):
        return [], np.zeros(0, dtype=np.int64)
    codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    spaces = np.zeros(len(codes) + 1, dtype=np.int64)  # spaces before each position
    np.cumsum(codes == 32, out=spaces[1:])
    owner = np.repeat(np.arange(len(pieces)), np.diff(pieces.bounds))  # of each piece
    # groups: pieces up to a strong cut (every string's last cut is strong)
    last = np.flatnonzero(pieces.strong)
    first = np.r_[0, last[:-1] + 1]
    string = owner[last]
    start, end = pieces.starts[first], pieces.ends[last]
    length = end - start
    # a first group of three or more pieces of at most three words each: an author list
    wordy = np.zeros(len(owner) + 1, dtype=np.int64)  # pieces of more than three words before each piece
    np.cumsum(spaces[pieces.ends] - spaces[pieces.starts] > 2, out=wordy[1:])
    skip = (first == pieces.bounds[string]) & (last - first >= 2) & (wordy[last + 1] == wordy[first])
    # a year alone (`_is_year`): 1500-2099, four digits and maybe a letter
    c = [codes[np.minimum(start + j, len(codes) - 1)] for j in range(5)]
    digit = [(x >= 48) & (x <= 57) for x in c]
    century = ((c[0] == 49) & (c[1] >= 53) & digit[1]) | ((c[0] == 50) & (c[1] == 48))
    year = ((length == 4) | ((length == 5) & ~digit[4])) & century & digit[2] & digit[3]
    short = length < shortest
    skip |= short & year
    venue = np.flatnonzero(~short & ~skip)
    skip[venue[[_is_venue(text[s:e]) for s, e in zip(start[venue].tolist(), end[venue].tolist(), strict=True)]]] = True
    bridged = short & ~year
    # the segments: each group, with the next, with the next two over a short one; then the comma pieces
    g = np.arange(len(last))
    same = _ahead(string, 1) == string  # the next group is in the same string
    kept = ~skip
    with_next = kept & same & _ahead(kept, 1)
    with_two = kept & same & _ahead(same, 1) & _ahead(bridged, 1) & _ahead(kept, 2)
    rows = [
        (g[kept], 0, end[kept]),
        (g[with_next], 1, end[np.minimum(g[with_next] + 1, len(g) - 1)]),
        (g[with_two], 2, end[np.minimum(g[with_two] + 2, len(g) - 1)]),
    ]
    of_group = np.concatenate([r[0] for r in rows])
    kind = np.concatenate([np.full(len(r[0]), r[1]) for r in rows])
    seg_string, seg_start, seg_end = string[of_group], start[of_group], np.concatenate([r[2] for r in rows])
    order = np.lexsort((kind, of_group))
    split = kept & (last > first)
    comma = np.flatnonzero(np.repeat(split, last - first + 1))  # pieces of those groups (pieces are in groups)
    seg_string = np.concatenate((seg_string[order], owner[comma]))
    seg_start = np.concatenate((seg_start[order], pieces.starts[comma]))
    seg_end = np.concatenate((seg_end[order], pieces.ends[comma]))
    section = np.r_[np.zeros(len(order), dtype=np.int64), np.ones(len(comma), dtype=np.int64)]
    order = np.lexsort((np.arange(len(section)), section, seg_string))  # each section in its order
    seg_string, seg_start, seg_end = seg_string[order], seg_start[order], seg_end[order]
    fits = (seg_end - seg_start >= shortest) & (spaces[seg_end] - spaces[seg_start] >= 2)
    seg_string, seg_start, seg_end = seg_string[fits], seg_start[fits], seg_end[fits]
    found = dict.fromkeys(  # the first of repeats within a string
        zip(seg_string.tolist(), map(text.__getitem__, map(slice, seg_start.tolist(), seg_end.tolist())), strict=True)
    )
    owners = np.fromiter((r for r, _ in found), dtype=np.int64, count=len(found))
    rank = np.arange(len(owners)) - np.searchsorted(owners, owners)
    within = np.flatnonzero(rank < config.max_segments)
    segments = [s for _, s in found]
    return ([segments[i] for i in within.tolist()] if len(within) < len(segments) else segments), owners[within]


def _ahead(values: np.ndarray, k: int) -> np.ndarray:
    """`values[i + k]` at every i; past the end, -1 (False for booleans)."""
    out = np.full(len(values), -1, dtype=values.dtype) if values.dtype != bool else np.zeros(len(values), bool)
    out[: max(len(values) - k, 0)] = values[k:]
    return out


def _is_year(group: str) -> bool:
    return len(group) <= 5 and _YEAR_VALUE.match(group) is not None


def _is_author_list(reference: RawReference, first: int, last: int) -> bool:
    """Whether a group of pieces reads as a list of names: three or more pieces (cut at commas and at the
    full stops of initials) of at most three words each. Only asked of the first group, where every common
    style puts the authors: inside a string, a title listing short items ("Multiagent systems: Algorithmic,
    game-theoretic, and logical foundations") has the same shape."""
    if last - first < 2:
        return False
    text, starts, ends = reference.text, reference.starts, reference.ends
    return all(text.count(" ", starts[i], ends[i]) <= 2 for i in range(first, last + 1))


def _bridged(group: str, config: RawStringConfig) -> bool:
    """Whether a group is short enough to sit inside a title between two cuts (not a year alone)."""
    return len(group) < config.min_segment_chars and not _is_year(group)


_NUMBERING = (" pp", " pages", " vol", " volume", " no")


def _is_venue(segment: str) -> bool:
    """A venue name, also after "in" and before volume and page numbers ("in proceedings of ... 123 130")."""
    core = (segment[3:] if segment.startswith("in ") else segment).rstrip("0123456789 ")
    while core.endswith(_NUMBERING):
        core = core.rsplit(" ", 1)[0].rstrip("0123456789 ")
    return looks_like_venue(core) or (core != segment and looks_like_venue(segment))


def title_is_eligible(normalized_title: str, config: RawStringConfig = RawStringConfig()) -> bool:
    """Whether a database title may be matched inside raw strings: long enough not to occur in many."""
    return len(normalized_title) >= config.min_title_chars and normalized_title.count(" ") + 1 >= (
        config.min_title_words
    )


def min_agreeing(config: MatchConfig) -> int:
    """The fewest signature values (of `num_perm`) the best segment must share with a candidate's title:
    `min_segment_jaccard` as a count."""
    return math.ceil(config.raw.min_segment_jaccard * config.num_perm - LENGTH_SLACK)


def could_fit(title_length: int, reference: RawReference, config: MatchConfig) -> bool:
    """Whether a title of this length could reach the threshold against some span: no longer than the
    whole string allows. Applied before candidates are ranked, in both matchers."""
    return title_length * config.min_similarity <= len(reference.text) + LENGTH_SLACK


def _span_fits(title_length: int, span_length: int, threshold: float) -> bool:
    return min(title_length, span_length) / max(title_length, span_length) >= threshold - LENGTH_SLACK


def candidate_spans(reference: RawReference, title_length: int, threshold: float) -> list[tuple[int, int]]:
    """(start, end) in `reference.text` of every span of whole pieces whose length lets a title of
    `title_length` reach `threshold` (LCS <= the shorter length), in order of start, then end."""
    if title_length <= 0:
        return []
    lowest = int(title_length * threshold) - 1
    highest = int(title_length / max(threshold, 1e-9)) + 1
    ends = reference.ends
    spans = []
    for i, start in enumerate(reference.starts):
        j_low = bisect_left(ends, start + lowest, i)
        j_high = bisect_right(ends, start + highest, i)
        for j in range(j_low, j_high):
            if _span_fits(title_length, ends[j] - start, threshold):
                spans.append((start, ends[j]))
    return spans


def best_span_similarity(title: str, reference: RawReference, threshold: float = 0.9) -> tuple[float, tuple[int, int]]:
    """(the LCS similarity of `title` against its best span of whole pieces, that span's (start, end) in
    `reference.text`): the span with the best `alignment_score` among those at or above `threshold`, else
    the best similarity; the first such span in order; (0.0, (-1, -1)) when no span has a length that
    could reach `threshold`. One pair at a time; the matchers batch the same computation (`span_pairs`)."""
    spans = candidate_spans(reference, len(title), threshold)
    scores = [LCSseq.normalized_similarity(title, reference.text[s:e]) for s, e in spans]
    return best_of_scores(len(title), scores, spans, threshold)[::2]


def span_pairs(title: str, reference: RawReference, threshold: float) -> tuple[list[str], list[tuple[int, int]]]:
    """The spans `best_span_similarity` scores, as strings and as (start, end), for a batched `cpdist`."""
    spans = candidate_spans(reference, len(title), threshold)
    return [reference.text[s:e] for s, e in spans], spans


def alignment_score(similarity: float, title_length: int, span_length: int) -> int:
    """Characters matched minus characters left unmatched in the title and in the span:
    3 LCS - title length - span length, the LCS recovered from the similarity (LCS / the longer length)."""
    lcs = round(similarity * max(title_length, span_length))
    return 3 * lcs - title_length - span_length


def best_of_scores(
    title_length: int, scores: Sequence[float], spans: Sequence[tuple[int, int]], threshold: float
) -> tuple[float, int, tuple[int, int]]:
    """(similarity, alignment score, span) of the first best span, as `best_span_similarity` keeps it:
    the best alignment score among spans at or above `threshold`, else the best similarity."""
    best: tuple[float, int, tuple[int, int]] = (0.0, -(1 << 30), (-1, -1))
    passed = False
    for score, span in zip(scores, spans, strict=True):
        score = float(score)
        aligned = alignment_score(score, title_length, span[1] - span[0])
        if score >= threshold:
            if not passed or aligned > best[1]:
                best, passed = (score, aligned, span), True
        elif not passed and score > best[0]:
            best = (score, aligned, span)
    return best


def spans_of_pairs(
    pieces: _Pieces, owners: np.ndarray, title_lengths: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """`span_pairs` of many (string, title) pairs at once: pair i is string `owners[i]` of `pieces` with a
    title of `title_lengths[i]` characters. Returns (pair, start, end, text) of every span `candidate_spans`
    gives, pairs in order and each pair's spans in `candidate_spans`' order, start and end in the string's
    text, vectorised: as the pieces' ends increase over all the strings, one `searchsorted` per bound finds
    the ends every start can reach."""
    if not len(owners):
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), []
    starts, ends, bounds = pieces.starts, pieces.ends, pieces.bounds
    lengths = np.asarray(title_lengths, dtype=np.int64)
    lowest = (lengths * threshold).astype(np.int64) - 1  # as in candidate_spans (int() of a positive float)
    highest = (lengths / max(threshold, 1e-9)).astype(np.int64) + 1
    # every (pair, first piece of a span), then every end piece within the bounds: `candidate_spans`' bisects
    n_pieces = np.where(lengths > 0, bounds[owners + 1] - bounds[owners], 0)
    pair_of, piece = _expand_ranges(bounds[owners], n_pieces)
    start = starts[piece]
    low = np.maximum(np.searchsorted(ends, start + lowest[pair_of], side="left"), piece)
    high = np.minimum(np.searchsorted(ends, start + highest[pair_of], side="right"), bounds[owners + 1][pair_of])
    row, end_piece = _expand_ranges(low, np.maximum(high - low, 0))
    pair, span_start, span_end = pair_of[row], start[row], ends[end_piece]
    span_lengths, title = span_end - span_start, lengths[pair]
    fits = np.minimum(title, span_lengths) / np.maximum(title, span_lengths) >= threshold - LENGTH_SLACK  # _span_fits
    pair, span_start, span_end = pair[fits], span_start[fits], span_end[fits]
    texts = list(map(pieces.text.__getitem__, map(slice, span_start.tolist(), span_end.tolist())))
    begin = pieces.begin[owners[pair]]
    return pair, span_start - begin, span_end - begin, texts


def best_passing_spans(
    pair: np.ndarray, scores: np.ndarray, title_lengths: np.ndarray, span_lengths: np.ndarray, threshold: float
) -> tuple[np.ndarray, np.ndarray]:
    """`best_of_scores` of many pairs at once, for the pairs it passes: rows are spans, `pair[r]` their pair
    (ascending), `title_lengths[r]` and `span_lengths[r]` the lengths of its title and span. Returns (row,
    alignment score) of the span `best_of_scores` keeps for each pair with a span at or above `threshold`
    (the first with the best alignment score among those), in order of pair."""
    passed = np.flatnonzero(scores >= threshold)
    if not len(passed):
        return passed, np.zeros(0, dtype=np.int64)
    title, span = title_lengths[passed], span_lengths[passed]
    lcs = np.rint(scores[passed] * np.maximum(title, span)).astype(np.int64)  # round(): half to even, as rint
    aligned = 3 * lcs - title - span  # alignment_score
    owner = pair[passed]
    order = np.lexsort((passed, -aligned, owner))  # by pair, then best alignment, then first span
    ranked = owner[order]
    first = order[np.r_[True, ranked[1:] != ranked[:-1]]]
    return passed[first], aligned[first]


def window_similarity(title: str, text: str) -> float:
    """The best LCS of `title` against any window of `text` of the title's length, over the title's length
    (a shorter text is one window). Exact, by every window; for the ablation in `bench/raw_gold.py`, not
    used by the matchers: it ignores where pieces begin and end, so a title inside a longer one passes."""
    if not title:
        return 0.0
    width = len(title)
    if len(text) <= width:
        return LCSseq.similarity(title, text) / width
    return max(LCSseq.similarity(title, text[i : i + width]) for i in range(len(text) - width + 1)) / width


def first_author_surname(paper: Paper) -> str:
    """The normalised surname of a paper's first author ("Ashish Vaswani", "Vaswani, A." -> "vaswani"),
    '' when unknown."""
    if not paper.authors:
        return ""
    name = paper.authors[0].strip()
    surname = name.split(",", 1)[0] if "," in name else (name.split() or [""])[-1]
    normalized = normalize_title(surname)
    return normalized if len(normalized) > 1 else ""


def _outdone(candidate: RawCandidate, other: RawCandidate) -> bool:
    """Whether `other` explains more of the words `candidate` was matched on (their spans overlap)."""
    overlap = candidate.span[0] < other.span[1] and other.span[0] < candidate.span[1]
    return overlap and other.alignment > candidate.alignment


def _surname_before(surname: str, text: str, start: int) -> bool:
    return bool(surname) and f" {surname} " in f" {text[:start]} "


@dataclass(frozen=True, slots=True)
class RawCandidate:
    """A verified candidate of one raw string: the paper, its similarity and where its span starts."""

    paper_id: str
    score: float
    alignment: int
    span: tuple[int, int]
    year: int | None
    surname: str


def choose_raw_candidate(
    bib_id: str,
    reference: RawReference,
    candidates: Sequence[RawCandidate],
    config: MatchConfig,
    count: CounterFn = no_count,
) -> Resolution:
    """The verified candidate the string cites, or why none (module docstring, step 4)."""
    verified = [c for c in candidates if c.score >= config.min_similarity]
    if not verified:
        count("unresolved:raw_no_title_match", 1)
        return Resolution(bib_id, None, "unresolved")
    if len(verified) == 1:
        count("resolved_by:raw_title", 1)
        return Resolution(bib_id, verified[0].paper_id, "raw_title", verified[0].score)
    verified = [c for c in verified if not any(_outdone(c, other) for other in verified)]
    best = max(c.score for c in verified)
    tied = sorted({c.paper_id: c for c in verified if c.score == best}.values(), key=lambda c: c.paper_id)
    for keep in (
        lambda c: c.year is not None and c.year in reference.years,
        lambda c: _surname_before(c.surname, reference.text, c.span[0]),
    ):
        if len(tied) > 1:
            narrowed = [c for c in tied if keep(c)]
            tied = narrowed or tied
    if len(tied) > 1:
        count("unresolved:raw_ambiguous", 1)
        return Resolution(bib_id, None, "ambiguous", max(c.score for c in tied))
    count("resolved_by:raw_title", 1)
    return Resolution(bib_id, tied[0].paper_id, "raw_title", tied[0].score)


def checked_raw(raw: str | None, config: RawStringConfig) -> tuple[RawReference | None, list[str], str]:
    """(the parsed string, its segments, "") when it can be matched on, else (None, [], the reason)."""
    if not raw or not raw.strip():
        return None, [], "no_usable_title"
    if len(raw) > config.max_raw_chars:
        return None, [], "raw_too_long"
    reference = parse_raw_reference(raw)
    segments = raw_segments(reference, config)
    if not segments:
        return None, [], "raw_no_segment"
    return reference, segments, ""


@dataclass(frozen=True)
class RawCandidateTitle:
    """A database paper proposed for one raw string (by the Beam join): `agreeing` is the most MinHash
    values any of the string's segments shares with the paper's title (estimated Jaccard x `num_perm`)."""

    paper_id: str
    title: str
    year: int | None
    surname: str
    agreeing: int


def resolve_raw_candidates(
    bib_id: str,
    reference: RawReference,
    candidates: Sequence[RawCandidateTitle],
    config: MatchConfig,
    count: CounterFn = no_count,
) -> Resolution:
    """One raw string against its proposed papers, as `RawStringResolver.resolve` decides it: eligible titles
    that `could_fit`; the `max_candidates` most agreeing (then paper id); those whose LCS with the whole
    string could reach the threshold; each verified on its spans; `choose_raw_candidate`. Candidates whose
    best segment shares fewer than `min_agreeing` signature values with their title are left out first."""
    floor = min_agreeing(config)
    kept = [
        c
        for c in candidates
        if title_is_eligible(c.title, config.raw) and could_fit(len(c.title), reference, config) and c.agreeing >= floor
    ]
    kept = sorted(kept, key=lambda c: (-c.agreeing, c.paper_id))[: config.max_candidates]
    if kept:
        bound = cpdist([c.title for c in kept], [reference.text] * len(kept), scorer=LCSseq.similarity, workers=1)
        threshold = config.min_similarity - LENGTH_SLACK
        kept = [c for c, lcs in zip(kept, bound.tolist(), strict=True) if lcs >= threshold * len(c.title)]
    verified = []
    for c in kept:
        texts, spans = span_pairs(c.title, reference, config.min_similarity)
        if not texts:
            continue
        scores = cpdist([c.title] * len(texts), texts, scorer=LCSseq.normalized_similarity, workers=1, dtype=np.float64)
        score, aligned, span = best_of_scores(len(c.title), scores, spans, config.min_similarity)
        if score >= config.min_similarity:
            verified.append(RawCandidate(c.paper_id, score, aligned, span, c.year, c.surname))
    return choose_raw_candidate(bib_id, reference, verified, config, count)


def _expand_ranges(lo: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For ranges [lo_i, lo_i + counts_i): (owner index i, position) of every element, vectorised."""
    owners = np.repeat(np.arange(len(lo)), counts)
    starts = np.zeros(len(lo), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return owners, lo[owners] + (np.arange(int(counts.sum())) - starts[owners])


class RawStringResolver:
    """The raw-string path of `InMemoryMatcher`: segments looked up in the matcher's `TitleIndex`, verified
    in batches with rapidfuzz's `cpdist`. `surnames[i]` is the first author's surname of the index's i-th
    paper (`first_author_surname`). The index holds its papers in paper-id order, as the join ranks them."""

    def __init__(self, index: TitleIndex, surnames: Sequence[str], config: MatchConfig) -> None:
        if len(surnames) != len(index):
            raise ValueError(f"{len(surnames)} surnames for {len(index)} indexed papers")
        self.index = index
        self.surnames = list(surnames)
        self.config = config
        self._eligible: np.ndarray | None = None
        self._lengths = np.zeros(0)
        self._low_bytes = np.zeros((0, config.num_perm), dtype=np.uint8)

    @property
    def eligible(self) -> np.ndarray:
        """Which indexed titles may match inside raw strings (computed on first use, with the titles' lengths
        and the low byte of every signature value: `_agreeing_at_least`'s cheap bound, a quarter of the
        signatures' memory)."""
        if self._eligible is None:
            raw = self.config.raw
            titles = self.index.titles
            self._eligible = np.fromiter((title_is_eligible(t, raw) for t in titles), dtype=bool, count=len(titles))
            self._lengths = np.fromiter(map(len, titles), dtype=np.float64, count=len(titles))
            self._low_bytes = self.index.signatures.astype(np.uint8)  # a C cast: the value modulo 256
        return self._eligible

    def resolve(self, bib_ids: Sequence[str], raws: Sequence[str | None], count: CounterFn = no_count) -> list:
        """One `Resolution` per raw string, in order, as `checked_raw` and `choose_raw_candidate` decide it,
        over all the strings at once: parsed together (`_parse_batch`, `_batch_segments`), and a string with
        one verified candidate decided here (as `choose_raw_candidate` decides it) and counted with the others."""
        config = self.config
        resolutions: list[Resolution | None] = [None] * len(bib_ids)
        usable: list[int] = []  # of the strings that `checked_raw` parses, in `bib_ids`
        for i, raw in enumerate(raws):
            if raw and raw.strip() and len(raw) <= config.raw.max_raw_chars:
                usable.append(i)
            else:
                count("unresolved:no_usable_title" if not raw or not raw.strip() else "unresolved:raw_too_long", 1)
                resolutions[i] = Resolution(bib_ids[i], None, "unresolved")
        if not usable:
            return resolutions
        parsed = _parse_batch([raws[i] for i in usable])  # type: ignore[misc]
        segments, owners = _batch_segments(parsed, config.raw)
        k, p = self._could_pass(parsed, self._candidates(parsed, segments, owners, count))
        k, p, scores, aligned, starts, ends = self._verified(parsed, k, p)
        n_verified = np.bincount(k, minlength=len(usable))
        single = np.flatnonzero(n_verified[k] == 1)
        for r, j, score in zip(k[single].tolist(), p[single].tolist(), scores[single].tolist(), strict=True):
            i = usable[r]
            resolutions[i] = Resolution(bib_ids[i], self.index.paper_ids[j], "raw_title", score)
        if len(single):
            count("resolved_by:raw_title", len(single))
        several = np.flatnonzero(n_verified[k] > 1)
        if len(several):
            rows = zip(*(a[several].tolist() for a in (k, p, scores, aligned, starts, ends)), strict=True)
            candidates: dict[int, list[RawCandidate]] = {}
            for r, j, score, alignment, start, end in rows:
                candidates.setdefault(r, []).append(
                    RawCandidate(
                        self.index.paper_ids[j], score, alignment, (start, end), self.index.years[j], self.surnames[j]
                    )
                )
            for r, found in candidates.items():
                i = usable[r]
                resolutions[i] = choose_raw_candidate(bib_ids[i], parsed.reference(r), found, config, count)
        segmented = np.zeros(len(usable), dtype=bool)
        segmented[owners] = True
        for problem, unresolved in (
            ("raw_no_segment", np.flatnonzero(~segmented)),
            ("raw_no_title_match", np.flatnonzero(segmented & (n_verified == 0))),
        ):
            if len(unresolved):
                count(f"unresolved:{problem}", len(unresolved))
                for r in unresolved.tolist():
                    resolutions[usable[r]] = Resolution(bib_ids[usable[r]], None, "unresolved")
        return resolutions

    def _verified(self, parsed: _Pieces, k: np.ndarray, p: np.ndarray) -> tuple[np.ndarray, ...]:
        """(string, paper index, similarity, alignment score, span start, span end) of the pairs whose best
        span (`best_span_similarity`) reaches `min_similarity`, in the order of the pairs: every span of every
        pair (`spans_of_pairs`) scored by one `cpdist`, the best of each pair by `best_passing_spans`."""
        threshold = self.config.min_similarity
        title_lengths = self._lengths[p].astype(np.int64)
        pair, starts, ends, texts = spans_of_pairs(parsed, k, title_lengths, threshold)
        if not len(pair):
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0), empty, empty, empty
        titles = self.index.titles[p[pair]].tolist()
        scores = cpdist(titles, texts, scorer=LCSseq.normalized_similarity, workers=1, dtype=np.float64)
        rows, aligned = best_passing_spans(pair, scores, title_lengths[pair], ends - starts, threshold)
        chosen = pair[rows]
        return k[chosen], p[chosen], scores[rows], aligned, starts[rows], ends[rows]

    def _could_pass(self, parsed: _Pieces, candidates: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, ...]:
        """The candidates whose title could reach the threshold against some span: its LCS with the whole
        string bounds its LCS with any span, so a title that keeps less than `min_similarity` of its
        characters in the whole string cannot pass (exact; one batched `cpdist`, so the spans are only cut
        for the few that can)."""
        k, p = candidates
        if not len(k):
            return k, p
        texts = map(parsed.text.__getitem__, map(slice, parsed.begin[k].tolist(), parsed.end[k].tolist()))
        found = cpdist(self.index.titles[p].tolist(), list(texts), scorer=LCSseq.similarity, workers=1)
        kept = np.flatnonzero(found >= (self.config.min_similarity - LENGTH_SLACK) * self._lengths[p])
        return k[kept], p[kept]

    def _candidates(
        self, parsed: _Pieces | Sequence[RawReference], segments: list[str], owners: np.ndarray, count: CounterFn
    ) -> tuple[np.ndarray, np.ndarray]:
        """(string, paper index) pairs to verify, by string then paper index: the eligible papers sharing a
        band key with a segment, that `could_fit`, whose best segment agrees on `min_segment_jaccard` of the
        signature, at most `max_candidates` per string (most agreeing first, then paper index). `owners[s]`:
        the string of segment s (ascending)."""
        config = self.config
        if not len(self.index) or not len(segments):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        signatures, keys = signatures_and_keys(segments, config)
        q, p = self.index.candidate_pairs(keys, lambda name, n=1: count(name.replace("title_", "raw_", 1), n))
        k = owners[q]
        if isinstance(parsed, _Pieces):
            text_lengths = (parsed.end - parsed.begin).astype(np.float64)
        else:
            text_lengths = np.fromiter((len(r.text) for r in parsed), dtype=np.float64, count=len(parsed))
        keep = self.eligible[p]
        keep &= self._lengths[p] * config.min_similarity <= text_lengths[k] + LENGTH_SLACK
        k, p = k[keep], p[keep]
        pairs = np.sort(k * len(self.index) + p)  # each (string, paper) once, in that order (np.unique: slower)
        pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs
        k, p = pairs // len(self.index), pairs % len(self.index)
        k, p, agreeing = self._agreeing_at_least(k, p, signatures, owners, min_agreeing(config))
        crowded = np.bincount(k, minlength=len(parsed))[k] > config.max_candidates
        if crowded.any():
            rows = np.flatnonzero(crowded)
            width = config.num_perm + 1
            key = (k[rows] * width + (config.num_perm - agreeing[rows])) * len(self.index) + p[rows]
            ranked = rows[np.argsort(key)]
            first = np.searchsorted(k[ranked], k[ranked], side="left")
            kept = ranked[(np.arange(len(ranked)) - first) < config.max_candidates]
            keep = np.sort(np.concatenate((np.flatnonzero(~crowded), kept)))
            k, p = k[keep], p[keep]
        return k, p

    def _agreeing_at_least(
        self, k: np.ndarray, p: np.ndarray, signatures: np.ndarray, owners: np.ndarray, floor: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The (string, paper) pairs whose best segment shares at least `floor` signature values with the
        paper's title, and that number. Exact but cheap: equal values have equal low bytes, so the low bytes a
        segment shares bound the values it shares, and only rows whose bound reaches `floor` are compared in full."""
        if not len(k):
            return k, p, np.zeros(0, dtype=np.int64)
        pair_of, segment_of = _segment_rows(k, owners)
        low_bytes = signatures.astype(np.uint8)  # a C cast: the value modulo 256
        counts = np.uint8 if signatures.shape[1] < 256 else np.int64  # up to num_perm
        papers = p[pair_of]
        agreeing = np.zeros(len(pair_of), dtype=counts)  # of the rows whose bound reaches the floor
        for start in range(0, len(pair_of), 1 << 12):  # blocks that stay in cache (`take`: faster than [])
            segment, paper = segment_of[start : start + (1 << 12)], papers[start : start + (1 << 12)]
            equal = np.take(low_bytes, segment, axis=0) == np.take(self._low_bytes, paper, axis=0)
            rows = np.flatnonzero(equal.sum(1, dtype=counts) >= floor)
            if len(rows):
                equal = np.take(signatures, segment[rows], axis=0) == np.take(
                    self.index.signatures, paper[rows], axis=0
                )
                agreeing[start + rows] = equal.sum(1, dtype=counts)
        rows = np.flatnonzero(agreeing >= floor)
        agreeing = agreeing[rows]
        if not len(rows):
            return k[:0], p[:0], np.zeros(0, dtype=np.int64)
        owner = pair_of[rows]  # ascending
        first = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        pairs = owner[first]
        return k[pairs], p[pairs], np.maximum.reduceat(agreeing, first).astype(np.int64)


def _segment_rows(k: np.ndarray, owners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For pairs of strings `k` that have segments (`owners[s]`, ascending, is the string of segment s):
    (pair, segment) of every segment of every pair's string, by pair then segment."""
    first_segment = np.searchsorted(owners, np.arange(owners[-1] + 2))
    return _expand_ranges(first_segment[k], first_segment[k + 1] - first_segment[k])
