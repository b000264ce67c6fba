"""Works a reviewer names by name: found in a work slot, classified by the sentence's request, and resolved through
the database titles' heads, in memory and in the pipeline (every expected value written by hand)."""

from __future__ import annotations

import apache_beam as beam
import pytest

from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.mentions.classify import Bibliography
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, RECOMMENDED
from mapping.names import choose_named, mention_name_keys, name_key, title_name, title_name_key
from pipelines.citationr import build_pipeline
from pipelines.outputs import read_stats
from tests.support.review_notes import openreview_notes, s2orc_record
from tests.support.runs import read_rows, write_jsonl


def _names(text: str, sections=()) -> list[tuple[str, str]]:
    return [(m.text, m.kind) for m in extract_review_mentions(text, sections) if m.source == "name"]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("The authors should compare with LoRA and DreamBooth.", ["LoRA", "DreamBooth"]),
        (
            "How's the performance with stronger base models, like DinoV2, or BGE, NV-Embed?",
            ["DinoV2", "BGE", "NV-Embed"],
        ),
        (
            "It is unclear what is new over the previous work Smoothed Energy Guidance (SEG).",
            ["Smoothed Energy Guidance (SEG)"],
        ),
        ("Why not evaluate on datasets such as Places365 or Word2Vec embeddings?", ["Places365"]),
        ("A comparison with U-ViT [12] and HourglassDiT is missing.", ["U-ViT", "HourglassDiT"]),
        ("Could you provide a comparison with Qwen 2.5 3B?", ["Qwen 2.5 3B"]),
    ],
)
def test_names_in_a_work_slot_of_a_request_are_recommended(text, expected):
    assert _names(text) == [(name, RECOMMENDED) for name in expected]


@pytest.mark.parametrize(
    "text",
    [
        "The authors should compare with CNN-based methods and LLMs.",  # a class, a plural acronym
        "The authors should compare with Transformer models.",  # a class noun after the name
        "Results should be reported as in Table 2, such as Table 3.",  # document parts
        "The noise should be modelled, e.g., Gaussian noise.",  # a capitalised modifier
        "This is not enough for a prestigious conference like NeurIPS, which should be stricter.",  # a venue
        "I like the Summary of Challenges in Fig. 8, which should stay.",  # "like" as a verb
        "The authors should compare with Sparse Networks From Scratch.",  # a Title Case run: a title's, not a name
        "The method should be compared with CLIP-inspired encoders.",  # "-inspired"
        "How does it scale to larger models (7B+), and should the authors add 24k contexts?",  # quantities
        "The authors should try adding Gaussian or Euclidean variants.",  # adjectives of a person's name
        "Please explain why the motion diversity is low (i.e., MultiModality).",  # "i.e." restates, names no work
    ],
)
def test_what_is_no_name_is_not_taken(text):
    assert _names(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "The method beats strong baselines such as SafeDiffuser on every task.",  # names an example, asks nothing
        "Some forms of distributional BC (e.g. GAIL, BeT) could help alleviate this issue.",  # a bare "could"
        "Experiments on families including LLaMA and OPT show gains over existing pruning methods.",  # cue after
        "The authors use models such as BERT and report their scores.",  # what the submission uses
    ],
)
def test_names_without_a_request_are_discussed(text):
    found = _names(text)
    assert found and all(kind == DISCUSSED for _, kind in found)


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "Although the paper compares with methods like RoPE and ALiBi, it omits comparisons with Infini-Attention.",
            [("RoPE", DISCUSSED), ("ALiBi", DISCUSSED), ("Infini-Attention", RECOMMENDED)],
        ),
        ("The method outperforms prior methods such as ACT, a strong policy.", [("ACT", DISCUSSED)]),
        ("The comparison to your baselines such as GroupViT might not be fair.", [("GroupViT", DISCUSSED)]),
        ("Could you report metrics such as RMSE and MAPE?", []),  # not works
        ("The only novelty seems to be adding RAG, which should be discussed.", []),  # a generic acronym
        (
            "The training is similar to that of CLIP, but it uses less data compared to ImageNet 22k.",
            [("ImageNet 22k", DISCUSSED)],
        ),
        ("Their approach is similar to CARE, which learns separate encoders.", [("CARE", RECOMMENDED)]),
        (
            "The authors build on models such as DINO but should compare with iBOT.",
            [("DINO", DISCUSSED), ("iBOT", RECOMMENDED)],
        ),
        (
            "The paper ignores widely used embedding techniques such as Word2Vec or GloVe.",
            [("Word2Vec", RECOMMENDED), ("GloVe", RECOMMENDED)],
        ),
        ("How does your method compare to approaches such as CoT, self-consistency?", [("CoT", RECOMMENDED)]),
    ],
)
def test_what_the_sentence_says_before_a_name_decides_it(text, expected):
    assert _names(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        (
            "It would be great to compare their methods with open-sourced methods (DAMO-text2video, VideoCrafters).",
            [("DAMO-text2video", RECOMMENDED), ("VideoCrafters", RECOMMENDED)],
        ),
        ("Equivariant architectures, e.g., Equiformer have existed for several years.", [("Equiformer", RECOMMENDED)]),
        ("Could you confirm if it is superior to GroupDRO on CelebA?", [("GroupDRO", RECOMMENDED)]),
        ("When you compared the rate with baselines, e.g., stocBiO, how did you justify it?", [("stocBiO", DISCUSSED)]),
        ("The method might be unsuitable for tasks such as GSM8K.", [("GSM8K", DISCUSSED)]),
        ("It is worth noting that the method beats prior methods such as CLIP-Adapter.", [("CLIP-Adapter", DISCUSSED)]),
    ],
)
def test_bracketed_and_example_leads_and_comparison_questions_decide_by_their_cue(text, expected):
    assert _names(text) == expected


def test_names_in_the_strengths_are_asides():
    text = "It is worth commending that it is not merely an application of methods such as CLIP-Adapter."
    assert _names(text, ((0, "strengths"),)) == [("CLIP-Adapter", DISCUSSED)]


def test_names_in_the_summary_need_a_strong_request():
    text = "The evaluation would be stronger with baselines such as MaskGIT."
    assert _names(text, ((0, "summary"),)) == [("MaskGIT", DISCUSSED)]
    assert _names(text, ((0, "weaknesses"),)) == [("MaskGIT", RECOMMENDED)]
    missing = "A comparison with MaskGIT is missing."
    assert _names(missing, ((0, "summary"),)) == [("MaskGIT", RECOMMENDED)]


def test_a_name_the_submission_cites_by_its_title_head_is_already_cited():
    bibliography = Bibliography(
        titles=("GroupViT: Semantic Segmentation Emerges from Text Supervision", "Attention Is All You Need"),
        source="own_paper",
    )
    text = "The authors should compare with GroupViT and MaskCLIP."
    kinds = {m.text: m.kind for m in extract_review_mentions(text, bibliography=bibliography) if m.source == "name"}
    assert kinds == {"GroupViT": ALREADY_CITED, "MaskCLIP": RECOMMENDED}


def test_name_keys_and_title_heads():
    assert name_key("U-ViT") == name_key("u vit") == "uvit" and name_key("DINOv2") == name_key("DinoV2") == "dinov2"
    assert name_key("AB") is None  # too short to mean one work
    assert title_name("LoRA: Low-Rank Adaptation of Large Language Models") == "LoRA"
    assert title_name("Self-Refine: Iterative Refinement with Self-Feedback") == "Self-Refine"
    assert title_name("Attention Is All You Need") is None  # no colon, no name
    assert title_name("On the Limits of Deep Learning Models: A Survey") is None  # a head of six words is no name
    assert title_name_key("Smoothed Energy Guidance: Guiding Diffusion Models") == "smoothedenergyguidance"
    assert mention_name_keys("Smoothed Energy Guidance (SEG)") == [
        "smoothedenergyguidanceseg",
        "smoothedenergyguidance",
        "seg",
    ]


def test_a_shared_name_goes_to_the_strictly_oldest_paper():
    assert choose_named([("p1", 2021)]) == "p1"
    assert choose_named([("late", 2020), ("first", 2018)]) == "first"
    assert choose_named([("a", 2019), ("b", 2019)]) is None  # two of one age: ambiguous
    assert choose_named([("dated", 2019), ("undated", None)]) == "dated"
    assert choose_named([]) is None
    # the review's year: no paper dated more than a year after it (a reviewer of 2023 cannot mean a paper of 2025;
    # one of 2024 may be the venue version of a preprint of 2023)
    assert choose_named([("late", 2025)]) == "late" and choose_named([("late", 2025)], review_year=2023) is None
    assert choose_named([("venue", 2024)], review_year=2023) == "venue"
    assert choose_named([("undated", None), ("late", 2025)], review_year=2023) == "undated"


def _names_run(tmp_path, matcher: str = "memory", resolve_names: bool = True) -> tuple[dict, dict]:
    """A run over four reviews naming works and a database of title heads: (name mentions, stats)."""
    reviews = openreview_notes(
        tmp_path / "notes.jsonl",
        [("S1", "Adapters for Small Models")],
        [
            ("R1", "S1", "The authors should compare with LoRA and BERT."),
            ("R2", "S1", "How does it compare with methods such as Twin, GhostNetZ or Zo?"),
            ("R3", "S1", "The method uses adapters such as LoRA in every layer."),  # discussed: not resolved
            ("R4", "S1", "The authors should compare with Tiebreak."),  # its only paper is dated after the review
        ],
    )
    metadata = write_jsonl(
        tmp_path / "metadata.jsonl",
        [
            s2orc_record("100", "LoRA: Low-Rank Adaptation of Large Language Models", 2021),
            s2orc_record(
                "200", "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", 2018
            ),
            s2orc_record("210", "BERT: A Review of Applications in Natural Language Processing", 2020),  # later
            s2orc_record("300", "Twin: Paired Encoders for Retrieval", 2022),
            s2orc_record("310", "Twin: Dual Networks for Tracking", 2022),  # same year: ambiguous
            s2orc_record("400", "Adapter Layers for Transfer", 2019),  # no head: no name
            s2orc_record("500", "Tiebreak: Late Ties in Ranking", 2025),  # after the reviews of 2023
        ],
    )
    with beam.Pipeline(runner="FnApiRunner") as pipeline:
        build_pipeline(
            pipeline,
            {"reviews": [str(reviews)], "metadata": [str(metadata)]},
            str(tmp_path / "out"),
            title_matcher=matcher,
            resolve_names=resolve_names,
        )
    rows = read_rows(tmp_path / "out" / "mentions")
    names = {
        (m["review_id"].removeprefix("venue-2023:"), m["text"]): (m["kind"], m["paper_id"], m["resolved_by"])
        for m in rows
    }
    return names, read_stats(str(tmp_path / "out"))


@pytest.mark.e2e
@pytest.mark.parametrize("matcher", ["memory", "join"])
def test_the_pipeline_resolves_names_through_title_heads(tmp_path, matcher):
    names, stats = _names_run(tmp_path, matcher)
    assert names == {
        ("R1", "LoRA"): (RECOMMENDED, "100", "name"),
        ("R1", "BERT"): (RECOMMENDED, "200", "name"),
        ("R2", "Twin"): (RECOMMENDED, None, None),
        ("R2", "GhostNetZ"): (RECOMMENDED, None, None),
        ("R2", "Zo"): (RECOMMENDED, None, None),
        ("R3", "LoRA"): (DISCUSSED, None, None),
        ("R4", "Tiebreak"): (RECOMMENDED, None, None),
    }
    assert stats["resolution"] == {
        "resolved_by:name": 2,
        "unresolved:name_after_review": 1,
        "unresolved:name_ambiguous": 1,
        "unresolved:name_not_in_database": 1,
        "unresolved:name_too_short": 1,
    }
    assert (stats["funnel"]["recommended_resolved"], stats["funnel"]["recommended_unresolved"]) == (2, 4)
    assert all(stats["checks"].values())
    positives = {p["paper_id"] for p in read_rows(tmp_path / "out" / "positives") if p["resolved"]}
    assert positives == {"100", "200"}


@pytest.mark.e2e
def test_without_name_resolution_every_recommended_name_stays_unresolved_and_counted(tmp_path):
    names, stats = _names_run(tmp_path, resolve_names=False)
    recommended_names = [("R1", "LoRA"), ("R1", "BERT"), ("R2", "Twin"), ("R2", "GhostNetZ"), ("R2", "Zo")]
    assert names == {
        **{name: (RECOMMENDED, None, None) for name in recommended_names},
        ("R3", "LoRA"): (DISCUSSED, None, None),
        ("R4", "Tiebreak"): (RECOMMENDED, None, None),
    }
    assert stats["resolution"] == {"unresolved:name_not_looked_up": 6}
    assert (stats["funnel"]["recommended_resolved"], stats["funnel"]["recommended_unresolved"]) == (0, 6)
    assert stats["options"]["resolve_names"] is False and all(stats["checks"].values())


@pytest.mark.parametrize(
    "text,expected",
    [
        # other works exist or are in use, said in a weakness: they are suggested
        (
            "WEAKNESSES:\nThere are a lot of more complex benchmarks for RL, e.g., MuJoCo and DeepMind.",
            [("MuJoCo", RECOMMENDED), ("DeepMind", RECOMMENDED)],
        ),
        (
            "WEAKNESSES:\nNumerous evaluation benchmarks are available, such as MT-Bench and AlpacaEval.",
            [("MT-Bench", RECOMMENDED), ("AlpacaEval", RECOMMENDED)],
        ),
        # ... not in the review's summary of the paper
        (
            "SUMMARY:\nThere are many methods for this, such as LoRA, and the paper improves on them.",
            [("LoRA", DISCUSSED)],
        ),
        # "missing" about error bars, "could not be" a negated modal: no request about the works named
        (
            "WEAKNESSES:\nFor benchmarks (e.g., GEOM-QM9, MP-20), the evaluation is missing standard deviations.",
            [("GEOM-QM9", DISCUSSED), ("MP-20", DISCUSSED)],
        ),
        (
            "WEAKNESSES:\nIn some cases (e.g., ETFlow), the reported baseline results could not be reproduced.",
            [("ETFlow", DISCUSSED)],
        ),
        # while "missing" about works still asks for them
        (
            "WEAKNESSES:\nComparisons with strong baselines, e.g., DreamBooth, are missing.",
            [("DreamBooth", RECOMMENDED)],
        ),
    ],
)
def test_existence_cues_and_the_scope_of_missing(text, expected):
    field, _, body = text.partition(":\n")
    assert _names(body, ((0, field.lower()),)) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("In particular, the paper (Glasgow, 2023) had the goal.", [("Glasgow", 2023)]),
        (
            "The results (Azerbayev at al, Wu et al) should be recalled.",
            [("Azerbayev at al", None), ("Wu et al", None)],
        ),
        ("I believe Robinson+2025 is one significant prior work.", [("Robinson", 2025)]),
        (
            "The authors should discuss Glasgow (2023) and Smith et al. (2021).",
            [("Glasgow", 2023), ("Smith et al.", 2021)],
        ),
        ("As shown before (e.g., Smith 2020; Lee and Kim, 2021), it works.", [("Smith", 2020), ("Lee and Kim", 2021)]),
        # venues, models and document parts with a year are no authors
        ("Results at NeurIPS (2023), LLaMA (2023) and in Table (2023) are strong.", []),
    ],
)
def test_author_year_citations_in_their_usual_forms(text, expected):
    found = [(m.authors, m.year) for m in extract_review_mentions(text) if m.source == "author_year"]
    assert found == expected


def test_relatedness_and_passive_requests_are_strong_cues():
    text = (
        "WEAKNESSES:\nThere was also some work by Meija et al. (2022) on summary statistics, that seems quite "
        "related to the presented setup. The results of Wu et al. (2020) should be recalled and compared to."
    )
    found = [(m.text, m.kind) for m in extract_review_mentions(text) if m.source == "author_year"]
    assert found == [("Meija et al. (2022)", RECOMMENDED), ("Wu et al. (2020)", RECOMMENDED)]
