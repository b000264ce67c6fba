"""Build the example and the real-data datasets and write a canonical digest of each, so that two checkouts
(before and after a refactoring) can be compared: every Parquet table's rows (sorted, as JSON), stats.json,
the card, the exports and the plots, less what names the build itself (git commit, versions' build fields).

    python .ci/compare_outputs.py build DIR            # builds into DIR/<name>/ and writes DIR/digest.json
    python .ci/compare_outputs.py digest DIR           # the digest again, of datasets built earlier
    python .ci/compare_outputs.py diff A/digest.json B/digest.json

The checkout the datasets were built from (recorded in DIR/root.txt) is written `<repo>`, and the shared
data beside it `<shared>`, wherever a path holds them, so that a build from a second worktree compares with
one from the first.

Datasets: arsyta on the bundled example (`--export hatten,symtax`), citationr on its bundled example
(`--export rmc`), arsyta on real documents from ../shared/data (os-ia-pipegrobid TEI, the s2orc-doc2json
S2ORC JSON, the arXiv abs-derived metadata and the S2ORC metadata sample) and citationr on the shared NeurIPS
reviews with the same metadata. The real-data ones are skipped when ../shared is absent.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
VOLATILE = {"git_commit", "citrec_version", "dataset_version", "created", "output", "inputs", "run_id"}
PATH_BEARING = (".json", ".md")  # their size follows the checkout's path: their content is digested on its own


def datasets() -> dict[str, list[str]]:
    runs = {
        "arsyta-example": ["pipelines.arsyta", "--export", "hatten,symtax"],
        "citationr-example": ["pipelines.citationr", "--export", "rmc"],
    }
    if (SHARED / "MANIFEST.md").is_file():
        metadata = [
            "--metadata", str(SHARED / "arxiv/arxiv-browse_abs_derived.jsonl"),
            "--metadata", str(SHARED / "s2orc/allenai-s2orc/metadata_sample_v20200705.jsonl"),
        ]  # fmt: skip
        runs["arsyta-real"] = [
            "pipelines.arsyta",
            "--tei", str(SHARED / "grobid/os-ia-pipegrobid/*.tei.xml"),
            "--s2orc", str(SHARED / "s2orc/s2orc-doc2json/*/*.json"),
            *metadata,
            "--export", "hatten,symtax",
        ]  # fmt: skip
        runs["citationr-real"] = [
            "pipelines.citationr",
            "--reviews", str(SHARED / "reviews/neurips-openreview-2023-2025/*/*.json"),
            *metadata,
            "--export", "rmc",
        ]  # fmt: skip
    return runs


def _scrub(value):
    if isinstance(value, dict):
        sized_by_path = str(value.get("path", "")).endswith(PATH_BEARING)
        return {k: _scrub(v) for k, v in value.items() if k not in VOLATILE and not (sized_by_path and k == "bytes")}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


def digest(directory: Path, root: str) -> dict[str, str]:
    import pyarrow.parquet as pq

    shared = str(Path(root).parent / "shared")

    def plain(text: str) -> str:
        return text.replace(shared, "<shared>").replace(root, "<repo>")

    out: dict[str, str] = {}
    tables: dict[str, list[str]] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file():
            continue
        name = str(path.relative_to(directory))
        if path.suffix == ".parquet":
            table = name.rsplit("-", 3)[0] if "-of-" in name else name
            rows = pq.read_table(path).to_pylist()
            tables.setdefault(table, []).extend(plain(json.dumps(r, sort_keys=True, default=str)) for r in rows)
        elif path.suffix == ".json":
            data = _scrub(json.loads(path.read_text()))
            out[name] = hashlib.sha256(plain(json.dumps(data, sort_keys=True)).encode()).hexdigest()
        elif name == "README.md":
            lines = [plain(ln) for ln in path.read_text().splitlines() if "ersion" not in ln and "commit" not in ln]
            out[name] = hashlib.sha256("\n".join(lines).encode()).hexdigest()
        elif path.suffix == ".png" or name.endswith(".txt"):
            out[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    for table, rows in tables.items():
        out[f"{table} ({len(rows)} rows)"] = hashlib.sha256("\n".join(sorted(rows)).encode()).hexdigest()
    return out


def build(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name, command in datasets().items():
        out = target / name
        subprocess.run(
            [sys.executable, "-m", *command[:1], "--runner=FnApiRunner", "--output", str(out), "--overwrite",
             *command[1:]],
            cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        print(f"{name}: built")
    (target / "root.txt").write_text(str(REPO))
    write_digest(target)


def write_digest(target: Path) -> None:
    root = (target / "root.txt").read_text().strip() if (target / "root.txt").is_file() else str(REPO)
    result = {name: digest(target / name, root) for name in datasets() if (target / name).is_dir()}
    for name, files in result.items():
        print(f"{name}: {len(files)} files and tables")
    (target / "digest.json").write_text(json.dumps(result, indent=1, sort_keys=True))


def diff(a: Path, b: Path) -> int:
    before, after = json.loads(a.read_text()), json.loads(b.read_text())
    differences = 0
    for name in sorted(set(before) | set(after)):
        x, y = before.get(name, {}), after.get(name, {})
        for key in sorted(set(x) | set(y)):
            if x.get(key) != y.get(key):
                differences += 1
                print(f"{name}: {key}: {'absent' if key not in x else 'changed' if key in y else 'gone'}")
    print(f"{differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        build(Path(sys.argv[2]))
    elif sys.argv[1:2] == ["digest"]:
        write_digest(Path(sys.argv[2]))
    elif sys.argv[1:2] == ["diff"]:
        raise SystemExit(diff(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        raise SystemExit(__doc__)
