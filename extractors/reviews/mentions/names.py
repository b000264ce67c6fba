"""Works a reviewer names instead of citing: "compare with LoRA", "baselines such as DinoV2, BGE or NV-Embed",
"the previous work Smoothed Energy Guidance (SEG)".

A small grammar, not a list of names. A *name* is a token shaped as a coined name, not a word: inner capitals
("DinoV2", "GloVe", "U-ViT", "BGE"), letters with digits ("Word2Vec", "Places365", "EDM2"), or a capitalised word
that is not a document part ("Table", "Section") or a function word; a run of up to three such tokens ("Qwen 2.5
3B", "Katz Index"), or a Title Case run that its bracketed acronym spells ("Smoothed Energy Guidance (SEG)"). A
name is a mention only in a *work slot*: right after a lead that introduces works ("such as", "like", "e.g.",
"including", "especially", "compare(d) (it) with/to/against", "comparison with/between", "differs from",
"discussion of/with", "similar to", "the previous/prior/existing work(s)", "missing reference to/of"), and the names
listed after it with ",", "/", "or", "and", "+". A name that is a class of methods, not one work, is not taken: an
acronym's plural ("LLMs", "GNNs"), or a name followed by "-based", "-like", "-style" or a class noun ("Transformer
models", "GNN methods").

Whether the slot asks for the work (recommended) or only names it is the classification's (`classify.py`), as for
any other mention; a name carries no title (a name is not a title) and resolves through the database titles'
heads (`mapping.names`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from extractors.reviews.mentions.shapes import GENERIC_ACRONYMS, ReviewText, is_venue, overlaps
from extractors.reviews.records import PaperMention

NAME_SOURCE = "name"

# What introduces works: an example cue, a comparison, a discussion, or "the previous work".
_LEAD = re.compile(
    r"(?<!\bI\s)(?<!\bwe\s)(?<!\byou\s)(?<!\bthey\s)(?<!\bwould\s)"  # "like" as a verb is no lead
    r"\b(?:such\s+as|like|e\.\s?g\.|including|includes?|especially|particularly|namely|"
    r"(?:compar(?:e|es|ed|ing)|contrast(?:s|ed|ing)?|benchmark(?:s|ed|ing)?)"
    r"(?:\s+(?:it|itself|them|themselves|this|these|against|(?:the|their|our|your|its)\s+(?:\w+\s+)?(?:method|model|"
    r"approach|results?|performance|framework|algorithm|work|system)s?))?\s+(?:with|to|against|versus|vs\.?)|"
    r"(?:methods|models|approaches|baselines|works|algorithms|architectures|systems)\s*\(|"
    r"superior\s+to|better\s+than|outperforms?|differences?\s+(?:between|from|to|with)|differ(?:s|ed|ent)?\s+from|"
    r"comparisons?\s+(?:\w+\s+){0,2}?(?:with|to|against|versus|vs\.?|between)|(?:discussions?|discuss(?:es|ed|ing)?)\s+"
    r"(?:(?:with|of|about|on)\s+)?|relat(?:e|es|ed|ion)\s+to|similar\s+to|"
    r"(?:previous|prior|existing|related|recent|concurrent|earlier)\s+(?:works?|methods?|approaches|papers?)|"
    r"baselines?\s*(?::|would\s+be|(?:is|are)\s+(?:missing|needed))|"
    r"(?:missing|no|lack\s+of(?:\s+a)?)\s+(?:references?|citations?)\s+(?:to|of|for)|(?:add|adding|include|including|consider|"
    r"considering|cite|citing|mention(?:ing)?)(?:\s+(?:also|the|a))?)"
    r"(?:\s*,)?(?:\s+|(?<=\())(?:the\s+|a\s+|an\s+)?",
    re.I,
)
# A token shaped as a coined name, and the words a name may run over (a version: "Qwen 2.5 3B", "H2RBox v2").
_TOKEN = r"[A-Za-z][A-Za-z0-9]*(?:[-.+][A-Za-z0-9]+)*"
_VERSION = re.compile(r"v?\d+(?:\.\d+)*[A-Za-z]?|[A-Z]{1,2}\d*")
_WORD = re.compile(rf"[ \t]?(?P<word>{_TOKEN}|\d+(?:\.\d+)*[A-Za-z]?)(?![A-Za-z0-9\-])")
_ACRONYM = re.compile(r"\s*\((?P<acronym>[A-Z][A-Za-z]{1,9})\)")
_SEPARATOR = re.compile(r"\s*(?:\[\d{1,3}\]\s*)?(?:,\s*(?:and\s+|or\s+)?|/|\s+or\s+|\s+and\s+|\s*\+\s*)")
_DOCUMENT_PARTS = frozenset(
    "table tables fig figure figures section sections sec appendix eq eqs equation equations line lines theorem "
    "lemma proposition corollary definition algorithm assumption remark example page pages chapter step".split()
)
_FUNCTION_WORDS = frozenset(
    "the a an this that these those it its they their them we our you your he she his her i in on at of for to "
    "with by from as and or but if when while which who what how why where there here some any all each every "
    "more most less other another such no not also only just even very than".split()
)
# Words that may follow a name: a verb's auxiliary, or the noun that says the name is a dataset's.
_MAY_FOLLOW = _FUNCTION_WORDS | frozenset(
    "is are was were be been being has have had does do did can could would should will may might must "
    "benchmark benchmarks dataset datasets paper papers".split()
)
# After a name, what makes it a class of methods rather than one work.
_CLASS_AFTER = re.compile(
    r"[-\s]?(?:based|like|style|type|driven|inspired|family|families|variants?|methods?|models?|approaches|"
    r"architectures?|techniques?|algorithms?|frameworks?|networks?|layers?|modules?|losses|objectives?|"
    r"metrics?|scores?)\b",
    re.I,
)


# The kinds of thing that a list of names can be besides works ("metrics such as RMSE", "engines such as vLLM").
_NOT_WORKS_BEFORE = re.compile(
    r"\b(?:metrics?|measures?|scores?|statistics|losses|hyperparameters?|parameters?|settings?|libraries|library|"
    r"engines?|tools?|languages?|hardware|GPUs|formats?|attacks?)\s*(?:\(|,)?\s*$",
    re.I,
)


def _coined(token: str) -> bool:
    """Is one token shaped as a coined name rather than an English word?"""
    if re.fullmatch(r"[A-Z]{2,}s", token) or len(token) < 2 or token in GENERIC_ACRONYMS:  # a class ("LLMs"); "M"
        return False
    if re.fullmatch(r"\d+(?:\.\d+)*[A-Za-z]{0,2}", token):  # a quantity: "7B", "24k", "1.5M"
        return False
    if re.fullmatch(r"[A-Z][a-z]+(?:ian|ean)", token):  # an adjective of a name: "Gaussian", "Euclidean"
        return False
    if _CLASS_AFTER.fullmatch("-" + token.rsplit("-", 1)[-1]) and "-" in token:  # "CLIP-inspired"
        return False
    if is_venue(token):  # "a conference like NeurIPS"
        return False
    letters = token.replace("-", "").replace(".", "").replace("+", "")
    inner_capital = any(c.isupper() for c in letters[1:])
    has_digit = any(c.isdigit() for c in letters) and any(c.isalpha() for c in letters)
    if inner_capital or has_digit:
        return True
    return token[:1].isupper() and token.lower() not in _FUNCTION_WORDS


def _spells(words: Sequence[str], acronym: str) -> bool:
    """Do the words' initials, or their capitals, spell the acronym ("Smoothed Energy Guidance" -> "SEG", "Leave
    Out COvariates" -> "LOCO")?"""
    initials = "".join(w[0] for w in words).upper()
    capitals = "".join(c for w in words for c in w if c.isupper())
    return acronym.upper() in (initials, capitals.upper())


def _words_at(text: str, start: int, most: int = 3) -> list[tuple[int, int]]:
    """Up to `most` words from `start`, one space apart on one line."""
    words, position = [], start
    while len(words) < most:
        match = _WORD.match(text, position)
        if match is None or (words and match.start("word") - words[-1][1] != 1):
            break
        words.append((match.start("word"), match.end("word")))
        position = match.end()
    return words


def _name_at(text: str, start: int) -> tuple[int, int] | None:
    """The span of a name starting at `start` (module docstring), or None."""
    words = _words_at(text, start)
    tokens = [text[s:e] for s, e in words]
    for count in range(len(words), 1, -1):  # a Title Case run its bracketed acronym spells
        acronym = _ACRONYM.match(text, words[count - 1][1])
        if acronym and all(t[:1].isupper() for t in tokens[:count]) and _spells(tokens[:count], acronym["acronym"]):
            return start, acronym.end()
    kept = 0
    for index, token in enumerate(tokens):
        if _coined(token) or (index and _VERSION.fullmatch(token)):
            kept = index + 1
        else:
            break
    if not kept or (tokens[0].lower() in _DOCUMENT_PARTS and (kept == 1 or _VERSION.fullmatch(tokens[1]))):
        return None  # "Table 2", "Section"
    plain = all(re.fullmatch(r"[A-Z][a-z]+", token) for token in tokens[:kept])
    if plain and kept > 1 and (kept >= 3 or (len(tokens) > kept and tokens[kept][:1].isupper())):
        return None  # a Title Case run is a title's start, the title rules' to read ("Sparse Networks From ...")
    end = words[kept - 1][1]
    if _CLASS_AFTER.match(text, end):
        return None
    if kept == 1 and len(tokens) > 1 and tokens[1].lower() not in _MAY_FOLLOW:
        return None  # a modifier ("Gaussian noise", "Bayesian NNs", "KL coefficient", "LSE acquisition functions")
    return start, end


def _names_after(text: str, start: int) -> list[tuple[int, int]]:
    """The names listed from `start`: the first, then each after a list separator."""
    spans = []
    position = start
    while True:
        span = _name_at(text, position)
        if span is None:
            return spans
        spans.append(span)
        separator = _SEPARATOR.match(text, span[1])
        if separator is None:
            return spans
        position = separator.end()


def add_names(found: Sequence[PaperMention], review: ReviewText) -> list[PaperMention]:
    """`found` and a `name` mention for each work named in a work slot (module docstring) that overlaps no earlier
    mention and no reference entry."""
    found = list(found)
    taken = [(m.start, m.end) for m in found]
    for lead in _LEAD.finditer(review.text):
        if _NOT_WORKS_BEFORE.search(review.text, max(0, lead.start() - 40), lead.start()):
            continue  # "metrics such as RMSE"
        for start, end in _names_after(review.text, lead.end()):
            if review.is_claimed(start, end) or overlaps(start, end, taken):
                continue
            found.append(review.mention(start, end, NAME_SOURCE))
            taken.append((start, end))
    return found
