"""A corpus for timing ingestion end to end: the example corpus's S2ORC/unarXive papers replicated under new
paper ids (so that every copy resolves its references and gives contexts), the real S2ORC 2020 documents,
and the arXiv metadata of the example plus the 1,191 real arXiv records, as plain and as gzipped JSONL.

    python bench/ingest.py --copies 2000 --out bench/out/ingest
    python -m pipelines.arsyta --runner=FnApiRunner --s2orc 'bench/out/ingest/plain/s2orc/*.jsonl' \\
        --tei 'examples/corpus/tei/*.xml' --metadata 'bench/out/ingest/plain/metadata/*.jsonl' --output /tmp/o
    (the same with gz/ and *.jsonl.gz: the gzipped shards; only the current code reads those)

Prints the number of documents and metadata records written.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.shared import shared_data_dir  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=2000)
    parser.add_argument("--out", default=str(REPO / "bench/out/ingest"))
    args = parser.parse_args()
    shared = shared_data_dir()
    examples = REPO / "examples/corpus"
    templates = [
        json.loads(line)
        for f in ("s2orc/papers.jsonl", "unarxive/papers.jsonl")
        for line in (examples / f).read_text().splitlines()
        if line.strip()
    ]
    documents, metadata = [], []
    for k in range(args.copies):
        template = json.loads(json.dumps(templates[k % len(templates)]))
        arxiv_id = f"2301.{10000 + k:05d}"
        template["paper_id"] = arxiv_id if "_source_hash" in template else f"9{k:07d}"
        if isinstance(template.get("metadata"), dict):
            template["metadata"]["id"] = arxiv_id
        documents.append(json.dumps(template))
        if "_source_hash" not in template:
            metadata.append(
                json.dumps({"paper_id": template["paper_id"], "arxiv_id": arxiv_id, "title": f"Copy {k}", "year": 2023})
            )
        metadata.append(
            json.dumps(
                {
                    "id": arxiv_id,
                    "title": f"Copy {k} of a paper",
                    "abstract": "A copy.",
                    "categories": "cs.IR",
                    "authors": "A. Copy",
                    "versions": [{"version": "v1", "created": "Mon, 2 Jan 2023 10:00:00 GMT"}],
                }
            )
        )
    for path in sorted((shared / "s2orc/s2orc-doc2json/20200705").glob("*.json")):
        documents.append(json.dumps(json.loads(path.read_text())))
    for f in sorted((examples / "metadata").glob("*.jsonl")):
        metadata += [line for line in f.read_text().splitlines() if line.strip()]
    metadata += [line for line in (shared / "arxiv/arxiv-browse_abs_derived.jsonl").read_text().splitlines() if line]
    out = Path(args.out)
    for kind, lines in (("s2orc", documents), ("metadata", metadata)):
        for layout in ("plain", "gz"):
            folder = out / layout / kind
            folder.mkdir(parents=True, exist_ok=True)
            data = ("\n".join(lines) + "\n").encode()
            if layout == "plain":
                (folder / f"{kind}.jsonl").write_bytes(data)
            else:
                (folder / f"{kind}.jsonl.gz").write_bytes(gzip.compress(data))
    print(f"{len(documents)} documents, {len(metadata)} metadata records under {out}")


if __name__ == "__main__":
    main()
