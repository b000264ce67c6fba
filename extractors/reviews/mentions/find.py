"""The mention rules end to end: every paper one review mentions, found, placed in context and classified."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from extractors.reviews.mentions.classify import NO_BIBLIOGRAPHY, Bibliography, classify_mention
from extractors.reviews.mentions.config import DEFAULT_CONFIG, MentionConfig
from extractors.reviews.mentions.context import context_for
from extractors.reviews.mentions.decision import MODEL, RULES, decide_review, decision_status
from extractors.reviews.mentions.learned import add_free_names, decide_names, load_model
from extractors.reviews.mentions.markers import add_markers
from extractors.reviews.mentions.names import add_names
from extractors.reviews.mentions.prose import add_author_years, add_identifiers, add_named_works, add_prose_titles
from extractors.reviews.mentions.quoted import quoted_title_mentions
from extractors.reviews.mentions.references import reference_mentions
from extractors.reviews.mentions.shapes import ReviewText
from extractors.reviews.mentions.spotting import DatabaseTitleSpotter, merge_spotted
from extractors.reviews.records import PaperMention
from mapping.records import CounterFn, no_count


def find_mentions(
    text: str,
    sections: Sequence[tuple[int, str]] = (),
    config: MentionConfig = DEFAULT_CONFIG,
    count: CounterFn = no_count,
    spotter: DatabaseTitleSpotter | None = None,
) -> list[PaperMention]:
    """Every paper mention in a cleaned review text, in text order, each with its context, before classification.

    `sections` gives (character offset, field name) pairs, so that a mention knows which review field it
    is in (a summary of the paper mentions what the paper builds on, not what it misses). Reference entries are
    found first; the prose rules then look only outside them, in turn, each joining what it finds to an earlier
    mention or skipping what overlaps one as its docstring says. With a `spotter`, the database's titles found in
    the text are merged in last (`spotting.merge_spotted`).
    """
    entries = reference_mentions(text, sections, config, count)
    review = ReviewText(text, tuple(sections), config, claimed=tuple((m.start, m.end) for m in entries))
    prose = quoted_title_mentions(review)
    for add in (add_prose_titles, add_identifiers, add_author_years, add_named_works, add_names):
        prose = add(prose, review)
    prose = add_markers(prose, review, entries)
    mentions = sorted([*entries, *prose], key=lambda m: (m.start, m.end))
    if spotter is not None:
        spots = spotter.spot(text)
        count("database_titles_spotted", len(spots))
        mentions = merge_spotted(text, mentions, spots, sections, spotter.matcher)
    return [replace(m, context=context_for(text, m, config)) for m in mentions]


def extract_review_mentions(
    text: str,
    sections: Sequence[tuple[int, str]] = (),
    bibliography: Bibliography = NO_BIBLIOGRAPHY,
    config: MentionConfig = DEFAULT_CONFIG,
    count: CounterFn = no_count,
    spotter: DatabaseTitleSpotter | None = None,
) -> list[PaperMention]:
    """Find and classify every paper mention of one (cleaned) review text (with a `spotter`, the database's titles
    in it too). Who decides which are recommended (`count`s `decided_by:model|rules` once per review): with
    `config.decision` "model", the learned decision over the rules' mentions and the free names (`decision.py`),
    or the rules where its encoder cannot run (`decision_status`); else the rules, and with `config.name_model`
    the names found anywhere decided by the learned name model (`learned.py`)."""
    found = [classify_mention(m, bibliography, config) for m in find_mentions(text, sections, config, count, spotter)]
    decided_by = RULES
    if config.decision == MODEL and not decision_status():
        found = decide_review(add_free_names(text, sections, found, config, bibliography))
        decided_by = MODEL
    elif config.name_model:
        model = load_model(config.name_model, config.name_model_weights)
        found = decide_names(text, add_free_names(text, sections, found, config, bibliography), model)
    count(f"decided_by:{decided_by}", 1)
    for mention in found:
        count(f"mentions:{mention.source}", 1)
        count(f"mentions_kind:{mention.kind}", 1)
    return found


def mention_key(review_id: str, mention: PaperMention) -> str:
    """A content-derived mention id: the review and where in the cleaned text the mention is."""
    digest = hashlib.sha1(f"{review_id}\x1f{mention.start}\x1f{mention.text}".encode()).hexdigest()[:16]
    return f"{review_id}#{digest}"
