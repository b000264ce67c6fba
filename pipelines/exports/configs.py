"""The peers' run configurations, written beside each layout with their top-K values kept within the pool. The
peers' defaults (HAtten's K up to 2,000, RMC's `num_knn` 100) assume a large paper database: asked for more
neighbours than the index holds, faiss pads its answer with the label -1, and their `index_to_id_mapper[-1]`
stops the run with `KeyError: -1`. Each K here is min(the peer's default, what the pool can answer)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from apache_beam.io.filesystems import FileSystems

Config = dict[str, Any]
ConfigFiles = dict[str, Config]
"""{path relative to the layout's directory (where the peer's repository keeps it): configuration}."""


def answerable_k(papers: int, asked_beyond: int = 0) -> int:
    """The largest K a peer's script can ask for on an index of `papers` papers when it asks the index for K +
    `asked_beyond` neighbours (HAtten asks for K + 1, to drop the citing paper); at least 1 (an index of one
    paper has nothing to prefetch, whatever K is)."""
    return max(1, papers - asked_beyond)


def within(default: int, limit: int) -> int:
    """A top-K setting kept within the pool: min(the peer's default, `limit`)."""
    return min(default, limit)


def k_list_within(defaults: Sequence[int], limit: int) -> list[int]:
    """A list of cut-offs (`K_list`) kept within the pool: each min(K, `limit`), without repeats, in order."""
    return sorted({within(k, limit) for k in defaults})


def config_text(config: Config) -> str:
    """A configuration as the peers read it: JSON (HAtten's run.py strips `#` comments, then parses JSON; the
    rerankers and RMC call `json.load`)."""
    return json.dumps(config, indent=4) + "\n"


def write_configs(directory: str, configs: ConfigFiles) -> list[str]:
    """Each configuration under `directory` (any Beam filesystem path); returns the paths written."""
    written = []
    for relative, config in sorted(configs.items()):
        path = FileSystems.join(directory, relative)
        with FileSystems.create(path) as handle:
            handle.write(config_text(config).encode("utf-8"))
        written.append(path)
    return written


LayoutConfigs = Callable[[Mapping[str, int]], ConfigFiles]
"""A layout's configurations from its counts (entries per file, as the export returns them)."""
