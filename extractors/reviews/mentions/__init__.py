"""Find the papers a peer review mentions, and decide which of them the reviewer recommends citing.

Plain Python on plain strings, no Beam. The rules, in order, one module each:

1. `cleaning`: the text in one plain form (`clean_review_text`): HTML, Markdown and LaTeX markup folded into
   plain text with straight or curly quotes, links kept, so that the patterns below see one form.
2. `references`: reference strings. A line is a reference entry when it starts with a citation marker
   (`[1]`, `[A]`, `[3*]`, `(2)`) or is a numbered/bulleted/plain line shaped like a bibliography entry
   (authors then a title, with a year, venue, identifier or quoted title), or follows a "References"
   heading; each entry is one mention, its title, identifiers, authors and year parsed from it.
3. Outside the entries, everything is prose: `quoted` finds quoted titles; `prose` finds titles written in
   running text ("CER (Competitive experience replay)", "Mannor et al (Title)", "Title by Pan et al.",
   "(Title, NeurIPS 2022)"), identifiers and links (`identifiers`: arXiv ids and URLs, DOIs, OpenReview,
   ACL Anthology, proceedings and Semantic Scholar links), author-year mentions ("Smith et al. (2021)") and
   methods named with their venue. An identifier or author-year right after a quoted title on the same line
   joins that title's mention.
4. `spotting` (given the paper database): the database's titles found in the text, whatever the rules cut
   (`DatabaseTitleSpotter`): a title in a mention that does not resolve becomes its title, one outside every
   mention a new mention.
5. `context` cuts the text each mention is judged by, and `classify` decides: `already_cited` (in the
   submission's own bibliography), `recommended` (a request cue, or a reviewer's reference list) or
   `discussed`.

`find` runs them (`find_mentions`, `extract_review_mentions`); `shapes` holds what every rule recognises
(years, "et al.", author lists, titles, venues); `config` the parameters. What a mention is:
`extractors.reviews.records.PaperMention`, with the kinds (`RECOMMENDED`, ...) re-exported here.
"""

from extractors.reviews.mentions.classify import Bibliography, classify_mention
from extractors.reviews.mentions.cleaning import clean_review_text
from extractors.reviews.mentions.config import MentionConfig
from extractors.reviews.mentions.context import split_sentences
from extractors.reviews.mentions.find import extract_review_mentions, find_mentions, mention_key
from extractors.reviews.mentions.identifiers import find_identifiers
from extractors.reviews.mentions.references import looks_like_reference_entry, title_from_reference
from extractors.reviews.mentions.spotting import DatabaseTitleSpotter, SpotConfig
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, KINDS, RECOMMENDED

__all__ = [
    "ALREADY_CITED",
    "DISCUSSED",
    "KINDS",
    "RECOMMENDED",
    "Bibliography",
    "DatabaseTitleSpotter",
    "MentionConfig",
    "SpotConfig",
    "classify_mention",
    "clean_review_text",
    "extract_review_mentions",
    "find_identifiers",
    "find_mentions",
    "looks_like_reference_entry",
    "mention_key",
    "split_sentences",
    "title_from_reference",
]
