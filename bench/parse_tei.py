"""How much citrec's TEI extraction costs over a bare lxml parse of the same files.

    python bench/parse_tei.py --mode citrec --repeat 20      # parse_tei: text, mentions, sentences, bibs
    python bench/parse_tei.py --mode library-offsets --repeat 20   # sentence spans from blingfire's own
                                                                    # text_to_sentences_and_offsets
    python bench/parse_tei.py --mode lxml --repeat 20        # the floor: etree.fromstring only
    python bench/parse_tei.py --against HEAD --repeat 10     # old (HEAD's tei.py and sentences.py) against
                                                              # the working tree: identical records, CPU ratio

Reads every TEI under ../shared/data/grobid (or $CITREC_SHARED_DATA/grobid) `--repeat` times and prints
documents per second and the totals, so the two runs can be compared whole-process (time, peak memory).

`--against REV` loads `extractors/documents/tei.py` and `sentences.py` as they are at git revision REV (the
rest of the library is the working tree's), checks that both parse every file into equal `ParsedDocument`s
(or fail with the same drop reason), then times them in alternating rounds in one process (CPU seconds, so
that other load on the machine weighs on both alike) and prints the ratio old/new with the bare lxml parse.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

from lxml import etree

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.shared import shared_data_dir  # noqa: E402
from extractors.documents.tei import DocumentError, parse_tei  # noqa: E402

Parse = Callable[[bytes, str], object]


def parser_at(revision: str) -> Parse:
    """`parse_tei` from `extractors/documents/tei.py` and `sentences.py` at git `revision`, as a module apart
    (`baseline_tei`), importing that revision's sentence splitter and the working tree's everything else."""

    def module(name: str, path: str) -> types.ModuleType:
        source = subprocess.run(
            ["git", "show", f"{revision}:{path}"], cwd=REPO, check=True, capture_output=True, text=True
        ).stdout
        loaded = types.ModuleType(name)
        loaded.__file__ = f"{revision}:{path}"
        sys.modules[name] = loaded
        exec(compile(source, loaded.__file__, "exec"), loaded.__dict__)  # noqa: S102 (our own repository's code)
        return loaded

    sentences = module("baseline_sentences", "extractors/documents/sentences.py")
    current = sys.modules["extractors.documents.sentences"]
    sys.modules["extractors.documents.sentences"] = sentences  # what the old tei.py's import finds
    try:
        tei = module("baseline_tei", "extractors/documents/tei.py")
    finally:
        sys.modules["extractors.documents.sentences"] = current
    return tei.parse_tei


def outcome(parse: Parse, data: bytes, name: str) -> object:
    """The record, or the drop reason, that `parse` makes of one file."""
    try:
        return parse(data, name)
    except DocumentError as err:
        return ("dead", err.reason)
    except Exception as err:  # the old module's own DocumentError is another class
        return ("dead", getattr(err, "reason", type(err).__name__))


TEI = "{http://www.tei-c.org/ns/1.0}"
RETAGS = ("hi", "div", "figure", "note", "p", "cell", "item", "s", "head", "label", "ref", "listBibl")


def mutants(blobs: list[tuple[str, bytes]], per_file: int, seed: int = 7) -> list[tuple[str, bytes]]:
    """`per_file` variants of each file, one edit each (seeded): an element dropped, renamed to another TEI
    element (a section, figure, footnote, container, `<s>`, marker...), made a footnote, given a comment or odd
    whitespace, or the serialised file cut short: the shapes a parser's shortcuts could treat otherwise."""
    rng = random.Random(seed)
    out = []
    for name, data in blobs:
        for k in range(per_file):
            root = etree.fromstring(data)
            elements = [e for e in root.iter() if isinstance(e.tag, str)][1:]
            node = rng.choice(elements)
            edit = rng.choice(("drop", "retag", "footnote", "comment", "whitespace", "truncate"))
            if edit == "drop":
                node.getparent().remove(node)
            elif edit == "retag":
                node.tag = TEI + rng.choice(RETAGS)
            elif edit == "footnote":
                node.tag = TEI + "note"
                node.set("place", "foot")
            elif edit == "comment":
                node.insert(rng.randrange(len(node) + 1), etree.Comment(" a comment "))
            elif edit == "whitespace":
                node.text = (node.text or "") + rng.choice(("  \n\t", "\u00a0 ", "\u2009x  y", "\u3000"))
            variant = etree.tostring(root)
            if edit == "truncate":
                variant = variant[: rng.randrange(len(variant))]
            out.append((f"{name}#{edit}{k}", variant))
    return out


def compare(revision: str, blobs: list[tuple[str, bytes]], repeat: int, per_file: int) -> None:
    """Equal records from both versions (on the files and on `per_file` mutants of each), then CPU seconds of
    each in alternating rounds on the files, and the ratio."""
    old = parser_at(revision)
    checked = blobs + mutants(blobs, per_file)
    differing = [name for name, data in checked if outcome(old, data, name) != outcome(parse_tei, data, name)]
    paragraphs = sum(len(parse_tei(data, name).paragraphs) for name, data in blobs)
    print(
        f"records: {len(checked) - len(differing)} of {len(checked)} inputs ({len(blobs)} files, {paragraphs} "
        f"paragraphs, and {per_file} mutants of each) parse into equal ParsedDocuments or the same drop reason "
        f"at {revision} and in the working tree"
    )
    for name in differing:
        print(f"  DIFFERENT: {name}")
    seconds = {"old": 0.0, "new": 0.0, "lxml": 0.0}
    for _ in range(repeat):
        for label, parse in (("old", old), ("new", parse_tei), ("lxml", lambda data, _: etree.fromstring(data))):
            start = time.process_time()
            for name, data in blobs:
                parse(data, name)
            seconds[label] += time.process_time() - start
    docs = len(blobs) * repeat
    for label, spent in seconds.items():
        print(f"{label:>4}: {spent:.2f} CPU s for {docs} documents, {docs / spent:.1f} docs/s")
    extraction = {label: seconds[label] - seconds["lxml"] for label in ("old", "new")}
    print(
        f"old/new: {seconds['old'] / seconds['new']:.2f}x whole parse, "
        f"{extraction['old'] / extraction['new']:.2f}x extraction beyond the bare lxml parse"
    )
    if differing:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("citrec", "library-offsets", "lxml"), default="citrec")
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--against",
        metavar="REV",
        help="git revision whose tei.py and sentences.py to compare with the working tree (records and CPU)",
    )
    parser.add_argument(
        "--mutants", type=int, default=40, help="with --against: edited variants of each file also compared"
    )
    args = parser.parse_args()
    root = shared_data_dir()
    files = sorted((root / "grobid").glob("*/*.tei.xml"))
    if not files:
        raise SystemExit(f"no TEI files under {root / 'grobid'}")
    blobs = [(str(p), p.read_bytes()) for p in files]
    if args.against:
        compare(args.against, blobs, args.repeat, args.mutants)
        return
    if args.mode == "library-offsets":
        import blingfire

        import extractors.documents.sentences

        def library_spans(text: str) -> list[tuple[int, int]]:
            return [(int(a), int(b)) for a, b in blingfire.text_to_sentences_and_offsets(text)[1] if b > a]

        extractors.documents.sentences.blingfire_spans = library_spans
    start = time.perf_counter()
    mentions = 0
    for _ in range(args.repeat):
        for name, data in blobs:
            if args.mode != "lxml":
                mentions += sum(len(p.mentions) for p in parse_tei(data, name).paragraphs)
            else:
                mentions += len(etree.fromstring(data))
    seconds = time.perf_counter() - start
    docs = len(blobs) * args.repeat
    megabytes = sum(len(d) for _, d in blobs) * args.repeat / 1e6
    print(
        f"{args.mode}: {docs} documents, {megabytes:.1f} MB in {seconds:.2f} s: {docs / seconds:.1f} docs/s, "
        f"{megabytes / seconds:.2f} MB/s (checksum {mentions})"
    )


if __name__ == "__main__":
    main()
