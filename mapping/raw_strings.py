"""Resolve a reference given only as a raw string ("A. Author, B. Author. 2017. Title. In Venue.") against
the titles of the database, without a reference parser.

Used for unarXive's `bib_entry_raw`, S2ORC's `raw_text`, GROBID's `<note type="raw_reference">` and the
biblStructs GROBID could not split: every bib entry that has no usable title but a raw string. Both matchers
take the same steps (`RawStringResolver` for `InMemoryMatcher`, vectorised over a batch;
`resolve_raw_candidates` for the Beam join in `pipelines/matching.py`, one string at a time):

1. **Pieces** (`parse_raw_reference`): the string is cut where a title can begin or end. *Strong* cuts:
   sentence punctuation before a space (`. ? ! ;`), quotes (and unarXive's `¦` marks), square brackets,
   BibTeX's `\\newblock`. *Weak* cuts: a comma before a space, the full stop of an initial ("A. Vaswani"),
   and both sides of a year standing alone ("2017", "(2017)", "Author P 2009 Title"), which is a piece of its
   own. Round brackets are no cut: titles hold them ("Functional electrical stimulation (FES) may ...").
   Each piece is normalised as `mapping.titles.normalize_title` normalises a title (`normalize_pieces`, the
   same result in one pass); the text matched on is the pieces joined by single spaces.
2. **Candidates** (`raw_segments`): a raw string's MinHash is dominated by its authors and venue, so
   title-sized *segments* are signed instead, with the signatures and LSH band keys of the title path, and
   looked up in the same `TitleIndex`: each group of pieces between strong cuts, two neighbouring groups
   joined (a title with "?" or ". " inside), three when the middle one is short (a quoted word inside a
   title), and the comma pieces of a group (comma-separated styles); not the first group when it reads as a
   list of names, a year alone, or a venue name (`mapping.titles.looks_like_venue`). A database paper is a
   candidate when it shares a band key with a segment, its title is long enough to look for inside strings
   (`min_title_words`, `min_title_chars`: "Introduction" or "Deep learning" occur in far too many), the
   string is long enough to hold it, and its best segment agrees on at least `min_segment_jaccard` of the
   signature (on the dev half of the gold set the right paper's best segment agreed on 0.55 or more, the
   wrong candidates' on 0.23 at the median); at most `max_candidates` per string, the most agreeing first.
3. **Verification** by the best local alignment of the candidate title inside the string
   (`best_span_similarity`): the title path's LCS similarity (`LCSseq.normalized_similarity`: longest
   common subsequence over the longer of the two, at least `MatchConfig.min_similarity`) between the title
   and a *span*: a window of the string that begins and ends at cuts. Dividing by the longer of the two
   makes the span's own extra words count, so a database title inside a longer cited title ("Graph
   attention networks" in "Heterogeneous graph attention networks. In WWW") does not pass, where a window
   of the title's length divided by the title's length (`window_similarity`) would (measured:
   `bench/raw_gold.py --ablation`). The title's LCS with the whole string bounds its LCS with every span,
   so the spans are only cut for the candidates whose bound reaches the threshold (exact).
4. **Choice** (`choose_raw_candidate`) among the verified candidates. Two whose spans overlap explain the
   same words; the one whose alignment explains more of them stays (`alignment_score`: characters matched
   minus characters left unmatched on either side, 3 LCS - title length - span length). Similarity alone
   would prefer a short title matched exactly inside a longer one cited with a typo ("What is a
   quasispecies?" in "What is a quasispecies? Histo- rical origins and curernt scope"); the alignment score
   still keeps a longer title that reaches into the author list ("Chemcrow: Augmenting ..." against
   "... Schwaller, "Augmenting ...") below the exact one. Of what stays (titles found in different parts of
   the string: the title, and a venue some database record has as its title), the best similarity wins;
   different papers at the best similarity are narrowed to those whose year is one of the string's years,
   then to those whose first author's surname occurs before the matched span, and stay `ambiguous` when
   more than one remains.

Counters: `resolved_by:raw_title`, `unresolved:raw_no_title_match`, `unresolved:raw_ambiguous`,
`unresolved:raw_no_segment` (nothing title-sized to look up), `unresolved:raw_too_long`, and the bucket cap's
`raw_bucket_hits_capped` / `raw_candidate_pairs_skipped_by_cap`.

Why no reference-string parser: of the maintained ones on PyPI, `refextract` (INSPIRE, 1.1.7) cuts a title
only out of quotes, so through the title path it finds the IEEE-style titles and nothing else (recall 0.20
over all styles on the gold set, 0.98-0.99 on IEEE; `bench/RESULTS.md`); `refparse` (0.5.0) reads Web of
Science, Scopus and CSSCI exports only (0 resolved); anystyle is Ruby, and the CRF or neural parsers
(ParsCit, Neural-ParsCit, GROBID itself) need a service or a model that cannot be downloaded at run time.
Matching the database's own titles inside the string needs no parse of the string.
"""

from __future__ import annotations

import math
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

import numpy as np
from rapidfuzz.distance import LCSseq
from rapidfuzz.process import cpdist

from extractors.records import CounterFn, Paper, Resolution, no_count
from mapping.titles import looks_like_venue, normalize_title

if TYPE_CHECKING:
    from mapping.matcher import MatchConfig, TitleIndex

LENGTH_SLACK = 1e-9
"""As `mapping.matcher.LENGTH_SLACK`: rounding never drops a pair rapidfuzz would score at the threshold."""


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


_YEAR = r"(?<![\w-])(?:1[5-9]|20)\d\d[a-z]?(?![\w-])"
_CUT = re.compile(  # the lookahead lets the many positions that cannot start a cut fail at once
    r"(?=[A-Z,.?!;\"“”„‟«»¦'`\[\]\\12])(?:"
    r"(?P<weak>(?:(?<=[A-Z])(?<![\w.][A-Z])\.|,)(?=\s|$))"
    r"|(?P<strong>[.?!;]+(?=\s|$)|[\"“”„‟«»¦]|''|``|[\[\]]|\\newblock\b)"
    rf"|(?P<year>{_YEAR}))"
)
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
    parts = _CUT.split(text)  # piece, then the three groups of the cut after it (weak, strong, year), ...
    unnormalized, strong_after, years = [], [], []
    for i in range(0, len(parts) - 1, 4):
        unnormalized.append(parts[i])
        year = parts[i + 3]
        if year is not None:  # a year: a piece of its own; the punctuation around it decides the groups
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


_NOT_PLAIN = re.compile(r"[^\x00-\x23\x25-\x5b\x5d-\x7a\x7c\x7e\x7f]")  # not ASCII, or one of \\ $ { }
_TAIL_MARKER = re.compile(r"arxiv|corr|in:|[.,;:]\s*(?:in\s+)?proceedings")
"""What sends a piece past the one-pass ASCII folding: a character that is not ASCII or is LaTeX, or a word
that could start a tail `normalize_title` cuts (each alternative of its tail pattern starts with one of these;
"proceedings" only counts after punctuation, as it does there)."""
_KEEP_WORDS = bytes(c if chr(c) in "0123456789abcdefghijklmnopqrstuvwxyz\x00" else 32 for c in range(256))


def _folded_alone(character: str) -> str:
    folded = normalize_title(character)
    return folded or ("" if unicodedata.combining(character) else " ")


_FOLD_LATIN = {c: _folded_alone(chr(c)) for c in [*range(0x80, 0x250), *range(0x300, 0x370), *range(0x2010, 0x2040)]}
"""What `normalize_title` makes of each Latin letter with a diacritic, combining mark, dash and quote, alone
(a combining mark vanishes, other punctuation is a space): per character, as NFKD and the folding are."""


def normalize_pieces(pieces: Sequence[str]) -> list[str]:
    """`[normalize_title(p) for p in pieces]` (a test compares the two on the gold strings and random ones),
    faster: ASCII pieces are lower-cased and every other character made a space in one pass over all of them;
    a piece whose other characters are all in `_FOLD_LATIN` is folded by that table first; a piece with LaTeX,
    another character, or a word a tail may start with goes through `normalize_title` itself."""
    joined = "\x00".join(pieces)
    if joined.count("\x00") != len(pieces) - 1:
        return [normalize_title(p) for p in pieces]
    if not joined.isascii():  # the commonest characters that are not ASCII, as normalize_title folds them
        joined = joined.replace("\u2013", " ").replace("\u2014", " ").replace("\u2019", " ")
    lowered = joined.lower()
    coded = lowered.encode("ascii", "replace").translate(_KEEP_WORDS).decode()
    folded = [" ".join(p.split()) for p in coded.split("\x00")]
    plain = joined.isascii() and "\\" not in joined and "$" not in joined and "{" not in joined and "}" not in joined
    slow = [] if plain else [m.start() for m in _NOT_PLAIN.finditer(joined)]
    if "arxiv" in lowered or "corr" in lowered or "proceedings" in lowered or "in:" in lowered:
        slow += [m.start() for m in _TAIL_MARKER.finditer(lowered)]
    if slow:
        starts = list(accumulate((len(p) + 1 for p in pieces[:-1]), initial=0))
        for i in {bisect_right(starts, position) - 1 for position in slow}:
            folded[i] = _normalize_piece(pieces[i])
    return folded


def _normalize_piece(piece: str) -> str:
    latin = piece.translate(_FOLD_LATIN).lower()
    if latin.isascii() and _NOT_PLAIN.search(latin) is None and _TAIL_MARKER.search(latin) is None:
        return " ".join(latin.encode().translate(_KEEP_WORDS).decode().split())
    return normalize_title(piece)


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

    @property
    def eligible(self) -> np.ndarray:
        """Which indexed titles may match inside raw strings (computed on first use)."""
        if self._eligible is None:
            raw = self.config.raw
            titles = self.index.titles
            self._eligible = np.fromiter((title_is_eligible(t, raw) for t in titles), dtype=bool, count=len(titles))
            self._lengths = np.fromiter(map(len, titles), dtype=np.float64, count=len(titles))
        return self._eligible

    def resolve(self, bib_ids: Sequence[str], raws: Sequence[str | None], count: CounterFn = no_count) -> list:
        """One `Resolution` per raw string, in order."""
        config = self.config
        resolutions: list[Resolution | None] = [None] * len(bib_ids)
        positions: list[int] = []  # of the strings that are matched on, in `bib_ids`
        parsed: list[RawReference] = []
        segments: list[str] = []
        owners: list[int] = []
        for i, raw in enumerate(raws):
            reference, found, problem = checked_raw(raw, config.raw)
            if reference is None:
                count(f"unresolved:{problem}", 1)
                resolutions[i] = Resolution(bib_ids[i], None, "unresolved")
                continue
            owners.extend([len(parsed)] * len(found))
            positions.append(i)
            parsed.append(reference)
            segments.extend(found)
        if not parsed:
            return resolutions
        candidates = self._could_pass(
            parsed, self._candidates(parsed, segments, np.asarray(owners, dtype=np.int64), count)
        )
        left, right, spans, pairs = [], [], [], []
        for k, j in candidates:
            title = self.index.titles[j]
            texts, found = span_pairs(title, parsed[k], config.min_similarity)
            if texts:
                pairs.append((k, j, len(left), len(texts)))
                left.extend(title for _ in texts)
                right.extend(texts)
                spans.extend(found)
        scores = cpdist(left, right, scorer=LCSseq.normalized_similarity, workers=1, dtype=np.float64) if left else []
        verified: dict[int, list[RawCandidate]] = {}
        for k, j, offset, n in pairs:
            title_length = len(self.index.titles[j])
            part = slice(offset, offset + n)
            score, aligned, span = best_of_scores(title_length, scores[part], spans[part], config.min_similarity)
            if score >= config.min_similarity:
                paper = RawCandidate(
                    self.index.paper_ids[j], score, aligned, span, self.index.years[j], self.surnames[j]
                )
                verified.setdefault(k, []).append(paper)
        for i, reference, k in zip(positions, parsed, range(len(parsed)), strict=True):
            resolutions[i] = choose_raw_candidate(bib_ids[i], reference, verified.get(k, ()), config, count)
        return resolutions

    def _could_pass(
        self, parsed: list[RawReference], candidates: tuple[np.ndarray, np.ndarray]
    ) -> list[tuple[int, int]]:
        """The candidates whose title could reach the threshold against some span: its LCS with the whole
        string bounds its LCS with any span, so a title that keeps less than `min_similarity` of its
        characters in the whole string cannot pass (exact; one batched `cpdist`, so the spans are only cut
        for the few that can)."""
        k, p = candidates
        if not len(k):
            return []
        texts = [parsed[i].text for i in k.tolist()]
        found = cpdist([self.index.titles[j] for j in p.tolist()], texts, scorer=LCSseq.similarity, workers=1)
        kept = np.flatnonzero(found >= (self.config.min_similarity - LENGTH_SLACK) * self._lengths[p])
        return list(zip(k[kept].tolist(), p[kept].tolist(), strict=True))

    def _candidates(
        self, parsed: list[RawReference], segments: list[str], owners: np.ndarray, count: CounterFn
    ) -> tuple[np.ndarray, np.ndarray]:
        """(reference, paper index) pairs to verify, by reference then paper index: the eligible papers sharing
        a band key with a segment, that `could_fit`, whose best segment agrees on `min_segment_jaccard` of the
        signature, at most `max_candidates` per reference (most agreeing first, then paper index)."""
        from mapping.matcher import signatures_and_keys  # the title path's own (mapping.matcher imports this module)

        config = self.config
        if not len(self.index):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        signatures, keys = signatures_and_keys(segments, config)
        q, p = self.index.candidate_pairs(keys, lambda name, n=1: count(name.replace("title_", "raw_", 1), n))
        k = owners[q]
        text_lengths = np.fromiter((len(r.text) for r in parsed), dtype=np.float64, count=len(parsed))
        keep = self.eligible[p]
        keep &= self._lengths[p] * config.min_similarity <= text_lengths[k] + LENGTH_SLACK
        k, p = k[keep], p[keep]
        pairs = np.unique(k * len(self.index) + p)  # each (reference, paper) once, in that order
        k, p = pairs // len(self.index), pairs % len(self.index)
        agreeing = self._agreeing(k, p, signatures, owners)
        enough = agreeing >= min_agreeing(config)
        k, p, agreeing = k[enough], p[enough], agreeing[enough]
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

    def _agreeing(self, k: np.ndarray, p: np.ndarray, signatures: np.ndarray, owners: np.ndarray) -> np.ndarray:
        """For each (reference, paper) pair: the most signature values any segment of the reference shares
        with the paper's title (estimated Jaccard x num_perm), in chunks of whole pairs."""
        if not len(k):
            return np.zeros(0, dtype=np.int64)
        first_segment = np.searchsorted(owners, np.arange(owners[-1] + 2))
        per_pair = first_segment[k + 1] - first_segment[k]
        pair_of, segment_of = _expand_ranges(first_segment[k], per_pair)
        equal = np.empty(len(pair_of), dtype=np.int64)
        for start in range(0, len(pair_of), 1 << 15):
            part = slice(start, start + (1 << 15))
            equal[part] = (signatures[segment_of[part]] == self.index.signatures[p[pair_of[part]]]).sum(1)
        return np.maximum.reduceat(equal, np.r_[0, np.cumsum(per_pair)[:-1]])
