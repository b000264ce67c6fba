"""Export a written dataset to the JSON layout the HAtten and SymTax code reads.

    papers.json    {paper_id: {title, abstract, categories}}
    contexts.json  {context_id: {masked_text, citing_id, refid, heading}}
    train.json / val.json / test.json   [{context_id, positive_ids}]

It reads the Parquet tables back (any Beam filesystem path) and streams the JSON out table by table and
row group by row group, so it runs after the pipeline on the machine that launched it.

    python -m pipelines.export_json --dataset out/ --output out/json
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator

import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems

JSON_SPLITS = {"train": "train", "validation": "val", "test": "test"}


def _tables(directory: str, prefix: str) -> list[str]:
    pattern = FileSystems.join(directory, f"{prefix}*.parquet")
    return sorted(m.path for m in FileSystems.match([pattern])[0].metadata_list)


def _rows(paths: list[str], columns: list[str]) -> Iterator[dict]:
    for path in paths:
        with FileSystems.open(path) as handle:
            parquet = pq.ParquetFile(handle)
            for group in range(parquet.num_row_groups):
                yield from parquet.read_row_group(group, columns=columns).to_pylist()


def _write_object(path: str, items: Iterator[tuple[str, object]]) -> int:
    count = 0
    with FileSystems.create(path) as handle:
        handle.write(b"{")
        for key, value in items:
            handle.write((", " if count else "").encode() + json.dumps(key).encode() + b": ")
            handle.write(json.dumps(value, ensure_ascii=False).encode("utf-8"))
            count += 1
        handle.write(b"}\n")
    return count


def export_json(dataset: str, output: str) -> dict[str, int]:
    """Write the JSON layout of `dataset` under `output`; returns the number of items per file."""
    counts: dict[str, int] = {}
    papers = _tables(FileSystems.join(dataset, "papers"), "papers")
    counts["papers.json"] = _write_object(
        FileSystems.join(output, "papers.json"),
        (
            (
                row["paper_id"],
                {"title": row["title"] or "", "abstract": row["abstract"] or "", "categories": row["categories"] or []},
            )
            for row in _rows(papers, ["paper_id", "title", "abstract", "categories"])
        ),
    )
    contexts_dir = FileSystems.join(dataset, "contexts")
    all_context_tables = [p for split in JSON_SPLITS for p in _tables(contexts_dir, f"{split}-")]
    columns = ["context_id", "citing_id", "cited_id", "char_context", "section_heading"]
    counts["contexts.json"] = _write_object(
        FileSystems.join(output, "contexts.json"),
        (
            (
                row["context_id"],
                {
                    "masked_text": row["char_context"],
                    "citing_id": row["citing_id"],
                    "refid": row["cited_id"],
                    "heading": row["section_heading"] or "",
                },
            )
            for row in _rows(all_context_tables, columns)
        ),
    )
    for split, name in JSON_SPLITS.items():
        rows = [
            {"context_id": row["context_id"], "positive_ids": [row["cited_id"]]}
            for row in _rows(_tables(contexts_dir, f"{split}-"), ["context_id", "cited_id"])
        ]
        rows.sort(key=lambda r: r["context_id"])
        with FileSystems.create(FileSystems.join(output, f"{name}.json")) as handle:
            handle.write(json.dumps(rows).encode("utf-8"))
        counts[f"{name}.json"] = len(rows)
    return counts


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, help="A directory written by pipelines.arsyta.")
    parser.add_argument("--output", help="Where to write the JSON files (default: DATASET/json).")
    args = parser.parse_args(argv)
    output = args.output or FileSystems.join(args.dataset, "json")
    for name, count in export_json(args.dataset, output).items():
        print(f"{name}: {count:,} items")


if __name__ == "__main__":
    main()
