"""Unit tests of the review readers and mention rules, on sentences as real reviews write them."""

from __future__ import annotations

import json

import pytest

from extractors.clients.resolvers import OnlineResolver, ResolverConfig
from extractors.reviews.forms import parse_review_file, split_for_submission
from extractors.reviews.mentions import (
    ALREADY_CITED,
    DISCUSSED,
    RECOMMENDED,
    Bibliography,
    clean_review_text,
    extract_review_mentions,
    find_identifiers,
    title_from_reference,
)
from extractors.reviews.records import Review, Submission
from mapping.records import DeadLetter
from tests.support.counters import counter_dict


def test_cleaning_keeps_links_and_turns_latex_quotes_into_quotes():
    text = clean_review_text(
        'See <a href="https://arxiv.org/abs/2101.00101">this</a> and [paper](https://openreview.net/forum?id=Ab_c-12)'
        " and ``Graph Rewiring for Long-Range Message Passing'' &amp; **bold**."
    )
    assert "https://arxiv.org/abs/2101.00101" in text and "https://openreview.net/forum?id=Ab_c-12" in text
    assert "\u201cGraph Rewiring for Long-Range Message Passing\u201d" in text
    assert "&amp;" not in text and "**" not in text


def test_identifiers_in_urls_and_bare_forms():
    hits = find_identifiers(
        "connect this work with Linear MDP (https://arxiv.org/pdf/1907.05388.pdf), see doi:10.1109/GlobalSIP.2018.8646701, "
        "https://openreview.net/forum?id=MXV1TACjo_ and https://aclanthology.org/2020.acl-main.207.pdf"
    )
    assert [h.arxiv_id for h in hits if h.arxiv_id] == ["1907.05388"]
    assert [h.doi for h in hits if h.doi] == ["10.1109/globalsip.2018.8646701"]
    assert [h.openreview_id for h in hits if h.openreview_id] == ["MXV1TACjo_"]
    assert [h.acl_id for h in hits if h.acl_id] == ["2020.acl-main.207"]


def test_titles_of_real_reference_lines():
    assert title_from_reference("A. Defazio. A Simple Practical Accelerated Method for Finite Sums. NIPS 2016") == (
        "A Simple Practical Accelerated Method for Finite Sums"
    )
    assert title_from_reference(
        "Kawana et al.: Unsupervised pose-aware part decomposition for 3d articulated objects."
    ) == ("Unsupervised pose-aware part decomposition for 3d articulated objects")
    assert (
        title_from_reference(
            'Pfaff, Tobias, et al. "Learning mesh-based simulation with graph networks." arXiv preprint arXiv:2010.03409 (2020).'
        )
        == "Learning mesh-based simulation with graph networks"
    )
    assert (
        title_from_reference(
            "Sami Khairy and Prasanna Balaprakash. 2022. Multifidelity reinforcement learning with control variates. "
            "arXiv preprint arXiv:2206.05165 (2022)."
        )
        == "Multifidelity reinforcement learning with control variates"
    )


def test_reference_list_is_recommended_and_keeps_identifiers():
    text = (
        "WEAKNESSES:\nThe paper lacks some important related work [1, 2].\n\n"
        '[1] Dawson, Charles, and Chuchu Fan. "Safe nonlinear control using robust neural lyapunov-barrier functions." '
        "In Conference on Robot Learning, pp. 1724-1735. PMLR, 2022.\n"
        "[2] Nasr, Milad, et al. Tight Auditing of Differentially Private Machine Learning. arXiv:2302.07956 (2023).\n"
    )
    count, counts = counter_dict()
    found = extract_review_mentions(text, ((12, "weaknesses"),), count=count)
    assert [(m.title, m.kind) for m in found] == [
        ("Safe nonlinear control using robust neural lyapunov-barrier functions", RECOMMENDED),
        ("Tight Auditing of Differentially Private Machine Learning", RECOMMENDED),
    ]
    assert found[1].arxiv_id == "2302.07956" and found[0].marker == "1"
    assert counts["mentions:reference_entry"] == 2 and counts["mentions_kind:recommended"] == 2


def test_already_cited_and_discussed():
    text = (
        "SUMMARY:\nThe method builds on Smith et al. (2021) and follows \u201cDeep Sets for Point Clouds\u201d.\n\n"
        "WEAKNESSES:\nThe authors should cite \u201cA Survey of Graph Rewiring Methods\u201d and also compare with "
        "\u201cDeep Sets for Point Clouds\u201d.\n"
    )
    sections = ((9, "summary"), (text.index("WEAKNESSES:\n") + 12, "weaknesses"))
    bibliography = Bibliography(titles=("Deep sets for point clouds.",))
    found = extract_review_mentions(text, sections, bibliography)
    kinds = {(m.source, m.title or m.authors, m.section): m.kind for m in found}
    assert kinds[("author_year", "Smith et al.", "summary")] == DISCUSSED
    assert kinds[("quoted_title", "A Survey of Graph Rewiring Methods", "weaknesses")] == RECOMMENDED
    assert kinds[("quoted_title", "Deep Sets for Point Clouds", "weaknesses")] == ALREADY_CITED
    assert kinds[("quoted_title", "Deep Sets for Point Clouds", "summary")] == ALREADY_CITED


def test_quoted_claims_are_not_titles():
    found = extract_review_mentions(
        'WEAKNESSES:\nThe claim "our method is the first to solve this problem" is too strong.\n'
    )
    assert found == []


@pytest.mark.parametrize(
    "review",
    [
        "The definition of the new problem \u201cCloud Object Detector Adaptation\u201d should be stated precisely.\n",
        'Typos: "HE scheme" should be "the HE scheme" in Section 2, and the related work should be cited.\n',
        'The term "Sparse Gated Routing Networks" should be defined before it is used.\n',
        'The range "1, ..., N" is missing parentheses and should be corrected to "i, j \u2208 {1, . . . , N}".\n',
        "The paper is evaluated in terms of PSNR (Peak Signal-to-Noise Ratio), which should be extended.\n",
        # a LaTeX arrow between the typo and its correction
        "There are some typos: \u201ccan be denotes as\u201d $\\rightarrow$ \u201ccan be denoted as\u201d.\n",
        # the submission's own part, named by its heading
        "The \u201cTwo-Stage Source View Selection and Mixed Training\u201d section should be explained better.\n",
        # the reviewer's own heading: a colon inside the quotes
        "QUESTIONS:\n\u201cJustification of the High Variance Claim:\u201d The paper should justify it.\n",
        # what the submission calls its method
        "The method is referred to as \u201cRao-Blackwell Gradient Estimation\u201d but should cite the theorem.\n",
    ],
)
def test_quoted_terms_and_corrections_are_not_titles(review):
    assert [m.title for m in extract_review_mentions(review) if m.title] == []


def test_a_quoted_title_after_a_request_is_still_one():
    review = 'The authors should compare with "Sparse Gated Routing Networks for Retrieval" (2021).\n'
    assert [m.title for m in extract_review_mentions(review)] == ["Sparse Gated Routing Networks for Retrieval"]


def test_readers_cover_the_layouts_and_dead_letter_what_they_cannot_read():
    peerread = json.dumps(
        {
            "id": "P1",
            "title": "T",
            "abstract": "A",
            "conference": "ICLR 2017",
            "reviews": [{"comments": "Good paper."}, {"comments": "  "}],
        }
    ).encode()
    items = list(parse_review_file(peerread, "p.json"))
    assert [type(i).__name__ for i in items] == ["Submission", "Review", "DeadLetter"]
    assert items[0].year == 2017 and items[2].reason == "empty_review"
    v1 = {
        "id": "R1",
        "forum": "S1",
        "invitation": "ICLR.cc/2019/Conference/-/Paper1/Official_Review",
        "content": {"review": "Fine.", "rating": "6"},
    }
    v2 = {
        "id": "R2",
        "forum": "S1",
        "invitations": ["NeurIPS.cc/2024/Conference/Submission1/-/Official_Review"],
        "content": {"weaknesses": {"value": "Missing baselines."}},
    }
    lines = (json.dumps(v1) + "\n" + json.dumps(v2) + "\n{broken\n").encode()
    items = list(parse_review_file(lines, "notes.jsonl"))
    reviews = [i for i in items if isinstance(i, Review)]
    assert [(r.review_id, r.year) for r in reviews] == [("R1", 2019), ("R2", 2024)]
    assert [i.reason for i in items if isinstance(i, DeadLetter)] == ["bad_json"]
    rows = b'id,forum,weaknesses,response,paper_info\nR3,S3,"Fine work.","Yes, cite X","Secret Title"\n'
    items = list(parse_review_file(rows, "export.csv"))
    review = next(i for i in items if isinstance(i, Review))
    assert "Fine work." in review.text and "Secret Title" not in review.text and "cite X" not in review.text
    assert any(isinstance(i, Submission) and i.submission_id == "S3" for i in items)


def test_splits_follow_years_about_eight_one_one():
    counts = {"2021": 500, "2022": 300, "2023": 200}
    keys = [(f"s{i}", 2021 if i < 500 else 2022 if i < 800 else 2023) for i in range(1000)]
    splits = [split_for_submission(k, y, counts, (0.8, 0.9)) for k, y in keys]
    assert all(s == "train" for s, (_, y) in zip(splits, keys, strict=True) if y == 2021)
    assert all(s != "train" for s, (_, y) in zip(splits, keys, strict=True) if y == 2023)
    assert 0.75 < splits.count("train") / 1000 < 0.85 and 0.05 < splits.count("test") / 1000 < 0.15
    assert splits == [split_for_submission(k, y, counts, (0.8, 0.9)) for k, y in keys]


class FakeResponse:
    def __init__(self, payload):
        self.payload = payload

    def raise_for_status(self):
        return None

    def json(self):
        return self.payload


class FakeSession:
    def __init__(self, payload=None, error=None):
        self.payload, self.error, self.calls = payload, error, 0

    def get(self, url, params, timeout, headers=None):
        self.calls += 1
        assert timeout > 0
        if self.error:
            raise self.error
        return FakeResponse(self.payload)


def test_online_resolver_is_cached_and_fails_soft(tmp_path):
    payload = {
        "data": [
            {
                "paperId": "abc",
                "title": "Graph Rewiring for Long-Range Message Passing.",
                "year": 2021,
                "externalIds": {"ArXiv": "2101.00101"},
            }
        ]
    }
    session = FakeSession(payload)
    resolver = OnlineResolver(ResolverConfig(names=("s2",), cache_dir=str(tmp_path), min_interval_s=0), session)
    paper = resolver.resolve("Graph rewiring for long-range message passing")
    assert paper is not None and paper.paper_id == "2101.00101"
    assert resolver.resolve("Graph rewiring for long-range message passing").paper_id == "2101.00101"
    assert session.calls == 1
    assert resolver.resolve("An entirely different paper title here") is None
    failing = OnlineResolver(
        ResolverConfig(names=("dblp",), cache_dir=str(tmp_path / "x"), min_interval_s=0),
        FakeSession(error=TimeoutError("slow")),
    )
    assert failing.resolve("Graph rewiring for long-range message passing") is None


def test_titles_of_apa_springer_and_comma_style_entries():
    assert (
        title_from_reference(
            "Li, Y., Yuan, G., Wen, Y. and Ren, J., 2022. EfficientFormer: Vision Transformers at MobileNet Speed. "
            "arXiv preprint arXiv:2206.01191."
        )
        == "EfficientFormer: Vision Transformers at MobileNet Speed"
    )
    assert (
        title_from_reference(
            "Stanton, S., Maddox, W., & Wilson, A. G. (2022, June). Accelerating bayesian optimization with "
            "denoising autoencoders. In International Conference on Machine Learning (pp. 1-2). PMLR."
        )
        == "Accelerating bayesian optimization with denoising autoencoders"
    )
    assert title_from_reference("Piper: Multidimensional Planner for DNN Parallelization, NeurIPS 2021") == (
        "Piper: Multidimensional Planner for DNN Parallelization"
    )
    assert title_from_reference("Smoothing and First Order Methods: A Unified Framework. SIAM J. Optim. 2012") == (
        "Smoothing and First Order Methods: A Unified Framework"
    )
    assert title_from_reference(
        "EAGER: Asking and Answering Questions for Reward Shaping. CoRR abs/2206.09674 (2022)"
    ) == ("EAGER: Asking and Answering Questions for Reward Shaping")
    assert (
        title_from_reference(
            'Xu, J., & Wang, X. (2022). GroupViT: Semantic Segmentation from Text. In "Proceedings of the IEEE/CVF '
            'Conference on Computer Vision and Pattern Recognition" (pp. 1-2).'
        )
        == "GroupViT: Semantic Segmentation from Text"
    )


def test_reference_lines_without_authors_and_markers_that_are_not_citations():
    text = (
        "WEAKNESSES:\nPrompting LLMs zero-shot is not new.\n"
        "Finetuned language models are zero-shot learners. arXiv preprint arXiv:2109.01652.\n"
        "[1] - B. Hanin. Correlation functions in random networks at finite width. arXiv:2204.01058, 2022.\n"
        "[Line 20] The claim about neuroscience is too strong.\n"
    )
    found = extract_review_mentions(text, ((12, "weaknesses"),))
    assert [(m.source, m.title, m.kind) for m in found] == [
        ("reference_entry", "Finetuned language models are zero-shot learners", RECOMMENDED),
        ("reference_entry", "Correlation functions in random networks at finite width", RECOMMENDED),
    ]


def test_titles_in_running_text_and_italics():
    text = clean_review_text(
        "WEAKNESSES:\nRelated works are not enough: the paper does not mention CER (Competitive experience replay).\n"
        "It would be nice to cite the paper of Mannor et al (Online learning with sample path constraints).\n"
        "There is literature on this, see Chen and Wu (2019): Testing for Trends in High-Dimensional Time Series.\n"
        "The authors should compare with _Optnet: Differentiable optimization as a layer in neural networks_ Amos, 2017.\n"
        "Compare with prior work such as Visual Programming: Compositional reasoning without training, CVPR 2023.\n"
    )
    titles = {m.title: m.kind for m in extract_review_mentions(text, ((12, "weaknesses"),)) if m.title}
    assert titles == {
        "Competitive experience replay": RECOMMENDED,
        "Online learning with sample path constraints": RECOMMENDED,
        "Testing for Trends in High-Dimensional Time Series": RECOMMENDED,
        "Optnet: Differentiable optimization as a layer in neural networks": RECOMMENDED,
        "Visual Programming: Compositional reasoning without training": RECOMMENDED,
    }


def test_lower_case_quoted_title_with_authors_and_venue_and_the_request_before_it():
    text = (
        "WEAKNESSES:\nAuthors should use a stronger ComplEx for comparison. (See Lacroix, Timothee, and Guillaume "
        'Obozinski. "Canonical tensor decomposition for knowledge base completion." International Conference on '
        'Machine Learning. PMLR, 2018.)\nThe claim "our results are very good" is too strong.\n'
    )
    found = extract_review_mentions(text, ((12, "weaknesses"),))
    assert [(m.title, m.kind) for m in found] == [
        ("Canonical tensor decomposition for knowledge base completion", RECOMMENDED)
    ]


def test_see_table_is_not_a_request():
    found = extract_review_mentions("WEAKNESSES:\nUpadhyay et al., 2021 report AUC (see Table 2 there).\n")
    assert found and all(m.kind == DISCUSSED for m in found)


def test_labelled_dev_reviews_parse_the_reviewers_reference_lists(shared):
    """On real labelled reviews (dev half), numbered reference lists yield their titles, not venues."""
    import csv
    import hashlib

    from mapping.titles import normalize_title

    path = shared / "reviews" / "review-citation-bias" / "annotated_data_for_suggested_papers"
    path = path / "NeurIPS2023_extra_annoatated_pur.csv"
    gold = {}
    for row in csv.DictReader(path.open()):
        if int(hashlib.sha1(row["forum"].encode()).hexdigest(), 16) % 2 == 0:  # the dev half only
            gold.setdefault(row["id"], []).append(normalize_title(row["paper_info"]))
    reviews = [
        i for i in parse_review_file(path.read_bytes(), str(path)) if isinstance(i, Review) and i.review_id in gold
    ]
    extracted = found = 0
    for review in reviews:
        titles = [normalize_title(m.title) for m in extract_review_mentions(review.text, review.sections) if m.title]
        extracted += len(titles)
        found += sum(1 for t in titles if t in gold.get(review.review_id, []))
        assert not any(t.startswith(("proceedings of", "advances in neural")) for t in titles)
    assert extracted and found / extracted > 0.3


def test_sentences_do_not_end_at_abbreviations_or_initials():
    from extractors.reviews.mentions import split_sentences

    text = 'For instance, Vandegar et. al "Neural Empirical Bayes" use it. See e.g. the A. L. Maas paper. Done.'
    assert split_sentences(text) == [
        'For instance, Vandegar et. al "Neural Empirical Bayes" use it.',
        "See e.g. the A. L. Maas paper.",
        "Done.",
    ]
    # the request before "e.g." reaches the arXiv link after it
    review = "This approach is clearly not new, see e.g. https://arxiv.org/abs/1802.04821 and the references therein."
    (mention,) = extract_review_mentions(review)
    assert mention.arxiv_id == "1802.04821" and mention.kind == RECOMMENDED


def test_titles_after_apa_gbt_and_harvard_author_lists_and_in_bibtex():
    assert (
        title_from_reference(
            "Maas, A. L., Hannun, A. Y., & Ng, A. Y. Rectifier nonlinearities improve neural network acoustic models. "
            "In Proc. ICML, 2013."
        )
        == "Rectifier nonlinearities improve neural network acoustic models"
    )
    assert (
        title_from_reference(
            "Zhou R, Jiang C, Xu Q. A survey on generative adversarial network-based text-to-image synthesis[J]. "
            "Neurocomputing, 2021."
        )
        == "A survey on generative adversarial network-based text-to-image synthesis"
    )
    assert (
        title_from_reference(
            "Lv Z, Li X, et al. Semantic-shape Adaptive Feature Modulation for Semantic Image Synthesis[C]//Proceedings "
            "of the IEEE/CVF Conference on Computer Vision and Pattern Recognition. 2022: 11214-11223."
        )
        == "Semantic-shape Adaptive Feature Modulation for Semantic Image Synthesis"
    )
    assert (
        title_from_reference(
            "Manna, Z. and Pnueli, A., 1990, August. A hierarchy of temporal properties. In Proceedings of the ninth "
            "annual ACM symposium on Principles of distributed computing (pp. 377-410)."
        )
        == "A hierarchy of temporal properties"
    )
    assert (
        title_from_reference(
            "Locatello, F., Weissenborn, D., Uszkoreit, J., ... & Kipf, T. (2020). Object-centric learning with slot "
            "attention. Advances in Neural Information Processing Systems, 33."
        )
        == "Object-centric learning with slot attention"
    )
    assert (
        title_from_reference(
            "@article{Choi2016TowardsMC, title={Towards Music Captioning: Generating Music Playlist Descriptions}, "
            "author={Keunwoo Choi and Mark B. Sandler}, journal={ArXiv}, year={2016}}"
        )
        == "Towards Music Captioning: Generating Music Playlist Descriptions"
    )
    # a comma inside the title is not an author list; a venue inside quotes is not the title
    assert (
        title_from_reference(
            "Dan Ley, Saumitra Mishra, Daniele Magazzeni. Global Counterfactual Explanations: Investigations, "
            "Implementations and Improvements. ICLR Workshop 2022."
        )
        == "Global Counterfactual Explanations: Investigations, Implementations and Improvements"
    )
    assert (
        title_from_reference(
            "Sequential model-based optimization for general algorithm configuration. F Hutter, HH Hoos, K Leyton-Brown. "
            "\u201cLearning and Intelligent Optimization: 5th International Conference\u201d. 2011."
        )
        == "Sequential model-based optimization for general algorithm configuration"
    )


def test_letter_markers_author_year_markers_and_et_al_bullets():
    review = (
        "In this setting, expansion based approaches [a,b] are not compared.\n\n"
        "[a] Calibrating CNNs for Lifelong Learning, NeurIPS-20\n\n"
        "[b] Ternary Feature Masks: zero-forgetting for task-incremental learning, CVPRW-21\n"
        "Related works are not discussed. Just to name a few:\n"
        "    - Cao et al. Multilingual Alignment of Contextual Word Representations\n"
        "There is a concurrent work (De Brouwer et al. 2019) that is missing.\n"
        '(De Brouwer et al. 2019) De Brouwer, Edward, et al. "GRU-ODE-Bayes: Continuous modeling of '
        'sporadically-observed time series." Advances in neural information processing systems 32 (2019).\n'
        "* [5] also links local miscalibration to proximity, NeurIPS 2023.\n"
    )
    titles = {m.title for m in extract_review_mentions(review) if m.kind == RECOMMENDED and m.title}
    assert titles == {
        "Calibrating CNNs for Lifelong Learning",
        "Ternary Feature Masks: zero-forgetting for task-incremental learning",
        "Multilingual Alignment of Contextual Word Representations",
        "GRU-ODE-Bayes: Continuous modeling of sporadically-observed time series",
    }


def test_quotes_naming_review_fields_or_requests_are_not_titles():
    review = (
        'The related work is thin. See more in "Clarity, Quality, Novelty And Reproducibility".\n'
        "\u201cMissing related work\u201d: expansion-based methods should be discussed.\n"
        "Some related works are ignored (e.g. Multi-Vector Attention Models for Deep Re-ranking, )."
    )
    titles = [m.title for m in extract_review_mentions(review) if m.title]
    assert titles == ["Multi-Vector Attention Models for Deep Re-ranking"]


def test_bare_literature_is_not_a_request():
    sentence = (
        "The proof relies on results from (Lee et al., 2022a), but the authors do not clearly state if this "
        "reduction already existed in the literature."
    )
    assert not [m for m in extract_review_mentions(sentence) if m.kind == RECOMMENDED]


def test_method_names_with_their_venue_are_mentions_that_need_a_strong_cue():
    review = (
        "Many existing works on sparse training are not compared, such as MEST (NeurIPS 2021) or GradMax (ICLR 2022).\n"
        "RigL (ICML 2020) and GaP (ICLR 2022, Effective Model Sparsification by Scheduled Grow-and-Prune Methods) "
        "show that non-uniform sparsity helps.\n"
    )
    mentions = [m for m in extract_review_mentions(review) if m.source == "named_work"]
    assert [(m.kind, m.year) for m in mentions[:2]] == [(RECOMMENDED, 2021), (RECOMMENDED, 2022)]
    assert [m.kind for m in mentions[2:]] == [DISCUSSED, DISCUSSED]
    assert mentions[3].title == "Effective Model Sparsification by Scheduled Grow-and-Prune Methods"


# ------------------------------------------------------------------------------- issue 19: general mechanisms


def _recommended(text: str) -> list[str]:
    return [m.title for m in extract_review_mentions(clean_review_text(text)) if m.kind == RECOMMENDED and m.title]


def test_a_list_item_is_judged_by_the_line_that_leads_into_the_list():
    text = (
        "- In the related work section, several recent works are missed, for instance:\n"
        '  - von Kugelgen et al, "Self-Supervised Learning with Data Augmentations Provably Isolates Content", NeurIPS\n'
        '  - Brehmer et al, "Weakly supervised causal representation learning"\n'
        '  - Ahuja et al, "Interventional Causal Representation Learning"\n'
    )
    assert _recommended(text) == [
        "Self-Supervised Learning with Data Augmentations Provably Isolates Content",
        "Weakly supervised causal representation learning",
        "Interventional Causal Representation Learning",
    ]


def test_a_sentence_hard_wrapped_over_lines_is_read_whole():
    text = (
        "- mentions of closely related work, but with no deeper discussion on comparing the approaches,\n"
        "  or direct experimental comparisons\n"
        '  as well as "A Scalable Approach to Control Diverse Behaviors for Physically Simulated Characters"\n'
    )
    assert _recommended(text) == [
        "A Scalable Approach to Control Diverse Behaviors for Physically Simulated Characters"
    ]


def test_quotes_in_single_and_doubled_single_quotes_and_lower_case_titles_after_a_work_lead_in():
    assert _recommended(
        "Please add a discussion (e.g. in related work) with ''Visual Chain-of-Thought Diffusion Models''."
    ) == ["Visual Chain-of-Thought Diffusion Models"]
    assert _recommended(
        "It would be better to discuss related works like 'Noisy Correspondence Learning with Meta Similarity'."
    ) == ["Noisy Correspondence Learning with Meta Similarity"]
    lower = 'The authors should compare their methods with the idea in "Low latency end-to-end streaming speech recognition".'
    assert _recommended(lower) == ["Low latency end-to-end streaming speech recognition"]
    # a quoted phrase that is a clause, or follows no word for a work, is no title
    assert _recommended('- Pioneering work is not necessarily equivalent to "using all the GPUs on the cluster".') == []


def test_title_lines_under_a_lead_in_are_reference_entries_but_headings_are_not():
    text = (
        "A few works leverage CLIP for VLN or VN tasks.\n"
        "CLIP-Nav: Using CLIP for Zero-Shot Vision-and-Language Navigation\n"
        "These works can be adopted for comparison.\n\n"
        "Some other points:\nMinor Comments And Typos\n"
    )
    assert _recommended(text) == ["CLIP-Nav: Using CLIP for Zero-Shot Vision-and-Language Navigation"]


def test_references_written_inside_sentences_and_in_brackets():
    inline = (
        "There is some related work that should be cited. For example Cen, J., Yun, P., Cai, J., Liu, M.: Open-set 3d "
        "object detection. 3DV, 2021. Or Wong, K., Wang, S., Urtasun, R.: Identifying unknown instances for "
        "autonomous driving. In: CoRL. PMLR (2020)."
    )
    found = [(m.title, m.kind) for m in extract_review_mentions(inline)]
    # the second string is found, but "Or ..." carries no cue of its own and its sentence before asks nothing
    assert found == [
        ("Open-set 3d object detection", RECOMMENDED),
        ("Identifying unknown instances for autonomous driving", DISCUSSED),
    ]
    bracket = (
        "This was shown before, please discuss [Wang et al. 2021, Off-Policy Multi-Agent Decomposed Policy Gradients]."
    )
    assert _recommended(bracket) == ["Off-Policy Multi-Agent Decomposed Policy Gradients"]
    link = "Missing a discussion of a highly related paper: Decentralized Training of Foundation Models (https://arxiv.org/abs/2206.01288)"
    found = [m for m in extract_review_mentions(link) if m.kind == RECOMMENDED]
    assert [(m.title, m.arxiv_id) for m in found] == [("Decentralized Training of Foundation Models", "2206.01288")]


def test_acronym_expansions_that_describe_rather_than_name_are_no_titles():
    text = (
        "The paper should discuss CER (Competitive experience replay). It uses TD3 (an improved variant of DDPG) and "
        "compares with AnyBurl (the single one baseline authors considered other than the original NeuralLP)."
    )
    assert _recommended(text) == ["Competitive experience replay"]


def test_a_sentence_giving_an_example_of_missing_work_recommends_it():
    text = (
        "The novelty is limited as there are a number of works that have a similar approach in combining NAS and SSL. "
        "A preprint titled \u2018CSNAS: Contrastive Self-supervised Learning Neural Architecture Search\u2019 "
        "(https://arxiv.org/abs/2102.10557) is one of the examples."
    )
    assert _recommended(text) == ["CSNAS: Contrastive Self-supervised Learning Neural Architecture Search"]
