"""The ACM-CR reader (`extractors.documents.acm_cr`) on hand-made BibTeX and XML, and the `acm-cr` recipe's rules."""

from __future__ import annotations

import datetime as dt
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractors.contexts import cut_contexts
from extractors.dataset import split_for
from extractors.documents.acm_cr import (
    MarkerPiece,
    clean_text,
    marker_pieces,
    one_paper_per_doi,
    parse_bib,
    parse_blacklist,
    parse_citing_paper,
)
from extractors.recipes import PaperRule, recipe_named
from mapping.records import DeadLetter, Paper, ParsedDocument


def _counter() -> tuple[Counter, callable]:
    counts: Counter = Counter()

    def count(name: str, n: int = 1) -> None:
        counts[name] += n

    return counts, count


# JASIST's layout: tab-aligned, values wrapped over lines
JASIST = (
    "@Article{\t  10.5555/1869347.1869363,\n  author\t= {Khalifa, Mohamed},\n"
    "  title\t\t= {Applying Semantic Networks to Hypertext\n\t\t  Design},\n  year\t\t= {2010},\n  month\t\t= aug,\n}\n"
)
BIB = r"""
@inproceedings{10.1145/3383583.3398517,
  author = {Gallina, Ygor and Boudin, Florian and Daille, B\'{e}atrice},
  title = {Large-Scale Evaluation of {Keyphrase} Extraction Models},
  year = {2020},
  doi = {10.1145/3383583.3398517},
  abstract = {Keyphrase extraction models are <i>usually</i> evaluated by 10% &amp; more.},
  keywords = {natural language processing, evaluation},
}

@inproceedings{10.1145/3269206.3271753,
title = {FA + TA <FSA: Flexible Score Aggregation},
year = {2018},
doi = {10.1145/3269206.3271693},
}

@inproceedings{10.1145/1111111.2222222,
title = {Session details: Search},
year = {2001},
}

@inproceedings{10.1145/1111111.3333333,
title = {Session Types in Practice},
abstract = {A real paper whose title starts like a session's.},
year = {2001},
}

@inbook{10.1145/4444444.4444444,
title = {A Chapter},
}

@inproceedings{10.1145/3397271.3401032,
title = {A citing paper},
}

@inproceedings{not-a-doi,
title = {No DOI},
}
"""
BIB = BIB.replace("@inproceedings{10.1145/3269206.3271753", JASIST + "\n@inproceedings{10.1145/3269206.3271753")


def test_bibtex_entries_become_records_or_dead_letters_with_reasons():
    counts, count = _counter()
    blacklist = parse_blacklist("10.1145/3397271.3401032\n\n")
    outcomes = list(parse_bib(BIB, "sigir/sigir-2020.bib", blacklist, count))
    papers = [o for o in outcomes if isinstance(o, Paper)]
    letters = {o.source: o.reason for o in outcomes if isinstance(o, DeadLetter)}
    assert [p.paper_id for p in papers] == [
        "doi:10.1145/3383583.3398517",
        "doi:10.5555/1869347.1869363",  # ACM's unregistered DOI: only the key gives it
        "doi:10.1145/3269206.3271753",  # the key and url agree, the doi field does not: the key wins
        "doi:10.1145/1111111.3333333",  # "Session ..." with an abstract is a paper
    ]
    assert letters == {
        "sigir/sigir-2020.bib#10.1145/1111111.2222222": "session_paper",
        "sigir/sigir-2020.bib#10.1145/4444444.4444444": "entry_type",
        "sigir/sigir-2020.bib#10.1145/3397271.3401032": "blacklisted",
        "sigir/sigir-2020.bib#not-a-doi": "no_doi",
    }
    first = papers[0]
    assert first.title == "Large-Scale Evaluation of Keyphrase Extraction Models"
    assert first.abstract == "Keyphrase extraction models are usually evaluated by 10% & more."
    assert first.authors == ("Ygor Gallina", "Florian Boudin", "Béatrice Daille")
    assert (first.year, first.doi, first.source) == (2020, "10.1145/3383583.3398517", "acm-dl")
    assert papers[1].title == "Applying Semantic Networks to Hypertext Design"
    assert papers[1].abstract is None and papers[1].year == 2010
    assert papers[2].title == "FA + TA <FSA: Flexible Score Aggregation"  # a lone "<" is no tag
    assert counts == {
        "acm_cr_entries": 8,
        "acm_cr_records_with_keywords": 1,
        "acm_cr_doi_field_disagrees_with_key": 1,
    }


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (r"Caf\'{e} au {\"u}ber", "Café au über"),
        (r"Hornb\ae{}k and S\o{}ren Chefa\"{\i}", "Hornbæk and Søren Chefaï"),
        (r"10\texttimes{} faster, by 50% for $5", "10× faster, by 50% for $5"),  # % and $ are text here
        ("x<sup>2</sup> and <inline-formula><tex-math>y</tex-math></inline-formula>", "x2 and y"),
        ("A &lt;b&gt; tag &amp; {BERT}", "A <b> tag & BERT"),
        ("two\n\t\t  lines", "two lines"),
    ],
)
def test_field_values_become_plain_text(raw, text):
    assert clean_text(raw) == text


def test_one_paper_per_doi_merges_copies_field_by_field_whatever_the_order():
    forum = Paper("doi:10.1/a", "Title", None, year=1997, doi="10.1/a", source="acm-dl")
    proceedings = Paper("doi:10.1/a", "Title", "An abstract", year=1997, doi="10.1/a", source="acm-dl")
    other = Paper("doi:10.1/b", "Other", doi="10.1/b", source="acm-dl")
    counts, count = _counter()
    merged = one_paper_per_doi([forum, other, proceedings], count)
    assert merged == one_paper_per_doi([proceedings, other, forum])
    assert [(p.paper_id, p.abstract) for p in merged] == [("doi:10.1/a", "An abstract"), ("doi:10.1/b", None)]
    assert counts == {"acm_cr_copies_merged": 1}


REFS = frozenset(str(n) for n in range(1, 31))


def test_bracket_groups_split_into_one_piece_per_reference_number():
    sentence = "As in [3] and [21, 33]."
    pieces = marker_pieces(sentence, frozenset({"3", "21", "33"}))
    assert pieces == [MarkerPiece(6, 9, "3"), MarkerPiece(14, 19, "21"), MarkerPiece(19, 22, "33")]
    assert [sentence[p.start : p.end] for p in pieces] == ["[3]", "[21, ", "33]"]


def test_a_range_gives_its_first_number_the_piece_and_the_others_its_end():
    sentence = "Shown [13–15, 20]."
    pieces = marker_pieces(sentence, REFS)
    assert pieces == [
        MarkerPiece(6, 14, "13"),
        MarkerPiece(14, 14, "14"),
        MarkerPiece(14, 14, "15"),
        MarkerPiece(14, 17, "20"),
    ]
    assert [sentence[p.start : p.end] for p in pieces] == ["[13–15, ", "", "", "20]"]


@pytest.mark.parametrize(
    "sentence",
    [
        "The interval [−1, 1] is cut.",  # a minus sign: no reference list
        "The token [CLS] starts it.",
        "Cited [31].",  # no reference 31
        "In [1-200] we see.",  # a range no marker spans
        "Quoted: [... a review ...].",
    ],
)
def test_brackets_that_are_no_marker(sentence):
    assert marker_pieces(sentence, REFS) == []


XML = b"""<doc>
  <doi>10.1145/3397271.3401032</doi>
  <title>Measuring Explanation Quality</title>
  <abstract>Explanations matter.</abstract>
  <contexts>
    <context id="01" section="introduction">
      <s>Recommendations are everywhere.</s>
      <s cites="13,14">Explanations help [13, 14], as shown.</s>
      <s>In [20] it was measured.</s>
    </context>
    <context id="02" section="related work">
      <s cites="5,19">Expert systems [5] came first.</s>
      <s cites="7">Later work [6, 7] continued.</s>
    </context>
  </contexts>
  <references>
    <reference id="5">10.1145/1000000.1000005</reference>
    <reference id="6">https://arxiv.org/abs/1409.1556</reference>
    <reference id="7">10.1145/1000000.1000007\t</reference>
    <reference id="13">10.1145/1000000.1000013</reference>
    <reference id="14">None</reference>
    <reference id="19">10.1145/1000000.1000019</reference>
    <reference id="20">https://example.org/paper.pdf</reference>
  </references>
</doc>"""


def test_a_citing_paper_becomes_a_document_and_its_unplaceable_citations_dead_letters():
    counts, count = _counter()
    outcomes = list(parse_citing_paper(XML, "papers/sigir-2020/3397271.3401032.xml", count))
    document, *letters = outcomes
    assert isinstance(document, ParsedDocument)
    assert (document.paper_id, document.doi, document.year) == (
        "doi:10.1145/3397271.3401032",
        "10.1145/3397271.3401032",
        2020,  # from the folder: the XML gives no year
    )
    assert [(p.section_index, p.section_heading) for p in document.paragraphs] == [
        (0, "introduction"),
        (1, "related work"),
    ]
    first = document.paragraphs[0]
    assert (
        first.text == "Recommendations are everywhere. Explanations help [13, 14], as shown. In [20] it was measured."
    )
    assert [first.text[s:e] for s, e in first.sentences] == [
        "Recommendations are everywhere.",
        "Explanations help [13, 14], as shown.",
        "In [20] it was measured.",
    ]
    # [20] is written but not annotated: a marker with no link (masked OTHERCIT, never a context)
    assert [(m.text, m.bib_id) for m in first.mentions] == [("[13, ", "13"), ("14]", "14"), ("[20]", None)]
    second = document.paragraphs[1]
    assert [(m.text, m.bib_id) for m in second.mentions] == [("[5]", "5"), ("[6, ", None), ("7]", "7")]
    entries = {e.bib_id: (e.doi, e.arxiv_id) for e in document.bib_entries}
    assert entries == {
        "5": ("10.1145/1000000.1000005", None),
        "6": (None, "1409.1556"),
        "7": ("10.1145/1000000.1000007", None),  # the tab after the DOI is no part of it
        "13": ("10.1145/1000000.1000013", None),
        "14": (None, None),
        "19": ("10.1145/1000000.1000019", None),
        "20": (None, None),
    }
    assert [(x.source, x.reason) for x in letters] == [
        ("papers/sigir-2020/3397271.3401032.xml#02/1", "cite_without_marker")  # cites 19, which no bracket shows
    ]
    assert counts == {"acm_cr_cites_without_marker": 1}


def test_contexts_of_a_citing_paper_stay_inside_their_excerpt():
    document = next(parse_citing_paper(XML, "papers/sigir-2020/3397271.3401032.xml"))
    resolved = {"5": "doi:10.1145/1000000.1000005", "7": "doi:10.1145/1000000.1000007", "13": "doi:10.1145/x13"}
    counts, count = _counter()
    contexts = {c.cited_id: c for c in cut_contexts(document, resolved, count=count)}
    assert set(contexts) == set(resolved.values())
    assert contexts["doi:10.1145/x13"].sentence_context == (
        "Recommendations are everywhere. Explanations help TARGETCIT OTHERCIT, as shown. In OTHERCIT it was measured."
    )
    # the second excerpt's first sentence has no neighbour before it: the first excerpt is not joined to it
    assert contexts["doi:10.1145/1000000.1000005"].sentence_context == (
        "Expert systems TARGETCIT came first. Later work OTHERCIT OTHERCIT continued."
    )
    assert contexts["doi:10.1145/1000000.1000005"].section_heading == "related work"
    assert counts["dropped_unresolved_reference"] == 1  # 14 is "None"
    assert counts["dropped_unlinked_mention"] == 2  # [20] and [6]


@pytest.mark.parametrize(
    ("data", "reason"),
    [(b"<doc><doi>10.1/x</doi", "xml_syntax"), (b"<doc><doi>None</doi><contexts/></doc>", "no_doi")],
)
def test_a_file_that_is_no_citing_paper_is_one_dead_letter(data, reason):
    assert [(x.source, x.reason) for x in parse_citing_paper(data, "p.xml")] == [("p.xml", reason)]


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=len(XML)), st.binary(max_size=40))
def test_a_truncated_or_corrupted_citing_paper_never_raises(cut, noise):
    for outcome in parse_citing_paper(XML[:cut] + noise, "p.xml"):
        assert isinstance(outcome, ParsedDocument | DeadLetter)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=len(BIB)), st.text(max_size=40))
def test_truncated_or_corrupted_bibtex_never_raises(cut, noise):
    for outcome in parse_bib(BIB[:cut] + noise, "f.bib"):
        assert isinstance(outcome, Paper | DeadLetter)


def test_the_recipe_puts_every_context_in_test_and_takes_only_collection_records():
    recipe = recipe_named("acm-cr")
    for year in (1970, 2020, 2030):
        assert split_for(None, year, recipe.split) == "test"
    record = Paper("doi:10.1/a", "T", None, source="acm-dl")
    citing_only = Paper("doi:10.1/c", "T", "An abstract", source="document")
    assert recipe.pool.why_not(record) is None  # no abstract needed: ACM-CR's collection has title-only records
    assert recipe.pool.why_not(citing_only) == "source"
    assert recipe.inputs == ("acm_cr",)
    assert PaperRule().why_not(citing_only) is None  # no sources named: any record
    assert recipe.as_metadata()["pool"]["sources"] == ["acm-dl"]
    assert dt.date.min == recipe.split.test_from


def test_the_recipe_stops_without_the_collection(tmp_path, capsys):
    from pipelines.arsyta import run

    with pytest.raises(SystemExit) as stop:
        run(["--runner=FnApiRunner", "--recipe", "acm-cr", "--output", str(tmp_path / "o")])
    assert stop.value.code == 2
    assert "--recipe acm-cr reads --acm_cr" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_directory_without_the_collection_stops_before_the_run(tmp_path, capsys):
    from pipelines.arsyta import run

    with pytest.raises(SystemExit) as stop:
        run(["--runner=FnApiRunner", "--recipe", "acm-cr", "--acm_cr", str(tmp_path), "--output", str(tmp_path / "o")])
    assert stop.value.code == 2
    assert "matches no file" in capsys.readouterr().err
