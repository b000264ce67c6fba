"""Fit the learned name decision (`extractors/reviews/mentions/learned.py`) and measure it against the rules
(`bench.citationr.name_model` says how).

    python bench/name_model.py                                         # cross-fitted figures, names (about 1 min)
    python bench/name_model.py --sources all                           # the decision over every mention
    python bench/name_model.py --measure disapere_test                 # and the held-out sample
    python bench/name_model.py --write                                 # refit on every sample, write the model
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.citationr.name_model import main  # noqa: E402

if __name__ == "__main__":
    main()
