"""What runs on the bundled examples must write, without running anything of citrec: for arsyta, from
`examples/corpus/expected.json` (written by `examples/make_corpus.py` from the same specification as the
documents) and the corpus's own metadata file; for citationr, read by hand from `examples/reviews`."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from pathlib import Path

from tests.support.paths import EXAMPLES, REPO

# The defaults of --validation_from and --test_from, written out here.
VALIDATION_FROM = dt.date(2024, 1, 1)
TEST_FROM = dt.date(2025, 1, 1)


def expected_spec(examples: Path = EXAMPLES) -> dict:
    return json.loads((examples / "expected.json").read_text())


def split_of(day: dt.date) -> str:
    return "test" if day >= TEST_FROM else "validation" if day >= VALIDATION_FROM else "train"


def expected_contexts(expected: dict) -> Counter:
    """Contexts per (citing, cited, split): every resolvable citation, less self-citations and citations of a
    later paper; the split is the citing paper's by its date."""
    dropped = {tuple(pair) for pair in expected["self_citations"] + expected["cited_after_citing"]}
    return Counter(
        (citing, cited, split_of(dt.date.fromisoformat(paper["date"])))
        for citing, paper in expected["papers"].items()
        for cited in paper["cited"]
        if cited is not None and (citing, cited) not in dropped
    )


def contexts_per_split(expected: dict) -> dict[str, int]:
    counts = Counter()
    for (_, _, split), n in expected_contexts(expected).items():
        counts[split] += n
    return {split: counts[split] for split in ("train", "validation", "test")}


def database_papers(examples: Path = EXAMPLES) -> dict[str, dict]:
    """The arXiv metadata records of the example database, by id: the default pool (`--pool database`)."""
    lines = (examples / "metadata" / "arxiv-metadata.jsonl").read_text().splitlines()
    return {record["id"]: record for record in map(json.loads, lines)}


# examples/reviews, read by hand (its README says what each file holds): the papers each submission's reviewers
# ask for that the database holds. SUBA01's first review lists 2101.00101 by arXiv id (its other entry,
# 2203.00202, is already in the submission's bibliography) and its second links arxiv.org/abs/2207.00505;
# SUBB02's RevB1 names two titles; SUBC03's RevC1 quotes one; SUBD04's RevD1 lists two references (an arXiv id and
# a title); SUBE07's RevE1 quotes a title and its RevE2 links arxiv.org/abs/2106.00404. No other review asks for a
# paper. Ids carry the venue each file names: NeurIPS 2023 (PeerRead `conference`), NeurIPS 2024, ICLR 2022 and
# NeurIPS 2025 (the notes' invitations).
REVIEWS_RECOMMEND = {
    "neurips-2023:SUBA01": {"2101.00101", "2207.00505"},
    "neurips-2024:SUBB02": {"2106.00404", "2207.00505"},
    "iclr-2022:SUBC03": {"2110.00606"},
    "neurips-2025:SUBD04": {"2110.00606", "2207.00505"},
    "neurips-2025:SUBE07": {"2207.00505", "2106.00404"},
}
REVIEWS_EXAMPLE = REPO / "examples" / "reviews"


def reviews_database() -> dict[str, dict]:
    """The citationr example's paper database (arXiv snapshot layout), by id; the line without one is left out."""
    lines = (REVIEWS_EXAMPLE / "metadata" / "papers.jsonl").read_text().splitlines()
    return {record["id"]: record for record in map(json.loads, lines) if "id" in record}
