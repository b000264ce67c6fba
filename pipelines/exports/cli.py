"""The `python -m pipelines.exports` command. It writes a finished dataset's layouts in one Beam job
(`run_exports`), into the dataset under its lease or into `--output`, and prints one line per layout;
`DESCRIPTION` is its help text."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from apache_beam.io.filesystems import FileSystems

from pipelines.exports.plan import EXPORT_DIR, PIPELINE_EXPORTS, ExportRequest
from pipelines.exports.run import EXPORTERS, run_exports, write_exports
from pipelines.outputs import OneLineArgumentParser, fail
from pipelines.ownership import LeaseHeld

DESCRIPTION = """\
Write a finished dataset in the layout a peer's own code reads: one directory per peer, the files named and
keyed the way that peer's loader opens them, and beside them the peer's run configurations with every top-K kept
within the exported pool (their defaults, up to K = 2,000, stop a small pool with `KeyError: -1`). On a CUDA machine
their scripts run on these files as published; on a CPU-only one each needs a small patch (docs/exports.md).

    python -m pipelines.exports --dataset out/ --export hatten,symtax      # -> out/export/hatten/, out/export/symtax/
    python -m pipelines.exports --dataset out/citationr --export rmc       # -> out/citationr/export/rmc/data/...

The pipelines do the same within a run with `--export NAME[,NAME]`: the layouts are made from the tables' rows in
the same Beam job, written by workers into the staging directory, and committed with the tables. The layouts, read
off each peer's loader (docs/exports.md goes file by file and gives the commands that run their code on these files):

- `hatten` (from a `pipelines.arsyta` dataset), nianlonggu/Local-Citation-Recommendation @ e46cae55
  (src/prefetch/datautils.py, train.py, test.py, get_prefetched_ids.py, compute_papers_embedding.py;
  src/rerank/datautils.py): `papers.json` {paper_id: {title, abstract}}, `contexts.json` {context_id:
  {masked_text, context_id, citing_id, refid}} with masked_text = `char_context` (the 200-character window,
  TARGETCIT/OTHERCIT), `train.json`/`val.json`/`test.json` [{context_id, positive_ids: [cited_id]}].
- `symtax` (from a `pipelines.arsyta` dataset), goyalkaraniit/SymTax @ e3de5b2c (per.py,
  citation_recommender.py, src/rerank/datautils.py, src/rerank/train.py): `papers_cat.json` {paper_id: {title,
  abstract, categories}} with categories[0] the paper's primary arXiv category under the name SymTax's
  category embeddings (Scibert_data.json, Specter_data.json) know it by, one of their 40 cs.* classes;
  `contexts_new_head.json` {context_id: {masked_text, citing_id, ref_id, heading}} with masked_text =
  `sentence_context` (the citing sentence and one on each side); `train_data.json`/`val_data.json`/
  `test_data.json` [{context_id, positive_ids}]. per.py builds its citation graph from the context ids alone
  (`key.split("_")[:2]` = citing, cited), so in this layout every paper id has `%` written `%25` and `_`
  written `%5F`, and every context id is `CITING_CITED_k` over those ids.
- `rmc` (from a `pipelines.citationr` dataset), ChainsawM/RMC @ 89dc46ea (src/datautils/dataset.py,
  src/utils/helper.py::prepare_config, src/modules/rankers.py::get_bib_titles): `data/train.json`,
  `data/val.json`, `data/test.json` [{id, positive_ids}]; `data/base/papers.json` {paper_id: {title, abstract,
  bib_refs: [bibref id]}}; `data/base/bibref2info.json` {bibref id: {title, already_recommended}}; with
  extension candidates (`--candidate_years`) also `data/extended/` = base plus those papers.

Whatever a peer's loader would trip over (a context without text, a paper SymTax has no category embedding
for, a positive with no paper) is left out and counted by reason; the counts come back with the file counts.
Everything is done by Beam workers (`WriteExports`): the command above reads the Parquet tables with
`ReadFromParquet`; papers and contexts are joined by `FanOutJoin`, so a paper cited 100,000 times is no one group;
each file is written in key order from sorted shards by one streaming merge (the section "the files" says why one
worker writes each file: the peers' loaders open one JSON document). The launching machine reads back only each
layout's counts, a few bytes. Every file is in key order, so it does not depend on the order of rows in the shards.
"""
"""`--help`'s text: what the command writes, each layout's files as the peer's loader reads them, and how."""


def main(argv: Sequence[str] | None = None) -> None:
    parser = OneLineArgumentParser(
        prog="python -m pipelines.exports",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Beam's flags (--runner, --project, --region, --temp_location, ...) are passed to the export "
        "pipeline; the default runner is FnApiRunner.",
    )
    parser.add_argument(
        "--dataset", required=True, help="A dataset directory written by pipelines.arsyta or citationr."
    )
    parser.add_argument(
        "--export",
        action="append",
        default=[],
        required=True,
        metavar="NAME[,NAME]",
        help="Layouts to write: hatten, symtax (arsyta datasets), rmc (citationr datasets). Repeatable.",
    )
    parser.add_argument("--output", help="Where the NAME/ directories go (default: DATASET/export).")
    parser.add_argument("--export_unresolved", action="store_true", help="rmc: keep title-only (unresolved) positives.")
    args, beam_args = parser.parse_known_args(argv)
    names = list(dict.fromkeys(n.strip() for value in args.export for n in value.split(",") if n.strip()))
    for name in names:
        if name not in EXPORTERS:
            fail(f"--export {name!r}: choose from {', '.join(EXPORTERS)}")
    requests = [ExportRequest(name, name if args.output else f"{EXPORT_DIR}/{name}") for name in names]
    try:
        flags = {"include_unresolved": args.export_unresolved, "argv": beam_args}
        if args.output:
            root = args.output
            results = run_exports(args.dataset, requests, root, **flags)
        else:
            root = args.dataset
            results = write_exports(args.dataset, requests, **flags)
    except LeaseHeld as err:
        fail(str(err))
    except FileNotFoundError as err:
        wanted = ", ".join(f"--export {n} reads a pipelines.{_pipeline_of(n)} dataset" for n in names)
        fail(f"{err} ({wanted})")
    for request, counts in results:
        print(
            f"{request.name} -> {FileSystems.join(root, request.directory)}: "
            + ", ".join(f"{k} {v:,}" for k, v in counts.items())
        )


def _pipeline_of(name: str) -> str:
    return next(p for p, layouts in PIPELINE_EXPORTS.items() if name in layouts)
