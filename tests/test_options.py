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


def test_the_run_s_options_build_each_view_once_and_share_its_values():
    """`parse_strict`'s options cache `view_as` per class: the same values as a plain `PipelineOptions` view, one view
    object per class, and a value set through one view seen through the next (as Beam's launcher relies on)."""
    from apache_beam.options.pipeline_options import PipelineOptions, SetupOptions, StandardOptions

    from pipelines.options import CorpusOptions
    from pipelines.outputs import parse_strict

    argv = ["--runner=FnApiRunner", "--output=/tmp/x", "--num_shards=3"]
    options = parse_strict(argv, "test")
    plain = PipelineOptions(argv)
    assert options.view_as(CorpusOptions) is options.view_as(CorpusOptions)
    assert options.view_as(CorpusOptions).get_all_options() == plain.view_as(CorpusOptions).get_all_options()
    assert options.view_as(CorpusOptions).num_shards == 3 and options.view_as(StandardOptions).runner == "FnApiRunner"
    options.view_as(SetupOptions).save_main_session = True
    assert options.view_as(SetupOptions).save_main_session is True
    assert options.get_all_options()["save_main_session"] is True
