"""The sampler of the labelled reviews (`bench.citationr.sampler`) and its manifest (`bench/labels/samples.csv`):
every committed label file holds exactly the reviews its sample draws, and drawing every sample parses each review
file once; on hand-made review files, the single pass draws what the definition (each sample drawn on its own, the
samples it leaves out drawn again) draws."""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from bench.citationr import sampler
from bench.citationr.samples import COLUMNS, SAMPLES, read_manifest
from extractors.reviews.forms import parse_review_file
from extractors.reviews.records import Review


def _part(forum: str) -> str:
    """The parts by their definition (SHA-1 of the submission id: even dev, 1 mod 4 dev2, 3 mod 4 test)."""
    value = int(hashlib.sha1(forum.encode()).hexdigest(), 16)
    return "dev" if value % 2 == 0 else "dev2" if value % 4 == 1 else "test"


def _counting(monkeypatch) -> Counter:
    """Count the sampler's calls of the review-file parser, by file."""
    calls: Counter = Counter()

    def parse(data: bytes, source: str):
        calls[source] += 1
        return parse_review_file(data, source)

    monkeypatch.setattr(sampler, "parse_review_file", parse)
    return calls


# ------------------------------------------------------------------------------------------ hand-made reviews

SUBMISSIONS = [f"s{i}" for i in range(30)]
TEST_REVIEWS = sorted(f"{s}/r{r}" for s in SUBMISSIONS if _part(s) == "test" for r in range(2))


def _shared(tmp_path: Path) -> Path:
    """Two reviews of each submission, a file each, in two venue folders; and a `manifest.json` the sampler skips."""
    for index, submission in enumerate(SUBMISSIONS):
        folder = tmp_path / "reviews" / "toy" / f"venue_{'ab'[index % 2]}"
        folder.mkdir(parents=True, exist_ok=True)
        reviews = [{"comments": f"Review {r} of {submission}."} for r in range(2)]
        (folder / f"{submission}.json").write_text(json.dumps({"id": submission, "title": "T", "reviews": reviews}))
    (tmp_path / "reviews" / "toy" / "venue_a" / "manifest.json").write_text("{}")
    return tmp_path


def _manifest(tmp_path: Path, rows: list[dict[str, str]]) -> Path:
    path = tmp_path / "samples.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({"source": "reviews/toy", "venue": "", "role": "training", **row})
    return path


def _row(name: str, parts: str, seed: int, size: int, after: str = "") -> dict[str, str]:
    return {
        "name": name,
        "file": f"{name}.csv",
        "parts": parts,
        "seed": str(seed),
        "size": str(size),
        "batches": f"A:0-{size - 1}",
        "after": after,
        "reported_as": name,
    }


TOY = [
    _row("first", "test", 11, 3),
    _row("second", "test", 12, 4, "first"),
    _row("rest", "test", 13, len(TEST_REVIEWS) - 7, "first second"),
    _row("read", "dev dev2", 14, 10),
    _row("read2", "dev dev2", 15, 10, "read"),
]


def _by_definition(shared: Path, samples: dict, name: str) -> list[tuple[str, str]]:
    """A sample drawn on its own: the official reviews of its parts, in file order, less the reviews of the samples
    it names in `after` (each drawn again the same way), then `random.Random(seed).sample`."""
    sample = samples[name]
    reviews = []
    for path in sorted((shared / sample.source).glob("*/*.json")):
        if path.name != "manifest.json":
            for item in parse_review_file(path.read_bytes(), str(path)):
                official = isinstance(item, Review) and item.review_kind == "official"
                if official and _part(item.submission_id) in sample.parts:
                    reviews.append((str(path.relative_to(shared)), item.review_id))
    taken = {review for earlier in sample.after for _, review in _by_definition(shared, samples, earlier)}
    return random.Random(sample.seed).sample([r for r in reviews if r[1] not in taken], sample.size)


@pytest.mark.unit
def test_one_pass_draws_what_the_definition_draws_and_parses_each_file_once(tmp_path, monkeypatch):
    shared = _shared(tmp_path)
    samples = read_manifest(_manifest(tmp_path, TOY))
    expected = {name: _by_definition(shared, samples, name) for name in samples}
    calls = _counting(monkeypatch)
    drawn = sampler.draw_samples(shared, samples)
    assert {name: [(f, r.review_id) for f, r in d] for name, d in drawn.items()} == expected
    files = {str(p) for p in (shared / "reviews" / "toy").glob("*/s*.json")}
    assert len(files) == len(SUBMISSIONS) and calls == Counter({f: 1 for f in files})  # manifest.json is not read
    # by hand: the three test samples share out the test part's reviews, none twice
    ids = {name: [r.review_id for _, r in d] for name, d in drawn.items()}
    assert sorted(ids["first"] + ids["second"] + ids["rest"]) == TEST_REVIEWS
    assert not set(ids["read"]) & set(ids["read2"])
    assert {_part(r.split("/")[0]) for r in ids["read"] + ids["read2"]} <= {"dev", "dev2"}


@pytest.mark.unit
def test_one_sample_draws_only_what_it_leaves_out(tmp_path, monkeypatch):
    shared = _shared(tmp_path)
    samples = read_manifest(_manifest(tmp_path, TOY))
    calls = _counting(monkeypatch)
    second = sampler.draw(shared, samples["second"], samples)
    assert [(f, r.review_id) for f, r in second] == _by_definition(shared, samples, "second")
    assert set(calls.values()) == {1} and len(calls) == len(SUBMISSIONS)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([_row("later", "test", 1, 3, "first"), _row("first", "test", 2, 3)], "no earlier sample"),
        ([_row("first", "test", 1, 3), {**_row("other", "test", 2, 3, "first"), "source": "x"}], "no earlier sample"),
        ([{**_row("first", "test", 1, 3), "batches": "A:0-1"}], "do not cover"),
        ([{**_row("first", "test", 1, 3), "role": "spare"}], "role"),
        ([{**_row("first", "test", 1, 3), "parts": "train"}], "parts"),
        ([_row("first", "test", 1, 3), _row("first", "test", 2, 3)], "taken"),
        ([{**_row("first", "test", 1, 3), "batches": "A:0-two"}], "ANNOTATOR:FIRST-LAST"),
    ],
)
def test_a_manifest_row_that_cannot_be_drawn_is_refused_with_its_line(tmp_path, rows, message):
    with pytest.raises(ValueError, match=message):
        read_manifest(_manifest(tmp_path, rows))


@pytest.mark.unit
def test_the_committed_manifest_by_hand():
    """Spot checks against bench/labels/README.md's table: seeds, sizes, batches (inclusive there) and parts."""
    assert (SAMPLES["test"].seed, SAMPLES["test"].size, SAMPLES["test"].batches) == (
        20261123,
        90,
        {"A": (0, 50), "B": (40, 90)},
    )
    assert SAMPLES["test6"].batches == {"A": (0, 55), "B": (50, 100), "C": (95, 145)}
    assert SAMPLES["disapere_check2"].batches == {"A": (0, 50), "B": (45, 95), "C": (90, 131)}
    checks = ("neurips_check", "neurips_check2", "neurips_check3")
    assert SAMPLES["neurips_check4"].after == ("read", "read2", "read3", *checks)
    assert SAMPLES["disapere_test"].venue == "ICLR 2019-2020 (DISAPERE)" and SAMPLES["read"].venue == ""
    assert all(s.labels.is_file() for s in SAMPLES.values())


# ------------------------------------------------------------------------------------------ the committed labels


def _label_rows(path: Path) -> tuple[dict[int, set[tuple[str, str, str]]], dict[str, set[int]]]:
    """A label file read as plain CSV: the (file, review id, submission id) each index names, and each annotator's
    indices."""
    by_index: dict[int, set[tuple[str, str, str]]] = defaultdict(set)
    by_annotator: dict[str, set[int]] = defaultdict(set)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            by_index[int(row["index"])].add((row["file"], row["review_id"], row["submission_id"]))
            by_annotator[row["annotator"]].add(int(row["index"]))
    return dict(by_index), dict(by_annotator)


def test_every_label_file_holds_exactly_the_reviews_its_sample_draws(shared, monkeypatch):
    """The committed label files are the reference: for every sample, index by index, the review the sampler draws
    is the one the file's rows name, each annotator labelled their batch, and no review is in a sample it leaves
    out. All samples are drawn in one pass that parses each review file of their sources once."""
    calls = _counting(monkeypatch)
    drawn = sampler.draw_samples(shared)
    assert list(drawn) == list(SAMPLES)
    files = {
        str(path)
        for source in {s.source for s in SAMPLES.values()}
        for path in (shared / source).glob("*/*.json")
        if path.name != "manifest.json"
    }
    assert files and calls == Counter({f: 1 for f in files})
    for name, sample in SAMPLES.items():
        by_index, by_annotator = _label_rows(sample.labels)
        assert by_index == {i: {(f, r.review_id, r.submission_id)} for i, (f, r) in enumerate(drawn[name])}, name
        assert by_annotator == {a: set(range(low, high)) for a, (low, high) in sample.batches.items()}, name
        for earlier in sample.after:
            assert not {r for rows in by_index.values() for _, r, _ in rows} & {
                r for rows in _label_rows(SAMPLES[earlier].labels)[0].values() for _, r, _ in rows
            }, (name, earlier)


def test_the_check_flags_a_shifted_sample_and_disapere_test_is_its_whole_part(shared):
    from bench.citationr.labels import read_review_labels

    sample = SAMPLES["disapere_test"]
    drawn = sampler.draw(shared, sample)
    labels = read_review_labels(sample.labels)
    assert sampler.mismatched(drawn, labels, sample) == []
    assert sampler.mismatched(drawn[1:] + drawn[:1], labels, sample) == sorted(sample.batches)
    everyone = [
        record["metadata"]["review_id"]
        for path in sorted((shared / "reviews" / "disapere-iclr-2019-2020" / "final_dataset").glob("*/*.json"))
        for record in [json.loads(path.read_text())]
        if _part(record["metadata"]["forum_id"]) == "test"
    ]
    assert len(everyone) == 135 and sorted(everyone) == sorted(r.review_id for _, r in drawn)
