"""The citation graph's figures (stats.json's `citation_graph`, Table 1) as Beam combines: no worker holds the graph.

From the `citations/` rows: edges counted, average degree and density; nodes and undirected components from
per-bundle union-find forests merged (`extractors.dataset.ComponentForest`); the exact average clustering
coefficient from triangle counts, found once each by a node iterator over edges oriented by rank, hot nodes
spread by a `FanOutJoin` (equal to networkx's `average_clustering` in the tests). How: docs/design.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from operator import itemgetter

import apache_beam as beam
from apache_beam.pvalue import TaggedOutput

from extractors.dataset import ComponentForest, add_exactly, graph_figures, local_clustering
from pipelines.joins import MAX_GROUP, FanOutJoin, KeyedBatches, batch_size_for
from pipelines.tallies import CombineFigures, SumPerBundleFn, in_global_window

HUB_DEGREE = 1_000
"""Neighbours above which a node is ranked by its degree when edges are oriented (the module docstring)."""


def _oriented(edge: tuple[str, str], hubs: dict[str, int]) -> Iterator[tuple[str, str]]:
    """The edge as (lower-ranked end, higher-ranked end); a self-loop gives none."""
    a, b = edge
    if a != b:
        yield (a, b) if (hubs.get(a, 0), a) < (hubs.get(b, 0), b) else (b, a)


OUT_SETS, DEGREE_ENDS = "sets", "degree_ends"


class _NeighbourhoodFn(beam.DoFn):
    """A node's out-neighbours (an edge cited both ways comes twice: one neighbour), as `(v, N+(v))` on the main
    output and sent to each of them on `sets`: for every u in N+(v), `(v, N+(v))` joins a batch of u's
    (`pipelines.joins.KeyedBatches`), sent as `(u, (first v, size, ((v, N+(v)), ...)))`; on `degree_ends` each
    node's count of undirected edges, summed over the bundle (each undirected edge is in exactly one N+)."""

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self._degrees: dict[str, int] = {}
        self._sets: KeyedBatches | None = None

    def start_bundle(self) -> None:
        self._degrees, self._sets = {}, KeyedBatches(self.batch_size)

    def process(self, element: tuple[str, list[str]]) -> Iterator:
        centre, targets = element
        out = tuple(sorted(set(targets)))
        degrees, sets = self._degrees, self._sets
        degrees[centre] = degrees.get(centre, 0) + len(out)
        for target in out:
            degrees[target] = degrees.get(target, 0) + 1
            for ready, batch in sets.offer(target, (centre, out)):
                yield TaggedOutput(OUT_SETS, _set_batch(ready, batch))
        yield centre, out

    def finish_bundle(self) -> Iterator:
        degrees, self._degrees = self._degrees, {}
        for item in degrees.items():
            yield TaggedOutput(DEGREE_ENDS, in_global_window(item))
        for target, batch in self._sets.drain():
            yield TaggedOutput(OUT_SETS, in_global_window(_set_batch(target, batch)))


def _set_batch(target: str, batch: list[tuple[str, tuple[str, ...]]]) -> tuple[str, tuple[str, int, tuple]]:
    return target, (batch[0][0], len(batch), tuple(batch))


def _triangle_corners(element) -> Iterator[tuple[str, int]]:
    """At u, for each v that sent N+(v): every w in both N+(v) and N+(u) closes the triangle (v, u, w), found
    once, at its middle-ranked corner u; one triangle for each of its three corners, summed here."""
    u, grouped = element
    if not grouped["out"]:
        return
    mine = set(grouped["out"][0])
    corners: dict[str, int] = {}
    for _, _, sets in grouped["sets"]:
        for v, theirs in sets:
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

    def extract_output(self, forest: ComponentForest) -> tuple[int, int, int]:
        """(nodes, components, nodes in the largest)."""
        return (len(forest.parent), *forest.components())


FIGURES = {
    "edges": beam.combiners.CountCombineFn(),
    "components": ComponentsFn(),
    "clustering": ExactSumFn(),
}
"""The global figures, combined in one `CombineFigures`: the edges counted, the nodes and components of the
undirected graph (`ComponentsFn`), the sum of the nodes' local clustering coefficients."""


def _figures(combined: dict) -> dict:
    nodes, components, largest = combined["components"]
    return graph_figures(nodes, combined["edges"], combined["clustering"], components, largest)


class GraphStatistics(beam.PTransform):
    """`citations/` rows (`citing_id`, `cited_id`) into one dict, `extractors.dataset.graph_figures` (the module
    docstring says how each figure is summed)."""

    def __init__(self, hub_degree: int = HUB_DEGREE, max_group: int = MAX_GROUP) -> None:
        super().__init__()
        self.hub_degree = hub_degree
        self.max_group = max_group

    def expand(self, citations):
        edges = citations | "Edges" >> beam.Map(lambda row: (row["citing_id"], row["cited_id"]))
        directed_degrees = (
            edges
            | "DirectedDegreeEnds" >> beam.ParDo(SumPerBundleFn(_directed_degree_ends))
            | "DirectedDegrees" >> beam.CombinePerKey(sum)
        )
        hubs = beam.pvalue.AsDict(
            directed_degrees | "Hubs" >> beam.Filter(lambda node_degree, limit: node_degree[1] > limit, self.hub_degree)
        )
        neighbourhoods = (
            edges
            | "Orient" >> beam.FlatMap(_oriented, hubs)
            | "OutNeighbours" >> beam.GroupByKey()
            | "Neighbourhoods"
            >> beam.ParDo(_NeighbourhoodFn(batch_size_for(self.max_group))).with_outputs(
                OUT_SETS, DEGREE_ENDS, main="out"
            )
        )
        degrees = neighbourhoods[DEGREE_ENDS] | "Degrees" >> beam.CombinePerKey(sum)
        triangles = (
            {"sets": neighbourhoods[OUT_SETS], "out": neighbourhoods.out}
            | "CloseWedges" >> FanOutJoin("sets", itemgetter(0), "wedge", self.max_group, weight=itemgetter(1))
            | "TriangleCorners" >> beam.FlatMap(_triangle_corners)
            | "Triangles" >> beam.CombinePerKey(sum)
        )
        clustering = (
            {"triangles": triangles, "degree": degrees}
            | "JoinDegrees" >> beam.CoGroupByKey()
            | "NodeClustering" >> beam.FlatMap(_node_clustering)
        )
        return (
            {"edges": edges, "components": edges, "clustering": clustering}
            | "Figures" >> CombineFigures(FIGURES)
            | "GraphFigures" >> beam.Map(_figures)
        )


def _directed_degree_ends(edge: tuple[str, str]) -> tuple[tuple[str, int], ...]:
    a, b = edge
    return ((a, 1), (b, 1)) if a != b else ()
