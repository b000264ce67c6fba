"""Recipes (`--recipe`, `extractors/recipes.py`) and the candidate pool (`--pool`).

- ACL-200's split, re-derived from the files HAtten ships (`../shared/data/peers/hatten-acl200`): the year of
  every context's citing ACL Anthology id against the recipe's boundaries.
- Per recipe, a run on real documents (the os-ia-pipegrobid TEI: 30 arXiv preprints) with a paper database
  written here that puts the citing papers before, inside and after the recipe's window and in and out of its
  categories, and gives some cited papers no abstract or a non-CS category; the expected contexts per split
  and the expected `papers/` table are computed from the XML and that database with the publications'
  boundaries copied by hand below (not read from `extractors.recipes`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections import Counter

import pytest
from lxml import etree

from extractors.dataset import split_for
from extractors.recipes import RECIPES, PaperRule, recipe_named
from mapping.records import Context, Paper
from pipelines.arsyta import run
from tests.support.runs import arxiv_record, read_rows, run_arsyta, write_jsonl
from tests.support.tei_xpath import (
    NS,
    XML_ID,
    arxiv_id_in,
    bib_structs,
    bib_title,
    header_arxiv_id,
    idno_arxiv_id,
    linked_refs,
    main_title,
)

D = dt.date
REAL_TEI = "grobid/os-ia-pipegrobid/*.tei.xml"

# The publications' definitions, by hand: citing window, validation/test boundaries, CS only, abstract needed.
# ArSyTa's and RefSeer's val/test dates are citrec's own (their splits are unpublished; docs/recipes.md).
# `pool_since`: the earliest candidate (ACL-200 and arXiv(HAtten) rank older papers too; ArSyTa's papers all
# fall in its window).
PUBLISHED = {
    "hatten-arxiv": {"since": None, "pool_since": None, "until": D(2020, 4, 30), "val": D(2020, 1, 1), "test": D(2020, 3, 1),
                     "cs": False, "abstract": True},
    "acl200": {"since": D(2009, 1, 1), "pool_since": None, "until": D(2015, 12, 31), "val": D(2014, 1, 1), "test": D(2015, 1, 1),
               "cs": False, "abstract": True},
    "arsyta": {"since": D(2007, 4, 1), "pool_since": D(2007, 4, 1), "until": D(2023, 1, 31), "val": D(2022, 1, 1), "test": D(2022, 7, 1),
               "cs": True, "abstract": True},
    "refseer": {"since": None, "pool_since": None, "until": D(2014, 12, 31), "val": D(2013, 1, 1), "test": D(2014, 1, 1),
                "cs": False, "abstract": True},
    "citrec": {"since": None, "pool_since": None, "until": None, "val": D(2024, 1, 1), "test": D(2025, 1, 1), "cs": False,
               "abstract": False},
}  # fmt: skip


def _hash(text: str) -> int:
    return hashlib.sha1(text.encode()).digest()[0]


def _cited_arxiv(struct) -> str | None:
    """The arXiv id a biblStruct gives in an `idno type="arXiv"` or an arxiv.org link (`ptr target`)."""
    links = [t for t in struct.xpath(".//t:ptr/@target", namespaces=NS) if "arxiv.org/" in t]
    return idno_arxiv_id(struct) or arxiv_id_in(" ".join(links))


def _plain(title: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", title.lower()).split())


# --- ACL-200 ---------------------------------------------------------------------------------------------


def test_acl200_split_is_the_one_hatten_ships(shared):
    """Every context of HAtten's ACL-200 files falls in the split the recipe gives its citing paper's year."""
    folder = shared / "peers" / "hatten-acl200"
    recipe = recipe_named("acl200")
    counts: Counter = Counter()
    for name, split in (("train", "train"), ("val", "validation"), ("test", "test")):
        for item in json.loads((folder / f"{name}.json").read_text()):
            citing = item["context_id"].split("_")[0]
            year = 2000 + int(re.match(r"[A-Z](\d\d)-", citing).group(1))
            assert (
                recipe.citing.why_not_citing(Context("c", citing, "x", "b", "", "", None, "", citing_year=year)) is None
            )
            counts[(split, split_for(None, year, recipe.split))] += 1
    assert counts == {("train", "train"): 30_390, ("validation", "validation"): 9_381, ("test", "test"): 9_585}
    assert dict(recipe.published.contexts) == {"train": 30_390, "validation": 9_381, "test": 9_585}


# --- the rules, by hand ----------------------------------------------------------------------------------


def test_paper_rule_reasons():
    rule = PaperRule(require_abstract=True, require_arxiv=True, category_prefixes=("cs.",), since=D(2007, 4, 1),
                     until=D(2023, 1, 31))  # fmt: skip
    good = Paper("p", "A title", "An abstract", date=D(2010, 5, 1), categories=("math.CO", "cs.DM"), arxiv_id="1005.1")
    assert rule.why_not(good) is None
    assert rule.why_not(Paper("p", " ", "An abstract")) == "no_title"
    assert rule.why_not(Paper("p", "T", "")) == "no_abstract"
    assert rule.why_not(Paper("p", "T", "A", categories=("cs.CL",))) == "not_arxiv"
    assert rule.why_not(Paper("p", "T", "A", categories=("math.CO",), arxiv_id="1")) == "category"
    assert rule.why_not(Paper("p", "T", "A", categories=("cs.CL",), arxiv_id="1")) == "date_unknown"
    assert rule.why_not(Paper("p", "T", "A", date=D(2007, 3, 31), categories=("cs.CL",), arxiv_id="1")) == (
        "before_window"
    )
    assert rule.why_not(Paper("p", "T", "A", date=D(2007, 4, 1), categories=("cs.CL",), arxiv_id="1")) is None
    assert rule.why_not(Paper("p", "T", "A", date=D(2023, 1, 31), categories=("cs.CL",), arxiv_id="1")) is None
    assert rule.why_not(Paper("p", "T", "A", date=D(2023, 2, 1), categories=("cs.CL",), arxiv_id="1")) == (
        "after_window"
    )
    # a year alone counts as 1 January
    assert rule.why_not(Paper("p", "T", "A", year=2023, categories=("cs.CL",), arxiv_id="1")) is None
    assert rule.why_not(Paper("p", "T", "A", year=2007, categories=("cs.CL",), arxiv_id="1")) == "before_window"


def test_every_recipe_is_recorded_and_frozen():
    for recipe in RECIPES.values():
        record = recipe.as_metadata()
        assert json.loads(json.dumps(record)) == record  # plain JSON for stats.json and the card
        assert record["split"]["validation_from"] <= record["split"]["test_from"]
        with pytest.raises(AttributeError):
            recipe.name = "other"  # type: ignore[misc]


# --- real documents, per recipe --------------------------------------------------------------------------


def _citing_dates(bounds: dict) -> list[dt.date]:
    """Dates that put citing papers before the window, in each split and after the window."""
    val, test = bounds["val"], bounds["test"]
    dates = [D(val.year - 2, 6, 1), val - dt.timedelta(days=1), val, test - dt.timedelta(days=1), test]
    if bounds["since"]:
        dates.append(bounds["since"] - dt.timedelta(days=1))
    if bounds["until"]:
        dates += [bounds["until"], bounds["until"] + dt.timedelta(days=1)]
    return dates


def build_database(shared, tmp_path, bounds: dict):
    files = sorted((shared / "grobid" / "os-ia-pipegrobid").glob("*.tei.xml"))
    dates = _citing_dates(bounds)
    cited_date = bounds["since"] or D(bounds["val"].year - 5, 1, 1)
    database: dict[str, dict] = {}
    citing: dict[str, object] = {}
    unnamed: set[str] = set()
    for path in files:
        tree = etree.parse(str(path))
        own = header_arxiv_id(tree)
        if not own:
            unnamed.add(path.name.split(".")[0])  # the pipeline names it by its file stem
            continue
        k = len(citing)
        citing[own] = tree
        database[own] = {
            "id": own,
            "title": main_title(tree) or f"Untitled {own}",
            "abstract": "The citing paper's abstract.",
            "date": dates[k % len(dates)],
            "categories": "math.CO" if k % 4 == 3 else "cs.CL stat.ML",
        }
    for tree in citing.values():
        for struct in bib_structs(tree):
            cited = _cited_arxiv(struct)
            if cited and cited not in database:
                database[cited] = {
                    "id": cited,
                    "title": bib_title(struct) or f"Untitled {cited}",
                    "abstract": "" if _hash(cited) % 3 == 0 else "A cited paper's abstract.",
                    "date": cited_date,
                    "categories": "math.PR" if _hash(cited) % 5 == 0 else "cs.LG",
                }
    extra = [  # uncited papers: (abstract, categories)
        ("9901.00001", "An abstract.", "cs.IR"),
        ("9901.00002", "", "cs.IR"),
        ("9901.00003", "An abstract.", "q-bio.NC"),
    ]
    for paper_id, abstract, categories in extra:
        database[paper_id] = {"id": paper_id, "title": f"An uncited paper {paper_id}", "abstract": abstract,
                              "date": cited_date, "categories": categories}  # fmt: skip
    records = [arxiv_record(p["id"], p["title"], p["date"], p["categories"], p["abstract"]) for p in database.values()]
    return citing, database, write_jsonl(tmp_path / "metadata.jsonl", records), unnamed


def expected_dataset(citing: dict, database: dict, bounds: dict, unnamed: set[str]) -> tuple[Counter, set[str]]:
    """Contexts per split and the papers/ ids, from the XML and the database, by the rules written out here."""

    def in_window(day: dt.date, since: dt.date | None) -> bool:
        return (since is None or day >= since) and (bounds["until"] is None or day <= bounds["until"])

    def is_cs(paper: dict) -> bool:
        return any(c.startswith("cs.") for c in paper["categories"].split())

    def in_pool(paper: dict) -> bool:
        return (
            (not bounds["abstract"] or bool(paper["abstract"]))
            and (not bounds["cs"] or is_cs(paper))
            and in_window(paper["date"], bounds["pool_since"])
        )

    # a bib entry without an arXiv id resolves by its title when another one gave the database that title
    by_title = {_plain(paper["title"]): p for p, paper in database.items() if p not in citing}
    per_split: Counter = Counter()
    citing_kept: set[str] = set()
    for own, tree in citing.items():
        paper = database[own]
        if not in_window(paper["date"], bounds["since"]) or (bounds["cs"] and not is_cs(paper)):
            continue
        bibs = {}
        for struct in bib_structs(tree):
            cited = _cited_arxiv(struct) or by_title.get(_plain(bib_title(struct)))
            if cited:
                bibs[struct.get(XML_ID)] = cited
        for bib_id, _ in linked_refs(tree):
            cited = bibs.get(bib_id)
            if cited is None or cited == own or not in_pool(database[cited]):
                continue
            if database[cited]["date"] > paper["date"]:
                continue
            day = paper["date"]
            split = "test" if day >= bounds["test"] else "validation" if day >= bounds["val"] else "train"
            per_split[split] += 1
            citing_kept.add(own)
    papers = {p for p, paper in database.items() if in_pool(paper)} | citing_kept
    if not bounds["abstract"] and not bounds["cs"] and bounds["until"] is None:
        papers |= unnamed  # a pool asking nothing also holds the documents the database does not know (no date)
    return per_split, papers


@pytest.mark.e2e
@pytest.mark.parametrize("name", list(PUBLISHED))
def test_recipe_on_real_documents(shared, tmp_path, name):
    bounds = PUBLISHED[name]
    citing, database, metadata, unnamed = build_database(shared, tmp_path, bounds)
    out = tmp_path / "out"
    stats = run_arsyta(shared / REAL_TEI, metadata, out, "--recipe", name)
    per_split, papers = expected_dataset(citing, database, bounds, unnamed)
    assert sum(per_split.values()) > 0, "the database must leave some contexts for the check to mean anything"
    assert stats["contexts"] == {s: per_split.get(s, 0) for s in ("train", "validation", "test")}
    for split in ("train", "validation", "test"):
        for row in read_rows(out / "contexts", f"{split}-*.parquet"):
            day = row["citing_date"]
            assert split == ("test" if day >= bounds["test"] else "validation" if day >= bounds["val"] else "train")
            if bounds["cs"]:
                assert any(c.startswith("cs.") for c in row["citing_categories"])
                assert any(c.startswith("cs.") for c in row["cited_categories"])
    table = read_rows(out / "papers")
    assert {r["paper_id"] for r in table} == papers
    uncited = {r["paper_id"]: r["in_pool"] for r in table if r["paper_id"].startswith("9901.")}
    assert uncited.get("9901.00001") is True  # an uncited paper with an abstract is a candidate
    assert ("9901.00002" in uncited) == (not bounds["abstract"])  # without one, only where none is needed
    assert ("9901.00003" in uncited) == (not bounds["cs"])
    assert stats["options"]["recipe"]["name"] == name
    assert stats["options"]["pool"] == "database"


@pytest.mark.e2e
def test_pool_cited_keeps_only_papers_in_use(shared, tmp_path):
    _, _, metadata, _ = build_database(shared, tmp_path, PUBLISHED["hatten-arxiv"])
    out = tmp_path / "out"
    run_arsyta(shared / REAL_TEI, metadata, out, "--recipe", "hatten-arxiv", "--pool", "cited")
    rows = read_rows(out / "contexts")
    in_use = {r["citing_id"] for r in rows} | {r["cited_id"] for r in rows}
    table = {r["paper_id"] for r in read_rows(out / "papers")}
    assert table == in_use
    assert not any(p.startswith("9901.") for p in table)


@pytest.mark.e2e
def test_published_recipes_refuse_their_settings_by_flag(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        run(["--runner=FnApiRunner", "--recipe", "hatten-arxiv", "--test_from", "2021-01-01", "--output",
             str(tmp_path / "o")])  # fmt: skip
    assert stop.value.code == 2
    assert "--recipe hatten-arxiv fixes its splits" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
