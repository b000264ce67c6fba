"""Reading a trainer's results file."""

from __future__ import annotations

import re


def recall_curves(results: dict) -> dict[str, list[tuple[int, float]]]:
    """Recall@K of a results file grouped by what follows the K (`""`, `_rerank_top2000`, `_oracle_top100`...)."""
    curves: dict[str, list[tuple[int, float]]] = {}
    for key, value in results.items():
        match = re.fullmatch(r"recall@(\d+)(.*)", key)
        if match:
            curves.setdefault(match.group(2), []).append((int(match.group(1)), value))
    return {suffix: sorted(points) for suffix, points in curves.items()}
