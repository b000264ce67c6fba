"""Fit the learned review decision (`extractors/reviews/mentions/decision.py`) on every labelled review there is.

    python -m bench.citationr.fit_decision --write        # fit on every venue, write the library's head file

Labelled reviews (`labelled_cases`), by venue:

- `neurips-2023-2025`: every sample of `bench/labels/samples.csv` drawn from the NeurIPS OpenReview reviews (whether
  the review suggests specific literature, and which works, verbatim), and the review-citation-bias NeurIPS 2023
  title file (reviews that all suggest papers, with hand-corrected titles);
- `iclr-2019-2020`: the samples drawn from DISAPERE (all 506 of its reviews; DISAPERE's own sentence labels are a
  proxy of another question, so its reviews are labelled by the project's samples only);
- `iclr-2023`: review-citation-bias's `ICLRwithLabels.csv` (`citation_suggestions`) and its ICLR 2023 title file.

A candidate (the rules' mentions and the free names, `candidates_of`) is labelled by its sentence
(`candidate_label`): positive when the review suggests literature and the candidate is a labelled work (it overlaps a
place where the review writes one, or carries its title, LCS >= 0.9; for the hand-corrected titles, its title, text
or head name matches a gold title: `span_label`), or shares its sentence with one (an author-year beside the title,
a link to it); a free name and a reference entry by their own span only. Negative when the review suggests nothing
or the candidate's sentence names none of its works; unknown (left out of fitting) for a review labelled only at
review level that suggests something, and for a link in a title-file review that no sentence-mate makes positive.

The head: a logistic regression (L2, Newton's method, numpy) over the standardised embedding and rule features. Its
L2 strength and its two thresholds (any candidate at or above `threshold` is recommended, one the rules recommend at
or above `keep_threshold`) are chosen by leave-one-venue-out inside the training venues (`select`): each training
venue predicted by a head fitted on the others, the setting with the best review-level F0.5 over those predictions
(precision weighs more, as the targets ask: precision >= 0.9 is the one furthest away).
Embeddings are cached on disk (`EmbeddingCache`, under /tmp), as are the rules' candidates.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import pickle
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from bench.citationr.labels import (
    REVIEW_LABELS,
    TITLE_LABELS,
    find_labelled_review,
    gold_review_labels,
    match_titles,
    occurrences,
    own_text_of,
    read_review_labels,
    read_reviews,
)
from bench.citationr.samples import SAMPLES
from bench.shared import REPO, shared_data_dir
from extractors.reviews.encoder import ENCODER_NAME, MAX_TOKENS, load_encoder
from extractors.reviews.forms import Review
from extractors.reviews.mentions import extract_review_mentions
from extractors.reviews.mentions.classify import NAMED_BY_SUBMISSION
from extractors.reviews.mentions.config import DEFAULT_CONFIG
from extractors.reviews.mentions.decision import (
    HEAD_PATH,
    DecisionHead,
    context_text,
    decide,
    hand_features,
)
from extractors.reviews.mentions.learned import FREE_REASON, add_free_names
from extractors.reviews.mentions.shapes import overlaps
from extractors.reviews.records import ALREADY_CITED, RECOMMENDED, PaperMention
from mapping.matcher import lcs_similarity
from mapping.titles import normalize_title

VENUES = ("neurips-2023-2025", "iclr-2019-2020", "iclr-2023")
CACHE = Path("/tmp/citationr-decision")
FOUND_AT = 0.9
L2_GRID = (30.0, 100.0, 300.0, 1000.0, 3000.0)
THRESHOLDS = tuple(round(float(t), 2) for t in np.arange(0.04, 0.95, 0.04))
RULES_RECOMMEND = "rules=recommended"  # the hand feature of a candidate the rules recommend
SELECT_BETA = 0.5  # the setting is chosen by review-level F-beta: precision first, as the targets ask (P >= 0.9)
MIN_FEATURE_COUNT = 3  # a rule feature seen fewer times in training is left out of the head


@dataclass(frozen=True)
class Case:
    """One labelled review: its venue and label source, whether it suggests literature (None: not labelled at the
    review level), its labelled works as the review writes them (`works`, verbatim) and the titles to find
    (`titles`: the project's title-form works, or a title file's hand-corrected titles, `corrected`)."""

    venue: str
    source: str
    review: Review
    suggests: bool | None
    works: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()
    corrected: bool = False

    @property
    def key(self) -> str:
        return f"{self.venue}|{self.review.review_id}"


def _venue_of_sample(source: Path) -> str:
    return "iclr-2019-2020" if "disapere" in str(source) else "neurips-2023-2025"


def labelled_cases(shared: Path) -> list[Case]:
    """Every labelled review, once per venue and review id (module docstring); a title file's review also labelled
    at review level keeps both."""
    cases: dict[str, Case] = {}
    for name, sample in SAMPLES.items():
        if not sample.labels.is_file():
            continue
        for label in gold_review_labels(read_review_labels(sample.labels)).values():
            review = find_labelled_review(shared, label)
            if review is None:
                raise ValueError(f"{name}: review {label.review_id} is not in {shared / label.file}")
            case = Case(
                _venue_of_sample(sample.source),
                name,
                review,
                label.suggests,
                tuple(w for w, _ in label.works),
                tuple(label.titles()),
            )
            cases.setdefault(case.key, case)
    path = shared / REVIEW_LABELS
    if path.is_file():
        with path.open(newline="") as handle:
            gold = {row["id"]: bool(int(row["citation_suggestions"])) for row in csv.DictReader(handle)}
        for review_id, review in read_reviews(path).items():
            if review_id in gold:
                case = Case("iclr-2023", "bias_reviews", review, gold[review_id])
                cases.setdefault(case.key, case)
    for relative in TITLE_LABELS:
        path = shared / relative
        if not path.is_file():
            continue
        venue = "iclr-2023" if "ICLR" in path.name else "neurips-2023-2025"
        titles: dict[str, list[str]] = defaultdict(list)
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                titles[row["id"]].append(row["paper_info"])
        source = "bias_titles:" + path.name.split("_")[0]
        for review_id, review in read_reviews(path).items():
            case = Case(venue, source, review, True, (), tuple(titles[review_id]), corrected=True)
            cases[case.key] = case  # the title labels are fuller than a review-level label of the same review
    return sorted(cases.values(), key=lambda c: c.key)


# ---------------------------------------------------------------------------------------------- candidates


def rules_fingerprint() -> str:
    """A digest of the rules' source, so that cached candidates are recomputed when a rule changes."""
    digest = hashlib.sha1()
    for path in sorted((REPO / "extractors" / "reviews").rglob("*.py")):
        if path.name not in ("decision.py", "encoder.py"):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def candidates_of(review: Review) -> list[PaperMention]:
    """What the model decides among in one review: the rules' mentions and the free names, classified by the rules
    (as `extract_review_mentions` builds them with `MentionConfig(decision="model")`)."""
    bibliography = own_text_of(review)
    found = extract_review_mentions(review.text, review.sections, bibliography)
    return add_free_names(review.text, review.sections, found, DEFAULT_CONFIG, bibliography)


def all_candidates(cases: Sequence[Case], cache: Path | None = CACHE) -> dict[str, list[PaperMention]]:
    """Every case's candidates, from the disk cache where the rules have not changed since."""
    path = cache / f"candidates-{rules_fingerprint()}.pkl" if cache else None
    known: dict[str, list[PaperMention]] = {}
    if path and path.is_file():
        known = pickle.loads(path.read_bytes())
    missing = [c for c in cases if c.key not in known]
    for case in missing:
        known[case.key] = candidates_of(case.review)
    if path and missing:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(known))
    return {c.key: known[c.key] for c in cases}


def _head_name(title: str) -> str:
    """A title's head before a colon, normalised ("QBox: Partial Transfer ..." -> "qbox")."""
    return normalize_title(title.split(":")[0]) if ":" in title else ""


def matches_title(mention: PaperMention, gold: str) -> bool:
    """Does a candidate name a hand-corrected gold title: its title or text similar (LCS >= 0.9), the gold title
    inside its text (a reference entry), or its text the title's head name ("QBox")?"""
    wanted = normalize_title(gold)
    if not wanted:
        return False
    mine = [normalize_title(t) for t in (mention.title, mention.text) if t]
    if any(m and lcs_similarity(m, wanted) >= FOUND_AT for m in mine):
        return True
    if any(len(wanted) >= 12 and wanted in m for m in mine):
        return True
    head = _head_name(gold)
    return bool(head) and normalize_title(mention.text) == head


def span_label(case: Case, mention: PaperMention) -> int | None:
    """Is the candidate itself a labelled work: 1, 0, or None (unknown: a review labelled at review level only that
    suggests something, or a link in a title-file review, which names no title to match)."""
    if case.suggests is False:
        return 0
    if case.corrected:
        if any(matches_title(mention, t) for t in case.titles):
            return 1
        return None if mention.url or mention.arxiv_id or mention.doi else 0
    if not case.works:
        return None
    for work in case.works:
        if overlaps(mention.start, mention.end, occurrences(case.review.text, work)):
            return 1
        wanted = normalize_title(work)
        if wanted and mention.title and lcs_similarity(wanted, normalize_title(mention.title)) >= FOUND_AT:
            return 1
    return 0


def candidate_label(case: Case, mention: PaperMention, candidates: Sequence[PaperMention]) -> int | None:
    """1: the candidate's sentence recommends a labelled work and the candidate names it, or names a work beside it
    (an author-year after the title, a link to it); 0: not; None: unknown (`span_label`). A free name and a
    reference entry are labelled by their own span only (a coined token beside a request is not thereby a work)."""
    own = span_label(case, mention)
    if own is not None and (own == 1 or case.suggests is False):
        return own
    if mention.reason.startswith(FREE_REASON) or mention.source == "reference_entry":
        return own
    sentence = " ".join(mention.context.partition(" || ")[0].split())
    beside = [m for m in candidates if m is not mention and m.context == mention.context]
    if any(not m.reason.startswith(FREE_REASON) and span_label(case, m) == 1 for m in beside):
        return 1
    if any(len(work.strip()) > 2 and " ".join(work.split()) in sentence for work in case.works):
        return 1
    return own


def eligible(mention: PaperMention) -> bool:
    """A candidate the model decides: not one the submission's bibliography or own text decides."""
    return mention.kind != ALREADY_CITED and not mention.reason.endswith(NAMED_BY_SUBMISSION)


# ----------------------------------------------------------------------------------------------- embeddings


class EmbeddingCache:
    """Context embeddings by the SHA-1 of the text, kept in one .npz under `folder` (the encoder runs only for texts
    it has not seen)."""

    def __init__(self, folder: Path = CACHE) -> None:
        self.path = folder / f"embeddings-{MAX_TOKENS}.npz"
        self.vectors: dict[str, np.ndarray] = {}
        if self.path.is_file():
            with np.load(self.path) as data:
                self.vectors = dict(zip((str(k) for k in data["keys"]), data["vectors"], strict=True))

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def __call__(self, texts: list[str]) -> np.ndarray:
        keys = [self._key(t) for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self.vectors}.items())
        if missing:
            encoder = load_encoder()
            for begin in range(0, len(missing), 2048):
                chunk = missing[begin : begin + 2048]
                vectors = encoder.encode([t for _, t in chunk])
                self.vectors.update(zip((k for k, _ in chunk), vectors, strict=True))
                print(f"embedded {begin + len(chunk):,} of {len(missing):,} new contexts", file=sys.stderr)
            self.save()
        if not keys:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys])

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.vectors)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.stack([self.vectors[k] for k in keys]))
        tmp.replace(self.path)


# -------------------------------------------------------------------------------------------------- dataset


@dataclass
class Table:
    """Every candidate of a set of cases: embedding rows, rule features, labels (-1 unknown), and which case and
    candidate each row is."""

    embeddings: np.ndarray
    features: list[list[str]]
    labels: np.ndarray
    case_of: np.ndarray  # index into `cases`
    eligible: np.ndarray
    cases: list[Case]
    candidates: dict[str, list[PaperMention]]

    def subset(self, venues: Iterable[str]) -> Table:
        wanted = set(venues)
        keep_cases = [i for i, c in enumerate(self.cases) if c.venue in wanted]
        renumber = {old: new for new, old in enumerate(keep_cases)}
        rows = np.array([i for i, c in enumerate(self.case_of) if int(c) in renumber], dtype=int)
        return Table(
            self.embeddings[rows] if len(rows) else self.embeddings[:0],
            [self.features[i] for i in rows],
            self.labels[rows],
            np.array([renumber[int(self.case_of[i])] for i in rows], dtype=int),
            self.eligible[rows],
            [self.cases[i] for i in keep_cases],
            self.candidates,
        )


def build_table(cases: Sequence[Case], candidates: dict[str, list[PaperMention]], embed) -> Table:
    texts, features, labels, case_of, ok = [], [], [], [], []
    for index, case in enumerate(cases):
        found = candidates[case.key]
        for mention in found:
            label = candidate_label(case, mention, found)
            texts.append(context_text(mention))
            features.append(hand_features(mention, found))
            labels.append(-1 if label is None else label)
            case_of.append(index)
            ok.append(eligible(mention))
    return Table(
        embed(texts),
        features,
        np.array(labels, dtype=int),
        np.array(case_of, dtype=int),
        np.array(ok, dtype=bool),
        list(cases),
        dict(candidates),
    )


# -------------------------------------------------------------------------------------------------- fitting


def feature_vocabulary(features: Sequence[Sequence[str]], min_count: int = MIN_FEATURE_COUNT) -> tuple[str, ...]:
    counts: dict[str, int] = defaultdict(int)
    for names in features:
        for name in set(names):
            counts[name] += 1
    return tuple(sorted(name for name, n in counts.items() if n >= min_count))


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float, iterations: int = 50) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (the intercept not penalised): (weights, bias)."""
    n, d = x.shape
    design = np.hstack([x.astype(np.float64), np.ones((n, 1))])
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, l2)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(design @ w, -30, 30)))
        gradient = design.T @ (p - y) + penalty * w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + np.diag(penalty) + 1e-9 * np.eye(d + 1)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-7:
            break
    return w[:-1].astype(np.float32), float(w[-1])


def fit_head(table: Table, l2: float, threshold: float, trained: str = "") -> DecisionHead:
    """A head fitted on the labelled, eligible candidates of `table`."""
    rows = np.flatnonzero((table.labels >= 0) & table.eligible)
    names = feature_vocabulary([table.features[i] for i in rows])
    unscaled = DecisionHead(
        names,
        np.zeros(table.embeddings.shape[1] + len(names), dtype=np.float32),
        np.ones(table.embeddings.shape[1] + len(names), dtype=np.float32),
        np.zeros(0),
        0.0,
        threshold,
    )
    raw = unscaled.matrix(table.embeddings[rows], [table.features[i] for i in rows])
    mean, scale = raw.mean(0), raw.std(0)
    scale[scale < 1e-6] = 1.0
    weights, bias = fit_logistic((raw - mean) / scale, table.labels[rows].astype(np.float64), l2)
    return DecisionHead(names, mean, scale, weights, bias, threshold, trained=trained)


def probabilities(head: DecisionHead, table: Table) -> np.ndarray:
    if not len(table.labels):
        return np.zeros(0)
    return head.probabilities(table.embeddings, table.features)


def review_scores(table: Table, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per case: the highest probability among its eligible candidates, and among those the rules recommend (-1 when
    it has none): the review recommends at thresholds (keep, add) when the second is >= keep or the first >= add."""
    best = np.full(len(table.cases), -1.0)
    proposed = np.full(len(table.cases), -1.0)
    rules = np.array([RULES_RECOMMEND in names for names in table.features], dtype=bool)
    for row, case in enumerate(table.case_of):
        if table.eligible[row]:
            best[case] = max(best[case], p[row])
            if rules[row]:
                proposed[case] = max(proposed[case], p[row])
    return best, proposed


def review_f1(predicted: np.ndarray, gold: np.ndarray, beta: float = 1.0) -> float:
    """Review-level F-beta (F1 by default) of predicted against gold booleans."""
    tp = int(np.sum(predicted & gold))
    fp, fn = int(np.sum(predicted & ~gold)), int(np.sum(~predicted & gold))
    b2 = beta * beta
    return (1 + b2) * tp / ((1 + b2) * tp + b2 * fn + fp) if tp else 0.0


def review_gold(table: Table) -> tuple[np.ndarray, np.ndarray]:
    """(which cases have both classes in their label source, so count in F1; their `suggests`)."""
    usable = np.array([c.suggests is not None and not c.corrected for c in table.cases], dtype=bool)
    return usable, np.array([bool(c.suggests) for c in table.cases], dtype=bool)


def select(table: Table, venues: Sequence[str]) -> tuple[float, float, float, dict]:
    """(L2, keep threshold, threshold) by leave-one-venue-out inside `venues`: the best pooled review-level F-beta
    (`SELECT_BETA`) of each venue predicted by a head fitted on the others (ties: the threshold nearest 0.5)."""
    if len(venues) < 2:
        raise ValueError(f"choosing the setting needs two training venues or more, not {list(venues)}")
    folds = [(table.subset([v for v in venues if v != held]), table.subset([held])) for held in venues]
    results = {}
    for l2 in L2_GRID:
        best, proposed, gold, usable = [], [], [], []
        for train, test in folds:
            head = fit_head(train, l2, 0.5)
            b, r = review_scores(test, probabilities(head, test))
            u, g = review_gold(test)
            best, proposed, gold, usable = best + [b], proposed + [r], gold + [g], usable + [u]
        u = np.concatenate(usable)
        b, r, g = np.concatenate(best)[u], np.concatenate(proposed)[u], np.concatenate(gold)[u]
        for add in THRESHOLDS:
            for keep in (t for t in THRESHOLDS if t <= add):
                results[(l2, keep, add)] = review_f1((r >= keep) | (b >= add), g, SELECT_BETA)
    (l2, keep, add), f1 = max(results.items(), key=lambda item: (item[1], -abs(item[0][2] - 0.5), item[0][1]))
    return l2, keep, add, {f"inner_f{SELECT_BETA:g}": round(f1, 4)}


def fit_on(table: Table, venues: Sequence[str]) -> DecisionHead:
    """The head fitted on `venues` with its setting chosen inside them (`select`)."""
    l2, keep, add, info = select(table, venues)
    trained = {"venues": list(venues), "l2": l2, "threshold": add, "keep_threshold": keep, **info}
    head = fit_head(table.subset(venues), l2, add, json.dumps(trained))
    return replace(head, keep_threshold=keep)


# ------------------------------------------------------------------------------------------------- decisions


def decided(table: Table, head: DecisionHead) -> dict[str, list[PaperMention]]:
    """Each case's candidates decided by `head` (`extractors.reviews.mentions.decision.decide`)."""
    p = probabilities(head, table)
    by_case: dict[int, list[float]] = defaultdict(list)
    for row, case in enumerate(table.case_of):
        by_case[int(case)].append(float(p[row]))
    return {
        c.key: decide(table.candidates[c.key], by_case.get(i, []), head.threshold, head.keep)
        for i, c in enumerate(table.cases)
    }


def rules_decided(table: Table) -> dict[str, list[PaperMention]]:
    """Each case's mentions as the rules decide them (the free names left out)."""
    return {c.key: [m for m in table.candidates[c.key] if not m.reason.startswith(FREE_REASON)] for c in table.cases}


def case_outcome(case: Case, mentions: Sequence[PaperMention]) -> tuple[bool, int, int]:
    """(the review predicted recommending, gold titles found, gold titles) for one case."""
    recommended = [m for m in mentions if m.kind == RECOMMENDED]
    found, total, _, _ = match_titles([m.title for m in recommended if m.title], case.titles)
    return bool(recommended), found, total


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def load_table(shared: Path, cache: Path = CACHE) -> Table:
    """Every labelled case with its candidates and their embeddings (cached under `cache`)."""
    cases = labelled_cases(shared)
    return build_table(cases, all_candidates(cases, cache), EmbeddingCache(cache))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write the head fitted on every venue to {HEAD_PATH}")
    parser.add_argument("--out", type=Path, default=HEAD_PATH, help="where --write writes (default: the library's)")
    args = parser.parse_args(argv)
    table = load_table(shared_data_dir())
    counts = {v: sum(c.venue == v for c in table.cases) for v in VENUES}
    print(f"labelled reviews by venue: {counts}; candidates {len(table.labels):,}", file=sys.stderr)
    head = fit_on(table, VENUES)
    trained = json.loads(head.trained)
    rows = (table.labels >= 0) & table.eligible
    trained |= {
        "encoder": ENCODER_NAME,
        "encoder_max_tokens": MAX_TOKENS,
        "head": "logistic regression over the standardised embedding and rule features",
        "reviews_by_venue": counts,
        "reviews_by_source": dict(sorted(_count(c.source for c in table.cases).items())),
        "candidates_fitted": int(rows.sum()),
        "positives_fitted": int((table.labels[rows] == 1).sum()),
        "rule_features": len(head.features),
        "fitted_by": "python -m bench.citationr.fit_decision --write",
        "commit": git_commit(),
        "rules_fingerprint": rules_fingerprint(),
    }
    print(json.dumps(trained, indent=2))
    if args.write:
        head.save(args.out, trained)
        print(f"wrote {args.out}", file=sys.stderr)


def _count(items: Iterable[str]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for item in items:
        counts[item] += 1
    return counts


if __name__ == "__main__":
    main()
