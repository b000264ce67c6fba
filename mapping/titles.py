"""Title normalisation, one function for database titles and reference titles alike.

Real citation strings carry case and accent differences, LaTeX remnants (`{\\"o}`, `$\\alpha$`,
`\\emph{...}`), dashes and quotes of every kind, and tails such as "arXiv preprint arXiv:1810.04805".
All of that is folded away so that two spellings of one title compare equal or nearly so.
"""

from __future__ import annotations

import re
import unicodedata

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


def normalize_title(title: str | None) -> str:
    """Lower-case ASCII words separated by single spaces; '' for a missing title.

    >>> normalize_title('Sch{\\\\"o}n: $\\\\alpha$-Nets -- a Study. arXiv preprint arXiv:1810.04805')
    'schon alpha nets a study'
    """
    if not title:
        return ""
    text = _LATEX_ACCENT.sub(r"\1", title)
    for _ in range(3):
        text = _LATEX_COMMAND_WITH_ARG.sub(r"\1", text)
    text = _LATEX_COMMAND.sub(r"\1", text)
    text = text.replace("$", " ").replace("{", "").replace("}", "")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("ß", "ss").replace("æ", "ae").replace("ø", "o").replace("ł", "l")
    text = _TAILS.sub(" ", text).lower()
    return _NON_WORD.sub(" ", text).strip()
