"""The registry of CitationR's labelled review samples: one row of `bench/labels/samples.csv` per sample.

Each row says where the sample was drawn from and how (`source` folder under ../shared/data, the submission
`parts`, `seed`, `size`, the samples drawn before it whose reviews it leaves out, `after`), who labelled which
reviews (`batches`, inclusive index ranges per annotator), the `venue` its annotators were told ("" = the review
file's folder), its `role`, and the source name `bench/eval_citationr.py` reports it under (`reported_as`).
Adding a sample is one line of that file; `bench/labels/README.md` says what each sample is for.

Parts, by the SHA-1 of the submission (forum) id, the same for every label source: `dev` (even), `dev2` (1 mod 4),
`test` (3 mod 4); `read` = dev + dev2, `unread` = test.
"""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

LABELS_DIR = Path(__file__).resolve().parents[1] / "labels"
MANIFEST = LABELS_DIR / "samples.csv"
PARTS = ("dev", "dev2", "test")
READABLE = ("dev", "dev2")
ROLES = ("training", "held_out", "read")
"""`training`: read while writing rules, or held out and since measured: the learned name model's training data;
`held_out`: labelled before the rules it measures were written, reported on its own, never training data;
`read`: read freely while writing rules for its venue, not training data."""
POOLED = "neurips_labels"
"""The `reported_as` of the samples `bench/eval_citationr.py` reports together (the first read and test samples)."""
COLUMNS = ("name", "file", "source", "venue", "parts", "seed", "size", "batches", "after", "role", "reported_as")


def part(forum: str) -> str:
    """`dev` (even SHA-1 of the submission id), `dev2` (1 mod 4) or `test` (3 mod 4)."""
    return ("dev", "dev2", "dev", "test")[int(hashlib.sha1(forum.encode()).hexdigest(), 16) % 4]


@dataclass(frozen=True)
class Sample:
    """One labelled sample as its manifest row gives it; `batches` are half-open index ranges."""

    name: str
    labels: Path
    source: Path
    venue: str
    parts: tuple[str, ...]
    seed: int
    size: int
    batches: dict[str, tuple[int, int]]
    after: tuple[str, ...]
    role: str
    reported_as: str


def _batches(text: str, where: str) -> dict[str, tuple[int, int]]:
    """`A:0-49 B:40-89` -> {"A": (0, 50), "B": (40, 90)}."""
    batches = {}
    for item in text.split():
        annotator, _, span = item.partition(":")
        low, _, high = span.partition("-")
        if not (annotator and low.isdigit() and high.isdigit()) or int(low) > int(high):
            raise ValueError(f"{where}: batch {item!r} is not ANNOTATOR:FIRST-LAST")
        batches[annotator] = (int(low), int(high) + 1)
    return batches


def read_manifest(path: Path = MANIFEST) -> dict[str, Sample]:
    """Every sample of the manifest in its order, checked: known parts and roles, batches that cover the sample,
    and `after` naming earlier samples of the same source (so that one pass in file order draws them all)."""
    samples: dict[str, Sample] = {}
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise ValueError(f"{path}: the columns are {reader.fieldnames}, not {list(COLUMNS)}")
        for line, row in enumerate(reader, start=2):
            where = f"{path.name}:{line}"
            name = row["name"]
            parts, after = tuple(row["parts"].split()), tuple(row["after"].split())
            batches = _batches(row["batches"], where)
            try:
                seed, size = int(row["seed"]), int(row["size"])
            except ValueError as error:
                raise ValueError(f"{where}: {error}") from error
            sample = Sample(
                name=name,
                labels=path.parent / row["file"],
                source=Path(row["source"]),
                venue=row["venue"],
                parts=parts,
                seed=seed,
                size=size,
                batches=batches,
                after=after,
                role=row["role"],
                reported_as=row["reported_as"],
            )
            problems = _problems(sample, samples)
            if problems:
                raise ValueError(f"{where}: " + "; ".join(problems))
            samples[name] = sample
    return samples


def _problems(sample: Sample, earlier: dict[str, Sample]) -> list[str]:
    """What is wrong with a manifest row, given the rows before it."""
    problems = []
    if sample.name in earlier:
        problems.append(f"the name {sample.name!r} is taken")
    if not sample.parts or not set(sample.parts) <= set(PARTS):
        problems.append(f"parts {sample.parts} not in {PARTS}")
    if sample.role not in ROLES:
        problems.append(f"role {sample.role!r} not in {ROLES}")
    if {i for low, high in sample.batches.values() for i in range(low, high)} != set(range(sample.size)):
        problems.append("the batches do not cover the sample")
    for name in sample.after:
        if name not in earlier or earlier[name].source != sample.source:
            problems.append(f"after {name!r}: no earlier sample of the same source")
    return problems


SAMPLES = read_manifest()
"""Every labelled sample by name, in the order drawn."""
LABELLED_SAMPLES = {name: sample.labels for name, sample in SAMPLES.items()}
"""Every labelled sample's label file by name (`bench/labels/sample_reviews.py --sample NAME`)."""
TRAINING_SAMPLES = {name: s.labels for name, s in SAMPLES.items() if s.role == "training"}
"""The learned name model's training data (`bench/name_model.py`)."""
HELD_OUT_SAMPLES = {name: s.labels for name, s in SAMPLES.items() if s.role == "held_out"}
"""The samples held out for a later round, never training data (`bench/name_model.py --measure`)."""
POOLED_LABEL_FILES = tuple(s.labels for s in SAMPLES.values() if s.reported_as == POOLED)
"""The label files `bench/eval_citationr.py` reports together as `neurips_labels`."""
HELD_OUT_LABELS = {s.reported_as: s.labels for s in SAMPLES.values() if s.reported_as != POOLED and s.role != "read"}
"""The label files reported one by one that were held out when labelled (the later NeurIPS test samples too)."""
REPORTED_ALONE = {
    **HELD_OUT_LABELS,
    **{s.reported_as: s.labels for s in SAMPLES.values() if s.reported_as != POOLED and s.role == "read"},
}
"""Every label file `evaluate` reports on its own, by the source name it reports it under."""
