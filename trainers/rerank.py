"""SciBERT reranker jobs: train on prefetched candidates, evaluate the two-stage pipeline.

    python -m trainers.rerank train    --dataset out/ --prefetched runs/hatten --output runs/rerank
    python -m trainers.rerank evaluate --dataset out/ --prefetched runs/hatten --checkpoint runs/rerank --split test

`--prefetched`: a prefetcher's output (`trainers.hatten prefetch`, `trainers.bm25`). `OUTPUT/last/` is resumable,
`OUTPUT/best/` the best by validation Recall@10; without a hub pass `--model` a `trainers.tiny_model` directory.
Training and metrics: docs/trainers.md.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from trainers.checkpoints import Checkpointer, add_checkpoint_flags, capture_rng, restore_rng
from trainers.data import (
    SPLITS,
    CitationDataset,
    ContextQuery,
    EmptySplitError,
    citing_paper,
    load_dataset,
    load_prefetched,
)
from trainers.metrics import RERANK_POOL_SIZES, ndcg_at_k, recall_at_k, recall_ks_up_to, reciprocal_rank
from trainers.rerank_model import (
    PairEncoder,
    Reranker,
    add_model_flag,
    load_reranker,
    rerank_triplet_loss,
    run_bert_command,
    save_reranker,
)
from trainers.runtime import (
    PresetRates,
    add_common_flags,
    add_learning_rate_flag,
    autocast,
    command_parser,
    grad_scaler,
    parse_with_preset,
    resolve_device,
    settle_learning_rate,
    train_command,
    write_json,
    write_split_metrics,
)
from trainers.tiny_model import is_tiny_model

# `--preset smoke`: minutes on two CPU cores with a tiny local model; explicit flags win over it.
PRESETS: dict[str, dict[str, object]] = {
    "paper": {},
    "smoke": {
        "n_document": 4,
        "max_length": 128,
        "max_steps": 200,
        "validate_every": 20,
        "validation_queries": 100,
        "validation_pool": 20,
    },
}
# The rate by what is trained (`runtime.settle_learning_rate`): a pretrained encoder is fine-tuned at the authors'
# 1e-5 in every preset; the tiny random model gets 1e-4 in a smoke run.
LEARNING_RATES = {"paper": PresetRates(pretrained=1e-5, tiny=1e-5), "smoke": PresetRates(pretrained=1e-5, tiny=1e-4)}


@torch.no_grad()
def score_candidates(
    model: Reranker,
    encoder: PairEncoder,
    dataset: CitationDataset,
    query: ContextQuery,
    candidates: Sequence[str],
    device: torch.device,
    *,
    batch_size: int = 64,
    amp: bool = False,
) -> dict[str, float]:
    """The reranker's score of each candidate for `query`."""
    model.eval()
    query_ids = encoder.query_ids(citing_paper(dataset, query), query.context)
    scores: dict[str, float] = {}
    for start in range(0, len(candidates), batch_size):
        chunk = list(candidates[start : start + batch_size])
        batch = {k: v.to(device) for k, v in encoder.encode(query_ids, [dataset.papers[p] for p in chunk]).items()}
        with autocast(device, amp):
            scores.update(zip(chunk, model(**batch).tolist(), strict=True))
    return scores


def by_score(candidates: Sequence[str], scores: dict[str, float]) -> list[str]:
    """The candidates sorted by score, best first; ties keep their order (a reranked prefetch list:
    `by_score(pool, score_candidates(...))`)."""
    return sorted(candidates, key=lambda p: -scores[p])


def ranked_bounds(
    dataset: CitationDataset, queries: Sequence[ContextQuery], prefetched: dict[str, list[str]], largest: int
) -> tuple[int, int]:
    """(the longest candidate list reranked, the most cited papers a query adds in the oracle pools): Recall@K of a
    pool named top-n is reported for K up to what was ranked, min(n, longest) (plus the added cited papers for the
    oracle pools), not up to n: on a dataset of 20 candidates, `recall@2000_rerank_top2000` would repeat Recall@20."""
    longest = max((len(prefetched.get(q.context_id, [])[:largest]) for q in queries), default=0)
    added = max((sum(c in dataset.papers for c in q.cited_ids) for q in queries), default=0)
    return longest, added


def pool_metrics(ranking: Sequence[str], relevant: set[str], pool: int) -> dict[str, float]:
    """MRR, Recall@K for K up to `pool`, NDCG@10 of one reranked pool."""
    metrics = {"mrr": reciprocal_rank(ranking, relevant), "ndcg@10": ndcg_at_k(ranking, relevant, 10)}
    metrics.update({f"recall@{k}": recall_at_k(ranking, relevant, k) for k in recall_ks_up_to(pool)})
    return metrics


def rerank_pools(
    score,
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    prefetched: dict[str, list[str]],
    *,
    pool_sizes: Sequence[int] = RERANK_POOL_SIZES,
    progress: bool = False,
    oracle: bool = True,
) -> dict[str, float]:
    """Recall@10 after reranking each pool size of prefetched candidates (Table 4), full metrics of the largest
    pool and, with `oracle`, of every pool with the cited papers added where missing (Table 3's protocol), for any
    `score(query, candidates) -> {paper id: score}` (this reranker's, SymTax's)."""
    from tqdm.auto import tqdm

    largest = max(pool_sizes)
    longest, added = ranked_bounds(dataset, queries, prefetched, largest)
    sums: dict[str, float] = {}

    def add(key: str, value: float) -> None:
        sums[key] = sums.get(key, 0.0) + value

    start = time.perf_counter()
    for query in tqdm(queries, desc="rerank", disable=not progress):
        relevant = set(query.cited_ids)
        pool = prefetched.get(query.context_id, [])[:largest]
        missing = [c for c in query.cited_ids if c in dataset.papers and c not in pool] if oracle else []
        scores = score(query, pool + missing)
        for n in pool_sizes:
            top = pool[:n]
            add(f"recall@10_rerank_top{n}", recall_at_k(by_score(top, scores), relevant, 10))
            if oracle:
                with_cited = top + [c for c in query.cited_ids if c in dataset.papers and c not in top]
                for key, value in pool_metrics(by_score(with_cited, scores), relevant, min(n, longest) + added).items():
                    add(f"{key}_oracle_top{n}", value)
        for key, value in pool_metrics(by_score(pool, scores), relevant, min(largest, longest)).items():
            if key != "recall@10":  # counted above as Table 4's entry for the largest pool
                add(f"{key}_rerank_top{largest}", value)
    results = {key: value / max(1, len(queries)) for key, value in sums.items()}
    results["num_queries"] = float(len(queries))
    results["rerank_seconds_per_query"] = (time.perf_counter() - start) / max(1, len(queries))
    return results


def training_candidates(
    query: ContextQuery, prefetched: Sequence[str], rerank_top_k: int, n_document: int, rng: random.Random
) -> list[str]:
    """The cited paper first, then up to `n_document - 1` negatives drawn without replacement from the
    prefetcher's top `rerank_top_k` (never a cited paper nor the citing one)."""
    cited = rng.choice(query.cited_ids)
    pool = [p for p in prefetched[:rerank_top_k] if p not in query.cited_ids and p != query.citing_id]
    return [cited, *rng.sample(pool, min(n_document - 1, len(pool)))]


def add_reranker_training_flags(train: argparse.ArgumentParser) -> None:
    """The training loop's flags (`train_pair_reranker`), shared by every reranker's `train` command."""
    train.add_argument("--epochs", type=int, default=1, help="Passes over the training queries (default 1).")
    train.add_argument("--max_steps", type=int, default=0, help="Stop after this many steps (0: no limit).")
    train.add_argument(
        "--n_document",
        type=int,
        default=32,
        help="Documents per query: 1 cited + n_document - 1 negatives (32, RerankDataset's default; the authors' "
        "released config: 10).",
    )
    train.add_argument("--queries_per_batch", type=int, default=1, help="Queries per step (n_query_per_batch, 1).")
    train.add_argument("--rerank_top_k", type=int, default=2000, help="K_r: negatives come from the top K_r (2000).")
    add_learning_rate_flag(train, LEARNING_RATES)
    train.add_argument("--weight_decay", type=float, default=1e-2, help="AdamW weight decay (1e-2).")
    train.add_argument("--margin", type=float, default=0.1, help="Triplet margin (0.1).")
    train.add_argument("--max_length", type=int, default=512, help="Tokens per query-candidate pair (512).")
    train.add_argument("--validate_every", type=int, default=5000, help="Steps between validations (5000).")
    train.add_argument("--validation_queries", type=int, default=1000, help="Validation queries used (1000).")
    train.add_argument("--validation_pool", type=int, default=100, help="Prefetched candidates reranked (100).")
    add_checkpoint_flags(train)


def build_parser(preset: str = "paper") -> argparse.ArgumentParser:
    """The command line; `preset` sets the train defaults (`parse_args` reads it from the arguments first)."""
    parser, commands = command_parser("python -m trainers.rerank", __doc__)
    train = train_command(
        commands,
        PRESETS,
        "4 documents a query, 128 tokens, at most 200 steps, rate 1e-4 for the tiny model (a "
        "pretrained encoder keeps 1e-5)",
        help="Fine-tune the reranker.",
        description="Fine-tune the reranker.",
    )
    train.add_argument("--prefetched", required=True, help="Directory with prefetched_train.json (and _validation).")
    train.add_argument("--output", required=True, help="Checkpoint directory (last/ and best/ inside).")
    add_model_flag(train)
    add_reranker_training_flags(train)
    train.set_defaults(**PRESETS.get(preset, {}))
    evaluate = commands.add_parser(
        "evaluate", help="Evaluate prefetch + rerank.", description="Recall@10 after reranking top-N prefetched."
    )
    add_common_flags(evaluate)
    evaluate.add_argument("--prefetched", required=True, help="Directory with prefetched_<split>.json.")
    evaluate.add_argument("--checkpoint", required=True, help="A reranker directory (OUTPUT/best) or OUTPUT itself.")
    evaluate.add_argument("--split", nargs="+", default=["test"], choices=SPLITS, help="Query splits.")
    evaluate.add_argument("--pool_sizes", type=int, nargs="+", default=list(RERANK_POOL_SIZES), help="Top-N to rerank.")
    evaluate.add_argument(
        "--no_oracle", action="store_true", help="Skip the pools with the cited paper added (Table 3's protocol)."
    )
    evaluate.add_argument("--batch_size", type=int, default=64, help="Pairs scored per forward pass.")
    evaluate.add_argument("--max_length", type=int, default=512, help="Tokens per query-candidate pair (512).")
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return settle_train_rate(parse_with_preset(build_parser, argv))


def settle_train_rate(args: argparse.Namespace) -> argparse.Namespace:
    """A `train` command's learning rate by what it trains (`LEARNING_RATES`), shared by every pair reranker."""
    if args.command == "train":
        settle_learning_rate(args, LEARNING_RATES, pretrained=not is_tiny_model(args.model))
    return args


def encode_batch(
    encoder: PairEncoder, dataset: CitationDataset, batch: Sequence[tuple[ContextQuery, list[str]]]
) -> dict[str, torch.Tensor]:
    """Every (query, candidate) pair of a step, padded to the longest: rows query by query, cited first."""
    parts = []
    for query, candidates in batch:
        query_ids = encoder.query_ids(citing_paper(dataset, query), query.context)
        parts.append(encoder.encode(query_ids, [dataset.papers[p] for p in candidates]))
    width = max(part["input_ids"].shape[1] for part in parts)
    pad = {"input_ids": encoder.tokenizer.pad_token_id, "attention_mask": 0, "token_type_ids": 0}
    padded = {
        key: [torch.nn.functional.pad(p[key], (0, width - p[key].shape[1]), value=pad[key]) for p in parts]
        for key in pad
    }
    return {key: torch.cat(tensors) for key, tensors in padded.items()}


@dataclass
class PairReranker:
    """What the shared training loop needs of a (query, candidate) reranker: the module, the scores of a step's
    pairs (flat, query by query, as `encode_batch` lays them out), a scorer for validation pools
    (`rerank_pools`'s `score`) and how to save it as a directory."""

    model: torch.nn.Module
    score_batch: Callable[[Sequence[tuple[ContextQuery, list[str]]]], torch.Tensor]
    score_pool: Callable[[ContextQuery, list[str]], dict[str, float]]
    save: Callable[[Path], None]


def training_checkpoints(args: argparse.Namespace) -> Checkpointer:
    """`OUTPUT/last/` (the model files and `state.pt`), resumed unless --no_resume."""
    return Checkpointer.from_flags(args, Path(args.output) / "last" / "state.pt")


def train_pair_reranker(
    reranker: PairReranker,
    args: argparse.Namespace,
    dataset: CitationDataset,
    train: Sequence[ContextQuery],
    train_prefetched: dict[str, list[str]],
    validation: Sequence[ContextQuery],
    validation_prefetched: dict[str, list[str]],
    checkpoints: Checkpointer,
    device: torch.device,
    desc: str = "rerank",
) -> dict:
    """The rerankers' training loop (`trainers.rerank`, `trainers.symtax_rerank`): per step `queries_per_batch`
    queries, each its cited paper and `n_document - 1` negatives from the prefetcher's top `rerank_top_k`, the
    triplet loss, AdamW; every `validate_every` steps Recall@10 of the top `validation_pool` (best/ kept when it
    does not lose) and last/; last/ also every `checkpoint_every` steps or `checkpoint_minutes` and on Ctrl-C.
    A run resumed from last/ (`checkpoints.load()`, weights already loaded into `reranker.model` by the caller)
    continues exactly."""
    from tqdm.auto import tqdm

    model, output = reranker.model, Path(args.output)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=args.learning_rate, weight_decay=args.weight_decay)
    scaler = grad_scaler(device, args.amp)
    rng = random.Random(args.seed)
    step, best_score, history, losses = 0, -1.0, [], []
    state = checkpoints.load()
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        step, best_score, history = state["step"], state["best_score"], state["history"]
        losses = state.get("losses", [])
        rng.setstate(state["python_rng"])
        restore_rng(state["rng"])
    order = [q for _ in range(args.epochs) for q in random.Random(args.seed).sample(list(train), len(train))]
    schedule = [order[i : i + args.queries_per_batch] for i in range(0, len(order), args.queries_per_batch)]
    if args.max_steps:
        schedule = schedule[: args.max_steps]

    def save_last() -> None:
        state = {
            "optimizer": optimizer.state_dict(),
            "scaler": scaler.state_dict(),
            "step": step,
            "best_score": best_score,
            "history": history,
            "losses": list(losses),
            "python_rng": rng.getstate(),
            "rng": capture_rng(),
        }
        checkpoints.write(state, files=reranker.save)

    def validate() -> None:
        nonlocal best_score
        record: dict = {"step": step, "train_loss": sum(losses) / len(losses) if losses else None}
        if validation:
            metrics = rerank_pools(
                reranker.score_pool,
                dataset,
                validation,
                validation_prefetched,
                pool_sizes=[args.validation_pool],
                oracle=False,
            )
            record["validation_recall@10"] = metrics[f"recall@10_rerank_top{args.validation_pool}"]
            if record["validation_recall@10"] >= best_score:
                best_score = record["validation_recall@10"]
                reranker.save(output / "best")
        history.append(record)
        losses.clear()
        save_last()
        write_json(output / "train_history.json", history)

    bar = tqdm(schedule[step:], desc=desc, disable=args.no_progress, initial=step, total=len(schedule))
    with checkpoints:
        for queries in bar:
            model.train()
            batch = [
                (q, training_candidates(q, train_prefetched[q.context_id], args.rerank_top_k, args.n_document, rng))
                for q in queries
            ]
            width = min(len(candidates) for _, candidates in batch)  # a short prefetch list shortens the step's rows
            step += 1
            if width < 2:
                continue
            batch = [(q, candidates[:width]) for q, candidates in batch]
            scores = reranker.score_batch(batch).view(len(batch), width)
            loss = rerank_triplet_loss(scores[:, 0], scores[:, 1:], args.margin)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
            bar.set_postfix(loss=f"{loss.item():.4f}")
            if step % args.validate_every == 0:
                validate()
            elif checkpoints.step_done(step, save_last):
                return {"steps": step, "stopped": True, "best_validation_recall@10": best_score, "history": history}
    if not history or history[-1]["step"] != step:
        validate()
    write_json(output / "train_config.json", {k: v for k, v in vars(args).items() if k != "command"})
    return {"steps": step, "stopped": False, "best_validation_recall@10": best_score, "history": history}


def reranker_queries(
    dataset: CitationDataset, args: argparse.Namespace
) -> tuple[list[ContextQuery], dict[str, list[str]], list[ContextQuery], dict[str, list[str]]]:
    """(training queries with a prefetched list, their lists, the first `validation_queries` validation queries,
    their lists)."""
    prefetched_dir = Path(args.prefetched)
    train_prefetched = load_prefetched(prefetched_dir, "train")
    train = [q for q in dataset.split_queries("train", "reranker training") if q.context_id in train_prefetched]
    if not train:
        raise EmptySplitError(f"{prefetched_dir / 'prefetched_train.json'} has none of the training contexts")
    validation = (dataset.queries.get("validation") or [])[: args.validation_queries]
    validation_prefetched = load_prefetched(prefetched_dir, "validation") if validation else {}
    return train, train_prefetched, validation, validation_prefetched


def run_train(args: argparse.Namespace) -> dict:
    device = resolve_device(args.device)
    dataset = load_dataset(args.dataset, args.context_field)
    train, train_prefetched, validation, validation_prefetched = reranker_queries(dataset, args)
    checkpoints = training_checkpoints(args)
    resume = checkpoints.load() is not None
    model, tokenizer = load_reranker(checkpoints.directory if resume else args.model, device)
    encoder = PairEncoder(tokenizer, args.max_length)

    def score_batch(batch: Sequence[tuple[ContextQuery, list[str]]]) -> torch.Tensor:
        with autocast(device, args.amp):
            return model(**{k: v.to(device) for k, v in encode_batch(encoder, dataset, batch).items()})

    def score_pool(query: ContextQuery, candidates: list[str]) -> dict[str, float]:
        return score_candidates(model, encoder, dataset, query, candidates, device, amp=args.amp)

    def save(directory: Path) -> None:
        save_reranker(model, tokenizer, directory)

    reranker = PairReranker(model, score_batch, score_pool, save)
    summary = train_pair_reranker(
        reranker, args, dataset, train, train_prefetched, validation, validation_prefetched, checkpoints, device
    )
    best = summary["best_validation_recall@10"]
    print(
        f"trained {summary['steps']} steps at learning rate {args.learning_rate:g} ({args.learning_rate_choice}); "
        f"best validation recall@10 (top {args.validation_pool}): {best:.4f}"
    )
    return summary


def write_rerank_results(args: argparse.Namespace, split: str, metrics: dict, device: torch.device) -> dict:
    """`results_rerank_<split>.json` in the checkpoint directory, with the split, device and prefetched lists
    named; Recall@10 of each pool and the MRRs on one line."""
    metrics.update({"split": split, "device": str(device), "prefetched": str(args.prefetched)})
    shown = [k for k in metrics if k.startswith("recall@10_") or k.startswith("mrr_")]
    write_split_metrics(Path(args.checkpoint) / f"results_rerank_{split}.json", split, metrics, shown)
    return metrics


def evaluate_prefetched_splits(
    args: argparse.Namespace,
    dataset: CitationDataset,
    score: Callable[[ContextQuery, list[str]], dict[str, float]],
    device: torch.device,
    *,
    prepare: Callable[[list[ContextQuery]], list[ContextQuery]] | None = None,
    extra: dict | None = None,
    progress: bool = False,
) -> dict[str, dict]:
    """A pair reranker's `evaluate`: for each `--split`, `rerank_pools` with `score` on its `--prefetched` lists
    (`--pool_sizes`, `--no_oracle`), written by `write_rerank_results` with `extra` added; `prepare` turns a
    split's queries into those the reranker reads (SymTax appends section headings)."""
    results = {}
    for split in args.split:
        queries = dataset.split_queries(split, "reranker evaluation")
        if prepare is not None:
            queries = prepare(queries)
        prefetched = load_prefetched(Path(args.prefetched), split)
        metrics = rerank_pools(
            score,
            dataset,
            queries,
            prefetched,
            pool_sizes=args.pool_sizes,
            progress=progress,
            oracle=not args.no_oracle,
        )
        metrics.update(extra or {})
        results[split] = write_rerank_results(args, split, metrics, device)
    return results


def run_evaluate(args: argparse.Namespace) -> dict:
    device = resolve_device(args.device)
    checkpoint = Path(args.checkpoint)
    if (checkpoint / "best" / "head.pt").is_file():
        checkpoint = checkpoint / "best"
    if not (checkpoint / "head.pt").is_file():
        raise SystemExit(f"error: {args.checkpoint} holds no trained reranker (best/head.pt): run `rerank train`")
    model, tokenizer = load_reranker(checkpoint, device)
    encoder = PairEncoder(tokenizer, args.max_length)
    dataset = load_dataset(args.dataset, args.context_field)

    def score(query: ContextQuery, candidates: list[str]) -> dict[str, float]:
        return score_candidates(
            model, encoder, dataset, query, candidates, device, batch_size=args.batch_size, amp=args.amp
        )

    return evaluate_prefetched_splits(args, dataset, score, device, progress=not args.no_progress)


def main(argv: list[str] | None = None) -> dict:
    return run_bert_command(parse_args(argv), run_train, run_evaluate)


if __name__ == "__main__":
    main()
