"""TEI files read whole (names ending in `.xml`) are parsed only once known unchanged, so `ParseDocuments` reads them
without the step that waits for every file to be read (`KeepUnchangedFn`), and gives the same documents, dead
letters and counts as the guarded reader; any other pattern keeps the guard."""

from __future__ import annotations

import apache_beam as beam
import pytest
from apache_beam.testing.test_pipeline import TestPipeline
from apache_beam.testing.util import assert_that, equal_to

from pipelines.inputs import ReadConfig, ReadRecords
from pipelines.transforms import DEAD, INPUTS, TALLY, ParseDocuments, names_whole_xml_files
from tests.support.documents import SEGMENTED_TEI


@pytest.mark.parametrize(
    ("pattern", "whole"),
    [
        ("papers/*.tei.xml", True),
        ("papers/*.XML", True),
        ("gs://bucket/tei/*.tei.xml.gz", True),
        ("papers/*", False),
        ("papers/*.xml*", False),
        ("papers/*.jsonl", False),
        ("papers/*.xml.json", False),
        ("papers/x.xml/*", False),
    ],
)
def test_which_patterns_name_only_whole_xml_files(pattern, whole):
    assert names_whole_xml_files(pattern) is whole


def step_names(pipeline: beam.Pipeline) -> list[str]:
    return [t.unique_name for t in pipeline.to_runner_api().components.transforms.values()]


def test_whole_xml_files_are_read_without_waiting_for_every_file(tmp_path):
    pipeline = beam.Pipeline(runner="FnApiRunner")
    _ = pipeline | ParseDocuments([str(tmp_path / "*.tei.xml")], [])
    assert not [name for name in step_names(pipeline) if "KeepUnchanged" in name]
    guarded = beam.Pipeline(runner="FnApiRunner")
    _ = guarded | ParseDocuments([str(tmp_path / "*")], [])
    assert [name for name in step_names(guarded) if "KeepUnchanged" in name]


@pytest.mark.beam
def test_whole_xml_files_give_what_the_guarded_reader_gives(tmp_path):
    (tmp_path / "good.tei.xml").write_bytes(SEGMENTED_TEI)
    (tmp_path / "truncated.tei.xml").write_bytes(SEGMENTED_TEI[:200])
    (tmp_path / "empty.tei.xml").write_bytes(b"")
    pattern = str(tmp_path / "*.tei.xml")
    with TestPipeline(runner="FnApiRunner") as p:
        ours = p | "Ours" >> ParseDocuments([pattern], [])
        theirs = p | "Guarded" >> ReadRecords([pattern], "tei", ReadConfig())
        for name in ("documents", DEAD, TALLY, INPUTS):
            both = []
            for side, outputs in (("Ours", ours), ("Guarded", theirs)):
                elements = outputs["records" if name == "documents" and side == "Guarded" else name]
                if name == TALLY:
                    elements = elements | f"{side}{name}Sums" >> beam.CombinePerKey(sum)
                both.append(
                    elements | f"{side}{name}" >> beam.Map(repr) | f"{side}{name}List" >> beam.combiners.ToList()
                )
            same = both[0] | f"Compare{name}" >> beam.Map(
                lambda mine, reference: (len(mine), sorted(mine) == sorted(reference)),
                beam.pvalue.AsSingleton(both[1]),
            )
            expected = {"documents": 1, DEAD: 2, TALLY: 4, INPUTS: 3}[name]
            assert_that(same, equal_to([(expected, True)]), label=f"Same{name}")
        assert_that(ours["documents"] | beam.Map(lambda d: d.paper_id), equal_to(["2101.00001"]), label="Documents")
