"""What the mention rules recognise everywhere: years, "et al.", author lists, quoted spans, titles and venues,
in-text markers, and the few helpers that place a mention in the review. No rule decides anything here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from extractors.reviews.mentions.config import MentionConfig
from extractors.reviews.records import PaperMention
from mapping.titles import normalize_title

QUOTED = re.compile(
    r"\u201c([^\u201c\u201d\n]{4,400})\u201d|\"([^\"\n]{4,400})\"|\u2018([^\u2018\u2019\n]{4,300})\u2019"
)
YEAR = re.compile(r"(?<!\d)(?:19[5-9]\d|20[0-3]\d)(?!\d)")
ET_AL = re.compile(r"\bet\s*\.?\s*al\b\.?", re.I)
VENUE_WORDS = re.compile(
    r"\b(?:in\s+proceedings|proceedings|proc\.|conference|conf\.|journal|transactions|trans\.|workshop|symposium|"
    r"arxiv|preprint|corr|neurips|nips|icml|iclr|cvpr|iccv|eccv|acl|emnlp|naacl|aaai|ijcai|kdd|sigir|www|"
    r"colt|aistats|uai|tmlr|jmlr|pmlr|ieee|acm|springer|elsevier|siam|vol\.|volume|pp\.|pages|press|"
    r"icassp|interspeech|miccai|icra|iros|corl|rss|wacv|bmvc|coling|eacl|tacl|findings|cikm|wsdm|icde|"
    r"vldb|sigmod|focs|stoc|soda|sosa|nature|science|annals|letters|review|cham|pmlr|openreview|"
    r"advances\s+in\s+neural)\b",
    re.I,
)
# The capital letters a name may start with, in a character class: ASCII and the Latin-1/Extended-A/B capitals
# ("Émile", "Škvára", "Łukasz").
UPPER = "A-Z" + "".join(c for c in map(chr, range(0xC0, 0x250)) if c.isupper())
NAME = rf"(?:[{UPPER}][a-zA-Z'\u00c0-\u024f\-]+|[A-Z]\.?(?:-[A-Z]\.?)?)"
_AUTHOR_TOKEN = re.compile(
    rf"^(?:[{UPPER}][\w'\u00c0-\u024f\-]*\.?|[A-Z]\.(?:[A-Z]\.)*|van|von|de|der|den|da|di|del|la|le)$"
)
_TITLE_TAIL = re.compile(
    r"(?:[.,]\s+|\s+)(?:in\s*:?\s+(?:proceedings|advances|international|conference|\d{4}|(?-i:[A-Z]{2,}\b))|"
    r"in\s+[A-Z][a-z]+\s+conference|arxiv\b|corr\b|proceedings\b|advances\s+in\s+neural).*$",
    re.I | re.S,
)
STOP = frozenset(
    "a an the of for and or in on to with by from via at as is are be its into over under without towards toward "
    "using through vs versus not do does can".split()
)
# An in-text citation marker: "[3]", "[1, 4-6]", "[a]".
MARKER_IN_TEXT = re.compile(
    r"\[\s*((?:[A-Za-z]{0,3}\d{1,3}[*\u2020']{0,2}|[a-z])(?:\s*[,;\-\u2013]\s*(?:[A-Za-z]{0,3}\d{1,3}[*']{0,2}|[a-z]))*)\s*\]"
)

# Acronyms of the field that never name one work (a kind of model, a practice, a metric): no name mention, no title
# from their expansion ("PSNR (Peak Signal-to-Noise Ratio)").
GENERIC_ACRONYMS = frozenset(
    "SOTA SFT LLM VLM MLLM LM PLM CNN RNN GNN MLP GAN VAE DNN LSTM RL NLP CV AI ML GPU CPU TPU API OOD IID KL MSE "
    "RMSE AUC ROC ECE FID FVD PSNR SSIM LPIPS BLEU ROUGE FLOPs FLOPS QA RAG".split()
)

# A method named with its venue: "MEST (NeurIPS 2021)", "GaP (ICLR 2022, Effective Model Sparsification by ...)".
NAMED_WORK = re.compile(
    r"\b[A-Z][A-Za-z0-9\-]{1,24}\s*\(\s*(?:NeurIPS|NIPS|ICML|ICLR|CVPR|ICCV|ECCV|AAAI|IJCAI|ACL|EMNLP|NAACL|KDD|SIGIR|"
    r"AISTATS|UAI|COLT|TPAMI|JMLR|TMLR|WACV|BMVC|ICRA|IROS|CoRL|MICCAI|ICASSP|COLING|EACL|WSDM|CIKM|WWW)\s*'?"
    r"(?P<year>(?:19|20)?\d{2})(?:\s*,\s*(?P<title>[A-Z][^()\n]{8,200}?))?\s*\)"
)


def split_segments(entry: str) -> list[str]:
    """Split a reference entry at '. ' boundaries, not after initials ("A. Beck") or "et al."."""
    segments, start = [], 0
    for match in re.finditer(r"[.?!]\s+|:\s+", entry):
        before = entry[start : match.start()]
        last = before.rsplit(None, 1)[-1] if before.split() else ""
        if match.group(0).startswith(".") and re.fullmatch(
            r"[A-Z]|[A-Z]\.[A-Z]|vs|pp|vol|no|Proc|Conf|eds?|[A-Z]\.-[A-Z]", last
        ):
            continue
        if match.group(0).startswith(":") and not (
            ET_AL.search(before[-8:])
            or (looks_like_authors(before) and ("," in before or re.search(r"\b[A-Z]\.", before)))
        ):
            continue
        segments.append(entry[start : match.start() + 1].strip())
        start = match.end()
    segments.append(entry[start:].strip())
    return [s.strip(" .,;:") for s in segments if s.strip(" .,;:")]


def looks_like_authors(segment: str) -> bool:
    """An author list: "Pfaff, Tobias, et al", "A. Defazio", "S Shalev-Shwartz, T Zhang", "Khairy and Balaprakash"."""
    et_al = ET_AL.search(segment)
    if et_al:
        before = [w for w in re.split(r"[\s,;&]+", segment[: et_al.start()].replace(" and ", " ")) if w]
        return 0 < len(before) <= 12 and all(_AUTHOR_TOKEN.match(w) for w in before)
    words = [w for w in re.split(r"[\s,;&]+", segment.replace(" and ", " ")) if w]
    if not words or len(words) > 60:
        return False
    if not all(_AUTHOR_TOKEN.match(w) for w in words):
        return False
    has_separator = "," in segment or " and " in segment or "&" in segment
    has_initial = any(re.fullmatch(r"[A-Z]\.?|(?:[A-Z]\.){1,3}|[A-Z]{2}|[A-Z]\.-[A-Z]\.", w) for w in words)
    return (has_separator or has_initial) and len(words) <= 4 * (segment.count(",") + segment.count(" and ") + 1) + 1


def is_venue(segment: str) -> bool:
    """A segment that is a year, or names a venue in a few words ("In Proceedings of ICML", "NeurIPS 2021")."""
    words = segment.split()
    if YEAR.fullmatch(segment.strip("() ")) or re.fullmatch(r"\(?\d{4}[a-z]?\)?", segment.strip()):
        return True
    return bool(VENUE_WORDS.search(segment)) and (len(words) <= 12 or segment.lower().startswith("in "))


def capitalised_share(words: Sequence[str]) -> float | None:
    """The share of content words (not in `STOP`, starting with a letter) that are capitalised; None without any."""
    content = [w for w in words if w.lower() not in STOP and re.match(r"[A-Za-z]", w)]
    return sum(1 for w in content if w[0].isupper()) / len(content) if content else None


def title_like(text: str, config: MentionConfig) -> bool:
    """A title's length in words (`config`), or one long capitalised word (a method's name)."""
    words = normalize_title(text).split()
    return config.min_title_words <= len(words) <= config.max_title_words or (
        len(words) == 1 and len(words[0]) >= 6 and text[:1].isupper()
    )


def clean_title(title: str) -> str:
    """A title as written, without a venue tail, trailing parenthetical, or enclosing punctuation."""
    title = _TITLE_TAIL.sub("", title)
    title = re.sub(r"\s*[(\[]\s*[)\]]", "", title)
    title = re.sub(r"(?<=\w{3})\s*[\[(][^\[\]()]*\b(?:19|20)\d{2}\b[^\[\]()]*[\])]\s*[:\-\u2013].*$", "", title)
    title = re.sub(r"\s*[(\[][^()\[\]]*(?:\bet\s*al|\d{4})[^()\[\]]*$", "", title)
    title = re.sub(r"\s+et\s*al\.?$", "", title)
    title = re.sub(r"\s*[(\[](?:[^()\[\]]*\d{4}[^()\[\]]*|[^()\[\]]*et al[^()\[\]]*)[)\]]\s*$", "", title)
    title = re.sub(
        rf"\s+by\s+{NAME}(?:\s+{NAME})?(?:\s+et\s*al\.?|\s+(?:and|&)\s+{NAME})?\.?(?:,?\s*\(?(?:19|20)\d{{2}}\)?)?$"
        rf"|,\s*{NAME}(?:\s+{NAME})?(?:\s+et\s*al\.?(?:,?\s*\(?(?:19|20)\d{{2}}\)?)?"
        rf"|\s+(?:and|&)\s+{NAME}\.?,?\s*\(?(?:19|20)\d{{2}}\)?|\.?(?:,?\s*\(?(?:19|20)\d{{2}}\)?)?)$",
        "",
        title,
    )
    return title.strip(" \t.,;:\u201c\u201d\"'`")


def looks_like_prose(body: str) -> bool:
    """A sentence rather than a title or an entry: long, or with a verb or a pronoun near its start."""
    return len(body.split()) > 30 or bool(re.search(r"\b(?:is|are|was|should|could|would|we|I)\b", body[:80]))


def cut_venue(title: str) -> str:
    """ "Title. SIAM J. Imaging Sci. 10(2): 449-483 (2017)" -> "Title": a quoted reference keeps only its title."""
    segments = split_segments(title)
    if len(segments) > 1 and all(
        is_venue(seg) or re.search(r"\d+\s*\(\d+\)|\d+\s*[-\u2013]\s*\d+|\b(?:J|Sci|Lett|Rev)\b", seg)
        for seg in segments[1:]
    ):
        return segments[0]
    return title


# ------------------------------------------------------------------------------- placing a mention in the text


def overlaps(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    """Does `[start, end)` overlap any of `spans`?"""
    return any(start < e and s < end for s, e in spans)


def section_at(sections: Sequence[tuple[int, str]], offset: int) -> str | None:
    """The review field (`sections`: (start offset, name) pairs in text order) that `offset` lies in."""
    found = None
    for start, name in sections:
        if start <= offset:
            found = name
    return found


def mention_text(text: str, limit: int = 400) -> str:
    """A mention's text as stored: whitespace folded, at most `limit` characters."""
    return re.sub(r"\s+", " ", text).strip()[:limit]


def mention_at(
    text: str, start: int, end: int, source: str, sections: Sequence[tuple[int, str]], **found: object
) -> PaperMention:
    """A mention of `text[start:end]` found by the rule `source`, in the review field it starts in."""
    return PaperMention(start, end, mention_text(text[start:end]), source, section=section_at(sections, start), **found)


@dataclass(frozen=True)
class ReviewText:
    """A cleaned review text as the prose rules read it: its fields (`sections`), the rule parameters, and the
    spans of its reference entries (`claimed`), which no prose mention may overlap."""

    text: str
    sections: tuple[tuple[int, str], ...]
    config: MentionConfig
    claimed: tuple[tuple[int, int], ...] = ()

    def is_claimed(self, start: int, end: int) -> bool:
        return overlaps(start, end, self.claimed)

    def mention(self, start: int, end: int, source: str, **found: object) -> PaperMention:
        """A mention of `text[start:end]` found by the rule `source`, in the review field it starts in."""
        return mention_at(self.text, start, end, source, self.sections, **found)
