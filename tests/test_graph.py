"""The citation graph's figures as Beam combines (`pipelines.graph.GraphStatistics`) against networkx on the whole
graph (`extractors.dataset.graph_statistics`, and networkx itself for density and components), and the pieces
they are summed from."""

from __future__ import annotations

import math
import random

import apache_beam as beam
import networkx as nx
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from extractors.dataset import ComponentForest, add_exactly, graph_figures, graph_statistics, local_clustering
from pipelines.graph import GraphStatistics
from tests.support.joins import largest_group


def networkx_figures(edges: list[tuple[str, str]]) -> dict:
    """What `GraphStatistics` must give: `graph_statistics`'s figures, then density and components by networkx."""
    figures = graph_statistics(edges)
    graph = nx.DiGraph(edges)
    if graph.number_of_nodes() == 0:
        return graph_figures(0, 0, 0.0, 0, 0)
    undirected = graph.to_undirected()
    components = list(nx.connected_components(undirected))
    return {
        **figures,
        "density": float(f"{nx.density(graph):.4g}") if graph.number_of_nodes() > 1 else 0.0,
        "components": len(components),
        "largest_component": max(len(c) for c in components),
    }


def beam_figures(edges: list[tuple[str, str]], **settings) -> dict:
    rows = [{"citing_id": a, "cited_id": b} for a, b in edges]
    with TestPipeline(runner="FnApiRunner") as p:
        figures = p | beam.Create(rows) | GraphStatistics(**settings)
        assert_that(figures, equal_to([networkx_figures(edges)]))


def skewed_graph(seed: int) -> list[tuple[str, str]]:
    """Papers citing a few random earlier ones, two hubs everyone cites, a few reciprocal citations and a separate
    pair: triangles, hubs, and more than one component."""
    rng = random.Random(seed)
    edges = set()
    for paper in range(2, 80):
        for cited in rng.sample(range(paper), min(paper, 3)):
            edges.add((f"p{paper:03d}", f"p{cited:03d}"))
        edges.add((f"p{paper:03d}", "hub-a"))
        if paper % 3:
            edges.add((f"p{paper:03d}", "hub-b"))
    edges |= {("p010", "p050"), ("p050", "p010"), ("hub-a", "hub-b"), ("lone-1", "lone-2")}
    return sorted(edges)


@pytest.mark.beam
def test_graph_figures_equal_networkx_with_hubs_and_hot_wedge_pairs():
    # hub_degree 5 makes hubs of both hubs and many papers; max_group 4 spreads the out-neighbour sets that
    # nearly every paper sends to hub-a and hub-b (the highest-ranked nodes) over many groups
    beam_figures(skewed_graph(seed=7), hub_degree=5, max_group=4)


@pytest.mark.beam
def test_graph_figures_equal_networkx_on_a_random_graph_and_on_none():
    graph = nx.gnm_random_graph(60, 200, seed=3, directed=True)
    beam_figures([(str(a), str(b)) for a, b in graph.edges()])
    beam_figures([])


def test_local_clustering_by_hand():
    # a node with 3 neighbours, one link among them: 1 of 3 pairs
    assert local_clustering(1, 3) == pytest.approx(1 / 3)
    assert local_clustering(0, 5) == 0.0
    assert local_clustering(0, 1) == 0.0


def test_exact_sum_does_not_depend_on_the_order():
    values = [1e16, 1.0, -1e16, 0.1, 0.2, 0.3] * 50
    sums = set()
    for seed in range(5):
        random.Random(seed).shuffle(values)
        partials: list[float] = []
        for x in values:
            add_exactly(partials, x)
        sums.add(math.fsum(partials))
    assert sums == {math.fsum(values)}


def test_component_forests_merge_into_the_forest_of_all_edges():
    edges = skewed_graph(seed=1) + [("x", "y"), ("y", "z")]
    halves = ComponentForest(), ComponentForest()
    for i, edge in enumerate(edges):
        halves[i % 2].add_edge(*edge)
    whole = ComponentForest()
    for edge in edges:
        whole.add_edge(*edge)
    expected = nx.Graph(edges)
    sizes = [len(c) for c in nx.connected_components(expected)]
    assert halves[0].merge(halves[1]).components() == whole.components() == (len(sizes), max(sizes))


@pytest.mark.beam
def test_graph_figures_equal_networkx_on_dense_cliques_with_every_node_a_hub_and_groups_of_one():
    # two overlapping cliques (many triangles per node: a wrong intersection or a triangle counted at the wrong
    # corner or twice changes the coefficients) with hubs at degree 3 and every join group of one set
    clique = [(f"a{i}", f"a{j}") for i in range(7) for j in range(7) if i < j]
    clique += [(f"a{i}", f"b{j}") for i in range(3) for j in range(4)] + [("b0", "b1"), ("b2", "b1"), ("c", "a0")]
    beam_figures(clique, hub_degree=3, max_group=1)
    beam_figures(clique)


@pytest.mark.beam
def test_graph_figures_with_batched_wedge_sets_equal_networkx_and_the_hub_s_sets_spread():
    # max_group 32: the sets sent to one node travel in batches of 2, and hub-a (the highest-ranked node at
    # hub_degree 5, sent the out-neighbours of its ~80 neighbours) gets them in several groups of about 32
    edges = skewed_graph(seed=11)
    rows = [{"citing_id": a, "cited_id": b} for a, b in edges]
    p = TestPipeline(runner="FnApiRunner")
    figures = p | beam.Create(rows) | GraphStatistics(hub_degree=5, max_group=32)
    assert_that(figures, equal_to([networkx_figures(edges)]))
    result = p.run()
    result.wait_until_finish()
    assert largest_group(result, "wedge") <= 48  # ~80 sets in 3 groups, never one of all of them
