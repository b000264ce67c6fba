"""ACM-CR (../shared/data/acm-cr) read by `extractors.documents.acm_cr` and built by `--recipe acm-cr`, every count
checked against an independent reading: regular expressions over the raw BibTeX and XML, and ACM-CR's own qrels.

The qrels check explains every difference between citrec's positives and `contexts.qrels`/`sentences.qrels`:
a cited number no bracket of its sentence shows (citrec has no marker for it: a dead letter), a DOI whose file
is absent from the shared copy (PVLDB), and a reference DOI written with trailing whitespace, which ACM-CR's
`contexts_to_queries.py` compares unstripped with its collection and so misses.
"""

from __future__ import annotations

import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from extractors.documents.acm_cr import read_citing_papers, read_collection
from tests.support.runs import read_rows

ENTRY = re.compile(r"^@(\w+)\s*\{\s*([^,\s]+)\s*,", re.M)
SENTENCE = re.compile(r'<s\b[^>]*?\bcites="([^"]*)"[^>]*>(.*?)</s>', re.S)  # also <s cites=".." anonymised="true">
REFERENCE = re.compile(r'<reference id="([^"]*)">([^<]*)</reference>')
CONTEXT = re.compile(r'<context id="([^"]*)"[^>]*>(.*?)</context>', re.S)
NUMBERS = re.compile(r"\[((?:\s*\d+(?:\s*[-–—]\s*\d+)?\s*,?)+)\]")
SLICE = ("ictir-2020/3409256.3409817", "ictir-2020/3409256.3409838", "sigir-2020/3397271.3401330")


@pytest.fixture(scope="module")
def acm_cr(shared) -> Path:
    root = shared / "acm-cr"
    if not (root / "data" / "acm-dl").is_dir():
        pytest.skip(f"ACM-CR is not in {root} (../shared/data/acm-cr, MANIFEST.md): nothing to check")
    return root


# ------------------------------------------------------------------------------ the independent reading


def raw_entries(paths) -> list[tuple[str, str, str, str]]:
    """`(file, type, key, body)` of every `@type{key,` in the files, by regular expression."""
    entries = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        found = list(ENTRY.finditer(text))
        for k, match in enumerate(found):
            body = text[match.end() : found[k + 1].start() if k + 1 < len(found) else len(text)]
            entries.append((str(path), match.group(1).lower(), match.group(2).lower(), body))
    return entries


def is_session(body: str) -> bool:
    title = re.search(r"^\s*title\s*=\s*\{+\s*(.*)", body, re.M | re.I)
    abstract = re.search(r"^\s*abstract\s*=\s*\{\s*[^}\s]", body, re.M | re.I)
    return bool(title) and title.group(1).lower().startswith("session") and not abstract


def expected_collection(paths, blacklist: set[str]) -> dict[str, object]:
    entries = raw_entries(paths)
    kept = [e for e in entries if e[1] in ("article", "inproceedings")]
    keys = {key for _, _, key, _ in kept}
    session = {key for _, _, key, body in kept if is_session(body)}
    records = keys - blacklist - session
    return {
        "entries": len(entries),
        "kept_entries": len(kept),
        "copies": len(kept) - len(keys),
        "records": records,
        "dead": {
            "entry_type": len(entries) - len(kept),
            "blacklisted": sum(1 for _, _, key, _ in kept if key in blacklist),
            "session_paper": sum(1 for _, _, key, body in kept if key in session and key not in blacklist),
        },
    }


def blacklist_of(root: Path) -> set[str]:
    return {
        line.strip().lower()
        for line in (root / "data/topics+qrels/blacklist.txt").read_text().splitlines()
        if line.strip()
    }


def shown_numbers(sentence: str) -> list[str]:
    """Every reference number the sentence's bracket groups of numbers show, ranges expanded, in order."""
    numbers = []
    for group in NUMBERS.finditer(sentence):
        for first, last in re.findall(r"(\d+)(?:\s*[-–—]\s*(\d+))?", group.group(1)):
            numbers.extend(str(n) for n in range(int(first), int(last or first) + 1))
    return numbers


def expected_citations(xml: Path) -> list[tuple[str, str, str, str]]:
    """`(context id, sentence, number, reference text)` for each occurrence of a cited number in its sentence's
    brackets, from the raw XML."""
    text = xml.read_text(encoding="utf-8")
    references = dict(REFERENCE.findall(text))
    found = []
    for context_id, body in CONTEXT.findall(text):
        for cites, sentence in SENTENCE.findall(body):
            cited = {c.strip() for c in cites.split(",")}
            found.extend((context_id, sentence, n, references[n]) for n in shown_numbers(sentence) if n in cited)
    return found


def unshown_cites(xml: Path) -> list[tuple[str, str]]:
    """`(sentence, number)` for each cited number none of its sentence's brackets shows."""
    text = xml.read_text(encoding="utf-8")
    return [
        (sentence, c.strip())
        for cites, sentence in SENTENCE.findall(text)
        for c in set(cites.split(","))
        if c.strip() not in shown_numbers(sentence)
    ]


@pytest.fixture(scope="module")
def collection(acm_cr):
    counts: Counter = Counter()
    papers, letters = read_collection(acm_cr, lambda name, n=1: counts.update({name: n}))
    return papers, letters, counts


# ------------------------------------------------------------------------------------------ the records


def test_one_record_per_doi_as_an_independent_count_finds(acm_cr, collection):
    papers, letters, counts = collection
    paths = sorted(acm_cr.glob("data/acm-dl/*/*.bib"))
    expected = expected_collection(paths, blacklist_of(acm_cr))
    assert counts["acm_cr_entries"] == expected["entries"] == 113_512
    assert expected["kept_entries"] == 112_838  # the count of article and inproceedings entries
    assert counts["acm_cr_copies_merged"] == expected["copies"] == 289  # the same DOI in two files
    assert {p.doi for p in papers} == expected["records"]
    assert len(papers) == len({p.paper_id for p in papers}) == len(expected["records"])
    assert Counter(x.reason for x in letters) == expected["dead"]
    assert len(papers) + len(letters) + counts["acm_cr_copies_merged"] == counts["acm_cr_entries"]


def test_the_doi_is_the_key_also_where_no_doi_field_gives_it(acm_cr, collection):
    """The issue counted 100,011 DOIs from `doi =` fields: ACM's unregistered 10.5555 DOIs have none."""
    papers, _, counts = collection
    entries = [
        e for e in raw_entries(sorted(acm_cr.glob("data/acm-dl/*/*.bib"))) if e[1] in ("article", "inproceedings")
    ]
    fields = {key: re.search(r"^\s*doi\s*=\s*\{([^}]*)\}", body, re.M | re.I) for _, _, key, body in entries}
    stated = {m.group(1).strip().lower() for m in fields.values() if m}
    assert len(stated) == 100_011
    unstated = {key for key, m in fields.items() if not m}
    assert unstated and all(key.startswith("10.5555/") for key in unstated)
    ours = {p.doi for p in papers}
    assert unstated - blacklist_of(acm_cr) - ours == {
        key for _, _, key, body in entries if key in unstated and is_session(body)
    }
    disagreeing = {key for key, m in fields.items() if m and m.group(1).strip().lower() != key}
    assert counts["acm_cr_doi_field_disagrees_with_key"] == len(disagreeing) == 1


# ------------------------------------------------------------------------------------- the citing papers


def test_every_cited_marker_becomes_a_linked_mention(acm_cr):
    documents, letters = read_citing_papers(acm_cr)
    paths = sorted(acm_cr.glob("data/topics+qrels/papers/*/*.xml"))
    assert len(documents) == len(paths) == 50
    ours = Counter()
    for document in documents:
        bib = {e.bib_id: e for e in document.bib_entries}
        for paragraph in document.paragraphs:
            for mention in paragraph.mentions:
                if mention.bib_id:
                    ours[(document.source, mention.bib_id)] += 1
                    assert mention.bib_id in bib
    expected = Counter((str(path), number) for path in paths for _, _, number, _ in expected_citations(path))
    assert ours == expected
    unshown = [u for path in paths for u in unshown_cites(path)]
    assert len([x for x in letters if x.reason == "cite_without_marker"]) == len(unshown) == 5


def _qrels(path: Path) -> dict[str, set[str]]:
    judged: dict[str, set[str]] = defaultdict(set)
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            topic, number, doi, _ = line.split("\t")
            judged[topic].add(doi.strip().lower())
    return judged


def test_positives_are_acm_cr_qrels_but_for_three_explained_differences(acm_cr, collection):
    papers, _, _ = collection
    in_collection = {p.doi for p in papers}
    every_key = {key for _, _, key, _ in raw_entries(sorted(acm_cr.glob("data/acm-dl/*/*.bib")))}
    documents, _ = read_citing_papers(acm_cr)
    ours: dict[str, set[str]] = defaultdict(set)  # per ACM-CR context topic: its doc id suffix + context id
    for document in documents:
        context_ids = [c for c, _ in CONTEXT.findall(Path(document.source).read_text(encoding="utf-8"))]
        dois = {e.bib_id: e.doi for e in document.bib_entries}
        for paragraph in document.paragraphs:
            for mention in paragraph.mentions:
                if mention.bib_id and dois.get(mention.bib_id) in in_collection:
                    ours[document.doi.split(".")[-1] + context_ids[paragraph.section_index]].add(dois[mention.bib_id])
    judged = _qrels(acm_cr / "data/topics+qrels/contexts.qrels")
    only_qrels = {(t, d) for t in judged for d in judged[t] - ours.get(t, set())}
    only_ours = {(t, d) for t in ours for d in ours[t] - judged.get(t, set())}
    # where each difference comes from, read off the raw XML
    unshown, padded = set(), set()
    for path in acm_cr.glob("data/topics+qrels/papers/*/*.xml"):
        text = path.read_text(encoding="utf-8")
        references = dict(REFERENCE.findall(text))
        suffix = path.stem.split(".")[-1]
        for context_id, body in CONTEXT.findall(text):
            for cites, sentence in SENTENCE.findall(body):
                for number in {c.strip() for c in cites.split(",")} - set(shown_numbers(sentence)):
                    unshown.add((suffix + context_id, references[number].strip().lower()))
        padded |= {references[n].strip().lower() for n in references if references[n] != references[n].strip()}
    missing_file = {(t, d) for t, d in only_qrels if d not in every_key}
    assert only_qrels == (only_qrels & unshown) | missing_file
    assert all(d.startswith("10.14778/") for _, d in missing_file)  # PVLDB: vldb/pvldb.bib is absent here
    assert all(d in padded for _, d in only_ours)
    assert (len(only_qrels & unshown), len(missing_file), len(only_ours)) == (4, 2, 2)
    assert len(judged) == len(ours) == 268


# ---------------------------------------------------------------------------------- a slice, built whole


def copy_slice(root: Path, target: Path) -> list[Path]:
    """The `SLICE` citing papers, the BibTeX files holding a DOI they cite, and the blacklist, copied in the
    collection's layout; returns the copied BibTeX files."""
    cited: set[str] = set()
    for name in SLICE:
        source = root / "data/topics+qrels/papers" / f"{name}.xml"
        (target / source.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target / source.relative_to(root))
        cited |= {d.strip().lower() for _, d in REFERENCE.findall(source.read_text(encoding="utf-8"))}
    copied = []
    for path in sorted(root.glob("data/acm-dl/*/*.bib")):
        if cited & {key for _, _, key, _ in raw_entries([path])}:
            (target / path.relative_to(root)).parent.mkdir(parents=True, exist_ok=True)
            copied.append(Path(shutil.copy(path, target / path.relative_to(root))))
    shutil.copy(root / "data/topics+qrels/blacklist.txt", target / "data/topics+qrels/blacklist.txt")
    return copied


@pytest.mark.e2e
def test_a_slice_of_acm_cr_builds_a_dataset(acm_cr, tmp_path):
    from pipelines.arsyta import run

    root = tmp_path / "acm-cr"
    bib_files = copy_slice(acm_cr, root)
    out = tmp_path / "out"
    stats = run(["--runner=FnApiRunner", "--recipe", "acm-cr", "--acm_cr", str(root), "--output", str(out)])

    blacklist = blacklist_of(acm_cr)
    expected = expected_collection(bib_files, blacklist)
    citations = [
        (f"doi:10.1145/{path.stem}", f"doi:{ref.strip().lower()}")
        for path in sorted(root.glob("data/topics+qrels/papers/*/*.xml"))
        for _, _, _, ref in expected_citations(path)
        if ref.strip().lower() in expected["records"]
    ]
    assert len(citations) > 10, "the slice must cite enough of its collection for the check to mean anything"
    rows = read_rows(out / "contexts")
    assert Counter((r["citing_id"], r["cited_id"]) for r in rows) == Counter(citations)
    assert {r["split"] for r in rows} == {"test"} and stats["contexts"] == {
        "train": 0,
        "validation": 0,
        "test": len(citations),
    }
    assert all(r["sentence_context"].count("TARGETCIT") == 1 for r in rows)
    papers = {r["paper_id"]: r["in_pool"] for r in read_rows(out / "papers")}
    citing = {f"doi:10.1145/{name.split('/')[1]}" for name in SLICE}
    assert papers == {**{f"doi:{d}": True for d in expected["records"]}, **dict.fromkeys(citing, False)}
    dead = Counter(r["reason"] for r in read_rows(out / "dead_letter"))
    unshown = sum(len(unshown_cites(p)) for p in root.glob("data/topics+qrels/papers/*/*.xml"))
    assert dead == {
        **{k: v for k, v in expected["dead"].items() if v},
        **({"cite_without_marker": unshown} if unshown else {}),
    }
    assert stats["metadata"].get("metadata_records_merged", 0) == expected["copies"]
    inputs = {r["path"]: (r["records_read"], r["parsed"], r["dead_lettered"]) for r in read_rows(out / "inputs")}
    assert sum(n for n, _, _ in inputs.values()) == expected["entries"] + len(SLICE)
