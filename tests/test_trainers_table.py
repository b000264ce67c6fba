"""trainers/table.py: the table's cells and the renaming of each system's results, by hand."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from trainers import table  # noqa: E402


def test_reranker_results_are_read_from_the_largest_pool():
    results = {
        "num_queries": 4.0,
        "mrr_rerank_top2000": 0.5,
        "recall@10_rerank_top2000": 0.75,
        "recall@10_rerank_top100": 0.25,
        "mrr_oracle_top100": 0.9,
        "ndcg@10_rerank_top2000": 0.6,
    }
    assert table.reranked(results) == {"num_queries": 4.0, "mrr": 0.5, "recall@10": 0.75, "ndcg@10": 0.6}
    assert table.renamed({"enriched_mrr": 0.2, "prefetched_mrr": 0.1, "num_queries": 3.0}, "enriched_") == {
        "mrr": 0.2,
        "num_queries": 3.0,
    }


def test_markdown_rounds_to_three_places_and_leaves_blanks():
    rows = [
        {"system": "A", "task": "local", "seconds": 12.4, "metrics": {"num_queries": 1234.0, "mrr": 0.12345}},
        {"system": "B", "task": "global", "seconds": 0.6, "metrics": {"f1_of_means@20": 1.0}},
    ]
    lines = table.markdown(rows).splitlines()
    assert lines[0] == "| system | task | queries | MRR | R@5 | R@10 | R@20 | NDCG@10 | MAP | F1@20 | seconds |"
    assert lines[2] == "| A | local | 1,234 | 0.123 |  |  |  |  |  |  | 12 |"
    assert lines[3] == "| B | global |  |  |  |  |  |  |  | 1.000 | 1 |"
