"""Recommenders with real pretrained weights on an `--recipe acm-cr` dataset: one table, bootstrap intervals.

    python -m bench.acm_cr_table --dataset out/acm-cr --pool 5000 --folds 5 --output runs/acm-cr-table

ACM-CR is a test collection (every context in `test`), so it is scored on a reduced pool and, for what trains,
with leave-citing-papers-out folds:

- pool: every paper a context cites, plus a random sample (`random.Random(seed)`, over the other in-pool papers in
  paper-id order, citing papers left out) up to `--pool` papers; the same pool for every system. The citing
  papers are kept as text (queries need their title and abstract) but are never candidates.
- folds: the citing papers in id order, shuffled with `seed`, dealt round-robin into `--folds` groups; a fold
  tests the contexts of its citing papers and trains on the contexts of the others, so no context of a tested
  citing paper is ever trained on; every context is tested once and the figures are pooled over folds.
- systems: BM25 (`trainers.bm25`, 1.2/0.75, no training); all-MiniLM-L6-v2 zero-shot as a bi-encoder (mean
  pooling, cosine; query = context, then the citing title and abstract, as `trainers.submodular.query_text`);
  the cross-encoder reranker of `trainers.rerank_model` fine-tuned from all-MiniLM-L6-v2 per fold over BM25's
  candidates (`--rerank_depth` reranked, BM25's order below); HAtten (`trainers.hatten_training.train_hatten`,
  GloVe `--glove` fixed, heads dividing its dimension, no moving average) as a prefetcher trained per fold;
  Citeomatic (`trainers.citeomatic.train_citeomatic`, NNSelect + NNRank on GloVe) per fold, a paper-level
  recommender, so every context of a citing paper gets that paper's list; Kieu et al. (`trainers.submodular`:
  all-MiniLM-L6-v2 fine-tuned Siamese then triplet per fold, the submodular choice of 10 first, the plain ranking
  after). Every ranking excludes the citing paper and papers dated after it.
- figures: MRR (over the top `--depth`), Recall@10, nDCG@10, each with a percentile bootstrap 95% interval
  (`trainers.metrics.bootstrap_ci`, queries resampled, `--resamples`, `--seed`), the paired difference to BM25
  with its interval, and the CPU minutes of each system (`resource.getrusage`, this process, all threads).

Writes OUTPUT/table.json (options, pool, folds, rows, per-query values) and OUTPUT/table.md. Systems run one
after another; runs of some systems each (in parallel processes, say) are joined with `--merge RUN ... --output
OUTPUT`, which refuses runs of another pool, folds or contexts.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import random
import resource
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from trainers.data import CitationDataset, ContextQuery, citing_paper, load_dataset
from trainers.metrics import bootstrap_ci, ndcg_at_k, recall_at_k, reciprocal_rank

MINILM = "all-minilm-l6-v2"
METRICS = ("mrr", "recall@10", "ndcg@10")
HEADERS = ("MRR", "R@10", "nDCG@10")


def cpu_seconds() -> float:
    """User + system CPU seconds of this process so far (every thread, torch's included)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def draw_pool(dataset: CitationDataset, queries: Sequence[ContextQuery], size: int, seed: int) -> list[str]:
    """Every cited paper, then a seeded sample of the other candidates (citing papers excluded) up to `size`."""
    citing = {q.citing_id for q in queries}
    cited = sorted({c for q in queries for c in q.cited_ids if c in dataset.papers})
    rest = sorted(set(dataset.paper_ids()) - set(cited) - citing)
    extra = random.Random(seed).sample(rest, min(len(rest), max(0, size - len(cited))))
    return sorted(cited + extra)


def reduced(dataset: CitationDataset, queries: Sequence[ContextQuery], pool: Sequence[str]) -> CitationDataset:
    """The dataset restricted to `pool` as candidates (citing papers kept as text only)."""
    keep = set(pool) | {q.citing_id for q in queries if q.citing_id in dataset.papers}
    papers = {p: dataset.papers[p] for p in sorted(keep)}
    return CitationDataset(papers, {"test": list(queries)}, frozenset(pool))


def citing_folds(queries: Sequence[ContextQuery], folds: int, seed: int) -> list[list[str]]:
    """The citing papers, shuffled with `seed` and dealt round-robin into `folds` groups (each sorted)."""
    citing = sorted({q.citing_id for q in queries})
    random.Random(seed).shuffle(citing)
    return [sorted(citing[i::folds]) for i in range(folds)]


def fold_dataset(dataset: CitationDataset, queries: Sequence[ContextQuery], tested: Sequence[str]) -> CitationDataset:
    """One fold as a dataset the trainers read: `train` = the contexts of every citing paper not in `tested`,
    `test` = those of `tested`; the same papers and candidate pool (no context of a tested paper is trained on)."""
    tested_set = set(tested)
    train = [q for q in queries if q.citing_id not in tested_set]
    test = [q for q in queries if q.citing_id in tested_set]
    return CitationDataset(dataset.papers, {"train": train, "test": test}, dataset.pool)


def pooled(queries: Sequence[ContextQuery], per_fold: Sequence[dict[str, list[str]]]) -> list[list[str]]:
    """The folds' rankings (context id -> ranking) as one list in query order; each context must be ranked by
    exactly one fold, or the pooled figures would count a query twice or not at all."""
    ranking: dict[str, list[str]] = {}
    for fold in per_fold:
        twice = ranking.keys() & fold.keys()
        if twice:
            raise ValueError(f"{len(twice)} contexts ranked by two folds, e.g. {sorted(twice)[0]}")
        ranking.update(fold)
    missing = [q.context_id for q in queries if q.context_id not in ranking]
    if missing:
        raise ValueError(f"{len(missing)} contexts ranked by no fold, e.g. {missing[0]}")
    return [ranking[q.context_id] for q in queries]


RankFold = Callable[[CitationDataset, int], tuple[dict[str, list[str]], str]]
"""One fold's system: (the fold's dataset, its index) -> (context id -> ranking of its tested contexts, what the
fold's progress line says)."""


def each_fold(
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    folds: list[list[str]],
    seed: int,
    name: str,
    log: Callable[[str], None],
    rank_fold: RankFold,
) -> list[list[str]]:
    """`rank_fold` on every fold (`fold_dataset`, torch seeded with `seed` + the fold's index), a progress line a
    fold, and the folds' rankings `pooled` in query order."""
    import torch

    per_fold = []
    for index, tested in enumerate(folds):
        start = time.perf_counter()
        fold = fold_dataset(dataset, queries, tested)
        torch.manual_seed(seed + index)
        rankings, detail = rank_fold(fold, index)
        per_fold.append(rankings)
        log(f"  {name} fold {index + 1}/{len(folds)}: {detail} ({time.perf_counter() - start:.0f} s)")
    return pooled(queries, per_fold)


def merge_tables(tables: Sequence[dict]) -> dict:
    """Tables of separate runs (one system each, say) as one: the same pool, folds and contexts required; rows in
    order of first appearance, a system already present (BM25 in each run) kept once."""
    first = tables[0]
    for other in tables[1:]:
        for key in ("ids", "seed"):
            if other["pool"][key] != first["pool"][key]:
                raise ValueError(f"the tables differ in pool {key}: not the same benchmark")
        if other["folds"] != first["folds"] or other["per_query"]["context_ids"] != first["per_query"]["context_ids"]:
            raise ValueError("the tables differ in folds or contexts: not the same benchmark")
    rows, values = [], {}
    for table in tables:
        for row in table["rows"]:
            if row["system"] not in values:
                rows.append(row)
                values[row["system"]] = table["per_query"][row["system"]]
    merged = dict(first)
    merged["rows"], merged["markdown"] = rows, markdown(rows)
    merged["per_query"] = {"context_ids": first["per_query"]["context_ids"], **values}
    merged["merged_from"] = [table.get("date") for table in tables]
    return merged


def per_query(rankings: Sequence[Sequence[str]], queries: Sequence[ContextQuery]) -> dict[str, list[float]]:
    """Each query's MRR, Recall@10 and nDCG@10, in query order."""
    relevant = [set(q.cited_ids) for q in queries]
    return {
        "mrr": [reciprocal_rank(r, p) for r, p in zip(rankings, relevant, strict=True)],
        "recall@10": [recall_at_k(r, p, 10) for r, p in zip(rankings, relevant, strict=True)],
        "ndcg@10": [ndcg_at_k(r, p, 10) for r, p in zip(rankings, relevant, strict=True)],
    }


def bm25_rankings(dataset: CitationDataset, queries: Sequence[ContextQuery], depth: int) -> list[list[str]]:
    from trainers.bm25 import BM25Prefetcher

    rankings, _ = BM25Prefetcher(dataset).search_all(queries, depth)
    return rankings


def excluded(dataset: CitationDataset, pool: Sequence[str], query: ContextQuery) -> np.ndarray:
    """The pool positions a ranking for `query` may not hold: its citing paper and papers dated after it."""
    mask = np.array([p == query.citing_id for p in pool])
    if query.citing_date is not None:
        dates = [dataset.papers[p].date for p in pool]
        mask |= np.array([d is not None and d > query.citing_date for d in dates])
    return mask


def minilm_rankings(
    dataset: CitationDataset, queries: Sequence[ContextQuery], depth: int, max_length: int
) -> list[list[str]]:
    """all-MiniLM-L6-v2 as it comes (no training): cosine of mean-pooled vectors of paper and query texts."""
    import torch

    from trainers.rerank_model import paper_text
    from trainers.submodular import embed_texts, load_sbert, query_text

    device = torch.device("cpu")
    encoder, tokenizer = load_sbert(MINILM, device)
    pool = dataset.paper_ids()
    papers = embed_texts(encoder, tokenizer, [paper_text(dataset.papers[p]) for p in pool], device,
                         max_length=max_length).numpy()  # fmt: skip
    texts = [query_text(dataset, q) for q in queries]
    vectors = embed_texts(encoder, tokenizer, texts, device, max_length=max_length).numpy()
    rankings = []
    for query, vector in zip(queries, vectors, strict=True):
        scores = papers @ vector
        scores[excluded(dataset, pool, query)] = -np.inf
        top = np.argsort(-scores, kind="stable")[:depth]
        rankings.append([pool[i] for i in top if np.isfinite(scores[i])])
    return rankings


def hatten_rankings(
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    folds: list[list[str]],
    options: argparse.Namespace,
    log: Callable[[str], None],
) -> list[list[str]]:
    """Per fold: `trainers.hatten_training.train_hatten` on the other folds' contexts (GloVe `options.glove`,
    fixed; heads that divide its dimension), then the tested contexts prefetched from the pool."""
    import torch

    from trainers.hatten_training import HAttenTrainConfig, QuerySearch, build_index, make_model, train_hatten

    device = torch.device("cpu")

    def rank_fold(fold: CitationDataset, index: int) -> tuple[dict[str, list[str]], str]:
        overrides = {"hidden_dim": options.hatten_hidden, "num_heads": 8}
        model, vocabulary = make_model(fold, overrides, options.glove)
        config = HAttenTrainConfig(
            queries_per_batch=options.hatten_batch, max_iterations=options.hatten_iterations,
            refresh_every=options.hatten_refresh, moving_average_decay=0.0, checkpoint_every=0,
            checkpoint_minutes=1e9, seed=options.seed + index,
        )  # fmt: skip
        with tempfile_dir() as work:
            train_hatten(fold, model, vocabulary, work, config, device, amp=False, resume=False, progress=False)
        model.eval()
        index_ = build_index(model, vocabulary, fold, device)
        test = fold.queries["test"]
        rankings, _ = QuerySearch(model, vocabulary, fold, index_, device).prefetch(test, options.depth)
        detail = (f"{model.config.embed_dim}-d, {model.config.num_heads} heads, trained on "
                  f"{len(fold.queries['train'])}, tested {len(test)}")  # fmt: skip
        return {q.context_id: r for q, r in zip(test, rankings, strict=True)}, detail

    return each_fold(dataset, queries, folds, options.seed, "HAtten", log, rank_fold)


def citeomatic_rankings(
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    folds: list[list[str]],
    options: argparse.Namespace,
    log: Callable[[str], None],
) -> list[list[str]]:
    """Per fold: `trainers.citeomatic.train_citeomatic` (NNSelect then NNRank, GloVe `options.glove`) on the other
    folds' citing papers; Citeomatic recommends for a whole paper, so every context of a tested citing paper gets
    its paper's list (title + abstract as the query, the context text unused)."""
    from dataclasses import replace

    import torch

    from trainers.checkpoints import Checkpointer
    from trainers.citeomatic import (
        Corpus,
        PaperQuery,
        Selector,
        embed_papers,
        global_queries,
        rank_candidates,
        train_citeomatic,  # fmt: skip
        training_texts,
        word_vectors_for,
    )
    from trainers.citeomatic_model import CiteomaticConfig, fit_vocabulary

    device = torch.device("cpu")

    def rank_fold(fold: CitationDataset, index: int) -> tuple[dict[str, list[str]], str]:
        config = CiteomaticConfig(
            select_samples_per_epoch=options.cite_samples, select_total_samples=2 * options.cite_samples,
            rank_samples_per_epoch=options.cite_samples // 4, rank_total_samples=options.cite_samples // 2,
        )  # fmt: skip
        vocabulary = fit_vocabulary(training_texts(fold), config.max_features)
        pretrained = word_vectors_for(vocabulary, options.glove)
        config = replace(config, dense_dim=int(pretrained.shape[1]))
        corpus = Corpus(fold, vocabulary, config)
        train = global_queries(fold, "train")
        with tempfile_dir() as work:
            checkpoints = Checkpointer(work / "last.pt", 0, 1e9, resume=False)
            with checkpoints:
                trained = train_citeomatic(corpus, train, config, device, pretrained, options.seed + index, checkpoints)
        selector = Selector(corpus, embed_papers(trained["nnselect"], corpus, device))
        test = fold.queries["test"]
        by_paper: dict[str, list[str]] = {}
        for query in test:
            if query.citing_id not in by_paper:
                paper = PaperQuery(query.citing_id, (), query.citing_date)
                candidates = selector.candidates(paper, config)
                ranked = rank_candidates(trained["nnrank"], corpus, selector, paper, candidates, device)
                by_paper[query.citing_id] = ranked[: options.depth]
        detail = f"{len(train)} training papers, {len(by_paper)} tested"
        return {q.context_id: by_paper[q.citing_id] for q in test}, detail

    return each_fold(dataset, queries, folds, options.seed, "Citeomatic", log, rank_fold)


def chosen_first(chosen: Sequence[str], ranking: Sequence[str]) -> list[str]:
    """The submodular choice, then the rest of the plain ranking in its order."""
    taken = set(chosen)
    return [*chosen, *(p for p in ranking if p not in taken)]


def kieu_rankings(
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    folds: list[list[str]],
    options: argparse.Namespace,
    log: Callable[[str], None],
) -> list[list[str]]:
    """Per fold: Kieu et al. (`trainers.submodular`): all-MiniLM-L6-v2 fine-tuned on the other folds' citation
    graph (`run_phase`, Siamese then triplet, random negatives), the pool embedded, and per tested context the
    greedy submodular choice of 10 of its top `--depth` candidates (`select_for_queries`) first, then the rest of
    the plain ranking."""
    import torch

    from trainers.checkpoints import Checkpointer
    from trainers.submodular import (
        citation_graph,
        embed_queries,
        index_papers,
        load_sbert,
        model_pooling,
        parse_args,  # fmt: skip
        run_phase,
        select_for_queries,
    )

    device = torch.device("cpu")
    length = ["--max_length", str(options.kieu_max_length)]
    train_args = parse_args(["train", "--dataset", "-", "--output", "-", "--model", MINILM, "--max_steps",
                             str(options.kieu_steps), *length])  # fmt: skip
    train_args.pooling, train_args.no_progress = model_pooling(MINILM), True
    eval_args = parse_args(["evaluate", "--dataset", "-", "--checkpoint", "-", "--candidates", str(options.depth),
                            "--ks", "10", *length])  # fmt: skip
    eval_args.pooling, eval_args.query_text = train_args.pooling, train_args.query_text

    def rank_fold(fold: CitationDataset, index: int) -> tuple[dict[str, list[str]], str]:
        train, test = fold.queries["train"], fold.queries["test"]
        encoder, tokenizer = load_sbert(MINILM, device)
        rng = random.Random(options.seed + index)
        graph = citation_graph(train)
        with tempfile_dir() as work:
            checkpoints = Checkpointer(work / "last.pt", 0, 1e9, resume=False)
            with checkpoints:
                for objective in ("siamese", "triplet"):
                    run_phase(objective, encoder, tokenizer, fold, train, graph, train_args, device, rng,
                              checkpoints, [])  # fmt: skip
        encoder.eval()
        paper_index = index_papers(encoder, tokenizer, fold, eval_args, device)
        vectors = embed_queries(encoder, tokenizer, fold, test, eval_args, device)
        plain, chosen = select_for_queries(vectors, paper_index, test, eval_args)
        rankings = {q.context_id: chosen_first(c, r) for q, r, c in zip(test, plain, chosen, strict=True)}
        return rankings, f"trained on {len(train)}, tested {len(test)}"

    return each_fold(dataset, queries, folds, options.seed, "Kieu", log, rank_fold)


@contextlib.contextmanager
def tempfile_dir() -> Iterator[Path]:
    """A temporary directory as a `Path` context (the trainers write checkpoints the table does not keep)."""
    with tempfile.TemporaryDirectory() as work:
        yield Path(work)


def train_reranker(
    dataset: CitationDataset,
    train: Sequence[ContextQuery],
    candidates: dict[str, list[str]],
    options: argparse.Namespace,
    seed: int,
):
    """A cross-encoder from all-MiniLM-L6-v2 (`rerank_model.Reranker`, its triplet loss, AdamW), trained for
    `options.steps` steps of one query each: its cited paper and `n_document - 1` negatives drawn from BM25's top
    `negatives_from` for it."""
    import torch

    from trainers.rerank_model import PairEncoder, load_reranker, rerank_triplet_loss

    torch.manual_seed(seed)
    device = torch.device("cpu")
    model, tokenizer = load_reranker(MINILM, device)
    encoder = PairEncoder(tokenizer, max_length=options.max_length)
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate, weight_decay=0.01)
    rng = random.Random(seed)
    usable = [q for q in train if any(c in dataset.papers for c in q.cited_ids)]
    model.train()
    for _ in range(options.steps if usable else 0):
        query = rng.choice(usable)
        positive = rng.choice([c for c in query.cited_ids if c in dataset.papers])
        negatives = [p for p in candidates[query.context_id][: options.negatives_from] if p not in query.cited_ids]
        if not negatives:
            continue
        drawn = rng.sample(negatives, min(len(negatives), options.n_document - 1))
        query_ids = encoder.query_ids(citing_paper(dataset, query), query.context)
        batch = encoder.encode(query_ids, [dataset.papers[p] for p in [positive, *drawn]])
        scores = model(**batch)
        loss = rerank_triplet_loss(scores[:1], scores[1:][None, :])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model, encoder


def reranked_rankings(
    dataset: CitationDataset,
    queries: Sequence[ContextQuery],
    candidates: dict[str, list[str]],
    folds: list[list[str]],
    options: argparse.Namespace,
    log: Callable[[str], None],
) -> list[list[str]]:
    """Per fold: train on the other folds' contexts, rerank the top `rerank_depth` of each tested context."""
    from trainers.rerank import by_score, score_candidates

    def rank_fold(fold: CitationDataset, index: int) -> tuple[dict[str, list[str]], str]:
        train, test = fold.queries["train"], fold.queries["test"]
        model, encoder = train_reranker(fold, train, candidates, options, options.seed + index)
        ranking = {}
        for query in test:
            top = candidates[query.context_id][: options.rerank_depth]
            scores = score_candidates(model, encoder, fold, query, top, model.head.weight.device)
            ranking[query.context_id] = by_score(top, scores) + candidates[query.context_id][options.rerank_depth :]
        return ranking, f"trained on {len(train)}, tested {len(test)}"

    return each_fold(dataset, queries, folds, options.seed, "reranker", log, rank_fold)


def summarise(values: dict[str, list[float]], baseline: dict[str, list[float]] | None, options) -> dict:
    """Mean and interval of each metric, and of the paired difference to `baseline` when given."""
    out: dict[str, object] = {}
    for name in METRICS:
        out[name] = bootstrap_ci(values[name], options.resamples, options.seed)
        if baseline is not None:
            diff = [a - b for a, b in zip(values[name], baseline[name], strict=True)]
            out[f"delta_{name}"] = bootstrap_ci(diff, options.resamples, options.seed)
    return out


def cell(triple: Sequence[float], signed: bool = False) -> str:
    mean, low, high = triple
    sign = "+" if signed else ""
    return f"{mean:{sign}.3f} [{low:{sign}.3f}, {high:{sign}.3f}]"


def markdown(rows: list[dict]) -> str:
    """The rows as a Markdown table: each metric with its 95% interval, the R@10 and MRR differences to BM25."""
    lines = [
        "| system | queries | " + " | ".join(HEADERS) + " | ΔMRR vs BM25 | ΔR@10 vs BM25 | CPU min |",
        "|---|---|" + "---|" * len(HEADERS) + "---|---|---|",
    ]
    for row in rows:
        summary = row["summary"]
        cells = [cell(summary[name]) for name in METRICS]
        deltas = [cell(summary[f"delta_{n}"], True) if f"delta_{n}" in summary else "" for n in ("mrr", "recall@10")]
        lines.append(f"| {row['system']} | {row['queries']} | " + " | ".join(cells + deltas)
                     + f" | {row['cpu_seconds'] / 60:.1f} |")  # fmt: skip
    return "\n".join(lines) + "\n"


def write(table: dict, output: Path) -> None:
    output.mkdir(parents=True, exist_ok=True)
    (output / "table.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    (output / "table.md").write_text(table["markdown"], encoding="utf-8")


def run(
    dataset: CitationDataset,
    options: argparse.Namespace,
    log: Callable[[str], None] = print,
    output: Path | None = None,
) -> dict:
    """Every system of `options.systems` on `dataset`'s test contexts (see the module docstring); the table,
    written to `output` after each system when given (a run cut short keeps the rows it finished)."""
    import torch

    torch.set_num_threads(options.threads)
    queries = dataset.split_queries("test", "the ACM-CR table")
    if options.limit_queries:
        queries = queries[: options.limit_queries]
    pool = draw_pool(dataset, queries, options.pool, options.seed)
    data = reduced(dataset, queries, pool)
    folds = citing_folds(queries, options.folds, options.seed)
    log(f"pool {len(pool):,} papers ({sum(1 for p in pool if p in {c for q in queries for c in q.cited_ids}):,} "
        f"cited), {len(queries)} contexts, {len(folds)} folds of citing papers")  # fmt: skip
    rows: list[dict] = []
    values: dict[str, dict[str, list[float]]] = {}

    def table() -> dict:
        return {
            "options": vars(options),
            "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "pool": {"size": len(pool), "seed": options.seed, "ids": pool},
            "folds": folds,
            "rows": rows,
            "per_query": {"context_ids": [q.context_id for q in queries], **values},
            "markdown": markdown(rows),
        }

    def add(system: str, rankings: list[list[str]], seconds: float, note: str) -> None:
        values[system] = per_query(rankings, queries)
        baseline = values.get("BM25") if system != "BM25" else None
        summary = summarise(values[system], baseline, options)
        rows.append({"system": system, "queries": len(queries), "cpu_seconds": seconds, "note": note,
                     "summary": summary})  # fmt: skip
        log(f"{system}: " + ", ".join(f"{n} {summary[n][0]:.3f}" for n in METRICS) + f" ({seconds / 60:.1f} CPU min)")
        if output is not None:
            write(table(), output)

    start = cpu_seconds()
    bm25 = bm25_rankings(data, queries, options.depth)
    add("BM25", bm25, cpu_seconds() - start, "k1 1.2, b 0.75, title + abstract; no training")
    if "minilm" in options.systems:
        start = cpu_seconds()
        rankings = minilm_rankings(data, queries, options.depth, options.max_length)
        add("all-MiniLM-L6-v2 zero-shot bi-encoder", rankings, cpu_seconds() - start,
            f"mean pooling, cosine, {options.max_length} tokens; no training")  # fmt: skip
    if "hatten" in options.systems:
        start = cpu_seconds()
        rankings = hatten_rankings(data, queries, folds, options, log)
        add(f"HAtten ({options.glove}, fine-tuned per fold)", rankings, cpu_seconds() - start,
            f"{options.hatten_iterations} iterations x {options.hatten_batch} queries a fold, refresh every "
            f"{options.hatten_refresh}, hidden {options.hatten_hidden}; {len(folds)} folds")  # fmt: skip
    if "citeomatic" in options.systems:
        start = cpu_seconds()
        rankings = citeomatic_rankings(data, queries, folds, options, log)
        add(f"Citeomatic ({options.glove}, per citing paper)", rankings, cpu_seconds() - start,
            f"NNSelect {2 * options.cite_samples:,} rows, NNRank {options.cite_samples // 2:,} rows a fold; "
            f"{len(folds)} folds")  # fmt: skip
    if "kieu" in options.systems:
        start = cpu_seconds()
        rankings = kieu_rankings(data, queries, folds, options, log)
        add("Kieu et al. (all-MiniLM-L6-v2 fine-tuned + submodular)", rankings, cpu_seconds() - start,
            f"Siamese then triplet, {options.kieu_steps} steps of 16 each a fold, {options.kieu_max_length} tokens; "
            f"submodular top 10 of {options.depth}; {len(folds)} folds")  # fmt: skip
    if "rerank" in options.systems:
        start = cpu_seconds()
        candidates = {q.context_id: r for q, r in zip(queries, bm25, strict=True)}
        rankings = reranked_rankings(data, queries, candidates, folds, options, log)
        system = f"BM25 top {options.rerank_depth} + MiniLM reranker ({options.steps} steps a fold)"
        add(system, rankings, cpu_seconds() - start,
            f"{options.steps} steps x {options.n_document} documents a fold, lr {options.learning_rate}, "
            f"{options.max_length} tokens; {len(folds)} folds")  # fmt: skip
    return table()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.acm_cr_table", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", help="An `--recipe acm-cr` dataset (Parquet shards).")
    parser.add_argument(
        "--merge", nargs="+", metavar="RUN", help="Instead of running: merge these runs' table.json into OUTPUT."
    )
    parser.add_argument("--output", required=True, help="Directory for table.json and table.md.")
    parser.add_argument("--pool", type=int, default=5000, help="Candidate papers (every cited one, then sampled).")
    parser.add_argument("--folds", type=int, default=5, help="Leave-citing-papers-out folds for what trains.")
    parser.add_argument("--seed", type=int, default=0, help="Pool sample, folds, training and bootstrap seed.")
    parser.add_argument("--resamples", type=int, default=1000, help="Bootstrap resamples of the queries.")
    parser.add_argument(
        "--systems",
        default="bm25,minilm,rerank,hatten,citeomatic,kieu",
        help="Comma list: minilm, rerank, hatten, citeomatic, kieu (BM25 always).",
    )
    parser.add_argument("--context_field", default="char_context", choices=("char_context", "sentence_context"))
    parser.add_argument("--depth", type=int, default=100, help="Papers ranked per context (MRR's cut-off).")
    parser.add_argument("--rerank_depth", type=int, default=20, help="BM25 candidates the reranker reorders.")
    parser.add_argument("--steps", type=int, default=100, help="Reranker training steps (one query each) a fold.")
    parser.add_argument("--n_document", type=int, default=4, help="Cited paper + negatives per training step.")
    parser.add_argument("--negatives_from", type=int, default=50, help="Negatives drawn from BM25's top N.")
    parser.add_argument("--learning_rate", type=float, default=2e-5, help="Reranker fine-tuning rate.")
    parser.add_argument("--max_length", type=int, default=192, help="Tokens per text (bi-encoder) or pair.")
    parser.add_argument("--glove", default="glove-6b-50d", help="Word vectors of HAtten and Citeomatic.")
    parser.add_argument("--hatten_iterations", type=int, default=300, help="HAtten training iterations a fold.")
    parser.add_argument("--hatten_batch", type=int, default=32, help="HAtten queries per iteration.")
    parser.add_argument("--hatten_refresh", type=int, default=100, help="HAtten iterations between re-minings.")
    parser.add_argument("--hatten_hidden", type=int, default=256, help="HAtten feed-forward size.")
    parser.add_argument("--cite_samples", type=int, default=20_000, help="Citeomatic NNSelect rows an epoch.")
    parser.add_argument("--kieu_steps", type=int, default=30, help="Kieu: SBERT steps per objective a fold.")
    parser.add_argument("--kieu_max_length", type=int, default=96, help="Kieu: tokens per text.")
    parser.add_argument("--threads", type=int, default=2, help="torch threads.")
    parser.add_argument("--limit_queries", type=int, default=0, help="Only the first N contexts (smoke runs).")
    return parser


def main(argv: list[str] | None = None) -> dict:
    options = build_parser().parse_args(argv)
    options.systems = [s.strip() for s in options.systems.split(",") if s.strip()]
    output = Path(options.output)
    if options.merge:
        table = merge_tables([json.loads((Path(r) / "table.json").read_text(encoding="utf-8")) for r in options.merge])
        write(table, output)
        print(table["markdown"] + f"\nmerged into {output / 'table.md'} and {output / 'table.json'}")
        return table
    if not options.dataset:
        raise SystemExit("error: --dataset is required unless --merge is given")
    table = run(load_dataset(options.dataset, options.context_field), options, output=output)
    print(table["markdown"] + f"\nwritten to {output / 'table.md'} and {output / 'table.json'}")
    return table


if __name__ == "__main__":
    main()
