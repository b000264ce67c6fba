"""Beam pipelines: the arsyta and CitationR datasets, the exports, and what every run does at its edges."""

import logging


class _BeamImportNoise(logging.Filter):
    """Drops the warning Beam logs on the root logger when it is imported without its GCP extra ("apitools not
    found, and bigquery client libraries are not available"): every command, --help included, began with it,
    and it concerns BigQuery, which citrec never uses."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "apitools not found" not in record.getMessage()


logging.getLogger().addFilter(_BeamImportNoise())
