"""Classification: is a mentioned paper `recommended`, `already_cited` or `discussed`?

A mention that matches the submission's own bibliography (same arXiv id or DOI, or title LCS >= 0.9) is
`already_cited`; a work named by name that the submission's own title or abstract writes (`Bibliography.names`)
is `discussed` (`named_by_submission`: "borrowed from previous work, VampNet" where the abstract says "built by
finetuning VampNet"). Otherwise it is `recommended` when the sentence around it (for a reference entry: the sentences
that use its marker, the sentence that introduces the list, or by default, since a reviewer's reference list
points the authors to literature) carries a request cue ("missing", "should cite", "compare with", "related
work", ...) and no cue that the submission already uses it ("the authors use [3]", "as in [3]"); mentions in
the review's summary of the paper need a strong cue. A work named by name ("such as LoRA", `names.py`) needs a
request mood besides the lead that names it (`_ASKING`: "should", "could you", "how does it compare", "did not
compare"), or a strong cue ("related work" only before the name); an author-year citation without a strong cue is
recommended on the same request mood (`request_mood`), unless what the submission uses or reports over comes last
before it. Contractions read as the cues' negations ("didn't compare" as "did not compare"; not a modal's:
"shouldn't the caption be ...?"). The rest is `discussed`. `reason` names the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from extractors.reviews.mentions.config import DEFAULT_CONFIG, MentionConfig
from extractors.reviews.mentions.names import NAME_SOURCE
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, RECOMMENDED, PaperMention
from mapping.matcher import lcs_similarity
from mapping.names import mention_name_keys, title_name_key
from mapping.titles import normalize_title

# Request cues: the reviewer asks for the paper to be cited, discussed or compared with.
# "the related work", "prior methods": a request cue, but for a work named by name only when it comes before the name
# ("the previous work SEG"; not "including LLaMA and OPT, ... over existing pruning methods").
_RELATED_WORKS = (
    r"(?:relevant|related|prior|previous|existing|important|key|seminal|recent)\s+(?:\w+\s+)?"
    r"(?:works?|papers?|literature|references?|studies|approaches|methods)"
)
# What a "missing"/"lacks" cue may be about besides works ("missing standard deviations", "lacks details").
_NOT_WORK_OBJECT = (
    r"\s+(?:(?:the|a|an|any|some|proper|clear|more)\s+)?(?:\w+\s+)?(?:standard\s+deviations?|error\s+bars?|"
    r"confidence\s+intervals?|details?|explanations?|definitions?|proofs?|descriptions?|hyper-?parameters?|code|"
    r"statistical|variances?|seeds?|units?|labels?|legends?|captions?|intuitions?|motivations?|justifications?|"
    r"ablations?|clarity|notations?)\b"
)
_STRONG_BUT_RELATED = re.compile(
    r"\b(?:(?:miss(?:es|ed|ing)?|lacks?|lacking|lacked)\b(?!"
    + _NOT_WORK_OBJECT
    + r")|omit(?:s|ted)?|overlook(?:s|ed)?|neglect(?:s|ed)?|ignor(?:es|ed|ing)|"
    r"not\s+(?:been\s+)?(?:cited|discussed|mentioned|compared|included|referenced|considered|acknowledged|aware)|"
    r"(?:no|without)\s+(?:discussion|comparison|mention|citation|reference)s?|"
    r"(?:should|must|(?:need|needs|have|has|ought)\s+to)\s+(?:also\s+)?(?:cite|be\s+cited|discuss|compare|mention|refer|include|acknowledge|consider|add|review|be\s+compared|be\s+discussed|be\s+mentioned)|"
    r"(?:consider|recommend|suggest|encourage)\w*\s+(?:\w+\s+){0,3}(?:citing|cite|discuss|compar|adding|including|mention|referenc|looking|reading|the\s+following)|"
    r"(?:has|have)\s+(?:(?:already|also|long|extensively|widely)\s+)*been\s+(?:\w+\s+)?(?:proposed|studied|explored|"
    r"investigated|shown|done|considered|introduced|addressed|established|demonstrated|developed)|"
    r"(?:has|have)\s+(?:already\s+)?existed|(?:do|does)\s+(?:already\s+)?exist\b|"
    r"see\s+(?:also|e\.g\.|for\s+example|for\s+instance)|closely\s+related|highly\s+relevant|similar\s+(?:to|idea|approach|work)|"
    r"(?:seems?|appears?|looks?)\s+(?:to\s+be\s+)?(?:quite\s+|very\s+|highly\s+|strongly\s+)?related|"
    r"should\s+(?:also\s+)?be\s+\w+\s+and\s+(?:cited|compared|discussed|mentioned)|"
    r"not\s+(?:new|novel|the\s+first)|novelty|references?\s*:)",
    re.I,
)
_STRONG_REQUEST = re.compile(rf"{_STRONG_BUT_RELATED.pattern}|\b{_RELATED_WORKS}", re.I)
# A citation pointed at, right before it: "(see Ba et al)", "see, e.g., Smith et al. (2020)".
_SEE_BEFORE = re.compile(r"\bsee(?:\s+(?:also|e\.g\.|for\s+example|for\s+instance|in\s+particular))?[\s,:(]*$", re.I)
# For a work named by name, "similar to" counts only as the name's own lead ("similar to CARE"), not anywhere in
# the sentence ("similar to that of CLIP; CLIP uses more data than ImageNet 22k").
_NAME_STRONG = re.compile(_STRONG_BUT_RELATED.pattern.replace(r"similar\s+(?:to|idea|approach|work)|", ""), re.I)
# Before a name in a weakness or a question: other works exist or are in use ("there are more complex benchmarks,
# e.g. MuJoCo", "numerous benchmarks are available, such as MT-Bench", "such as ORR ... are increasingly popular").
_ALTERNATIVES = re.compile(
    r"\bthere\s+(?:are|exist|is)\s+(?:\w+\s+){0,6}?(?:works?|methods|approaches|benchmarks|datasets|baselines|models|"
    r"papers|studies|alternatives|techniques|algorithms)\b|"
    r"\b(?:are|is)\s+(?:also\s+)?(?:available|(?:becoming\s+)?(?:increasingly\s+|more\s+and\s+more\s+)?popular)\b",
    re.I,
)
_RELATED_WORKS_BEFORE = re.compile(rf"\b{_RELATED_WORKS}|\bsimilar\s+to\s*$", re.I)
# Before a name: what the submission reports over it ("outperforms prior methods such as X") or what is its own
# ("your baselines such as X", "the considered LLMs only include X", right before the name; not "how does your
# method compare to approaches such as X"): the name is already in the paper.
_RESULT_OVER = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat(?:s|ing)?|rival\w*|improv\w*|better\s+than|superior\s+to|perform(?:s|ed|ing)?|"
    r"advantages?\s+over|gains?\s+over|achiev\w*)\b",
    re.I,
)
_OWN_WORKS = re.compile(
    r"\b(?:(?:your|their|its)\s+(?:\w+\s+)?|the\s+(?:considered|used|chosen|selected|evaluated|tested)\s+)"
    r"(?:baselines?|models?|methods?|datasets?|benchmarks?|LLMs|backbones?)\b"
    r"(?:\s+(?:only|also|are|were|used|chosen))*[\s,:(]*(?:such\s+as|like|e\.g\.,?|i\.e\.,?|including|includes?|"
    r"namely)?[\s,:(]*$",
    re.I,
)
_WEAK_REQUEST = re.compile(
    r"\b(?:should|could|would|might|may\s+want|need(?:s|ed)?\s+to|must|please|worth|recommend\w*|suggest\w*|"
    r"encourage\w*|consider\w*|compar\w*|discuss\w*|cite|citing|citation|mention\w*|relat\w*|relevant|baselines?|"
    r"e\.g(?=\.)|such\s+as|for\s+(?:example|instance)|like|see(?!\s+(?:the\s+)?(?:tables?|fig\w*|sections?|sec|eqs?|equations?|appendix|lines?|pages?|above|below))|other|alternative|instead|previous(?:ly)?|prior|existing|recent\w*|"
    r"following|below|above|these|works?|papers?|(?:useful|helpful|beneficial|nice|good|interesting|important|"
    r"necessary|valuable)\s+to|point(?:s|ing)?\s+to|refer(?:s|ring)?\s+to|look(?:ing)?\s+(?:at|into)|aware\s+of)\b",
    re.I,
)
# A sentence that goes on from the one before it, giving an example of what that one said was missing or already
# done ("... there are a number of works with a similar approach. A preprint titled '...' is one of the examples.",
# "... has been proposed by a couple of recent papers. First Liang et al, in "...", use ...").
_GOES_ON = re.compile(
    r"\b(?:examples?|instance|e\.g|such\s+as|first(?:ly)?|second(?:ly)?|another|also|one\s+of)\b", re.I
)
# A request in the sentence before a bare citation ("... for comparison. (See Lacroix et al. "Title." ICML.)").
_ASKS = re.compile(
    r"\b(?:should|could|would|please|consider\w*|suggest\w*|recommend\w*|compar\w*|cite|discuss\w*|see)\b", re.I
)
# A request mood: what a work named by name needs in its sentence besides the lead that names it ("such as", "like"
# give examples in any sentence; "... should compare with methods such as X" asks for X). A bare "would"/"could" is
# not one ("(e.g. GAIL) could help alleviate this issue"): a suggestion ("it would be better", "I would include"),
# a question to the authors ("could you", "how does it compare") or an absence ("did not compare", "does not report
# ... such as X", "why does the paper not include a comparison with X") is.
_ASKING = re.compile(
    r"\b(?:should|must|please|worth\s+(?:\w+\s+)?(?:compar|discuss|cit|mention|includ|consider|add|explor|investigat|"
    r"check|look|try|test|evaluat)\w*|recommend\w*|suggest\w*|encourage\w*|consider\w*|need(?:s|ed)?\s+to|"
    r"may\s+want|(?:would|could)\s+(?:(?!not\b|never\b)\w+\s+){0,2}?(?:be|have|like|strengthen|improve|benefit|make|include|"
    r"add|compare|see)\b|(?:could|would|can)\s+(?:you|the\s+authors?)|(?:is|be|been)\s+(?:much\s+)?better\s+to|"
    r"how\s+(?:does|do|did|would|about|is|are)|how's|what\s+about|why\s+not|(?:did|have|has)\s+the\s+authors?|"
    r"how\s+(?:\w+\s+){1,4}?(?:perform|compare|differ)\w*|what\s+(?:is|are)\s+the\s+differences?|"
    r"(?:does|do|did)\s+(?:(?:the\s+)?(?:paper|authors?|submission|work|manuscript|they)\s+)?not\s+(?:\w+\s+)?"
    r"(?:compare|discuss|cite|mention|include|consider|report|evaluate|reference|acknowledge))\b",
    re.I,
)
# "didn't", "doesn’t": the cues read "did not" (not a modal's: "shouldn't the caption be ...?" asks nothing).
_CONTRACTED = re.compile(r"\b(did|does|do|has|had|have|is|are|was|were)n['\u2019]t\b", re.I)
_USED_BY_SUBMISSION = re.compile(
    r"\b(?:(?:the\s+)?authors?\s+(?:use|uses|used|follow|follows|followed|adopt|adopts|adopted|build|builds|built|"
    r"extend|extends|extended|cite|cites|cited|rely|relies|borrow|borrows|apply|applies|applied|leverage|leverages)|"
    r"(?:the\s+)?(?:paper|submission|manuscript|work)\s+(?:uses|used|follows|adopts|builds|extends|cites|cited|relies|"
    r"applies|leverages|compares)|"
    r"already\s+(?:cited|discussed|compared|mentioned|included)|(?:is|are)\s+(?:cited|discussed)\s+in\s+the\s+paper|"
    r"(?:is|are|was|were|being)\s+(?:\w+\s+)?(?:based\s+on|inspired\s+by)|following\s+\[)",
    re.I,
)
# Mentions of a whole title in running text (`spotting.DATABASE_TITLE`: a database title found in it).
_TITLED_IN_PROSE = ("quoted_title", "prose_title", "database_title")
_SUMMARY_SECTIONS = frozenset({"summary", "summary_of_the_paper", "paper_summary", "summary of the paper"})
# A review's praise: a work named by name there is an aside ("not merely an application of methods such as X").
_PRAISE_SECTIONS = frozenset({"strengths", "strength", "pros"})
# What the submission did with what follows ("When you compared ... with baselines, e.g., X").
_SUBMISSION_DID = re.compile(
    r"\b(?:you|they|the\s+authors?|the\s+paper)\s+(?:have\s+|had\s+)?(?:compared|used|evaluated|tested|considered|"
    r"adopted|employed|chose|included)\b",
    re.I,
)


@dataclass(frozen=True)
class Bibliography:
    """What the submission itself cites, for telling 'already cited' from 'missing'; and what it writes about itself
    (`own_text`: its title and abstract), for telling a work it already names from one a reviewer adds."""

    titles: tuple[str, ...] = ()
    arxiv_ids: frozenset[str] = field(default_factory=frozenset)
    dois: frozenset[str] = field(default_factory=frozenset)
    source: str = ""  # where it came from: own_paper | database (`extractors.reviews.bibliographies`)
    own_text: str = ""  # the submission's title and abstract; not a bibliography (`known` does not look at it)

    @property
    def known(self) -> bool:
        return bool(self.titles or self.arxiv_ids or self.dois)

    def names(self, mention: PaperMention) -> bool:
        """Does the submission's own title or abstract write this work's name, as a whole token ("VampNet" in
        "WhAM is built by finetuning VampNet"; not "LOCO" in "R-LOCO"), case and all? Only for works named by
        name: a title or an author-year is not told apart by a word of the abstract."""
        name = mention.text.strip()
        if mention.source != NAME_SOURCE or not name or not self.own_text:
            return False
        return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", self.own_text) is not None

    def cites(self, mention: PaperMention, min_similarity: float) -> bool:
        if mention.arxiv_id and mention.arxiv_id in self.arxiv_ids:
            return True
        if mention.doi and mention.doi in self.dois:
            return True
        if mention.source == NAME_SOURCE:  # "GroupViT" is cited when a reference's title is "GroupViT: ..."
            keys = set(mention_name_keys(mention.text))
            return bool(keys) and any(title_name_key(t) in keys for t in self.titles)
        title = normalize_title(mention.title)
        if len(title) < 8:
            return False
        return any(lcs_similarity(title, normalize_title(t)) >= min_similarity for t in self.titles)


NAMED_BY_SUBMISSION = "named_by_submission"  # the reason of a name the submission's title or abstract writes
NO_BIBLIOGRAPHY = Bibliography()  # the submission's own bibliography unknown: nothing is `already_cited`


def _last_is_use(before: str) -> bool:
    """Is the last cue before a name one that the submission uses or compares with what follows ("Although the
    paper compares with methods like RoPE, ...": yes; "The authors use X but should compare with Y": not for Y)?"""
    uses = [m.end() for pattern in (_USED_BY_SUBMISSION, _SUBMISSION_DID) for m in pattern.finditer(before)]
    if not uses:
        return False
    asks = [m.end() for pattern in (_STRONG_REQUEST, _ASKING) for m in pattern.finditer(before)]
    return max(uses) > max(asks, default=-1)


def _asks_for(own: str, before: str) -> bool:
    """Does a sentence ask for the work it names, as a work named by name is asked for: a request mood ("could you
    compare with Smith et al.", "I would like to see the comparison with Tang et al. 2017") that is not about what the
    submission itself uses or reports over ("the authors use Smith et al. (2020) ... should explain")?"""
    if not _ASKING.search(own):
        return False
    return not (_last_is_use(before) or _OWN_WORKS.search(before) or _RESULT_OVER.search(before))


def classify_mention(
    mention: PaperMention, bibliography: Bibliography = NO_BIBLIOGRAPHY, config: MentionConfig = DEFAULT_CONFIG
) -> PaperMention:
    """The mention with its `kind` and the rule that decided it (`reason`)."""
    if bibliography.known and bibliography.cites(mention, config.already_cited_similarity):
        return replace(mention, kind=ALREADY_CITED, reason="in_submission_bibliography")
    if bibliography.names(mention):
        return replace(mention, kind=DISCUSSED, reason=NAMED_BY_SUBMISSION)
    own, _, intro = _CONTRACTED.sub(r"\1 not", mention.context).partition(" || ")
    before = own[: max(own.find(mention.text), 0)]  # the sentence up to the mention
    used = _USED_BY_SUBMISSION.search(own)
    strong = _STRONG_REQUEST.search(own) or _STRONG_REQUEST.search(intro)
    in_summary = (mention.section or "").lower() in _SUMMARY_SECTIONS
    if mention.source == NAME_SOURCE:
        if _last_is_use(before) or (used and not _STRONG_REQUEST.search(own)):
            return replace(mention, kind=DISCUSSED, reason="used_by_submission")
        aside = in_summary or (mention.section or "").lower() in _PRAISE_SECTIONS
        asking = not aside and _ASKING.search(own)
        if _OWN_WORKS.search(before) or (_RESULT_OVER.search(before) and not asking and not _NAME_STRONG.search(own)):
            return replace(mention, kind=DISCUSSED, reason="used_by_submission")
        if _NAME_STRONG.search(own) or (not aside and _RELATED_WORKS_BEFORE.search(before)):
            return replace(mention, kind=RECOMMENDED, reason="request_cue")
        if asking or (not aside and _ALTERNATIVES.search(own)):
            return replace(mention, kind=RECOMMENDED, reason="request_cue")
        return replace(mention, kind=DISCUSSED, reason="in_summary" if aside else "no_request_cue")
    if mention.source == "reference_entry":
        if used and not _STRONG_REQUEST.search(own):
            return replace(mention, kind=DISCUSSED, reason="used_by_submission")
        if in_summary and not strong:
            return replace(mention, kind=DISCUSSED, reason="in_summary")
        return replace(mention, kind=RECOMMENDED, reason="request_cue" if strong else "reviewer_reference_list")
    if mention.source == "marker":
        # A bare marker mostly points into the submission's own bibliography ("following the previous works [9]"):
        # only a cue that the work is missing, should be cited or compared, or is similar counts, not "prior work".
        if in_summary or (used and not _STRONG_BUT_RELATED.search(own)):
            return replace(mention, kind=DISCUSSED, reason="in_summary" if in_summary else "used_by_submission")
        if _STRONG_BUT_RELATED.search(own):
            return replace(mention, kind=RECOMMENDED, reason="request_cue")
        return replace(mention, kind=DISCUSSED, reason="no_request_cue")
    if used and not _STRONG_REQUEST.search(own):
        return replace(mention, kind=DISCUSSED, reason="used_by_submission")
    strong = _STRONG_REQUEST.search(own) or (len(own) < len(mention.text) + 40 and _STRONG_REQUEST.search(intro))
    if in_summary:
        if strong:
            return replace(mention, kind=RECOMMENDED, reason="request_cue")
        return replace(mention, kind=DISCUSSED, reason="in_summary")
    if strong:
        return replace(mention, kind=RECOMMENDED, reason="request_cue")
    if mention.source == "author_year" and _SEE_BEFORE.search(before):
        return replace(mention, kind=RECOMMENDED, reason="see_cue")
    if mention.source == "author_year" and _asks_for(own, before):
        return replace(mention, kind=RECOMMENDED, reason="request_mood")
    if _WEAK_REQUEST.search(own) and mention.source not in ("author_year", "named_work"):
        return replace(mention, kind=RECOMMENDED, reason="weak_request_cue")
    if mention.source in _TITLED_IN_PROSE and len(own) < len(mention.text) + 80 and _ASKS.search(intro):
        return replace(mention, kind=RECOMMENDED, reason="request_cue_before")
    if mention.source in _TITLED_IN_PROSE and _GOES_ON.search(own) and _STRONG_REQUEST.search(intro):
        return replace(mention, kind=RECOMMENDED, reason="request_cue_before")
    return replace(mention, kind=DISCUSSED, reason="no_request_cue")
