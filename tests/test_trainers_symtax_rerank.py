"""SymTax's reranker (`trainers.symtax_rerank`, `trainers.symtax_model`): the separation feature and the graph
layers by hand, the fusion's effect on a score, the category loader, and a smoke run on the example dataset."""

from __future__ import annotations

import json
import math
import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from tests.support.trainer_data import reranker_example  # noqa: E402
from trainers.symtax_model import (  # noqa: E402
    UNKNOWN,
    GATLayer,
    SymTaxReranker,
    TaxonomyFusion,
    appnp,
    normalized_adjacency,
    separation,
)

X, Y = torch.tensor([0.5, 0.0]), torch.tensor([0.0, 0.5])


def test_separation_with_k_one_is_the_great_circle_distance_of_the_unprojected_points():
    # the published code's geoopt dist(x, y, k=1): inverse stereographic projection onto the unit sphere,
    # p(x) = (2x, 1 - |x|^2) / (1 + |x|^2); both points give (0.8, 0, 0.6) and (0, 0.8, 0.6), 0.36 apart in dot
    assert separation(X, Y, 1.0).item() == pytest.approx(math.acos(0.36), abs=1e-6)
    # by the formula: (-x) (+) y = (-0.375, 0.625) / 1.0625, d = 2 atan(|.|)
    assert separation(X, Y, 1.0).item() == pytest.approx(2 * math.atan(math.hypot(0.375, 0.625) / 1.0625), abs=1e-6)


def test_separation_with_k_minus_one_is_the_poincare_distance_and_k_zero_twice_the_euclidean():
    poincare = math.acosh(1 + 2 * 0.5 / (0.75 * 0.75))  # arcosh(1 + 2|x-y|^2 / ((1-|x|^2)(1-|y|^2)))
    assert separation(X, Y, -1.0).item() == pytest.approx(poincare, abs=1e-5)
    assert separation(X, Y, 0.0).item() == pytest.approx(2 * math.sqrt(0.5), abs=1e-6)
    assert separation(X, X, 1.0).item() == pytest.approx(0.0, abs=1e-6)


def test_appnp_on_a_three_node_path_by_hand():
    adjacency = normalized_adjacency([(0, 1), (1, 2)], 3)  # degrees with self loops: 2, 3, 2
    assert adjacency[0, 1].item() == pytest.approx(1 / math.sqrt(6))
    assert adjacency[0, 0].item() == pytest.approx(0.5)
    assert adjacency[0, 2].item() == 0.0
    h = torch.tensor([[1.0], [0.0], [0.0]])
    z = appnp(h, adjacency, steps=1, alpha=0.1)  # 0.9 A_hat H + 0.1 H
    assert z.squeeze(1).tolist() == pytest.approx([0.9 * 0.5 + 0.1, 0.9 / math.sqrt(6), 0.0])
    z2 = appnp(h, adjacency, steps=2, alpha=0.1)  # one more step: 0.9 A_hat Z1 + 0.1 H
    expected = 0.9 * (adjacency @ z) + 0.1 * h
    assert torch.allclose(z2, expected)


def test_gat_attention_on_a_three_node_path_by_hand():
    layer = GATLayer(1, 1)
    with torch.no_grad():  # W = 1 and a = [1 ; 1] in PyTorch Geometric's GATConv
        layer.conv.lin.weight.fill_(1.0)
        layer.conv.att_src.fill_(1.0)
        layer.conv.att_dst.fill_(1.0)
    h = torch.tensor([[1.0], [2.0], [3.0]])
    mask = (normalized_adjacency([(0, 1), (1, 2)], 3) > 0).float()
    weights, _ = layer.attention_weights(h, mask)
    # node 0 sees itself (e = LeakyReLU(1 + 1) = 2) and node 1 (e = 3): softmax (1, e) / (1 + e); node 2 unseen
    assert weights[0].tolist() == pytest.approx([1 / (1 + math.e), math.e / (1 + math.e), 0.0])
    out = layer(h, mask)
    assert out[0, 0].item() == pytest.approx((1 + 2 * math.e) / (1 + math.e))  # ELU of a positive value


def tiny_encoder():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
    return BertModel(config).eval()


def pair_inputs(rows: int = 4):
    ids = torch.randint(5, 50, (rows, 6), generator=torch.Generator().manual_seed(1))
    return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids)}


@pytest.mark.parametrize(("fusion", "layer"), [("vector", "appnp"), ("graph", "appnp"), ("graph", "gat")])
def test_the_candidate_category_moves_the_score_only_with_the_taxonomy(fusion, layer):
    torch.manual_seed(0)
    features = torch.randn(3, 16)
    taxonomy = TaxonomyFusion(features, [(0, 1), (1, 2)], [[1, 2], [], []], fusion=fusion, graph_layer=layer)
    model = SymTaxReranker(tiny_encoder(), taxonomy, curvature=1.0).eval()
    inputs = pair_inputs()
    query = torch.tensor([0, 0, 0, 0])
    candidates = torch.tensor([0, 1, 2, UNKNOWN])
    with torch.no_grad():
        scores = model(**inputs, query_category=query, candidate_category=candidates)
        assert scores.shape == (4,) and bool(((scores > 0) & (scores < 1)).all())
        assert taxonomy(query).shape == (4, 512)
        moved = model(**inputs, query_category=query, candidate_category=torch.tensor([2, 1, 2, UNKNOWN]))
        features = model.taxonomy_features(query, candidates)
    assert moved[0].item() != pytest.approx(scores[0].item(), abs=1e-7)  # candidate 0's category changed
    assert moved[1:].tolist() == pytest.approx(scores[1:].tolist())
    assert features[0].tolist() == pytest.approx([0.0, 1.0], abs=1e-5)  # the same category: no separation
    assert features[3].tolist() == [0.0, 0.0]  # an unknown category: no separation, flagged
    plain = SymTaxReranker(tiny_encoder(), None).eval()  # --fusion none: the vector-only scorer
    with torch.no_grad():
        before = plain(**inputs, query_category=query, candidate_category=candidates)
        after = plain(**inputs, query_category=query, candidate_category=torch.tensor([2, 1, 2, UNKNOWN]))
    assert before.shape == (4,) and before.tolist() == after.tolist()


def test_vector_fusion_averages_a_category_with_its_acm_classes():
    features = torch.tensor([[2.0, 0.0], [0.0, 2.0], [0.0, 4.0]])
    taxonomy = TaxonomyFusion(features, [(0, 1), (0, 2)], [[1, 2], [], []], fusion="vector", category_dim=2)
    assert taxonomy.fused[0].tolist() == [1.0, 1.5]  # (own + mean of mapped) / 2
    assert taxonomy.fused[1].tolist() == [0.0, 2.0]


def test_the_taxonomy_graph_holds_the_fused_graph_and_every_arxiv_category():
    from trainers.symtax_rerank import taxonomy_graph

    graph = taxonomy_graph()
    index = {node: i for i, node in enumerate(graph.nodes)}
    assert graph.mapped[index["arxiv:cs.CL"]] == [index["acm:I.2.7"]]
    assert "arxiv:math.CO" in index and graph.mapped[index["arxiv:math.CO"]] == []
    assert (index["acm:I.2"], index["acm:I.2.7"]) in graph.edges
    assert len(graph.texts) == len(graph.nodes) and graph.texts[index["arxiv:cs.CL"]] == "Computation and Language"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    return reranker_example(tmp_path_factory.mktemp("symtax-rerank"), "--export_json")


@pytest.mark.train
def test_categories_load_from_parquet_and_from_papers_cat_json(example):
    from trainers.symtax_rerank import load_taxonomy_fields

    fields = load_taxonomy_fields(example / "data")
    assert fields.category["1609.03003"] == "cs.CL"  # primary of ['cs.CL', 'stat.ML']
    assert set(fields.heading.values()) >= {"Introduction"}
    layout = example / "data" / "json"
    (layout / "papers_cat.json").write_text(json.dumps({"a": {"categories": ["cs.SY", "cs.LG"]}, "b": {}}))
    fields = load_taxonomy_fields(layout)
    assert fields.category == {"a": "eess.SY", "b": None}  # aliases canonical, as the graph names them


@pytest.mark.train
def test_smoke_run_writes_results_whose_recall_never_falls(example):
    from trainers import symtax_rerank

    common = ["--dataset", str(example / "data"), "--prefetched", str(example / "prefetched")]
    common += ["--device", "cpu", "--no_progress"]
    summary = symtax_rerank.main(
        ["train", *common, "--output", str(example / "run"), "--model", str(example / "tiny-bert")]
        + ["--preset", "smoke", "--fusion", "graph", "--section_heading"]
    )
    assert [r["step"] for r in summary["history"]] == [20, 34]
    from transformers import AutoTokenizer

    saved = AutoTokenizer.from_pretrained(example / "run" / "best")
    assert len(saved("paper " * 300)["input_ids"]) == 302  # embedding the taxonomy left no truncation behind
    results = symtax_rerank.main(
        ["evaluate", *common, "--checkpoint", str(example / "run"), "--max_length", "128", "--pool_sizes", "5", "20"]
    )["test"]
    written = json.loads((example / "run" / "results_rerank_test.json").read_text())
    assert written["fusion"] == "graph" and written["section_heading"] is True
    assert written["categorised_papers"] == 20 and "dataset_versions" in written
    assert written["num_queries"] == 8.0 and results["mrr_rerank_top20"] == written["mrr_rerank_top20"]
    curves: dict[str, list[tuple[int, float]]] = {}
    for key, value in written.items():
        match = re.fullmatch(r"recall@(\d+)(.*)", key)
        if match:
            curves.setdefault(match.group(2), []).append((int(match.group(1)), value))
    assert "_rerank_top20" in curves and "_oracle_top5" in curves
    for suffix, points in curves.items():
        points.sort()
        ks, values = [k for k, _ in points], [v for _, v in points]
        if suffix != "_rerank_top5" and "top" in suffix:
            assert max(ks) <= int(suffix.rsplit("top", 1)[1]), (suffix, ks)
        assert values == sorted(values), (suffix, points)
    assert "recall@20_rerank_top20" not in written  # 19 candidates ranked: Recall@K stops at K = 10
