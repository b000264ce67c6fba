"""Where the lab finds the real documents: `$CITREC_SHARED_DATA`, else `../shared/data` beside the repository
(see its `MANIFEST.md`)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path:
    """`$CITREC_SHARED_DATA`, else `../shared/data` beside the repository."""
    configured = os.environ.get("CITREC_SHARED_DATA")
    return Path(configured) if configured else REPO.parent / "shared" / "data"
