"""Throughput of the PDF path against a GROBID of known capacity, and the cost of a refresh.

    python bench/grobid_throughput.py --slots 4 --latency 0.25 --pdfs 400

A loopback stand-in that speaks GROBID's API (`bench/grobid_server.py`, in its own process) serves `--slots`
requests at a time, each taking `--latency` seconds, so its capacity is slots / latency PDFs per second. The PDFs
are distinct copies of the real PDFs under ../shared/data/grobid (a PDF comment appended). The arsyta pipeline
(FnApiRunner, one worker, `--grobid_concurrency` = slots) parses them with a TEI cache; we report

- achieved / capacity over the whole run (Beam start-up and writing the dataset included), and over the
  window in which GROBID was working (first request to last answer, timed by the server);
- a refresh over the same PDFs: GROBID calls made and its wall time as a share of the first run's.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.grobid_server import COPY_MARKER, real_pairs, serve_in_subprocess  # noqa: E402
from bench.shared import shared_data_dir  # noqa: E402
from pipelines.arsyta import run  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.25)
    parser.add_argument("--pdfs", type=int, default=400)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    shared = shared_data_dir()
    _, originals = real_pairs(shared)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        blobs = [p.read_bytes() for p in originals]
        for i in range(args.pdfs):
            (folder / f"p{i:05d}.pdf").write_bytes(blobs[i % len(blobs)] + COPY_MARKER + str(i).encode() + b"\n")
        url, stop = serve_in_subprocess(shared, slots=args.slots, latency_s=args.latency)
        try:
            common = [
                "--runner=FnApiRunner",
                "--pdfs",
                str(folder / "*.pdf"),
                "--grobid_url",
                url,
                "--grobid_concurrency",
                str(args.slots),
                "--tei_cache",
                str(Path(tmp) / "cache"),
            ]
            started = time.perf_counter()
            first = run([*common, "--output", str(Path(tmp) / "first")])
            first_s = time.perf_counter() - started
            after_first = requests.get(f"{url}/stats", timeout=10).json()
            calls_first = after_first["calls"]
            busy_window_s = after_first["last_answer"] - after_first["first_request"]
            started = time.perf_counter()
            second = run([*common, "--output", str(Path(tmp) / "second")])
            second_s = time.perf_counter() - started
            after_second = requests.get(f"{url}/stats", timeout=10).json()
            calls_refresh = after_second["calls"] - calls_first
        finally:
            stop()
    capacity = args.slots / args.latency
    window = first["other_counts"].get("grobid_parsed", 0) / capacity  # the least time GROBID needs
    result = {
        "pdfs": args.pdfs,
        "slots": args.slots,
        "latency_s": args.latency,
        "capacity_pdfs_per_s": capacity,
        "first_run_s": round(first_s, 2),
        "achieved_pdfs_per_s": round(args.pdfs / first_s, 2),
        "achieved_over_capacity": round(args.pdfs / first_s / capacity, 3),
        "ideal_grobid_time_s": round(window, 2),
        "grobid_window_s": round(busy_window_s, 2),
        "window_achieved_over_capacity": round(window / busy_window_s, 3),
        "grobid_requests_first_run": calls_first,
        "busy_503_answers": after_first["busy_answers"],
        "refresh_grobid_calls": calls_refresh,
        "refresh_s": round(second_s, 2),
        "refresh_share_of_first": round(second_s / first_s, 3),
        "documents_parsed": [first["funnel"]["documents_parsed"], second["funnel"]["documents_parsed"]],
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
