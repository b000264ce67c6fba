"""Dataset-level logic with no Beam in it: time-based splits, the date check, statistics, the dataset card and
the warnings a run ends with."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass

import networkx as nx

from extractors.contexts import ContextConfig
from extractors.records import Context, CounterFn, Paper, no_count


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
    """SymTax Table 1 style figures of the citation graph (treated as undirected for clustering).

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
    "overlapping_span",
    "unlinked_mention",
    "dangling_link",
    "unresolved_reference",
    "self_citation",
    "cited_not_in_database",
    "cited_after_citing",
    "citing_date_unknown",
)


def build_stats(tallies: Mapping[str, int], graph: Mapping, years: Mapping[str, int], options: Mapping) -> dict:
    """stats.json: the funnel, contexts per split, papers, years, graph figures, and the options used."""
    funnel = {key: int(tallies.get(key, 0)) for key in FUNNEL_KEYS}
    funnel.update({f"dropped_{reason}": 0 for reason in DROP_REASONS})
    funnel.update({k: int(v) for k, v in sorted(tallies.items()) if k.startswith("dropped_")})
    dropped = sum(v for k, v in funnel.items() if k.startswith("dropped_"))
    checks = {
        "documents_balance": funnel["documents_in"] == funnel["documents_parsed"] + funnel["documents_dead_lettered"],
        "mentions_balance": funnel["mentions"] == funnel["contexts"] + dropped,
    }
    return {
        "funnel": funnel,
        "checks": checks,
        "contexts": {split: int(tallies.get(f"contexts:{split}", 0)) for split in ("train", "validation", "test")},
        "citing_papers": {
            split: int(tallies.get(f"citing_papers:{split}", 0)) for split in ("train", "validation", "test")
        },
        "papers": int(tallies.get("papers_written", 0)),
        "publication_years": {k: int(v) for k, v in sorted(years.items())},
        "citation_graph": dict(graph),
        "resolution": {
            k: int(v)
            for k, v in sorted(tallies.items())
            if k.startswith(("resolved_by:", "unresolved:", "bib_entries_with:"))
        },
        "metadata": {k: int(v) for k, v in sorted(tallies.items()) if k.startswith("metadata_")},
        "dead_letters": {k.split(":", 1)[1]: int(v) for k, v in sorted(tallies.items()) if k.startswith("dead:")},
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


def format_funnel(stats: Mapping) -> str:
    """The end-of-run summary lines."""
    funnel = stats["funnel"]
    width = max(len(k) for k in funnel)
    lines = ["funnel:"] + [f"  {k.ljust(width)}  {v:>10,}" for k, v in funnel.items()]
    lines.append("contexts per split: " + ", ".join(f"{k} {v:,}" for k, v in stats["contexts"].items()))
    lines.append(f"papers: {stats['papers']:,}; citation edges: {stats['citation_graph'].get('edges', 0):,}")
    for name, ok in stats["checks"].items():
        lines.append(f"check {name}: {'ok' if ok else 'MISMATCH'}")
    return "\n".join(lines)


HF_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
"""The split names HuggingFace `datasets` accepts (its `datasets.splits._split_re`)."""
_PLAIN_YAML = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./*-]*$")

DataFiles = str | Sequence[tuple[str, str]]
"""A config's files: one glob (HuggingFace reads it as the `train` split) or `(split, glob)` pairs."""


def hf_front_matter(pretty_name: str, configs: Sequence[tuple[str, DataFiles]]) -> str:
    """The YAML header of a HuggingFace dataset card: `pretty_name` and `configs`.

    Globs are relative to the dataset's root. Written by hand so that a run needs no PyYAML; names, splits
    and globs must be plain YAML scalars (ValueError otherwise), split names HuggingFace's.
    """
    lines = ["---", f"pretty_name: {json.dumps(pretty_name)}"]
    lines += ["configs:"] if configs else []
    for config_name, data_files in configs:
        pairs = [] if isinstance(data_files, str) else list(data_files)
        words = [config_name, data_files] if isinstance(data_files, str) else [config_name, *sum(pairs, start=())]
        for word in words:
            if not _PLAIN_YAML.match(word) or ".." in word:
                raise ValueError(f"not a plain relative name or glob for a dataset card: {word!r}")
        for split, _ in pairs:
            if not HF_SPLIT_NAME.match(split):
                raise ValueError(f"{split!r} is not a HuggingFace split name")
        lines.append(f"- config_name: {config_name}")
        if isinstance(data_files, str):
            lines.append(f"  data_files: {data_files}")
            continue
        lines.append("  data_files:")
        for split, glob in pairs:
            lines += [f"  - split: {split}", f"    path: {glob}"]
    lines.append("---")
    return "\n".join(lines) + "\n"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _names(words: Sequence[str]) -> str:
    quoted = [f"`{w}`" for w in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def dataset_card(stats: Mapping, name: str = "citrec arsyta") -> str:
    """README.md for the written dataset: what it is, how it was built, options, counts, licence notes.

    Its YAML header lists the configs HuggingFace `datasets` loads: `default` (the contexts, one split per
    non-empty split), `papers` and `citations`. A split or table with no rows has no file (the writer
    drops 0-row split shards, and `datasets` rejects a 0-row shard), so it is left out.
    """
    options = json.dumps(stats.get("options", {}), indent=2, sort_keys=True, default=str)
    cut = {**ContextConfig().as_metadata(), **(stats.get("options", {}).get("contexts") or {})}
    window, before, after = int(cut["char_window"]), int(cut["sentences_before"]), int(cut["sentences_after"])
    target, other = cut["target_token"], cut["other_token"]
    funnel = "\n".join(f"| {k} | {v:,} |" for k, v in stats["funnel"].items())
    splits = "\n".join(f"| {k} | {v:,} | {stats['citing_papers'].get(k, 0):,} |" for k, v in stats["contexts"].items())
    graph = stats["citation_graph"]
    present = [split for split, n in stats["contexts"].items() if n > 0]
    empty = [split for split, n in stats["contexts"].items() if n == 0]
    configs: list[tuple[str, DataFiles]] = []
    if present:
        configs.append(("default", [(split, f"contexts/{split}-*.parquet") for split in present]))
    if stats.get("papers", 0) > 0:
        configs.append(("papers", "papers/*.parquet"))
    if graph.get("edges", 0) > 0:
        configs.append(("citations", "citations/*.parquet"))
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
    if present:
        glob = 'f"contexts/{s}-*.parquet"'
        load = (
            f'ds = load_dataset("parquet", data_files={{s: {glob} for s in {json.dumps(present)}}})\n'
            'papers = load_dataset("path/to/this/directory", "papers", split="train")  # the configs above'
        )
    else:
        load = 'papers = load_dataset("path/to/this/directory", "papers", split="train")  # the configs above'
    return f"""{hf_front_matter(name, configs)}# {name}: a local citation recommendation dataset

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
- `contexts/{{train,validation,test}}-SSSSS-of-NNNNN.parquet`: the contexts (an empty split has no file).
- `papers/`: every paper that a context cites or comes from (id, title, abstract, authors, date,
  categories).
- `citations/`: the directed citation graph (citing, cited, number of contexts, section headings).
- `dead_letter/`: every input that could not be used, with its source, stage and reason.
- `stats.json`: the funnel and the figures below.

## Counts
| split | contexts | citing papers |
|---|---|---|
{splits}

Papers: {stats["papers"]:,}. Citation graph: {graph.get("nodes", 0):,} nodes, {graph.get("edges", 0):,} edges,
average degree {graph.get("average_degree", 0)}, average local clustering coefficient
{graph.get("average_clustering", 0)} ({graph.get("clustering", "exact")}).

| funnel | count |
|---|---|
{funnel}

## Options
```json
{options}
```

## Licence notes
The texts quoted in the contexts and the paper metadata remain under their authors' and publishers'
terms (arXiv metadata is CC0; each arXiv paper has its own licence; S2ORC is ODC-By 1.0). Check the
licence of every source before redistributing this dataset. The code that built it is Apache-2.0.

Load with HuggingFace datasets:
```python
from datasets import load_dataset
{load}
```
"""


def dataset_warnings(stats: Mapping) -> list[str]:
    """What a user should look at after a run, one line each (no "warning:" prefix); none for a sound run.

    - one line per split with no contexts (`stats["contexts"][split] == 0`): the split dates miss the papers;
    - one line when fewer than half of the linked mentions that reached resolution resolve. Reached:
      `mentions_linked - dropped_dangling_link` (a dangling link names no bib entry to resolve); lost:
      `dropped_unresolved_reference + dropped_cited_not_in_database`; warned when `2 * (reached - lost) <
      reached`. Usually the --metadata database does not hold the cited papers.
    """
    warnings = []
    dates = stats.get("options", {}).get("split") or {}
    when = (
        f" (validation_from {dates['validation_from']}, test_from {dates['test_from']})"
        if {"validation_from", "test_from"} <= set(dates)
        else ""
    )
    check = f"check --validation_from/--test_from against your papers' dates{when}"
    for split, n in stats.get("contexts", {}).items():
        if n == 0:
            warnings.append(f"split '{split}' has no contexts: {check}")
    funnel = stats.get("funnel", {})
    reached = funnel.get("mentions_linked", 0) - funnel.get("dropped_dangling_link", 0)
    lost = funnel.get("dropped_unresolved_reference", 0) + funnel.get("dropped_cited_not_in_database", 0)
    resolved = reached - lost
    if reached > 0 and 2 * resolved < reached:
        warnings.append(
            f"only {resolved:,} of {reached:,} linked mentions ({resolved / reached:.1%}) resolve to a paper in "
            "the database: check that --metadata holds the papers your documents cite (their arXiv ids, DOIs "
            "or titles)"
        )
    return warnings
