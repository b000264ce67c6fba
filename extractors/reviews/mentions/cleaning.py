"""Step 1 of the mention rules: review text in one plain form, whatever markup the reviewer wrote in.

HTML entities and tags (a link keeps its address), Markdown links, emphasis, headings and block quotes, and
LaTeX text commands and ``quotes'', ''doubled single quotes'' and 'straight single quotes' around three words
or more are folded into plain text with straight or curly quotes, so that the
patterns of the later steps see one form. Emphasis of three words or more becomes a quote: reviewers
italicise titles.
"""

from __future__ import annotations

import html
import re

_HTML_LINK = re.compile(r"<a\s[^>]*?href\s*=\s*[\"']([^\"']+)[\"'][^>]*>(.*?)</a\s*>", re.I | re.S)
_HTML_BREAK = re.compile(r"<\s*(?:br|/p|p|/li|li|/div|div|/h\d|h\d|/tr|tr)\b[^>]*>", re.I)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*\b[^<>]*>")
_MD_LINK = re.compile(r"(?<!!)\[([^\[\]\n]{1,300})\]\((https?://[^)\s]+)\)")
_MD_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_MD_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", re.S)
_MD_ITALIC = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=\S)\*(?![\w*])")
_MD_UNDERSCORE_ITALIC = re.compile(r"(?<![\w_$\\])_(?=[^\s_])([^_\n$]+?)(?<=[^\s_])_(?![\w_])")
_MD_CODE = re.compile(r"`([^`\n]*)`")
_MD_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]*", re.M)
_MD_QUOTE = re.compile(r"^[ \t]*>[ \t]?", re.M)
_LATEX_TEXT = re.compile(r"\\(?:emph|textit|textbf|textsc|textrm|text|mbox|underline|href\{[^}]*\})\s*\{([^{}]*)\}")
_LATEX_ITALIC = re.compile(r"\\(?:emph|textit)\s*\{([^{}]{10,300})\}")
_LATEX_QUOTES = re.compile(r"``(.+?)''", re.S)
_LATEX_CITE = re.compile(r"\\cite[pt]?\*?\{([^}]*)\}")
# Titles in two single quotes (''Title'') and in straight single quotes ('Title Of Three Words'): not an
# apostrophe (a letter or a quote before the opening one, or after the closing one), three words or more.
_DOUBLED_SINGLE_QUOTES = re.compile(r"(?<!['\w])''(?!')([^'\n]{4,400}?)(?<!')''(?![\w'])")
_SINGLE_QUOTED = re.compile(r"(?<![\w'\u2019])'([A-Z][^'\n]{6,300}?[^\s'])'(?![\w'])")


def clean_review_text(text: str) -> str:
    """Review text in one plain form: HTML, Markdown and LaTeX markup folded away, URLs kept."""
    text = html.unescape(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _HTML_LINK.sub(lambda m: f"{m.group(2)} ({m.group(1)})", text)
    text = _HTML_BREAK.sub("\n", text)
    text = _HTML_TAG.sub("", text)
    text = _MD_LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    text = _MD_AUTOLINK.sub(r"\1", text)
    text = _LATEX_QUOTES.sub(lambda m: f"\u201c{m.group(1)}\u201d", text)
    text = _DOUBLED_SINGLE_QUOTES.sub(lambda m: f"\u201c{m.group(1)}\u201d", text)
    text = _SINGLE_QUOTED.sub(
        lambda m: f"\u201c{m.group(1)}\u201d" if len(m.group(1).split()) >= 3 else m.group(0), text
    )
    text = _LATEX_ITALIC.sub(lambda m: f"\u201c{m.group(1)}\u201d", text)
    text = _MD_BOLD.sub(r"\2", text)
    text = _MD_ITALIC.sub(lambda m: f"\u201c{m.group(1)}\u201d" if len(m.group(1).split()) >= 3 else m.group(1), text)
    text = _MD_UNDERSCORE_ITALIC.sub(
        lambda m: f"\u201c{m.group(1)}\u201d" if len(m.group(1).split()) >= 3 else m.group(1), text
    )
    text = _MD_CODE.sub(r"\1", text)
    text = _MD_HEADING.sub("", text)
    text = _MD_QUOTE.sub("", text)
    for _ in range(2):
        text = _LATEX_TEXT.sub(r"\1", text)
    text = _LATEX_CITE.sub(r"[\1]", text)
    return re.sub(r"[\u200b-\u200d\u2060\ufeff]", "", text.replace("\u00a0", " "))
