"""Time per marker of `cut_contexts` as one paragraph holds more markers: flat where the cut is linear.

    python bench/contexts.py                                # 10, 100, 1,000, 10,000 markers; old up to 100
    python bench/contexts.py --sizes 10,100,1000 --old_max 1000 --against 4124f59
    python bench/contexts.py --real                         # the real TEI and S2ORC papers, old and new

Each document is made on the spot: a short paragraph, then one paragraph of `n` markers (two to a sentence,
"Work on topic k [k] and (Lee, k) shows result k."), then another short paragraph; every marker cites its own
resolved bib entry, so every marker gives a context. Prints the CPU microseconds per marker (`time.process_time`,
the best of `--repeat` rounds, so that other load on the machine weighs little) of the working tree's cutter, and, for
sizes up to `--old_max`, of `extractors/contexts.py` as it is at git revision `--against` (by default the last
one that masked the whole paragraph for every marker), after checking that both cut the same contexts.
`--real` does the same on the real papers of ../shared/data (or $CITREC_SHARED_DATA): every TEI and S2ORC
document, every bib entry resolved, all cut once per round.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.shared import shared_data_dir  # noqa: E402
from extractors.contexts import cut_contexts  # noqa: E402
from extractors.documents.files import parse_document_file  # noqa: E402
from extractors.documents.sentences import split_sentences  # noqa: E402
from mapping.records import BibEntry, Mention, Paragraph, ParsedDocument  # noqa: E402

Cut = Callable[[ParsedDocument, dict], list]
PER_MARKER_BEFORE = "4124f59"  # the last revision whose cutter masked the whole paragraph for every marker


def cutter_at(revision: str) -> Cut:
    """`cut_contexts` from `extractors/contexts.py` at git `revision`, as a module apart (`baseline_contexts`)
    that imports the working tree's records."""
    source = subprocess.run(
        ["git", "show", f"{revision}:extractors/contexts.py"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    module = types.ModuleType("baseline_contexts")
    module.__file__ = f"{revision}:extractors/contexts.py"
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 (our own repository's code)
    return lambda document, resolved: module.cut_contexts(document, resolved)


def dense_document(markers: int) -> tuple[ParsedDocument, dict[str, str]]:
    """A document whose middle paragraph holds `markers` markers, and the resolution of every bib id."""
    pieces, mentions, length = [], [], 0
    for k in range(markers):
        before = f"Work on topic {k} " if k % 2 == 0 else " and "
        marker = f"[{k}]" if k % 2 == 0 else f"(Lee, {k})"
        start = length + len(before)
        mentions.append(Mention(start, start + len(marker), marker, f"b{k}"))
        after = "" if k % 2 == 0 else f" shows result {k}. "
        pieces.append(before + marker + after)
        length += len(before) + len(marker) + len(after)
    text = "".join(pieces).rstrip()
    spans = [(m.start, m.end) for m in mentions]
    short = "A short paragraph of plain words, shorter than one window. It has two sentences."
    paragraphs = (
        Paragraph(short, 0, "Intro", split_sentences(short), ()),
        Paragraph(text, 0, "Intro", split_sentences(text, spans), tuple(mentions)),
        Paragraph(short, 1, "Method", split_sentences(short), ()),
    )
    document = ParsedDocument(
        paper_id="2001.00001",
        source="bench",
        source_format="tei",
        title="Dense",
        abstract=None,
        authors=(),
        paragraphs=paragraphs,
        bib_entries=tuple(BibEntry(f"b{k}") for k in range(markers)),
    )
    return document, {f"b{k}": f"P{k}" for k in range(markers)}


def real_documents() -> list[tuple[ParsedDocument, dict[str, str]]]:
    """Every real TEI and S2ORC paper, each with every bib entry resolved to a paper of its own."""
    shared = shared_data_dir()
    files = [(p, "tei") for p in sorted((shared / "grobid").rglob("*.tei.xml"))]
    files += [(p, "s2orc") for p in sorted((shared / "s2orc").rglob("*.json"))]
    if not files:
        raise SystemExit(f"no real documents under {shared} (set CITREC_SHARED_DATA)")
    documents = [d for p, kind in files for d in parse_document_file(p.read_bytes(), str(p), kind)]
    return [
        (d, {e.bib_id: f"P{k}" for k, e in enumerate(d.bib_entries)})
        for d in documents
        if isinstance(d, ParsedDocument)
    ]


def seconds_per_marker(cut: Cut, document: ParsedDocument, resolved: dict, repeat: int) -> float:
    """The best of `repeat` rounds' CPU seconds per marker; a round cuts the document as often as half a second
    allows (once at least), as a first cut measures it."""
    start = time.process_time()
    cut(document, resolved)
    cuts = max(1, int(0.5 / max(time.process_time() - start, 1e-6)))
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(cuts):
            cut(document, resolved)
        best = min(best, (time.process_time() - start) / cuts)
    return best / len(resolved)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10,100,1000,10000", help="markers in the dense paragraph, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="rounds per size; the best is reported")
    parser.add_argument("--against", default=PER_MARKER_BEFORE, help="git revision of the old cutter ('' for none)")
    parser.add_argument("--old_max", type=int, default=100, help="time the old cutter up to this many markers")
    parser.add_argument("--real", action="store_true", help="time the real papers of ../shared/data instead")
    args = parser.parse_args(argv)
    old = cutter_at(args.against) if args.against else None
    new: Cut = lambda document, resolved: cut_contexts(document, resolved)  # noqa: E731
    if args.real:
        papers = real_documents()
        markers = sum(len(p.mentions) for d, _ in papers for p in d.paragraphs)
        most = max(len(p.mentions) for d, _ in papers for p in d.paragraphs)
        print(f"{len(papers)} papers, {markers:,} markers (at most {most} in one paragraph)")
        for label, cut in (("new", new), ("old", old)):
            if cut is None:
                continue
            if cut is old and any(old(d, r) != new(d, r) for d, r in papers):
                raise SystemExit("the two cutters cut different contexts")
            best = float("inf")
            for _ in range(args.repeat):
                start = time.process_time()
                for document, resolved in papers:
                    cut(document, resolved)
                best = min(best, time.process_time() - start)
            print(f"{label}: {best:.2f} CPU s, {best / markers * 1e6:.1f} us/marker")
        return
    print(f"{'markers':>8} {'new us/marker':>14} {'old us/marker':>14} {'old/new':>8}")
    for size in (int(s) for s in args.sizes.split(",")):
        document, resolved = dense_document(size)
        new_time = seconds_per_marker(new, document, resolved, args.repeat)
        row = f"{size:>8,} {new_time * 1e6:>14.1f}"
        if old is not None and size <= args.old_max:
            if old(document, resolved) != new(document, resolved):
                raise SystemExit(f"{size} markers: the two cutters cut different contexts")
            old_time = seconds_per_marker(old, document, resolved, args.repeat)
            row += f" {old_time * 1e6:>14.1f} {old_time / new_time:>8.1f}"
        print(row, flush=True)


if __name__ == "__main__":
    main()
