"""Submission and review ids qualified by where they come from: two venues that number their submissions alike
keep two submissions and every review, each review's mentions stay on its own submission, and the reviews balance
counts what was written (reviews read = reviews written + reviews dead-lettered)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to
from hypothesis import given
from hypothesis import strategies as st

from extractors.reviews.forms import (
    directory_key,
    is_review_letter,
    local_id,
    parse_review_file,
    scoped_id,
    venue_key,
    with_scoped_ids,
)
from extractors.reviews.records import Review, Submission
from mapping.records import DeadLetter
from pipelines.citationr import OneReviewPerIdFn, build_pipeline
from pipelines.outputs import read_stats
from pipelines.tallies import DEAD, TALLY
from tests.support.runs import read_rows


def scoped(items: list) -> list:
    return [i for i in items if isinstance(i, Submission | Review)]


def read_scoped(data: dict | list, path: str) -> list:
    return with_scoped_ids(list(parse_review_file(json.dumps(data).encode(), path)), path)


def peerread(submission_id: str, conference: str | None, *texts: str) -> dict:
    record = {"id": submission_id, "title": f"Paper {submission_id}", "abstract": "An abstract.", "reviews": []}
    record["reviews"] = [{"comments": text} for text in texts]
    return {**record, "conference": conference} if conference else record


# ------------------------------------------------------------------------------------------ the ids, by hand


@pytest.mark.parametrize(
    ("venue", "key"),
    [
        ("NeurIPS 2023", "neurips-2023"),
        ("NeurIPS.cc/2023/Conference", "neurips-2023"),
        ("NeurIPS.cc/2023/Conference/Submission9", "neurips-2023"),
        ("Submitted to NeurIPS 2023", "neurips-2023"),
        ("NeurIPS 2023 poster", "neurips-2023"),
        ("ICLR 2017 conference submission", "iclr-2017"),
        ("ICLR2019", "iclr-2019"),
        ("acl", "acl"),
        ("", None),
        (None, None),
        ("  /  ", None),
    ],
)
def test_a_venue_is_its_name_and_year(venue, key):
    assert venue_key(venue) == key


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/data/NeurIPS_2023/304.json", "neurips-2023"),
        ("gs://bucket/reviews/iclr 2017 (train)/304.json.gz", "iclr-2017-train"),
        ("C:\\data\\Venue A\\304.json", "venue-a"),
        ("304.json", "local"),
        ("/__/304.json", "local"),
    ],
)
def test_a_file_naming_no_venue_is_scoped_by_its_folder(path, key):
    assert directory_key(path) == key


@given(st.text(min_size=1), st.text())
def test_the_local_id_comes_back_whatever_the_folder_and_id(folder, local):
    scope = directory_key(f"/{folder.replace('/', '_')}/f.json")
    assert ":" not in scope and local_id(scoped_id(scope, local)) == local


def test_two_venues_numbering_alike_keep_two_submissions_and_their_reviews():
    iclr = scoped(read_scoped(peerread("304", "ICLR 2017 conference submission", "Good."), "/d/a/304.json"))
    acl = scoped(read_scoped(peerread("304", "ACL 2017", "Bad."), "/d/b/304.json"))
    assert [(type(i).__name__, i.submission_id, getattr(i, "review_id", None)) for i in iclr + acl] == [
        ("Submission", "iclr-2017:304", None),
        ("Review", "iclr-2017:304", "iclr-2017:304/r0"),
        ("Submission", "acl-2017:304", None),
        ("Review", "acl-2017:304", "acl-2017:304/r0"),
    ]


def test_records_naming_no_venue_are_scoped_by_their_folder():
    items = scoped(read_scoped(peerread("304", None, "Good."), "/d/Venue_A/304.json"))
    assert {(i.submission_id, getattr(i, "review_id", "")) for i in items} == {
        ("venue-a:304", ""),
        ("venue-a:304", "venue-a:304/r0"),
    }


def test_a_review_naming_no_venue_takes_its_submission_s_from_the_same_file():
    notes = [
        {
            "id": "S1",
            "forum": "S1",
            "invitations": ["NeurIPS.cc/2024/Conference/-/Submission"],
            "content": {"title": {"value": "T"}, "abstract": {"value": "A"}},
        },
        {"id": "R1", "forum": "S1", "replyto": "S1", "content": {"weaknesses": {"value": "Cite more work."}}},
        {"id": "R2", "forum": "S9", "replyto": "S9", "content": {"weaknesses": {"value": "Another paper's."}}},
    ]
    items = scoped(read_scoped(notes, "/d/dump/notes.json"))
    assert sorted((getattr(i, "review_id", "-"), i.submission_id) for i in items) == [
        ("-", "dump:S9"),  # R2's submission is not in the file: the folder
        ("-", "neurips-2024:S1"),
        ("-", "neurips-2024:S1"),
        ("dump:R2", "dump:S9"),
        ("neurips-2024:R1", "neurips-2024:S1"),
    ]


def test_a_peerread_file_and_review_notes_of_one_submission_still_meet():
    """One venue's records of one submission name the venue differently (`conference`, an invitation path)."""
    paper = scoped(read_scoped(peerread("X1", "NeurIPS 2023", "Good."), "/d/peerread/X1.json"))
    note = {
        "id": "R7",
        "forum": "X1",
        "invitations": ["NeurIPS.cc/2023/Conference/Submission5/-/Official_Review"],
        "content": {"weaknesses": {"value": "Missing related work."}},
    }
    reviews = scoped(read_scoped(note, "/d/openreview/R7.json"))
    assert {i.submission_id for i in paper + reviews} == {"neurips-2023:X1"}


def test_dead_letters_of_one_review_are_told_from_those_of_a_file_or_row():
    path = "/d/a#b/notes.jsonl"
    letter = lambda source, reason="empty_review": DeadLetter(source, "read_reviews", reason, "")  # noqa: E731
    assert is_review_letter(letter(f"{path}:3#R1"), path)
    assert is_review_letter(letter(f"{path}#X/r2", "wrong_type:reviews.comments"), path)
    assert not is_review_letter(letter(f"{path}:3#R1", "not_a_review"), path)
    assert not is_review_letter(letter(path, "bad_json"), path)  # the '#' of the folder is not a review's
    assert not is_review_letter(letter(f"{path}:4", "missing_id"), path)


@pytest.mark.beam
def test_one_review_per_id_dead_letters_the_others():
    kept = Review("v:R1", "v:S1", "text a", (), "official", 2023, "/a.json")
    same = Review("v:R1", "v:S1", "text a", (), "official", 2023, "/b.json")
    other = Review("v:R1", "v:S1", "text b", (), "official", 2023, "/c.json")
    alone = Review("v:R2", "v:S1", "text c", (), "official", 2023, "/a.json")
    with TestPipeline(runner="FnApiRunner") as p:
        out = (
            p
            | beam.Create([("v:R1", [other, kept, same]), ("v:R2", [alone])])
            | beam.ParDo(OneReviewPerIdFn()).with_outputs(DEAD, TALLY, main="reviews")
        )
        assert_that(out.reviews, equal_to([kept, alone]), label="Kept")
        letters = out[DEAD] | beam.Map(lambda d: (d.source, d.reason, "same text" in d.detail))
        assert_that(
            letters,
            equal_to([("/b.json#v:R1", "duplicate_review", True), ("/c.json#v:R1", "duplicate_review", False)]),
            label="Letters",
        )
        counts = out[TALLY] | beam.CombinePerKey(sum)
        assert_that(
            counts,
            equal_to([("reviews_dead_lettered", 2), ("dead:read_reviews:duplicate_review", 2)]),
            label="Counts",
        )


# ----------------------------------------------------------------------------- real NeurIPS review files

NEURIPS = "neurips-openreview-2023-2025"
FIRST, SECOND = "neurips_2023/0NuseeBuB4.json", "neurips_2024/0MXzbAv8xy.json"  # both with recommended mentions


def _place(shared: Path, relative: str, folder: Path, submission_id: str, name_venue: bool) -> dict:
    """A real review file under `folder`, its PeerRead `id` set to `submission_id` (and its `conference` gone
    unless `name_venue`); the record as written."""
    record = json.loads((shared / "reviews" / NEURIPS / relative).read_text())
    record["id"] = submission_id
    if not name_venue:
        del record["conference"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{submission_id}.json").write_text(json.dumps(record))
    return record


def _run(reviews: Path, output: Path) -> dict:
    with beam.Pipeline(runner="FnApiRunner") as pipeline:
        build_pipeline(pipeline, {"reviews": [str(reviews / "*" / "*.json")]}, str(output))
    return read_stats(str(output))


def _mentions(output: Path) -> Counter:
    """Each mention as (scope, the review's place in its file, text, context, kind, rule): no id in it."""
    return Counter(
        (
            m["submission_id"].split(":")[0],
            m["review_id"].rsplit("/", 1)[1],
            m["text"],
            m["context"],
            m["kind"],
            m["reason"],
        )
        for m in read_rows(output / "mentions")
    )


def _positives(output: Path) -> set[tuple]:
    return {(p["submission_id"].split(":")[0], p["paper_id"]) for p in read_rows(output / "positives")}


@pytest.mark.e2e
@pytest.mark.parametrize("name_venue", [True, False], ids=["venue_in_record", "venue_from_folder"])
def test_two_venues_sharing_a_peerread_id_keep_their_submissions_and_reviews(shared, tmp_path, name_venue):
    """Two real NeurIPS files given one id, in folders named for two venues: as many submissions and reviews as
    when their ids differ, each review and mention on its own file's submission."""
    scopes = ("neurips-2023", "neurips-2024") if name_venue else ("venue-a", "venue-b")
    shared_id = Path(FIRST).stem
    apart, together = tmp_path / "apart", tmp_path / "together"
    first = _place(shared, FIRST, apart / "venue_a", shared_id, name_venue)
    second = _place(shared, SECOND, apart / "venue_b", Path(SECOND).stem, name_venue)
    _place(shared, FIRST, together / "venue_a", shared_id, name_venue)
    _place(shared, SECOND, together / "venue_b", shared_id, name_venue)
    reference = _run(apart, tmp_path / "out-apart")
    stats = _run(together, tmp_path / "out")

    # the balance, from the input files: every review has text, so every one is written
    read = len(first["reviews"]) + len(second["reviews"])
    assert all(r["comments"].strip() for r in first["reviews"] + second["reviews"])
    reviews = read_rows(tmp_path / "out" / "reviews")
    letters = [d for d in read_rows(tmp_path / "out" / "dead_letter") if "#" in d["source"]]
    assert stats["funnel"]["reviews_in"] == read == len(reviews) + len(letters) and not letters
    assert stats["funnel"]["reviews_written"] == read and stats["checks"]["reviews_balance"]
    assert stats["funnel"]["submissions"] == 2
    assert Counter(r["submission_id"] for r in reviews) == {
        f"{scopes[0]}:{shared_id}": len(first["reviews"]),
        f"{scopes[1]}:{shared_id}": len(second["reviews"]),
    }
    # each mention and recommended paper where it is when the two ids differ
    found = _mentions(tmp_path / "out")
    assert found == _mentions(tmp_path / "out-apart")
    assert {scope for scope, _, _, _, kind, _ in found if kind == "recommended"} == set(scopes)
    assert _positives(tmp_path / "out") == _positives(tmp_path / "out-apart")
    assert stats["funnel"]["queries"] == reference["funnel"]["queries"] == 2


@pytest.mark.e2e
def test_one_file_read_twice_writes_its_reviews_once_and_dead_letters_the_copies(shared, tmp_path):
    """The same submission of the same venue in two folders (one copy saved as UTF-16 without a byte-order mark)
    is one submission: each review written once, each copy a `duplicate_review` dead letter of the same text, and
    the balance holds on what was written."""
    source = shared / "reviews" / NEURIPS / FIRST
    for folder in ("copy_a", "copy_b"):
        (tmp_path / "in" / folder).mkdir(parents=True)
    shutil.copy(source, tmp_path / "in" / "copy_a" / source.name)
    (tmp_path / "in" / "copy_b" / source.name).write_bytes(source.read_text(encoding="utf-8").encode("utf-16-le"))
    stats = _run(tmp_path / "in", tmp_path / "out")
    per_file = len(json.loads(source.read_text())["reviews"])
    reviews = read_rows(tmp_path / "out" / "reviews")
    letters = [d for d in read_rows(tmp_path / "out" / "dead_letter") if "#" in d["source"]]
    assert len(reviews) == per_file and len(letters) == per_file
    assert {(d["reason"], "same text" in d["detail"]) for d in letters} == {("duplicate_review", True)}
    assert stats["funnel"]["reviews_in"] == 2 * per_file == len(reviews) + len(letters)
    assert stats["funnel"]["submissions"] == 1 and stats["checks"]["reviews_balance"]
    assert stats["reading"] == {"encoding:utf-16-le-without-bom": 1}


ASKS = "The paper misses related work: \u201cCurvature-Guided Edge Addition\u201d should be cited and compared."


@pytest.mark.e2e
def test_a_paper_file_named_by_an_id_two_venues_share_joins_neither_by_that_id(tmp_path):
    """`papers/304.json` could be either venue's "304": joined by that id to neither (counted); its title still
    joins it to the submission of that title, where the work it cites is already cited."""
    titles = {"a": ("ICLR 2017", "Deep Graph Networks Without Oversquashing"), "b": ("ACL 2017", "Parsing With Graphs")}
    for folder, (venue, title) in titles.items():
        record = {"id": "304", "conference": venue, "title": title, "abstract": "An abstract.", "reviews": []}
        record["reviews"] = [{"comments": ASKS}]
        (tmp_path / "reviews" / folder).mkdir(parents=True)
        (tmp_path / "reviews" / folder / "304.json").write_text(json.dumps(record))
    paper = {
        "paper_id": "304",
        "metadata": {"title": titles["a"][1], "authors": [], "year": "2017"},
        "abstract": [],
        "body_text": [{"section": "Introduction", "text": "As in [1].", "cite_spans": [], "ref_spans": []}],
        "bib_entries": {"BIBREF0": {"ref_id": "b0", "title": "Curvature-Guided Edge Addition", "authors": []}},
        "ref_entries": {},
    }
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "304.json").write_text(json.dumps(paper))
    inputs = {"reviews": [str(tmp_path / "reviews" / "*" / "*.json")], "s2orc": [str(tmp_path / "papers" / "*.json")]}
    with beam.Pipeline(runner="FnApiRunner") as pipeline:
        build_pipeline(pipeline, inputs, str(tmp_path / "out"))
    stats = read_stats(str(tmp_path / "out"))
    kinds = {m["submission_id"]: m["kind"] for m in read_rows(tmp_path / "out" / "mentions")}
    assert kinds == {"iclr-2017:304": "already_cited", "acl-2017:304": "recommended"}
    assert (stats["already_cited"]["ambiguous_ids"], stats["already_cited"]["submissions_with_references"]) == (1, 1)
