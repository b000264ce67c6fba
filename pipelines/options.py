"""Flags shared by the pipelines. Beam gathers the flags of every `PipelineOptions` subclass imported in a
process into one parser, so a flag name may be defined once only: arsyta and citationr both read their
corpus, database, matching and output flags from here."""

from __future__ import annotations

from apache_beam.options.pipeline_options import PipelineOptions

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
