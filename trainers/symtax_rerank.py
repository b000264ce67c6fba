"""SymTax's Reranker (Goyal et al., ACL 2024): the SciBERT pair score fused with the taxonomy separation of the
citing and the candidate paper.

    python -m trainers.symtax_rerank train    --dataset out/ --prefetched runs/symtax --output runs/symtax-rerank
    python -m trainers.symtax_rerank evaluate --dataset out/ --prefetched runs/symtax \\
        --checkpoint runs/symtax-rerank --split test

`--prefetched`: `trainers.symtax enrich`'s output. Results as `trainers.rerank` writes them. What is read off the
published code, and where citrec differs: docs/trainers.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow.parquet as pq
import torch

from trainers.checkpoints import load_checkpoint
from trainers.data import (
    SPLITS,
    CitationDataset,
    ContextQuery,
    is_parquet_dataset,
    load_dataset,
)
from trainers.metrics import RERANK_POOL_SIZES
from trainers.rerank import (
    PRESETS,
    PairReranker,
    add_reranker_training_flags,
    encode_batch,
    evaluate_prefetched_splits,
    reranker_queries,
    settle_train_rate,
    train_pair_reranker,
    training_checkpoints,
)
from trainers.rerank_model import (
    PairEncoder,
    add_model_flag,
    load_reranker,
    run_bert_command,
)
from trainers.runtime import (
    add_common_flags,
    autocast,
    command_parser,
    dataset_versions,
    parse_with_preset,
    resolve_device,
    train_command,
)
from trainers.symtax_model import FUSIONS, GRAPH_LAYERS, UNKNOWN, SymTaxReranker, TaxonomyFusion

STATE_FILE = "symtax.pt"


# ---------------------------------------------------------------------------------------------------------
# What the dataset says of the taxonomy
@dataclasses.dataclass
class TaxonomyFields:
    """Each paper's category (its primary arXiv category, or None) and each context's section heading."""

    category: dict[str, str | None]
    heading: dict[str, str]


def _first_category(primary: str | None, categories: Sequence[str] | None) -> str | None:
    from mapping.taxonomy import canonical_category

    value = primary or (categories[0] if categories else None)
    return canonical_category(value.strip()) if value and value.strip() else None


def load_taxonomy_fields(directory: str | Path) -> TaxonomyFields:
    """Papers' categories and contexts' headings: from the Parquet `papers/` and `contexts/` shards, or from
    the JSON layout (`papers_cat.json` when present, else `papers.json`; `heading` of `contexts.json`)."""
    directory = Path(directory)
    category: dict[str, str | None] = {}
    heading: dict[str, str] = {}
    if is_parquet_dataset(directory):
        for path in sorted((directory / "papers").glob("*.parquet")):
            names = pq.ParquetFile(path).schema_arrow.names
            columns = ["paper_id"] + [c for c in ("primary_category", "categories") if c in names]
            for row in pq.read_table(path, columns=columns).to_pylist():
                category[row["paper_id"]] = _first_category(row.get("primary_category"), row.get("categories"))
        for path in sorted((directory / "contexts").glob("*.parquet")):
            if "section_heading" in pq.ParquetFile(path).schema_arrow.names:
                for row in pq.read_table(path, columns=["context_id", "section_heading"]).to_pylist():
                    heading[row["context_id"]] = row["section_heading"] or ""
        return TaxonomyFields(category, heading)
    papers_file = directory / "papers_cat.json"
    if not papers_file.is_file():
        papers_file = directory / "papers.json"
    for paper_id, record in json.loads(papers_file.read_text(encoding="utf-8")).items():
        categories = record.get("categories")
        categories = [categories] if isinstance(categories, str) else categories
        category[paper_id] = _first_category(record.get("primary_category"), categories)
    contexts = directory / "contexts.json"
    if contexts.is_file():
        for context_id, record in json.loads(contexts.read_text(encoding="utf-8")).items():
            heading[context_id] = record.get("heading") or record.get("section_heading") or ""
    return TaxonomyFields(category, heading)


# ---------------------------------------------------------------------------------------------------------
# The taxonomy graph and its nodes' text
@dataclasses.dataclass
class TaxonomyGraph:
    nodes: list[str]  # "arxiv:cs.IR", "acm:H.3.3", ...
    texts: list[str]
    edges: list[tuple[int, int]]
    mapped: list[list[int]]  # for each node, the ACM nodes an arXiv node maps to (else [])


def taxonomy_graph() -> TaxonomyGraph:
    """citrec's fused arXiv + ACM CCS 1998 graph, with every other arXiv category as an isolated node."""
    from mapping.taxonomy import build_graph, load_categories

    graph = build_graph()
    names, _ = load_categories()
    for category, name in names.items():
        if f"arxiv:{category}" not in graph:
            graph.add_node(f"arxiv:{category}", kind="arxiv", code=category, name=name)
    nodes = sorted(graph.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    texts = [graph.nodes[n].get("name") or graph.nodes[n].get("code") or n for n in nodes]
    edges = [(index[a], index[b]) for a, b in graph.edges]
    mapped = [
        [index[t] for t in graph.successors(n) if graph.nodes[t].get("kind") == "acm"] if n.startswith("arxiv:") else []
        for n in nodes
    ]
    return TaxonomyGraph(nodes, texts, edges, mapped)


@torch.no_grad()
def embed_texts(
    encoder, tokenizer, texts: Sequence[str], device: torch.device, batch_size: int = 64, max_tokens: int = 64
) -> torch.Tensor:
    """The mean of the last hidden states over each text's tokens (the language model's text embedding)."""
    encoder.eval()
    out = []
    for start in range(0, len(texts), batch_size):
        # cut by hand: `truncation=`/`padding=` arguments would stay set on a fast tokenizer (transformers 5) and
        # cut every later query to `max_length` tokens
        rows = [tokenizer(text)["input_ids"][:max_tokens] for text in texts[start : start + batch_size]]
        width = max(len(row) for row in rows)
        ids = torch.full((len(rows), width), tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, : len(row)], mask[i, : len(row)] = torch.tensor(row), 1
        states = encoder(input_ids=ids.to(device), attention_mask=mask.to(device)).last_hidden_state.float()
        mask = mask.to(device).unsqueeze(-1).float()
        out.append(((states * mask).sum(1) / mask.sum(1).clamp_min(1)).cpu())
    return torch.cat(out)


# ---------------------------------------------------------------------------------------------------------
# Building, saving and loading the model
def build_model(
    source: str | Path,
    device: torch.device,
    *,
    fusion: str = "vector",
    graph_layer: str = "appnp",
    curvature: float = 1.0,
    category_dim: int = 512,
) -> tuple[SymTaxReranker, object, dict]:
    """A fresh SymTax reranker on the BERT at `source` (hub id or directory) and its config."""
    base, tokenizer = load_reranker(source, device)
    config = {"fusion": fusion, "graph_layer": graph_layer, "curvature": curvature, "category_dim": category_dim}
    taxonomy = None
    if fusion != "none":
        graph = taxonomy_graph()
        features = embed_texts(base.encoder, tokenizer, graph.texts, device)
        taxonomy = TaxonomyFusion(
            features, graph.edges, graph.mapped, fusion=fusion, graph_layer=graph_layer, category_dim=category_dim
        )
        config["nodes"] = graph.nodes
    model = SymTaxReranker(base.encoder, taxonomy, curvature)
    return model.to(device), tokenizer, config


def save_model(model: SymTaxReranker, tokenizer, config: dict, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    model.encoder.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    state = {k: v for k, v in model.state_dict().items() if not k.startswith("encoder.")}
    torch.save({"config": config, "state": state}, directory / STATE_FILE)


def load_model(directory: Path, device: torch.device) -> tuple[SymTaxReranker, object, dict]:
    saved = load_checkpoint(directory / STATE_FILE)
    config = saved["config"]
    base, tokenizer = load_reranker(directory, device)
    taxonomy = None
    if config["fusion"] != "none":
        n, dim = saved["state"]["taxonomy.fused"].shape
        taxonomy = TaxonomyFusion(
            torch.zeros(n, dim),
            [],
            [[] for _ in range(n)],
            fusion=config["fusion"],
            graph_layer=config["graph_layer"],
            category_dim=config["category_dim"],
        )
    model = SymTaxReranker(base.encoder, taxonomy, config["curvature"])
    model.load_state_dict(saved["state"], strict=False)  # the encoder's weights came with load_reranker
    return model.to(device), tokenizer, config


class CategoryLookup:
    """Paper id -> taxonomy node index (UNKNOWN without one)."""

    def __init__(self, fields: TaxonomyFields, nodes: Sequence[str] | None) -> None:
        index = {node: i for i, node in enumerate(nodes or [])}
        self.indices = {p: index.get(f"arxiv:{c}", UNKNOWN) if c else UNKNOWN for p, c in fields.category.items()}

    def __call__(self, paper_ids: Sequence[str], device: torch.device) -> torch.Tensor:
        return torch.tensor([self.indices.get(p, UNKNOWN) for p in paper_ids], dtype=torch.long, device=device)


# ---------------------------------------------------------------------------------------------------------
# Scoring and evaluation
def with_headings(queries: Sequence[ContextQuery], fields: TaxonomyFields, on: bool) -> list[ContextQuery]:
    """The queries, each context followed by its section heading when `on` (Reranker_PER_v2's query)."""
    if not on:
        return list(queries)
    return [
        dataclasses.replace(q, context=f"{q.context} {fields.heading.get(q.context_id, '')}".strip()) for q in queries
    ]


def score_pairs(
    model: SymTaxReranker,
    encoder: PairEncoder,
    dataset: CitationDataset,
    lookup: CategoryLookup,
    batch: Sequence[tuple[ContextQuery, list[str]]],
    device: torch.device,
    amp: bool,
) -> torch.Tensor:
    """Scores of every (query, candidate) pair of `batch`, rows query by query."""
    inputs = {k: v.to(device) for k, v in encode_batch(encoder, dataset, batch).items()}
    if model.taxonomy is not None:
        inputs["query_category"] = lookup([q.citing_id for q, cands in batch for _ in cands], device)
        inputs["candidate_category"] = lookup([c for _, cands in batch for c in cands], device)
    with autocast(device, amp):
        return model(**inputs)


def scorer(model, encoder, dataset, lookup, device, *, batch_size: int = 64, amp: bool = False) -> Callable:
    def score(query: ContextQuery, candidates: Sequence[str]) -> dict[str, float]:
        model.eval()
        scores: dict[str, float] = {}
        for start in range(0, len(candidates), batch_size):
            chunk = list(candidates[start : start + batch_size])
            values = score_pairs(model, encoder, dataset, lookup, [(query, chunk)], device, amp)
            scores.update(zip(chunk, values.tolist(), strict=True))
        return scores

    return torch.no_grad()(score)


# ---------------------------------------------------------------------------------------------------------
# The command line
def _add_taxonomy_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--section_heading", action="store_true", help="Append the context's section heading to the query."
    )


def build_parser(preset: str = "paper") -> argparse.ArgumentParser:
    parser, commands = command_parser("python -m trainers.symtax_rerank", __doc__)
    train = train_command(
        commands,
        PRESETS,
        "the smoke settings of trainers.rerank (tiny model, 128 tokens, few steps, its rates)",
        help="Fine-tune the SymTax reranker.",
    )
    train.add_argument("--prefetched", required=True, help="Directory with prefetched_train.json (and _validation).")
    train.add_argument("--output", required=True, help="Checkpoint directory (last/ and best/ inside).")
    add_model_flag(train)
    train.add_argument("--fusion", choices=FUSIONS, default="vector", help="vector (default), graph, or none.")
    train.add_argument("--graph_layer", choices=GRAPH_LAYERS, default="appnp", help="For --fusion graph (appnp).")
    train.add_argument(
        "--curvature", type=float, default=1.0, help="k of the separation: 1 published code, -1 Poincare, 0 Euclid."
    )
    train.add_argument("--category_dim", type=int, default=512, help="ln_cat's output size (512).")
    _add_taxonomy_flags(train)
    add_reranker_training_flags(train)
    train.set_defaults(**PRESETS.get(preset, {}))
    run = commands.add_parser("evaluate", help="Evaluate prefetch + SymTax rerank.")
    add_common_flags(run)
    run.add_argument("--prefetched", required=True, help="Directory with prefetched_<split>.json.")
    run.add_argument("--checkpoint", required=True, help="OUTPUT of train, or a model directory inside it.")
    run.add_argument("--split", nargs="+", default=["test"], choices=SPLITS, help="Query splits.")
    run.add_argument("--pool_sizes", type=int, nargs="+", default=list(RERANK_POOL_SIZES), help="Top-N reranked.")
    run.add_argument("--no_oracle", action="store_true", help="Skip the pools with the cited paper added.")
    run.add_argument("--batch_size", type=int, default=64, help="Pairs scored per forward pass.")
    run.add_argument("--max_length", type=int, default=512, help="Tokens per pair (512).")
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return settle_train_rate(parse_with_preset(build_parser, argv))


def run_train(args: argparse.Namespace) -> dict:
    device = resolve_device(args.device)
    dataset = load_dataset(args.dataset, args.context_field)
    fields = load_taxonomy_fields(args.dataset)
    train, train_prefetched, validation, validation_prefetched = reranker_queries(dataset, args)
    train = with_headings(train, fields, args.section_heading)
    validation = with_headings(validation, fields, args.section_heading)
    checkpoints = training_checkpoints(args)
    if checkpoints.load() is not None:
        model, tokenizer, config = load_model(checkpoints.directory, device)
    else:
        model, tokenizer, config = build_model(
            args.model,
            device,
            fusion=args.fusion,
            graph_layer=args.graph_layer,
            curvature=args.curvature,
            category_dim=args.category_dim,
        )
        config["section_heading"] = args.section_heading
    lookup = CategoryLookup(fields, config.get("nodes"))
    encoder = PairEncoder(tokenizer, args.max_length)

    def score_batch(batch: Sequence[tuple[ContextQuery, list[str]]]) -> torch.Tensor:
        return score_pairs(model, encoder, dataset, lookup, batch, device, args.amp)

    def save(directory: Path) -> None:
        save_model(model, tokenizer, config, directory)

    score_pool = scorer(model, encoder, dataset, lookup, device, amp=args.amp)
    reranker = PairReranker(model, score_batch, score_pool, save)
    summary = train_pair_reranker(
        reranker,
        args,
        dataset,
        train,
        train_prefetched,
        validation,
        validation_prefetched,
        checkpoints,
        device,
        desc="symtax rerank",
    )
    best = summary["best_validation_recall@10"]
    print(
        f"trained {summary['steps']} steps ({args.fusion} fusion) at learning rate {args.learning_rate:g} "
        f"({args.learning_rate_choice}); best validation recall@10: {best:.4f}"
    )
    return summary


def run_evaluate(args: argparse.Namespace) -> dict:
    device = resolve_device(args.device)
    checkpoint = Path(args.checkpoint)
    if (checkpoint / "best" / STATE_FILE).is_file():
        checkpoint = checkpoint / "best"
    if not (checkpoint / STATE_FILE).is_file():
        raise SystemExit(f"error: {args.checkpoint} holds no SymTax reranker ({STATE_FILE}): run `train` first")
    model, tokenizer, config = load_model(checkpoint, device)
    encoder = PairEncoder(tokenizer, args.max_length)
    dataset = load_dataset(args.dataset, args.context_field)
    fields = load_taxonomy_fields(args.dataset)
    lookup = CategoryLookup(fields, config.get("nodes"))
    score = scorer(model, encoder, dataset, lookup, device, batch_size=args.batch_size, amp=args.amp)
    extra = {k: v for k, v in config.items() if k != "nodes"}
    extra["categorised_papers"] = sum(1 for v in lookup.indices.values() if v != UNKNOWN)
    extra["dataset_versions"] = dataset_versions(args.dataset)

    def prepare(queries: list[ContextQuery]) -> list[ContextQuery]:
        return with_headings(queries, fields, config.get("section_heading", False))

    return evaluate_prefetched_splits(args, dataset, score, device, prepare=prepare, extra=extra)


def main(argv: list[str] | None = None) -> dict:
    return run_bert_command(parse_args(argv), run_train, run_evaluate)


if __name__ == "__main__":
    main()
