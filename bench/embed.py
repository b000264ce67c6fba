"""HAtten paper embedding and query prefetch on the CPU: the padded batching of the code before issue 17 against
the packed one, same model, same texts, same run.

    python bench/embed.py --papers 2000 --queries 1000
    python bench/embed.py --dataset out/ --papers 2000 --queries 1000     # texts of a built dataset

- padded (`embed_documents_padded`): 256 documents a batch, every paragraph padded to the longest paragraph of
  its batch (a title to the longest abstract); a query is its citing paper's title and abstract and its context,
  all re-encoded for every context.
- packed (`embed_documents`, `rank_queries`): one unique paragraph per row, rows sorted by length and cut at a
  word budget; queries grouped by citing paper so its title and abstract are encoded once per paper.

Each variant runs in its own process (`--variant`), so its peak memory is its own (peak RSS, and the rise over
the RSS before embedding). The model is the published architecture (200-dim, 8 heads, feed-forward 1024),
untrained: speed does not depend on the weights. Synthetic texts (without --dataset) draw words from a Zipf
vocabulary with title and abstract lengths like arXiv's (titles about 10 words; abstracts log-normal with the
median and 90th percentile of ../shared/data/arxiv, 113 and 221 words, cut at 320) and 5 contexts of about 35
words per citing paper. A report, never a pass/fail test: the parent prints one
JSON object with both variants, the ratios, the largest difference between the two embeddings and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def current_rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_name() -> str:
    with open("/proc/cpuinfo", encoding="utf-8") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.machine()


def synthetic_corpus(papers: int, queries: int, seed: int):
    """Papers and queries with arXiv-like lengths over a Zipf vocabulary of 50,000 words."""
    import numpy as np

    from trainers.data import ContextQuery, PaperText

    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(50_000)])

    def text(length: int) -> str:
        ranks = np.minimum(rng.zipf(1.2, size=max(1, length)), len(words)) - 1
        return " ".join(words[ranks])

    title_lengths = np.clip(rng.normal(10, 3, papers), 2, 30).astype(int)
    # words per abstract in ../shared/data/arxiv (1,191 records): median 113, 90th percentile 221, at most 318
    # (arXiv's 1,920-character limit)
    abstract_lengths = np.clip(rng.lognormal(np.log(113), 0.52, papers), 10, 320).astype(int)
    corpus = [
        PaperText(f"p{i}", text(t), text(a))
        for i, (t, a) in enumerate(zip(title_lengths, abstract_lengths, strict=True))
    ]
    contexts = [
        ContextQuery(f"q{i}", f"p{(i // 5) % papers}", text(int(rng.normal(35, 8))), (f"p{rng.integers(papers)}",))
        for i in range(queries)
    ]
    return corpus, contexts


def dataset_corpus(directory: str, papers: int, queries: int):
    from trainers.data import load_dataset

    dataset = load_dataset(directory)
    corpus = list(dataset.papers.values())[:papers]
    contexts = [q for split in ("train", "validation", "test") for q in dataset.queries[split]][:queries]
    return corpus, contexts


def padded_tokens(lengths_per_document: list[list[int]], batch_size: int) -> int:
    """Word positions the padded layout computes: per batch, documents x paragraphs x the longest paragraph."""
    total = 0
    for start in range(0, len(lengths_per_document), batch_size):
        batch = lengths_per_document[start : start + batch_size]
        total += len(batch) * max(len(d) for d in batch) * max(max(d) for d in batch)
    return total


def run_variant(args: argparse.Namespace) -> dict:
    """One variant in this process: embed the papers, then prefetch the queries; timings, tokens and memory."""
    import torch

    from trainers.data import CitationDataset, citing_paper
    from trainers.documents import length_batches, pack_documents, paper_document, query_document
    from trainers.hatten_model import HAttenConfig, HAttenEncoder
    from trainers.hatten_training import rank_queries
    from trainers.prefetch import PaperIndex, embed_documents, embed_documents_padded
    from trainers.tokenization import build_vocabulary

    torch.set_num_threads(args.threads)
    corpus, contexts = (
        dataset_corpus(args.dataset, args.papers, args.queries)
        if args.dataset
        else synthetic_corpus(args.papers, args.queries, args.seed)
    )
    dataset = CitationDataset({p.paper_id: p for p in corpus}, {"test": contexts})
    vocabulary = build_vocabulary(f"{p.title} {p.abstract}" for p in corpus)
    torch.manual_seed(args.seed)
    model = HAttenEncoder(HAttenConfig(vocab_size=len(vocabulary))).eval()
    device = torch.device("cpu")
    documents = [paper_document(p) for p in corpus]
    config = model.config
    lengths = [[max(1, len(vocabulary.encode(t, config.max_seq_len))) for _, t in d] for d in documents]
    real = sum(sum(d) for d in lengths)
    embed_documents(model, vocabulary, documents[:64], device)  # warm-up, both variants alike
    baseline = current_rss_mb()
    start = time.perf_counter()
    if args.variant == "padded":
        embeddings = embed_documents_padded(model, vocabulary, documents, device, batch_size=256)
        computed = padded_tokens(lengths, 256)
    else:
        embeddings = embed_documents(model, vocabulary, documents, device, token_budget=args.token_budget)
        computed = 0
        for chunk_start in range(0, len(documents), 4096):
            packed = pack_documents(documents[chunk_start : chunk_start + 4096], vocabulary, 3, config.max_seq_len)
            row_lengths = [max(1, len(row)) for row in packed.rows]
            for batch in length_batches(row_lengths, args.token_budget, 4096):
                computed += len(batch) * row_lengths[batch[-1]]
    embed_seconds = time.perf_counter() - start
    index = PaperIndex.build([p.paper_id for p in corpus], embeddings, [None] * len(corpus))
    start = time.perf_counter()
    if args.variant == "padded":
        for q0 in range(0, len(contexts), 256):
            batch = contexts[q0 : q0 + 256]
            vectors = embed_documents_padded(
                model, vocabulary, [query_document(q, citing_paper(dataset, q)) for q in batch], device
            )
            index.search(vectors, args.top_k, [q.citing_id for q in batch], [None] * len(batch))
    else:
        rank_queries(model, vocabulary, dataset, index, contexts, args.top_k, device, token_budget=args.token_budget)
    query_seconds = time.perf_counter() - start
    torch.save(embeddings, args.embeddings_out)
    return {
        "papers_embedded_per_second": len(corpus) / embed_seconds,
        "embed_seconds": embed_seconds,
        "prefetch_ms_per_query": 1000 * query_seconds / max(1, len(contexts)),
        "word_positions_computed": computed,
        "padding_share": 1 - real / computed,
        "rss_before_mb": baseline,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", type=int, default=2000, help="Papers embedded (default 2000).")
    parser.add_argument("--queries", type=int, default=1000, help="Queries prefetched (default 1000).")
    parser.add_argument("--top_k", type=int, default=2000, help="K of the search (default 2000).")
    parser.add_argument("--dataset", help="A built dataset to take the texts from (default: synthetic texts).")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2).")
    parser.add_argument("--token_budget", type=int, default=16_384, help="Packed: words per batch (16384).")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variant", choices=("padded", "packed"), help=argparse.SUPPRESS)
    parser.add_argument("--embeddings_out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(run_variant(args)))
        return

    import torch

    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for variant in ("padded", "packed"):
            out = Path(scratch) / f"{variant}.pt"
            command = [sys.executable, __file__, *sys.argv[1:], "--variant", variant, "--embeddings_out", str(out)]
            finished = subprocess.run(command, check=True, capture_output=True, text=True)
            results[variant] = json.loads(finished.stdout.strip().splitlines()[-1])
        difference = (torch.load(Path(scratch) / "padded.pt") - torch.load(Path(scratch) / "packed.pt")).abs().max()
    padded, packed = results["padded"], results["packed"]
    report = {
        "texts": args.dataset or "synthetic",
        "papers": args.papers,
        "queries": args.queries,
        "threads": args.threads,
        "cpu": cpu_name(),
        "load_average": os.getloadavg(),
        **results,
        "embed_speedup": packed["papers_embedded_per_second"] / padded["papers_embedded_per_second"],
        "prefetch_speedup": padded["prefetch_ms_per_query"] / packed["prefetch_ms_per_query"],
        "memory_rise_ratio": (padded["peak_rss_mb"] - padded["rss_before_mb"])
        / max(1e-9, packed["peak_rss_mb"] - packed["rss_before_mb"]),
        "max_abs_embedding_difference": float(difference),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
