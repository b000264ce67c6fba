"""Draw the NeurIPS reviews of `neurips-2023-2025-test.csv` again, and write them out for annotators.

The sample: every official review of `../shared/data/reviews/neurips-openreview-2023-2025` whose submission is in
the `test` part (`extractors.reviews.labels.part`: SHA-1 of the submission id = 3 mod 4, never read while writing
the rules), in file order, then `random.Random(SEED).sample(reviews, 90)`. Annotator A labels 0-49, B 40-89.

    python bench/labels/sample_reviews.py --out /tmp/annot     # batch_A/NNN.txt, batch_B/NNN.txt, sample.json
    python bench/labels/sample_reviews.py --check              # the label file holds exactly this sample
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from extractors.reviews.forms import parse_review_file  # noqa: E402
from extractors.reviews.labels import NEURIPS_LABELS, part, read_review_labels  # noqa: E402
from extractors.reviews.records import Review  # noqa: E402
from extractors.shared_data import shared_data_dir  # noqa: E402

SEED = 20261123
SIZE = 90
BATCHES = {"A": (0, 50), "B": (40, 90)}
SOURCE = Path("reviews") / "neurips-openreview-2023-2025"


def draw(shared: Path) -> list[tuple[str, Review]]:
    """(file relative to `shared`, review) of the sample, in sample order."""
    reviews = []
    for path in sorted((shared / SOURCE).glob("*/*.json")):
        if path.name == "manifest.json":
            continue
        for item in parse_review_file(path.read_bytes(), str(path)):
            if isinstance(item, Review) and item.review_kind == "official" and part(item.submission_id) == "test":
                reviews.append((str(path.relative_to(shared)), item))
    return random.Random(SEED).sample(reviews, SIZE)


def mismatched(sample: list[tuple[str, Review]], labels: dict) -> list[str]:
    """The annotators whose labelled reviews (index, file, review id) are not their batch of the sample."""
    wrong = []
    for annotator, (low, high) in BATCHES.items():
        wanted = {(index, file, review.review_id) for index, (file, review) in enumerate(sample) if low <= index < high}
        got = {(label.index, label.file, label.review_id) for label in labels.get(annotator, {}).values()}
        if wanted != got:
            wrong.append(annotator)
    return wrong


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    parser.add_argument("--out", type=Path, help="write the annotators' batches here")
    parser.add_argument("--check", action="store_true", help="check the label file against the sample")
    args = parser.parse_args(argv)
    sample = draw(args.shared)
    if args.check:
        wrong = mismatched(sample, read_review_labels(NEURIPS_LABELS))
        if wrong:
            raise SystemExit(f"error: the labels of annotator(s) {', '.join(wrong)} are not their batch of the sample")
        print(f"ok: {NEURIPS_LABELS.name} holds the {SIZE} reviews of the sample (seed {SEED})")
    if args.out:
        for annotator, (low, high) in BATCHES.items():
            folder = args.out / f"batch_{annotator}"
            folder.mkdir(parents=True, exist_ok=True)
            for index in range(low, high):
                file, review = sample[index]
                venue = Path(file).parent.name
                header = f"review_id: {review.review_id}\nsubmission: {review.submission_id}\nvenue: {venue}"
                (folder / f"{index:03d}.txt").write_text(f"{header}\n\n{review.text}\n")
        listing = [
            {"index": i, "review_id": r.review_id, "submission_id": r.submission_id, "file": f}
            for i, (f, r) in enumerate(sample)
        ]
        (args.out / "sample.json").write_text(json.dumps(listing, indent=1))
        print(f"wrote {SIZE} reviews to {args.out}")


if __name__ == "__main__":
    main()
