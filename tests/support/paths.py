"""Where the tests find the repository, the bundled example corpus and the real documents."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "corpus"


def real_documents_dir() -> Path | None:
    """`$CITREC_SHARED_DATA`, else `../shared/data` beside the repository, when it holds the real documents."""
    configured = os.environ.get("CITREC_SHARED_DATA")
    path = Path(configured) if configured else REPO.parent / "shared" / "data"
    return path if (path / "MANIFEST.md").is_file() else None
