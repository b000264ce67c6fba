"""A check beside the ACM-CR table's HAtten row: the mean of the same packaged GloVe vectors as text embedding,
cosine-ranked over the table's pool, no training and no model. If this ranks far above chance while HAtten on
those vectors does not, the signal is in the vectors and HAtten's path loses it.

    python -m bench.acm_cr_glove_mean --dataset out/acm-cr --pool 5000

The pool is `bench.acm_cr_table.draw_pool`'s (the same seed gives the same pool); the query is the context
without its `TARGETCIT` marker; the citing paper is left out; no date filter. Prints MRR (top 100), Recall@10
and nDCG@10 over every context.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from bench.acm_cr_table import draw_pool, per_query
from trainers.data import load_dataset
from trainers.pretrained import load_word_vectors
from trainers.tokenization import UNK_ID, word_tokens


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(prog="python -m bench.acm_cr_glove_mean", description=__doc__)
    parser.add_argument("--dataset", required=True, help="An `--recipe acm-cr` dataset.")
    parser.add_argument("--pool", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--glove", default="glove-6b-50d")
    parser.add_argument("--context_field", default="char_context", choices=("char_context", "sentence_context"))
    args = parser.parse_args(argv)
    dataset = load_dataset(args.dataset, args.context_field)
    queries = dataset.split_queries("test", "acm-cr")
    pool = draw_pool(dataset, queries, args.pool, args.seed)
    texts = {p: f"{dataset.papers[p].title} {dataset.papers[p].abstract or ''}" for p in pool}
    words = {w for t in texts.values() for w in word_tokens(t)} | {w for q in queries for w in word_tokens(q.context)}
    vocabulary, vectors = load_word_vectors(args.glove, keep=words)

    def embed(text: str) -> np.ndarray:
        ids = [i for i in (vocabulary.index.get(w, UNK_ID) for w in word_tokens(text)) if i > UNK_ID] or [UNK_ID]
        mean = vectors[ids].mean(axis=0)
        return mean / (np.linalg.norm(mean) + 1e-9)

    papers = np.stack([embed(texts[p]) for p in pool])
    rankings = []
    for query in queries:
        order = np.argsort(-(papers @ embed(query.context.replace("TARGETCIT", " "))))
        rankings.append([pool[i] for i in order[:101] if pool[i] != query.citing_id][:100])
    values = per_query(rankings, queries)
    result = {name: round(float(np.mean(v)), 4) for name, v in values.items()} | {"contexts": len(queries)}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
