"""Resumable training, the same for every trainer: `last.pt` (or a trainer's own files) written every
`--checkpoint_every` steps or `--checkpoint_minutes`, whichever comes first, and at a Ctrl-C; running the same
command again resumes from it (`--no_resume` starts afresh).

A loop calls `Checkpointer.step_done(step, save)` after each step; `save` hands everything the next step depends
on to `write`, so a resumed run ends with the same weights. `load_checkpoint` reads every file with
`torch.load(weights_only=True)` plus named record types, refusing anything else.
"""

from __future__ import annotations

import argparse
import pickle
import random
import re
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch

NUMPY_ARRAY_GLOBALS: tuple[Any, ...] = (
    np.ndarray,
    np.dtype,
    np.zeros(0).__reduce__()[0],  # numpy's array reconstructor (numpy._core.multiarray._reconstruct)
    np.float64(0).__reduce__()[0],  # and its scalar one (numpy._core.multiarray.scalar)
    *dict.fromkeys(type(np.dtype(code)) for code in "?bhilqBHILQefdg"),
)
"""What a numpy array or scalar of a plain dtype is pickled with: a class, its dtype and the functions that
rebuild it from bytes (an array of Python objects would need their own globals, which stay refused)."""


_REFUSED = re.compile(r"WeightsUnpickler error: (.+?)(?:\.\s|\n|$)")
"""The sentence of torch's refusal that names what was refused ("Unsupported global: GLOBAL io.open ...")."""


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint holding something a weights-only load refuses: not loaded, nothing in it run."""


def load_checkpoint(path: Path | str, types: Iterable[type] = ()) -> Any:
    """What `torch.save` wrote at `path`, on the CPU, loaded weights-only (tensors, numbers, text, lists, tuples,
    dicts, numpy arrays and the classes in `types`); anything else raises `UnsafeCheckpointError`."""
    with torch.serialization.safe_globals([*NUMPY_ARRAY_GLOBALS, *types]):
        try:
            return torch.load(path, map_location="cpu", weights_only=True)
        except pickle.UnpicklingError as err:
            found = _REFUSED.search(str(err))
            reason = found.group(1) if found else str(err).strip().splitlines()[0]
            raise UnsafeCheckpointError(
                f"{path} holds objects a weights-only load refuses, so it was not loaded ({reason[:300]}); "
                "it was not written by this trainer: move it away or start afresh (--no_resume)"
            ) from err


class StopRequest:
    """Ctrl-C while training: the first asks the loop to stop after the current step (the checkpoint is written at
    that boundary, so a resumed run continues exactly); a second interrupts at once."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def _handle(self, signum: int, frame: object) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        print("\nstopping after this step (Ctrl-C again to stop at once)", file=sys.stderr)

    def __enter__(self) -> StopRequest:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
            self._previous = None


def save_atomic(state: object, path: Path) -> None:
    """`torch.save` to a temporary file, then a rename: a crash while writing leaves the previous file whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    torch.save(state, temporary)
    temporary.replace(path)


def capture_rng(**generators: random.Random | np.random.Generator) -> dict:
    """The global Python, numpy and torch (CPU and CUDA) generators' states and each named local generator's."""
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
        "local": {},
    }
    for name, generator in generators.items():
        if isinstance(generator, np.random.Generator):
            state["local"][name] = generator.bit_generator.state
        else:
            state["local"][name] = generator.getstate()
    return state


def restore_rng(state: dict, **generators: random.Random | np.random.Generator) -> None:
    """Put back what `capture_rng` took (the named local generators by the same names)."""
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if state.get("cuda") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
    for name, generator in generators.items():
        if isinstance(generator, np.random.Generator):
            generator.bit_generator.state = state["local"][name]
        else:
            generator.setstate(state["local"][name])


class Checkpointer:
    """When to write a training checkpoint and where: every `every` steps (0: never by count) or `minutes` minutes,
    whichever comes first, and after a Ctrl-C (`StopRequest`, installed while the checkpointer is entered).
    `types`: the classes besides tensors, plain values and numpy arrays that the trainer's state holds, and
    `load` rebuilds (records such as queries and `datetime.date`); nothing else is loaded."""

    def __init__(
        self,
        path: Path,
        every: int = 1000,
        minutes: float = 10.0,
        *,
        resume: bool = True,
        types: Iterable[type] = (),
    ) -> None:
        self.path = Path(path)
        self.every, self.minutes, self.resume = every, minutes, resume
        self.types = tuple(types)
        self.stop = StopRequest()
        self._last_write = time.monotonic()

    @classmethod
    def from_flags(cls, args: argparse.Namespace, path: Path, types: Iterable[type] = ()) -> Checkpointer:
        """The checkpointer the flags of `add_checkpoint_flags` ask for, writing `path`; flags a namespace lacks
        take the defaults above (a trainer called from Python with a hand-made namespace)."""
        return cls(
            path,
            getattr(args, "checkpoint_every", 1000),
            getattr(args, "checkpoint_minutes", 10.0),
            resume=not getattr(args, "no_resume", False),
            types=types,
        )

    def __enter__(self) -> Checkpointer:
        self.stop.__enter__()
        self._last_write = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.__exit__(*exc)

    @property
    def directory(self) -> Path:
        """The directory of the checkpoint a `load` found (for `write(..., files=)` checkpoints: the model files)."""
        partial = self._partial()
        return partial if not self.path.is_file() and (partial / self.path.name).is_file() else self.path.parent

    def _partial(self) -> Path:
        return self.path.parent.with_name(self.path.parent.name + ".partial")

    def load(self) -> dict | None:
        """The state a previous run left, or None (none there, or `resume` off); loaded weights-only
        (`load_checkpoint`), so a file holding anything but the state's own types raises `UnsafeCheckpointError`."""
        path = self.directory / self.path.name
        if not self.resume or not path.is_file():
            return None
        return load_checkpoint(path, self.types)

    def write(self, state: object, files: Callable[[Path], None] | None = None) -> None:
        """`state` at `path`; with `files`, the checkpoint is `path`'s whole directory: `files(directory)` fills a
        fresh one (model weights, tokenizer...) beside it, the state goes in last, and the two are swapped."""
        if files is None:
            save_atomic(state, self.path)
        else:
            partial = self._partial()
            shutil.rmtree(partial, ignore_errors=True)
            files(partial)
            save_atomic(state, partial / self.path.name)
            shutil.rmtree(self.path.parent, ignore_errors=True)
            partial.rename(self.path.parent)
        self._last_write = time.monotonic()

    def due(self, step: int) -> bool:
        overdue = time.monotonic() - self._last_write >= 60 * self.minutes
        return (self.every > 0 and step % self.every == 0) or overdue or self.stop.requested

    def step_done(self, step: int, save: Callable[[], None]) -> bool:
        """After step `step`: `save()` when a checkpoint is due; True when a Ctrl-C asked the run to stop."""
        if self.due(step):
            save()
            self._last_write = time.monotonic()
        if self.stop.requested:
            print(f"stopped after step {step}; {self.path} keeps it (the same command resumes)", file=sys.stderr)
            return True
        return False


def add_checkpoint_flags(parser: argparse.ArgumentParser, every: int = 1000, unit: str = "steps") -> None:
    """--checkpoint_every, --checkpoint_minutes, --no_resume."""
    parser.add_argument(
        "--checkpoint_every",
        type=int,
        default=every,
        help=f"{unit.capitalize()} between resumable checkpoints ({every}; 0: by time and Ctrl-C only).",
    )
    parser.add_argument(
        "--checkpoint_minutes", type=float, default=10.0, help="Minutes between checkpoints, whichever first (10)."
    )
    parser.add_argument("--no_resume", action="store_true", help="Start afresh even when a checkpoint exists.")
