"""Draw the labelled review samples again (`bench/labels/samples.csv`), check a label file against its sample, and
write a sample out for annotators.

A sample is the official reviews of its `source` folder (files `*/*.json` in sorted order, each file's reviews in
their order) whose submission is in the sample's `parts`, less the reviews of the samples drawn before it that it
names in `after`, then `random.Random(seed).sample(reviews, size)`. The samples are drawn in the manifest's order,
each source's files parsed once for all of them (`draw_samples`).

    python bench/labels/sample_reviews.py --check --all                 # every label file holds its sample
    python bench/labels/sample_reviews.py --sample read --check
    python bench/labels/sample_reviews.py --sample test --out /tmp/annot  # batch_A/NNN.txt, ..., sample.json
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable, Mapping
from pathlib import Path

from bench.citationr.labels import read_review_labels
from bench.citationr.samples import SAMPLES, Sample, part
from bench.shared import shared_data_dir
from extractors.reviews.forms import parse_review_file
from extractors.reviews.records import Review

PATTERN = "*/*.json"  # the review files of a source folder
Drawn = list[tuple[str, Review]]
"""A drawn sample: (review file relative to the shared folder, review), in sample order."""


def official_reviews(shared: Path, source: Path) -> Drawn:
    """Every official review of the source's files, in file order, each file parsed once."""
    reviews = []
    for path in sorted((shared / source).glob(PATTERN)):
        if path.name == "manifest.json":
            continue
        for item in parse_review_file(path.read_bytes(), str(path)):
            if isinstance(item, Review) and item.review_kind == "official":
                reviews.append((str(path.relative_to(shared)), item))
    return reviews


def _with_earlier(names: Iterable[str], samples: Mapping[str, Sample]) -> set[str]:
    """`names` and every sample they leave out, transitively."""
    needed: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name not in needed:
            needed.add(name)
            pending.extend(samples[name].after)
    return needed


def draw_samples(
    shared: Path, samples: Mapping[str, Sample] = SAMPLES, names: Iterable[str] | None = None
) -> dict[str, Drawn]:
    """The samples `names` (default: all), and those they leave out, drawn in the manifest's order: each source's
    official reviews are read once, and a sample leaves out the reviews of the samples it names in `after`."""
    needed = _with_earlier(samples if names is None else names, samples)
    pools: dict[Path, Drawn] = {}
    drawn: dict[str, Drawn] = {}
    for name, sample in samples.items():
        if name not in needed:
            continue
        if sample.source not in pools:
            pools[sample.source] = official_reviews(shared, sample.source)
        taken = {review.review_id for earlier in sample.after for _, review in drawn[earlier]}
        reviews = [
            (file, review)
            for file, review in pools[sample.source]
            if part(review.submission_id) in sample.parts and review.review_id not in taken
        ]
        drawn[name] = random.Random(sample.seed).sample(reviews, sample.size)
    return drawn


def draw(shared: Path, sample: Sample, samples: Mapping[str, Sample] = SAMPLES) -> Drawn:
    """One sample, in sample order."""
    return draw_samples(shared, samples, [sample.name])[sample.name]


def mismatched(drawn: Drawn, labels: dict, sample: Sample) -> list[str]:
    """The annotators whose labelled reviews (index, file, review id) are not their batch of the sample."""
    wrong = []
    for annotator, (low, high) in sample.batches.items():
        wanted = {(index, file, review.review_id) for index, (file, review) in enumerate(drawn) if low <= index < high}
        got = {(label.index, label.file, label.review_id) for label in labels.get(annotator, {}).values()}
        if wanted != got:
            wrong.append(annotator)
    return wrong


def write_batches(out: Path, drawn: Drawn, sample: Sample) -> None:
    """Each annotator's reviews as `batch_<annotator>/<index>.txt` (a header, then the review's text) and the
    sample's listing as `sample.json`."""
    for annotator, (low, high) in sample.batches.items():
        folder = out / f"batch_{annotator}"
        folder.mkdir(parents=True, exist_ok=True)
        for index in range(low, high):
            file, review = drawn[index]
            venue = sample.venue or Path(file).parent.name
            header = f"review_id: {review.review_id}\nsubmission: {review.submission_id}\nvenue: {venue}"
            (folder / f"{index:03d}.txt").write_text(f"{header}\n\n{review.text}\n")
    listing = [
        {"index": i, "review_id": r.review_id, "submission_id": r.submission_id, "file": f}
        for i, (f, r) in enumerate(drawn)
    ]
    (out / "sample.json").write_text(json.dumps(listing, indent=1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    parser.add_argument("--out", type=Path, help="write the annotators' batches of the one --sample here")
    parser.add_argument("--check", action="store_true", help="check each label file against its sample")
    parser.add_argument(
        "--sample", action="append", choices=list(SAMPLES), help="which sample (repeatable; default: test)"
    )
    parser.add_argument("--all", action="store_true", help="every sample of bench/labels/samples.csv")
    args = parser.parse_args(argv)
    names = list(SAMPLES) if args.all else args.sample or ["test"]
    if args.out and len(names) != 1:
        parser.error("--out writes one sample: name it with --sample")
    drawn = draw_samples(args.shared, SAMPLES, names)
    failed = []
    for name in names:
        sample = SAMPLES[name]
        if args.check:
            wrong = mismatched(drawn[name], read_review_labels(sample.labels), sample)
            if wrong:
                failed.append(name)
                print(f"error: {sample.labels.name}: annotator(s) {', '.join(wrong)} did not label their batch")
            else:
                print(f"ok: {sample.labels.name} holds the {sample.size} reviews of the sample (seed {sample.seed})")
        if args.out:
            write_batches(args.out, drawn[name], sample)
            print(f"wrote {sample.size} reviews to {args.out}")
    if failed:
        raise SystemExit(f"error: {len(failed)} of {len(names)} label files are not their sample: {', '.join(failed)}")
