import sys
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from mapping.ids import identifier_keys, normalize_arxiv_id, normalize_doi, paper_id_for
from mapping.titles import looks_like_venue, normalize_title


def test_arxiv_ids_lose_version_prefix_and_subject_class():
    cases = {
        "arXiv:1905.00003v2": "1905.00003",
        "https://arxiv.org/abs/2101.12345v3": "2101.12345",
        "arXiv preprint arXiv:1810.04805, 2018": "1810.04805",
        "hep-th/9901001v2": "hep-th/9901001",
        "math.GT/0309136": "math/0309136",  # the subject class goes, the archive stays
        "10.1000/xyz": None,
        "1234.5": None,
        None: None,
    }
    assert {raw: normalize_arxiv_id(raw) for raw in cases} == cases


def test_dois_are_lower_cased_without_resolver_or_trailing_punctuation():
    cases = {
        "https://doi.org/10.1145/ABC.123.": "10.1145/abc.123",
        "doi:10.18653/v1/N18-3011": "10.18653/v1/n18-3011",
        "no doi here": None,
    }
    assert {raw: normalize_doi(raw) for raw in cases} == cases


def test_paper_id_rule_prefers_arxiv_then_doi_then_s2_then_stem():
    assert paper_id_for(arxiv_id="1905.00003", doi="10.1/x", s2_paper_id="7", fallback="f") == "1905.00003"
    assert paper_id_for(arxiv_id=None, doi="10.1/x", s2_paper_id="7", fallback="f") == "doi:10.1/x"
    assert paper_id_for(arxiv_id=None, doi=None, s2_paper_id="7", fallback="f") == "7"
    assert paper_id_for(arxiv_id=None, doi=None, s2_paper_id=None, fallback="f") == "f"
    assert identifier_keys(arxiv_id="1", doi=None, s2_paper_id="7") == ["arxiv:1", "s2:7"]


def test_title_normalisation_folds_latex_accents_case_and_tails():
    assert normalize_title('Sch{\\"o}n: $\\alpha$-Nets -- a Study. arXiv preprint arXiv:1810.04805') == (
        "schon alpha nets a study"
    )
    assert normalize_title("Über Grünes — “Quoted” Title") == "uber grunes quoted title"
    assert normalize_title("Deep Residual Learning. In Proceedings of CVPR") == "deep residual learning"
    assert normalize_title("Attention is all you need. CoRR abs/1706.03762") == "attention is all you need"
    # a title that merely contains the word keeps it
    assert normalize_title("The Arxiv of things: preprint servers") == "the arxiv of things preprint servers"
    assert normalize_title(None) == ""


def test_the_ascii_fast_path_skips_only_steps_that_change_nothing():
    import random
    import string

    from mapping.titles import _LATEX_SIGNS, _unlatex_unaccent

    rng = random.Random(5)
    alphabet = "".join(c for c in string.printable if c not in _LATEX_SIGNS)
    for _ in range(2000):
        title = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        assert _unlatex_unaccent(title) == title


def test_the_ascii_path_equals_the_regular_expressions():
    """`normalize_title` folds ASCII tails, case and punctuation by substring tests and a byte table; the
    regular expressions (`_fold_tails_case_punctuation`, the path for what stays non-ASCII) are the
    reference, on strings made of tail words, separators, LaTeX and accents."""
    import random
    import string

    from mapping.titles import _fold_tails_case_punctuation, _unlatex_unaccent

    pieces = [
        *"arXiv preprint arxiv: CoRR abs/ corr In: in proceedings Proceedings of Domain: in:".split(" "),
        *". , ; : - ( ) ' / _".split(" "),
        " ",
        "  ",
        "\t",
        "\n",
        "{",
        "}",
        "$",
        "\\'e",
        "\\emph{x}",
        "é",
        "Über",
        "ı",
        "—",
    ]
    rng = random.Random(14)
    for _ in range(20000):
        title = "".join(
            rng.choice(pieces) if rng.random() < 0.4 else rng.choice(string.printable)
            for _ in range(rng.randint(0, 40))
        )
        assert normalize_title(title) == _fold_tails_case_punctuation(_unlatex_unaccent(title)), repr(title)


# Invisible format characters (Unicode category Cf) that real titles carry: PDF text keeps soft hyphens at
# hyphenation points, web pages zero-width spaces and joiners, a concatenated file a byte-order mark.
SOFT_HYPHEN, ZERO_WIDTH = "\u00ad", ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff")
FORMAT_CHARACTERS = sorted(chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf")


def test_format_characters_inside_words_do_not_split_them():
    assert normalize_title("Glo\u00adVe: Global Vectors for Word Repre\u00adsen\u00adta\u00adtion") == (
        "glove global vectors for word representation"
    )
    assert normalize_title("Glo\u00adVe") == normalize_title("GloVe") == "glove"
    assert normalize_title("\ufeffTrans\u200bformer\u200c-XL: At\u200dten\u2060tive") == "transformer xl attentive"
    # removed before anything else: a tail word or a LaTeX command with one inside is still recognised
    assert normalize_title("Attention is all you need. ar\u00adXiv pre\u200bprint arXiv:1706.03762") == (
        "attention is all you need"
    )
    assert normalize_title('Sch{\\"o}\u00adn \\em\u200bph{Nets}') == "schon nets"
    assert normalize_title("\u00ad\u200b") == ""


def test_the_format_character_class_is_exactly_unicode_category_cf():
    """Built from three planes only; compared with every code point's category."""
    from mapping.titles import _format_characters

    pattern = _format_characters()
    found = [chr(c) for c in range(sys.maxunicode + 1) if pattern.fullmatch(chr(c))]
    assert found == FORMAT_CHARACTERS
    assert {SOFT_HYPHEN, *ZERO_WIDTH} <= set(found)


_TITLE_PIECES = st.sampled_from(
    ["GloVe", "Deep", "résumé", "Über", "ﬁne", "arXiv", "preprint", "In", "Proceedings", "of", "CoRR", "abs/1",
     "\\'e", '{\\"o}', "\\emph{x}", "$\\alpha$", "{", "}", " ", ". ", ", ", ": ", "-", "—", "“", "2019", "x"]
)  # fmt: skip


@given(
    pieces=st.lists(_TITLE_PIECES, max_size=12),
    inserted=st.lists(st.tuples(st.integers(min_value=0), st.sampled_from(FORMAT_CHARACTERS)), max_size=6),
)
@settings(max_examples=300, deadline=None)
def test_inserting_format_characters_anywhere_never_changes_the_normalised_title(pieces, inserted):
    title = "".join(pieces)
    marked = title
    for position, character in inserted:
        at = position % (len(marked) + 1)
        marked = marked[:at] + character + marked[at:]
    assert normalize_title(marked) == normalize_title(title), repr(marked)


def test_venue_names_are_told_from_titles_that_mention_a_venue_word():
    venues = [
        "journal of computational physics",
        "journal of a plague year",  # a book, but venue-shaped: never matched as a title
        "physical review letters",
        "proceedings of the ieee conference on computer vision and pattern recognition",
    ]
    titles = ["attention is all you need", "proceedings of monte carlo tree search"]
    assert [looks_like_venue(v) for v in venues] == [True] * 4
    assert [looks_like_venue(t) for t in titles] == [False] * 2
