"""Draw the labelled NeurIPS reviews' samples again, and write them out for annotators.

Nine samples of the official reviews of `../shared/data/reviews/neurips-openreview-2023-2025`, in file order, then
`random.Random(seed).sample(reviews, size)`:
- `test` (`neurips-2023-2025-test.csv`): submissions of the `test` part (`extractors.reviews.labels.part`: SHA-1 of
  the submission id = 3 mod 4, never read while writing the rules); 90 reviews, annotator A labels 0-49, B 40-89;
- `read` (`neurips-2023-2025-read.csv`): submissions of the read parts (`dev`, `dev2`), for writing rules on;
  120 reviews, annotator A labels 0-64, B 55-119;
- `test2` (`neurips-2023-2025-test2.csv`): the `test` part's reviews that `test` did not draw; 90 reviews, A 0-49,
  B 40-89: a fresh held-out set for a change measured once on `test` already;
- `read2` (`neurips-2023-2025-read2.csv`): 120 more reviews of the read parts, none of `read`'s, A 0-64, B 55-119;
- `test3` (`neurips-2023-2025-test3.csv`): 90 more of the `test` part, none of `test`'s or `test2`'s, A 0-49,
  B 40-89: held out for the changes written on `read2`;
- `read3` (`neurips-2023-2025-read3.csv`): 120 more of the read parts, none of `read`'s or `read2`'s, A 0-64, B 55-119,
  labelled under GUIDELINE.md's decided cases;
- `test4` (`neurips-2023-2025-test4.csv`): 90 more of the `test` part, none of the first three test samples', A 0-49,
  B 40-89, labelled under the decided cases: held out for the changes written on `read3`;
- `test5` (`neurips-2023-2025-test5.csv`): 90 more of the `test` part, none of the first four test samples', A 0-49,
  B 40-89, labelled under the decided cases: held out for what comes after round 3;
- `test6` (`neurips-2023-2025-test6.csv`): the last 145 reviews of the `test` part, none of the first five test
  samples', A 0-54, B 50-99, C 95-144, labelled under the decided cases: held out with `test5`.

One sample of another venue: `disapere_test` (`disapere-iclr-2019-2020-test.csv`): every one of the 135 ICLR
2019-2020 reviews of DISAPERE (`../shared/data/reviews/disapere-iclr-2019-2020`) in the `test` part, in the order of
`random.Random(20261201)`, A 0-49, B 45-94, C 90-134, labelled under the decided cases: held out since the NeurIPS
test part ran out; neither its text nor its DISAPERE labels were read while writing the rules.
`disapere_read` (`disapere-iclr-2019-2020-read.csv`): 120 of DISAPERE's reviews in the read parts (`dev`, `dev2`),
seed 20261202, A 0-44, B 40-84, C 80-119: to write rules on for that venue, read freely.
`disapere_check` (`disapere-iclr-2019-2020-check.csv`): 120 more of DISAPERE's read-part reviews, none of
`disapere_read`'s, seed 20261203, same batches: labelled before the round written on `disapere_read` was measured,
and held out for it (its reviews were never read under the guideline; round 3 printed some of the read parts'
reviews as errors of DISAPERE's own proxy labels).
`disapere_check2` (`disapere-iclr-2019-2020-check2.csv`): the last 131 of DISAPERE's read-part reviews, none of the
two samples' before, seed 20261204, A 0-49, B 45-94, C 90-130: held out for round 5 and measured once for it.
`neurips_check` (`neurips-2023-2025-check.csv`): 150 more NeurIPS read-part reviews, none of the three read
samples', seed 20261205, A 0-54, B 50-104, C 100-149: labelled after round 5 was measured, a first look at it on
NeurIPS.
`neurips_check2` (`neurips-2023-2025-check2.csv`): 150 more, none of those nor `neurips_check`'s, seed 20261206,
same batches: held out for round 6.
`neurips_check3` (`neurips-2023-2025-check3.csv`): 150 more, none of the read samples' nor the two checks', seed
20261207, same batches: held out for round 7 (drawn and handed out before any round-7 code).
`neurips_check4` (`neurips-2023-2025-check4.csv`): 150 more, none of the read samples' nor the three checks', seed
20261208, same batches: held out for round 8 (drawn and handed out before any round-8 code).

    python bench/labels/sample_reviews.py --out /tmp/annot             # batch_A/NNN.txt, batch_B/NNN.txt, sample.json
    python bench/labels/sample_reviews.py --check                      # the label file holds exactly this sample
    python bench/labels/sample_reviews.py --sample read --check
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from extractors.reviews.forms import parse_review_file  # noqa: E402
from extractors.reviews.labels import (  # noqa: E402
    LABELLED_SAMPLES,
    NEURIPS_SAMPLES,
    READABLE,
    part,
    read_review_labels,
)
from extractors.reviews.records import Review  # noqa: E402
from extractors.shared_data import shared_data_dir  # noqa: E402

SOURCE = Path("reviews") / "neurips-openreview-2023-2025"
DISAPERE = Path("reviews") / "disapere-iclr-2019-2020" / "final_dataset"


@dataclass(frozen=True)
class Sample:
    """One sample: the parts it draws from, its seed and size, each annotator's index range and its label file."""

    parts: tuple[str, ...]
    seed: int
    size: int
    batches: dict[str, tuple[int, int]]
    labels: Path
    after: tuple[str, ...] = ()  # samples drawn before from the same reviews, whose reviews this one leaves out
    source: Path = SOURCE  # the review files, relative to the shared folder
    pattern: str = "*/*.json"
    venue: str = ""  # the venue the annotators are told; "" = the review file's folder (neurips_2023, ...)


def _three(size: int, ends: tuple[int, int]) -> dict[str, tuple[int, int]]:
    """Three annotators' batches overlapping by five reviews: A up to `ends[0]`, B up to `ends[1]`, C to the end."""
    first, second = ends
    return {"A": (0, first), "B": (first - 5, second), "C": (second - 5, size)}


def _iclr(
    name: str, parts: tuple[str, ...], seed: int, size: int, ends: tuple[int, int], after: tuple[str, ...] = ()
) -> Sample:
    """A DISAPERE sample, three annotators (`_three`)."""
    return Sample(
        parts,
        seed,
        size,
        _three(size, ends),
        LABELLED_SAMPLES[name],
        after,
        DISAPERE,
        venue="ICLR 2019-2020 (DISAPERE)",
    )


def _check(name: str, seed: int, after: tuple[str, ...]) -> Sample:
    """A NeurIPS read-part check: 150 reviews of the read parts, none of the samples `after`, three annotators."""
    return Sample(READABLE, seed, 150, _three(150, (55, 105)), LABELLED_SAMPLES[name], after)


SAMPLES = {
    "test": Sample(("test",), 20261123, 90, {"A": (0, 50), "B": (40, 90)}, NEURIPS_SAMPLES["test"]),
    "read": Sample(READABLE, 20261124, 120, {"A": (0, 65), "B": (55, 120)}, NEURIPS_SAMPLES["read"]),
    "test2": Sample(("test",), 20261125, 90, {"A": (0, 50), "B": (40, 90)}, NEURIPS_SAMPLES["test2"], ("test",)),
    "read2": Sample(READABLE, 20261126, 120, {"A": (0, 65), "B": (55, 120)}, NEURIPS_SAMPLES["read2"], ("read",)),
    "test3": Sample(
        ("test",), 20261127, 90, {"A": (0, 50), "B": (40, 90)}, NEURIPS_SAMPLES["test3"], ("test", "test2")
    ),
    "read3": Sample(
        READABLE, 20261128, 120, {"A": (0, 65), "B": (55, 120)}, NEURIPS_SAMPLES["read3"], ("read", "read2")
    ),
    "test4": Sample(
        ("test",), 20261129, 90, {"A": (0, 50), "B": (40, 90)}, NEURIPS_SAMPLES["test4"], ("test", "test2", "test3")
    ),
    "test5": Sample(
        ("test",),
        20261130,
        90,
        {"A": (0, 50), "B": (40, 90)},
        NEURIPS_SAMPLES["test5"],
        ("test", "test2", "test3", "test4"),
    ),
    "test6": Sample(
        ("test",),
        20261131,
        145,
        _three(145, (55, 100)),
        NEURIPS_SAMPLES["test6"],
        ("test", "test2", "test3", "test4", "test5"),
    ),
    "neurips_check": _check("neurips_check", 20261205, ("read", "read2", "read3")),
    "neurips_check2": _check("neurips_check2", 20261206, ("read", "read2", "read3", "neurips_check")),
    "neurips_check3": _check("neurips_check3", 20261207, ("read", "read2", "read3", "neurips_check", "neurips_check2")),
    "neurips_check4": _check(
        "neurips_check4", 20261208, ("read", "read2", "read3", "neurips_check", "neurips_check2", "neurips_check3")
    ),
    "disapere_test": _iclr("disapere_test", ("test",), 20261201, 135, (50, 95)),
    "disapere_read": _iclr("disapere_read", READABLE, 20261202, 120, (45, 85)),
    "disapere_check": _iclr("disapere_check", READABLE, 20261203, 120, (45, 85), ("disapere_read",)),
    "disapere_check2": _iclr("disapere_check2", READABLE, 20261204, 131, (50, 95), ("disapere_read", "disapere_check")),
}


def draw(shared: Path, sample: Sample = SAMPLES["test"]) -> list[tuple[str, Review]]:
    """(file relative to `shared`, review) of the sample, in sample order."""
    reviews = []
    for path in sorted((shared / sample.source).glob(sample.pattern)):
        if path.name == "manifest.json":
            continue
        for item in parse_review_file(path.read_bytes(), str(path)):
            if isinstance(item, Review) and item.review_kind == "official" and part(item.submission_id) in sample.parts:
                reviews.append((str(path.relative_to(shared)), item))
    taken = {review.review_id for name in sample.after for _, review in draw(shared, SAMPLES[name])}
    reviews = [(file, review) for file, review in reviews if review.review_id not in taken]
    return random.Random(sample.seed).sample(reviews, sample.size)


def mismatched(drawn: list[tuple[str, Review]], labels: dict, sample: Sample = SAMPLES["test"]) -> list[str]:
    """The annotators whose labelled reviews (index, file, review id) are not their batch of the sample."""
    wrong = []
    for annotator, (low, high) in sample.batches.items():
        wanted = {(index, file, review.review_id) for index, (file, review) in enumerate(drawn) if low <= index < high}
        got = {(label.index, label.file, label.review_id) for label in labels.get(annotator, {}).values()}
        if wanted != got:
            wrong.append(annotator)
    return wrong


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=shared_data_dir(), help="the shared data folder")
    parser.add_argument("--out", type=Path, help="write the annotators' batches here")
    parser.add_argument("--check", action="store_true", help="check the label file against the sample")
    parser.add_argument("--sample", choices=sorted(SAMPLES), default="test", help="which sample (default: test)")
    args = parser.parse_args(argv)
    chosen = SAMPLES[args.sample]
    sample = draw(args.shared, chosen)
    if args.check:
        wrong = mismatched(sample, read_review_labels(chosen.labels), chosen)
        if wrong:
            raise SystemExit(f"error: the labels of annotator(s) {', '.join(wrong)} are not their batch of the sample")
        print(f"ok: {chosen.labels.name} holds the {chosen.size} reviews of the sample (seed {chosen.seed})")
    if args.out:
        for annotator, (low, high) in chosen.batches.items():
            folder = args.out / f"batch_{annotator}"
            folder.mkdir(parents=True, exist_ok=True)
            for index in range(low, high):
                file, review = sample[index]
                venue = chosen.venue or Path(file).parent.name
                header = f"review_id: {review.review_id}\nsubmission: {review.submission_id}\nvenue: {venue}"
                (folder / f"{index:03d}.txt").write_text(f"{header}\n\n{review.text}\n")
        listing = [
            {"index": i, "review_id": r.review_id, "submission_id": r.submission_id, "file": f}
            for i, (f, r) in enumerate(sample)
        ]
        (args.out / "sample.json").write_text(json.dumps(listing, indent=1))
        print(f"wrote {chosen.size} reviews to {args.out}")


if __name__ == "__main__":
    main()
