"""Measure the CitationR mention rules against hand labels (`bench.citationr.labels` says how), and profile a
pipeline run's output.

    python bench/eval_citationr.py                       # hand-label evaluation (../shared/data), as a table
    python bench/eval_citationr.py --split unread --json # figures of the unread part, with counts and intervals
    python bench/eval_citationr.py --split dev2 --show-errors  # figures of one part, with the errors of dev/dev2
    python bench/eval_citationr.py --source neurips_labels --split read  # the labelled NeurIPS reviews, read sample
    python bench/eval_citationr.py --source neurips_test4              # the fourth held-out sample, on its own
    python bench/eval_citationr.py --dataset out/citationr-neurips   # shares and resolution of a run
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.citationr.labels import (  # noqa: E402
    BIAS,
    FOUND_AT,
    LABEL_MEASURES,
    REVIEW_LABELS,
    SOURCES,
    TITLE_LABELS,
    evaluate,
    label_agreement,
    own_text_of,
    rate_cell,
    read_reviews,
)
from bench.citationr.samples import HELD_OUT_LABELS, POOLED_LABEL_FILES, READABLE, REPORTED_ALONE, part  # noqa: E402
from bench.shared import shared_data_dir  # noqa: E402
from extractors.reviews.mentions import MentionConfig, extract_review_mentions  # noqa: E402
from extractors.reviews.records import ALREADY_CITED, DISCUSSED, RECOMMENDED, PaperMention, Review  # noqa: E402
from mapping.matcher import lcs_similarity  # noqa: E402
from mapping.titles import normalize_title  # noqa: E402


def _keep(result: dict[str, dict], split: str) -> dict[str, dict]:
    """Only the rows of one group (`dev`, `dev2`, `test`, `read`, `unread`, `all`); every row for `all`."""
    if split == "all":
        return result
    return {key: value for key, value in result.items() if key == split or key.endswith(f":{split}")}


def dataset_profile(dataset: Path) -> dict:
    """Shares of reviews and submissions with recommended citations, and how many resolved, from a run."""
    import pyarrow.parquet as pq

    reviews = pq.read_table(sorted((dataset / "reviews").glob("*.parquet"))).to_pylist()
    mentions = pq.read_table(sorted((dataset / "mentions").glob("*.parquet"))).to_pylist()
    official = [r for r in reviews if r["review_kind"] == "official"]
    by_submission: dict[str, bool] = defaultdict(bool)
    for review in official:
        by_submission[review["submission_id"]] |= bool(review["recommends"])
    recommended = [m for m in mentions if m["kind"] == RECOMMENDED]
    distinct = {(m["submission_id"], m["paper_id"] or normalize_title(m["title"]) or m["text"]) for m in recommended}
    distinct_resolved = {(m["submission_id"], m["paper_id"]) for m in recommended if m["paper_id"]}
    kinds: dict[str, int] = defaultdict(int)
    for m in mentions:
        kinds[m["kind"]] += 1
    return {
        "official_reviews": len(official),
        "official_reviews_recommending": sum(1 for r in official if r["recommends"]),
        "share_of_reviews": round(sum(1 for r in official if r["recommends"]) / max(len(official), 1), 3),
        "submissions": len(by_submission),
        "submissions_recommended_to": sum(by_submission.values()),
        "share_of_submissions": round(sum(by_submission.values()) / max(len(by_submission), 1), 3),
        "mentions": len(mentions),
        "mentions_by_kind": dict(sorted(kinds.items())),
        "recommended_mentions": len(recommended),
        "recommended_mentions_with_title_or_id": sum(1 for m in recommended if m["title"] or m["arxiv_id"] or m["doi"]),
        "recommended_mentions_with_identifier": sum(
            1 for m in recommended if m["arxiv_id"] or m["doi"] or m["openreview_id"] or m["acl_id"]
        ),
        "recommended_mentions_resolved": sum(1 for m in recommended if m["paper_id"]),
        "recommended_papers_distinct_per_submission": len(distinct),
        "recommended_papers_resolved": len(distinct_resolved),
    }


# ------------------------------------------------------------- a learned "asks for a citation" decision
#
# An experiment: a small logistic regression over a mention's context, trained on the read
# parts only, in place of the rules' request cues (`extractors/reviews/mentions/classify.py`). Labels, mention by
# mention, from the hand labels: in a review of the title files, a titled mention whose title is one of the
# review's gold titles is a recommendation, any other titled mention is not; every mention of a review labelled 0
# in ICLRwithLabels is not. Features: the words and word pairs of the mention's sentence and of the sentence before
# it, its kind of mention, its review field, and the rules' own decision. No dependency: plain numpy (scikit-learn's
# LogisticRegression would be the one to add if this ever measured better on the unread part).


def _features(mention: PaperMention) -> list[str]:
    own, _, before = mention.context.partition(" || ")
    words = re.findall(r"[a-z]+", own.lower())
    found = [f"o:{w}" for w in words] + [f"o2:{a}_{b}" for a, b in zip(words, words[1:], strict=False)]
    found += [f"i:{w}" for w in re.findall(r"[a-z]+", before.lower())]
    return found + [f"src:{mention.source}", f"sec:{mention.section}", f"rule:{mention.kind}", "bias"]


def _vector(features: list[str], size: int) -> np.ndarray:
    vector = np.zeros(size)
    for feature in features:
        vector[int(hashlib.md5(feature.encode()).hexdigest()[:8], 16) % size] = 1.0
    return vector


def _labelled_mentions(shared: Path, wanted: tuple[str, ...]) -> list[tuple[PaperMention, int]]:
    """(mention, label) of the title files and of the reviews labelled 0, for the parts in `wanted`."""
    rows: list[tuple[PaperMention, int]] = []
    for relative in TITLE_LABELS:
        path = shared / relative
        gold: dict[str, list[str]] = defaultdict(list)
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                gold[row["id"]].append(normalize_title(row["paper_info"]))
        for review_id, review in read_reviews(path).items():
            if review_id in gold and part(review.submission_id) in wanted:
                for m in extract_review_mentions(review.text, review.sections, own_text_of(review)):
                    if m.title and normalize_title(m.title):
                        hit = any(lcs_similarity(normalize_title(m.title), g) >= FOUND_AT for g in gold[review_id])
                        rows.append((m, int(hit)))
    path = shared / REVIEW_LABELS
    with path.open(newline="") as handle:
        negatives = {row["id"] for row in csv.DictReader(handle) if row["citation_suggestions"] == "0"}
    for review_id, review in read_reviews(path).items():
        if review_id in negatives and part(review.submission_id) in wanted:
            rows.extend((m, 0) for m in extract_review_mentions(review.text, review.sections, own_text_of(review)))
    return rows


def train_request_classifier(
    shared: Path, size: int = 4096, l2: float = 1.0, steps: int = 400, rate: float = 0.5
) -> Callable[[PaperMention], float]:
    """Logistic regression (full-batch gradient descent, L2) on the read parts' labelled mentions."""
    rows = _labelled_mentions(shared, READABLE)
    x = np.stack([_vector(_features(m), size) for m, _ in rows])
    y = np.array([label for _, label in rows], dtype=float)
    weights = np.zeros(size)
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(x @ weights)))
        weights -= rate * (x.T @ (p - y) / len(y) + l2 * weights / len(y))
    print(f"trained on {len(rows)} mentions of the read parts ({int(y.sum())} recommended)", file=sys.stderr)
    return lambda m: float(1 / (1 + np.exp(-(_vector(_features(m), size) @ weights))))


def learned_extract(score: Callable[[PaperMention], float]) -> Callable:
    """`extract_review_mentions` with the learned decision between recommended and discussed."""

    def extract(review):
        mentions = extract_review_mentions(review.text, review.sections, own_text_of(review))
        return [
            m if m.kind == ALREADY_CITED else replace(m, kind=RECOMMENDED if score(m) >= 0.5 else DISCUSSED)
            for m in mentions
        ]

    return extract


def _held_out_title(name: str) -> str:
    """`neurips_test5` -> "NeurIPS labelled, test5"; `disapere_test` -> "DISAPERE (ICLR) labelled, test"."""
    source, _, sample = name.partition("_")
    return f"{'DISAPERE (ICLR)' if source == 'disapere' else 'NeurIPS'} labelled, {sample}"


def _table(result: dict[str, dict], split: str) -> str:
    """The figures as a Markdown table: one row per measure, one column per group."""
    columns = ("dev", "dev2", "test", "read", "unread", "all") if split == "all" else (split,)
    measures = (
        *LABEL_MEASURES,
        ("bias_resolution", "resolution_precision", "resolution precision (gold titles in the database)"),
        ("bias_resolution", "resolution_recall", "resolution recall (gold titles in the database)"),
        ("neurips_labels", "precision", "NeurIPS labelled: review precision (suggests literature)"),
        ("neurips_labels", "recall", "NeurIPS labelled: review recall (suggests literature)"),
        ("neurips_labels", "title_precision", "NeurIPS labelled: title precision"),
        ("neurips_labels", "title_recall", "NeurIPS labelled: title recall (works written as a title)"),
        ("neurips_labels", "work_recall", "NeurIPS labelled: work recall (every form: title, name, link, ...)"),
        *(
            (name, key, f"{_held_out_title(name)}: {label}")
            for name in REPORTED_ALONE
            for key, label in (
                ("precision", "review precision"),
                ("recall", "review recall"),
                ("title_precision", "title precision"),
                ("title_recall", "title recall (works written as a title)"),
                ("work_recall", "work recall (every form)"),
            )
        ),
    )
    lines = ["| measure | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for source, key, label in measures:
        if source not in result:
            continue
        cells = []
        for column in columns:
            rate = result[source].get(column, {}).get(key)
            cells.append(rate_cell(rate))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    parser.add_argument("--dataset", type=Path, help="profile a citationr output directory instead")
    parser.add_argument(
        "--split",
        choices=("dev", "dev2", "test", "read", "unread", "all"),
        default="all",
        help="which group to report: a part (dev, dev2, test), read (= dev + dev2), unread (= test) or all "
        "(default: every group)",
    )
    parser.add_argument(
        "--source",
        action="append",
        choices=SOURCES,
        default=[],
        help="only these label sources (repeatable; default: every one found)",
    )
    parser.add_argument("--json", action="store_true", help="print every figure as JSON instead of the table")
    parser.add_argument(
        "--learned",
        action="store_true",
        help="decide recommended/discussed by a logistic regression trained on the read parts instead of the "
        "rules' cues (an experiment; see the comment above train_request_classifier)",
    )
    parser.add_argument(
        "--name_model",
        "--name-model",
        dest="name_model",
        default="",
        help="decide the works named by name with the learned model (`builtin` or a JSON file; "
        "extractors/reviews/mentions/learned.py), as a run with --name_model",
    )
    parser.add_argument(
        "--spot_titles",
        "--spot-titles",
        dest="spot_titles",
        action="store_true",
        help="resolution with the database's titles spotted in the reviews' text (mentions/spotting.py), as a run "
        "with --spot_database_titles; the title rows never use a database",
    )
    parser.add_argument(
        "--show-errors",
        "--show_errors",
        dest="show_errors",
        action="store_true",
        help="print the errors of dev and dev2 (never of test)",
    )
    args = parser.parse_args(argv)
    if args.dataset:
        print(json.dumps(dataset_profile(args.dataset), indent=2))
        return
    if not (args.shared / REVIEW_LABELS).is_file():
        raise SystemExit(f"error: the hand labels are not under {args.shared / BIAS}")
    extract = learned_extract(train_request_classifier(args.shared)) if args.learned else None
    if args.name_model:
        config = MentionConfig(name_model=args.name_model)

        def extract(review: Review) -> list[PaperMention]:
            return extract_review_mentions(review.text, review.sections, own_text_of(review), config=config)

    result = evaluate(
        args.shared,
        args.show_errors,
        sources=args.source,
        spot_titles=args.spot_titles,
        **({"extract": extract} if extract else {}),
    )
    agreement = (
        {
            path.stem: label_agreement(path)
            for path in (*POOLED_LABEL_FILES, *HELD_OUT_LABELS.values())
            if path.is_file()
        }
        if {"neurips_labels", *HELD_OUT_LABELS} & set(result)
        else None
    )
    if args.json:
        keep = {source: _keep(groups, args.split) for source, groups in result.items()}
        if agreement is not None:
            keep["neurips_labels_agreement"] = agreement
        print(json.dumps(keep, indent=2))
    else:
        print(_table(result, args.split))
        for name, figures in (agreement or {}).items():
            print(f"\n{name}, the reviews two annotators labelled: {json.dumps(figures)}")


if __name__ == "__main__":
    main()
