"""The dataset card's plots: the small dicts stats.json keeps under `plots` in, PNG bytes out.

Drawn with matplotlib's object API on the Agg canvas (no pyplot, so no global backend or figure state), in
matplotlib's default style whatever the user's matplotlibrc says, at a fixed size, and without the PNG's text
chunks (`Software`): the same numbers give the same bytes with the same matplotlib and fonts.

    python -m extractors.plots OUTPUT/stats.json DIR    # draw a finished run's plots again into DIR
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import matplotlib.style
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from extractors.schemas import CONTEXT_VIEWS

FIGURE_SIZE = (8.0, 4.5)  # inches
DPI = 100
PNG_METADATA: dict[str, str | None] = {"Software": None}
"""matplotlib writes its version as the PNG's `Software` text; None leaves it out (PNG gets no date)."""
TOP_CATEGORIES = 20
SPLIT_COLOURS = {"train": "#4C72B0", "validation": "#DD8452", "test": "#55A868"}


def _figure() -> Figure:
    figure = Figure(figsize=FIGURE_SIZE, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata=PNG_METADATA)
    return buffer.getvalue()


def _contexts_per_year(numbers: Mapping) -> Figure | None:
    per_year = numbers.get("contexts_per_year") or {}
    if not per_year:
        return None
    years = list(per_year)
    splits = [s for s in SPLIT_COLOURS if any(s in v for v in per_year.values())]
    splits += sorted({s for v in per_year.values() for s in v} - set(splits))
    figure = _figure()
    axes = figure.add_subplot()
    bottom = [0] * len(years)
    for split in splits:
        heights = [per_year[y].get(split, 0) for y in years]
        axes.bar(range(len(years)), heights, bottom=bottom, label=split, color=SPLIT_COLOURS.get(split, "#8C8C8C"))
        bottom = [b + h for b, h in zip(bottom, heights, strict=True)]
    step = max(1, len(years) // 20)
    axes.set_xticks(range(0, len(years), step), years[::step], rotation=90 if len(years) > 12 else 0)
    axes.set_xlabel("year of the citing paper")
    axes.set_ylabel("contexts")
    axes.set_title(f"Contexts per year ({sum(bottom):,} in all)")
    axes.legend()
    return figure


def _citations_per_paper(numbers: Mapping) -> Figure | None:
    per_paper = numbers.get("citations_per_paper") or {}
    series = {
        "cited by k contexts": per_paper.get("contexts") or {},
        "cited by k papers": per_paper.get("citing_papers") or {},
    }
    if not any(series.values()):
        return None
    figure = _figure()
    axes = figure.add_subplot()
    for (label, counts), marker in zip(series.items(), ("o", "s"), strict=True):
        if counts:
            axes.plot([int(k) for k in counts], list(counts.values()), marker, label=label, alpha=0.7, markersize=4)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("k (citations)")
    axes.set_ylabel("cited papers")
    cited = sum(series["cited by k papers"].values()) or sum(series["cited by k contexts"].values())
    axes.set_title(f"Citations per cited paper ({cited:,} cited papers)")
    axes.legend()
    return figure


def _context_lengths(numbers: Mapping) -> Figure | None:
    lengths = numbers.get("context_lengths") or {}
    if not any(lengths.get(view) for view in CONTEXT_VIEWS):
        return None
    width, cap = int(lengths.get("bucket_width", 1)), int(lengths.get("cap", 0))
    figure = _figure()
    panels = figure.subplots(1, len(CONTEXT_VIEWS))
    for axes, view in zip(panels, CONTEXT_VIEWS, strict=True):
        counts = lengths.get(view) or {}
        axes.bar([int(k) for k in counts], list(counts.values()), width=width, align="edge", color="#4C72B0")
        mean = (lengths.get("mean") or {}).get(view)
        axes.set_title(f"{view} (mean {mean:,.0f})" if mean is not None else f"{view} (none)")
        capped = str(cap) in counts
        axes.set_xlabel(f"characters (last bar: {cap:,} or more)" if capped else "characters")
        axes.set_ylabel("contexts")
    return figure


def _categories(numbers: Mapping) -> Figure | None:
    categories = dict(numbers.get("citing_primary_categories") or {})
    if not categories:
        return None
    ranked = sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ranked[:TOP_CATEGORIES]
    rest = sum(n for _, n in ranked[TOP_CATEGORIES:])
    if rest:
        shown.append((f"{len(ranked) - TOP_CATEGORIES} others", rest))
    figure = _figure()
    axes = figure.add_subplot()
    labels = [name for name, _ in shown][::-1]
    axes.barh(range(len(shown)), [n for _, n in shown][::-1], color="#4C72B0")
    axes.set_yticks(range(len(shown)), labels)
    axes.set_xlabel("citing papers")
    axes.set_title(f"Primary category of the citing papers ({sum(categories.values()):,} papers)")
    return figure


DRAWERS: dict[str, Callable[[Mapping], Figure | None]] = {
    "contexts_per_year.png": _contexts_per_year,
    "citations_per_paper.png": _citations_per_paper,
    "context_lengths.png": _context_lengths,
    "categories.png": _categories,
}


def render_plots(numbers: Mapping) -> dict[str, bytes]:
    """{file name: PNG bytes} for every plot with something to show (`extractors.dataset.plot_numbers`'s dict, or
    stats.json's `plots`), in the card's order; an empty dataset gives {}."""
    plots = {}
    with matplotlib.style.context("default"):
        for name, draw in DRAWERS.items():
            figure = draw(numbers)
            if figure is not None:
                plots[name] = _png(figure)
    return plots


def main(argv: Sequence[str] | None = None) -> None:
    argv = list(argv if argv is not None else sys.argv[1:])
    if len(argv) != 2 or argv[0] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        raise SystemExit(0 if argv[:1] in (["-h"], ["--help"]) else 2)
    stats = json.loads(Path(argv[0]).read_text())
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, png in render_plots(stats.get("plots") or {}).items():
        (out / name).write_bytes(png)
        print(out / name)


if __name__ == "__main__":
    main()
