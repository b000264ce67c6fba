"""Review inputs written by a test: OpenReview API v2 notes of submissions and their official reviews, and S2ORC
metadata records for the paper database a CitationR run resolves against."""

from __future__ import annotations

from pathlib import Path

from tests.support.runs import write_jsonl


def openreview_notes(path: Path, submissions: list[tuple[str, str]], reviews: list[tuple[str, str, str]]) -> Path:
    """OpenReview API v2 notes: submissions (id, title) of 2023 and reviews (id, submission, weaknesses)."""
    records = [
        {
            "id": s,
            "forum": s,
            "invitations": ["Venue/2023/Conference/-/Submission"],
            "cdate": 1680000000000,
            "content": {"title": {"value": t}, "abstract": {"value": "An abstract."}},
        }
        for s, t in submissions
    ] + [
        {
            "id": r,
            "forum": s,
            "replyto": s,
            "invitations": [f"Venue/2023/Conference/{s}/-/Official_Review"],
            "cdate": 1685000000000,
            "content": {"weaknesses": {"value": text}},
        }
        for r, s, text in reviews
    ]
    return write_jsonl(path, records)


def s2orc_record(paper_id: str, title: str, year: int, field: str = "Computer Science", cites: tuple = ()) -> dict:
    """One line of S2ORC metadata: a paper of `field`, citing `cites`."""
    return {
        "paper_id": paper_id,
        "title": title,
        "year": year,
        "mag_field_of_study": [field],
        "outbound_citations": list(cites),
        "authors": [],
        "abstract": None,
    }
