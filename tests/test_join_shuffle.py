"""What the title join moves, on hand-made data: titles cross its shuffles with at most `max_candidates` pairs a
reference, and a paper's title never once per reference citing it (the rest travels as ids)."""

from __future__ import annotations

import pytest

from mapping.matcher import MatchConfig
from mapping.records import BibEntry, Paper

pytestmark = pytest.mark.beam

TITLE = "graph neural networks for citation recommendation in large digital libraries"


def _shuffled(
    papers: list[Paper], refs: list[tuple[str, BibEntry]], config: MatchConfig, expected: list, monkeypatch
) -> bytes:
    """Every byte FnApiRunner's GroupByKeys received running `MatchTitles` on these inputs, which must resolve
    them as `expected` says: (ref key, paper id, method)."""
    import apache_beam as beam
    from apache_beam.runners.portability.fn_api_runner import execution
    from apache_beam.testing.test_pipeline import TestPipeline
    from apache_beam.testing.util import assert_that, equal_to

    from pipelines.matching import MatchTitles

    received: list[bytes] = []
    append = execution.GroupingBuffer.append

    def recording(self, elements_data: bytes) -> None:
        received.append(bytes(elements_data))
        append(self, elements_data)

    monkeypatch.setattr(execution.GroupingBuffer, "append", recording)
    with TestPipeline(runner="FnApiRunner") as p:
        inputs = {"papers": p | "Papers" >> beam.Create(papers), "refs": p | "Refs" >> beam.Create(refs)}
        out = inputs | MatchTitles(config)
        found = out["resolutions"] | beam.Map(lambda kr: (kr[0], kr[1].paper_id, kr[1].method))
        assert_that(found, equal_to(expected))
    return b"".join(received)


def _times(data: bytes, title: str) -> int:
    """How often `title` is in the shuffled bytes as a whole string (its length byte, then its bytes)."""
    encoded = title.encode()
    return data.count(bytes([len(encoded)]) + encoded)


def _variant(title: str, position: int) -> str:
    """`title` with the letter at `position` replaced (a near duplicate: LCS similarity (n - 1) / n)."""
    return title[:position] + ("q" if title[position] != "q" else "z") + title[position + 1 :]


def test_titles_cross_the_shuffle_with_at_most_max_candidates_pairs_a_reference(monkeypatch):
    """A reference with 41 candidates that all pass every bound (the exact title and 40 one-letter variants):
    beyond the papers' own records, titles cross the shuffle for at most `max_candidates` pairs, and the exact
    title, proposed by all 25 bands, is among them and wins."""
    config = MatchConfig(max_candidates=3)
    positions = [i for i, c in enumerate(TITLE) if c != " "][:40]
    papers = [Paper("p00", TITLE, year=2020)] + [
        Paper(f"p{k + 1:02d}", _variant(TITLE, i), year=2020) for k, i in enumerate(positions)
    ]
    refs = [("doc\x1f0", BibEntry("b0", title=TITLE.title(), year=2020))]
    titles = sorted({p.title for p in papers})

    database_only = _shuffled(papers, [], config, [], monkeypatch)
    with_reference = _shuffled(papers, refs, config, [("doc\x1f0", "p00", "title")], monkeypatch)

    carried = sum(_times(with_reference, t) - _times(database_only, t) for t in titles)
    assert 1 <= carried <= 1 + config.max_candidates  # the reference's own record, and its capped pairs


def test_a_paper_title_crosses_the_shuffle_as_often_however_many_references_cite_it(monkeypatch):
    """Twenty references citing a paper (by a misspelled title) resolve to it, and its title crosses the shuffle
    as many times as for one reference: candidates travel as ids, the reference's title goes to the paper."""
    config = MatchConfig()
    papers = [
        Paper("a", "Attention is all you need", year=2017),
        Paper("b", "Deep residual learning for image recognition", year=2016),
        Paper("c", "BERT: pre-training of deep bidirectional transformers for language understanding", year=2019),
    ]
    cited = "attention is all you ned"

    def refs(n: int) -> list[tuple[str, BibEntry]]:
        return [(f"d{i}\x1f0", BibEntry("b0", title=cited, year=2017)) for i in range(n)]

    once = _shuffled(papers, refs(1), config, [("d0\x1f0", "a", "title")], monkeypatch)
    twentyfold = _shuffled(papers, refs(20), config, [(f"d{i}\x1f0", "a", "title") for i in range(20)], monkeypatch)

    assert _times(once, "attention is all you need") == _times(twentyfold, "attention is all you need") > 0
