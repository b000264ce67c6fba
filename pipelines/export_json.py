"""Kept for old scripts: `pipelines.exports` with the HAtten layout, written to DATASET/json/ by default.

    python -m pipelines.export_json --dataset out/ [--output out/json]

is `python -m pipelines.exports --dataset out/ --export hatten --output ...` but for the directory: it writes
`papers.json`, `contexts.json`, `train.json`, `val.json`, `test.json` straight into `--output`. See
`pipelines/exports/` and docs/exports.md for the layout and for the other peers (symtax, rmc).
"""

from __future__ import annotations

import argparse

from apache_beam.io.filesystems import FileSystems

from pipelines.exports import export_hatten

export_json = export_hatten
"""The old name of `pipelines.exports.export_hatten`."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True, help="A directory written by pipelines.arsyta.")
    parser.add_argument("--output", help="Where to write the JSON files (default: DATASET/json).")
    args = parser.parse_args(argv)
    output = args.output or FileSystems.join(args.dataset, "json")
    for name, count in export_json(args.dataset, output).items():
        print(f"{name}: {count:,}")


if __name__ == "__main__":
    main()
