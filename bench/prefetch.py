"""Throughput of HAtten prefetching on whatever device is present: papers embedded per second, and per query the
latency of encoding + exact top-K search, batched and one query at a time, against the bytes the search must
read (every paper vector once per query batch: papers x dim x 4 bytes, 1.4 GB at 1.7M x 200 float32).

    python -m bench.prefetch --papers 100000 --queries 1000 --device cuda --peak_gbps 3350
    python -m bench.prefetch --papers 1700000 --queries 1000 --device cuda --peak_gbps 3350
    python -m bench.prefetch --papers 2000 --queries 100        # small enough for a laptop CPU

Texts are synthetic (random words of a synthetic vocabulary, title + abstract of typical lengths) and the
encoder is untrained with the published architecture (200-dim, 8 heads, one layer per level): speed does
not depend on the weights. Embedding is the packed path (`embed_documents`); queries come five per citing paper,
whose title and abstract are encoded once (`rank_queries`). With --peak_gbps (the device's memory bandwidth)
the report gives the time the search's reads alone would take at that bandwidth. A report, never a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from trainers.data import CitationDataset, ContextQuery, PaperText
from trainers.documents import paper_document
from trainers.hatten_model import HAttenConfig, HAttenEncoder
from trainers.hatten_training import rank_queries
from trainers.prefetch import PaperIndex, embed_documents
from trainers.runtime import resolve_device, seed_everything
from trainers.tokenization import Vocabulary


def synthetic_texts(count: int, mean_length: int, vocabulary: np.ndarray, rng: np.random.Generator) -> list[str]:
    """`count` texts of random words, about `mean_length` each (normal, sd a quarter of the mean)."""
    lengths = np.maximum(1, rng.normal(mean_length, mean_length / 4, count).astype(int))
    words = vocabulary[rng.integers(0, len(vocabulary), int(lengths.sum()))]
    ends = np.cumsum(lengths)
    return [" ".join(words[end - length : end]) for end, length in zip(ends.tolist(), lengths.tolist(), strict=True)]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        prog="python -m bench.prefetch",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--papers", type=int, default=100_000, help="Database size (default 100000).")
    parser.add_argument("--queries", type=int, default=1000, help="Queries timed batched (default 1000).")
    parser.add_argument("--single_queries", type=int, default=50, help="Queries timed one at a time (default 50).")
    parser.add_argument("--top_k", type=int, default=2000, help="K of the exact search (default 2000).")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N.")
    parser.add_argument("--amp", action=argparse.BooleanOptionalAction, default=True, help="float16 autocast on CUDA.")
    parser.add_argument("--token_budget", type=int, default=0, help="Words per encoder batch (0: the default).")
    parser.add_argument("--query_batch", type=int, default=1024, help="Queries encoded and searched together.")
    parser.add_argument("--paper_chunk", type=int, default=262_144, help="Papers per block of the search.")
    parser.add_argument("--vocabulary", type=int, default=50_000, help="Synthetic vocabulary size.")
    parser.add_argument("--peak_gbps", type=float, default=0.0, help="Device memory bandwidth in GB/s, for the limit.")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    seed_everything(args.seed)
    rng = np.random.default_rng(args.seed)
    device = resolve_device(args.device)
    amp = bool(args.amp and device.type == "cuda")
    words = np.array([f"w{i}" for i in range(args.vocabulary)])
    vocabulary = Vocabulary(words.tolist())
    model = HAttenEncoder(HAttenConfig(vocab_size=len(vocabulary))).to(device)
    titles = synthetic_texts(args.papers, 10, words, rng)
    abstracts = synthetic_texts(args.papers, 160, words, rng)
    papers = [PaperText(f"p{i}", t, a) for i, (t, a) in enumerate(zip(titles, abstracts, strict=True))]
    count = args.queries + args.single_queries
    contexts = synthetic_texts(count, 35, words, rng)
    cited = rng.integers(0, args.papers, count).tolist()
    queries = [ContextQuery(f"q{i}", f"p{i // 5}", contexts[i], (f"p{cited[i]}",)) for i in range(count)]
    dataset = CitationDataset({p.paper_id: p for p in papers}, {"test": queries})
    budget = args.token_budget or None

    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    embed_documents(model, vocabulary, [paper_document(p) for p in papers[:512]], device, amp=amp)  # warm-up
    synchronize()
    start = time.perf_counter()
    embeddings = embed_documents(
        model, vocabulary, [paper_document(p) for p in papers], device, amp=amp, token_budget=budget
    )
    synchronize()
    embed_seconds = time.perf_counter() - start
    index = PaperIndex.build([p.paper_id for p in papers], embeddings, [None] * len(papers))

    def prefetch(batch: list[ContextQuery]) -> None:
        rank_queries(
            model, vocabulary, dataset, index, batch, args.top_k, device, token_budget=budget, amp=amp, block=len(batch)
        )

    batched = queries[: args.queries]
    prefetch(batched[:8])  # warm-up
    synchronize()
    start = time.perf_counter()
    for q0 in range(0, len(batched), args.query_batch):
        prefetch(batched[q0 : q0 + args.query_batch])
    synchronize()
    batched_seconds = time.perf_counter() - start
    start = time.perf_counter()
    for query in queries[args.queries :]:
        prefetch([query])
    synchronize()
    single_seconds = time.perf_counter() - start
    vectors = torch.nn.functional.normalize(torch.randn(args.query_batch, embeddings.shape[1], device=device), dim=1)
    start = time.perf_counter()
    index.search_positions(vectors, args.top_k, ["none"] * len(vectors), [None] * len(vectors))
    synchronize()
    search_seconds = time.perf_counter() - start
    bytes_per_batch = embeddings.numel() * embeddings.element_size()
    report = {
        "device": torch.cuda.get_device_name(device)
        if device.type == "cuda"
        else f"cpu ({torch.get_num_threads()} threads)",
        "papers": args.papers,
        "top_k": args.top_k,
        "amp": amp,
        "papers_embedded_per_second": args.papers / embed_seconds,
        "prefetch_ms_per_query_batched": 1000 * batched_seconds / max(1, len(batched)),
        "query_batch": args.query_batch,
        "prefetch_ms_single_query": 1000 * single_seconds / max(1, args.single_queries),
        "search_ms_per_query_batch": 1000 * search_seconds,
        "bytes_read_per_query_batch": bytes_per_batch,
        "search_read_gbps": bytes_per_batch / search_seconds / 1e9,
    }
    if args.peak_gbps:
        report["search_ms_at_peak_bandwidth"] = 1000 * bytes_per_batch / (args.peak_gbps * 1e9)
    if device.type == "cuda":
        report["peak_gpu_memory_gb"] = torch.cuda.max_memory_allocated(device) / 1e9
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
