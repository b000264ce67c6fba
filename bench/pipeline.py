"""What Beam costs over a plain loop: the arsyta pipeline on FnApiRunner against a plain Python loop over the
same functions, on corpora of real GROBID TEI replicated under new arXiv ids.

    python bench/pipeline.py                                    # 100, 1,000 and 5,000 papers
    python bench/pipeline.py --papers 100,1000 --json /tmp/pipeline.json
    python bench/pipeline.py --repeat 3                         # three paired runs a size, medians
    python bench/pipeline.py --papers 100,1000 --repeat 3 --baseline ../wt-base   # against another checkout

The corpus of N papers: the real TEI under ../shared/data/grobid (or $CITREC_SHARED_DATA/grobid), copy k of
template k mod 37, with its header ids replaced by the arXiv id 2301.k (its title, markup and bibliography kept,
its running text under a letter substitution of its own, `_disguise_body`, so that copies share no words);
an arXiv-snapshot metadata line for every copy (dated 2023), and one for every distinct bibliography title of
the templates (dated 2015, so that references resolve by title and give contexts).

Each run is a child process of its own, so that its CPU seconds (user + system, `resource.getrusage`, the
child's own and its children's) and its peak resident memory are its own; `cpu_s` counts from after the
imports, `cpu_total_s` from the process start. Beam runs `python -m pipelines.arsyta --runner=FnApiRunner`'s
`run` (one SDK worker, in process: one core, like the loop). The loop does what the pipeline does with the
same functions (`parse_document_file`, `parse_metadata_line`, `merge_paper_group`, `InMemoryMatcher`,
`cut_contexts`, `keep_context`, `date_and_split`, the row functions, `dataset_files`) with dicts for the
joins, times each stage (CPU seconds: the per-stage costs docs/scale.md extrapolates from), and writes the
same tables, with the garbage collector set as the pipeline's in-process run sets it (the objects alive before
frozen, young collections rarer: `pipelines.skeleton.gc_tuned_for_run`); the benchmark checks that both
wrote the same contexts, papers and citations rows. In the Beam run, the bytes every GroupByKey receives (the
runner's shuffle: what a Dataflow job pays shuffle for) are counted per step.

With `--baseline DIR` (a checkout of another revision, e.g. `git worktree add DIR HEAD`) every run is paired with
the same run of DIR's own `bench/pipeline.py` on the same corpus, in turns (baseline loop, loop, baseline Beam,
Beam, then again), so that load on the machine weighs on both sides alike: the ratios this/baseline of each pair,
their median and range, and whether both wrote the same rows.

With `--gc off` every run turns the garbage collector off after its imports: the work without the collector's,
to tell how much of each side's CPU the collector takes (the loop holds the whole parsed corpus, Beam's stages
hand each other encoded bytes).

Prints one line per run and the ratios, and writes everything to --json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from operator import itemgetter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.shared import shared_data_dir  # noqa: E402

TEMPLATE_GLOB = "*/*.tei.xml"
CORPUS_VERSION = 2
"""Bumped when `make_corpus` changes (2: running text disguised per copy): a corpus of another version is made
again, not reused."""
TABLES = ("contexts", "papers", "citations")


# ---------------------------------------------------------------------------------------------- corpus


def copy_id(k: int) -> str:
    """The arXiv id of copy k: 2301.00000, 2301.00001, ... (2302.00000 after 99,999)."""
    return f"23{1 + k // 100_000:02d}.{k % 100_000:05d}"


def make_corpus(papers: int, folder: Path) -> dict[str, int]:
    """`folder/tei/*.tei.xml` (N copies of the real TEI under new arXiv ids) and `folder/metadata.jsonl`."""
    from lxml import etree

    from extractors.documents.tei import TEI_NS, parse_tei

    q = f"{{{TEI_NS}}}"
    templates = sorted((shared_data_dir() / "grobid").glob(TEMPLATE_GLOB))
    if not templates:
        raise SystemExit(f"no TEI under {shared_data_dir() / 'grobid'}")
    tei = folder / "tei"
    tei.mkdir(parents=True, exist_ok=True)
    cited: dict[str, str] = {}
    parsed = [parse_tei(path.read_bytes(), str(path)) for path in templates]
    for document in parsed:
        for entry in document.bib_entries:
            if entry.title and entry.title.lower() not in cited:
                cited[entry.title.lower()] = entry.title
    lines = []
    for k in range(papers):
        template = templates[k % len(templates)]
        root = etree.fromstring(template.read_bytes())
        header = root.find(f"{q}teiHeader/{q}fileDesc")
        source = header.find(f"{q}sourceDesc/{q}biblStruct")
        if source is None:
            desc = header.find(f"{q}sourceDesc")
            if desc is None:
                desc = etree.SubElement(header, f"{q}sourceDesc")
            source = etree.SubElement(desc, f"{q}biblStruct")
        for idno in source.findall(f"{q}idno"):
            source.remove(idno)
        idno = etree.SubElement(source, f"{q}idno", type="arXiv")
        idno.text = copy_id(k)
        _disguise_body(root.find(f"{q}text/{q}body"), k, q)
        (tei / f"copy{k:06d}.tei.xml").write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
        title = parsed[k % len(templates)].title or template.stem
        lines.append(_arxiv_record(copy_id(k), f"{title} (copy {k})", "Mon, 2 Jan 2023 10:00:00 GMT"))
    for j, title in enumerate(sorted(cited.values())):
        lines.append(_arxiv_record(f"1501.{j:05d}", title, "Thu, 1 Jan 2015 10:00:00 GMT"))
    (folder / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    made = {"papers": papers, "cited_papers": len(cited), "tei_bytes": sum(p.stat().st_size for p in tei.iterdir())}
    (folder / "corpus.json").write_text(json.dumps({"version": CORPUS_VERSION, **made}) + "\n")
    return made


def corpus_version(folder: Path) -> int | None:
    try:
        return json.loads((folder / "corpus.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def _disguise_body(body, k: int, q: str) -> None:
    """Copy k's running text under its own substitution of the lower-case letters: the same lengths, markup,
    citation markers, capitals and punctuation (the same parsing and cutting work), but no two copies share their
    words, so compression across documents (batches of contexts citing one paper) gains what it would on a
    corpus of different papers and not what it would on copies. Section headings and the bibliography are kept."""
    if body is None:
        return
    import random
    import string

    letters = list(string.ascii_lowercase)
    random.Random(k).shuffle(letters)
    table = str.maketrans(string.ascii_lowercase, "".join(letters))
    for element in body.iter():
        if not isinstance(element.tag, str):
            continue
        if element.tag not in (f"{q}ref", f"{q}head") and element.text:
            element.text = element.text.translate(table)
        if element.tail and element is not body:
            element.tail = element.tail.translate(table)


def _arxiv_record(arxiv_id: str, title: str, created: str) -> str:
    return json.dumps(
        {
            "id": arxiv_id,
            "title": title,
            "abstract": f"The abstract of {title}.",
            "categories": "cs.CL cs.IR",
            "authors": "A. Author and B. Author",
            "versions": [{"version": "v1", "created": created}],
        }
    )


# ------------------------------------------------------------------------------------------- the loop


class StageClock:
    """CPU seconds (this process's user + system) per named stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def __call__(self, name: str, work: Callable[[], object]):
        start = time.process_time()
        result = work()
        self.seconds[name] = self.seconds.get(name, 0.0) + time.process_time() - start
        return result


def run_loop(corpus: Path, output: Path) -> dict[str, float]:
    """arsyta's stages (`pipelines.arsyta.build_pipeline`, recipe citrec, pool database, in-memory matcher) as a
    loop over the same functions; writes contexts/, papers/ and citations/ like the pipeline. Stage CPU seconds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from extractors.contexts import ContextConfig, cut_contexts
    from extractors.dataset import dataset_files, date_and_split, graph_statistics, plot_key_sums
    from extractors.documents.files import parse_document_file, parse_metadata_line
    from extractors.documents.streams import compression_of, decompressed, iter_lines, read_capped
    from extractors.recipes import keep_context, recipe_named
    from extractors.schemas import (
        CITATIONS_SCHEMA,
        CONTEXTS_SCHEMA,
        PAPERS_SCHEMA,
        SPLITS,
        citation_row,
        context_row,
        paper_row,
    )
    from mapping.ids import key_rank
    from mapping.in_memory import InMemoryMatcher
    from mapping.matcher import MatchConfig
    from mapping.records import Paper, ParsedDocument
    from pipelines.inputs import MAX_DOCUMENT_BYTES
    from pipelines.transforms import citing_fields, merge_paper_group

    clock = StageClock()
    tallies: Counter[str] = Counter()

    def count(name: str, n: int = 1) -> None:
        tallies[name] += n

    recipe = recipe_named("citrec")
    split_config, context_config, match_config = recipe.split, ContextConfig(recipe.char_window), MatchConfig()

    def parse_documents() -> list[ParsedDocument]:
        documents = []
        for path in sorted((corpus / "tei").glob("*.tei.xml")):
            with open(path, "rb") as raw, decompressed(raw, compression_of(str(path))) as handle:
                data = read_capped(handle, MAX_DOCUMENT_BYTES)
            for outcome in parse_document_file(data, str(path), "tei", count):
                if isinstance(outcome, ParsedDocument):
                    documents.append(outcome)
        return documents

    def read_database() -> list[Paper]:
        path = corpus / "metadata.jsonl"
        with open(path, "rb") as handle:
            lines = iter_lines(handle, MAX_DOCUMENT_BYTES)
            outcomes = [parse_metadata_line(line.data, f"{path}:{line.number}") for line in lines]
        return [p for p in outcomes if isinstance(p, Paper)]

    documents = clock("parse_documents", parse_documents)
    papers = clock("read_database", read_database)

    def canonicalize() -> list[ParsedDocument]:
        holders: dict[str, list[str]] = defaultdict(list)
        for paper in papers:
            for key in paper.identifier_keys():
                holders[key].append(paper.paper_id)
        candidates: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for document in documents:
            for key in document.identifier_keys():
                if holders.get(key):
                    candidates[document.source].append((key_rank(key), min(holders[key])))
        renamed = []
        for document in documents:
            chosen = sorted(candidates.get(document.source, ()))
            if chosen and chosen[0][1] != document.paper_id:
                document = document.with_id(chosen[0][1])
            renamed.append(document)
        return renamed

    documents = clock("canonicalize_ids", canonicalize)

    def merge() -> tuple[list[Paper], list[ParsedDocument]]:
        groups: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
        for document in documents:
            groups[document.paper_id][0].append(document)
        for paper in papers:
            groups[paper.paper_id][1].append(paper)
        database, kept = [], []
        for paper_id, (docs, records) in groups.items():
            docs, merged, titled = merge_paper_group(paper_id, docs, records)
            if merged is not None:
                database.append(merged)
            if titled:
                kept.append(docs[0].with_metadata(merged))
        return database, kept

    database, documents = clock("merge_database", merge)
    matcher = clock("build_matcher", lambda: InMemoryMatcher(database, match_config))
    resolved = clock(
        "resolve_references", lambda: [(d, tuple(matcher.resolve_many(d.bib_entries, count))) for d in documents]
    )

    def cut() -> list:
        contexts = []
        for document, resolutions in resolved:
            mapping = {r.bib_id: r.paper_id for r in resolutions}
            contexts.extend(cut_contexts(document, mapping, context_config, count, citing_fields(document)))
        return contexts

    contexts = clock("cut_contexts", cut)
    by_id = {p.paper_id: p for p in database}

    def assign_splits() -> list:
        kept = []
        for context in contexts:
            cited = by_id.get(context.cited_id)
            if cited is not None and not keep_context(context, cited, recipe, count):
                continue
            dated = date_and_split(context, cited, split_config, count)
            if dated is not None:
                kept.append(dated)
        return kept

    contexts = clock("assign_splits", assign_splits)

    def select_papers() -> list[Paper]:
        roles: dict[str, set[str]] = defaultdict(set)
        for context in contexts:
            roles[context.citing_id].add("citing")
            roles[context.cited_id].add("cited")
        selected = []
        for paper in database:
            why_not = recipe.pool.why_not(paper)
            if roles.get(paper.paper_id) or why_not is None:
                selected.append(replace(paper, in_pool=why_not is None))
        return selected

    selected = clock("select_papers", select_papers)

    def figures() -> tuple[list[dict], dict[str, bytes]]:
        headings: dict[tuple[str, str], list] = defaultdict(list)
        for context in contexts:
            headings[(context.citing_id, context.cited_id)].append(context.section_heading)
        citations = [citation_row(citing, cited, h) for (citing, cited), h in headings.items()]
        years = Counter(str(p.year) if p.year else "unknown" for p in selected)
        sums = plot_key_sums(contexts, selected)
        edges = [(row["citing_id"], row["cited_id"]) for row in citations]
        graph = graph_statistics(edges)  # what `pipelines.graph.GraphStatistics` sums across workers
        files = dataset_files(tallies=dict(tallies), graph=graph, years=dict(years), plot_sums=sums, options={})
        return citations, files

    citations, files = clock("figures", figures)

    def write() -> None:
        for split in SPLITS:
            rows = [context_row(c) for c in contexts if c.split == split]
            (output / "contexts").mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(rows, CONTEXTS_SCHEMA), output / "contexts" / f"{split}.parquet")
        for name, rows, schema in (
            ("papers", [paper_row(p) for p in selected], PAPERS_SCHEMA),
            ("citations", citations, CITATIONS_SCHEMA),
        ):
            (output / name).mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pylist(rows, schema), output / name / f"{name}.parquet")
        for name, data in files.items():
            (output / name).parent.mkdir(parents=True, exist_ok=True)
            (output / name).write_bytes(data)

    clock("write_tables", write)
    return clock.seconds


# ------------------------------------------------------------------------------------------ Beam's run


def count_shuffle_bytes() -> dict[str, int]:
    """Bytes each GroupByKey's buffer receives in FnApiRunner (the encoded (key, value) pairs a shuffle moves),
    by the GroupByKey's step name. Wraps the runner's `GroupingBuffer`; a measurement hook, nothing else."""
    from apache_beam.runners.portability.fn_api_runner import execution

    counted: dict[str, int] = Counter()
    original_init, original_append = execution.GroupingBuffer.__init__, execution.GroupingBuffer.append

    def init(self, *args, **kwargs) -> None:
        original_init(self, *args, **kwargs)
        self._bench_step = sys._getframe(1).f_locals.get("original_gbk_transform", "?")  # the caller's step name

    def append(self, elements_data: bytes) -> None:
        counted[self._bench_step] += len(elements_data)
        original_append(self, elements_data)

    execution.GroupingBuffer.__init__, execution.GroupingBuffer.append = init, append
    return counted


def arsyta_argv(corpus: Path, output: Path, matcher: str = "memory") -> list[str]:
    """The flags of one in-process arsyta run over a corpus of `make_corpus`."""
    return [
        "--runner=FnApiRunner",
        "--tei",
        str(corpus / "tei" / "*.tei.xml"),
        "--metadata",
        str(corpus / "metadata.jsonl"),
        "--output",
        str(output),
        f"--title_matcher={matcher}",
    ]


def run_beam(corpus: Path, output: Path, matcher: str = "memory") -> dict[str, int]:
    from pipelines.arsyta import run

    shuffled = count_shuffle_bytes()
    argv = arsyta_argv(corpus, output, matcher)
    stdout = sys.stdout
    sys.stdout = sys.stderr  # the run's summary, out of the way of the child's JSON answer
    try:
        run(argv)
    finally:
        sys.stdout = stdout
    return dict(shuffled)


# What each run imports before its clock starts (the loop's `merge_paper_group` lives in
# pipelines.transforms, so both processes hold Beam's modules).
IMPORTS = {
    "loop": (
        "pyarrow.parquet",
        "extractors.dataset",
        "extractors.contexts",
        "mapping.matcher",
        "pipelines.transforms",
        "pipelines.skeleton",
    ),
    "beam": ("pipelines.arsyta",),
}


def child(mode: str, corpus: Path, output: Path, matcher: str, collector: str = "on") -> None:
    """One run in this process; prints its measurements as one JSON line."""
    import gc
    import importlib

    for module in IMPORTS[mode]:
        importlib.import_module(module)
    if collector == "off":
        gc.disable()
    before = _cpu()
    wall = time.perf_counter()
    if mode == "loop":
        from pipelines.skeleton import gc_tuned_for_run

        with gc_tuned_for_run():  # as the pipeline runs in process (`DatasetPipeline.run`)
            detail = run_loop(corpus, output)
    else:
        detail = run_beam(corpus, output, matcher)
    wall = time.perf_counter() - wall
    after = _cpu()
    peak_kib = max(resource.getrusage(r).ru_maxrss for r in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    result = {
        "cpu_s": round(after - before, 3),
        "cpu_total_s": round(after, 3),
        "wall_s": round(wall, 3),
        "peak_rss_mib": round(peak_kib / 1024, 1),
        ("stages_cpu_s" if mode == "loop" else "shuffle_bytes"): detail,
    }
    print(json.dumps(result))


def _cpu() -> float:
    return sum(
        getattr(resource.getrusage(who), field)
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        for field in ("ru_utime", "ru_stime")
    )


# --------------------------------------------------------------------------------------------- compare


def table_rows(folder: Path, table: str) -> list[str]:
    """A table's rows (all its Parquet files), as sorted JSON lines."""
    import pyarrow.parquet as pq

    rows = [
        json.dumps(row, sort_keys=True, default=str)
        for path in sorted((folder / table).glob("*.parquet"))
        for row in pq.read_table(path).to_pylist()
    ]
    return sorted(rows)


def run_child(
    mode: str, corpus: Path, output: Path, matcher: str, checkout: Path = REPO, collector: str = "on"
) -> dict:
    """One run of `mode` in a child process of `checkout`'s own bench/pipeline.py (this one's by default); with
    `collector` "off", one without the garbage collector (a checkout older than `--gc` refuses it)."""
    if output.exists():
        subprocess.run(["rm", "-rf", str(output)], check=True)
    script = checkout / "bench" / "pipeline.py"
    command = [sys.executable, str(script), "--child", mode, "--corpus", str(corpus), "--run_output", str(output)]
    command += ["--matcher", matcher] + (["--gc", collector] if collector != "on" else [])
    env = {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(checkout)}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=checkout)
    if done.returncode != 0:
        raise SystemExit(f"{mode} run of {checkout} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def ratio_summary(ratios: list[float]) -> dict[str, float]:
    """The median of paired ratios and their range (the interval every pair fell in)."""
    ordered = sorted(ratios)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return {"median": round(median, 3), "low": round(ordered[0], 3), "high": round(ordered[-1], 3)}


def measure_against(
    papers: int,
    out: Path,
    modes: tuple[str, ...],
    baseline: Path,
    matcher: str = "memory",
    repeat: int = 1,
    collector: str = "on",
) -> dict:
    """Each mode run `repeat` times by the baseline checkout and by this one, in turns on the same corpus: the
    CPU seconds of every run, the ratios this/baseline of each pair (and Beam/loop within each side), their
    medians and ranges, and whether both sides wrote the same rows."""
    corpus, made = ensure_corpus(papers, out)
    sides = {"baseline": baseline, "this": REPO}
    runs: dict[str, dict[str, list[dict]]] = {side: {mode: [] for mode in modes} for side in sides}
    for _ in range(repeat):
        for mode in modes:
            for side, checkout in sides.items():
                run = run_child(mode, corpus, out / f"{side}-{mode}-{papers}", matcher, checkout, collector)
                runs[side][mode].append(run)
                print(f"{papers:>6} papers  {side:<8} {mode:<4} {_line(run)}", flush=True)
    result: dict = {"corpus": made, "cpu_s": {}, "papers_per_cpu_s": {}, "ratios": {}}
    for side in sides:
        for mode in modes:
            cpu = [run["cpu_s"] for run in runs[side][mode]]
            result["cpu_s"][f"{side}/{mode}"] = cpu
            result["papers_per_cpu_s"][f"{side}/{mode}"] = ratio_summary([papers / c for c in cpu])
        if len(modes) == 2:
            pairs = zip(runs[side]["beam"], runs[side]["loop"], strict=True)
            result["ratios"][f"{side}/beam_over_loop"] = ratio_summary([b["cpu_s"] / lo["cpu_s"] for b, lo in pairs])
    for mode in modes:
        pairs = zip(runs["this"][mode], runs["baseline"][mode], strict=True)
        result["ratios"][f"{mode}/this_over_baseline"] = ratio_summary([t["cpu_s"] / b["cpu_s"] for t, b in pairs])
    result["same_tables"] = {
        f"{mode}/{table}": table_rows(out / f"this-{mode}-{papers}", table)
        == table_rows(out / f"baseline-{mode}-{papers}", table)
        for mode in modes
        for table in TABLES
    }
    for name, summary in result["ratios"].items():
        print(f"{papers:>6} papers  {name}: {_summary(summary)}", flush=True)
    for name, summary in result["papers_per_cpu_s"].items():
        print(f"{papers:>6} papers  {name}: {_summary(summary)} papers per CPU second", flush=True)
    print(f"{papers:>6} papers  same rows as the baseline: {all(result['same_tables'].values())}", flush=True)
    return result


def _summary(summary: dict[str, float]) -> str:
    return f"{summary['median']:.3f} (range {summary['low']:.3f}-{summary['high']:.3f})"


def ensure_corpus(papers: int, out: Path) -> tuple[Path, dict]:
    """The corpus of `papers` papers under `out`, made unless one of this `CORPUS_VERSION` is there; and what
    `make_corpus` says of it (or that it was reused)."""
    corpus = out / f"corpus-{papers}"
    if corpus_version(corpus) == CORPUS_VERSION:
        return corpus, {"papers": papers, "reused": True}
    shutil.rmtree(corpus, ignore_errors=True)
    return corpus, make_corpus(papers, corpus)


def measure(
    papers: int, out: Path, modes: tuple[str, ...], matcher: str = "memory", repeat: int = 1, collector: str = "on"
) -> dict:
    """Each mode run `repeat` times, in turns (loop, beam, loop, beam, ...); the figures are the runs of median
    CPU, every run's CPU seconds under `repeats`."""
    corpus, made = ensure_corpus(papers, out)
    result: dict = {"corpus": made}
    runs: dict[str, list[dict]] = {mode: [] for mode in modes}
    for _ in range(repeat):
        for mode in modes:
            run = run_child(mode, corpus, out / f"{mode}-{papers}", matcher, collector=collector)
            runs[mode].append(run)
            print(f"{papers:>6} papers  {mode:<4} {_line(run)}", flush=True)
    for mode in modes:
        result[mode] = sorted(runs[mode], key=itemgetter("cpu_s"))[(repeat - 1) // 2]
    if repeat > 1:
        result["repeats"] = {mode: [run["cpu_s"] for run in runs[mode]] for mode in modes}
    if len(modes) == 2:
        result["same_tables"] = {
            table: table_rows(out / f"loop-{papers}", table) == table_rows(out / f"beam-{papers}", table)
            for table in TABLES
        }
        result["rows"] = {table: len(table_rows(out / f"beam-{papers}", table)) for table in TABLES}
        loop, beam = result["loop"], result["beam"]
        result["ratios"] = {
            "cpu": round(beam["cpu_s"] / loop["cpu_s"], 3),
            "cpu_total": round(beam["cpu_total_s"] / loop["cpu_total_s"], 3),
            "peak_rss": round(beam["peak_rss_mib"] / loop["peak_rss_mib"], 3),
        }
        result["papers_per_cpu_s"] = {mode: round(papers / result[mode]["cpu_s"], 2) for mode in modes}
        shuffled = sum(beam["shuffle_bytes"].values())
        result["shuffle_bytes_per_paper"] = round(shuffled / papers)
        print(
            f"{papers:>6} papers  beam/loop: CPU {result['ratios']['cpu']:.2f}x (with imports "
            f"{result['ratios']['cpu_total']:.2f}x), peak memory {result['ratios']['peak_rss']:.2f}x; "
            f"{result['shuffle_bytes_per_paper']:,} shuffle bytes per paper; same tables: "
            f"{all(result['same_tables'].values())} ({result['rows']})",
            flush=True,
        )
    return result


def marginal_costs(sizes: dict[str, dict], modes: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """CPU seconds per paper between consecutive sizes: the cost of a paper without the run's fixed cost."""
    ordered = sorted(sizes, key=int)
    costs = {}
    for small, large in zip(ordered, ordered[1:], strict=False):
        span = {
            mode: (sizes[large][mode]["cpu_s"] - sizes[small][mode]["cpu_s"]) / (int(large) - int(small))
            for mode in modes
        }
        if len(modes) == 2:
            span["ratio"] = span["beam"] / span["loop"]
        costs[f"{small}-{large}"] = {k: round(v, 5) for k, v in span.items()}
    return costs


def _git_state(checkout: Path = REPO) -> dict[str, object]:
    def git(*command: str) -> str:
        done = subprocess.run(["git", *command], cwd=checkout, capture_output=True, text=True)
        return done.stdout.strip()

    return {"commit": git("rev-parse", "HEAD"), "changed_files": len(git("status", "--porcelain").splitlines())}


def _line(run: dict) -> str:
    return (
        f"CPU {run['cpu_s']:8.2f} s (process {run['cpu_total_s']:8.2f} s), wall {run['wall_s']:8.2f} s, "
        f"peak {run['peak_rss_mib']:7.1f} MiB"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--papers", default="100,1000,5000", help="corpus sizes, comma-separated (default %(default)s)")
    parser.add_argument(
        "--out",
        default=str(REPO / "bench/out/pipeline"),
        help="where corpora (reused when present) and run outputs go (default %(default)s)",
    )
    parser.add_argument("--json", default=None, help="the results file (default OUT/pipeline.json)")
    parser.add_argument("--modes", default="loop,beam", help="which runs, comma-separated (default %(default)s)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs of each mode per size, in turns; the figures are the median runs' (default %(default)s)",
    )
    parser.add_argument(
        "--matcher",
        choices=("memory", "join"),
        default="memory",
        help="Beam's --title_matcher; the loop always holds the database in one InMemoryMatcher, and the tables "
        "must come out the same either way (default %(default)s)",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        help="a checkout of another revision (with its own bench/pipeline.py): every run is paired with its run "
        "on the same corpus, in turns, and the ratios this/baseline are reported (see above)",
    )
    parser.add_argument(
        "--gc",
        choices=("on", "off"),
        default="on",
        help="off: every run turns the garbage collector off after its imports (see above; default %(default)s)",
    )
    parser.add_argument("--child", choices=("loop", "beam"), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    parser.add_argument("--run_output", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, Path(args.corpus), Path(args.run_output), args.matcher, args.gc)
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    modes = tuple(m for m in args.modes.split(",") if m)
    load = os.getloadavg()
    results = {
        "load_average_before": [round(x, 2) for x in load],
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "git": _git_state(),
        "matcher": args.matcher,
        "repeat": args.repeat,
        "gc": args.gc,
        "sizes": {},
    }
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs", flush=True)
    sizes = sorted(int(n) for n in args.papers.split(","))
    if args.baseline:
        baseline = Path(args.baseline).resolve()
        results["baseline"] = {"checkout": str(baseline), "commit": _git_state(baseline)["commit"]}
        for papers in sizes:
            results["sizes"][str(papers)] = measure_against(
                papers, out, modes, baseline, args.matcher, args.repeat, args.gc
            )
        return _finish(results, out, args.json)
    for papers in sizes:
        results["sizes"][str(papers)] = measure(papers, out, modes, args.matcher, args.repeat, args.gc)
    results["marginal_cpu_s_per_paper"] = marginal_costs(results["sizes"], modes)
    for span, costs in results["marginal_cpu_s_per_paper"].items():
        line = ", ".join(f"{mode} {cost * 1000:.1f} ms" for mode, cost in costs.items() if mode in modes)
        print(
            f"CPU per extra paper from {span} papers: {line}"
            + (f" ({costs['ratio']:.2f}x)" if "ratio" in costs else "")
        )
    _finish(results, out, args.json)


def _finish(results: dict, out: Path, json_path: str | None) -> None:
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    target = Path(json_path or out / "pipeline.json")
    target.write_text(json.dumps(results, indent=2) + "\n")
    print(f"results written to {target}")


if __name__ == "__main__":
    main()
