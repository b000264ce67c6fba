"""Build an ArSyTa-style local citation recommendation dataset from parsed papers.

    python -m pipelines.arsyta --runner=DirectRunner --output out/
    python -m pipelines.arsyta --runner=DirectRunner \\
        --tei 'papers/*.tei.xml' --s2orc 's2orc/*.jsonl' --metadata 'arxiv-metadata.jsonl' --output out/

Without input flags it runs on the bundled example corpus (`examples/corpus`). Every path goes through
Beam's filesystems, so `gs://`, `s3://` and local paths all work, and the same command runs on
DataflowRunner, FlinkRunner or SparkRunner (docs/pipeline.md says how to ship the package).
"""

from __future__ import annotations

import datetime as dt
import logging
import sys
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from operator import attrgetter
from pathlib import Path

import apache_beam as beam
from apache_beam.options.pipeline_options import PipelineOptions

from extractors.clients.grobid import GrobidClient, GrobidOptions, GrobidUnavailable, RetryPolicy
from extractors.contexts import ContextConfig
from extractors.dataset import SplitConfig, dataset_files, dataset_warnings, format_funnel
from extractors.recipes import RECIPES, Recipe, recipe_named
from extractors.schemas import CITATIONS_SCHEMA, CONTEXTS_SCHEMA, PAPERS_SCHEMA, context_row, paper_row
from mapping.matcher import MatchConfig
from pipelines.acm_cr import ReadAcmCr, acm_cr_patterns
from pipelines.exports import NO_EXPORTS, ExportPlan
from pipelines.grobid import GrobidConfig, ParsePdfs, ParseRawReferences
from pipelines.inputs import ReadConfig
from pipelines.matching import ResolveReferencesByJoin, choose_title_matcher
from pipelines.options import CorpusOptions, add_input_flag
from pipelines.outputs import fail
from pipelines.skeleton import DatasetPipeline, Inputs, Plan, RunRequest, Table, WriteDataset
from pipelines.tallies import DEAD, INPUTS, TALLY
from pipelines.transforms import (
    CATEGORIES,
    POOLS,
    AssignSplits,
    CanonicalizeIds,
    CitationGraph,
    CountFigures,
    CutContexts,
    MergeDatabase,
    ParseDocuments,
    ReadPaperDatabase,
    ResolveReferences,
    SelectPapers,
)

LOG = logging.getLogger("pipelines.arsyta")
EXAMPLE_CORPUS = Path(__file__).resolve().parent.parent / "examples" / "corpus"


def _date(value: str) -> str:
    """Validates an ISO date flag; kept a string so that the options serialise for every runner."""
    try:
        dt.date.fromisoformat(value)
    except ValueError as err:
        raise ValueError(f"{value!r} is not a date like 2024-01-01") from err
    return value


class ArsytaOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser) -> None:
        group = parser.add_argument_group("arsyta inputs and outputs")
        add_input_flag(group, "--pdfs", "PDF files (glob; repeatable) to parse through a GROBID server (--grobid_url).")
        group.add_argument(
            "--acm_cr",
            default=None,
            help="A checkout of the ACM-CR test collection (boudinfl/acm-cr): its BibTeX records become the paper "
            "database, its 50 citing papers the documents (use with --recipe acm-cr; docs/recipes.md).",
        )
        grobid = parser.add_argument_group("GROBID, for --pdfs and --grobid_citations")
        grobid.add_argument(
            "--grobid_url", default="http://localhost:8070", help="GROBID server (default %(default)s)."
        )
        grobid.add_argument(
            "--tei_cache",
            default=None,
            help="Directory (any Beam filesystem) caching TEI by PDF hash, GROBID version and options; "
            "a cached PDF is never sent again. Share it between scheduled runs.",
        )
        grobid.add_argument(
            "--retry_failed",
            action="store_true",
            help="Send again the PDFs whose deterministic failure (not a PDF, [BAD_INPUT_DATA], [NO_BLOCKS]) "
            "--tei_cache recorded; by default they are dead-lettered again without a GROBID call.",
        )
        grobid.add_argument(
            "--grobid_concurrency",
            type=int,
            default=4,
            help="Requests in flight per worker process, shared by every GROBID step in it; match the server's "
            "concurrency divided by the processes of all workers (Dataflow runs one per vCPU) "
            "(default %(default)s).",
        )
        grobid.add_argument(
            "--grobid_timeout",
            type=float,
            default=120.0,
            help="Seconds one request may take as a whole: connecting, sending the PDF, GROBID's answer, however "
            "slowly it arrives (default %(default)s).",
        )
        grobid.add_argument(
            "--grobid_retries",
            type=int,
            default=5,
            help="Retries on 503, timeouts, dropped or reset connections and answers that are not a whole GROBID "
            "TEI (default %(default)s).",
        )
        grobid.add_argument("--consolidate_header", action="store_true", help="Ask GROBID to consolidate headers.")
        grobid.add_argument("--consolidate_citations", action="store_true", help="Ask GROBID to consolidate citations.")
        grobid.add_argument(
            "--grobid_citations",
            action="store_true",
            help="Send the raw reference strings of bib entries without a usable title to --grobid_url's "
            "processCitationList (cached in --tei_cache), so that they can resolve by title.",
        )
        algo = parser.add_argument_group("arsyta algorithm settings (recorded in stats.json)")
        algo.add_argument(
            "--recipe",
            choices=list(RECIPES),
            default="citrec",
            help="The dataset definition to build: which citing papers, which candidate pool, which splits "
            "(extractors/recipes.py; README: Recipes). "
            + "; ".join(f"{r.name}: {r.summary}" for r in RECIPES.values())
            + " (default %(default)s)",
        )
        algo.add_argument(
            "--pool",
            choices=list(POOLS),
            default="database",
            help="'database': papers/ holds every database paper in the recipe's pool, cited or not (the candidates "
            "a recommender ranks); 'cited': only the papers some context cites or comes from, for quick work "
            "(default %(default)s).",
        )
        algo.add_argument(
            "--validation_from",
            type=_date,
            default=None,
            help="Citing papers published on or after this date go to validation (--recipe citrec only; default "
            f"{SplitConfig.validation_from.isoformat()}).",
        )
        algo.add_argument(
            "--test_from",
            type=_date,
            default=None,
            help="Citing papers published on or after this date go to test (--recipe citrec only; default "
            f"{SplitConfig.test_from.isoformat()}).",
        )
        algo.add_argument(
            "--char_window",
            type=int,
            default=None,
            help=f"Characters each side of the marker in char_context (--recipe citrec only; default "
            f"{ContextConfig.char_window}).",
        )
        algo.add_argument(
            "--title_max_candidates",
            type=int,
            default=MatchConfig.max_candidates,
            help="MinHash-LSH candidates verified per reference (default %(default)s).",
        )
        algo.add_argument(
            "--title_max_bucket",
            type=int,
            default=MatchConfig.max_bucket,
            help="Papers kept per LSH bucket; the pairs beyond it are counted (default %(default)s).",
        )


def example_inputs() -> dict[str, list[str]]:
    """The bundled example corpus, used when no input flag is given."""
    if not EXAMPLE_CORPUS.is_dir():
        raise SystemExit(
            f"error: no input flags were given and the example corpus is not at {EXAMPLE_CORPUS}; "
            "pass --tei/--s2orc/--metadata, or run from a source checkout (pip install -e .)."
        )
    return {
        "tei": [str(EXAMPLE_CORPUS / "tei" / "*.tei.xml")],
        "s2orc": [str(EXAMPLE_CORPUS / "s2orc" / "*.json*"), str(EXAMPLE_CORPUS / "unarxive" / "*.jsonl")],
        "metadata": [str(EXAMPLE_CORPUS / "metadata" / "*.jsonl")],
    }


def recipe_settings(options: ArsytaOptions) -> tuple[Recipe, SplitConfig, ContextConfig]:
    """The run's recipe, splits and context settings. The split dates and the window may be set by flag only
    for the `citrec` recipe; every other recipe is a published definition and stays as it is (exit 2)."""
    recipe = recipe_named(options.recipe)
    overrides = {
        name: value
        for name, value in (
            ("validation_from", options.validation_from),
            ("test_from", options.test_from),
            ("char_window", options.char_window),
        )
        if value is not None
    }
    if overrides and recipe.name != "citrec":
        flags = ", ".join(f"--{name}" for name in overrides)
        fail(f"--recipe {recipe.name} fixes its splits and window; {flags} can only be given with --recipe citrec")
    try:
        split = SplitConfig(
            validation_from=dt.date.fromisoformat(
                overrides.get("validation_from", recipe.split.validation_from.isoformat())
            ),
            test_from=dt.date.fromisoformat(overrides.get("test_from", recipe.split.test_from.isoformat())),
        )
    except ValueError as err:
        fail(str(err))
    window = overrides.get("char_window", recipe.char_window)
    if window <= 0:
        fail(f"--char_window must be a positive number of characters, not {window}")
    if overrides:
        recipe = replace(recipe, split=split, char_window=window)
    return recipe, split, ContextConfig(char_window=window)


def grobid_config(options: ArsytaOptions) -> GrobidConfig:
    """Check that GROBID is alive and read its version (part of the cache key); stop in one line if not."""
    grobid_options = GrobidOptions(
        consolidate_header=options.consolidate_header, consolidate_citations=options.consolidate_citations
    )
    policy = RetryPolicy(retries=options.grobid_retries, timeout_s=options.grobid_timeout)
    try:
        version = GrobidClient(options.grobid_url, grobid_options, policy).check_alive()
    except GrobidUnavailable as err:
        raise SystemExit(f"error: {err}") from None
    LOG.info("GROBID %s at %s", version, options.grobid_url)
    return GrobidConfig(
        url=options.grobid_url,
        version=version,
        options=grobid_options,
        policy=policy,
        concurrency=options.grobid_concurrency,
        tei_cache=options.tei_cache,
        retry_failed=options.retry_failed,
    )


TABLES = (
    Table("contexts", CONTEXTS_SCHEMA, context_row, split=attrgetter("split")),
    Table("papers", PAPERS_SCHEMA, paper_row),
    Table("citations", CITATIONS_SCHEMA),  # rows already: `CitationGraph` makes them
)
"""The dataset's tables: contexts per split, papers (candidates and citing papers), the citation graph."""


def build_pipeline(
    pipeline: beam.Pipeline,
    inputs: dict[str, list[str]],
    output: str,
    *,
    split: SplitConfig,
    contexts: ContextConfig,
    match: MatchConfig,
    num_shards: int = 0,
    options_record: dict | None = None,
    grobid: GrobidConfig | None = None,
    title_matcher: str = "memory",
    read: ReadConfig | None = None,
    grobid_citations: bool = False,
    recipe: Recipe | None = None,
    pool: str = "cited",
    exports: ExportPlan = NO_EXPORTS,
):
    """Wire the stages; returns the final PCollection (the output directory, once written). `exports`: the peers'
    layouts written in the same job."""
    read = read or ReadConfig()
    parsed = pipeline | "ParseDocuments" >> ParseDocuments(inputs.get("tei", []), inputs.get("s2orc", []), read)
    if inputs.get("acm_cr"):
        acm_cr = pipeline | "ReadAcmCr" >> ReadAcmCr(inputs["acm_cr"], read)
        parsed = {
            key: (parsed[key], acm_cr[key]) | f"With{key.title()}FromAcmCr" >> beam.Flatten()
            for key in ("documents", DEAD, TALLY, INPUTS)
        }
    if inputs.get("pdfs"):
        if grobid is None:
            raise ValueError("PDF inputs need a GrobidConfig")
        pdfs = pipeline | "ParsePdfs" >> ParsePdfs(inputs["pdfs"], grobid, read)
        parsed = {
            key: ((parsed[key], pdfs[key]) | f"With{key.title()}FromPdfs" >> beam.Flatten())
            if key in pdfs
            else parsed[key]
            for key in ("documents", DEAD, TALLY, INPUTS)
        }
    if grobid is not None and grobid_citations:
        cited = parsed["documents"] | "ParseRawReferences" >> ParseRawReferences(grobid, match)
        parsed = {
            **parsed,
            "documents": cited["documents"],
            DEAD: (parsed[DEAD], cited[DEAD]) | "WithCitationDeadLetters" >> beam.Flatten(),
            TALLY: (parsed[TALLY], cited[TALLY]) | "WithCitationTallies" >> beam.Flatten(),
        }
    database = pipeline | "ReadPaperDatabase" >> ReadPaperDatabase(inputs.get("metadata", []), read)
    if inputs.get("acm_cr"):
        papers = (database["papers"], acm_cr["papers"]) | "WithAcmCrPapers" >> beam.Flatten()
        database = {**database, "papers": papers}
    canonical = {"documents": parsed["documents"], "papers": database["papers"]} | "CanonicalizeIds" >> (
        CanonicalizeIds()
    )
    merged = {
        "documents": canonical["documents"],
        "bodies": canonical["bodies"],
        "papers": database["papers"],
    } | "MergeDatabase" >> (MergeDatabase())
    resolver = ResolveReferencesByJoin(match) if title_matcher == "join" else ResolveReferences(match)
    resolved = {"documents": merged["documents"], "database": merged["database"]} | "ResolveReferences" >> resolver
    cut = resolved["documents"] | "CutContexts" >> CutContexts(contexts)
    split_out = {"contexts": cut["contexts"], "database": merged["database"]} | "AssignSplits" >> (
        AssignSplits(split, recipe, database_in_memory=title_matcher == "memory")
    )
    selected = {"contexts": split_out["contexts"], "database": merged["database"]} | "SelectPapers" >> (
        SelectPapers(recipe.pool if recipe is not None else None, pool)
    )
    written = {"contexts": split_out["contexts"], "papers": selected["papers"]}
    graph = written["contexts"] | "CitationGraph" >> CitationGraph()
    written["citations"] = graph["citations"]
    figures = {**written, CATEGORIES: graph[CATEGORIES]} | "CountFigures" >> CountFigures()
    dead = (parsed[DEAD], database[DEAD], merged[DEAD]) | "AllDeadLetters" >> beam.Flatten()
    tallies = (
        parsed[TALLY],
        database[TALLY],
        canonical[TALLY],
        merged[TALLY],
        resolved[TALLY],
        cut[TALLY],
        split_out[TALLY],
        selected[TALLY],
        graph[TALLY],
    ) | "Tallies" >> beam.Flatten()
    accounts = (parsed[INPUTS], database[INPUTS], merged[INPUTS]) | "AllInputs" >> beam.Flatten()
    record = {
        "inputs": inputs,
        "reading": read.as_metadata(),
        "split": split.as_metadata(),
        "contexts": contexts.as_metadata(),
        "matching": {**match.as_metadata(), "matcher": title_matcher},
        **({"recipe": recipe.as_metadata()} if recipe is not None else {}),
        "pool": pool,
        **({"grobid": grobid.as_metadata()} if grobid is not None and (inputs.get("pdfs") or grobid_citations) else {}),
        **({"grobid_citations": True} if grobid is not None and grobid_citations else {}),
        **(options_record or {}),
    }
    return {
        **written,
        **{name: figures[name] for name in ("years", "graph", "plot_sums")},
        DEAD: dead,
        TALLY: tallies,
        INPUTS: accounts,
    } | "WriteDataset" >> WriteDataset(output, num_shards, TABLES, partial(dataset_files, options=record), exports)


# ---------------------------------------------------------------------------------------------------- run


def input_flags(corpus: CorpusOptions, options: ArsytaOptions) -> Inputs:
    acm_cr = {"acm_cr": acm_cr_patterns(options.acm_cr)} if options.acm_cr else {}
    return {"tei": corpus.tei, "s2orc": corpus.s2orc, "pdfs": options.pdfs, "metadata": corpus.metadata, **acm_cr}


def configure(request: RunRequest) -> Plan:
    """The run's recipe, splits, window, matching and GROBID settings, checked before any work; GROBID, when
    PDFs or raw reference strings need it, must answer (its version is part of the cache key)."""
    options = request.options.view_as(ArsytaOptions)
    corpus = request.corpus
    recipe, split, contexts = recipe_settings(options)
    missing = [f"--{flag}" for flag in recipe.inputs if not request.inputs.get(flag)]
    if missing:
        fail(f"--recipe {recipe.name} reads {' and '.join(missing)}, which the run was not given")
    grobid = grobid_config(options) if request.inputs.get("pdfs") or options.grobid_citations else None
    match = MatchConfig(
        min_similarity=request.corpus.title_min_similarity,
        max_candidates=options.title_max_candidates,
        max_bucket=options.title_max_bucket,
    )
    title_matcher, why = choose_title_matcher(request.inputs, corpus.title_matcher, corpus.memory_matcher_max_papers)
    print(f"reference matching: {title_matcher} ({why})", file=sys.stderr)
    build = partial(
        build_pipeline,
        split=split,
        contexts=contexts,
        match=match,
        num_shards=request.corpus.num_shards,
        grobid=grobid,
        title_matcher=title_matcher,
        read=request.read,
        grobid_citations=options.grobid_citations,
        recipe=recipe,
        pool=options.pool,
    )
    return Plan(build)


def committed_rows(stats: Mapping) -> dict[str, int]:
    """The rows stats.json counts in the contexts of each split, the papers, the citation edges and the dead
    letters: what the commit checks the written tables against."""
    return {
        **{f"contexts/{split}": n for split, n in stats["contexts"].items()},
        "papers/papers": stats["papers"],
        "citations/citations": stats["citation_graph"].get("edges", 0),
        "dead_letter/dead_letter": sum(stats["dead_letters"].values()),
    }


ARSYTA = DatasetPipeline(
    name="arsyta",
    description=__doc__,
    options=ArsytaOptions,
    default_output="out",
    input_flags=input_flags,
    example_unless=("tei", "s2orc", "pdfs", "metadata", "acm_cr"),
    example=example_inputs,
    example_note=f"no input flags: using the example corpus in {EXAMPLE_CORPUS}",
    configure=configure,
    summarize=format_funnel,
    warnings=dataset_warnings,
    committed_rows=committed_rows,
)


run = ARSYTA.run
"""Parse flags, run the pipeline to completion, print the funnel, return stats.json's content."""
main = ARSYTA.main


if __name__ == "__main__":
    main()
