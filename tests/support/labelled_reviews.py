"""Real reviews named by the lab's label files (`bench/labels/*.csv`), read as data: the review files are parsed by
the library, and each review comes with what a pipeline run knows of its submission (its title and abstract)."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from extractors.reviews.bibliographies import with_own_text
from extractors.reviews.forms import merge_submissions, parse_review_file
from extractors.reviews.mentions.classify import NO_BIBLIOGRAPHY, Bibliography
from extractors.reviews.records import Review, Submission
from tests.support.paths import REPO

LABELS = REPO / "bench" / "labels"


def labelled_review_ids(name: str) -> list[tuple[str, str]]:
    """(review file relative to the shared folder, review id) of each review a label file names, once, in order."""
    with (LABELS / name).open(newline="", encoding="utf-8") as handle:
        return list(dict.fromkeys((row["file"], row["review_id"]) for row in csv.DictReader(handle)))


def reviews_with_own_text(path: Path) -> dict[str, tuple[Review, Bibliography]]:
    """Every review of a review file by id, with its submission's title and abstract as the file gives them (as a
    run merges a submission's records: `merge_submissions`, `with_own_text`)."""
    items = list(parse_review_file(path.read_bytes(), str(path)))
    found: dict[str, list[Submission]] = defaultdict(list)
    for item in items:
        if isinstance(item, Submission):
            found[item.submission_id].append(item)
    submissions = {key: merge_submissions(records) for key, records in found.items()}
    reviews: dict[str, tuple[Review, Bibliography]] = {}
    for item in items:
        if isinstance(item, Review):  # the first review of an id
            reviews.setdefault(item.review_id, (item, with_own_text(NO_BIBLIOGRAPHY, submissions.get(item.submission_id))))
    return reviews


def labelled_reviews(shared: Path, name: str) -> list[tuple[Review, Bibliography]]:
    """The reviews a label file names, each with its submission's own text."""
    by_file: dict[str, dict[str, tuple[Review, Bibliography]]] = {}
    found = []
    for file, review_id in labelled_review_ids(name):
        if file not in by_file:
            by_file[file] = reviews_with_own_text(shared / file)
        found.append(by_file[file][review_id])
    return found
