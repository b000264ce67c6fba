"""Draw the labelled reviews' samples again, check the label files, and write a sample out for annotators, with
`bench.citationr.sampler`: the samples are the rows of `bench/labels/samples.csv`.

    python bench/labels/sample_reviews.py --check --all                 # every label file holds its sample
    python bench/labels/sample_reviews.py --sample read --check
    python bench/labels/sample_reviews.py --sample test --out /tmp/annot  # batch_A/NNN.txt, ..., sample.json
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.citationr.sampler import main  # noqa: E402

if __name__ == "__main__":
    main()
