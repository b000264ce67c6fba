"""The Flex Template launcher's program for `pipelines.arsyta` (FLEX_TEMPLATE_PYTHON_PY_FILE in the Dockerfile).

The template's parameters (arsyta-metadata.json) arrive as flags, with the Dataflow ones the launcher adds. A
launcher must exit once the job exists, so the job is submitted with Beam's `--no_wait_until_finish`; when it has
finished, `python -m pipelines.arsyta --commit_only --output OUTPUT` commits the dataset (the Airflow DAG in
examples/airflow/ runs both). Nothing the job ships to workers is defined here: this file runs as `__main__`.
"""

import sys

from pipelines.arsyta import main

if __name__ == "__main__":
    main([*sys.argv[1:], "--no_wait_until_finish"])
