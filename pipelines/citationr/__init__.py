"""CitationR: the papers peer reviewers say a submission should have cited, as a dataset (`python -m
pipelines.citationr --help`, docs/citationr.md). One module per stage (reviews, bibliographies, mentions,
resolution, queries), `pipeline` wiring them, `cli` running them; the names other code imports are here.
"""

from pipelines.citationr.bibliographies import DatabaseBibliographies, SubmissionBibliographies
from pipelines.citationr.cli import (
    CITATIONR,
    EXAMPLE,
    CitationrOptions,
    configure,
    example_inputs,
    input_flags,
    main,
    run,
)
from pipelines.citationr.mentions import REFERENCE_ENTRY, MineMentions, MineMentionsFn, ReadReviewerReferences
from pipelines.citationr.pipeline import TABLES, build_pipeline, export_rmc_json
from pipelines.citationr.progress import LOG, NAMESPACE, Progress
from pipelines.citationr.queries import BuildQueries, SelectCandidates
from pipelines.citationr.resolution import (
    ResolveMentions,
    ResolveMentionsFn,
    ResolveNames,
    mention_entry,
    mention_ref,
    name_keys_of,
    resolvable,
)
from pipelines.citationr.reviews import OneReviewPerIdFn, ParseReviewFileFn, ReadReviews

__all__ = [
    "CITATIONR",
    "EXAMPLE",
    "LOG",
    "NAMESPACE",
    "REFERENCE_ENTRY",
    "TABLES",
    "BuildQueries",
    "CitationrOptions",
    "DatabaseBibliographies",
    "MineMentions",
    "MineMentionsFn",
    "OneReviewPerIdFn",
    "ParseReviewFileFn",
    "Progress",
    "ReadReviewerReferences",
    "ReadReviews",
    "ResolveMentions",
    "ResolveMentionsFn",
    "ResolveNames",
    "SelectCandidates",
    "SubmissionBibliographies",
    "build_pipeline",
    "configure",
    "example_inputs",
    "export_rmc_json",
    "input_flags",
    "main",
    "mention_entry",
    "mention_ref",
    "name_keys_of",
    "resolvable",
    "run",
]
