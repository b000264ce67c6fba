"""The citationr pipeline: a transform test, the bundled example end to end, and the shared reviews."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from extractors.reviews.dataset import CitationrConfig
from extractors.reviews.forms import parse_review_file
from extractors.reviews.mentions import MentionConfig
from extractors.reviews.records import Review
from pipelines.citationr import EXAMPLE, MineMentions, build_pipeline, example_inputs, export_rmc_json, run
from pipelines.outputs import read_stats
from tests.support.example_corpus import REVIEWS_RECOMMEND
from tests.support.grobid_replay import FakeGrobid, pdf_hash
from tests.support.review_notes import openreview_notes, s2orc_record
from tests.support.runs import read_rows, write_jsonl

REVIEW_TEXT = (
    "WEAKNESSES:\nMissing related work: \u201cGraph Rewiring for Long-Range Message Passing\u201d.\n"
    "The authors follow \u201cCurvature-Guided Edge Addition\u201d (Valdor and Brandt, 2020) closely.\n"
)


@pytest.mark.beam
def test_mine_mentions_transform():
    review = Review("r1", "s1", REVIEW_TEXT, ((12, "weaknesses"),), "official", 2023, "mem")
    with TestPipeline(runner="FnApiRunner") as p:
        mined = {
            "reviews": p | "Reviews" >> beam.Create([review]),
            "bibliographies": p | "Bibs" >> beam.Create([]),
        } | MineMentions(MentionConfig())
        kinds = mined["mentions"] | beam.Map(lambda r: (r.mention.title, r.mention.kind))
        assert_that(
            kinds,
            equal_to(
                [
                    ("Graph Rewiring for Long-Range Message Passing", "recommended"),
                    ("Curvature-Guided Edge Addition", "discussed"),
                ]
            ),
        )
        rows = mined["reviews"] | beam.Map(lambda r: (r.review_id, r.num_recommended, r.recommends))
        assert_that(rows, equal_to([("r1", 1, True)]), label="ReviewRows")


def _run(inputs: dict, output: Path) -> dict:
    with beam.Pipeline(runner="FnApiRunner") as pipeline:
        build_pipeline(pipeline, inputs, str(output))
    return read_stats(str(output))


@pytest.mark.e2e
def test_example_end_to_end(tmp_path):
    stats = _run(example_inputs(), tmp_path)
    funnel = stats["funnel"]
    # independent count of the example's reviews: PeerRead reviews, JSONL review notes, CSV rows
    peerread = json.loads((EXAMPLE / "reviews" / "neurips-style.json").read_text())
    jsonl_reviews = sum('"replyto"' in line for line in (EXAMPLE / "reviews" / "openreview-v2.jsonl").open())
    csv_rows = len((EXAMPLE / "reviews" / "iclr-export.csv").read_text().strip().splitlines()) - 1
    v1_notes = json.loads((EXAMPLE / "reviews" / "openreview-v1-2025.json").read_text())["notes"]
    v1_replies = sum(len(note["details"]["directReplies"]) for note in v1_notes)
    assert funnel["reviews_in"] == len(peerread["reviews"]) + jsonl_reviews + csv_rows + v1_replies
    assert stats["dead_letters"] == {
        "metadata:unknown_layout": 1,
        "read_reviews:bad_json": 2,
        "read_reviews:empty_review": 2,
    }
    # by hand: two reviews are blank (SUBA01's third, RevB3); seven ask for papers (REVIEWS_RECOMMEND), nine in
    # all; SUBA01's already cites Spectral Bounds and builds on Curvature-Guided Edge Addition. "Feld et al."
    # names no title or identifier, so it is no paper mention.
    assert funnel["reviews_read"] == funnel["reviews_in"] - 2
    assert funnel["reviews_written"] == len(read_rows(tmp_path / "reviews")) == funnel["reviews_in"] - 2
    assert (funnel["reviews_recommending"], funnel["recommended_resolved"], funnel["recommended_unresolved"]) == (
        7,
        9,
        0,
    )
    mentions = read_rows(tmp_path / "mentions")
    assert Counter(m["kind"] for m in mentions) == {"recommended": 9, "already_cited": 1, "discussed": 1}
    positives = read_rows(tmp_path / "positives")
    assert {(p["submission_id"], p["paper_id"]) for p in positives if p["resolved"]} == {
        (submission, paper) for submission, papers in REVIEWS_RECOMMEND.items() for paper in papers
    }
    by_title = {m["title"]: m for m in mentions if m["title"]}
    spectral = by_title["Spectral Bounds on Oversquashing in Graph Neural Networks"]
    assert spectral["kind"] == "already_cited" and spectral["paper_id"] == "2203.00202"
    rewiring = by_title["Graph Rewiring for Long-Range Message Passing"]
    assert (rewiring["kind"], rewiring["paper_id"], rewiring["resolved_by"]) == (
        "recommended",
        "2101.00101",
        "arxiv_id",
    )
    assert by_title["Positional Encodings for Sparse Transformers on Graphs"]["paper_id"] == "2106.00404"
    queries = read_rows(tmp_path / "queries")
    assert {q["submission_id"] for q in queries} == set(REVIEWS_RECOMMEND)
    suba = next(q for q in queries if q["submission_id"] == "neurips-2023:SUBA01")
    assert "Curvature-Guided Edge Addition" in suba["reference_titles"]
    assert "2203.00202" not in suba["positive_ids"]
    counts = export_rmc_json(str(tmp_path), str(tmp_path / "json"))  # the RMC layout: data/... (tests/test_exports.py)
    data = tmp_path / "json" / "data"
    papers = json.loads((data / "base" / "papers.json").read_text())
    bibrefs = json.loads((data / "base" / "bibref2info.json").read_text())
    exported = [q for name in ("train", "val", "test") for q in json.loads((data / f"{name}.json").read_text())]
    assert sum(counts[f"data/{n}.json"] for n in ("train", "val", "test")) == len(exported) == len(REVIEWS_RECOMMEND)
    assert all(pid in papers for q in exported for pid in q["positive_ids"])
    assert set(papers["neurips-2023:SUBA01"]) == {"title", "abstract", "bib_refs"}
    assert [bibrefs[b]["title"] for b in papers["neurips-2023:SUBA01"]["bib_refs"]] == suba["reference_titles"]


@pytest.mark.e2e
def test_shared_neurips_reviews(shared, tmp_path):
    folder = shared / "reviews" / "neurips-openreview-2023-2025"
    files = sorted(folder.glob("*/*.json"))
    expected_reviews = 0
    not_submissions = 0
    for path in files:
        record = json.loads(path.read_text())
        if "reviews" in record:
            expected_reviews += len(record["reviews"])
        else:
            not_submissions += 1
    stats = _run({"reviews": [str(folder / "*" / "*.json")]}, tmp_path)
    funnel = stats["funnel"]
    assert funnel["reviews_in"] == expected_reviews
    assert funnel["review_files_dead_lettered"] == not_submissions
    # every review of the files is a row of reviews/ or a dead letter of its own (`file#review id`)
    reviews = read_rows(tmp_path / "reviews")
    review_letters = [r for r in read_rows(tmp_path / "dead_letter") if "#" in r["source"]]
    assert len(reviews) + len(review_letters) == expected_reviews
    assert len(reviews) == funnel["reviews_read"] == funnel["reviews_written"] and stats["checks"]["reviews_balance"]
    # the files' PeerRead ids are OpenReview's, unique: qualified by their venue, none meets another
    venues = {Path(path).parent.name.replace("_full", "").replace("_", "-") for path in files}
    assert {r["submission_id"].split(":")[0] for r in reviews} == venues == {f"neurips-{y}" for y in (2023, 2024, 2025)}
    mentions = read_rows(tmp_path / "mentions")
    kinds = Counter(m["kind"] for m in mentions)
    assert set(kinds) <= {"recommended", "already_cited", "discussed"}
    assert kinds == {kind: funnel[f"mentions_kind:{kind}"] for kind in kinds} and len(mentions) == funnel["mentions"]


def test_real_review_csv_drops_annotation_columns(shared):
    path = (
        shared
        / "reviews"
        / "review-citation-bias"
        / "annotated_data_for_suggested_papers"
        / "ICLR2023_extra_annoatated_pur.csv"
    )
    reviews = [i for i in parse_review_file(path.read_bytes(), str(path)) if isinstance(i, Review)]
    assert reviews and not any("Yes, the peer review suggests" in r.text for r in reviews)


# ---------------------------------------------------------------------- already cited, extension, GROBID


ASKS = "The paper misses related work: \u201c{}\u201d and \u201c{}\u201d should be cited and compared."


@pytest.mark.e2e
def test_database_references_decide_already_cited_and_the_extension_is_per_query(tmp_path):
    gated, mixture = "Gated Controllers for Partially Observed Systems", "Mixture Policies for Robust Control"
    reviews = openreview_notes(
        tmp_path / "notes.jsonl",
        [("S1", "Sparse Mixtures for Online Control"), ("S2", "Robust Control from Pixels")],
        [
            ("R1", "S1", ASKS.format(gated, mixture)),
            ("R2", "S2", ASKS.format(mixture, "Event Cameras for Fast Control Loops")),
        ],
    )
    metadata = write_jsonl(
        tmp_path / "metadata.jsonl",
        [
            s2orc_record("100", "Sparse Mixtures for Online Control", 2023, cites=("200",)),  # S1's record: it cites 200
            s2orc_record("200", gated, 2022),
            s2orc_record("300", mixture, 2021),
            s2orc_record("400", "Another Control Paper Within the Window", 2020),
            s2orc_record("410", "A Control Paper After the Window", 2023),
            s2orc_record("500", "A Control Paper Long Before", 2010),
            s2orc_record("600", "A Biology Paper of the Same Year", 2021, field="Biology"),
        ],
    )
    with beam.Pipeline(runner="FnApiRunner") as pipeline:
        build_pipeline(
            pipeline,
            {"reviews": [str(reviews)], "metadata": [str(metadata)]},
            str(tmp_path / "out"),
            config=CitationrConfig(candidate_years=1),
        )
    stats = read_stats(str(tmp_path / "out"))
    mentions = {m["title"]: m for m in read_rows(tmp_path / "out" / "mentions")}
    assert mentions[gated]["kind"] == "already_cited"  # S1's database record lists it
    assert [m["kind"] for m in mentions.values() if m["title"] == mixture] == ["recommended"]
    assert stats["already_cited"] == {
        "decided": False,
        "submissions_reviewed": 2,
        "submissions_with_references": 1,
        "submissions_undecided": 1,  # S2 has no record: its recommendations may hold papers it cites
        "recommended_mentions_undecided": 2,
        "references_from": {"database": 1},
        "ambiguous_ids": 0,
    }
    candidates = {c["title"]: (c["role"], c["query_ids"]) for c in read_rows(tmp_path / "out" / "candidates")}
    assert candidates[mixture] == ("positive", ["venue-2023:S1", "venue-2023:S2"])  # the notes' invitations
    # 300 (2021, CS) opens 2020..2022 for both queries (2023): 400 is in; 410 after the window, 500 before it,
    # 600 in another category, 200 (2022) is S1's cited paper, in the window too
    both = ["venue-2023:S1", "venue-2023:S2"]
    assert candidates["Another Control Paper Within the Window"] == ("extension", both)
    assert candidates[gated] == ("extension", both)
    assert not {
        "A Control Paper After the Window",
        "A Control Paper Long Before",
        "A Biology Paper of the Same Year",
    } & set(candidates)
    assert stats["candidates"] == {"extension": 2, "positive": 1, "unresolved_title": 1}


SUBMISSION_TEI = b"""<?xml version="1.0" encoding="UTF-8"?>
<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt><title level="a" type="main">Robust
Control from Pixels</title></titleStmt><sourceDesc><biblStruct><analytic/><monogr><imprint/></monogr></biblStruct>
</sourceDesc></fileDesc></teiHeader><text><body><div><p>As in <ref type="bibr" target="#b0">[1]</ref>.</p></div></body>
<back><div type="references"><listBibl><biblStruct xml:id="b0"><analytic><title level="a" type="main">Mixture
Policies for Robust Control</title></analytic><monogr><title level="j">JMLR</title><imprint><date type="published"
when="2021"/></imprint></monogr></biblStruct></listBibl></div></back></text></TEI>"""
GATED_STRUCT = (
    b'<analytic><title level="a" type="main">Gated controllers for partially observed systems</title></analytic>'
    b'<monogr><title level="m">ICML</title><imprint><date type="published" when="2022"/></imprint></monogr>'
)


@pytest.mark.e2e
def test_submission_pdfs_and_reviewer_reference_strings_go_through_grobid(tmp_path):
    """--pdfs: the submission's own PDF through GROBID decides already_cited; an explicit --grobid_url: each
    reviewer reference string through processCitationList, whose title the mention takes."""
    entry = "Kim, J. and Osei, R. Gated Controllers for Partially Observed Systems. ICML 2022."
    reviews = openreview_notes(
        tmp_path / "notes.jsonl",
        [("S2", "Robust Control from Pixels")],
        [
            (
                "R2",
                "S2",
                "Missing references:\n[1] " + entry + "\n[2] Lee, A. Mixture Policies for Robust Control. JMLR 2021.\n",
            )
        ],
    )
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    pdf = b"%PDF-1.4 a fictional submission\n%%EOF\n"
    (pdfs / "S2.pdf").write_bytes(pdf)
    with FakeGrobid({pdf_hash(pdf): SUBMISSION_TEI}, citation_structs={entry: GATED_STRUCT}) as server:
        stats = run(
            [
                "--runner=FnApiRunner",
                "--reviews",
                str(reviews),
                "--pdfs",
                str(pdfs / "*.pdf"),
                "--grobid_url",
                server.url,
                "--output",
                str(tmp_path / "out"),
            ]
        )
        sent = [raw for form in server.citation_forms for raw in form["citations"]]
    assert sorted(sent) == sorted([entry, "Lee, A. Mixture Policies for Robust Control. JMLR 2021."])
    kinds = {m["title"]: m["kind"] for m in read_rows(tmp_path / "out" / "mentions")}
    assert kinds == {
        "Gated controllers for partially observed systems": "recommended",  # GROBID's title, not the rules' cut
        "Mixture Policies for Robust Control": "already_cited",  # in the bibliography of the submission's PDF
    }
    assert stats["already_cited"]["references_from"] == {"own_paper": 1}
    assert stats["grobid"]["reviewer_references_read_by_grobid"] == 1
    assert stats["options"]["grobid_citations"] is True
