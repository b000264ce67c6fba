"""The learned review decision measured where it was not trained: leave one venue out, beside the rules.

    python -m bench.citationr.venues       # writes bench/citationr/results/venues.{json,md} and heads/without-*.npz

For each venue of `fit_decision.VENUES`, a head is fitted on the other venues (its L2 strength and threshold chosen
inside them, `fit_decision.select`) and decides the left-out venue's reviews; the rules decide the same reviews.
Per venue, per label source and pooled over the venues (each venue scored by the head that did not see it):

- review level: precision of "the review recommends citing something" over the reviews labelled at review level
  (the project's samples, `ICLRwithLabels.csv`); recall over those and the title files' reviews (which all suggest
  papers, so they count in recall only);
- title level: the labelled titles found among the recommended mentions' titles (LCS >= 0.9; the project's
  title-form works, the title files' hand-corrected titles).

Every rate has its Wilson 95% interval (`bench.citationr.labels.Rate`; title rates count titles, not independent
within a review, so theirs are somewhat too narrow). The model's errors on each left-out venue are counted by kind
(`error_categories`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from bench.citationr.fit_decision import (
    VENUES,
    Case,
    Table,
    candidate_label,
    case_outcome,
    decided,
    fit_on,
    git_commit,
    load_table,
    matches_title,
    rules_decided,
)
from bench.citationr.labels import Rate, occurrences, rate_cell
from bench.shared import shared_data_dir
from extractors.reviews.mentions.decision import MODEL_REASON, DecisionHead, mention_shape
from extractors.reviews.mentions.learned import FREE_REASON
from extractors.reviews.records import RECOMMENDED, PaperMention
from mapping.matcher import lcs_similarity
from mapping.titles import normalize_title

RESULTS = Path(__file__).resolve().parent / "results"
TARGETS = {"review_precision": 0.9, "review_recall": 0.8, "title_recall": 0.8}


def source_group(case: Case) -> str:
    """The label source a case is reported under: `project` (the samples), `bias_reviews` or a title file."""
    return case.source if case.source.startswith("bias_") else "project"


class Tally:
    """Review-level and title-level counts of one decision over a set of cases."""

    def __init__(self) -> None:
        self.tp = self.fp = self.fn = self.recall_hits = self.recall_total = 0
        self.titles_found = self.titles_total = self.reviews = 0

    def add(self, case: Case, predicted: bool, found: int, total: int) -> None:
        self.reviews += 1
        self.titles_found += found
        self.titles_total += total
        if case.suggests:
            self.recall_total += 1
            self.recall_hits += predicted
        if case.suggests is None or case.corrected:
            return
        if predicted and case.suggests:
            self.tp += 1
        elif predicted:
            self.fp += 1
        elif case.suggests:
            self.fn += 1

    def as_dict(self) -> dict[str, object]:
        return {
            "reviews": self.reviews,
            "review_precision": Rate(self.tp, self.tp + self.fp).as_dict(),
            "review_recall": Rate(self.recall_hits, self.recall_total).as_dict(),
            "title_recall": Rate(self.titles_found, self.titles_total).as_dict(),
        }


def work_places(case: Case) -> list[tuple[int, int]]:
    return [span for work in case.works for span in occurrences(case.review.text, work)]


def names_a_work(case: Case, mention: PaperMention) -> bool:
    """Is the candidate one of the case's labelled works (as `fit_decision.candidate_label` says)?"""
    return candidate_label(case, mention, [mention]) == 1


def error_categories(case: Case, candidates: Sequence[PaperMention], mentions: Sequence[PaperMention]) -> list[str]:
    """Why the model's decision of one review is wrong, if it is: for a missed review, whether a candidate names a
    labelled work at all (`missed:no_candidate`) or was scored below the threshold (`missed:below_threshold`); for a
    false alarm, the kind of the recommended candidate (`false_alarm:<source>/<shape>`, free names as `free`); for a
    missed title, whether a candidate carries it (`title:no_candidate` / `title:below_threshold`)."""
    recommended = [m for m in mentions if m.kind == RECOMMENDED]
    found: list[str] = []
    if case.suggests and not recommended:
        named = [m for m in candidates if names_a_work(case, m)]
        found.append("missed:below_threshold" if named else "missed:no_candidate")
    if case.suggests is False and not case.corrected and recommended:
        first = recommended[0]
        source = "free" if first.reason.startswith(FREE_REASON) or first.source == "name" else first.source
        found.append(f"false_alarm:{source}/{mention_shape(first)}")
    titles = [m.title for m in recommended if m.title]
    for title in case.titles:
        wanted = normalize_title(title)
        if not wanted or any(lcs_similarity(wanted, normalize_title(t)) >= 0.9 for t in titles):
            continue
        carried = any(
            (m.title and lcs_similarity(wanted, normalize_title(m.title)) >= 0.9) or matches_title(m, title)
            for m in candidates
        )
        found.append("title:below_threshold" if carried else "title:no_candidate")
    return found


def measure(table: Table, venues: Sequence[str] = VENUES) -> tuple[dict[str, object], dict[str, DecisionHead]]:
    """Leave-one-venue-out figures of the model and the rules (module docstring), and each left-out venue's head."""
    pooled = {"model": Tally(), "rules": Tally()}
    heads: dict[str, DecisionHead] = {}
    per_venue: dict[str, object] = {}
    for held in venues:
        training = [v for v in venues if v != held]
        head = heads[held] = fit_on(table, training)
        test = table.subset([held])
        decisions = {"model": decided(test, head), "rules": rules_decided(test)}
        groups: dict[str, dict[str, Tally]] = defaultdict(lambda: {"model": Tally(), "rules": Tally()})
        errors: Counter[str] = Counter()
        for case in test.cases:
            for name, by_case in decisions.items():
                outcome = case_outcome(case, by_case[case.key])
                for tally in (groups["all"][name], groups[source_group(case)][name], pooled[name]):
                    tally.add(case, *outcome)
            errors.update(error_categories(case, test.candidates[case.key], decisions["model"][case.key]))
        per_venue[held] = {
            "trained_on": training,
            "head": json.loads(head.trained),
            "by_source": {g: {n: t.as_dict() for n, t in d.items()} for g, d in sorted(groups.items())},
            "model_errors": dict(sorted(errors.items())),
            "model_recommended_reasons": dict(
                Counter(
                    m.source for ms in decisions["model"].values() for m in ms if m.reason == MODEL_REASON
                ).most_common()
            ),
        }
    result = {
        "targets": TARGETS,
        "commit": git_commit(),
        "venues": per_venue,
        "pooled": {n: t.as_dict() for n, t in pooled.items()},
    }
    return result, heads


def write_results(out: Path, name: str, result: dict, table: str) -> None:
    """`result` as `out/<name>.json` and its `table` as `out/<name>.md`, and the table printed."""
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / f"{name}.md").write_text(table, encoding="utf-8")
    print(table)


def markdown(result: dict) -> str:
    """The table of `measure`'s figures: per left-out venue and pooled, the model beside the rules."""
    lines = [
        "| left-out venue (trained on the others) | reviews | decision | review precision | review recall | "
        "title recall |",
        "|---|---|---|---|---|---|",
    ]
    rows = [(venue, data["by_source"]["all"]) for venue, data in result["venues"].items()]
    rows.append(("pooled, each venue unseen", result["pooled"]))
    for venue, by_decision in rows:
        for index, name in enumerate(("model", "rules")):
            figures = by_decision[name]
            label = venue if index == 0 else ""
            reviews = str(figures["reviews"]) if index == 0 else ""
            lines.append(
                f"| {label} | {reviews} | {name} | {rate_cell(figures['review_precision'])} | "
                f"{rate_cell(figures['review_recall'])} | {rate_cell(figures['title_recall'])} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for venues.json and venues.md")
    args = parser.parse_args(argv)
    result, heads = measure(load_table(shared_data_dir()))
    for venue, head in heads.items():  # what bench/tests/test_decision_venues.py measures on the venue left out
        head.save(args.out / "heads" / f"without-{venue}.npz", json.loads(head.trained))
    write_results(args.out, "venues", result, markdown(result))
    for venue, data in result["venues"].items():
        print(f"{venue}: model errors {data['model_errors']}", file=sys.stderr)


if __name__ == "__main__":
    main()
