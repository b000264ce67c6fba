"""What every dataset's end shares, with no Beam: counts read out of the run's tallies, the end-of-run summary,
the files stats.json and the card become, and the card's HuggingFace header.

Each dataset (`extractors.dataset`, `extractors.reviews.dataset`) keeps only what is its own: which tallies make
the funnel, which balances must hold, the card's text. A card is read on other machines than the one that wrote
it, so what it shows is relative to the dataset's own directory.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath, PureWindowsPath

from extractors.schemas import SPLITS

# ---------------------------------------------------------------------------------------------- counts


def funnel_counts(tallies: Mapping[str, int], keys: Iterable[str]) -> dict[str, int]:
    """The funnel: every key in its place, zero when nothing was counted under it."""
    return {key: int(tallies.get(key, 0)) for key in keys}


def split_counts(tallies: Mapping[str, int], name: str, splits: Sequence[str] = SPLITS) -> dict[str, int]:
    """`name:<split>` for every split, in split order (`contexts:train` -> `{"train": n, ...}`)."""
    return {split: int(tallies.get(f"{name}:{split}", 0)) for split in splits}


def counts_starting(tallies: Mapping[str, int], prefixes: str | tuple[str, ...]) -> dict[str, int]:
    """The tallies whose names start with one of `prefixes`, names kept whole, sorted by name."""
    return {k: int(v) for k, v in sorted(tallies.items()) if k.startswith(prefixes)}


def counts_under(tallies: Mapping[str, int], group: str) -> dict[str, int]:
    """The tallies named `<group>:<rest>`, keyed by `rest` (`dead:read:too_large` -> `read:too_large`)."""
    prefix = f"{group}:"
    return {k[len(prefix) :]: int(v) for k, v in sorted(tallies.items()) if k.startswith(prefix)}


# ------------------------------------------------------------------------------------------ the summary


def per_split_line(what: str, counts: Mapping[str, int]) -> str:
    """One summary line: `contexts per split: train 3, validation 2, test 1`."""
    return f"{what} per split: " + ", ".join(f"{k} {v:,}" for k, v in counts.items())


def format_summary(stats: Mapping, lines: Sequence[str] = ()) -> str:
    """The end-of-run summary: the funnel, a dataset's own `lines`, then each balance check."""
    funnel = stats["funnel"]
    width = max(len(k) for k in funnel)
    summary = ["funnel:"] + [f"  {k.ljust(width)}  {v:>10,}" for k, v in funnel.items()]
    summary += lines
    summary += [f"check {name}: {'ok' if ok else 'MISMATCH'}" for name, ok in stats["checks"].items()]
    return "\n".join(summary)


def stats_and_card_files(stats: Mapping, card: str) -> dict[str, bytes]:
    """stats.json and README.md, as every dataset writes them."""
    return {
        "stats.json": (json.dumps(stats, indent=2) + "\n").encode("utf-8"),
        "README.md": card.encode("utf-8"),
    }


# ---------------------------------------------------------------------------------- the card's header

HF_SPLIT_NAME = re.compile(r"^\w+(\.\w+)*$")
"""The split names HuggingFace `datasets` accepts (its `datasets.splits._split_re`)."""
_PLAIN_YAML = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./*-]*$")

DataFiles = str | Sequence[tuple[str, str]]
"""A config's files: one glob (HuggingFace reads it as the `train` split) or `(split, glob)` pairs."""


def hf_configs(
    split_table: str, per_split: Mapping[str, int], tables: Iterable[tuple[str, int]]
) -> list[tuple[str, DataFiles]]:
    """The configs a card lists: `default` (the `split_table`, one split per split with rows), then each of
    `tables` (name, rows) that has rows, as one split named after the table (`load_dataset(root, "papers",
    split="papers")`, as BEIR's `corpus` config is): a dataset whose only config is a table then never hands
    that table out as `train`. A split or table with no rows has no file HuggingFace `datasets` can read (the
    writer drops 0-row split shards, and `datasets` rejects a 0-row shard), so it is left out."""
    present = [split for split, n in per_split.items() if n > 0]
    configs: list[tuple[str, DataFiles]] = []
    if present:
        configs.append(("default", [(split, f"{split_table}/{split}-*.parquet") for split in present]))
    configs += [(table, [(table, f"{table}/*.parquet")]) for table, rows in tables if rows > 0]
    return configs


def card_title(dataset: str, recipe: str | None = None) -> str:
    """A card's title and `pretty_name`: `citrec arsyta (recipe hatten-arxiv)`; the dataset alone without one."""
    return f"{dataset} (recipe {recipe})" if recipe else dataset


DATASET_LINE = 'DATASET = "."  # this directory; run from elsewhere, set it to the path of this directory'
"""The line of a card's snippet a reader changes when the snippet is not run inside the dataset's directory."""


def load_snippet(split_table: str, configs: Sequence[tuple[str, DataFiles]]) -> str:
    """The card's Python: every config of its header (`hf_configs`) loaded with HuggingFace `datasets`, run inside
    the dataset's directory as it stands, from anywhere else with `DATASET` set to the directory's path. The
    directory is resolved first: `datasets` names a local dataset after its directory, and "." has no name."""
    lines = ["from pathlib import Path", "", "from datasets import load_dataset", "", DATASET_LINE]
    lines.append("root = str(Path(DATASET).resolve())")
    for name, files in configs:
        if name == "default":
            splits = ", ".join(split for split, _ in files)
            lines.append(f"{split_table} = load_dataset(root)  # the default config: {splits}")
        else:
            lines.append(f'{name} = load_dataset(root, "{name}", split="{name}")')
    if not configs:
        lines.append("# no table has rows: the header lists no config to load")
    return "\n".join(lines)


def without_local_dirs(value: object) -> object:
    """`value` (JSON: dicts, lists, strings, numbers) with each absolute local path (`/home/me/corpus/tei/*.xml`,
    `~/x`, `C:\\x`) cut to its last directory and file behind `.../` (`.../tei/*.xml`), for a card: which folders
    of the machine that ran it held the inputs says nothing to its readers, and may say too much. Relative paths
    and URLs (`gs://`) stay as given; stats.json and manifest.json keep every path whole."""
    if isinstance(value, Mapping):
        return {key: without_local_dirs(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_local_dirs(item) for item in value]
    if isinstance(value, str) and (value.startswith(("/", "~")) or _WINDOWS_ABSOLUTE.match(value)):
        path = PureWindowsPath(value) if _WINDOWS_ABSOLUTE.match(value) else PurePosixPath(value)
        names = path.parts[1:]  # without the root, the drive or `~`
        return ".../" + "/".join(names[-2:]) if names else "..."
    return value


_WINDOWS_ABSOLUTE = re.compile(r"^[A-Za-z]:[\\/]")


def hf_front_matter(pretty_name: str, configs: Sequence[tuple[str, DataFiles]]) -> str:
    """The YAML header of a HuggingFace dataset card: `pretty_name` and `configs`.

    Globs are relative to the dataset's root. Written by hand so that a run needs no PyYAML; names, splits
    and globs must be plain YAML scalars (ValueError otherwise), split names HuggingFace's.
    """
    lines = ["---", f"pretty_name: {json.dumps(pretty_name)}"]
    lines += ["configs:"] if configs else []
    for config_name, data_files in configs:
        pairs = [] if isinstance(data_files, str) else list(data_files)
        words = [config_name, data_files] if isinstance(data_files, str) else [config_name, *sum(pairs, start=())]
        for word in words:
            if not _PLAIN_YAML.match(word) or ".." in word:
                raise ValueError(f"not a plain relative name or glob for a dataset card: {word!r}")
        for split, _ in pairs:
            if not HF_SPLIT_NAME.match(split):
                raise ValueError(f"{split!r} is not a HuggingFace split name")
        lines.append(f"- config_name: {config_name}")
        if isinstance(data_files, str):
            lines.append(f"  data_files: {data_files}")
            continue
        lines.append("  data_files:")
        for split, glob in pairs:
            lines += [f"  - split: {split}", f"    path: {glob}"]
    lines.append("---")
    return "\n".join(lines) + "\n"
