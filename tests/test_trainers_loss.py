"""Training objectives on tiny cases checked against the authors' formulas, and the Jaccard labelling of mined
papers as their datautils.py does it."""

from __future__ import annotations

import math
import random

import pytest

torch = pytest.importorskip("torch")

from trainers.data import CitationDataset, ContextQuery, PaperText  # noqa: E402
from trainers.documents import query_document  # noqa: E402
from trainers.hatten_training import (  # noqa: E402
    CITED,
    MINED_POSITIVE,
    NEGATIVE,
    HAttenTrainConfig,
    TripletSampler,
    batch_triplet_loss,
    visibility,
)
from trainers.rerank_model import rerank_triplet_loss  # noqa: E402
from trainers.tokenization import jaccard, jaccard_words  # noqa: E402


def unit(angle: float) -> list[float]:
    return [math.cos(angle), math.sin(angle)]


def loss_of(query_angles, paper_angles, owners, levels, visible=None, base_margin=0.05):
    owners_t = torch.tensor(owners)
    visible_t = (
        torch.tensor(visible) if visible is not None else torch.ones((len(query_angles), len(owners)), dtype=bool)
    )
    return batch_triplet_loss(
        torch.tensor([unit(a) for a in query_angles]),
        torch.tensor([unit(a) for a in paper_angles]),
        owners_t,
        torch.tensor(levels),
        visible_t,
        base_margin,
    ).item()


def test_triplet_loss_is_the_papers_formula_summed_over_triplets():
    s = [math.cos(a) for a in (0.3, 0.2, 1.2)]  # query at angle 0: cited, close negative, far negative
    margin = 0.1  # twice the base margin of 0.05: cited (level 1) against a negative (level 3)
    expected = max(0.0, s[1] - s[0] + margin) + max(0.0, s[2] - s[0] + margin)
    assert loss_of([0.0], [0.3, 0.2, 1.2], [0, 0, 0], [CITED, NEGATIVE, NEGATIVE]) == pytest.approx(expected, abs=1e-6)
    assert expected > 0  # the close negative violates the margin


def test_other_queries_papers_are_negatives_of_level_four():
    """Two queries with one cited paper and one negative each: query 0's triplets are (a, b) with margin 2m and
    (a, c), (a, d) with 3m, c and d being query 1's papers (their TripletLoss masks other classes to level 4)."""
    m = 0.05
    queries, papers = [0.0, 1.0], [0.4, 0.1, 0.35, 1.3]  # a, b for query 0; c, d for query 1
    owners, levels = [0, 0, 1, 1], [CITED, NEGATIVE, CITED, NEGATIVE]
    s = [[math.cos(q - p) for p in papers] for q in queries]
    expected = (
        max(0, s[0][1] - s[0][0] + 2 * m)
        + max(0, s[0][2] - s[0][0] + 3 * m)
        + max(0, s[0][3] - s[0][0] + 3 * m)
        + max(0, s[1][3] - s[1][2] + 2 * m)
        + max(0, s[1][0] - s[1][2] + 3 * m)
        + max(0, s[1][1] - s[1][2] + 3 * m)
    )
    assert loss_of(queries, papers, owners, levels) == pytest.approx(expected, abs=1e-6)
    own_only = [[True, True, False, False], [False, False, True, True]]
    expected_own = max(0, s[0][1] - s[0][0] + 2 * m) + max(0, s[1][3] - s[1][2] + 2 * m)
    assert loss_of(queries, papers, owners, levels, own_only) == pytest.approx(expected_own, abs=1e-6)


def test_mined_positives_rank_between_cited_and_negatives():
    m = 0.05
    s = [math.cos(a) for a in (0.5, 0.1, 0.4)]
    expected = (
        max(0.0, s[1] - s[0] + m)  # mined positive (2) vs cited (1)
        + max(0.0, s[2] - s[0] + 2 * m)  # negative (3) vs cited
        + max(0.0, s[2] - s[1] + m)  # negative vs mined positive
    )
    got = loss_of([0.0], [0.5, 0.1, 0.4], [0, 0, 0], [CITED, MINED_POSITIVE, NEGATIVE])
    assert got == pytest.approx(expected, abs=1e-6)


def test_a_query_never_sees_its_own_cited_or_citing_paper_as_another_querys_negative():
    batch = [ContextQuery("q0", "c0", "x", ("a",)), ContextQuery("q1", "a", "y", ("b",))]
    documents = [[("a", CITED), ("n", NEGATIVE)], [("b", CITED), ("a", NEGATIVE), ("n", NEGATIVE)]]
    owners, levels, visible, paper_ids = visibility(batch, documents, in_batch_negatives=True)
    assert paper_ids == ["a", "n", "b", "a", "n"]
    assert owners.tolist() == [0, 0, 1, 1, 1] and levels.tolist() == [CITED, NEGATIVE, CITED, NEGATIVE, NEGATIVE]
    # q0 cites a and drew n itself; q1 is written by a, cites b, drew a and n itself
    assert visible.tolist() == [[True, True, True, False, False], [False, False, True, True, True]]
    _, _, own_only, _ = visibility(batch, documents, in_batch_negatives=False)
    assert own_only.tolist() == [[True, True, False, False, False], [False, False, True, True, True]]


def test_rerank_triplet_loss_sums_a_querys_negatives_with_margin_point_one():
    positive = torch.tensor([0.7, 0.5])
    negatives = torch.tensor([[0.65, 0.2], [0.55, 0.3]])
    first = max(0.0, 0.65 - 0.7 + 0.1) + max(0.0, 0.2 - 0.7 + 0.1)
    second = max(0.0, 0.55 - 0.5 + 0.1) + max(0.0, 0.3 - 0.5 + 0.1)
    assert rerank_triplet_loss(positive, negatives).item() == pytest.approx((first + second) / 2)


def test_jaccard_words_drop_stop_words_and_plurals():
    assert jaccard_words("The graphs of these Networks, ranked by studies") == {"graph", "network", "ranked", "study"}
    assert jaccard(frozenset({"a", "b"}), frozenset({"b", "c"})) == pytest.approx(1 / 3)
    assert jaccard(frozenset(), frozenset()) == 0.0


def test_mined_papers_are_positives_when_as_similar_to_the_query_as_its_cited_paper():
    """Their rule: a prefetched paper is of level 2 when its Jaccard similarity to the query text (citing title,
    abstract and context) reaches the mean similarity of the query to its cited papers; otherwise level 3.
    `diluted` is the cited paper with many more words: close to the cited paper (Jaccard 0.5, a positive under a
    rule that compares papers with the cited one) but less similar to the query than the cited paper is."""
    cited = PaperText("cited", "graph ranking", "spectral methods for graph ranking")
    papers = {
        "cited": cited,
        "echo": PaperText("echo", "citation graph ranking", "spectral ranking of citation graph"),
        "diluted": PaperText("diluted", cited.title, f"{cited.abstract} proteins folding molecules dynamics"),
        "other": PaperText("other", "protein folding", "molecular dynamics"),
        "citing": PaperText("citing", "citation graph", "we rank citation graph nodes"),
    }
    query = ContextQuery("q", "citing", "spectral ranking TARGETCIT", ("cited",))
    document = query_document(query, papers["citing"])
    query_words = jaccard_words("citation graph we rank citation graph nodes spectral ranking TARGETCIT")
    threshold = jaccard(query_words, jaccard_words("graph ranking spectral methods for graph ranking"))
    assert jaccard(query_words, jaccard_words("citation graph ranking spectral ranking of citation graph")) >= threshold
    assert (
        jaccard(
            jaccard_words("graph ranking spectral methods for graph ranking"),
            jaccard_words("graph ranking spectral methods for graph ranking proteins folding molecules dynamics"),
        )
        >= 0.5
    )
    dataset = CitationDataset(papers, {"train": [query]}, frozenset({"cited", "echo", "diluted", "other"}))
    config = HAttenTrainConfig(prefetched_negatives=3, random_negatives=0)
    sampler = TripletSampler(dataset, config, random.Random(0))
    positions = {p: i for i, p in enumerate(dataset.paper_ids())}
    mined = torch.tensor([positions[p] for p in ("echo", "cited", "diluted", "other")]).numpy()
    chosen = dict(sampler.sample(query, document, mined))
    assert chosen == {"cited": CITED, "echo": MINED_POSITIVE, "diluted": NEGATIVE, "other": NEGATIVE}


class WordTokenizer:
    """One id per word (ids from 10), [CLS] 1, [SEP] 2, [PAD] 0: enough for PairEncoder."""

    cls_token_id, sep_token_id, pad_token_id = 1, 2, 0

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": [10 + len(word) for word in text.split()]}


@pytest.mark.parametrize("max_length", [64, 128, 512])
def test_pairs_stay_within_max_length_and_keep_the_context_and_a_candidate_part(max_length):
    from trainers.rerank_model import PairEncoder

    encoder = PairEncoder(WordTokenizer(), max_length=max_length)  # the query's cap, 256, is above 64 and 128
    citing = PaperText("c", "citing " * 50, "abstract " * 400)
    query = encoder.query_ids(citing, "local context words " * 30)  # 90 words of context
    assert len(query) == min(256, max_length // 2)
    candidate = PaperText("p", "candidate " * 20, "words " * 600)
    batch = encoder.encode(query, [candidate, PaperText("q", "short", "")])
    assert batch["input_ids"].shape[1] == max_length  # the long candidate fills the pair exactly
    assert int(batch["attention_mask"][0].sum()) == max_length
    assert int(batch["attention_mask"][1].sum()) == len(query) + 3 + 1  # [CLS] q [SEP] short [SEP]
    assert int(batch["token_type_ids"][0].sum()) == max_length - len(query) - 2  # candidate part and final [SEP]
