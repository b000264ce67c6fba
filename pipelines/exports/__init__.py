"""The peers' own layouts of our datasets: `--export NAME` and `python -m pipelines.exports`. HAtten's and
SymTax's come from an arsyta dataset, RMC's from a CitationR one, one module each, made and written by Beam
workers; the names below are the API the pipelines and tests use. docs/exports.md goes file by file."""

from pipelines.exports.cli import main
from pipelines.exports.plan import (
    EXPORT_DIR,
    EXPORT_JSON_ALIAS,
    LEGACY_JSON_DIR,
    NO_EXPORTS,
    PIPELINE_EXPORTS,
    ExportPlan,
    ExportRequest,
    export_temp,
    format_export,
    plan_exports,
)
from pipelines.exports.run import (
    EXPORTERS,
    WriteExports,
    export_hatten,
    export_rmc,
    export_symtax,
    read_counts,
    run_exports,
    write_exports,
)
from pipelines.exports.symtax import symtax_classes, symtax_context_id, symtax_id

__all__ = [
    "EXPORTERS",
    "EXPORT_DIR",
    "EXPORT_JSON_ALIAS",
    "LEGACY_JSON_DIR",
    "NO_EXPORTS",
    "PIPELINE_EXPORTS",
    "ExportPlan",
    "ExportRequest",
    "WriteExports",
    "export_hatten",
    "export_rmc",
    "export_symtax",
    "export_temp",
    "format_export",
    "main",
    "plan_exports",
    "read_counts",
    "run_exports",
    "symtax_classes",
    "symtax_context_id",
    "symtax_id",
    "write_exports",
]
