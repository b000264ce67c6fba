"""BM25 on an `--recipe acm-cr` dataset, scored as ACM-CR's README scores it: one query per citing sentence.

    python -m bench.acm_cr_bm25 --dataset out/acm-cr --acm_cr ../shared/data/acm-cr

ACM-CR's published run (README, `src/2_retrieve.sh`, `src/3_evaluate.sh`) takes each citing sentence as written,
markers included ("... in particular [46, 47].") as the query, ranks Anserini's BM25 (k1 0.9, b 0.4, Porter
stemming, stop words) over title, abstract and keywords, and scores recall@10 and nDCG@10 (trec_eval) per sentence
against `sentences.qrels`. This ranks the dataset's pool with `trainers.bm25.BM25Prefetcher` (its tokens: no
stemming, no stop words; title and abstract: papers/ holds no keywords) in two ways:

- `qrels`: ACM-CR's own topics (`sentences.topics`) and judgements (`sentences.qrels`), as published;
- `dataset`: the sentences citrec cut (the sentences holding a context), relevant = the papers their contexts cite.

Each with citrec's BM25 parameters (1.2, 0.75) and Anserini's (0.9, 0.4). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from extractors.documents.acm_cr import read_citing_papers  # noqa: E402
from mapping.ids import normalize_doi  # noqa: E402
from trainers.bm25 import BM25Prefetcher  # noqa: E402
from trainers.data import load_dataset  # noqa: E402
from trainers.metrics import ndcg_at_k, recall_at_k  # noqa: E402

PARAMETERS = {"citrec": (1.2, 0.75), "anserini": (0.9, 0.4)}
_TOPIC = re.compile(r"<num> Number: (\S+)\s*<title>.*?<desc> Description:\s*(.*?)\s*<narr>", re.S)


def published_topics(root: Path, pool: set[str]) -> list[tuple[str, str, set[str]]]:
    """`(topic, sentence, relevant paper ids)` of ACM-CR's `sentences.topics`/`.qrels`; a judged DOI outside the
    pool (a record of the two absent files) stays relevant, as it would be for a system that cannot find it."""
    folder = root / "data" / "topics+qrels"
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "sentences.qrels").read_text(encoding="utf-8").splitlines():
        if line.strip():
            topic, _, doi, grade = line.split("\t")
            if int(grade) > 0:
                relevant[topic].add(f"doi:{normalize_doi(doi)}")
    text = (folder / "sentences.topics").read_text(encoding="utf-8")
    return [(t, " ".join(s.split()), relevant[t]) for t, s in _TOPIC.findall(text) if relevant.get(t)]


def dataset_topics(root: Path, context_citing: dict[str, set[str]]) -> list[tuple[str, str, set[str]]]:
    """`(citing id + sentence offset, sentence as written, relevant)` of each sentence of the citing papers that
    holds a linked marker whose reference is a paper the dataset's contexts of that paper cite."""
    documents, _ = read_citing_papers(root)
    topics = []
    for document in documents:
        cited = context_citing.get(document.paper_id, set())
        dois = {e.bib_id: f"doi:{e.doi}" for e in document.bib_entries if e.doi}
        for p_index, paragraph in enumerate(document.paragraphs):
            for start, end in paragraph.sentences:
                relevant = {
                    dois[m.bib_id]
                    for m in paragraph.mentions
                    if m.bib_id in dois and start <= m.start <= end and dois[m.bib_id] in cited
                }
                if relevant:
                    topics.append((f"{document.paper_id}#{p_index}@{start}", paragraph.text[start:end], relevant))
    return topics


def score(prefetcher: BM25Prefetcher, topics: list[tuple[str, str, set[str]]]) -> dict[str, float]:
    recalls, ndcgs = [], []
    for _, sentence, relevant in topics:
        ranking = prefetcher.search(sentence, 10, citing_id="", citing_date=None)
        recalls.append(recall_at_k(ranking, relevant, 10))
        ndcgs.append(ndcg_at_k(ranking, relevant, 10))
    n = max(1, len(topics))
    return {
        "queries": len(topics),
        "judgements": sum(len(r) for _, _, r in topics),
        "recall@10": round(sum(recalls) / n, 4),
        "ndcg@10": round(sum(ndcgs) / n, 4),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, help="An `--recipe acm-cr` dataset.")
    parser.add_argument("--acm_cr", required=True, help="The ACM-CR checkout the dataset was built from.")
    args = parser.parse_args(argv)
    root = Path(args.acm_cr)
    dataset = load_dataset(args.dataset, "sentence_context")
    pool = set(dataset.paper_ids())
    cited: dict[str, set[str]] = defaultdict(set)
    for query in dataset.queries["test"]:
        cited[query.citing_id].update(query.cited_ids)
    topics = {"qrels": published_topics(root, pool), "dataset": dataset_topics(root, cited)}
    results: dict[str, object] = {"pool": len(pool)}
    for name, (k1, b) in PARAMETERS.items():
        start = time.process_time()
        prefetcher = BM25Prefetcher(dataset, k1, b)
        for kind, queries in topics.items():
            results[f"{kind}/{name}"] = score(prefetcher, queries)
        results[f"cpu_seconds/{name}"] = round(time.process_time() - start, 1)
    print(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    main()
