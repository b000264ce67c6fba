"""The paper-size run for a lent GPU, in one command writing one results file. HAtten (the paper preset) and the
reranker fine-tuned from the largest packaged encoder, on an `--recipe acm-cr` dataset's full pool, then the
prefetch throughput on a synthetic database of 1.7M papers (the size of the authors' arXiv/S2ORC pools).

    python -m bench.gpu_acm_cr --dataset out/acm-cr --output runs/gpu-acm-cr.json              # an H100
    python -m bench.gpu_acm_cr --dataset out/acm-cr --output runs/gpu-acm-cr-small.json --small  # any CPU

ACM-CR is a test collection (every context in `test`), so the contexts are split by citing paper, leave-citing-
papers-out: the citing papers in id order, shuffled with `--seed`, dealt round-robin into `--folds` groups; fold 0
is test, fold 1 validation, the rest train. No context of a test citing paper is trained or validated on. The
split is written in HAtten's JSON layout under WORK/data (paper dates kept, so later papers stay excluded; every
paper of the pool is a candidate, the citing papers too, as in HAtten's own files), and the trainers run on it:

1. `trainers.hatten train --preset paper` (200-d architecture, 8 heads, batch 64, lr 1e-4; `--glove glove-6b-50d`
   by default, whose 50 dimensions set embed_dim 50 and 5 heads), `--hatten_iterations` iterations with a refresh
   (embed, validate, re-mine) every `--refresh_every`; then `prefetch` (train, validation, test; `--top_k`) and
   `evaluate` on test.
2. `trainers.rerank train --model all-minilm-l6-v2` (the largest encoder the `models` extra installs; any local
   directory works too, e.g. all-mpnet-base-v2 assembled from its PyPI parts) over HAtten's lists, `--rerank_steps`
   steps, then `evaluate` on test over the top `--rerank_pool`.
3. `bench.prefetch` on `--synthetic_papers` synthetic papers: papers embedded per second, prefetch latency batched
   and single, the exact top-K search against the bytes it reads.

`--small` makes everything CPU-sized (a pool of 300 papers, a few iterations and steps, 2,000 synthetic papers) and
is what the tests run; each size flag given explicitly wins. The results file holds the options, the device, the
split's counts, each step's seconds and metrics, and the total seconds; it is rewritten after each step
(`complete` false until the last), so a run cut short by a time limit keeps what it finished. A report, never a
pass/fail test.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import random
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from trainers.data import SPLITS, CitationDataset, ContextQuery, load_dataset

FULL = {
    "pool": 0,
    "hatten_iterations": 2000,
    "refresh_every": 500,
    "top_k": 2000,
    "rerank_steps": 1000,
    "rerank_pool": 100,
    "max_length": 512,
    "synthetic_papers": 1_700_000,
    "synthetic_queries": 1000,
}
"""Sizes for an H100's 10 minutes: the full pool; HAtten at the paper's architecture and rates for 2,000
iterations (ACM-CR has about a thousand contexts: the authors' 25,000 iterations of 64 queries would be some 2,000
passes over its training contexts); the reranker's 512 tokens, 1,000 steps of 32 documents; 1.7M synthetic papers."""
SMALL = {
    "pool": 300,
    "hatten_iterations": 12,
    "refresh_every": 6,
    "top_k": 50,
    "rerank_steps": 3,
    "rerank_pool": 10,
    "max_length": 64,
    "synthetic_papers": 2000,
    "synthetic_queries": 20,
}
"""Sizes for a CPU in a minute or two: what `--small` sets."""
SIZE_HELP = {
    "pool": "Candidates: every cited paper plus a seeded sample up to this many; 0 for the full pool",
    "hatten_iterations": "HAtten training iterations",
    "refresh_every": "HAtten iterations between refreshes (embed, validate, re-mine)",
    "top_k": "Papers HAtten prefetches per query",
    "rerank_steps": "Reranker training steps (validated once, at the end)",
    "rerank_pool": "HAtten's top papers the reranker reranks (validation and test)",
    "max_length": "Reranker tokens per query-candidate pair",
    "synthetic_papers": "Papers of the synthetic throughput database",
    "synthetic_queries": "Synthetic queries timed batched",
}
JSON_SPLIT_NAMES = {"train": "train.json", "validation": "val.json", "test": "test.json"}


def citing_folds(queries: Sequence[ContextQuery], folds: int, seed: int) -> list[list[str]]:
    """The citing papers in id order, shuffled with `seed`, dealt round-robin into `folds` groups (each sorted)."""
    citing = sorted({q.citing_id for q in queries})
    random.Random(seed).shuffle(citing)
    return [sorted(citing[i::folds]) for i in range(folds)]


def split_by_citing_paper(queries: Sequence[ContextQuery], folds: int, seed: int) -> dict[str, list[ContextQuery]]:
    """Fold 0's contexts are test, fold 1's validation, the others' train: a citing paper is in one split only."""
    if folds < 3:
        raise ValueError("--folds must be at least 3 (test, validation and train)")
    groups = citing_folds(queries, folds, seed)
    where = {
        paper: ("test" if i == 0 else "validation" if i == 1 else "train") for i, g in enumerate(groups) for paper in g
    }
    split: dict[str, list[ContextQuery]] = {name: [] for name in SPLITS}
    for query in sorted(queries, key=lambda q: q.context_id):
        split[where[query.citing_id]].append(query)
    return split


def candidate_pool(dataset: CitationDataset, queries: Sequence[ContextQuery], size: int, seed: int) -> list[str]:
    """Every candidate (`size` 0), or every cited paper plus a seeded sample of the other candidates (citing papers
    left out) up to `size`."""
    candidates = dataset.paper_ids()
    if not size:
        return candidates
    cited = sorted({c for q in queries for c in q.cited_ids if c in dataset.papers})
    rest = sorted(set(candidates) - set(cited) - {q.citing_id for q in queries})
    return sorted(cited + random.Random(seed).sample(rest, min(len(rest), max(0, size - len(cited)))))


def write_split_dataset(
    dataset: CitationDataset, split: dict[str, list[ContextQuery]], pool: Sequence[str], directory: Path
) -> dict[str, int]:
    """The pool, the citing papers and the split contexts in HAtten's JSON layout (with dates) under `directory`;
    returns the counts written."""
    directory.mkdir(parents=True, exist_ok=True)
    queries = [q for name in SPLITS for q in split[name]]
    keep = set(pool) | {q.citing_id for q in queries if q.citing_id in dataset.papers}
    papers = {
        p: {"title": x.title, "abstract": x.abstract, "date": x.date.isoformat() if x.date else None}
        for p, x in sorted(dataset.papers.items())
        if p in keep
    }
    contexts = {
        q.context_id: {"masked_text": q.context, "context_id": q.context_id, "citing_id": q.citing_id}
        | {"refid": q.cited_ids[0]}
        for q in queries
    }
    files = {"papers.json": papers, "contexts.json": contexts}
    for name in SPLITS:
        files[JSON_SPLIT_NAMES[name]] = [
            {"context_id": q.context_id, "positive_ids": list(q.cited_ids)} for q in split[name]
        ]
    for name, value in files.items():
        (directory / name).write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return {"papers": len(papers), "candidates": len(pool)} | {f"contexts_{n}": len(split[n]) for n in SPLITS}


def timed(step: Callable[[], dict]) -> tuple[float, dict]:
    start = time.perf_counter()
    result = step()
    return time.perf_counter() - start, result


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.gpu_acm_cr", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", required=True, help="An `--recipe acm-cr` dataset (or any citrec dataset).")
    parser.add_argument("--output", required=True, help="The results file (JSON).")
    parser.add_argument("--work", help="Where the split and checkpoints go (default: OUTPUT without .json + .work).")
    parser.add_argument("--small", action="store_true", help="CPU sizes (see SMALL); explicit size flags win.")
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N.")
    parser.add_argument("--folds", type=int, default=5, help="Citing-paper folds: 0 test, 1 validation (default 5).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--glove", default="glove-6b-50d", help="HAtten's word vectors; 'none' for random ones.")
    parser.add_argument("--model", default="all-minilm-l6-v2", help="The reranker's encoder (short name or path).")
    parser.add_argument("--context_field", default="char_context", help="The context view of a Parquet dataset.")
    for name, value in FULL.items():
        what = SIZE_HELP[name]
        parser.add_argument(
            f"--{name}", type=int, default=None, help=f"{what} (default {value:,}; --small {SMALL[name]:,})."
        )
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    sizes = {name: getattr(args, name) if getattr(args, name) is not None else (SMALL if args.small else FULL)[name]
             for name in FULL}  # fmt: skip
    output = Path(args.output)
    work = Path(args.work) if args.work else output.with_suffix(".work")
    import torch

    from bench import prefetch as throughput
    from trainers import hatten, rerank

    started = time.perf_counter()
    dataset = load_dataset(args.dataset, args.context_field)
    queries = [q for name in SPLITS for q in dataset.queries.get(name, [])]
    split = split_by_citing_paper(queries, args.folds, args.seed)
    pool = candidate_pool(dataset, queries, sizes["pool"], args.seed)
    for stale in ("data", "hatten", "rerank"):  # a fresh run: the trainers would resume from an earlier one
        shutil.rmtree(work / stale, ignore_errors=True)
    data = work / "data"
    counts = write_split_dataset(dataset, split, pool, data)
    common = ["--dataset", str(data), "--device", args.device, "--seed", str(args.seed), "--no_progress"]
    device = "cuda" if args.device == "auto" and torch.cuda.is_available() else args.device
    results = {
        "command": "python -m bench.gpu_acm_cr " + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "device": torch.cuda.get_device_name()
        if device.startswith("cuda")
        else f"cpu ({torch.get_num_threads()} threads)",
        "options": vars(args) | {"sizes": sizes},
        "split": counts,
        "steps": {},
        "complete": False,
    }

    def record(name: str, seconds: float, metrics: dict, **more: float) -> None:
        """One step's figures, written at once: a run stopped by a time limit keeps the steps it finished."""
        results["steps"][name] = {"seconds": seconds, **more, "metrics": metrics}
        results["total_seconds"] = time.perf_counter() - started
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(results, indent=2, default=str) + "\n", encoding="utf-8")

    hatten_dir = str(work / "hatten")
    glove = [] if args.glove == "none" else ["--glove", args.glove]
    train = [*common, "--output", hatten_dir, "--preset", "paper", *glove, "--no_resume"]
    train += ["--max_iterations", str(sizes["hatten_iterations"]), "--refresh_every", str(sizes["refresh_every"])]
    train += ["--checkpoint_every", str(sizes["refresh_every"])]
    if args.small:
        train += ["--embed_dim", "64", "--hidden_dim", "128", "--max_seq_len", "128", "--queries_per_batch", "8"]
    seconds, _ = timed(lambda: hatten.main(["train", *train]))
    top_k = ["--top_k", str(sizes["top_k"])]
    more, _ = timed(lambda: hatten.main(["prefetch", *common, "--checkpoint", hatten_dir, *top_k, "--split", *SPLITS]))
    evaluate_seconds, metrics = timed(
        lambda: hatten.main(["evaluate", *common, "--checkpoint", hatten_dir, *top_k, "--split", "test"])
    )
    record("hatten", seconds + more + evaluate_seconds, metrics, train_seconds=seconds)

    rerank_dir = str(work / "rerank")
    length = ["--max_length", str(sizes["max_length"])]
    train = [*common, "--prefetched", hatten_dir, "--output", rerank_dir, "--model", args.model, *length]
    train += ["--max_steps", str(sizes["rerank_steps"]), "--validate_every", str(sizes["rerank_steps"])]
    train += ["--validation_pool", str(sizes["rerank_pool"]), "--rerank_top_k", str(sizes["top_k"])]
    if args.small:
        train += ["--n_document", "4", "--validation_queries", "10"]
    seconds, _ = timed(lambda: rerank.main(["train", *train]))
    evaluate = [*common, "--prefetched", hatten_dir, "--checkpoint", rerank_dir, "--split", "test", *length]
    evaluate += ["--pool_sizes", str(sizes["rerank_pool"])]
    evaluate_seconds, metrics = timed(lambda: rerank.main(["evaluate", *evaluate]))
    record("rerank", seconds + evaluate_seconds, metrics, train_seconds=seconds)

    synthetic = ["--papers", str(sizes["synthetic_papers"]), "--queries", str(sizes["synthetic_queries"])]
    synthetic += ["--device", args.device, "--seed", str(args.seed)]
    if args.small:
        synthetic += ["--single_queries", "2", "--top_k", "100", "--vocabulary", "5000"]
    seconds, report = timed(lambda: throughput.main(synthetic))
    results["complete"] = True
    record("prefetch_throughput", seconds, report)
    print(f"results written to {output} ({results['total_seconds']:.0f} s)")
    return results


if __name__ == "__main__":
    main()
