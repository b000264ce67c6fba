"""`bench.citationr.acm_cr_database`: ACM-CR's BibTeX, written as `--metadata` JSONL, reads back as the same papers."""

from __future__ import annotations

from bench.citationr.acm_cr_database import main
from extractors.documents.files import parse_metadata_line

BIB = r"""@inproceedings{10.1145/1111.2222,
author = {Lindqvist, Ada and Ebner, Tomas},
title = {Graph Rewiring for {Long-Range} Message Passing},
year = {2021},
abstract = {A fictional paper.},
}

@article{10.1145/3333.4444,
author = {Quist, Mara},
title = {Spectral Bounds on Oversquashing},
year = {2022},
}

@inproceedings{10.1145/5555.6666,
title = {Session details: Graphs},
year = {2021},
}

@proceedings{10.1145/7777,
title = {Proceedings of a fictional venue},
year = {2021},
}
"""


def test_the_records_read_back_as_the_collections_papers(tmp_path, capsys):
    root = tmp_path / "acm-cr"
    (root / "data" / "acm-dl" / "fict").mkdir(parents=True)
    (root / "data" / "acm-dl" / "fict" / "fict-2021.bib").write_text(BIB)
    output = tmp_path / "out" / "metadata.jsonl"
    main(["--acm_cr", str(root), "--output", str(output)])
    papers = [parse_metadata_line(line, str(output)) for line in output.read_bytes().splitlines()]
    # by hand: the article and the inproceedings are records; the session paper and the @proceedings are not
    assert [(p.paper_id, p.doi, p.title, p.year, p.authors) for p in papers] == [
        (
            "doi:10.1145/1111.2222",
            "10.1145/1111.2222",
            "Graph Rewiring for Long-Range Message Passing",
            2021,
            ("Ada Lindqvist", "Tomas Ebner"),
        ),
        ("doi:10.1145/3333.4444", "10.1145/3333.4444", "Spectral Bounds on Oversquashing", 2022, ("Mara Quist",)),
    ]
    assert papers[0].abstract == "A fictional paper." and papers[1].abstract is None
    printed = capsys.readouterr().out
    assert "4 BibTeX entries: 2 papers written" in printed
    assert "entry_type 1, session_paper 1" in printed
