"""ACM-CR's ACM DL records as a `--metadata` file: a paper database the NeurIPS reviews' recommended works resolve in.

    python -m bench.citationr.acm_cr_database --output out/acm-cr-metadata.jsonl

`pipelines.citationr --metadata` reads arXiv snapshot or S2ORC metadata JSONL; ACM-CR (`../shared/data/acm-cr`) is
BibTeX. Its records are read as `extractors.documents.acm_cr.read_collection` defines the collection (one paper per
DOI; entries that are no record are counted by reason) and written one a line in the S2ORC metadata layout: the DOI
as `paper_id` and `doi`, title, abstract, authors, year. Read back, each line is the same paper (`paper_id`
`doi:<DOI>`). The shared S2ORC and arXiv samples hold none of the works these reviews recommend; ACM-CR's ICML,
JMLR, KDD, CIKM and RecSys records hold some (docs/citationr.md, "The NeurIPS 2023-2025 run").
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from bench.shared import shared_data_dir
from extractors.documents.acm_cr import read_collection
from mapping.records import Paper


def metadata_record(paper: Paper) -> dict[str, object]:
    """One collection paper in the S2ORC metadata layout (`extractors.documents.metadata.paper_from_metadata`)."""
    return {
        "paper_id": paper.doi,
        "title": paper.title,
        "abstract": paper.abstract,
        "authors": list(paper.authors),
        "year": paper.year,
        "doi": paper.doi,
    }


def write_metadata(papers: Iterable[Paper], output: Path) -> int:
    """Write `papers` with a DOI as JSONL to `output`; returns how many lines were written."""
    output.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with output.open("w", encoding="utf-8") as handle:
        for paper in papers:
            if paper.doi:
                handle.write(json.dumps(metadata_record(paper), ensure_ascii=False) + "\n")
                written += 1
    return written


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--acm_cr", type=Path, default=None, help="ACM-CR checkout (default: ../shared/data/acm-cr).")
    parser.add_argument("--output", type=Path, required=True, help="The JSONL file to write.")
    args = parser.parse_args(argv)
    root = args.acm_cr or shared_data_dir() / "acm-cr"
    if not (root / "data" / "acm-dl").is_dir():
        raise SystemExit(f"error: no ACM-CR collection at {root} (data/acm-dl/ is missing)")
    counts: Counter = Counter()
    papers, letters = read_collection(root, lambda name, n: counts.update({name: n}))
    written = write_metadata(papers, args.output)
    reasons = Counter(letter.reason for letter in letters)
    print(f"{counts['acm_cr_entries']:,} BibTeX entries: {written:,} papers written to {args.output}")
    print(f"  copies of one DOI merged: {counts['acm_cr_copies_merged']:,}")
    print("  entries that are no record: " + ", ".join(f"{r} {n:,}" for r, n in sorted(reasons.items())))


if __name__ == "__main__":
    main()
