"""The CitationR mention rules measured against hand labels: `python bench/eval_citationr.py` prints the figures,
`bench/tests/test_citationr_quality.py` holds the floors.

Hand labels, three sources (all under `../shared/data/reviews`):

- `bias_reviews` (zhuojing-huang/review-citation-bias, `annotated_data_for_reviews/ICLRwithLabels.csv`): 34
  ICLR 2023 reviews, `citation_suggestions` in {0, 1}: does the review ask for more citations. Predicted: the
  review has at least one `recommended` mention. Review-level precision and recall.
- `bias_titles` (`annotated_data_for_suggested_papers/*.csv`): 233 ICLR 2023 / NeurIPS 2023 reviews that all
  suggest papers, one row per (review, hand-corrected suggested title `paper_info`). Review-level recall, and
  title level: a gold title is found when a `recommended` mention's title has LCS similarity >= 0.9 with it
  (both through `mapping.titles.normalize_title`); an extracted title is correct when it finds a gold title
  of the same review.
- `disapere` (DISAPERE, ICLR 2019-2020, 506 reviews): sentences labelled with a review action and an aspect.
  A review *asks for other work* when one of its sentences is a request (`arg_request`: edit, experiment,
  explanation, clarification, result, typo) whose aspect is `asp_meaningful-comparison` or `asp_originality`
  (compare with, relate to, cite prior work); it *does not* when no sentence of it has either aspect at all.
  Reviews in between (prior work discussed, nothing requested) are left out. The label was fixed from the label
  names before any DISAPERE text was read. It is a proxy, wider than "recommends a paper": "more baselines
  should be compared" is a request about comparison that names no paper, which a miner of paper mentions
  cannot find, so its recall is a lower bound of the rules' own.
- `neurips_labels` and the samples reported alone (this project's, `bench/labels/`, each a row of
  `bench/labels/samples.csv`, read by `bench.citationr.samples`): official NeurIPS 2023-2025 reviews and DISAPERE's
  ICLR 2019-2020 reviews in seeded samples, each review labelled by an annotator (an AI agent that saw only the
  guideline and the review): does it suggest specific literature, and which works, copied verbatim, with their form
  (title, name, author-year, link, marker). Review-level precision and recall, title recall over the works written
  as titles, work recall over all. `neurips_labels` pools the samples whose `reported_as` says so (the first read
  samples and the first test sample); every other sample is reported on its own (`REPORTED_ALONE`), the held-out
  ones first.

Parts (`samples.part`), by the SHA-1 of the submission (forum) id, the same for every source: `dev` (even), `dev2`
(1 mod 4), `test` (3 mod 4). The rules were written reading `dev` and `dev2`; `test` has never been read, of any
source (`show_errors` prints only `dev` and `dev2` errors). `read` = dev + dev2; `unread` = test.

Every rate comes with its Wilson 95% interval (`Rate`); title-level rates count titles, which are not
independent within a review, so their intervals are somewhat too narrow.
Only review text is read (`extractors.reviews.forms`): the files' own `response` (an LLM's answer) and
`paper_info` columns are annotation columns and never reach the extractor.
"""

from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from bench.citationr.samples import POOLED, POOLED_LABEL_FILES, READABLE, REPORTED_ALONE, SAMPLES, part
from extractors.reviews.bibliographies import with_own_text
from extractors.reviews.forms import Review, merge_submissions, parse_review_file
from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.mentions.classify import NO_BIBLIOGRAPHY, Bibliography
from extractors.reviews.mentions.shapes import overlaps
from extractors.reviews.mentions.spotting import DatabaseTitleSpotter
from extractors.reviews.records import RECOMMENDED, PaperMention, Submission
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig, lcs_similarity
from mapping.records import BibEntry, Paper
from mapping.titles import normalize_title

BIAS = Path("reviews") / "review-citation-bias"
REVIEW_LABELS = BIAS / "annotated_data_for_reviews" / "ICLRwithLabels.csv"
TITLE_LABELS = (
    BIAS / "annotated_data_for_suggested_papers" / "ICLR2023_extra_annoatated_pur.csv",
    BIAS / "annotated_data_for_suggested_papers" / "NeurIPS2023_extra_annoatated_pur.csv",
)
DISAPERE = Path("reviews") / "disapere-iclr-2019-2020" / "final_dataset"
FOUND_AT = 0.9
ASKS_ASPECTS = ("asp_meaningful-comparison", "asp_originality")

Extract = Callable[[Review], list[PaperMention]]
"""What is measured: a review's mentions, classified (by default `extract_review_mentions`)."""


def groups(forum: str) -> tuple[str, ...]:
    """Every reported group a submission belongs to: its part, `read` or `unread`, and `all`."""
    own = part(forum)
    return (own, "read" if own in READABLE else "unread", "all")


def wilson(hits: int, total: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) when there is nothing to count."""
    if total == 0:
        return 0.0, 1.0
    p = hits / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class Rate:
    """`hits` of `total`, with the Wilson 95% interval."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None

    def as_dict(self) -> dict[str, object]:
        low, high = wilson(self.hits, self.total)
        value = self.value
        return {
            "value": None if value is None else round(value, 3),
            "hits": self.hits,
            "of": self.total,
            "ci95": [round(low, 3), round(high, 3)],
        }

    def __str__(self) -> str:
        if not self.total:
            return "n/a (0)"
        low, high = wilson(self.hits, self.total)
        return f"{self.value:.2f} [{low:.2f}, {high:.2f}] ({self.hits}/{self.total})"


def rate_cell(rate: dict | None) -> str:
    """A `Rate.as_dict()` as a table cell, "value [low, high] (hits/of)" (the value from the counts: `value` is
    rounded to 3 places), or "n/a" when nothing was counted."""
    if not rate or not rate["of"]:
        return "n/a"
    low, high = rate["ci95"]
    return f"{rate['hits'] / rate['of']:.2f} [{low:.2f}, {high:.2f}] ({rate['hits']}/{rate['of']})"


@lru_cache(maxsize=64)
def _parsed(source: str, stamp: tuple[int, int]) -> tuple:
    """Every item of one review file, parsed once for `read_reviews` and `own_text_of` alike (`stamp`: the file's
    modification time and size, so that a file written again is parsed again)."""
    return tuple(parse_review_file(Path(source).read_bytes(), source))


def _file_items(path: Path) -> tuple:
    stat = path.stat()
    return _parsed(str(path), (stat.st_mtime_ns, stat.st_size))


@lru_cache(maxsize=64)
def _merged_submissions(items: tuple) -> dict[str, Submission]:
    found: dict[str, list[Submission]] = defaultdict(list)
    for item in items:
        if isinstance(item, Submission):
            found[item.submission_id].append(item)
    return {submission_id: merge_submissions(records) for submission_id, records in found.items()}  # as a run does


def own_text_of(review: Review) -> Bibliography:
    """What a pipeline run knows of the review's submission without its paper: the title and abstract its review file
    carries (`with_own_text`; nothing for DISAPERE's files, which have none)."""
    path = Path(review.source)
    submissions = _merged_submissions(_file_items(path)) if path.is_file() else {}
    return with_own_text(NO_BIBLIOGRAPHY, submissions.get(review.submission_id))


def default_extract(review: Review) -> list[PaperMention]:
    return extract_review_mentions(review.text, review.sections, own_text_of(review))


def recommended_mentions(review: Review, extract: Extract = default_extract) -> list[PaperMention]:
    """The review's mentions classified as recommended."""
    return [m for m in extract(review) if m.kind == RECOMMENDED]


def read_reviews(path: Path) -> dict[str, Review]:
    """The reviews of a labelled file, once each (the title file repeats a review per gold title)."""
    reviews: dict[str, Review] = {}
    for item in _file_items(path):
        if isinstance(item, Review):
            reviews.setdefault(item.review_id, item)
    return reviews


def _show_review_error(review: Review, gold: int, extract: Extract) -> None:
    label = "false negative" if gold else "false positive"
    print(f"=== review {review.review_id}: {label}")
    _print_mentions(review, extract)


def _print_mentions(review: Review, extract: Extract) -> None:
    """Every mention of a review as the rules decide it, with its context (the errors `show_errors` prints)."""
    for m in extract(review):
        print(f"    {m.kind:13} {m.reason:24} {m.source:15} {m.title or m.authors or m.text!r}")
        print(f"        context: {m.context[:300]!r}")


class _Counts:
    """Per group: true positives, false positives, false negatives (review level)."""

    def __init__(self) -> None:
        self.by_group: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])

    def add(self, forum: str, predicted: bool, gold: bool) -> None:
        for group in groups(forum):
            counts = self.by_group[group]
            counts[3] += 1
            if predicted and gold:
                counts[0] += 1
            elif predicted:
                counts[1] += 1
            elif gold:
                counts[2] += 1

    def result(self) -> dict[str, dict[str, object]]:
        return {
            group: {
                "reviews": n,
                "precision": Rate(tp, tp + fp).as_dict(),
                "recall": Rate(tp, tp + fn).as_dict(),
            }
            for group, (tp, fp, fn, n) in sorted(self.by_group.items())
        }


def review_level(shared: Path, show_errors: bool = False, extract: Extract = default_extract) -> dict[str, dict]:
    """`bias_reviews`: review-level precision and recall per group."""
    path = shared / REVIEW_LABELS
    with path.open(newline="") as handle:
        labels = {row["id"]: (int(row["citation_suggestions"]), row["forum"]) for row in csv.DictReader(handle)}
    reviews = read_reviews(path)
    counts = _Counts()
    for review_id, (gold, forum) in labels.items():
        predicted = review_id in reviews and bool(recommended_mentions(reviews[review_id], extract))
        if show_errors and part(forum) in READABLE and predicted != bool(gold):
            if review_id in reviews:
                _show_review_error(reviews[review_id], gold, extract)
            else:
                print(f"=== review {review_id}: unreadable")
        counts.add(forum, predicted, bool(gold))
    return counts.result()


# (source, key, label): the figures `evaluate` gives for the labelled reviews, as the evaluation tables show them.
LABEL_MEASURES = (
    ("bias_reviews", "precision", "review precision (ICLR, citation_suggestions)"),
    ("bias_reviews", "recall", "review recall (ICLR, citation_suggestions)"),
    ("bias_titles", "review_recall", "review recall (title files: all suggest papers)"),
    ("bias_titles", "title_precision", "title precision"),
    ("bias_titles", "title_recall", "title recall"),
    ("disapere", "precision", "DISAPERE review precision (asks for other work)"),
    ("disapere", "recall", "DISAPERE review recall (asks for other work)"),
)


def match_titles(extracted: Iterable[str], gold: Iterable[str]) -> tuple[int, int, int, int]:
    """(gold found, gold total, extracted correct, extracted total) for one review."""
    extracted = [normalize_title(t) for t in extracted if normalize_title(t)]
    gold = [normalize_title(t) for t in gold if normalize_title(t)]
    found = sum(1 for g in gold if any(lcs_similarity(g, e) >= FOUND_AT for e in extracted))
    correct = sum(1 for e in extracted if any(lcs_similarity(g, e) >= FOUND_AT for g in gold))
    return found, len(gold), correct, len(extracted)


def read_title_labels(path: Path) -> tuple[dict[str, list[str]], dict[str, str]]:
    """A title-label file's gold titles by review id (in file order) and each review's forum."""
    gold: dict[str, list[str]] = defaultdict(list)
    forum_of: dict[str, str] = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            gold[row["id"]].append(row["paper_info"])
            forum_of[row["id"]] = row["forum"]
    return gold, forum_of


def title_level(shared: Path, show_errors: bool = False, extract: Extract = default_extract) -> dict[str, dict]:
    """`bias_titles`: title precision and recall, and review-level recall, per group (and per file and part,
    `ICLR2023:dev`, ...)."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for relative in TITLE_LABELS:
        path = shared / relative
        gold, forum_of = read_title_labels(path)
        reviews = read_reviews(path)
        source = relative.stem.split("_")[0]
        for review_id, titles in gold.items():
            mentions = recommended_mentions(reviews[review_id], extract) if review_id in reviews else []
            extracted = [m.title for m in mentions if m.title]
            found, total, correct, n_extracted = match_titles(extracted, titles)
            own = part(forum_of[review_id])
            for key in (*groups(forum_of[review_id]), f"{source}:{own}"):
                t = totals[key]
                for index, value in enumerate((found, total, correct, n_extracted, 1, 1 if mentions else 0)):
                    t[index] += value
            if show_errors and own in READABLE and (found < total or correct < n_extracted):
                _show_title_errors(review_id, extracted, titles)
    return {
        key: {
            "reviews": t[4],
            "title_precision": Rate(t[2], t[3]).as_dict(),
            "title_recall": Rate(t[0], t[1]).as_dict(),
            "review_recall": Rate(t[5], t[4]).as_dict(),
        }
        for key, t in sorted(totals.items())
    }


def _show_title_errors(review_id: str, extracted: list[str], gold: list[str]) -> None:
    def best(title: str, others: list[str]) -> float:
        scores = [lcs_similarity(normalize_title(title), normalize_title(o)) for o in others if normalize_title(o)]
        return max(scores, default=0.0)

    print(f"--- titles of {review_id}")
    for title in gold:
        if best(title, extracted) < FOUND_AT:
            print(f"    missed    ({best(title, extracted):.2f}) {title!r}")
    for title in extracted:
        if best(title, gold) < FOUND_AT:
            print(f"    wrong     ({best(title, gold):.2f}) {title!r}")


DISTRACTORS = Path("s2orc") / "allenai-s2orc" / "metadata_sample_v20200705.jsonl"


def gold_database(shared: Path) -> tuple[list[Paper], dict[str, str]]:
    """The papers of a database that holds every hand-corrected title of the title files (one paper per distinct
    normalised title, `gold:<n>`) and 1,000 unrelated S2ORC records as distractors; and each gold paper's
    normalised title by id."""
    titles: dict[str, str] = {}
    for relative in TITLE_LABELS:
        with (shared / relative).open(newline="") as handle:
            for row in csv.DictReader(handle):
                normalized = normalize_title(row["paper_info"])
                if normalized and normalized not in titles.values():
                    titles[f"gold:{len(titles)}"] = normalized
    papers = [Paper(paper_id=pid, title=title) for pid, title in titles.items()]
    return papers + distractor_papers(shared), titles


def distractor_papers(shared: Path) -> list[Paper]:
    """The 1,000 S2ORC metadata sample records with a title (`s2:<id>`): unrelated papers a gold database holds
    beside its gold titles; none where the sample is absent."""
    distractors = shared / DISTRACTORS
    if not distractors.is_file():
        return []
    records = (json.loads(line) for line in distractors.read_text().splitlines())
    return [Paper(paper_id=f"s2:{r['paper_id']}", title=r["title"]) for r in records if r.get("title")]


def mention_bib_entries(mention: PaperMention, key: str, raw_strings: bool) -> list[BibEntry]:
    """What a mention is resolved by, as `pipelines.citationr.mention_entry` resolves it: its identifiers, then
    its title; a reference entry without a usable title by its raw string (`mapping.raw_strings`), with
    `raw_strings`."""
    raw = mention.text if raw_strings and mention.source == "reference_entry" else None
    if not (mention.title or mention.arxiv_id or mention.doi or raw):
        return []
    return [BibEntry(key, title=mention.title, year=mention.year, doi=mention.doi, arxiv_id=mention.arxiv_id, raw=raw)]


def spotting_extract(spotter: DatabaseTitleSpotter) -> Extract:
    """`default_extract` with the database's titles spotted in the review (`mentions.spotting`)."""

    def extract(review: Review) -> list[PaperMention]:
        return extract_review_mentions(review.text, review.sections, own_text_of(review), spotter=spotter)

    return extract


def resolution_level(
    shared: Path, extract: Extract = default_extract, raw_strings: bool = True, spot_titles: bool = False
) -> dict[str, dict[str, object]]:
    """`bias_titles` resolved against a database that holds the gold titles (`gold_database`): a gold title is
    found when one of the review's recommended mentions resolves to it (identifiers, then the title, then the raw
    reference string: `mention_bib_entries`); a resolution is correct when it is one of the review's gold papers.
    This measures the way a run aligns recommendations to its database, whatever the extracted title's cut. With
    `spot_titles` (and the default extraction), the database's titles are also spotted in the reviews' text, as a
    run with `--spot_database_titles` does."""
    papers, gold_titles = gold_database(shared)
    matcher = InMemoryMatcher(papers, MatchConfig())
    if spot_titles and extract is default_extract:
        extract = spotting_extract(DatabaseTitleSpotter(matcher))
    by_title = {title: pid for pid, title in gold_titles.items()}
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for relative in TITLE_LABELS:
        path = shared / relative
        titles, forum_of = read_title_labels(path)
        wanted_of = {
            review_id: {by_title[n] for n in map(normalize_title, rows) if n} for review_id, rows in titles.items()
        }
        gold = {review_id: wanted for review_id, wanted in wanted_of.items() if wanted}
        reviews = read_reviews(path)
        for review_id, wanted in gold.items():
            mentions = recommended_mentions(reviews[review_id], extract) if review_id in reviews else []
            resolved: set[str] = set()
            for index, mention in enumerate(mentions):
                for entry in mention_bib_entries(mention, f"{review_id}#{index}", raw_strings):
                    paper_id = matcher.resolve(entry).paper_id
                    if paper_id is not None:
                        resolved.add(paper_id)
                        break
            for key in groups(forum_of[review_id]):
                t = totals[key]
                t[0] += len(wanted & resolved)
                t[1] += len(wanted)
                t[2] += len(resolved & wanted)
                t[3] += len(resolved)
    return {
        key: {"resolution_precision": Rate(t[2], t[3]).as_dict(), "resolution_recall": Rate(t[0], t[1]).as_dict()}
        for key, t in sorted(totals.items())
    }


def disapere_label(sentences: Iterable[dict]) -> bool | None:
    """True: a request about comparison with or the originality over other work; False: no sentence about
    either; None: prior work discussed, nothing requested (left out)."""
    sentences = list(sentences)
    aspects = [s.get("aspect") for s in sentences]
    if any(s.get("review_action") == "arg_request" and s.get("aspect") in ASKS_ASPECTS for s in sentences):
        return True
    if not any(a in ASKS_ASPECTS for a in aspects):
        return False
    return None


def disapere_files(shared: Path) -> list[Path]:
    return sorted((shared / DISAPERE).glob("*/*.json"))


def disapere_level(shared: Path, show_errors: bool = False, extract: Extract = default_extract) -> dict[str, dict]:
    """`disapere`: review-level precision and recall of "asks for other work" per group."""
    counts = _Counts()
    left_out: dict[str, int] = defaultdict(int)
    for path in disapere_files(shared):
        record = json.loads(path.read_bytes())
        gold = disapere_label(record.get("review_sentences") or [])
        forum = record["metadata"]["forum_id"]
        if gold is None:
            for group in groups(forum):
                left_out[group] += 1
            continue
        reviews = [i for i in _file_items(path) if isinstance(i, Review)]
        predicted = bool(reviews) and bool(recommended_mentions(reviews[0], extract))
        if show_errors and part(forum) in READABLE and predicted != gold and reviews:
            _show_review_error(reviews[0], int(gold), extract)
        counts.add(forum, predicted, gold)
    result = counts.result()
    for group, n in left_out.items():
        result.setdefault(group, {})["left_out"] = n
    return result


def evaluate(
    shared: Path,
    show_errors: bool = False,
    extract: Extract = default_extract,
    sources: Iterable[str] = (),
    spot_titles: bool = False,
) -> dict[str, dict]:
    """Every source's figures (or only `sources`) by group."""
    wanted = set(sources) or set(SOURCES)
    result: dict[str, dict] = {}
    if "bias_reviews" in wanted:
        result["bias_reviews"] = review_level(shared, show_errors, extract)
    if "bias_titles" in wanted:
        result["bias_titles"] = title_level(shared, show_errors, extract)
    if "bias_resolution" in wanted:
        result["bias_resolution"] = resolution_level(shared, extract, spot_titles=spot_titles)
    if "disapere" in wanted and disapere_files(shared):
        result["disapere"] = disapere_level(shared, show_errors, extract)
    if POOLED in wanted and any(path.is_file() for path in POOLED_LABEL_FILES):
        result[POOLED] = labelled_level(shared, extract, show_errors=show_errors)
    for name, path in REPORTED_ALONE.items():
        if name in wanted and path.is_file():
            result[name] = labelled_level(shared, extract, [path], show_errors=show_errors)
    return result


SOURCES = ("bias_reviews", "bias_titles", "bias_resolution", "disapere", POOLED, *REPORTED_ALONE)
"""Every label source `evaluate` measures: `neurips_labels` is the labelled samples reported together
(`POOLED_LABEL_FILES`: the read samples and the first test sample of the NeurIPS reviews); every other labelled sample
is reported on its own (`REPORTED_ALONE`), under its manifest's `reported_as`."""
WORK_FORMS = ("title", "name", "author_year", "link", "marker")


@dataclass(frozen=True)
class LabelledReview:
    """One annotator's labels of one review: does it suggest specific literature, and which works (the review's
    own words for each, and its form)."""

    annotator: str
    index: int
    file: str  # relative to the shared data folder
    review_id: str
    submission_id: str
    suggests: bool
    works: tuple[tuple[str, str], ...]  # (mention, form)

    def titles(self) -> list[str]:
        return [mention for mention, form in self.works if form == "title"]


def read_review_labels(path: Path) -> dict[str, dict[str, LabelledReview]]:
    """Every annotator's labels (annotator -> review id -> labels) of a label file (columns
    `annotator,index,file,review_id,submission_id,suggests,mention,form,note`; one row per suggested work, `mention`
    copied verbatim from the review text, `form` one of `WORK_FORMS`), checked: one `suggests` per review, a known
    form for every work, no work on a review that suggests none."""
    rows: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            rows[row["annotator"], row["review_id"]].append(row)
    labels: dict[str, dict[str, LabelledReview]] = defaultdict(dict)
    for (annotator, review_id), group in rows.items():
        suggests = {row["suggests"].strip() for row in group}
        if len(suggests) != 1 or not suggests <= {"0", "1"}:
            raise ValueError(f"{path}: review {review_id} ({annotator}) has suggests {sorted(suggests)}")
        works = tuple((row["mention"], row["form"].strip()) for row in group if row["mention"].strip())
        if any(form not in WORK_FORMS for _, form in works):
            raise ValueError(f"{path}: review {review_id} ({annotator}) has a form outside {WORK_FORMS}")
        if works and suggests == {"0"}:
            raise ValueError(f"{path}: review {review_id} ({annotator}) suggests nothing but lists works")
        first = group[0]
        labels[annotator][review_id] = LabelledReview(
            annotator, int(first["index"]), first["file"], review_id, first["submission_id"], suggests == {"1"}, works
        )
    return dict(labels)


def gold_review_labels(labels: dict[str, dict[str, LabelledReview]]) -> dict[str, LabelledReview]:
    """The gold label of each review: the first annotator's (by name) where two labelled it."""
    gold: dict[str, LabelledReview] = {}
    for annotator in sorted(labels):
        for review_id, label in labels[annotator].items():
            gold.setdefault(review_id, label)
    return gold


def occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    spans, start = [], text.find(needle)
    while needle and start >= 0:
        spans.append((start, start + len(needle)))
        start = text.find(needle, start + 1)
    return spans


def work_found(text: str, work: str, mentions: Sequence[PaperMention]) -> bool:
    """Is a labelled work (the review's own words for it) among the mentions: one of them overlaps a place where
    the review writes it, or carries its title (LCS >= 0.9)?"""
    places = occurrences(text, work)
    wanted = normalize_title(work)
    return any(
        overlaps(m.start, m.end, places)
        or (wanted and m.title and lcs_similarity(wanted, normalize_title(m.title)) >= FOUND_AT)
        for m in mentions
    )


def find_labelled_review(shared: Path, label: LabelledReview) -> Review | None:
    return read_reviews(shared / label.file).get(label.review_id)


def labelled_level(
    shared: Path,
    extract: Extract = default_extract,
    paths: Sequence[Path] = POOLED_LABEL_FILES,
    show_errors: bool = False,
) -> dict[str, dict]:
    """The project's labelled NeurIPS reviews (`POOLED_LABEL_FILES`: the read samples and the first test one, or
    `paths`), per group:
    review-level precision and recall (`suggests` against "has a recommended mention"); title recall over the works
    labelled `title` and title precision of the recommended mentions' titles against every labelled work of the
    review (`match_titles`); work recall over every labelled work, whatever its form (`work_found`).
    `show_errors` prints the errors of reviews in the read parts only."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    counts = _Counts()
    files = [gold_review_labels(read_review_labels(path)) for path in paths if path.is_file()]
    for label in [label for gold in files for label in gold.values()]:
        review = find_labelled_review(shared, label)
        if review is None:
            raise ValueError(f"review {label.review_id} is not in {shared / label.file}")
        mentions = recommended_mentions(review, extract)
        counts.add(label.submission_id, bool(mentions), label.suggests)
        extracted = [m.title for m in mentions if m.title]
        found, total, _, _ = match_titles(extracted, label.titles())
        _, _, correct, n_extracted = match_titles(extracted, [w for w, _ in label.works])
        works = sum(work_found(review.text, work, mentions) for work, _ in label.works)
        if show_errors and part(label.submission_id) in READABLE:
            _show_labelled_errors(review, label, mentions, works, correct < n_extracted, extract)
        for group in groups(label.submission_id):
            t = totals[group]
            for index, value in enumerate((found, total, correct, n_extracted, works, len(label.works))):
                t[index] += value
    result = counts.result()
    for group, t in totals.items():
        result[group].update(
            {
                "title_recall": Rate(t[0], t[1]).as_dict(),
                "title_precision": Rate(t[2], t[3]).as_dict(),
                "work_recall": Rate(t[4], t[5]).as_dict(),
            }
        )
    return result


def _show_labelled_errors(
    review: Review,
    label: LabelledReview,
    mentions: Sequence[PaperMention],
    works: int,
    wrong_title: bool,
    extract: Extract,
) -> None:
    if bool(mentions) == label.suggests and works == len(label.works) and not wrong_title:
        return
    missed = [f"{form}:{work!r}" for work, form in label.works if not work_found(review.text, work, mentions)]
    verdict = "partial"
    if bool(mentions) != label.suggests:
        verdict = "false negative" if label.suggests else "false positive"
    print(f"=== {label.review_id} (#{label.index}): {verdict}; missed {missed}")
    _print_mentions(review, extract)


def label_agreement(path: Path = SAMPLES["test"].labels) -> dict[str, object]:
    """How far the annotators agree on the reviews two of them labelled (every pair of annotators, pooled):
    `suggests` (share equal, Cohen's kappa) and the titles (F1 of the two title lists matched at LCS >= 0.9: each
    list's found share, the harmonic mean)."""
    labels = read_review_labels(path)
    both = [
        (labels[a][r], labels[b][r])
        for index, a in enumerate(sorted(labels))
        for b in sorted(labels)[index + 1 :]
        for r in sorted(set(labels[a]) & set(labels[b]))
    ]
    if not both:
        return {"reviews": 0}
    pairs = [(first.suggests, second.suggests) for first, second in both]
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    p1 = sum(a for a, _ in pairs) / n
    p2 = sum(b for _, b in pairs) / n
    expected = p1 * p2 + (1 - p1) * (1 - p2)
    kappa = (observed - expected) / (1 - expected) if expected < 1 else 1.0
    found_12 = total_1 = found_21 = total_2 = 0
    for first, second in both:
        f, t, c, e = match_titles(second.titles(), first.titles())
        found_12, total_1, found_21, total_2 = found_12 + f, total_1 + t, found_21 + c, total_2 + e
    r12 = found_12 / total_1 if total_1 else 1.0
    r21 = found_21 / total_2 if total_2 else 1.0
    return {
        "reviews": n,
        "suggests_equal": round(observed, 3),
        "suggests_kappa": round(kappa, 3),
        "titles": [total_1, total_2],
        "titles_f1": round(2 * r12 * r21 / (r12 + r21), 3) if r12 + r21 else 0.0,
    }
