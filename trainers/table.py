"""One table of every recommender in `trainers/` on one dataset: each trained and evaluated by its own command,
as a user would run it, and their `results_*.json` gathered into `table.md` and `table.json`.

    python -m trainers.table --dataset out/ --work runs/table --preset smoke            # minutes on 2 CPU cores
    python -m trainers.table --dataset out/ --work runs/table --model allenai/scibert_scivocab_uncased \\
        --sbert_model sentence-transformers/all-MiniLM-L6-v2 --device cuda

Systems and tasks: docs/trainers.md; commands run and output: commands.log.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

COLUMNS = ("num_queries", "mrr", "recall@5", "recall@10", "recall@20", "ndcg@10", "map", "f1_of_means@20")
HEADERS = ("queries", "MRR", "R@5", "R@10", "R@20", "NDCG@10", "MAP", "F1@20")


def markdown(rows: list[dict]) -> str:
    """`rows` ({system, task, seconds, metrics}) as a Markdown table, figures to 3 places, blanks where absent."""
    lines = [
        "| system | task | " + " | ".join(HEADERS) + " | seconds |",
        "|---|---|" + "---|" * len(HEADERS) + "---|",
    ]
    for row in rows:
        cells = []
        for column in COLUMNS:
            value = row["metrics"].get(column)
            if value is None:
                cells.append("")
            elif column == "num_queries":
                cells.append(f"{int(value):,}")
            else:
                cells.append(f"{value:.3f}")
        lines.append(f"| {row['system']} | {row['task']} | " + " | ".join(cells) + f" | {row['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def renamed(metrics: dict, prefix: str = "", suffix: str = "") -> dict:
    """The metrics under `prefix`/`suffix` names, by their plain names (`enriched_mrr` -> `mrr`)."""
    out = {}
    for name in COLUMNS:
        key = f"{prefix}{name}{suffix}"
        if key in metrics:
            out[name] = metrics[key]
    if "num_queries" not in out and "num_queries" in metrics:
        out["num_queries"] = metrics["num_queries"]
    return out


class Runner:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.work = Path(args.work)
        self.log = self.work / "commands.log"

    def run(self, module: str, *argv: str) -> float:
        """`python -m module argv...`; its seconds. Output goes to commands.log; a failure stops the table."""
        command = [sys.executable, "-m", module, *argv]
        start = time.perf_counter()
        with self.log.open("a", encoding="utf-8") as log:
            log.write("$ " + " ".join(command) + "\n")
            log.flush()
            done = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise SystemExit(f"error: {' '.join(command[2:4])} failed (exit {done.returncode}); see {self.log}")
        seconds = time.perf_counter() - start
        print(f"  {module} {argv[0] if argv else ''}: {seconds:.0f} s", flush=True)
        return seconds


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def reranked(metrics: dict) -> dict:
    """A `trainers.rerank` results file's full metrics: those of its largest reranked pool (`_rerank_top<n>`)."""
    sizes = [int(key.rsplit("top", 1)[1]) for key in metrics if key.startswith("mrr_rerank_top")]
    if not sizes:
        raise SystemExit("error: a reranker results file without mrr_rerank_top<n>")
    return renamed(metrics, suffix=f"_rerank_top{max(sizes)}")


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(
        prog="python -m trainers.table", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dataset", required=True, help="A dataset directory (Parquet shards or the JSON layout).")
    parser.add_argument("--work", required=True, help="Directory for every run, table.md and table.json.")
    parser.add_argument("--preset", choices=("paper", "smoke"), default="smoke", help="Preset for every trainer.")
    parser.add_argument("--split", default="test", choices=("validation", "test"), help="The split reported.")
    parser.add_argument("--model", help="BERT for the rerankers (hub id or directory); smoke: a tiny local one.")
    parser.add_argument("--sbert_model", help="Encoder for Kieu et al. (default: --model).")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda or cuda:N.")
    args = parser.parse_args(argv)

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    runner = Runner(args)
    data, split, device = ["--dataset", args.dataset], args.split, ["--device", args.device]
    preset = ["--preset", args.preset]
    rows: list[dict] = []

    def add(system: str, task: str, seconds: float, metrics: dict) -> None:
        rows.append({"system": system, "task": task, "seconds": seconds, "metrics": metrics})

    model = args.model
    if model is None:
        if args.preset != "smoke":
            raise SystemExit("error: --model is needed with --preset paper (a hub id or a local directory)")
        model = str(work / "tiny-bert")
        runner.run("trainers.tiny_model", *data, "--output", model)
    sbert = args.sbert_model or model

    seconds = runner.run("trainers.bm25", *data, "--split", split, "--output", str(work / "bm25"))
    add("BM25", "local", seconds, read(work / "bm25" / f"results_{split}.json"))

    hatten = str(work / "hatten")
    seconds = runner.run("trainers.hatten", "train", *data, "--output", hatten, *preset, *device, "--no_progress")
    seconds += runner.run("trainers.hatten", "prefetch", *data, "--checkpoint", hatten, *device, "--no_progress",
                          "--split", "train", "validation", split)  # fmt: skip
    seconds += runner.run("trainers.hatten", "evaluate", *data, "--checkpoint", hatten, "--split", split, *device,
                          "--no_progress")  # fmt: skip
    add("HAtten", "local", seconds, read(Path(hatten) / f"results_{split}.json"))

    rerank = str(work / "rerank")
    seconds = runner.run("trainers.rerank", "train", *data, "--prefetched", hatten, "--output", rerank, "--model",
                         model, *preset, *device, "--no_progress")  # fmt: skip
    length = ["--max_length", "128"] if args.preset == "smoke" else []
    seconds += runner.run("trainers.rerank", "evaluate", *data, "--prefetched", hatten, "--checkpoint", rerank,
                          "--split", split, *device, "--no_progress", *length)  # fmt: skip
    add("HAtten + reranker", "local", seconds, reranked(read(Path(rerank) / f"results_rerank_{split}.json")))

    enriched = str(work / "symtax-enrich")
    seconds = runner.run("trainers.symtax", "enrich", *data, "--prefetched", hatten, "--split", split, "--output",
                         enriched)  # fmt: skip
    add("HAtten + SymTax Enricher", "local", seconds, renamed(read(Path(enriched) / f"results_enrich_{split}.json"),
                                                             "enriched_"))  # fmt: skip
    # the reranker writes next to its checkpoint: the HAtten row's file was read above, before this overwrites it
    seconds += runner.run("trainers.rerank", "evaluate", *data, "--prefetched", enriched, "--checkpoint", rerank,
                          "--split", split, *device, "--no_progress", *length)  # fmt: skip
    add("HAtten + Enricher + reranker", "local", seconds, reranked(read(Path(rerank) / f"results_rerank_{split}.json")))

    symtax_rerank = str(work / "symtax-rerank")
    seconds = runner.run("trainers.symtax_rerank", "train", *data, "--prefetched", hatten, "--output", symtax_rerank,
                         "--model", model, *preset, *device, "--no_progress")  # fmt: skip
    seconds += runner.run("trainers.symtax_rerank", "evaluate", *data, "--prefetched", enriched, "--checkpoint",
                          symtax_rerank, "--split", split, *device, "--no_progress", *length)  # fmt: skip
    add("SymTax (HAtten + Enricher + taxonomy reranker)", "local", seconds,
        reranked(read(Path(symtax_rerank) / f"results_rerank_{split}.json")))  # fmt: skip

    cite = str(work / "citeomatic")
    seconds = runner.run("trainers.citeomatic", "train", *data, "--output", cite, *preset, *device, "--no_progress")
    seconds += runner.run("trainers.citeomatic", "evaluate", *data, "--checkpoint", cite, "--split", split,
                          *device, "--no_progress")  # fmt: skip
    add("Citeomatic NNSelect", "global", seconds, read(Path(cite) / f"results_nnselect_{split}.json"))
    add("Citeomatic NNSelect + NNRank", "global", seconds, read(Path(cite) / f"results_{split}.json"))

    kieu = str(work / "sbert")
    seconds = runner.run("trainers.submodular", "train", *data, "--output", kieu, "--model", sbert, *preset, *device,
                         "--no_progress")  # fmt: skip
    seconds += runner.run("trainers.submodular", "evaluate", *data, "--checkpoint", kieu, *preset, "--split", split,
                          *device)  # fmt: skip
    kieu_results = read(Path(kieu) / f"results_{split}.json")
    # MRR and MAP within the selection's K (10) for both rows, so that ranking and selection compare like for like
    plain = {**kieu_results, "mrr": kieu_results.get("mrr@10"), "map": kieu_results.get("map@10")}
    selected = {
        **renamed(kieu_results, suffix="_submodular"),
        "mrr": kieu_results.get("mrr@10_submodular"),
        "map": kieu_results.get("map@10_submodular"),
    }
    add("Kieu et al. SBERT (MRR, MAP within 10)", "local", seconds, plain)
    add("Kieu et al. SBERT + submodular (within 10)", "local", seconds, selected)

    table = markdown(rows)
    (work / "table.md").write_text(table, encoding="utf-8")
    (work / "table.json").write_text(json.dumps(rows, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(table + f"\nwritten to {work / 'table.md'} and {work / 'table.json'}")
    return rows


if __name__ == "__main__":
    main()
