"""What Beam's in-process runner costs before it touches an element, and what that leaves of the 100-paper goal.

Issue 39 asks for the arsyta pipeline on `FnApiRunner` at <= 1.5x the plain loop's CPU at 100 papers. This
measures the floor under that figure: the CPU seconds of pipelines that do nothing (one element through chains
of identity `Map`s, and through chains of `GroupByKey` + `Map` stages), fitted to a cost per transform and a cost
per fused stage; then the arsyta pipeline's own count of transforms and stages on the bench's corpus
(`bench/pipeline.py`, built the same way), and the fixed cost those counts alone imply.

    python bench/beam_floor.py --corpus bench/out/pipeline/corpus-1 --json /tmp/beam_floor.json

Each chain runs `--repeat` times in this process after one warm-up run; the figures are medians of process CPU
seconds (user + system). The slope of CPU over chain length is the cost of one more transform (or stage); the
intercept is what an empty pipeline costs. The arsyta counts come from running it once on `--corpus` with the
pipeline's `ParDo`s counted by a visitor and the runner's fused stages counted as it executes them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CHAINS = {"maps": (0, 50, 100), "stages": (0, 20, 40)}
"""Chain lengths: identity `Map`s fused into one stage; `GroupByKey` + `Map` pairs, a stage each."""


def chain_cpu(maps: int, stages: int) -> float:
    """CPU seconds of one `FnApiRunner` run: one element through `stages` GroupByKey + Map pairs, then `maps`
    identity Maps."""
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    start = time.process_time()
    with beam.Pipeline(runner=FnApiRunner(), options=PipelineOptions()) as pipeline:
        items = pipeline | beam.Create([(1, 1)])
        for i in range(stages):
            items = items | f"Group{i}" >> beam.GroupByKey() | f"First{i}" >> beam.Map(lambda kv: (kv[0], kv[1][0]))
        for i in range(maps):
            items = items | f"Same{i}" >> beam.Map(lambda x: x)
    return time.process_time() - start


def slope(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least-squares (slope, intercept) of y over x."""
    xs, ys = [x for x, _ in points], [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    s = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in points) / s
    return b, my - b * mx


def measure_chains(repeat: int) -> dict:
    """Per-transform and per-stage CPU of the runner, from the chains' medians."""
    chain_cpu(1, 1)  # warm-up: first-run imports and caches
    medians: dict[str, list[tuple[int, float]]] = {}
    for kind, lengths in CHAINS.items():
        medians[kind] = []
        for n in lengths:
            runs = [chain_cpu(n, 0) if kind == "maps" else chain_cpu(0, n) for _ in range(repeat)]
            medians[kind].append((n, statistics.median(runs)))
            print(f"{kind:>6} {n:>4}: {statistics.median(runs):.3f} CPU s ({', '.join(f'{r:.3f}' for r in runs)})")
    per_map, empty = slope(medians["maps"])
    per_stage_pair, _ = slope(medians["stages"])
    return {
        "medians": medians,
        "per_transform_s": per_map,
        "per_stage_s": per_stage_pair - per_map,  # a GroupByKey + Map pair is one stage and one Map
        "empty_pipeline_s": empty,
    }


def arsyta_shape(corpus: Path) -> dict:
    """The arsyta pipeline's ParDos (the constructed graph) and fused stages (as the runner executes them) on
    `corpus`, run once into a temporary output."""
    import apache_beam as beam
    from apache_beam.pipeline import PipelineVisitor
    from apache_beam.runners.portability.fn_api_runner import fn_runner

    from bench.pipeline import arsyta_argv
    from pipelines.arsyta import run

    shape = {"pardos": 0, "stages": 0}

    class CountParDos(PipelineVisitor):
        def visit_transform(self, node) -> None:
            shape["pardos"] += isinstance(node.transform, beam.ParDo)

    original_run, original_stages = beam.Pipeline.run, fn_runner.FnApiRunner.run_stages

    def counted_run(pipeline, *args, **kwargs):
        pipeline.visit(CountParDos())
        return original_run(pipeline, *args, **kwargs)

    def counted_stages(runner, stage_context, stages):
        shape["stages"] = len(stages)
        return original_stages(runner, stage_context, stages)

    beam.Pipeline.run, fn_runner.FnApiRunner.run_stages = counted_run, counted_stages
    output = Path(tempfile.mkdtemp(prefix="beam-floor-"))
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            run(arsyta_argv(corpus, output / "out"))
    finally:
        beam.Pipeline.run, fn_runner.FnApiRunner.run_stages = original_run, original_stages
        shutil.rmtree(output, ignore_errors=True)
    return shape


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, help="a corpus of bench/pipeline.py (corpus-N: tei/, metadata)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each chain (default %(default)s)")
    parser.add_argument("--json", default=None, help="write the figures here")
    args = parser.parse_args(argv)

    chains = measure_chains(args.repeat)
    shape = arsyta_shape(Path(args.corpus))
    floor = chains["per_transform_s"] * shape["pardos"] + chains["per_stage_s"] * shape["stages"]
    result = {**chains, "arsyta": shape, "arsyta_floor_s": floor}
    print(
        f"per transform {1000 * chains['per_transform_s']:.2f} ms, per stage {1000 * chains['per_stage_s']:.2f} ms, "
        f"empty pipeline {1000 * chains['empty_pipeline_s']:.0f} ms; arsyta: {shape['pardos']} ParDos in "
        f"{shape['stages']} stages: {floor:.2f} CPU s before any element"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
