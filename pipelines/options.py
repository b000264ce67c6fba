"""Flags shared by the pipelines. Beam gathers the flags of every `PipelineOptions` subclass imported in a
process into one parser, so a flag name may be defined once only: arsyta and citationr both read their
corpus, database, matching and output flags from here (and citationr its own, `CitationrOptions`)."""

from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

from extractors.reviews.forms import REVIEW_TEXT_FIELDS
from mapping.matcher import MatchConfig
from pipelines.inputs import MAX_DOCUMENT_BYTES, MAX_PDF_BYTES, READ_RANGE_BYTES, ReadConfig
from pipelines.matching import MEMORY_MATCHER_MAX_PAPERS
from pipelines.outputs import fail


def add_input_flag(group, flag: str, help: str) -> None:
    """An input flag: a glob (any Beam filesystem), repeatable; the run gets the list of patterns."""
    group.add_argument(flag, action="append", default=[], help=help)


class CorpusOptions(PipelineOptions):
    @classmethod
    def _add_argparse_args(cls, parser) -> None:
        group = parser.add_argument_group("papers, database and output (shared by arsyta and citationr)")
        add_input_flag(
            group,
            "--tei",
            "GROBID TEI files (glob; repeat the flag for more). GROBID 0.5-0.8. For citationr: the submissions' own "
            "papers.",
        )
        add_input_flag(
            group,
            "--s2orc",
            "S2ORC full text (2019/2020/2021 layouts) or unarXive: .json files, or .jsonl(.gz) with one paper per "
            "line (glob; repeatable).",
        )
        add_input_flag(
            group,
            "--metadata",
            "The paper database: arXiv OAI snapshot JSONL or S2ORC metadata JSONL (glob; repeatable).",
        )
        group.add_argument(
            "--output",
            default=None,
            help="Output directory (any Beam filesystem path). Default: out (arsyta), out/citationr (citationr).",
        )
        group.add_argument(
            "--export",
            action="append",
            default=[],
            metavar="NAME[,NAME]",
            help="After the run, write each named peer's own layout under OUTPUT/export/NAME/, ready for that "
            "peer's code (docs/exports.md). arsyta: hatten (nianlonggu/Local-Citation-Recommendation: "
            "papers.json, contexts.json, train/val/test.json), symtax (goyalkaraniit/SymTax: papers_cat.json, "
            "contexts_new_head.json, train/val/test_data.json); citationr: rmc (ChainsawM/RMC: data/train|val|"
            "test.json, data/base/papers.json, data/base/bibref2info.json). Repeatable; an unknown name stops "
            "the run before it starts.",
        )
        group.add_argument(
            "--export_json",
            action="store_true",
            help="Alias kept for old scripts: --export hatten (arsyta) or --export rmc (citationr), but written "
            "where it always was, OUTPUT/json/, not OUTPUT/export/NAME/.",
        )
        group.add_argument(
            "--num_shards", type=int, default=0, help="Parquet shards per table and split; 0 lets the runner decide."
        )
        group.add_argument(
            "--commit_only",
            action="store_true",
            help="Run no pipeline: commit the dataset a finished job started with Beam's --no_wait_until_finish "
            "left in OUTPUT/_staging/ (manifest.json, _SUCCESS) and print its summary. Needs only --output.",
        )
        group.add_argument(
            "--overwrite",
            action="store_true",
            help="Replace the dataset an earlier citrec run wrote in --output: only the files citrec wrote there "
            "(its manifest's, its _staging/) are removed, and the run says how many first; anything else is kept. "
            "An --output holding files citrec did not write is refused, with or without this flag.",
        )
        group.add_argument(
            "--break_lease",
            action="store_true",
            help="Take --output although another run's lease (_citrec_lease.json) is on it: only when that run is "
            "known to be dead (the refusal says who holds it and whether its process still runs).",
        )
        reading = parser.add_argument_group("reading inputs (shared by arsyta and citationr)")
        reading.add_argument(
            "--max_document_bytes",
            type=int,
            default=MAX_DOCUMENT_BYTES,
            help="Largest document or JSONL line, decompressed; larger ones are dead letters (too_large) and are "
            "never held whole in memory (default %(default)s = 20 MiB).",
        )
        reading.add_argument(
            "--max_pdf_bytes",
            type=int,
            default=MAX_PDF_BYTES,
            help="Largest PDF sent to GROBID; larger ones are dead letters, too_large (default %(default)s = 200 MiB).",
        )
        reading.add_argument(
            "--read_range_bytes",
            type=int,
            default=READ_RANGE_BYTES,
            help="Uncompressed JSONL files larger than this are read in parallel in byte ranges of this size "
            "(default %(default)s = 64 MiB).",
        )
        group.add_argument(
            "--title_min_similarity",
            type=float,
            default=MatchConfig.min_similarity,
            help="LCS similarity a title match needs (default %(default)s).",
        )
        group.add_argument(
            "--title_matcher",
            choices=("auto", "memory", "join"),
            default="auto",
            help="Reference matching (arsyta's bib entries, citationr's mentions): 'memory' holds the database in "
            "one side input (fastest while it fits), 'join' resolves with Beam joins so no worker holds the "
            "database, 'auto' picks 'join' when the metadata is estimated at more than "
            "--memory_matcher_max_papers papers (default %(default)s).",
        )
        group.add_argument(
            "--memory_matcher_max_papers",
            type=int,
            default=MEMORY_MATCHER_MAX_PAPERS,
            help="Estimated database size above which --title_matcher=auto uses the join (default %(default)s).",
        )


def read_config(corpus: CorpusOptions) -> ReadConfig:
    """The reading settings of a run, checked."""
    sizes = {
        "max_document_bytes": corpus.max_document_bytes,
        "max_pdf_bytes": corpus.max_pdf_bytes,
        "read_range_bytes": corpus.read_range_bytes,
    }
    for name, value in sizes.items():
        if value <= 0:
            fail(f"--{name} must be a positive number of bytes, not {value}")
    return ReadConfig(
        max_document_bytes=corpus.max_document_bytes,
        range_bytes=corpus.read_range_bytes,
        max_pdf_bytes=corpus.max_pdf_bytes,
    )


class CitationrOptions(PipelineOptions):
    """`pipelines.citationr`'s own flags. They live here, not in `pipelines/citationr.py`, because that module runs as
    `__main__` and then imports itself under its own name (so that workers unpickle `pipelines.citationr.X`): a
    flags class defined there would be defined twice, and Beam's one parser refuses a flag defined twice."""

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
            "--name_model",
            default="",
            help='Decide the works a reviewer names ("compare with LoRA"), found anywhere in a review, by the '
            "learned name model instead of the name rules: 'builtin' (trained on 955 labelled NeurIPS reviews) or "
            "a JSON file written by bench/name_model.py (read here; its weights travel with the job). Off by "
            "default: on the six labelled samples held out since it was trained (836 ICLR and NeurIPS reviews) its "
            "review precision was 0.77-0.89 against the rules' 0.75-0.89 and its recall 0.62-0.80 against "
            "0.62-0.76; neither meets the targets (docs/citationr.md).",
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
