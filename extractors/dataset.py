"""The ArSyTa-style dataset's own logic, with no Beam in it: time-based splits, the date check, statistics (the
graph figures, the numbers behind the plots, Table 1), the dataset card and the warnings a run ends with. What
it shares with the CitationR dataset (counts read from tallies, the summary, the card's header) is in
`extractors.assembly`."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import networkx as nx
import pyarrow as pa

from extractors import assembly
from extractors.contexts import ContextConfig
from extractors.schemas import (
    CITATIONS_SCHEMA,
    CONTEXT_VIEWS,
    CONTEXTS_SCHEMA,
    PAPERS_SCHEMA,
    SCHEMA_VERSION,
    SPLITS,
)
from mapping.records import Context, CounterFn, Paper, no_count


@dataclass(frozen=True)
class SplitConfig:
    """Contexts are split by the citing paper's publication date (its first arXiv version).

    train: before `validation_from`; validation: from `validation_from` up to `test_from`; test: from
    `test_from` on. A citing paper known only by its year counts as published on 1 January of that year.
    """

    validation_from: dt.date = dt.date(2024, 1, 1)
    test_from: dt.date = dt.date(2025, 1, 1)

    def __post_init__(self) -> None:
        if self.test_from < self.validation_from:
            raise ValueError(f"test_from {self.test_from} is before validation_from {self.validation_from}")

    def as_metadata(self) -> dict[str, str]:
        return {k: v.isoformat() for k, v in asdict(self).items()}


def effective_date(date: dt.date | None, year: int | None) -> dt.date | None:
    if date is not None:
        return date
    return dt.date(year, 1, 1) if year else None


def split_for(date: dt.date | None, year: int | None, config: SplitConfig) -> str | None:
    """The split of a citing paper published on `date` (or in `year`); None when neither is known."""
    when = effective_date(date, year)
    if when is None:
        return None
    if when >= config.test_from:
        return "test"
    if when >= config.validation_from:
        return "validation"
    return "train"


def cited_after_citing(citing: Context, cited: Paper) -> bool:
    """True when the cited paper was published after the citing one, at the precision both dates have."""
    if citing.citing_date is not None and cited.date is not None:
        return cited.date > citing.citing_date
    citing_year = citing.citing_year or (citing.citing_date.year if citing.citing_date else None)
    cited_year = cited.year or (cited.date.year if cited.date else None)
    if citing_year is None or cited_year is None:
        return False
    return cited_year > citing_year


def date_and_split(
    context: Context, cited: Paper | None, config: SplitConfig, count: CounterFn = no_count
) -> Context | None:
    """The context with the cited paper's date and its split, or None (counted) when it must be dropped."""
    from dataclasses import replace

    if cited is None:
        count("dropped_cited_not_in_database", 1)
        return None
    if cited_after_citing(context, cited):
        count("dropped_cited_after_citing", 1)
        return None
    split = split_for(context.citing_date, context.citing_year, config)
    if split is None:
        count("dropped_citing_date_unknown", 1)
        return None
    if cited.date is None and cited.year is None:
        count("cited_date_unknown", 1)
    return replace(
        context,
        cited_date=cited.date,
        cited_year=cited.year,
        split=split,
        cited_categories=cited.categories,
        cited_primary_category=cited.primary_category,
        cited_acm_classes=cited.acm_classes,
    )


def graph_statistics(edges: Iterable[tuple[str, str]], max_exact_nodes: int = 200_000, seed: int = 0) -> dict:
    """SymTax Table 1 style figures of the citation graph (treated as undirected for clustering), by networkx on
    the whole graph in memory: the reference the pipeline's figures are tested against (`graph_figures`, summed by
    `pipelines.graph.GraphStatistics` with no worker holding the graph).

    The average local clustering coefficient is exact up to `max_exact_nodes` nodes and estimated by
    networkx's sampling approximation (10,000 trials, fixed seed) above, which the result says.
    """
    graph = nx.DiGraph()
    graph.add_edges_from(edges)
    nodes = graph.number_of_nodes()
    if nodes == 0:
        return {"nodes": 0, "edges": 0, "average_degree": 0.0, "average_clustering": 0.0, "clustering": "exact"}
    undirected = graph.to_undirected()
    if nodes <= max_exact_nodes:
        clustering = nx.average_clustering(undirected)
        how = "exact"
    else:
        from networkx.algorithms import approximation

        clustering = approximation.average_clustering(undirected, trials=10_000, seed=seed)
        how = "approximate (networkx, 10000 trials)"
    return {
        "nodes": nodes,
        "edges": graph.number_of_edges(),
        "average_degree": round(2 * graph.number_of_edges() / nodes, 4),
        "average_clustering": round(float(clustering), 4),
        "clustering": how,
    }


# The pipeline's graph figures (`pipelines.graph.GraphStatistics`) are sums a Beam combine can make: edges and nodes
# counted, the local clustering coefficient of each node from its triangles and degree, the components by one
# union-find over node hashes. These are the pieces.


def local_clustering(triangles: int, degree: int) -> float:
    """A node's local clustering coefficient in the simple undirected graph: the share of its pairs of neighbours
    that are linked, 2 T / (d (d - 1)), as networkx's `clustering` computes it; 0 below two neighbours."""
    return 0.0 if degree < 2 or triangles == 0 else 2 * triangles / (degree * (degree - 1))


def add_exactly(partials: list[float], x: float) -> list[float]:
    """`partials` (non-overlapping floats whose sum is exact, Shewchuk's algorithm as in `math.fsum`) with `x`
    added, in place: a sum whose `math.fsum(partials)` is the correctly rounded total in any order of additions,
    so that a figure summed across workers is the same however the runner splits the work."""
    i = 0
    for y in partials:
        if abs(x) < abs(y):
            x, y = y, x
        high = x + y
        low = y - (high - x)
        if low:
            partials[i] = low
            i += 1
        x = high
    partials[i:] = [x]
    return partials


def node_hash(node: str) -> int:
    """A node id as 64 bits (BLAKE2b): what the component forest keeps per node, a tenth of the id's memory."""
    return int.from_bytes(hashlib.blake2b(node.encode("utf-8"), digest_size=8).digest(), "big")


class ComponentForest:
    """Union-find over node hashes: the connected components of the undirected graph its edges were added to.

    Forests of parts of the edges merge into the forest of all of them (`merge`), so a Beam combine builds it
    without gathering the edges; what the last merge holds is one parent per node (two 64-bit ints), not the
    graph. Two ids with the same 64-bit hash would count as one node: at 10^7 nodes the chance is ~3 x 10^-6."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, node: int) -> int:
        parent = self.parent
        root = parent.setdefault(node, node)
        while parent[root] != root:
            root = parent[root]
        while node != root:  # path compression
            parent[node], node = root, parent[node]
        return root

    def union(self, a: int, b: int) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[max(root_a, root_b)] = min(root_a, root_b)

    def add_edge(self, a: str, b: str) -> None:
        self.union(node_hash(a), node_hash(b))

    def merge(self, other: ComponentForest) -> ComponentForest:
        for node, parent in other.parent.items():
            self.union(node, parent)
        return self

    def components(self) -> tuple[int, int]:
        """(how many components, nodes in the largest)."""
        sizes: dict[int, int] = {}
        for node in list(self.parent):
            root = self.find(node)
            sizes[root] = sizes.get(root, 0) + 1
        return len(sizes), max(sizes.values(), default=0)


def graph_figures(nodes: int, edges: int, clustering_sum: float, components: int, largest_component: int) -> dict:
    """stats.json's `citation_graph` from the sums the pipeline makes: the keys and rounding of `graph_statistics`
    (whose networkx figures these equal, the clustering exact at every size), then the density (edges over the
    n (n - 1) a directed graph can hold, 4 significant digits) and the connected components of the graph taken as
    undirected (how many, and the nodes in the largest)."""
    if nodes == 0:
        return {
            "nodes": 0,
            "edges": 0,
            "average_degree": 0.0,
            "average_clustering": 0.0,
            "clustering": "exact",
            "density": 0.0,
            "components": 0,
            "largest_component": 0,
        }
    return {
        "nodes": nodes,
        "edges": edges,
        "average_degree": round(2 * edges / nodes, 4),
        "average_clustering": round(clustering_sum / nodes, 4),
        "clustering": "exact",
        "density": float(f"{edges / (nodes * (nodes - 1)):.4g}") if nodes > 1 else 0.0,
        "components": components,
        "largest_component": largest_component,
    }


# ------------------------------------------------------------------------------ plot numbers and Table 1
# The pipeline turns every context, cited paper and written paper into a few small keys with a value, sums the
# values per key in Beam (a few hundred keys in all, whatever the corpus), and hands the sums to `plot_numbers`.

LENGTH_BUCKET = 25
"""Characters per context-length bucket; a bucket is named by its lower edge."""
LENGTH_CAP = 5_000
"""Contexts of this many characters or more share the last bucket, named `LENGTH_CAP`."""
PlotKey = tuple[str, ...]

PLOT_CAPTIONS = {
    "contexts_per_year.png": "Contexts per year of the citing paper, by split",
    "citations_per_paper.png": "Citations per cited paper (log-log): papers cited by k contexts and by k papers",
    "context_lengths.png": "Characters per context, char_context and sentence_context",
    "categories.png": "Primary arXiv categories of the citing papers",
}
"""The plots `extractors.plots.render_plots` draws, in the card's order, with the card's caption for each."""


def citing_year(context: Context) -> int | None:
    """The citing paper's year: `citing_year`, else the year of `citing_date`."""
    return context.citing_year or (context.citing_date.year if context.citing_date else None)


def length_bucket(length: int, width: int = LENGTH_BUCKET, cap: int = LENGTH_CAP) -> int:
    """The lower edge of the `width`-character bucket holding `length`; `cap` for `cap` characters or more."""
    if length < 0:
        raise ValueError(f"a length cannot be negative: {length}")
    return min(length // width * width, cap)


def context_plot_keys(context: Context) -> list[tuple[PlotKey, int]]:
    """What one context adds to the plot numbers: its citing year and split, and per view its length bucket and
    its length in characters (for the mean), or that the view is missing."""
    year = citing_year(context)
    keys: list[tuple[PlotKey, int]] = [(("year", str(year) if year else "unknown", context.split or "none"), 1)]
    for view in CONTEXT_VIEWS:
        text = getattr(context, view)
        if text:
            keys.append((("length", view, str(length_bucket(len(text)))), 1))
            keys.append((("characters", view), len(text)))
        else:
            keys.append((("missing", view), 1))
    return keys


def cited_count_key(kind: str, citations: int) -> tuple[PlotKey, int]:
    """One cited paper with `citations` contexts (`kind` "contexts") or citing papers ("citing_papers")."""
    return ("cited_by", kind, str(citations)), 1


def citing_category_key(primary_category: str | None) -> tuple[PlotKey, int]:
    """One distinct citing paper with this primary category."""
    return ("category", primary_category or "unknown"), 1


def pool_key(paper: Paper) -> tuple[PlotKey, int]:
    """One written paper, a candidate (`in_pool`) or there only as a citing paper."""
    return ("papers", "in_pool" if getattr(paper, "in_pool", True) else "outside_pool"), 1


def plot_key_sums(contexts: Sequence[Context], papers: Iterable[Paper]) -> list[tuple[PlotKey, int]]:
    """Every plot key above summed over a run held in one process: the same `(key, sum)` pairs as
    `pipelines.transforms.plot_sums` sums across workers (for the plain loop bench/pipeline.py times against it)."""
    sums: dict[PlotKey, int] = {}

    def add(key: PlotKey, n: int) -> None:
        sums[key] = sums.get(key, 0) + n

    for context in contexts:
        for key, n in context_plot_keys(context):
            add(key, n)
    pairs = [(c.citing_id, c.cited_id) for c in contexts]
    for kind, citing in (("contexts", pairs), ("citing_papers", dict.fromkeys(pairs))):
        per_cited: dict[str, int] = {}
        for _, cited in citing:
            per_cited[cited] = per_cited.get(cited, 0) + 1
        for n in per_cited.values():
            add(*cited_count_key(kind, n))
    for _, category in dict.fromkeys((c.citing_id, c.citing_primary_category) for c in contexts):
        add(*citing_category_key(category))
    for paper in papers:
        add(*pool_key(paper))
    return list(sums.items())


def _by_number(counts: Mapping[str, int]) -> dict[str, int]:
    return {k: counts[k] for k in sorted(counts, key=lambda k: (not k.isdigit(), int(k) if k.isdigit() else 0, k))}


def plot_numbers(sums: Iterable[tuple[PlotKey, int]]) -> dict:
    """The numbers behind the plots, from the per-key sums of the keys above; every dict in a stable order, keys
    strings (stats.json's `plots`, from which `extractors.plots.render_plots` redraws the plots)."""
    years: dict[str, dict[str, int]] = {}
    cited: dict[str, dict[str, int]] = {"contexts": {}, "citing_papers": {}}
    lengths: dict[str, dict[str, int]] = {view: {} for view in CONTEXT_VIEWS}
    characters = {view: 0 for view in CONTEXT_VIEWS}
    missing = {view: 0 for view in CONTEXT_VIEWS}
    categories: dict[str, int] = {}
    papers = {"in_pool": 0, "outside_pool": 0}
    for key, value in sums:
        kind, *rest = key
        if kind == "year":
            per_split = years.setdefault(rest[0], {})
            per_split[rest[1]] = per_split.get(rest[1], 0) + int(value)
        elif kind == "cited_by":
            cited[rest[0]][rest[1]] = cited[rest[0]].get(rest[1], 0) + int(value)
        elif kind == "length":
            lengths[rest[0]][rest[1]] = lengths[rest[0]].get(rest[1], 0) + int(value)
        elif kind == "characters":
            characters[rest[0]] += int(value)
        elif kind == "missing":
            missing[rest[0]] += int(value)
        elif kind == "category":
            categories[rest[0]] = categories.get(rest[0], 0) + int(value)
        elif kind == "papers":
            papers[rest[0]] += int(value)
        else:
            raise ValueError(f"unknown plot key {key!r}")
    with_text = {view: sum(lengths[view].values()) for view in CONTEXT_VIEWS}
    return {
        "contexts_per_year": {
            year: {split: years[year][split] for split in sorted(years[year], key=_split_order)}
            for year in _by_number(dict.fromkeys(years, 0))
        },
        "citations_per_paper": {kind: _by_number(counts) for kind, counts in cited.items()},
        "context_lengths": {
            "bucket_width": LENGTH_BUCKET,
            "cap": LENGTH_CAP,
            **{view: _by_number(lengths[view]) for view in CONTEXT_VIEWS},
            "mean": {
                view: round(characters[view] / with_text[view], 1) if with_text[view] else None
                for view in CONTEXT_VIEWS
            },
            "missing": missing,
        },
        "citing_primary_categories": dict(sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))),
        "papers": papers,
    }


def _split_order(split: str) -> tuple[int, str]:
    return (SPLITS.index(split) if split in SPLITS else len(SPLITS), split)


def year_range(contexts_per_year: Mapping[str, object]) -> str | None:
    """The first and last citing years with contexts, "FIRST-LAST" as the papers print it; None: no year known."""
    years = sorted(int(y) for y in contexts_per_year if y.isdigit())
    return f"{years[0]}-{years[-1]}" if years else None


TABLE1_ROWS = (
    ("contexts: train", ("contexts", "train")),
    ("contexts: validation", ("contexts", "validation")),
    ("contexts: test", ("contexts", "test")),
    ("contexts: all", ("contexts", "all")),
    ("papers (candidate pool)", ("papers",)),
    ("years of the citing papers", ("years",)),
    ("average local clustering coefficient", ("avg_clustering",)),
    ("average degree", ("avg_degree",)),
)
"""The rows of HAtten's and SymTax's Table 1, and where each figure sits in a `Published` record."""


def table_one(
    contexts: Mapping[str, int], papers: int, years: str | None, graph: Mapping, recipe: Mapping | None
) -> dict:
    """stats.json's `table1`: this run's figures, keyed as `extractors.recipes.Published` keys them, beside the
    recipe's published ones (None: no recipe recorded, or a recipe that follows no publication)."""
    run_contexts = {split: int(contexts.get(split, 0)) for split in SPLITS}
    published = dict(recipe["published"]) if recipe and recipe.get("published") else None
    if published is not None and published.get("contexts") is not None:
        published["contexts"] = {**published["contexts"], "all": sum(published["contexts"].values())}
    return {
        "recipe": recipe.get("name") if recipe else None,
        "run": {
            "contexts": {**run_contexts, "all": sum(run_contexts.values())},
            "papers": int(papers),
            "years": years,
            "avg_clustering": graph.get("average_clustering") if graph.get("nodes") else None,
            "avg_degree": graph.get("average_degree") if graph.get("nodes") else None,
        },
        "published": published,
    }


def _figure(record: Mapping | None, path: Sequence[str]) -> object:
    value: object = record
    for part in path:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def _cell(value: object, missing: str) -> str:
    if value is None:
        return missing
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{round(value, 4):,}"


def table_one_markdown(table: Mapping) -> str:
    """The card's Table 1: this run's column, and the published column when the run's recipe has one."""
    published = table.get("published")
    header = "| | this run |" + (f" published ({table['recipe']}) |" if published else "")
    rule = "|---|---:|" + ("---:|" if published else "")
    lines = [header, rule]
    for label, path in TABLE1_ROWS:
        row = f"| {label} | {_cell(_figure(table['run'], path), 'n/a')} |"
        if published:
            row += f" {_cell(_figure(published, path), 'not published')} |"
        lines.append(row)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------ versions


def package_version() -> str:
    """citrec's version: the installed package's, else (a source checkout never installed) pyproject.toml's, else
    "0+unknown". The git commit, which tells checkouts of one version apart, is the manifest's."""
    from importlib import metadata
    from pathlib import Path

    try:
        return metadata.version("citrec")
    except metadata.PackageNotFoundError:
        pass
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.M) if pyproject.is_file() else None
    return found.group(1) if found else "0+unknown"


def dataset_versions(options: Mapping, citrec_version: str) -> dict[str, str]:
    """stats.json's `versions`, which the card and manifest.json repeat.

    `dataset_version` is citrec's version and the recipe's name ("0.1.0+acl200"): what the rows mean (the code
    that cut them and the definition they follow), known before the run and the same on every re-run. It does not
    name which rows: that is the manifest's (per-file row counts, the git commit, the inputs in `options`); a hash
    of the tables' content would need a second pass over every written file after the writers finish.
    `schema_version` is `extractors.schemas.SCHEMA_VERSION`, the tables' columns.
    """
    recipe = (options.get("recipe") or {}).get("name")
    return {
        "dataset_version": f"{citrec_version}+{recipe}" if recipe else citrec_version,
        "schema_version": SCHEMA_VERSION,
        "citrec_version": citrec_version,
    }


FUNNEL_KEYS = (
    "documents_in",
    "documents_parsed",
    "documents_dead_lettered",
    "bib_entries",
    "mentions",
    "mentions_linked",
    "bib_entries_resolved",
    "contexts",
)

# Every reason a mention does not become a context; stats.json always lists each, zero or not.
DROP_REASONS = (
    "marker_in_heading",
    "nested_marker",
    "overlapping_span",
    "unlinked_mention",
    "dangling_link",
    "unresolved_reference",
    "self_citation",
    "cited_not_in_database",
    "cited_after_citing",
    "citing_date_unknown",
)


def build_stats(
    tallies: Mapping[str, int],
    graph: Mapping,
    years: Mapping[str, int],
    options: Mapping,
    plots: Mapping | None = None,
    plot_files: Sequence[str] = (),
    citrec_version: str | None = None,
) -> dict:
    """stats.json: the versions, the funnel, contexts per split, papers, years, graph figures, Table 1 beside the
    recipe's published figures, the numbers behind the plots (`plot_numbers`; `plot_files` the PNGs drawn from
    them, relative to the dataset), and the options used."""
    funnel = assembly.funnel_counts(tallies, FUNNEL_KEYS)
    funnel.update({f"dropped_{reason}": 0 for reason in DROP_REASONS})
    funnel.update(assembly.counts_starting(tallies, "dropped_"))
    dropped = sum(v for k, v in funnel.items() if k.startswith("dropped_"))
    checks = {
        "documents_balance": funnel["documents_in"] == funnel["documents_parsed"] + funnel["documents_dead_lettered"],
        "mentions_balance": funnel["mentions"] == funnel["contexts"] + dropped,
    }
    contexts = assembly.split_counts(tallies, "contexts")
    papers = int(tallies.get("papers_written", 0))
    # the candidates among the written papers; a run without plot numbers (or before `in_pool`) counts them all
    pool = int(plots["papers"]["in_pool"]) if plots and "papers" in plots else papers
    table1 = table_one(
        contexts,
        pool,
        year_range(plots["contexts_per_year"]) if plots else None,
        graph,
        options.get("recipe"),
    )
    return {
        "versions": dataset_versions(options, citrec_version or package_version()),
        "funnel": funnel,
        "checks": checks,
        "contexts": contexts,
        "citing_papers": assembly.split_counts(tallies, "citing_papers"),
        "papers": papers,
        "publication_years": {k: int(v) for k, v in sorted(years.items())},
        "citation_graph": dict(graph),
        "table1": table1,
        "plots": {
            "files": list(plot_files),
            **{k: v for k, v in (plots or {}).items() if k != "papers"},
        },
        **({"papers_by_pool": dict(plots["papers"])} if plots and "papers" in plots else {}),
        "resolution": assembly.counts_starting(tallies, ("resolved_by:", "unresolved:", "bib_entries_with:")),
        "metadata": assembly.counts_starting(tallies, "metadata_"),
        "dead_letters": assembly.counts_under(tallies, "dead"),
        "other_counts": {
            k: int(v)
            for k, v in sorted(tallies.items())
            if not k.startswith(
                ("dropped_", "resolved_by:", "unresolved:", "bib_entries_with:", "metadata_", "dead:", "contexts:")
            )
            and not k.startswith("citing_papers:")
            and k not in FUNNEL_KEYS
        },
        "options": dict(options),
    }


def dataset_files(
    tallies: Mapping[str, int],
    graph: Mapping,
    years: Mapping[str, int],
    plot_sums: Iterable[tuple[PlotKey, int]],
    options: Mapping,
) -> dict[str, bytes]:
    """What a run writes once every count is in: the plots (`plots/*.png`, drawn from the per-key sums
    `plot_sums`), stats.json and the card. `graph` is the citation graph's figures (`graph_figures`)."""
    from extractors.plots import render_plots  # matplotlib, only where the plots are drawn

    numbers = plot_numbers(plot_sums or [])
    images = {f"plots/{name}": png for name, png in render_plots(numbers).items()}
    stats = build_stats(tallies, graph, years, options, plots=numbers, plot_files=list(images))
    return {**images, **assembly.stats_and_card_files(stats, dataset_card(stats))}


def format_funnel(stats: Mapping) -> str:
    """The end-of-run summary: the funnel, contexts per split, papers and edges, the checks."""
    return assembly.format_summary(
        stats,
        [
            assembly.per_split_line("contexts", stats["contexts"]),
            f"papers: {stats['papers']:,}; citation edges: {stats['citation_graph'].get('edges', 0):,}",
        ],
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _names(words: Sequence[str]) -> str:
    quoted = [f"`{w}`" for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _table1_section(stats: Mapping) -> str:
    table = stats.get("table1") or table_one(stats["contexts"], stats["papers"], None, stats["citation_graph"], None)
    recipe = (stats.get("options") or {}).get("recipe") or {}
    published = table.get("published")
    if published:
        beside = f", beside the figures published for the run's recipe `{table['recipe']}`: {published['source']}"
    elif table.get("recipe"):
        beside = f"; the run's recipe `{table['recipe']}` follows no publication, so there is no published column"
    else:
        beside = ""
    notes = []
    if published and published.get("note"):
        notes.append(f"Published: {published['note']}.")
    if published and recipe.get("deviations"):
        notes.append("Where this run's recipe departs from the publication: " + "; ".join(recipe["deviations"]))
    notes_text = "\n" + "\n\n".join(notes) + "\n" if notes else ""
    return f"""## Table 1
The figures HAtten (Gu et al. 2022) and SymTax (Goyal et al. 2024) print for their datasets{beside}.
Papers: the candidates in `papers/` (`in_pool`); years: of the citing papers, first to last; clustering and
degree: of the citation graph (the papers some context cites or comes from), the average local clustering
coefficient over the graph taken as undirected, the average degree as 2 x citations / papers.

{table_one_markdown(table)}
{notes_text}"""


def _plots_section(stats: Mapping) -> str:
    files = (stats.get("plots") or {}).get("files") or []
    if not files:
        return "## Plots\nNo plots: the run has no contexts to plot.\n"
    images = "\n\n".join(f"![{PLOT_CAPTIONS.get(path.rsplit('/', 1)[-1], path)}]({path})" for path in files)
    return f"""## Plots
The numbers behind every plot are in `stats.json` under `plots`; `python -m extractors.plots stats.json DIR`
draws them again.

{images}
"""


def _versions_section(stats: Mapping) -> str:
    versions = stats.get("versions") or {}
    recipe = ((stats.get("options") or {}).get("recipe") or {}).get("name")
    made_of = f"citrec {versions.get('citrec_version')}" + (f", recipe `{recipe}`" if recipe else "")
    return f"""## Versions
- dataset version: `{versions.get("dataset_version")}` ({made_of}): what the rows mean. Which rows they are
  is in `manifest.json` (every file with its row count, the git commit, the inputs).
- schema version: `{versions.get("schema_version")}`, the tables' columns; any change of a table's columns
  changes it.
"""


def _components_text(graph: Mapping) -> str:
    """The card's sentence on density and components; none for stats written before they were counted."""
    if "components" not in graph:
        return ""
    return (
        f" Density {graph.get('density', 0)}; {_plural(graph['components'], 'connected component')} (citations "
        f"taken as undirected), the largest with {graph.get('largest_component', 0):,} papers."
    )


def dataset_card(stats: Mapping, name: str = "citrec arsyta") -> str:
    """README.md for the written dataset: what it is, how it was built, options, counts, licence notes, and how
    to load it.

    Its YAML header lists the configs HuggingFace `datasets` loads (`assembly.hf_configs`): `default` (the contexts,
    one split per non-empty split), `papers` and `citations`; one with no rows has no file and is left out. The
    options shown hold no absolute local path (stats.json keeps them whole).
    """
    recipe = (stats.get("options", {}).get("recipe") or {}).get("name")
    title = assembly.card_title(name, recipe)
    options = json.dumps(assembly.without_local_dirs(stats.get("options", {})), indent=2, sort_keys=True, default=str)
    cut = {**ContextConfig().as_metadata(), **(stats.get("options", {}).get("contexts") or {})}
    window, before, after = int(cut["char_window"]), int(cut["sentences_before"]), int(cut["sentences_after"])
    target, other = cut["target_token"], cut["other_token"]
    funnel = "\n".join(f"| {k} | {v:,} |" for k, v in stats["funnel"].items())
    splits = "\n".join(f"| {k} | {v:,} | {stats['citing_papers'].get(k, 0):,} |" for k, v in stats["contexts"].items())
    graph = stats["citation_graph"]
    present = [split for split, n in stats["contexts"].items() if n > 0]
    empty = [split for split, n in stats["contexts"].items() if n == 0]
    configs = assembly.hf_configs(
        "contexts", stats["contexts"], [("papers", stats["papers"]), ("citations", graph.get("edges", 0))]
    )
    if not present:
        empty_note = (
            "\n**No split has contexts**, so there are no `contexts/` files and the header lists no contexts "
            "config; the funnel below shows where the mentions went.\n"
        )
    elif empty:
        empty_note = (
            f"\nThe {_names(empty)} {'split has' if len(empty) == 1 else 'splits have'} no contexts, so "
            f"{'it has' if len(empty) == 1 else 'they have'} no files and the header's `default` config leaves "
            f"{'it' if len(empty) == 1 else 'them'} out.\n"
        )
    else:
        empty_note = ""
    return f"""{assembly.hf_front_matter(title, configs)}# {title}: a local citation recommendation dataset

Built by citrec's `pipelines.arsyta` from parsed papers (GROBID TEI, S2ORC / unarXive JSON) and a paper
database (arXiv / S2ORC metadata). Each row of `contexts/` is one citation: the citing paper, the cited
paper, and the text around the citation marker in two views:

- `char_context`: {_plural(window, "character")} each side of the marker (`--char_window`; ACL-200 and
  arXiv(HAtten) use 200), the marker replaced by ` {target} `, other markers by `{other}`;
- `sentence_context`: the citing sentence with {_plural(before, "sentence")} before and {after} after from
  the same section, with the same replacement, and `section_heading` (the ArSyTa convention uses 1 and 1).

Both papers' arXiv `categories`, `primary_category` and ACM CCS 1998 `acm_classes` (derived from
arXiv's category definitions) travel with each context. Context ids are
`{{citing_id}}_{{cited_id}}_{{k}}`. Splits are by the citing paper's publication date; a citation of a paper
published after the citing paper is dropped.
{empty_note}
## Files
- `contexts/{{train,validation,test}}-SSSSS-of-NNNNN.parquet`: the contexts (an empty split has no file):
  {_columns(CONTEXTS_SCHEMA)}.
- `papers/`: the candidates (`in_pool`: with `--pool database` every paper of the recipe's pool, cited or
  not; with `--pool cited` the cited ones) and the papers the contexts come from: {_columns(PAPERS_SCHEMA)}.
- `citations/`: the directed citation graph: {_columns(CITATIONS_SCHEMA)}.
- `dead_letter/`: every input that could not be used, with its source, stage and reason.
- `plots/`: the plots below, as PNG.
- `stats.json`: the versions, the funnel and the figures below; `manifest.json`: every file with its row count.

{_versions_section(stats)}
## Counts
| split | contexts | citing papers |
|---|---|---|
{splits}

Papers: {stats["papers"]:,}. Citation graph: {graph.get("nodes", 0):,} nodes, {graph.get("edges", 0):,} edges,
average degree {graph.get("average_degree", 0)}, average local clustering coefficient
{graph.get("average_clustering", 0)} ({graph.get("clustering", "exact")}).{_components_text(graph)}

| funnel | count |
|---|---|
{funnel}

{_table1_section(stats)}
{_plots_section(stats)}
## Options
Absolute local paths are shown cut to their last directory (`.../tei/*.tei.xml`); `stats.json` and
`manifest.json` hold them whole.
```json
{options}
```

## Licence notes
The texts quoted in the contexts and the paper metadata remain under their authors' and publishers'
terms (arXiv metadata is CC0; each arXiv paper has its own licence; S2ORC is ODC-By 1.0). Check the
licence of every source before redistributing this dataset. The code that built it is Apache-2.0.

## Load
With HuggingFace `datasets`, inside this directory as it stands, or from anywhere with `DATASET` set to this
directory's path:
```python
{assembly.load_snippet("contexts", configs)}
```
"""


def _columns(schema: pa.Schema) -> str:
    return ", ".join(f"`{name}`" for name in schema.names)


SPLIT_FLAGS_RECIPES = ("citrec",)
"""The recipes whose split dates `--validation_from`/`--test_from` may set; every other recipe is a published
definition whose dates are fixed (`pipelines.arsyta.recipe_settings` refuses the flags)."""


def dataset_warnings(stats: Mapping) -> list[str]:
    """What a user should look at after a run, one line each (no "warning:" prefix), the cause first; none for a
    sound run: fewer than half of the linked mentions that reached resolution resolve (--metadata lacks the cited
    papers); no split has contexts (where the mentions went); else each empty split, with its date window and
    what can be done. The exact rules: docs/design.md.
    """
    warnings = [line for line in (_resolution_warning(stats),) if line]
    contexts = stats.get("contexts", {})
    empty = [split for split, n in contexts.items() if n == 0]
    if empty and len(empty) == len(contexts):
        warnings.append(_no_contexts_warning(stats))
    else:
        warnings += [_empty_split_warning(stats, split) for split in empty]
    return warnings


def _resolution_warning(stats: Mapping) -> str | None:
    funnel = stats.get("funnel", {})
    reached = funnel.get("mentions_linked", 0) - funnel.get("dropped_dangling_link", 0)
    unresolved = funnel.get("dropped_unresolved_reference", 0)
    not_in_database = funnel.get("dropped_cited_not_in_database", 0)
    resolved = reached - unresolved - not_in_database
    if reached <= 0 or 2 * resolved >= reached:
        return None
    inputs = (stats.get("options") or {}).get("inputs")
    if inputs is not None and not inputs.get("metadata"):
        database = (
            f"this run had no --metadata, so the database held only the {funnel.get('documents_parsed', 0):,} "
            "parsed documents themselves"
        )
    else:
        records = (stats.get("metadata") or {}).get("metadata_records_in")
        held = f" ({records:,} records)" if records is not None else ""
        database = f"this run's --metadata{held} holds {'none' if resolved == 0 else 'few'} of them"
    lost = ", ".join(
        f"{n:,} {reason}"
        for reason, n in (("unresolved_reference", unresolved), ("cited_not_in_database", not_in_database))
        if n
    )
    return (
        f"only {resolved:,} of {reached:,} linked mentions ({resolved / reached:.1%}) resolve to a paper in the "
        f"database ({lost} dropped), and only a resolved mention becomes a context: --metadata must hold the "
        f"papers your documents cite (arXiv or S2ORC records, matched by arXiv id, DOI or title); {database}"
    )


def _no_contexts_warning(stats: Mapping) -> str:
    funnel = stats.get("funnel", {})
    dropped = sorted(
        ((k.removeprefix("dropped_"), v) for k, v in funnel.items() if k.startswith("dropped_") and v > 0),
        key=lambda kv: (-kv[1], kv[0]),
    )
    if not funnel.get("mentions"):
        return (
            f"no split has contexts: no citation mention was found ({funnel.get('documents_parsed', 0):,} of "
            f"{funnel.get('documents_in', 0):,} documents parsed, {funnel.get('documents_dead_lettered', 0):,} "
            "dead-lettered: dead_letter/ says why)"
        )
    line = f"no split has contexts: none of the {funnel.get('mentions', 0):,} mentions became a context"
    if dropped:
        line += "; most were dropped as " + ", ".join(f"{reason} ({n:,})" for reason, n in dropped[:3])
    recipe = (stats.get("options") or {}).get("recipe") or {}
    citing = recipe.get("citing") or {}
    if any(reason.startswith("citing_outside_recipe") for reason, _ in dropped) and (
        citing.get("since") or citing.get("until")
    ):
        window = " ".join(
            part
            for part in (
                f"from {citing['since']}" if citing.get("since") else "",
                f"to {citing['until']}" if citing.get("until") else "",
            )
            if part
        )
        line += f"; recipe `{recipe.get('name')}` keeps citing papers published {window}"
    return line


def _empty_split_warning(stats: Mapping, split: str) -> str:
    options = stats.get("options") or {}
    recipe = options.get("recipe") or {}
    dates = options.get("split") or recipe.get("split") or {}
    window = _split_window(
        split, dates, (recipe.get("citing") or {}).get("since"), (recipe.get("citing") or {}).get("until")
    )
    years = year_range((stats.get("plots") or {}).get("contexts_per_year") or {})
    kept = ", ".join(f"{k} {v:,}" for k, v in stats.get("contexts", {}).items() if v > 0)
    found = (
        f"the contexts' citing papers are from {years} ({kept})" if years else f"the contexts are elsewhere ({kept})"
    )
    name = recipe.get("name")
    if name is None or name in SPLIT_FLAGS_RECIPES:
        return (
            f"split '{split}' has no contexts: it takes citing papers published {window}, and {found}; check "
            "--validation_from/--test_from against your papers' dates"
        )
    outside = {
        k.rsplit(":", 1)[-1]: v
        for k, v in stats.get("funnel", {}).items()
        if k.startswith("dropped_citing_outside_recipe:") and v > 0
    }
    dropped = (
        f"; {sum(outside.values()):,} contexts were dropped as their citing paper is outside the recipe ("
        + ", ".join(f"{reason} {n:,}" for reason, n in sorted(outside.items()))
        + ")"
        if outside
        else ""
    )
    return (
        f"split '{split}' has no contexts: recipe `{name}` fixes it to citing papers published {window}, and no "
        f"kept context's citing paper falls there: {found}{dropped}. The recipe's split dates cannot be changed "
        "(--validation_from/--test_from are for --recipe citrec)"
    )


def _split_window(split: str, dates: Mapping[str, str], since: str | None, until: str | None) -> str:
    """The publication dates a split takes, in words: "before 2024-01-01", "from 2020-01-01 and before
    2020-03-01", "from 2025-01-01 on", "from 2020-03-01 to 2020-04-30" (`until` is the last day kept)."""
    validation, test = dates.get("validation_from", "?"), dates.get("test_from", "?")
    first, before = {"train": (since, validation), "validation": (validation, test), "test": (test, None)}.get(
        split, (None, None)
    )
    last = until if split == "test" else None
    if first and before:
        return f"from {first} and before {before}"
    if before:
        return f"before {before}"
    if first and last:
        return f"from {first} to {last}"
    return f"from {first} on" if first else "on no date"
