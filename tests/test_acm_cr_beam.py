"""`pipelines.acm_cr.ReadAcmCr` on hand-made collection files: records, documents, dead letters, counts and the
`inputs/` rows, a file that cannot be read included."""

from __future__ import annotations

from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipelines.acm_cr import ReadAcmCr, acm_cr_patterns
from pipelines.tallies import DEAD, INPUTS, TALLY

pytestmark = pytest.mark.beam

GOOD_BIB = """@inproceedings{10.1145/1.2,
title = {A Paper},
year = {2019},
}

@inproceedings{10.1145/9.9,
title = {The citing paper},
}

@inbook{10.1145/1.3,
title = {A chapter},
}
"""
COPY_BIB = "@article{10.1145/1.2,\ntitle = {A Paper},\nabstract = {Its abstract.},\n}\n"
CITING = b"""<doc><doi>10.1145/9.9</doi><title>Citing</title><abstract>A.</abstract><contexts>
<context id="01" section="introduction"><s cites="1,2">As in [1].</s></context></contexts>
<references><reference id="1">10.1145/1.2</reference><reference id="2">None</reference></references></doc>"""


def write_collection(root: Path) -> None:
    files = {
        "data/acm-dl/sigir/sigir-2019.bib": GOOD_BIB.encode(),
        "data/acm-dl/journals/forum.bib": COPY_BIB.encode(),
        "data/acm-dl/journals/latin1.bib": "@article{10.1145/1.4,\ntitle = {Caf\xe9},\n}\n".encode("latin-1"),
        "data/topics+qrels/papers/sigir-2020/9.9.xml": CITING,
        "data/topics+qrels/papers/sigir-2020/broken.xml": b"<doc><doi>10.1145/9.8</doi",
        "data/topics+qrels/blacklist.txt": b"10.1145/9.9\n",
    }
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


def test_the_collection_files_become_records_documents_and_dead_letters(tmp_path):
    write_collection(tmp_path)
    root = str(tmp_path)
    with TestPipeline(runner="FnApiRunner") as p:
        read = p | ReadAcmCr(acm_cr_patterns(root))
        assert_that(
            read["papers"] | "Papers" >> beam.Map(lambda x: (x.paper_id, x.abstract)),
            equal_to([("doi:10.1145/1.2", None), ("doi:10.1145/1.2", "Its abstract.")]),  # MergeDatabase merges
            label="CheckPapers",
        )
        assert_that(
            read["documents"] | "Documents" >> beam.Map(lambda d: (d.paper_id, d.year)),
            equal_to([("doi:10.1145/9.9", 2020)]),
            label="CheckDocuments",
        )
        assert_that(
            read[DEAD] | "Dead" >> beam.Map(lambda x: (x.source.removeprefix(f"{root}/"), x.reason)),
            equal_to(
                [
                    ("data/acm-dl/sigir/sigir-2019.bib#10.1145/9.9", "blacklisted"),
                    ("data/acm-dl/sigir/sigir-2019.bib#10.1145/1.3", "entry_type"),
                    ("data/acm-dl/journals/latin1.bib", "undecodable_bytes"),
                    ("data/topics+qrels/papers/sigir-2020/broken.xml", "xml_syntax"),
                    ("data/topics+qrels/papers/sigir-2020/9.9.xml#01/1", "cite_without_marker"),  # cites 2: no [2]
                ]
            ),
            label="CheckDead",
        )
        assert_that(
            read[INPUTS]
            | "Inputs" >> beam.Map(lambda t: (Path(t.path).name, t.records_read, t.parsed, t.dead_lettered)),
            equal_to(
                [
                    ("sigir-2019.bib", 3, 1, 2),
                    ("forum.bib", 1, 1, 0),
                    ("latin1.bib", 1, 0, 1),
                    ("9.9.xml", 1, 1, 0),
                    ("broken.xml", 1, 0, 1),
                ]
            ),
            label="CheckInputs",
        )
        wanted = {
            "documents_in",
            "documents_dead_lettered",
            "metadata_records_in",
            "metadata_records_dead_lettered",
        }
        assert_that(
            read[TALLY] | "Tallies" >> _sum(wanted),
            equal_to(
                [
                    ("documents_dead_lettered", 1),
                    ("documents_in", 2),
                    ("metadata_records_dead_lettered", 3),
                    ("metadata_records_in", 5),
                ]
            ),
            label="CheckTallies",
        )


def _sum(names: set[str]):
    return beam.Filter(lambda kv: kv[0] in names) | beam.CombinePerKey(sum)
