"""The published datasets' definitions as data: which citing papers, which candidate pool, which context view
and which splits a run builds (`python -m pipelines.arsyta --recipe NAME`).

A recipe is a frozen dataclass; the pipeline reads its fields and nowhere branches on its name. Each recipe
records its publication's figures (`Published`), so that a run's statistics print beside them, and where citrec
cannot follow the publication (`deviations`). The sources and how each definition was established:
docs/recipes.md.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field

from extractors.dataset import SplitConfig, effective_date
from extractors.documents.acm_cr import SOURCE as ACM_DL
from mapping.records import Context, CounterFn, Paper, no_count

CONTEXT_VIEWS = ("char", "sentence", "both")


@dataclass(frozen=True)
class Published:
    """The figures a publication prints for its dataset (None: not published, or not available here)."""

    source: str
    contexts: Mapping[str, int] | None = None  # per split: train, validation, test
    papers: int | None = None  # the candidate pool
    years: str | None = None  # the citing papers' year range
    avg_clustering: float | None = None
    avg_degree: float | None = None
    note: str = ""

    def as_metadata(self) -> dict[str, object]:
        record = asdict(self)
        record["contexts"] = dict(self.contexts) if self.contexts is not None else None
        return record


@dataclass(frozen=True)
class PaperRule:
    """Which papers qualify: a title, an abstract, an arXiv id, one of the category prefixes, a record of one of
    `sources`, first version within [since, until] (a paper known only by its year counts as published on 1
    January)."""

    require_title: bool = True
    require_abstract: bool = True
    require_arxiv: bool = False  # an arXiv id (the arXiv datasets' pools are arXiv papers only)
    category_prefixes: tuple[str, ...] = ()  # e.g. ("cs.",); empty: any category, or none
    # `Paper.source` of the record a paper must have (("acm-dl",): a closed collection's records only, not a paper
    # known only from a citing document); empty: any
    sources: tuple[str, ...] = ()
    since: dt.date | None = None
    until: dt.date | None = None

    def why_not(self, paper: Paper) -> str | None:
        """None when `paper` qualifies, else the first reason it does not (a counter suffix)."""
        if self.require_title and not (paper.title or "").strip():
            return "no_title"
        if self.require_abstract and not (paper.abstract or "").strip():
            return "no_abstract"
        if self.require_arxiv and not paper.arxiv_id:
            return "not_arxiv"
        if self.category_prefixes and not any(c.startswith(self.category_prefixes) for c in (paper.categories or ())):
            return "category"
        if self.sources and paper.source not in self.sources:
            return "source"
        return self._why_not_dated(paper.date, paper.year)

    def why_not_citing(self, context: Context) -> str | None:
        """The same rule for the paper a context comes from, by the context's citing fields (its categories and
        date; the citing paper's title and abstract are not asked for: the context is the query)."""
        if self.category_prefixes and not any(
            c.startswith(self.category_prefixes) for c in (context.citing_categories or ())
        ):
            return "category"
        return self._why_not_dated(context.citing_date, context.citing_year)

    def _why_not_dated(self, date: dt.date | None, year: int | None) -> str | None:
        if self.since is None and self.until is None:
            return None
        when = effective_date(date, year)
        if when is None:
            return "date_unknown"
        if self.since is not None and when < self.since:
            return "before_window"
        if self.until is not None and when > self.until:
            return "after_window"
        return None

    def as_metadata(self) -> dict[str, object]:
        return {
            "require_title": self.require_title,
            "require_abstract": self.require_abstract,
            "require_arxiv": self.require_arxiv,
            "category_prefixes": list(self.category_prefixes),
            "since": self.since.isoformat() if self.since else None,
            "until": self.until.isoformat() if self.until else None,
            **({"sources": list(self.sources)} if self.sources else {}),
        }


@dataclass(frozen=True)
class Recipe:
    """One dataset definition. `citing`: the papers whose contexts are kept; `pool`: the candidate papers (the
    `papers/` table, and the only papers a context may cite: a context citing a paper outside it is dropped and
    counted); `split`: the date boundaries, applied to the citing paper's first version; `context_view`: the
    view the published dataset uses (both are always written; exports pick this one)."""

    name: str
    summary: str
    citing: PaperRule
    pool: PaperRule
    split: SplitConfig
    char_window: int = 200
    context_view: str = "both"
    published: Published | None = None
    deviations: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)
    inputs: tuple[str, ...] = ()  # the input flags the recipe reads (`acm_cr`); a run without one of them stops

    def __post_init__(self) -> None:
        if self.context_view not in CONTEXT_VIEWS:
            raise ValueError(f"context_view must be one of {CONTEXT_VIEWS}, not {self.context_view!r}")

    def as_metadata(self) -> dict[str, object]:
        return {
            "name": self.name,
            "summary": self.summary,
            "citing": self.citing.as_metadata(),
            "pool": self.pool.as_metadata(),
            "split": self.split.as_metadata(),
            "char_window": self.char_window,
            "context_view": self.context_view,
            "published": self.published.as_metadata() if self.published else None,
            "deviations": list(self.deviations),
            **({"inputs": list(self.inputs)} if self.inputs else {}),
        }


CS = ("cs.",)

RECIPES: dict[str, Recipe] = {
    recipe.name: recipe
    for recipe in (
        Recipe(
            name="citrec",
            summary="citrec's default for fresh data: every database paper is a candidate, both context views, "
            "split by the citing paper's first version (2024 validation, 2025 on test).",
            citing=PaperRule(require_title=False, require_abstract=False),
            pool=PaperRule(require_title=False, require_abstract=False),
            split=SplitConfig(),
        ),
        Recipe(
            name="hatten-arxiv",
            summary="arXiv(HAtten) (Gu et al. 2022): every arXiv paper with a title and an abstract is a candidate; "
            "contexts of 1991-2019 papers train, January-February 2020 validation, March-April 2020 test; "
            "200-character windows; nothing after April 2020.",
            citing=PaperRule(require_abstract=False, until=dt.date(2020, 4, 30)),
            pool=PaperRule(require_abstract=True, require_arxiv=True, until=dt.date(2020, 4, 30)),
            split=SplitConfig(validation_from=dt.date(2020, 1, 1), test_from=dt.date(2020, 3, 1)),
            context_view="char",
            published=Published(
                source="Gu, Gao & Hahnloser (2022), arXiv:2112.01206, the arXiv dataset",
                papers=1_661_201,
                years="1991-2020",
            ),
        ),
        Recipe(
            name="acl200",
            summary="ACL-200-style (as HAtten ships it): contexts of 2009-2013 papers train, 2014 validation, "
            "2015 test; 200-character windows; the pool is every database paper with a title and an abstract "
            "(ACL-200's own pool is the ACL Anthology Network papers: give an ACL database with --metadata).",
            citing=PaperRule(require_abstract=False, since=dt.date(2009, 1, 1), until=dt.date(2015, 12, 31)),
            pool=PaperRule(require_abstract=True, until=dt.date(2015, 12, 31)),
            split=SplitConfig(validation_from=dt.date(2014, 1, 1), test_from=dt.date(2015, 1, 1)),
            context_view="char",
            published=Published(
                source="ACL-200 as nianlonggu/Local-Citation-Recommendation ships it (counted from its "
                "train/val/test.json)",
                contexts={"train": 30_390, "validation": 9_381, "test": 9_585},
                years="2009-2015",
            ),
        ),
        Recipe(
            name="arsyta",
            summary="ArSyTa (Goyal et al. 2024): arXiv computer-science papers first published April 2007 - "
            "January 2023, citing and cited; the citing sentence with one sentence either side and its section "
            "heading.",
            citing=PaperRule(
                require_abstract=False, category_prefixes=CS, since=dt.date(2007, 4, 1), until=dt.date(2023, 1, 31)
            ),
            pool=PaperRule(
                require_abstract=True,
                require_arxiv=True,
                category_prefixes=CS,
                since=dt.date(2007, 4, 1),
                until=dt.date(2023, 1, 31),
            ),
            split=SplitConfig(validation_from=dt.date(2022, 1, 1), test_from=dt.date(2022, 7, 1)),
            context_view="sentence",
            published=Published(source="Goyal et al. (2024), SymTax / ArSyTa", note="8.27M contexts in all"),
            deviations=(
                "ArSyTa's train/validation/test assignment is not in the SymTax repository (per.py only reads "
                "train_data.json/val_data.json/test_data.json) nor in any file available here: citrec splits by "
                "the citing paper's first version, 2022-01-01 validation and 2022-07-01 test (the window's last "
                "13 months), so that no test paper precedes a training one.",
            ),
        ),
        Recipe(
            name="refseer",
            summary="RefSeer-style: 200-character windows, every database paper with a title and an abstract as "
            "the pool, citing papers up to 2014; split by year (train to 2012, 2013 validation, 2014 test).",
            citing=PaperRule(require_abstract=False, until=dt.date(2014, 12, 31)),
            pool=PaperRule(require_abstract=True, until=dt.date(2014, 12, 31)),
            split=SplitConfig(validation_from=dt.date(2013, 1, 1), test_from=dt.date(2014, 1, 1)),
            context_view="char",
            published=Published(source="RefSeer (Huang et al. 2015; Medić & Šnajder 2020)", years="-2014"),
            deviations=(
                "RefSeer's year boundaries are not available to this project: the split (2013 validation, 2014 "
                "test) is citrec's, following ACL-200's last-two-years pattern, not the publication's.",
            ),
        ),
        Recipe(
            name="acm-cr",
            summary="ACM-CR (Boudin 2021), a test collection (--acm_cr DIR): the ACM DL records are the pool, the "
            "50 citing papers' hand-marked citing sentences the contexts, all in test (nothing to train on).",
            citing=PaperRule(require_title=False, require_abstract=False),
            pool=PaperRule(require_abstract=False, sources=(ACM_DL,)),
            split=SplitConfig(validation_from=dt.date.min, test_from=dt.date.min),
            context_view="sentence",
            published=Published(
                source="Boudin (2021), boudinfl/acm-cr README (2021-04-30)",
                papers=114_882,
                years="2020",
                note="BM25 (Anserini), citing sentence as query, title+abstract+keywords indexed: recall@10 0.390, "
                "nDCG@10 0.316 over 552 sentences (977 judgements)",
            ),
            deviations=(
                "Two journal files of the source (journals/tkde.bib, vldb/pvldb.bib) could not be retrieved: "
                "the pool lacks their records and the contexts citing them.",
                "Keywords are not kept (papers/ has no column for them): the published index has them.",
            ),
            inputs=("acm_cr",),
        ),
    )
}


def keep_context(context: Context, cited: Paper, recipe: Recipe, count: CounterFn = no_count) -> bool:
    """Whether a context belongs to the recipe's dataset: its citing paper passes `recipe.citing` and the paper
    it cites is in the pool. Counted `dropped_citing_outside_recipe:<reason>` or
    `dropped_cited_not_in_pool:<reason>` when not."""
    why = recipe.citing.why_not_citing(context)
    if why is not None:
        count(f"dropped_citing_outside_recipe:{why}", 1)
        return False
    why = recipe.pool.why_not(cited)
    if why is not None:
        count(f"dropped_cited_not_in_pool:{why}", 1)
        return False
    return True


def recipe_named(name: str) -> Recipe:
    """The recipe called `name`, or ValueError listing the known ones."""
    try:
        return RECIPES[name]
    except KeyError:
        raise ValueError(f"unknown recipe {name!r}; known: {', '.join(RECIPES)}") from None
