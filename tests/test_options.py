"""Both pipelines in one process: Beam builds one parser from every PipelineOptions subclass imported, so a
flag defined twice breaks every pipeline run after the second import."""

from apache_beam.options.pipeline_options import PipelineOptions

import pipelines.arsyta
import pipelines.citationr
from pipelines.options import CorpusOptions


def test_arsyta_and_citationr_flags_parse_together():
    options = PipelineOptions(["--tei", "a.xml", "--reviews", "r.json", "--pdfs", "p.pdf", "--num_shards", "3"])
    everything = options.get_all_options()
    assert options.view_as(CorpusOptions).tei == ["a.xml"] and everything["num_shards"] == 3
    assert options.view_as(pipelines.citationr.CitationrOptions).reviews == ["r.json"]
    assert options.view_as(pipelines.arsyta.ArsytaOptions).pdfs == ["p.pdf"]
