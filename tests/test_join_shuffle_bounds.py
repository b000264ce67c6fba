"""The pieces that keep the title join's shuffles to ids, on hand-made data: symbol-group counts and their bound
(never below the LCS), bucket keys, candidates ranked by proposing bands."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import LCSseq

from mapping.matcher import (
    MatchConfig,
    TitleIndex,
    could_match_groups,
    could_match_packed,
    rank_candidates,
    signatures_and_keys,
)
from mapping.minhash import ALPHABET, SYMBOL_GROUPS, group_counts, packed_group_counts

TITLE = "graph neural networks for citation recommendation in large digital libraries"


def test_group_counts_of_hand_made_titles():
    groups = {symbol: g for g, symbols in enumerate(SYMBOL_GROUPS) for symbol in symbols}
    assert sorted("".join(SYMBOL_GROUPS)) == sorted(ALPHABET)
    counts = group_counts(["aaaa ee", "a" * 20 + "x9"])
    expected = np.zeros((2, 16), dtype=np.uint8)
    expected[0, groups["a"]], expected[0, groups["e"]], expected[0, groups[" "]] = 4, 2, 1
    expected[1, groups["a"]] = 15  # twenty, at most 15
    expected[1, groups["x"]] = 2  # "x" and "9" share a group
    assert (counts == expected).all()
    # two groups a byte, the even one in the high half
    assert packed_group_counts(["e"])[0] == bytes([0x01, 0, 0, 0, 0, 0, 0, 0])
    assert packed_group_counts([" "])[0] == bytes([0x10, 0, 0, 0, 0, 0, 0, 0])


def test_bucket_keys_hold_the_band_and_the_key_big_endian():
    from pipelines.matching import bucket_keys

    keys = np.array([[1, 2**64 - 1], [2**63, 0]], dtype=np.uint64)
    assert bucket_keys(keys) == [
        b"\x00" + (1).to_bytes(8, "big"),
        b"\x01" + b"\xff" * 8,
        b"\x00" + (2**63).to_bytes(8, "big"),
        b"\x01" + bytes(8),
    ]
    with pytest.raises(ValueError):
        bucket_keys(np.zeros((1, 257), dtype=np.uint64))


def test_candidates_are_ranked_by_proposing_bands_then_paper_id():
    config = MatchConfig(max_candidates=2)
    assert rank_candidates(["b", "a", "c", "d"], [2, 2, 5, 1], config) == [2, 1]


def test_a_candidate_proposed_by_every_band_is_counted_once_a_band():
    config = MatchConfig()
    titles = [TITLE, TITLE[:3] + "q" + TITLE[4:], "an entirely different title about other things"]
    index = TitleIndex(["p0", "p1", "p2"], titles, [None] * 3, config)
    _, keys = signatures_and_keys([TITLE], config)
    q, p, bands = index.candidate_pairs_with_bands(keys)
    by_hand = {j: int((keys[0] == signatures_and_keys([t], config)[1][0]).sum()) for j, t in enumerate(titles)}
    assert dict(zip(p.tolist(), bands.tolist(), strict=True)) == {j: n for j, n in by_hand.items() if n}
    assert by_hand[0] == config.bands and q.tolist() == [0] * len(p)


symbols = st.sampled_from(list("aeinost rcx9"))
words = st.text(symbols, min_size=1, max_size=60)


@settings(max_examples=400, deadline=None)
@given(
    a=words,
    edits=st.lists(st.tuples(st.integers(0, 59), st.sampled_from(list("aeinost rcxz9-"))), max_size=6),
    threshold=st.sampled_from([0.5, 0.8, 0.9]),
)
def test_the_group_bound_never_drops_a_pair_the_lcs_accepts(a, edits, threshold):
    """Near duplicates (substitutions, deletions) of random titles over a few symbols: whenever the LCS similarity
    reaches the threshold, both forms of the group bound pass the pair, and they always agree."""
    b = a
    for position, symbol in edits:
        position %= len(b) + 1
        b = b[:position] + ("" if symbol == "-" else symbol) + b[position + 1 :]
    if not b:
        return
    config = MatchConfig(min_similarity=threshold)
    longer = max(len(a), len(b))
    vectorised = bool(could_match_groups(group_counts([a]), group_counts([b]), np.array([longer]), config)[0])
    packed = could_match_packed(*packed_group_counts([a, b]), longer, config)
    assert vectorised == packed
    if LCSseq.normalized_similarity(a, b) >= threshold:
        assert vectorised
