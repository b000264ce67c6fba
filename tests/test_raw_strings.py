"""Raw-string matching (`mapping/raw_strings.py`): hand-checked strings, the alignment score, the parser's
properties (on made-up strings and on the real reference strings of ../shared/data), and the Beam join giving the
same resolutions and counts as the in-memory matcher, on hand-made strings and on real bibliographies
(`tests/support/real_bibliography.py`). The gold set and its quality floors are the lab's
(bench/tests/test_gold_raw_strings.py)."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import LCSseq

from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig, RawStringConfig
from mapping.raw_strings import (
    _CUT,
    _batch_segments,
    _parse_batch,
    _Pieces,
    best_of_scores,
    best_passing_spans,
    best_span_similarity,
    candidate_spans,
    normalize_pieces,
    parse_raw_reference,
    parse_raw_references,
    raw_segments,
    spans_of_pairs,
    window_similarity,
)
from mapping.records import BibEntry, Paper
from mapping.titles import normalize_title
from tests.support.counters import counter_dict
from tests.support.matching import assert_join_resolves_the_same, in_memory_resolutions
from tests.support.real_bibliography import RealBibliography, real_bibliography

BAHDANAU = "Neural machine translation by jointly learning to align and translate"
PAPERS = [
    Paper("bahdanau", BAHDANAU, year=2015, authors=("Dzmitry Bahdanau",)),
    Paper("vaswani", "Attention is all you need", year=2017, authors=("Ashish Vaswani",)),
    Paper("gat", "Graph attention networks", year=2018, authors=("Petar Velickovic",)),
    Paper("intro", "Introduction", year=2020),
    Paper("deep", "Deep learning", year=2015, authors=("Yann LeCun",)),
    Paper("nips", "Advances in Neural Information Processing Systems", year=2017),
    Paper("resnet", "Deep residual learning for image recognition", year=2016, authors=("Kaiming He",)),
    Paper("seq2seq", "Sequence to sequence learning with neural networks", year=2014, authors=("Ilya Sutskever",)),
]


def resolve(raw: str, papers=PAPERS, config: MatchConfig | None = None):
    count, counts = counter_dict()
    resolution = InMemoryMatcher(papers, config or MatchConfig()).resolve(BibEntry("b", raw=raw), count)
    return resolution, counts


@pytest.mark.parametrize(
    "raw",
    [
        # ACM
        "Dzmitry Bahdanau, Kyunghyun Cho, and Yoshua Bengio. 2015. Neural Machine Translation by Jointly Learning "
        "to Align and Translate. In International Conference on Learning Representations.",
        # IEEE
        'D. Bahdanau, K. Cho, and Y. Bengio, "Neural machine translation by jointly learning to align and '
        'translate," in Proc. ICLR, 2015.',
        # APA
        "Bahdanau, D., Cho, K., & Bengio, Y. (2015). Neural machine translation by jointly learning to align and "
        "translate. In International Conference on Learning Representations.",
        # natbib, with GROBID's line-end hyphenation
        "Dzmitry Bahdanau, Kyunghyun Cho, and Yoshua Bengio. Neural machine trans- lation by jointly learning to "
        "align and translate. In ICLR, 2015.",
        # unarXive: formatting marks and a comma-separated title
        "D. Bahdanau, K. Cho, Y. Bengio, Neural machine translation by jointly learning to align and translate, "
        "¦ICLR¦ (2015).",
    ],
)
def test_a_raw_string_in_each_style_resolves_to_its_paper(raw):
    resolution, counts = resolve(raw)
    assert (resolution.paper_id, resolution.method) == ("bahdanau", "raw_title"), resolution
    assert counts == {"resolved_by:raw_title": 1}


def test_a_misspelled_title_inside_the_string_still_passes():
    raw = "Kaiming He, Xiangyu Zhang, Shaoqing Ren, and Jian Sun. 2016. Deep residaul learning for imgae recognition."
    resolution, _ = resolve(raw)
    assert resolution.paper_id == "resnet" and 0.9 <= resolution.score < 1.0, resolution


@pytest.mark.parametrize(
    "raw",
    [
        "Introduction. In Proceedings of the Annual Meeting of the ACL, 2020.",
        "Y. LeCun. Deep learning. Nature, 521:436-444, 2015.",  # too short a title to look for in strings
        "In Advances in Neural Information Processing Systems, pages 5998-6008, 2017.",  # a venue
        "Heterogeneous graph attention network. In WWW, 2019.",  # a database title inside a longer one
        "Attention is not all you need: pure attention loses rank. In ICML, 2021.",
    ],
)
def test_short_titles_venues_and_titles_inside_longer_ones_match_nothing(raw):
    resolution, counts = resolve(raw)
    assert resolution.paper_id is None, resolution
    assert sum(v for k, v in counts.items() if k.startswith("unresolved:raw_")) == 1, counts


def test_two_papers_with_the_same_title_are_told_apart_by_the_year_then_the_first_author():
    title = "A study of reference strings in scientific papers"
    papers = [
        Paper("old", title, year=2011, authors=("Maria Garcia",)),
        Paper("new", title, year=2019, authors=("Wei Wang",)),
        Paper("new-other", title, year=2019, authors=("John Smith",)),
    ]
    assert resolve(f"M. Garcia. {title}. In Proc. X, 2011.", papers)[0].paper_id == "old"
    assert resolve(f"W. Wang. {title}. In Proc. X, 2019.", papers)[0].paper_id == "new"
    assert resolve(f"J. Smith. {title}. Journal Y (2019).", papers)[0].paper_id == "new-other"
    resolution, counts = resolve(f"A. Nobody. {title}. 2019.", papers)
    assert resolution.method == "ambiguous" and counts == {"unresolved:raw_ambiguous": 1}


def test_a_longer_title_cited_with_a_typo_beats_its_exact_prefix():
    papers = [
        Paper("short", "What is a quasispecies?", year=2015),
        Paper("long", "What is a quasispecies? Historical origins and current scope", year=2015),
    ]
    raw = "E. Domingo and P. Schuster. 2015. What is a quasispecies? Histo- rical origins and curernt scope. In Q."
    assert resolve(raw, papers)[0].paper_id == "long"
    assert resolve("E. Domingo. 2015. What is a quasispecies? In Q.", papers)[0].paper_id == "short"


def test_entries_with_a_usable_title_never_take_the_raw_path():
    count, counts = counter_dict()
    entry = BibEntry("b", title="Something else entirely, not in the database", raw=f"A. B. {BAHDANAU}. 2015.")
    assert InMemoryMatcher(PAPERS).resolve(entry, count).paper_id is None
    assert counts == {"unresolved:no_title_match": 1}


def test_no_segment_and_too_long_are_counted():
    config = MatchConfig()
    assert resolve("J. Smith, 2019.")[1] == {"unresolved:raw_no_segment": 1}
    too_long = "x " * config.raw.max_raw_chars
    assert resolve(too_long)[1] == {"unresolved:raw_too_long": 1}
    assert resolve("   ")[1] == {"unresolved:no_usable_title": 1}


# --- the alignment --------------------------------------------------------------------------------------


def test_span_similarity_on_a_hand_computed_example():
    reference = parse_raw_reference("Hal Daumé. 2007. Frustratingly easy domain adapta- tion. In ACL.")
    assert reference.text == "hal daume 2007 frustratingly easy domain adapta tion in acl"
    title = "frustratingly easy domain adaptation"  # 36 characters
    score, (start, end) = best_span_similarity(title, reference)
    # the span "frustratingly easy domain adapta tion" has 37 characters and holds the whole title as a
    # subsequence: LCS 36, over the longer of the two, 37
    assert reference.text[start:end] == "frustratingly easy domain adapta tion"
    assert score == pytest.approx(36 / 37)


def test_a_short_title_inside_a_longer_one_passes_by_window_but_not_by_span():
    reference = parse_raw_reference("X. Wang. 2019. Heterogeneous graph attention network. In WWW.")
    title = "graph attention network"  # 23 characters; the piece holding it has 37
    assert window_similarity(title, reference.text) == 1.0
    assert best_span_similarity(title, reference)[0] == 0.0  # no span short enough to reach 0.9
    score, _ = best_span_similarity(title, reference, threshold=0.6)
    assert score == pytest.approx(23 / 37)
    assert window_similarity("abcd", "xxabxdxx") == 0.75  # best window "abxd": LCS "abd"


def _lcs(a: str, b: str) -> int:
    row = [0] * (len(b) + 1)
    for x in a:
        diagonal = 0
        for j, y in enumerate(b, 1):
            diagonal, row[j] = row[j], diagonal + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def test_best_span_similarity_equals_a_brute_force_over_every_span():
    rng = random.Random(3)
    words = ["ab", "ba", "abc", "cab", "a", "bca", "2019"]
    passed = 0
    for _ in range(1000):
        raw = "".join(rng.choice(words) + rng.choice([" ", " ", ". ", ", ", '"']) for _ in range(rng.randint(1, 9)))
        title = " ".join(rng.choice(words) for _ in range(rng.randint(1, 4)))
        reference = parse_raw_reference(raw)
        # every span of whole pieces, by a plain dynamic-programming LCS; of those at or above 0.9, the first
        # with the most characters matched minus unmatched (3 LCS - title length - span length)
        best = None
        for i, start in enumerate(reference.starts):
            for end in reference.ends[i:]:
                span = reference.text[start:end]
                lcs = _lcs(title, span)
                similarity = lcs / max(len(title), len(span))
                aligned = 3 * lcs - len(title) - len(span)
                if similarity >= 0.9 - 1e-12 and (best is None or aligned > best[1]):
                    best = (similarity, aligned, (start, end))
        score, span = best_span_similarity(title, reference, 0.9)
        if best is None:
            assert score < 0.9, (raw, title, score)
        else:
            passed += 1
            assert (score, span) == (pytest.approx(best[0]), best[2]), (raw, title, score, best)
    assert passed > 100


def test_candidate_spans_keep_exactly_the_spans_whose_length_can_reach_the_threshold():
    reference = parse_raw_reference("aa bb. cccc, d. eeeee ff. g")
    for length in range(1, 30):
        expected = [
            (s, e)
            for i, s in enumerate(reference.starts)
            for e in reference.ends[i:]
            if min(length, e - s) / max(length, e - s) >= 0.9 - 1e-9
        ]
        assert candidate_spans(reference, length, 0.9) == expected


# --- the parser -----------------------------------------------------------------------------------------


def test_cuts_pieces_years_and_segments():
    reference = parse_raw_reference(
        'A. Vaswani, N. Shazeer, and N. Parmar. 2017. "Attention is all you need," in NIPS (2017), pp. 5998-6008.'
    )
    pieces = [reference.text[s:e] for s, e in zip(reference.starts, reference.ends, strict=True)]
    assert "attention is all you need" in pieces and reference.years == (2017,)
    # the author list and the venue are left out of the segments; the title is one
    assert raw_segments(reference)[0] == "attention is all you need"
    assert not any("shazeer" in s for s in raw_segments(reference))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aBc é.,;?!\"“”'()[]{}$\\-–¦019")), max_size=120))
def test_parsing_any_text_gives_consistent_pieces(raw):
    reference = parse_raw_reference(raw)
    assert len(reference.starts) == len(reference.ends) == len(reference.strong)
    pieces = [reference.text[s:e] for s, e in zip(reference.starts, reference.ends, strict=True)]
    assert " ".join(pieces) == reference.text and all(p and p == p.strip() for p in pieces)
    for segment in raw_segments(reference):
        assert segment in reference.text


_PIECE = st.text(alphabet=st.sampled_from(list("aZ é–’“ßæÆøł$\\{}.:0α²ǆ\u0301\u00a8")), max_size=12) | st.sampled_from(
    ["arXiv preprint arXiv:1810.04805", "In Proceedings of", ": in proceedings", "CoRR abs/1", "in: X", "Müller"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECE, min_size=1, max_size=6))
def test_pieces_are_normalised_exactly_as_normalize_title_would(pieces):
    assert normalize_pieces(pieces) == [normalize_title(p) for p in pieces]


@pytest.mark.parametrize(
    "pieces",
    [
        ["İ" * 20, "ab arxiv:1234", "x"],  # lower() lengthens "İ": positions after it must not shift pieces
        ["ärxiv preprint 1", "Ðarxiv preprint", "x–arxiv preprint", "{arXiv} preprint"],  # tails once folded
        ["$\\alpha$-Nets", 'Sch{\\"o}n', "{Deep} $x$ learning", "Über {alles}", "ﬁne Ａrt"],
    ],
)
def test_pieces_that_fold_or_cut_differently_are_normalised_as_normalize_title_would(pieces):
    assert normalize_pieces(pieces) == [normalize_title(p) for p in pieces]


_CUT_DEFINITION = re.compile(  # the cut pattern as first written: each alternative whole, tried in this order
    r"(?P<weak>(?:(?<=[A-Z])(?<![\w.][A-Z])\.|,)(?=\s|$))"
    r"|(?P<strong>[.?!;]+(?=\s|$)|[\"“”„‟«»¦]|''|``|[\[\]]|\\newblock\b)"
    r"|(?P<year>(?<![\w-])(?:1[5-9]|20)\d\d[a-z]?(?![\w-]))"
)


def _cuts(text: str) -> tuple[list, list]:
    """(piece, strong, year) of every cut by `_CUT` and by its definition."""
    parts, plain = _CUT.split(text), _CUT_DEFINITION.split(text)
    ours = [
        (parts[i], parts[i + 2] is not None, parts[i + 3] is not None and parts[i + 1])
        for i in range(0, len(parts) - 1, 4)
    ]
    defined = [(plain[i], plain[i + 2] is not None, plain[i + 3] or False) for i in range(0, len(plain) - 1, 4)]
    return ours + [parts[-1]], defined + [plain[-1]]


_CUT_TEXT = st.lists(
    st.sampled_from(
        [*"aAbZ .,;:?!\"“”„‟«»¦'`[]\\12-09_()\n\té", "\\newblock", "2017", "1999a", "A.", "..", "''", "É."]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=500, deadline=None)
@given(_CUT_TEXT)
def test_the_cut_pattern_cuts_where_its_definition_does(text):
    ours, defined = _cuts(text)
    assert ours == defined


_STRINGS = st.lists(
    st.lists(
        st.sampled_from(
            [
                "ab",
                "Ba",
                "abc",
                "In Proceedings of the",
                "Journal of X",
                "2017",
                "1999a",
                "cab",
                "A.",
                "Smith",
                "pp",
                "12",
                "Müller",
                "İİ",
                "\\emph{x}",
                "arXiv:1810.04805",
                "{Big}",
                "\x00",
                "–",
                ". ",
                ", ",
                '"',
                "; ",
                " ",
            ]
        ),
        max_size=30,
    ).map("".join),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(_STRINGS)
def test_parsing_many_strings_at_once_equals_one_at_a_time(raws):
    assert parse_raw_references(raws) == [parse_raw_reference(r) for r in raws]


@settings(max_examples=300, deadline=None)
@given(
    _STRINGS,
    st.sampled_from([RawStringConfig(), RawStringConfig(max_segments=2), RawStringConfig(min_segment_chars=5)]),
)
def test_segments_of_many_strings_at_once_equal_one_string_at_a_time(raws, config):
    segments, owners = _batch_segments(_parse_batch(raws), config)
    found = [[s for s, o in zip(segments, owners.tolist(), strict=True) if o == r] for r in range(len(raws))]
    assert found == [raw_segments(parse_raw_reference(r), config) for r in raws]
    assert list(owners) == sorted(owners)


def test_spans_and_the_best_span_of_many_pairs_equal_one_pair_at_a_time():
    rng = random.Random(11)
    words = ["ab", "ba", "abc", "cab", "a", "bca", "2019", "abcab"]
    references = [
        parse_raw_reference(
            "".join(rng.choice(words) + rng.choice([" ", ". ", ", ", '"']) for _ in range(rng.randint(0, 9)))
        )
        for _ in range(60)
    ]
    pieces = _Pieces.of(references)
    assert [pieces.reference(r) for r in range(len(references))] == references
    owners = np.array(sorted(rng.randrange(len(references)) for _ in range(400)))
    titles = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 5))) for _ in owners]
    lengths = np.array([len(t) for t in titles])
    for threshold in (0.9, 0.6):
        pair, starts, ends, texts = spans_of_pairs(pieces, owners, lengths, threshold)
        scores = np.array(
            [LCSseq.normalized_similarity(titles[i], t) for i, t in zip(pair.tolist(), texts, strict=True)]
        )
        rows, aligned = best_passing_spans(pair, scores, lengths[pair], ends - starts, threshold)
        best = dict(
            zip(
                pair[rows].tolist(),
                zip(scores[rows].tolist(), aligned.tolist(), starts[rows].tolist(), ends[rows].tolist(), strict=True),
                strict=True,
            )
        )
        passed = 0
        for i, (r, title) in enumerate(zip(owners.tolist(), titles, strict=True)):
            spans = candidate_spans(references[r], len(title), threshold)
            mine = pair == i
            assert list(zip(starts[mine].tolist(), ends[mine].tolist(), strict=True)) == spans
            assert [t for t, m in zip(texts, mine, strict=True) if m] == [references[r].text[a:b] for a, b in spans]
            one = [LCSseq.normalized_similarity(title, references[r].text[a:b]) for a, b in spans]
            score, alignment, span = best_of_scores(len(title), one, spans, threshold)
            if score >= threshold:
                passed += 1
                assert best.pop(i) == (score, alignment, *span)
        assert not best and passed > 30


def test_agreeing_at_least_is_the_most_values_a_segment_shares_by_brute_force():
    rng = np.random.default_rng(5)
    papers = [Paper(f"p{i:03d}", f"title number {i} of some paper", year=2000) for i in range(60)]
    resolver = InMemoryMatcher(papers).raw_resolver
    resolver.eligible  # noqa: B018 -- builds the low bytes, replaced below
    index = rng.integers(0, 1 << 32, size=(len(papers), 128), dtype=np.uint32)
    resolver.index.signatures = index
    resolver._low_bytes = index.astype(np.uint8)
    # each segment copies some of one paper's values and changes the others: above their low byte (the low
    # bytes still agree: the bound passes more than agree) or in it, in a proportion of its own
    owners = np.sort(rng.integers(0, 40, size=90))
    copied = rng.random((len(owners), 128)) < rng.uniform(0, 0.8, size=(len(owners), 1))
    above = rng.random((len(owners), 128)) < rng.choice([0, 0.3, 0.9], size=(len(owners), 1))
    near = index[rng.integers(0, len(papers), size=len(owners))]
    signatures = np.where(copied, near, near ^ np.where(above, 1 << 8, 1).astype(np.uint32))
    strings = np.unique(owners)
    k, p = np.repeat(strings, len(papers)), np.tile(np.arange(len(papers)), len(strings))
    shared = {
        (r, j): max(int((signatures[s] == index[j]).sum()) for s in np.flatnonzero(owners == r))
        for r, j in zip(k.tolist(), p.tolist(), strict=True)
    }
    for floor in sorted({0, 128, *shared.values()}):
        got_k, got_p, agreeing = resolver._agreeing_at_least(k, p, signatures, owners, floor)
        got = dict(zip(zip(got_k.tolist(), got_p.tolist(), strict=True), agreeing.tolist(), strict=True))
        assert got == {pair: n for pair, n in shared.items() if n >= floor}, floor
    assert len(set(shared.values())) > 30


# --- real reference strings -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real(shared) -> RealBibliography:
    return real_bibliography(shared)


def test_the_real_strings_parse_and_segment_at_once_as_one_at_a_time(real):
    raws = [entry.raw for _, entry in real.raw_queries]
    one_at_a_time = [parse_raw_reference(r) for r in raws]
    assert parse_raw_references(raws) == one_at_a_time
    assert all(_cuts(r)[0] == _cuts(r)[1] for r in raws)
    segments, owners = _batch_segments(_parse_batch(raws), MatchConfig().raw)
    found = [[] for _ in raws]
    for segment, r in zip(segments, owners.tolist(), strict=True):
        found[r].append(segment)
    assert found == [raw_segments(reference) for reference in one_at_a_time]


# --- the Beam join --------------------------------------------------------------------------------------


@pytest.mark.beam
def test_join_equals_in_memory_on_hand_made_raw_strings():
    config = MatchConfig(max_bucket=2, max_candidates=2)
    title = "A study of reference strings in scientific papers"
    papers = [*PAPERS] + [Paper(f"same{i}", title, year=2010 + i, authors=(f"Author{i} Surname{i}",)) for i in range(4)]
    refs = [
        ("a", BibEntry("b0", raw=f"Surname1 A. {title}. 2011.")),  # capped bucket (2 of 4 papers), the year
        ("b", BibEntry("b1", raw=f"Surname3 A. {title}. 2013.")),  # the paper beyond the cap
        ("c", BibEntry("b2", raw=f"{title}. 2020.")),  # ambiguous
        (
            "d",
            BibEntry(
                "b3",
                raw="D. Bahdanau, K. Cho. Neural machine translation by jointly learning to align "
                "and translate. ICLR 2015.",
            ),
        ),
        ("e", BibEntry("b4", raw="Introduction. 2020.")),
        ("f", BibEntry("b5", raw="J. Smith, 2019.")),
        ("g", BibEntry("b6", raw="   ")),
        ("h", BibEntry("b7", title="Deep residual learning for image recognition", raw="ignored")),
        ("i", BibEntry("b8", raw="Heterogeneous graph attention network. In WWW, 2019.")),
        ("j", BibEntry("b9", raw="x " * config.raw.max_raw_chars)),
    ]
    expected, counts = in_memory_resolutions(papers, refs, config)
    assert counts["raw_bucket_hits_capped"] > 0 and counts["resolved_by:raw_title"] >= 2, counts
    assert counts["unresolved:raw_ambiguous"] == 2, counts  # "c", and "b" whose paper is beyond the cap
    assert_join_resolves_the_same(papers, refs, config, expected, counts)


@pytest.mark.beam
def test_join_equals_in_memory_on_real_bibliographies(real):
    """Every real TEI bib entry as strings only (GROBID's own, and printed in two layouts) against the titles of the
    real bib entries, a fifth of them held out."""
    papers, refs = list(real.papers), list(real.raw_queries)
    expected, counts = in_memory_resolutions(papers, refs, MatchConfig())
    # most strings find the paper holding their own entry's title: a check on the input, not the join
    title_of = {key: normalize_title(entry.title or "") for key, entry in real.entries}
    paper_title = {paper.paper_id: normalize_title(paper.title) for paper in papers}
    own = sum(paper_title.get(r.paper_id) == title_of[key.rpartition(":")[0]] for key, r in expected)
    assert len(refs) > 3000 and counts["resolved_by:raw_title"] > 2000 and own > 2000, (own, counts)
    assert counts["unresolved:raw_no_title_match"] > 300, counts
    assert_join_resolves_the_same(papers, refs, MatchConfig(), expected, counts)


def test_the_cut_pattern_has_the_groups_the_parser_reads_by_position():
    # the cut pattern's groups: the cut's text, strong, year (the parsers read them by position)
    assert _CUT.groups == 3 and list(_CUT.groupindex) == ["cut", "strong", "year"]
