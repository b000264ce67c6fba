"""What counting repeated JSON keys costs: the real S2ORC / doc2json documents and the real metadata lines
(S2ORC 2020 sample, arXiv records), decoded by `json.loads` and by `extractors.documents.fields.decode_json`,
and parsed whole by `parse_document` / `parse_metadata_line` (which decode with it).

    python bench/json_keys.py [--repeats 30]

Run it from a checkout before the change too (its `parse_*` lines are then the code before; its decode lines
need `decode_json`). Prints the best of `--repeats` timings of each, per input set.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.shared import shared_data_dir  # noqa: E402
from extractors.documents.files import parse_document, parse_metadata_line  # noqa: E402


def best_of(repeats: int, work: Callable[[], None]) -> float:
    timings = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
    return min(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    shared = shared_data_dir()
    paths = sorted((shared / "s2orc").glob("s2orc-doc2json/*/*.json")) + [
        shared / "s2orc/allenai-s2orc/example_paper.json",
        *sorted((shared / "grobid/s2orc-doc2json").glob("*.json")),
    ]
    documents = [(str(p), p.read_bytes()) for p in paths]
    lines = [
        line
        for name in ("s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl", "arxiv/arxiv-browse_abs_derived.jsonl")
        for line in (shared / name).read_bytes().splitlines()
        if line.strip()
    ]
    try:
        from extractors.documents.fields import decode_json
    except ImportError:  # the code before the change
        decode_json = None
    texts = {"documents": [d.decode("utf-8") for _, d in documents], "metadata": [b.decode("utf-8") for b in lines]}
    print(f"{len(documents)} documents ({sum(len(d) for _, d in documents):,} bytes), {len(lines)} metadata lines")
    for name, items in texts.items():
        plain = best_of(args.repeats, lambda items=items: [json.loads(t) for t in items])
        line = f"{name:9} json.loads {plain * 1e3:7.1f} ms"
        if decode_json is not None:
            counted = best_of(args.repeats, lambda items=items: [decode_json(t) for t in items])
            line += f"   decode_json {counted * 1e3:7.1f} ms ({counted / plain:.2f}x)"
        print(line)
    whole = best_of(args.repeats, lambda: [parse_document(d, p, "s2orc") for p, d in documents])
    print(f"parse_document, every document:   {whole * 1e3:7.1f} ms")
    whole = best_of(max(3, args.repeats // 5), lambda: [parse_metadata_line(b, "m.jsonl:1") for b in lines])
    print(f"parse_metadata_line, every line:  {whole * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
