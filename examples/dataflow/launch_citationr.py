"""The Flex Template launcher's program for `pipelines.citationr` (citationr-metadata.json's parameters): it
submits the job and exits, as launch_arsyta.py explains; `python -m pipelines.citationr --commit_only` commits."""

import sys

from pipelines.citationr import main

if __name__ == "__main__":
    main([*sys.argv[1:], "--no_wait_until_finish"])
