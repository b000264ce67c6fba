"""A runner that writes down the module of every function and DoFn a pipeline would ship to workers, then runs it on
FnApiRunner: `--runner=tests.support.recording.RecordingRunner` with `$CITREC_RECORD_MODULES` naming the file.

A worker imports what it unpickles by module name; a function or DoFn of `__main__` (the module `python -m` runs)
exists only in the launching process, so on a distributed runner it breaks or travels by value.
"""

from __future__ import annotations

import os

from apache_beam.pipeline import PipelineVisitor
from apache_beam.runners.portability.fn_api_runner import FnApiRunner
from apache_beam.transforms.core import CallableWrapperCombineFn, CallableWrapperDoFn, CombinePerKey, ParDo

RECORD_ENV = "CITREC_RECORD_MODULES"


def _inside(obj, depth: int = 0):
    """`obj`, and the functions it wraps: a `Map`'s function sits in the closure of Beam's own wrapper."""
    yield obj
    if depth > 4:
        return
    if isinstance(obj, CallableWrapperDoFn | CallableWrapperCombineFn):
        yield from _inside(obj._fn, depth + 1)  # noqa: SLF001 - the function Map/FlatMap/Filter/Combine ship
    for cell in getattr(obj, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if callable(value):
            yield from _inside(value, depth + 1)


def _shipped(transform) -> list[object]:
    """The user code a primitive transform carries: a ParDo's DoFn and what it wraps, a combine's fn."""
    fn = getattr(transform, "fn", None) if isinstance(transform, ParDo | CombinePerKey) else None
    return [] if fn is None else list(_inside(fn))


class _Modules(PipelineVisitor):
    def __init__(self) -> None:
        self.seen: set[tuple[str, str]] = set()

    def visit_transform(self, applied) -> None:
        for obj in _shipped(applied.transform):
            module = getattr(obj, "__module__", None) or type(obj).__module__
            name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
            self.seen.add((applied.full_label, f"{module}:{name}"))


class RecordingRunner(FnApiRunner):
    def run_pipeline(self, pipeline, options):
        visitor = _Modules()
        pipeline.visit(visitor)
        path = os.environ.get(RECORD_ENV)
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                for label, where in sorted(visitor.seen):
                    handle.write(f"{where}\t{label}\n")
        return super().run_pipeline(pipeline, options)
