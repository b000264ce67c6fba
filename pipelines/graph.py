"""The citation graph's figures (stats.json's `citation_graph`, Table 1) as Beam combines: no worker holds the graph.

From the `citations/` rows (one per directed citing -> cited pair):

- nodes and edges: counts of the distinct ids and of the rows; average degree 2 E / N; density E / (N (N - 1));
- components of the graph taken as undirected: one `ComponentForest` (union-find over 64-bit node hashes) per
  bundle, merged; the last merge holds a parent per node, not the edges (`extractors.dataset.ComponentForest`);
- the average local clustering coefficient, exact, from triangle counts: each undirected edge is oriented from
  the lower-ranked end to the higher, rank being (degree, id) for a *hub* (more than `hub_degree` neighbours) and
  (0, id) for any other node; each node v's out-neighbours N+(v) (at most `hub_degree` for a node that is not a
  hub, at most the number of hubs for one that is) are sent to each u in N+(v), and every w in N+(v) and N+(u)
  closes a triangle (v, u, w), found once, at its middle-ranked corner u (a node iterator: one element per
  oriented edge, not one per wedge). Hubs reach the workers as a side input of at most 2 E / `hub_degree`
  entries; the sets meet N+(u) in a `FanOutJoin` keyed by u, so a paper cited by 100,000 others is not one group.
  Each node's coefficient 2 T / (d (d - 1)) is summed exactly (`add_exactly`) and divided by N: networkx's
  `average_clustering` (the reference in the tests), at every size.

Self-citations never reach the graph (contexts drop them); a self-loop would count as an edge and be left out of
degrees and triangles, as networkx leaves it out of clustering.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from operator import itemgetter

import apache_beam as beam

from extractors.dataset import ComponentForest, add_exactly, graph_figures, local_clustering
from pipelines.joins import MAX_GROUP, FanOutJoin
from pipelines.tallies import CombineFigures, SumPerBundleFn

HUB_DEGREE = 1_000
"""Neighbours above which a node is ranked by its degree when edges are oriented (the module docstring)."""


def _undirected(edge: tuple[str, str]) -> Iterator[tuple[str, str]]:
    citing, cited = edge
    if citing != cited:
        yield (citing, cited) if citing < cited else (cited, citing)


def _orient(edge: tuple[str, str], hubs: dict[str, int]) -> tuple[str, str]:
    """(lower-ranked end, higher-ranked end)."""
    a, b = edge
    return (a, b) if (hubs.get(a, 0), a) < (hubs.get(b, 0), b) else (b, a)


def _out_neighbour_sets(element: tuple[str, list[str]]) -> Iterator[tuple[str, tuple[str, tuple[str, ...]]]]:
    """A node's out-neighbours, sent to each of them: `(u, (v, N+(v)))` for every u in N+(v)."""
    centre, targets = element
    out = tuple(sorted(targets))
    for target in out:
        yield target, (centre, out)


def _own_out_neighbours(node: str, targets) -> tuple[str, list[str]]:
    return node, list(targets)


def _triangle_corners(element) -> Iterator[tuple[str, int]]:
    """At u, for each v that sent N+(v): every w in both N+(v) and N+(u) closes the triangle (v, u, w), found
    once, at its middle-ranked corner u; one triangle for each of its three corners, summed here."""
    u, grouped = element
    if not grouped["out"]:
        return
    mine = set(grouped["out"][0])
    corners: dict[str, int] = {}
    for v, theirs in grouped["sets"]:
        for w in mine.intersection(theirs):
            for corner in (v, u, w):
                corners[corner] = corners.get(corner, 0) + 1
    yield from corners.items()


def _node_clustering(element) -> Iterator[float]:
    _, grouped = element
    triangles, degrees = sum(grouped["triangles"]), list(grouped["degree"])
    if triangles and degrees:
        yield local_clustering(triangles, degrees[0])


class ExactSumFn(beam.CombineFn):
    """A sum of floats that does not depend on the order the runner adds them in (`add_exactly`)."""

    def create_accumulator(self) -> list[float]:
        return []

    def add_input(self, partials: list[float], x: float) -> list[float]:
        return add_exactly(partials, x)

    def merge_accumulators(self, accumulators) -> list[float]:
        merged: list[float] = []
        for partials in accumulators:
            for x in partials:
                add_exactly(merged, x)
        return merged

    def extract_output(self, partials: list[float]) -> float:
        return math.fsum(partials)


class ComponentsFn(beam.CombineFn):
    """(components, nodes in the largest) of the undirected graph of the edges combined."""

    def create_accumulator(self) -> ComponentForest:
        return ComponentForest()

    def add_input(self, forest: ComponentForest, edge: tuple[str, str]) -> ComponentForest:
        forest.add_edge(*edge)
        return forest

    def merge_accumulators(self, forests) -> ComponentForest:
        forests = iter(forests)
        merged = next(forests, None) or ComponentForest()
        for forest in forests:
            merged.merge(forest)
        return merged

    def extract_output(self, forest: ComponentForest) -> tuple[int, int]:
        return forest.components()


FIGURES = {
    "nodes": beam.combiners.CountCombineFn(),
    "edges": beam.combiners.CountCombineFn(),
    "components": ComponentsFn(),
    "clustering": ExactSumFn(),
}
"""The four global figures, combined in one `CombineFigures`: distinct nodes and edges counted, the components of
the undirected graph, the sum of the nodes' local clustering coefficients."""


def _figures(combined: dict) -> dict:
    return graph_figures(combined["nodes"], combined["edges"], combined["clustering"], *combined["components"])


class GraphStatistics(beam.PTransform):
    """`citations/` rows (`citing_id`, `cited_id`) into one dict, `extractors.dataset.graph_figures` (the module
    docstring says how each figure is summed)."""

    def __init__(self, hub_degree: int = HUB_DEGREE, max_group: int = MAX_GROUP) -> None:
        super().__init__()
        self.hub_degree = hub_degree
        self.max_group = max_group

    def expand(self, citations):
        edges = citations | "Edges" >> beam.Map(lambda row: (row["citing_id"], row["cited_id"]))
        nodes = edges | "EdgeEnds" >> beam.FlatMap(lambda edge: edge) | "DistinctNodes" >> beam.Distinct()
        undirected = edges | "Undirected" >> beam.FlatMap(_undirected) | "DistinctUndirected" >> beam.Distinct()
        degrees = (
            undirected
            | "DegreeEnds" >> beam.ParDo(SumPerBundleFn(lambda edge: ((edge[0], 1), (edge[1], 1))))
            | "Degrees" >> beam.CombinePerKey(sum)
        )
        hubs = beam.pvalue.AsDict(
            degrees | "Hubs" >> beam.Filter(lambda node_degree, limit: node_degree[1] > limit, self.hub_degree)
        )
        out_neighbours = undirected | "Orient" >> beam.Map(_orient, hubs) | "OutNeighbours" >> beam.GroupByKey()
        triangles = (
            {
                "sets": out_neighbours | "SendOutNeighbours" >> beam.FlatMap(_out_neighbour_sets),
                "out": out_neighbours | "OwnOutNeighbours" >> beam.MapTuple(_own_out_neighbours),
            }
            | "CloseWedges" >> FanOutJoin("sets", itemgetter(0), "wedge", self.max_group)
            | "TriangleCorners" >> beam.FlatMap(_triangle_corners)
            | "Triangles" >> beam.CombinePerKey(sum)
        )
        clustering = (
            {"triangles": triangles, "degree": degrees}
            | "JoinDegrees" >> beam.CoGroupByKey()
            | "NodeClustering" >> beam.FlatMap(_node_clustering)
        )
        return (
            {"nodes": nodes, "edges": edges, "components": edges, "clustering": clustering}
            | "Figures" >> CombineFigures(FIGURES)
            | "GraphFigures" >> beam.Map(_figures)
        )
