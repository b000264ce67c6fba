"""Peer reviews in, in any of five layouts; submissions, reviews and dead letters out. No Beam.

Layouts:

- **PeerRead JSON**: one submission per file, `{id, title, abstract, conference, reviews: [{comments, ...}]}`
  (PeerRead, and the NeurIPS OpenReview scrape that follows it). Headings such as `WEAKNESSES:` inside
  `comments` become the review's sections.
- **OpenReview notes** as JSON (one note, a list, or `{"notes": [...]}`) or JSONL (one note per line), API v1
  (`content.{field}`) or v2 (`content.{field}.value`); submissions carrying `details.replies` /
  `details.directReplies` give their reviews too.
- **Flat CSV** export of notes (one row per note, content fields as columns, `forum` = submission).
- **DISAPERE JSON** (`{metadata: {forum_id, review_id, ...}, review_sentences: [{text, suffix}]}`): the review
  is its sentences joined.
- **Plain text** (`.txt`, `.md`): a review form's text export (CVF/CMT style): headings such as
  "Summary Of The Paper", "2. Strengths:", "Weaknesses" on a line of their own; "Reviewer #2" lines start the
  next review; the submission is the file's stem (or a "Paper ID: 123" line).

**Review forms by meaning, not by spelling.** A field's name is normalised (`normalize_field_name`: case,
spaces and punctuation folded, "Reasons_to_reject" = "reasons to reject" = "reasons_to_reject"), and every
free-text field of a review is review text unless it is one of `NOT_REVIEW_TEXT` (note metadata, the
submission's own fields, scores, ratings, confidences, flags, dates, decisions and the annotation columns of the
labelled exports: an LLM's `response`, hand-corrected `paper_info`) or its value is shaped like one (a score
"3: good" / "4 excellent", a yes/no flag, a date, a bare link or attachment path: `is_free_text`). So a form
nobody listed is read, not dropped. `REVIEW_TEXT_FIELDS` are the fields of the forms we know (ICLR, NeurIPS,
ICML, TMLR, COLM, ACL Rolling Review / EMNLP / NAACL): they come first, in reading order, and keep strict
typing; other fields follow in the note's own order. `ReviewFields(only=...)` (`--review_fields`) reads only
the fields named, `ReviewFields(skip=...)` (`--skip_review_fields`) denies more.

Notes that are not reviews: a reply signed by the submission's authors or on a rebuttal invitation is not a
review (a standalone one is a `not_a_review` dead letter, one under a submission's `details` is passed over, as
are decisions and comments without text); a review note (an `Official_Review`-like invitation, or any note
outside a submission's replies) without text is an `empty_review` dead letter.

The readers raise only `ReviewInputError` (and `parse_review_file` never raises: each error becomes a dead
letter). Wrongly typed fields (readers in `extractors.documents.fields`; the reason is `wrong_type:<field path>`):
- ids (`id`, `forum`, `replyto`): text or an integer's digits; anything else dead-letters the note or file.
- the known text fields (`REVIEW_TEXT_FIELDS`, `comments`), `title`, `abstract`, `venue`, `conference`,
  `TITLE`: text; a number becomes its text; a list of text is joined with ", "; NaN (an empty CSV cell) is
  absent; an object, a boolean or a list holding one dead-letters. A review text field dead-letters only its
  review (`reviews.comments`, `content.weaknesses`, a reply under `details`), not its submission. Fields of
  other names are read only when they hold text.
- `authors`: one string split at commas and "and", or a list of text; else `wrong_type:authors`.
- `invitation`/`invitations`: text or a list of text; else `wrong_type:invitations`. Replies under `details`
  must be a list; a reply that is not an object is an `unreadable_review` dead letter.
- `cdate`/`tcdate`/`DATE`: only searched for a year; epoch milliseconds past the calendar are ignored.
- Notes nested in lists or `{"notes": [...]}` more than `_MAX_NESTING` deep are `too_deep`, as is JSON
  nested past the interpreter's recursion limit.

Files (`parse_review_file`): decoded by their byte-order mark, or as UTF-16 without one when NUL bytes say so
(`decode_review_bytes`); CSV read strictly, so that a broken quote never joins rows into one review
(`parse_review_csv`: `unterminated_quote`, `bad_csv`, `bad_csv_row`); a key given twice in a JSON object or a CSV
column named twice keeps its last value, counted (`reading:` counters).

Ids are the source's own ("304", "0Iw2dLh8uq/r0"); a run qualifies them by venue (`with_scoped_ids`:
"iclr-2017:304"), since venues number their submissions alike.
"""

from __future__ import annotations

import codecs
import csv
import datetime as dt
import functools
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace

from extractors.documents.fields import as_identifier, as_mapping, as_text, as_texts, decode_json, wrong_type
from extractors.documents.tei import PARSER_ERRORS, DocumentError
from extractors.reviews.mentions.cleaning import clean_review_text
from extractors.reviews.records import Review, Submission
from mapping.records import CounterFn, DeadLetter, no_count


def normalize_field_name(name: str) -> str:
    """A form field's name as one spelling: case folded, runs of spaces and punctuation one `_`, none at the
    ends ("Reasons_to_reject", "Clarity, Quality, Novelty And Reproducibility", "TL;DR" -> "tl_dr")."""
    return re.sub(r"[^0-9a-z]+", "_", name.casefold()).strip("_")


# The review text fields of the forms we know (normalised names), in reading order: ICLR 2019-2025, NeurIPS
# 2021-2025, ICML 2025, TMLR, COLM, ACL Rolling Review / EMNLP / NAACL (2021-2025), PeerRead.
REVIEW_TEXT_FIELDS: tuple[str, ...] = (
    "summary",
    "summary_of_the_paper",
    "paper_summary",
    "paper_topic_and_main_contributions",
    "summary_of_contributions",
    "main_review",
    "review",
    "strengths",
    "summary_of_strengths",
    "weaknesses",
    "summary_of_weaknesses",
    "strength_and_weaknesses",
    "strengths_and_weaknesses",
    "other_strengths_and_weaknesses",
    "reasons_to_accept",
    "reasons_to_reject",
    "claims_and_evidence",
    "methods_and_evaluation_criteria",
    "theoretical_claims",
    "experimental_designs_or_analyses",
    "supplementary_material",
    "relation_to_broader_scientific_literature",
    "essential_references_not_discussed",
    "missing_references",
    "requested_changes",
    "questions",
    "questions_for_authors",
    "questions_for_the_authors",
    "questions_to_authors",
    "limitations",
    "limitations_and_societal_impact",
    "broader_impact_concerns",
    "clarity_quality_novelty_and_reproducibility",
    "summary_of_the_review",
    "final_justification",
    "other_comments_or_suggestions",
    "comments_suggestions_and_typos",
    "comments_suggestions_or_typos",
    "typos_grammar_style_and_presentation_improvements",
    "ethical_concerns",
    "metareview",
    "comment",
    "comments",
)
_KNOWN_ORDER = {name: index for index, name in enumerate(REVIEW_TEXT_FIELDS)}

# Fields that are never review text (normalised names), whatever they hold. Kept by kind, so that a new
# form's score or flag is added where it belongs; values shaped like a score, flag, date or link are passed over
# anyway (`is_free_text`).
NOT_REVIEW_TEXT: frozenset[str] = frozenset(
    # the note's own metadata (OpenReview API v1/v2, the CSV export's columns, PeerRead, DISAPERE)
    "id forum replyto number invitation invitations signatures readers writers nonreaders cdate tcdate mdate "
    "tmdate ddate tddate odate pdate original details domain license version referent parent_invitations "
    "content date other_keys is_meta_review reviewer annotator permalink rebuttal_id review_id forum_id "
    # the submission's own fields
    "title abstract authors authorids keywords tl_dr tldr pdf venue venueid paperhash bibtex primary_area "
    "subject_areas conference accepted histories code_of_ethics submission_guidelines "
    # scores, ratings and confidences
    "rating overall_rating confidence reviewer_confidence recommendation overall_recommendation "
    "overall_assessment soundness soundness_correctness presentation contribution correctness "
    "technical_novelty_and_significance empirical_novelty_and_significance excitement reproducibility "
    "clarity impact originality significance quality substance appropriateness meaningful_comparison "
    "best_paper best_paper_justification_score datasets software knowledge_of_paper knowledge_of_paper_source "
    "impact_of_knowledge_of_paper knowledge_of_or_educated_guess_at_author_identity reviewer_expertise "
    "audience "
    # flags and acknowledgements
    "flag_for_ethics_review ethics_flag needs_ethics_review ethics_review_flag ethics_expertise_needed "
    "code_of_conduct code_of_conduct_acknowledgement responsible_reviewing_acknowledgement first_time_reviewer "
    "reviewer_certification publication_ethics_policy_compliance "
    # decisions
    "decision "
    # annotation columns of the labelled exports (zhuojing-huang/review-citation-bias)
    "response binary_label suggested_years paper_info citation_suggestions label labels".split()
)


@dataclass(frozen=True)
class ReviewFields:
    """Which fields of a review note are read as its text. Empty `only`: every free-text field not in
    `NOT_REVIEW_TEXT` or `skip` (names in any spelling; they are normalised)."""

    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "only", tuple(normalize_field_name(n) for n in self.only if n.strip()))
        object.__setattr__(self, "skip", tuple(normalize_field_name(n) for n in self.skip if n.strip()))

    def reads(self, name: str) -> bool:
        """Is the field named `name` (normalised) read, if its value is free text?"""
        if self.only:
            return name in self.only
        return name not in NOT_REVIEW_TEXT and name not in self.skip

    def as_metadata(self) -> dict[str, object]:
        return {"only": list(self.only), "skip": list(self.skip), "not_review_text": sorted(NOT_REVIEW_TEXT)}


ALL_FREE_TEXT = ReviewFields()  # the readers' default: every free-text field but the deny-list


def review_fields_of(fields: ReviewFields | Sequence[str] | None) -> ReviewFields:
    """A `ReviewFields`, also from a plain list of names (read only those) or None (the default)."""
    if fields is None:
        return ALL_FREE_TEXT
    if isinstance(fields, ReviewFields):
        return fields
    return ReviewFields(only=tuple(fields))


_SCORE_LABELLED = re.compile(r"\s*[-+]?\d{1,2}(?:\.\d+)?(?:\s*/\s*\d{1,2})?\s*(?:$|[:=\-\u2013\u2014]\s*\S|\s+\S)")
_NUMBERED_ITEM = re.compile(r"\s*\d{1,2}\s*[.)]\s")
_FLAG = re.compile(r"\s*[\[('\"]*(?:yes|no|true|false|none|n/?a|nil|null|-+)\b", re.I)
_DATE = re.compile(
    r"\s*(?:\d{4}-\d{2}-\d{2}|\d{1,2}\s+[A-Z][a-z]{2,8}\.?,?\s+\d{4}|[A-Z][a-z]{2,8}\.?\s+\d{1,2},?\s+\d{4})\b"
)
_LINK_ONLY = re.compile(r"\s*(?:/(?:attachment|pdf|forum|references)\b|https?://)\S*\s*")


_SCORE_NAME = re.compile(r"(?:^|_)(?:rating|score|confidence|recommendation|grade)(?:_|$)")


def is_free_text(value: str, name: str = "") -> bool:
    """Does a field's value read as text a reviewer wrote, not as a score ("3: good", "4 excellent", "7"), a
    yes/no flag, a date, or a bare link or attachment path? A short value (30 words at most) of a field named as
    a rating, score, confidence or recommendation (`name`, normalised) is a score whatever it says ("Confident but
    not absolutely certain")."""
    stripped = value.strip()
    words = stripped.split()
    if not words or _LINK_ONLY.fullmatch(stripped):
        return False
    if name and _SCORE_NAME.search(name) and len(words) <= 30:
        return False
    one_line = "\n" not in stripped
    if one_line and not _NUMBERED_ITEM.match(stripped) and _SCORE_LABELLED.match(stripped):
        if len(words) <= 8 or (len(words) <= 60 and re.match(r"\s*[-+]?\d{1,2}(?:\.\d+)?\s*[:=\-\u2013]", stripped)):
            return False  # "3 good", "8: accept, good paper", "4 = Strong: This study provides ..."
    if len(words) <= 6 and _FLAG.match(stripped):
        return False
    return not (one_line and len(words) <= 6 and _DATE.match(stripped))


def _is_flag(text: str) -> bool:
    """A yes/no/none answer ("No", "None.", "N/A"): no review text, even in a text field."""
    return len(text.split()) <= 3 and bool(_FLAG.match(text)) and not re.search(r"\d", text)


_HEADING = re.compile(r"^([A-Z][A-Z _/&,\-]{2,60}):[ \t]*$|^([A-Z][A-Z _/&,\-]{2,60}):[ \t]+(?=\S)", re.M)
_YEAR_IN = re.compile(r"(?<!\d)(19[89]\d|20[0-4]\d)(?!\d)")
_REVIEW_AUTHOR_SEPARATORS = re.compile(r",\s*|\s+and\s+")
_MAX_EPOCH_MS = 253_402_300_800_000  # 10000-01-01: datetime's calendar ends before it
_MAX_NESTING = 4  # a list of notes, or {"notes": [...]}, inside another at most this deep
_COMPRESSION = (".gz", ".bz2", ".zst", ".xz")


class ReviewInputError(ValueError):
    """An input that is not a submission or review in any layout we read; `reason` names the case."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


ReviewInput = Submission | Review | DeadLetter


def _as_review_error(err: Exception) -> ReviewInputError:
    if isinstance(err, ReviewInputError):
        return err
    if isinstance(err, DocumentError):
        return ReviewInputError(err.reason, err.detail)
    return ReviewInputError("parser_error", f"{type(err).__name__}: {err}")


def _raises_only_review_errors(read: Callable[..., Iterator[ReviewInput]]) -> Callable[..., Iterator[ReviewInput]]:
    """Let a reader raise nothing but `ReviewInputError` (a field's `wrong_type:…` keeps its reason)."""

    @functools.wraps(read)
    def guarded(*args, **kwargs) -> Iterator[ReviewInput]:
        try:
            yield from read(*args, **kwargs)
        except ReviewInputError:
            raise
        except (DocumentError, *PARSER_ERRORS) as err:
            raise _as_review_error(err) from err

    return guarded


def _unwrapped(value: object) -> object:
    """An API v2 field's `value` (`{"value": ...}`), or the value itself."""
    if isinstance(value, Mapping) and "value" in value:
        return value["value"]
    return value


def _value(content: Mapping, name: str) -> object:
    """The field `name` of a note's content, in any spelling of the name."""
    if name in content:
        return _unwrapped(content[name])
    for key in content:
        if isinstance(key, str) and normalize_field_name(key) == name:
            return _unwrapped(content[key])
    return None


def _text(value: object, path: str) -> str | None:
    """A text field: text, a number's text, or a list of those joined with ", "; None when empty."""
    text = ", ".join(as_texts(value, path)) if isinstance(value, list) else as_text(value, path)
    return (text or "").strip() or None


def _identifier(value: object, path: str) -> str | None:
    return (as_identifier(value, path) or "").strip() or None


def _authors(value: object) -> tuple[str, ...]:
    return as_texts(value, "authors", split=_REVIEW_AUTHOR_SEPARATORS.split)


def review_text_fields(
    content: Mapping, fields: ReviewFields = ALL_FREE_TEXT, prefix: str = ""
) -> list[tuple[str, str]]:
    """The (normalised name, text) pairs of a note's content that are review text: the known fields first in
    reading order (strictly typed: `wrong_type:<prefix><name>`), then every other free-text field in the note's
    order (only text values; a score, flag, date or link is passed over)."""
    known: list[tuple[int, str, str]] = []
    other: list[tuple[str, str]] = []
    seen: set[str] = set()
    for key, raw in content.items():
        if not isinstance(key, str):
            continue
        name = normalize_field_name(key)
        if not name or name in seen or not fields.reads(name):
            continue
        value = _unwrapped(raw)
        if name in _KNOWN_ORDER:
            text = _text(value, f"{prefix}{key}")
            if text and not _is_flag(text):
                seen.add(name)
                known.append((_KNOWN_ORDER[name], name, text))
        elif isinstance(value, str):
            text = (as_text(value, f"{prefix}{key}") or "").strip()
            if text and (fields.only or is_free_text(text, name)):
                seen.add(name)
                other.append((name, text))
    return [(name, text) for _, name, text in sorted(known)] + other


def assemble_review_text(fields: Sequence[tuple[str, str]]) -> tuple[str, tuple[tuple[int, str], ...]]:
    """Clean each field, join them under their names; the sections say where each field starts."""
    parts, sections, offset = [], [], 0
    for name, raw in fields:
        cleaned = clean_review_text(raw).strip()
        if not cleaned:
            continue
        header = f"{name.upper()}:\n"
        sections.append((offset + len(header), name.lower()))
        block = header + cleaned + "\n\n"
        parts.append(block)
        offset += len(block)
    return "".join(parts), tuple(sections)


def sections_from_headings(text: str) -> tuple[tuple[int, str], ...]:
    """Sections of a single-string review from its `SUMMARY:`-style headings (PeerRead/NeurIPS scrape)."""
    found = []
    for match in _HEADING.finditer(text):
        name = normalize_field_name(match.group(1) or match.group(2))
        found.append((match.end(), name))
    return tuple(found)


def _year_of(*values: object) -> int | None:
    for value in values:
        if value is None:
            continue
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            if value > 10**11:  # epoch milliseconds
                if value < _MAX_EPOCH_MS:
                    return dt.datetime.fromtimestamp(value / 1000, tz=dt.UTC).year
                continue
            if 1980 <= value <= 2049:
                return int(value)
            continue
        match = _YEAR_IN.search(str(value))
        if match:
            return int(match.group(1))
    return None


def review_kind(invitation: str | None, title: str | None = None, is_meta: bool = False) -> str:
    text = f"{invitation or ''} {title or ''}".lower()
    if is_meta or "meta_review" in text or "meta-review" in text or "metareview" in text or "decision" in text:
        return "meta"
    if "comment" in text and "review" not in text:
        return "comment"
    return "official"


_REVIEW_INVITATION = re.compile(r"review", re.I)
_NOT_A_REVIEW_INVITATION = re.compile(r"rebuttal|author|withdraw|desk_reject|revision|camera_ready", re.I)


def _signatures(note: Mapping) -> str:
    value = note.get("signatures")
    if isinstance(value, list):
        return " ".join(v for v in value if isinstance(v, str))
    return value if isinstance(value, str) else ""


def is_author_note(note: Mapping, invitation: str) -> bool:
    """A note the submission's authors wrote (a rebuttal, a response), by its signature or its invitation."""
    return bool(re.search(r"/Authors\b", _signatures(note)) or _NOT_A_REVIEW_INVITATION.search(invitation))


def _review(
    review_id: str,
    submission_id: str,
    fields: Sequence[tuple[str, str]],
    kind: str,
    year: int | None,
    source: str,
    scope: str | None = None,
) -> Review | DeadLetter:
    if len(fields) == 1:
        text = clean_review_text(fields[0][1]).strip()
        text = text + "\n" if text else ""
        sections = sections_from_headings(text)
    else:
        text, sections = assemble_review_text(fields)
    if not text.strip():
        return DeadLetter(
            source=f"{source}#{review_id}",
            stage="read_reviews",
            reason="empty_review",
            detail=f"review {review_id} of {submission_id} has no review text in any field",
        )
    return Review(review_id, submission_id, text, sections, kind, year, source, scope)


def _peerread_review(
    review: Mapping, review_id: str, submission_id: str, venue: str | None, source: str, fields: ReviewFields
) -> Review | DeadLetter:
    found = review_text_fields(review, fields, "reviews.")
    kind = review_kind(None, _text(review.get("TITLE"), "reviews.TITLE"), bool(review.get("IS_META_REVIEW")))
    return _review(review_id, submission_id, found, kind, _year_of(venue, review.get("DATE")), source, venue)


@_raises_only_review_errors
def parse_peerread(
    record: Mapping, source: str, fields: ReviewFields | Sequence[str] | None = None
) -> Iterator[ReviewInput]:
    """A PeerRead-layout submission: the submission, then each review (or a dead letter per unreadable one)."""
    fields = review_fields_of(fields)
    submission_id = _identifier(record.get("id"), "id") or source.rsplit("/", 1)[-1].removesuffix(".json")
    venue = _text(record.get("conference"), "conference")
    reviews = record.get("reviews")
    if not isinstance(reviews, list):
        raise ReviewInputError("unknown_layout", "'reviews' is not a list")
    dates = [r.get("DATE") for r in reviews if isinstance(r, Mapping)]
    year = _year_of(venue, *dates)
    yield Submission(
        submission_id,
        _text(record.get("title"), "title"),
        _text(record.get("abstract"), "abstract"),
        year,
        venue,
        source,
        _authors(record.get("authors")),
        venue,
    )
    for index, review in enumerate(reviews):
        review_id = f"{submission_id}/r{index}"
        if not isinstance(review, Mapping):
            yield DeadLetter(
                f"{source}#{review_id}", "read_reviews", "unreadable_review", f"not an object: {type(review).__name__}"
            )
            continue
        try:
            item = _peerread_review(review, review_id, submission_id, venue, source, fields)
        except (DocumentError, *PARSER_ERRORS) as err:
            error = _as_review_error(err)
            item = DeadLetter(f"{source}#{review_id}", "read_reviews", error.reason, error.detail[:500])
        yield item


def _invitations(note: Mapping) -> str:
    value = note.get("invitations") or note.get("invitation") or ""
    if isinstance(value, str) and value.startswith("["):
        try:
            parsed = json.loads(value.replace("'", '"'))
        except (ValueError, RecursionError):
            parsed = None
        value = parsed if isinstance(parsed, list) and all(isinstance(v, str) for v in parsed) else value
    return " ".join(as_texts(value, "invitations", split=lambda t: (t,)))


def _replies(
    note: Mapping, note_id: str, source: str, fields: ReviewFields, scope: str | None
) -> Iterator[ReviewInput]:
    """The reviews among a submission note's `details.directReplies` (or `replies`), in the submission's `scope`
    unless they name their own; each reply that cannot be read is a dead letter of its own. Replies the authors
    wrote, and decisions or comments without review text, are not reviews and are passed over; a review reply
    without text is an `empty_review` dead letter."""
    details = note.get("details") if isinstance(note.get("details"), Mapping) else {}
    key = "directReplies" if details.get("directReplies") else "replies"
    replies = details.get(key) or []
    if not isinstance(replies, list):
        raise wrong_type(f"details.{key}", "list of notes", replies)
    for index, reply in enumerate(replies):
        where = f"{source}#{note_id}/{key}[{index}]"
        try:
            if not isinstance(reply, Mapping):
                raise ReviewInputError("unreadable_review", f"a reply that is not an object: {type(reply).__name__}")
            content = as_mapping(reply.get("content"), f"details.{key}.content")
            invitation = _invitations(reply)
            if is_author_note(reply, invitation):
                continue
            has_text = review_text_fields(content, fields, f"details.{key}.content.")
            if not has_text and not (_REVIEW_INVITATION.search(invitation) and review_kind(invitation) == "official"):
                continue  # a decision or comment without review text
            reply = {**reply, "forum": reply.get("forum") or note_id}
            items = list(parse_openreview_note(reply, source, fields, scope))
        except (ReviewInputError, DocumentError, *PARSER_ERRORS) as err:
            error = _as_review_error(err)
            items = [DeadLetter(where, "read_reviews", error.reason, error.detail[:500])]
        yield from items


_SUBMISSION_INVITATION = re.compile(r"/-/(?:Blind_)?Submission$|/-/Submission\b", re.I)


def _note_scope(note: Mapping, content: Mapping, invitation: str, venue: str | None) -> str | None:
    """The venue a note's id belongs to: its invitation's venue path ("NeurIPS.cc/2024/Conference/Submission9"),
    else its `domain` or `venueid`, else the venue it shows ("NeurIPS 2024 poster"); None when it names none."""
    candidates = (invitation.split("/-/")[0], note.get("domain"), _value(content, "venueid"), venue)
    return next((c.strip() for c in candidates if isinstance(c, str) and c.strip()), None)


@_raises_only_review_errors
def parse_openreview_note(
    note: Mapping, source: str, fields: ReviewFields | Sequence[str] | None = None, scope: str | None = None
) -> Iterator[ReviewInput]:
    """One OpenReview note (API v1 or v2, or a flat CSV row): a submission with its replies, or a review. `scope`:
    the venue of a note that names none (a reply under its submission's `details`)."""
    fields = review_fields_of(fields)
    content = note.get("content")
    prefix = "content."
    if not isinstance(content, Mapping):
        content, prefix = note, ""  # the flat CSV export: content fields are columns
    note_id = _identifier(note.get("id"), "id")
    forum = _identifier(note.get("forum"), "forum") or _identifier(note.get("replyto"), "replyto")
    invitation = _invitations(note)
    venue = _text(_value(content, "venue"), f"{prefix}venue")
    year = _year_of(invitation, venue, note.get("cdate"), note.get("tcdate"))
    scope = _note_scope(note, content, invitation, venue) or scope
    titled = _value(content, "title") is not None and _value(content, "abstract") is not None
    is_submission = note_id is not None and (
        forum == note_id or (forum is None and titled) or bool(_SUBMISSION_INVITATION.search(invitation))
    )
    if is_submission:
        yield Submission(
            note_id,
            _text(_value(content, "title"), f"{prefix}title"),
            _text(_value(content, "abstract"), f"{prefix}abstract"),
            year,
            venue or invitation.split("/-/")[0] or None,
            source,
            _authors(_value(content, "authors")),
            scope,
        )
        yield from _replies(note, note_id, source, fields, scope)
        return
    if not note_id or not forum:
        raise ReviewInputError(
            "missing_id", f"a review note needs 'id' and 'forum' (got id={note_id!r}, forum={forum!r})"
        )
    if is_author_note(note, invitation):
        yield DeadLetter(f"{source}#{note_id}", "read_reviews", "not_a_review", f"written by the authors: {invitation}")
        return
    found = review_text_fields(content, fields, prefix)
    if not found:
        yield DeadLetter(f"{source}#{note_id}", "read_reviews", "empty_review", "no field holds review text")
        return
    yield Submission(forum, None, None, year, invitation.split("/-/")[0] or None, source, scope=scope)
    yield _review(note_id, forum, found, review_kind(invitation), year, source, scope)


@_raises_only_review_errors
def parse_disapere(record: Mapping, source: str) -> Iterator[ReviewInput]:
    """A DISAPERE review: its submission (forum id, title, conference) and the review, its sentences joined
    (a sentence's `suffix` is the whitespace after it; none means one space)."""
    meta = as_mapping(record.get("metadata"), "metadata")
    forum = _identifier(meta.get("forum_id"), "metadata.forum_id")
    review_id = _identifier(meta.get("review_id"), "metadata.review_id")
    if not forum or not review_id:
        raise ReviewInputError("missing_id", "a DISAPERE review needs metadata.forum_id and metadata.review_id")
    venue = _text(meta.get("conference"), "metadata.conference")
    year = _year_of(venue)
    yield Submission(forum, _text(meta.get("title"), "metadata.title"), None, year, venue, source, scope=venue)
    sentences = record.get("review_sentences")
    if not isinstance(sentences, list):
        raise wrong_type("review_sentences", "list of sentences", sentences)
    text = disapere_text(sentences)
    yield _review(review_id, forum, [("review", text)], "official", year, source, venue)


def disapere_text(sentences: Sequence[object]) -> str:
    """A DISAPERE review's text: each sentence and the whitespace after it (one space when none is given)."""
    parts = []
    for sentence in sentences:
        entry = as_mapping(sentence, "review_sentences")
        text = as_text(entry.get("text"), "review_sentences.text") or ""
        suffix = as_text(entry.get("suffix"), "review_sentences.suffix") or ""
        parts.append(text + (suffix if suffix else " "))
    return "".join(parts)


# ----------------------------------------------------------------------------- plain-text review exports

_REVIEWER_LINE = re.compile(
    r"^[ \t]*[#*=\-]*[ \t]*(?:Meta[- ]?)?Review(?:er)?"
    r"(?:[ \t]*#[ \t]*\w{1,8}|[ \t]*\d{1,3}|[ _](?=[A-Za-z]*\d)[A-Za-z0-9]{4})\b[^\n]{0,60}$",
    re.M,
)
_PAPER_ID_LINE = re.compile(
    r"^[ \t]*(?:Paper|Submission)[ \t]*(?:ID|Id|Number|#)[ \t]*[:#]?[ \t]*(\S{1,40})[ \t]*$", re.M
)
_PAPER_TITLE_LINE = re.compile(r"^[ \t]*(?:Paper|Submission)[ \t]+Title[ \t]*:[ \t]*(\S[^\n]{0,400}?)[ \t]*$", re.M)
_TEXT_HEADING = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*|\d{1,2}[.)][ \t]*|Q\d{1,2}[.:)]?[ \t]*)?\**[ \t]*"
    r"(?P<name>[A-Z][A-Za-z0-9 ,/&()'\u2019\-]{1,80}?)[ \t]*\**[ \t]*:?[ \t]*\**[ \t]*$"
)
_INLINE_HEADING = re.compile(r"^[ \t]*(?:\d{1,2}[.)][ \t]*)?(?P<name>[A-Z][A-Za-z ,/&'\-]{2,60}?)[ \t]*:[ \t]+(?=\S)")


def _heading_name(line: str) -> tuple[str, int] | None:
    """The normalised field name a line of a text export opens, and where its own text starts; None for a line
    that is not a heading. A heading is a short capitalised line of its own ("2. Strengths:", "## Weaknesses",
    "Summary Of The Paper"), or "Name: text" when the name is a known field or a known non-text field."""
    match = _TEXT_HEADING.match(line)
    if match and len(match.group("name").split()) <= 10 and not line.rstrip().endswith((".", "?", "!")):
        return normalize_field_name(match.group("name")), len(line)
    match = _INLINE_HEADING.match(line)
    if match:
        name = normalize_field_name(match.group("name"))
        if name in _KNOWN_ORDER or name in NOT_REVIEW_TEXT or name.endswith(("_rating", "_score", "_confidence")):
            return name, match.end()
    return None


def text_review_fields(text: str, fields: ReviewFields = ALL_FREE_TEXT) -> list[tuple[str, str]]:
    """A text export's (field name, text) pairs by its headings; what comes before the first heading is
    `review`; fields that are not review text (`ReviewFields`, `is_free_text`) are passed over."""
    found: list[tuple[str, list[str]]] = [("review", [])]
    for line in text.split("\n"):
        heading = _heading_name(line) if line.strip() else None
        if heading is not None:
            name, start = heading
            found.append((name, [line[start:]] if line[start:].strip() else []))
        else:
            found[-1][1].append(line)
    kept = []
    for name, lines in found:
        body = "\n".join(lines).strip()
        if body and fields.reads(name) and (name in _KNOWN_ORDER or fields.only or is_free_text(body, name)):
            kept.append((name, body))
    return kept


def _file_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    for suffix in _COMPRESSION:
        name = name.removesuffix(suffix)
    return name.rsplit(".", 1)[0] if "." in name else name


@_raises_only_review_errors
def parse_text_reviews(
    text: str, source: str, fields: ReviewFields | Sequence[str] | None = None
) -> Iterator[ReviewInput]:
    """A plain-text export of one submission's reviews: the submission (the file's stem, or its "Paper ID"
    line), then one review per "Reviewer #n" block (the whole file when there is none)."""
    fields = review_fields_of(fields)
    paper = _PAPER_ID_LINE.search(text)
    titled = _PAPER_TITLE_LINE.search(text)
    submission_id = paper.group(1) if paper else _file_stem(source)
    year = _year_of(_file_stem(source), source.rsplit("/", 2)[-2] if "/" in source else None)
    yield Submission(submission_id, titled.group(1) if titled else None, None, year, None, source)
    heads = [m.end() for m in (paper, titled) if m]
    text_start = max(heads) if heads else 0
    starts = [m for m in _REVIEWER_LINE.finditer(text)]
    blocks = (
        [
            (
                f"{submission_id}/r{i}",
                text[m.end() : (starts[i + 1].start() if i + 1 < len(starts) else len(text))],
                m.group(0),
            )
            for i, m in enumerate(starts)
        ]
        if starts
        else [(f"{submission_id}/r0", text[text_start:], "")]
    )
    for review_id, block, heading in blocks:
        kind = "meta" if re.search(r"meta", heading, re.I) else "official"
        yield _review(review_id, submission_id, text_review_fields(block, fields), kind, year, source)


# ------------------------------------------------------------------------------------------- any layout


def parse_review_record(
    record: object, source: str, fields: ReviewFields | Sequence[str] | None = None
) -> Iterator[ReviewInput]:
    """A decoded JSON value in any of the layouts; raises `ReviewInputError` (only) for anything else."""
    return _parse_nested(record, source, review_fields_of(fields), 0)


@_raises_only_review_errors
def _parse_nested(record: object, source: str, fields: ReviewFields, depth: int) -> Iterator[ReviewInput]:
    if depth > _MAX_NESTING:
        raise ReviewInputError("too_deep", f"notes nested more than {_MAX_NESTING} lists deep")
    if isinstance(record, list):
        for index, item in enumerate(record):
            yield from _guarded(
                lambda item=item, index=index: _parse_nested(item, f"{source}[{index}]", fields, depth + 1),
                source,
            )
        return
    if not isinstance(record, Mapping):
        raise ReviewInputError("unknown_layout", f"expected a JSON object or list, got {type(record).__name__}")
    if "reviews" in record:
        yield from parse_peerread(record, source, fields)
    elif isinstance(record.get("notes"), list):
        yield from _parse_nested(record["notes"], source, fields, depth + 1)
    elif "review_sentences" in record and isinstance(record.get("metadata"), Mapping):
        yield from parse_disapere(record, source)
    elif "content" in record or "forum" in record:
        yield from parse_openreview_note(record, source, fields)
    else:
        raise ReviewInputError(
            "unknown_layout", f"not a PeerRead file or an OpenReview note: keys {sorted(record)[:8]}"
        )


def _guarded(produce: Callable[[], Iterator[ReviewInput]], source: str) -> Iterator[ReviewInput]:
    """What `produce` yields, then a dead letter in place of any error it raises."""
    try:
        yield from produce()
    except (ReviewInputError, DocumentError, *PARSER_ERRORS) as err:
        error = _as_review_error(err)
        yield DeadLetter(source, "read_reviews", error.reason, error.detail[:500])


# ------------------------------------------------------------------------------------------- reading files

# Counter names (under `reading:`): what reading did to a file that a reader of the run must know.
READING = "reading"
JSON_DUPLICATE_KEYS = f"{READING}:json_duplicate_keys_last_wins"
CSV_DUPLICATE_COLUMNS = f"{READING}:csv_duplicate_columns_last_wins"
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32", "utf-32-bom"),  # before UTF-16's, whose mark it starts with
    (codecs.BOM_UTF32_BE, "utf-32", "utf-32-bom"),
    (codecs.BOM_UTF8, "utf-8-sig", ""),
    (codecs.BOM_UTF16_LE, "utf-16", "utf-16-bom"),
    (codecs.BOM_UTF16_BE, "utf-16", "utf-16-bom"),
)
_SNIFF_BYTES = 4096


def sniff_encoding(data: bytes) -> tuple[str, str]:
    """(codec, what to call it; "" for UTF-8) of a review file: the codec its byte-order mark names; else UTF-16
    without a mark when NUL bytes fill a quarter or more of one byte position of each pair and at most an eighth
    as many of the other (text in Latin script: every character's high byte is NUL); else UTF-8."""
    for mark, codec, name in _BOMS:
        if data.startswith(mark):
            return codec, name
    sample = data[:_SNIFF_BYTES]
    pairs = len(sample) // 2
    even, odd = sample[0 : 2 * pairs : 2].count(0), sample[1 : 2 * pairs : 2].count(0)
    if pairs and odd >= pairs / 4 and even * 8 <= odd:
        return "utf-16-le", "utf-16-le-without-bom"
    if pairs and even >= pairs / 4 and odd * 8 <= even:
        return "utf-16-be", "utf-16-be-without-bom"
    return "utf-8", ""


def decode_review_bytes(data: bytes, source: str, count: CounterFn = no_count) -> str:
    """A review file's text in the encoding `sniff_encoding` finds (counted as `reading:encoding:<name>` when it
    is not UTF-8). Raises `ReviewInputError` (`undecodable_bytes`, naming the encoding tried) when the bytes do not
    decode, or when the text holds NUL characters: a binary file, or a wide encoding without a byte-order mark
    that UTF-8 reads as text with a NUL between letters."""
    codec, name = sniff_encoding(data)
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as err:
        which = name or "UTF-8"
        raise ReviewInputError("undecodable_bytes", f"{source}: not {which} at byte {err.start}: {err.reason}") from err
    if "\x00" in text[:_SNIFF_BYTES]:
        raise ReviewInputError(
            "undecodable_bytes",
            f"{source}: NUL characters in the text read as {name or 'UTF-8'}: a binary file, or UTF-32 without a "
            "byte-order mark",
        )
    if name:
        count(f"{READING}:encoding:{name}", 1)
    return text.removeprefix("\ufeff")


def _format_of(path: str) -> str:
    """csv, jsonl, text or json, by the file's suffix under any compression suffix."""
    lower = path.lower()
    for suffix in _COMPRESSION:
        lower = lower.removesuffix(suffix)
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".jsonl", ".ndjson")):
        return "jsonl"
    if lower.endswith((".txt", ".md", ".text")):
        return "text"
    return "json"


def parse_review_file(
    data: bytes, path: str, fields: ReviewFields | Sequence[str] | None = None, count: CounterFn = no_count
) -> Iterator[ReviewInput]:
    """One input file (JSON, JSONL, CSV or text) into submissions, reviews and dead letters; never raises. What
    reading had to decide is counted under `reading:` (an encoding other than UTF-8, duplicate JSON keys or CSV
    columns: the last one wins, as Python's json and csv.DictReader do)."""
    fields = review_fields_of(fields)
    try:
        text = decode_review_bytes(data, path, count)
    except ReviewInputError as err:
        yield DeadLetter(path, "read_reviews", err.reason, err.detail)
        return
    if not text.strip():
        yield DeadLetter(path, "read_reviews", "empty_file", "the file has no content")
        return
    layout = _format_of(path)
    if layout == "csv":
        yield from parse_review_csv(text, path, fields, count)
        return
    if layout == "jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                yield from _guarded(
                    lambda line=line, number=number: _parse_json(line, f"{path}:{number}", fields, count),
                    f"{path}:{number}",
                )
        return
    if layout == "text":
        yield from _guarded(lambda: parse_text_reviews(text, path, fields), path)
        return
    yield from _guarded(lambda: _parse_json(text, path, fields, count), path)


_ID_COLUMNS = ("id", "forum", "replyto")


def parse_review_csv(
    text: str, path: str, fields: ReviewFields | Sequence[str] | None = None, count: CounterFn = no_count
) -> Iterator[ReviewInput]:
    """A flat CSV export of notes, one note per row (`path:<record number>`, the header's 1), read strictly, so
    that a broken quote never joins rows into one review:
    - a quoted field left open to the end of the file is an `unterminated_quote` dead letter, any other error the
      csv module cannot read past a `bad_csv` one; both name the line the broken record starts on, and the rows
      from there on are unread (where they start again cannot be known);
    - a row with more or fewer fields than the header, or whose `id`, `forum` or `replyto` spans lines (a stray
      quote that a later one closed), is a `bad_csv_row` dead letter; the rows after it are read."""
    fields = review_fields_of(fields)
    csv.field_size_limit(2**31 - 1)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # newline="": the csv module reads line ends
    header: list[str] | None = None
    number = 0
    while True:
        first_line = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as err:
            yield _broken_csv(f"{path}:{number + 1}", first_line, reader.line_num, err)
            return
        if not row:
            continue  # a blank line
        number += 1
        if header is None:
            header = row
            if len(set(header)) < len(header):
                count(CSV_DUPLICATE_COLUMNS, len(header) - len(set(header)))
            continue
        where = f"{path}:{number}"
        lines = f"lines {first_line}-{reader.line_num}" if reader.line_num > first_line else f"line {first_line}"
        if len(row) != len(header):
            detail = f"{len(row)} fields where the header has {len(header)} ({lines}): a stray quote may join rows"
            yield DeadLetter(where, "read_reviews", "bad_csv_row", detail)
            continue
        note = dict(zip(header, row, strict=True))
        spanning = [name for name in _ID_COLUMNS if "\n" in note.get(name, "") or "\r" in note.get(name, "")]
        if spanning:
            detail = f"{spanning[0]!r} spans {lines}: a stray quote joined rows"
            yield DeadLetter(where, "read_reviews", "bad_csv_row", detail)
            continue
        yield from _guarded(lambda note=note, where=where: parse_openreview_note(note, where, fields), where)


def _broken_csv(where: str, first_line: int, last_line: int, err: csv.Error) -> DeadLetter:
    if str(err) == "unexpected end of data":
        detail = f"a quoted field opened in the record on line {first_line} is never closed (read to the end, line "
        return DeadLetter(where, "read_reviews", "unterminated_quote", f"{detail}{last_line}); rows from there unread")
    detail = f"{err} in the record that starts on line {first_line} (read to line {last_line}); rows from there unread"
    return DeadLetter(where, "read_reviews", "bad_csv", detail)


def _parse_json(text: str, source: str, fields: ReviewFields, count: CounterFn = no_count) -> Iterator[ReviewInput]:
    def repeats(_: str, n: int) -> None:  # every repeated key, at any depth, under the one reading counter
        count(JSON_DUPLICATE_KEYS, n)

    try:
        record = decode_json(text, repeats)
    except RecursionError as err:
        raise ReviewInputError("too_deep", "JSON nested deeper than the parser's recursion limit") from err
    except json.JSONDecodeError as err:
        raise ReviewInputError("bad_json", f"{err.msg} at line {err.lineno} column {err.colno}") from err
    except ValueError as err:  # an integer literal past Python's 4,300-digit conversion limit
        raise ReviewInputError("bad_json", str(err)) from err
    yield from parse_review_record(record, source, fields)


def is_review_letter(letter: DeadLetter, path: str) -> bool:
    """Does a dead letter of reading the file at `path` stand for one review (`<path>…#<review>`: an empty, unreadable
    or wrongly typed review), not for the file, a line or row, or a note that is no review (`not_a_review`)?"""
    return letter.stage == "read_reviews" and "#" in letter.source[len(path) :] and letter.reason != "not_a_review"


# ------------------------------------------------------------------------------- ids qualified by their venue

SCOPE_SEPARATOR = ":"
_VENUE_FILLER = frozenset("submitted to under review for at the of proceedings cc org".split())
_YEAR_WORD = re.compile(r"19[89]\d|20[0-4]\d")


def venue_key(venue: str | None) -> str | None:
    """A venue as a short key: its first word that is not a filler word, lower case, and its year ("NeurIPS 2023",
    "NeurIPS.cc/2023/Conference/Submission9", "Submitted to NeurIPS 2023" -> "neurips-2023"; "ICLR2019" ->
    "iclr-2019"); None when it has no word. The key stands for the venue's numbering of its submissions."""
    words = re.findall(r"[a-z]+|\d+", (venue or "").casefold())
    name = next((w for w in words if w.isalpha() and w not in _VENUE_FILLER), None)
    year = next((w for w in words if _YEAR_WORD.fullmatch(w)), None)
    return "-".join(w for w in (name, year) if w) or None


def directory_key(path: str) -> str:
    """The scope of ids whose records name no venue: the name of the file's folder, lower case, every run of other
    characters one "-" (".../NeurIPS_2023/304.json" -> "neurips-2023"); "local" for a file outside any folder."""
    parts = re.split(r"[/\\]", path)
    folder = parts[-2] if len(parts) > 1 else ""
    return re.sub(r"[^0-9a-z]+", "-", folder.casefold()).strip("-") or "local"


def scoped_id(scope: str, local: str) -> str:
    """An id qualified by its scope: `<scope>:<id>` ("neurips-2023:0Iw2dLh8uq")."""
    return f"{scope}{SCOPE_SEPARATOR}{local}"


def local_id(scoped: str) -> str:
    """The id as its source names it, without its scope (a scope holds no ":")."""
    return scoped.split(SCOPE_SEPARATOR, 1)[-1]


def with_scoped_ids(items: Sequence[ReviewInput], path: str) -> list[ReviewInput]:
    """A file's submissions and reviews with their ids qualified by where they come from (`scoped_id`): the venue
    the record names (`venue_key` of its `scope`), else the one another record of its submission in the file
    names, else the file's folder (`directory_key`). Two venues that number their submissions alike (PeerRead's
    "304") keep two submissions and all their reviews; the records of one submission at one venue (its note and
    its reviews, a PeerRead file and review notes naming it) still meet. Dead letters pass as they are."""
    fallback = directory_key(path)
    named: dict[str, str] = {}
    for item in items:
        if isinstance(item, Submission | Review) and venue_key(item.scope):
            named.setdefault(item.submission_id, venue_key(item.scope))

    def scope_of(item: Submission | Review) -> str:
        return venue_key(item.scope) or named.get(item.submission_id, fallback)

    scoped: list[ReviewInput] = []
    for item in items:
        if isinstance(item, Submission):
            item = replace(item, submission_id=scoped_id(scope_of(item), item.submission_id))
        elif isinstance(item, Review):
            scope = scope_of(item)
            item = replace(
                item, review_id=scoped_id(scope, item.review_id), submission_id=scoped_id(scope, item.submission_id)
            )
        scoped.append(item)
    return scoped


def merge_submissions(records: Sequence[Submission]) -> Submission:
    """Several records of one submission (a PeerRead file and review rows naming its forum): the fullest wins,
    field by field, in a fixed order."""
    ordered = sorted(records, key=lambda s: (s.title is None, s.abstract is None, s.source, repr(s)))
    first = ordered[0]
    pick = lambda name: next((getattr(s, name) for s in ordered if getattr(s, name)), getattr(first, name))  # noqa: E731
    return Submission(
        first.submission_id,
        pick("title"),
        pick("abstract"),
        pick("year"),
        pick("venue"),
        first.source,
        pick("authors"),
        pick("scope"),
    )


def stable_fraction(key: str, seed: int = 0) -> float:
    """A number in [0, 1) derived from `key`: the content-derived coin behind split assignment."""
    digest = hashlib.sha1(f"{seed}\x1f{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_for_submission(
    key: str, year: int | None, year_counts: Mapping[str, int], fractions: tuple[float, float], seed: int = 0
) -> str:
    """Train / validation / test by year, about `fractions` = (train, train+validation) of all queries.

    Queries are laid on a line ordered by year (unknown years first); a query's position is where its year's
    block starts plus a content-derived fraction of the block. Older submissions train, the newest test.
    """
    total = sum(year_counts.values())
    if total == 0:
        return "train"
    ordered = sorted(year_counts, key=lambda y: (y != "unknown", y))
    label = str(year) if year is not None else "unknown"
    before = sum(year_counts[y] for y in ordered if (y != "unknown", y) < (label != "unknown", label))
    position = (before + stable_fraction(key, seed) * year_counts.get(label, 1)) / total
    if position < fractions[0]:
        return "train"
    if position < fractions[1]:
        return "validation"
    return "test"
