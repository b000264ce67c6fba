"""A monthly refresh of the arXiv citation dataset on Dataflow, as an Airflow DAG.

1. `build_dataset` launches the Flex Template built from examples/dataflow/ (arsyta-metadata.json, the Dockerfile's
   image as launcher and as the workers' SDK container) and waits for the Dataflow job to finish; the job writes
   the dataset, its exports included, into OUTPUT/_staging/.
2. `commit_dataset` commits it: `python -m pipelines.arsyta --commit_only --output OUTPUT` moves the shards into
   place, writes manifest.json and _SUCCESS and prints the summary. It reads back stats.json, the exports' counts
   and the Parquet footers, nothing more, so it runs anywhere citrec and apache-beam[gcp] are installed (here, the
   Airflow worker: `pip install "citrec[dataflow]"`).

Each month writes a new dated OUTPUT, so a rerun never mixes with an earlier dataset. Needs apache-airflow 2.4+
with apache-airflow-providers-google. Set PROJECT, REGION, BUCKET and IMAGE to yours.
"""

from __future__ import annotations

import datetime as dt

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.providers.google.cloud.operators.dataflow import DataflowStartFlexTemplateOperator

PROJECT = "my-project"
REGION = "us-central1"
BUCKET = "gs://my-bucket"
IMAGE = f"{REGION}-docker.pkg.dev/{PROJECT}/citrec/citrec:0.1.0"
TEMPLATE = f"{BUCKET}/templates/arsyta.json"
OUTPUT = f"{BUCKET}/datasets/arsyta/{{{{ ds_nodash }}}}"

ARSYTA_PARAMETERS = {
    "output": OUTPUT,
    "metadata": f"{BUCKET}/arxiv/arxiv-metadata-oai-snapshot.json",
    "s2orc": f"{BUCKET}/unarxive/*.jsonl.gz",
    "recipe": "arsyta",
    "export": "symtax",
    "title_matcher": "auto",
}
"""The Flex Template's parameters (examples/dataflow/arsyta-metadata.json), one flag of pipelines.arsyta each."""

ENVIRONMENT = {
    "sdkContainerImage": IMAGE,
    "tempLocation": f"{BUCKET}/tmp",
    "stagingLocation": f"{BUCKET}/staging",
    "maxWorkers": 32,
    "machineType": "n2-standard-4",
}

with DAG(
    dag_id="citrec_arsyta_refresh",
    description="The arXiv citation dataset, rebuilt monthly on Dataflow",
    schedule="@monthly",
    start_date=dt.datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    tags=["citrec"],
) as dag:
    build_dataset = DataflowStartFlexTemplateOperator(
        task_id="build_dataset",
        project_id=PROJECT,
        location=REGION,
        body={
            "launchParameter": {
                "jobName": "citrec-arsyta-{{ ds_nodash }}",
                "containerSpecGcsPath": TEMPLATE,
                "parameters": ARSYTA_PARAMETERS,
                "environment": ENVIRONMENT,
            }
        },
        wait_until_finished=True,
    )
    commit_dataset = BashOperator(
        task_id="commit_dataset",
        bash_command=f"python -m pipelines.arsyta --commit_only --output {OUTPUT}",
    )
    build_dataset >> commit_dataset
