"""Title recall per written form, where the deciding head was not trained, and false titles from numbered comments.

    python -m bench.citationr.title_forms     # writes bench/citationr/results/title_forms.{json,md}

Issue 37 asks that a recommended work's title be extracted whole whatever form the reviewer wrote it in: across a
line end, in BibTeX with any whitespace, in "Author (Year). Title." and "Title. Author, Year" orders, in a numbered
reference list, and never from numbered line-by-line comments. This measures each form separately.

Every labelled title (`fit_decision.labelled_cases`: the project's title-form works and the review-citation-bias
files' hand-corrected titles) is located in its review's text (`locate`: whitespace, case and BibTeX braces
ignored, fuzzy at a partial ratio >= 90 for the hand-corrected ones) and its forms read from the text around it
(`forms_at`: several may hold, "prose" when none does; written for this measurement, independent of the library's
rules). A title is found when a recommended mention's title matches it (LCS >= 0.9), as in `venues`; the model is
the head fitted without the title's venue, the rules decide the same reviews. Rates carry Wilson 95% intervals
(titles of one review are not independent, so somewhat too narrow), over all labelled titles and over the
never-read part alone: the reviews no one read while writing the rules (the title files' `test` part,
`neurips_check4`, `disapere_check2`). A missed title is put down to a cause (`miss_reason`), and the last column
says whether a recommended mention resolves to it in a database of every labelled title and 1,000 distractors,
by identifiers, title and raw reference string, as a run resolves (`GoldDatabase`).

Numbered comments: every line of a labelled review that starts with an enumerator ("1.", "(2)", "[3]", "Q4:") and
does not look like a reference (no year, "et al.", venue or link) is a comment line; a recommended title cut from
one that matches no labelled title and overlaps no labelled work is a false title from a comment.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rapidfuzz import fuzz

from bench.citationr.fit_decision import VENUES, Case, decided, fit_on, git_commit, load_table, rules_decided
from bench.citationr.labels import (
    FOUND_AT,
    Rate,
    distractor_papers,
    groups,
    mention_bib_entries,
    occurrences,
    rate_cell,
)
from bench.citationr.venues import RESULTS, work_places, write_results
from bench.shared import shared_data_dir
from extractors.reviews.mentions.shapes import overlaps
from extractors.reviews.records import RECOMMENDED, PaperMention
from mapping.in_memory import InMemoryMatcher
from mapping.matcher import MatchConfig, lcs_similarity
from mapping.records import Paper
from mapping.titles import normalize_title

LOCATE_AT = 90.0
NEVER_READ_SAMPLES = ("neurips_check4", "disapere_check2")
FORMS = (
    "across_line_end",
    "bibtex",
    "author_year_then_title",
    "title_then_authors_year",
    "numbered_list",
    "bulleted_list",
    "quoted",
    "prose",
)
_ENUMERATOR = re.compile(r"^\s*(?:\[\d{1,3}\]|\(\d{1,3}\)|\d{1,3}[.):]|[A-Za-z]{1,2}\d{1,2}[.):])\s")
_BULLET = re.compile(r"^\s*(?:[-*\u2022\u25cf]|\[[a-z]\]|\([a-z]\)|[a-z]\))\s")
_YEAR = re.compile(r"\b(?:19[5-9]\d|20[0-3]\d)[a-z]?\b")
_REFERENCE_CUE = re.compile(
    r"\bet al\b|\bproceedings\b|\bconference\b|\barxiv\b|https?://|\bjournal\b|\bICLR|"
    r"\bNeurIPS|\bICML|\bCVPR|\bACL\b|\bEMNLP|\bAAAI",
    re.IGNORECASE,
)
_QUOTES = "\"'“”‘’`"


def normalised(text: str) -> tuple[str, list[int]]:
    """`text` lower-cased with BibTeX braces dropped and whitespace runs as one space, and for each of its
    characters the offset in `text` it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, char in enumerate(text):
        if char in "{}":
            continue
        if char.isspace():
            if out and out[-1] == " ":
                continue
            char = " "
        out.append(char.lower())
        where.append(i)
    return "".join(out), where


def locate(text: str, title: str, exact_only: bool = False) -> tuple[int, int] | None:
    """Where `text` writes `title`: (start, end) offsets into `text`, or None. Whitespace, case and braces are
    ignored; unless `exact_only`, the best fuzzy alignment at a partial ratio >= `LOCATE_AT` also counts (for
    hand-corrected titles, which need not be verbatim)."""
    spans = occurrences(text, title)
    if spans:
        return spans[0]
    flat, where = normalised(text)
    wanted = normalised(title.strip())[0].strip()
    if not wanted or not flat:
        return None
    at = flat.find(wanted)
    if at >= 0:
        return where[at], where[at + len(wanted) - 1] + 1
    if exact_only or len(wanted) < 12:
        return None
    alignment = fuzz.partial_ratio_alignment(wanted, flat, score_cutoff=LOCATE_AT)
    if alignment is None or alignment.dest_end <= alignment.dest_start:
        return None
    return where[alignment.dest_start], where[alignment.dest_end - 1] + 1


def _line_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    first = text.rfind("\n", 0, start) + 1
    last = text.find("\n", end)
    return first, len(text) if last < 0 else last


def is_comment_line(line: str) -> bool:
    """A numbered line that does not read as a reference: an enumerator, and no year, "et al.", venue or link."""
    return bool(_ENUMERATOR.match(line)) and not _YEAR.search(line) and not _REFERENCE_CUE.search(line)


def forms_at(text: str, start: int, end: int) -> list[str]:
    """The written forms of the title at text[start:end] (`FORMS`; several may hold, "prose" when none does)."""
    found = []
    if "\n" in text[start:end].strip():
        found.append("across_line_end")
    before = text[max(0, start - 400) : start]
    entry = re.search(r"@\w+\s*\{[^@]*$", before)
    if entry and re.search(r"\btitle\s*=\s*[{\"]*\s*$", before, re.IGNORECASE):
        found.append("bibtex")
    first, last = _line_bounds(text, start, end)
    lead, tail = text[first:start], text[end:last]
    if "bibtex" not in found:
        if re.search(r"(?:19[5-9]\d|20[0-3]\d)[a-z]?\)?\s*[.,:]\s*[" + _QUOTES + r"]?\s*$", lead):
            found.append("author_year_then_title")
        elif not _YEAR.search(lead) and re.match(
            r"^[" + _QUOTES + r"]?\s*[.,]\s*[" + _QUOTES + r"]?\s*[A-Z][^\n]{0,200}?" + _YEAR.pattern, tail
        ):
            found.append("title_then_authors_year")
    if _ENUMERATOR.match(text[first:last]):
        found.append("numbered_list")
    elif _BULLET.match(text[first:last]):
        found.append("bulleted_list")
    if (start and text[start - 1] in _QUOTES) or (end < len(text) and text[end] in _QUOTES):
        found.append("quoted")
    return found or ["prose"]


def is_found(title: str, recommended_titles: Sequence[str]) -> bool:
    wanted = normalize_title(title)
    return bool(wanted) and any(lcs_similarity(wanted, normalize_title(t)) >= FOUND_AT for t in recommended_titles)


def never_read(case: Case) -> bool:
    """Is the case in a part no one read while writing the rules (module docstring)?"""
    if case.source.startswith("bias_"):
        return "unread" in groups(_forum(case))
    return case.source in NEVER_READ_SAMPLES


def _forum(case: Case) -> str:
    return case.review.submission_id or case.review.review_id


@dataclass
class TitleRecord:
    """One labelled title: its forms, whether the rules and the model found it, and why the model missed it."""

    venue: str
    source: str
    forms: tuple[str, ...]
    never_read: bool
    model: bool
    rules: bool
    model_miss: str = ""
    resolved: bool = False


class GoldDatabase:
    """A database that holds every labelled title once (`gold:<n>`) and the 1,000 S2ORC sample records as
    distractors, with the matcher a run uses (identifiers, title, then the raw reference string)."""

    def __init__(self, cases: Sequence[Case], shared: Path) -> None:
        self.ids: dict[str, str] = {}
        for case in cases:
            for title in case.titles:
                key = normalize_title(title)
                if key and key not in self.ids:
                    self.ids[key] = f"gold:{len(self.ids)}"
        papers = [Paper(paper_id=pid, title=title) for title, pid in self.ids.items()]
        self.matcher = InMemoryMatcher(papers + distractor_papers(shared), MatchConfig())

    def resolved(self, mentions: Sequence[PaperMention]) -> set[str]:
        """The paper ids the recommended mentions resolve to, each by its first entry that resolves."""
        found: set[str] = set()
        for index, mention in enumerate(m for m in mentions if m.kind == RECOMMENDED):
            for entry in mention_bib_entries(mention, f"m{index}", raw_strings=True):
                paper_id = self.matcher.resolve(entry).paper_id
                if paper_id is not None:
                    found.add(paper_id)
                    break
        return found


def miss_reason(title: str, span: tuple[int, int] | None, candidates: Sequence[PaperMention]) -> str:
    """Why a title was not found: written nowhere the locator finds (`not_located`), carried by a candidate the
    decision did not recommend (`decided_against`), at a candidate whose title is cut otherwise (`cut_wrong`:
    truncated, run on, or none), or at no candidate at all (`no_candidate`)."""
    if span is None:
        return "not_located"
    if is_found(title, [m.title for m in candidates if m.title]):
        return "decided_against"
    if any(overlaps(m.start, m.end, [span]) for m in candidates):
        return "cut_wrong"
    return "no_candidate"


def title_records(
    case: Case,
    model: Sequence[PaperMention],
    rules: Sequence[PaperMention],
    candidates: Sequence[PaperMention] = (),
    database: GoldDatabase | None = None,
) -> list[TitleRecord]:
    """One record per labelled title of the case, with its forms (`not_located` when its review does not write
    it), each decision's hit, for the model's misses `miss_reason` over the rules' candidates, and whether a
    mention the model recommends resolves to it in `database`."""
    resolved = database.resolved(model) if database else set()
    model_titles = [m.title for m in model if m.kind == RECOMMENDED and m.title]
    rules_titles = [m.title for m in rules if m.kind == RECOMMENDED and m.title]
    records = []
    for title in case.titles:
        span = locate(case.review.text, title, exact_only=not case.corrected)
        forms = tuple(forms_at(case.review.text, *span)) if span else ("not_located",)
        found = is_found(title, model_titles)
        records.append(
            TitleRecord(
                case.venue,
                case.source,
                forms,
                never_read(case),
                found,
                is_found(title, rules_titles),
                "" if found else miss_reason(title, span, candidates),
                database is not None and database.ids.get(normalize_title(title)) in resolved,
            )
        )
    return records


def comment_titles(case: Case, mentions: Sequence[PaperMention]) -> tuple[int, int, list[str]]:
    """(comment lines, recommended titles cut from one, the rule source of each false one) in one review."""
    text = case.review.text
    lines = []
    offset = 0
    for line in text.split("\n"):
        if is_comment_line(line):
            lines.append((offset, offset + len(line)))
        offset += len(line) + 1
    places = work_places(case)
    cut, false = 0, []
    for mention in mentions:
        if mention.kind != RECOMMENDED or not mention.title:
            continue
        if not any(first <= mention.start < last for first, last in lines):
            continue
        cut += 1
        if not is_found(mention.title, case.titles) and not overlaps(mention.start, mention.end, places):
            false.append(mention.source)
    return len(lines), cut, false


def measure(table, venues: Sequence[str] = VENUES, shared: Path | None = None) -> dict[str, object]:
    """Per form, title recall of the model (left-out venue's head) and the rules, over all and never-read titles,
    with the model's misses by `miss_reason`; and the false titles each decision cuts from numbered comment lines
    of the reviews labelled at title level (`bias_reviews`, labelled at review level only, is left out)."""
    records: list[TitleRecord] = []
    database = GoldDatabase(table.cases, shared or shared_data_dir())
    comments = {name: {"comment_lines": 0, "titles_cut": 0, "false_titles": Counter()} for name in ("model", "rules")}
    for held in venues:
        test = table.subset([held])
        head = fit_on(table, [v for v in venues if v != held])
        decisions = {"model": decided(test, head), "rules": rules_decided(test)}
        for case in test.cases:
            records.extend(
                title_records(
                    case,
                    decisions["model"][case.key],
                    decisions["rules"][case.key],
                    test.candidates[case.key],
                    database,
                )
            )
            if case.source == "bias_reviews":
                continue
            for name, by_case in decisions.items():
                lines, cut, false = comment_titles(case, by_case[case.key])
                comments[name]["comment_lines"] += lines
                comments[name]["titles_cut"] += cut
                comments[name]["false_titles"].update(false)
    by_form: dict[str, dict[str, dict]] = defaultdict(dict)
    for form in (*FORMS, "not_located"):
        for part, keep in (("all", lambda r: True), ("never_read", lambda r: r.never_read)):
            chosen = [r for r in records if form in r.forms and keep(r)]
            by_form[form][part] = {
                name: Rate(sum(getattr(r, name) for r in chosen), len(chosen)).as_dict() for name in ("model", "rules")
            }
            by_form[form][part]["model_resolved"] = Rate(sum(r.resolved for r in chosen), len(chosen)).as_dict()
            by_form[form][part]["model_misses"] = dict(Counter(r.model_miss for r in chosen if r.model_miss))
    return {
        "commit": git_commit(),
        "titles": len(records),
        "by_form": dict(by_form),
        "numbered_comments": {
            name: {**c, "false_titles": dict(c["false_titles"].most_common())} for name, c in comments.items()
        },
    }


def markdown(result: dict) -> str:
    """Per form: title recall of the model and the rules over all titles and the never-read ones, and why the
    model missed (all titles); then the false titles from numbered comment lines."""
    lines = [
        "| form | titles | model | rules | model, never read | rules, never read | model's misses | model, resolved |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for form, parts in result["by_form"].items():
        every, unread = parts["all"], parts["never_read"]
        misses = ", ".join(f"{k} {v}" for k, v in sorted(every["model_misses"].items(), key=lambda kv: -kv[1]))
        lines.append(
            f"| {form} | {every['model']['of']} | {rate_cell(every['model'])} | {rate_cell(every['rules'])} | "
            f"{rate_cell(unread['model'])} | {rate_cell(unread['rules'])} | {misses} | "
            f"{rate_cell(every['model_resolved'])} |"
        )
    lines.append("")
    for name, c in result["numbered_comments"].items():
        false = sum(c["false_titles"].values())
        by_source = ", ".join(f"{k} {v}" for k, v in c["false_titles"].items())
        lines.append(
            f"Numbered comment lines: {c['comment_lines']}; {name}: {c['titles_cut']} recommended titles cut from "
            f"them, {false} false ({by_source})."
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for title_forms.json and .md")
    args = parser.parse_args(argv)
    shared = shared_data_dir()
    result = measure(load_table(shared), shared=shared)
    write_results(args.out, "title_forms", result, markdown(result))


if __name__ == "__main__":
    main()
