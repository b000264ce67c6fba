"""What every job shares: seeds, the device, mixed precision, JSON output and the command-line flags."""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from trainers.data import CONTEXT_FIELDS


def seed_everything(seed: int) -> None:
    """Python, numpy and torch (all devices) from one seed."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def resolve_device(name: str) -> torch.device:
    """`auto` is the GPU when one is present, the CPU otherwise."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(name)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit(f"--device {name}: no CUDA device is available")
    return device


def autocast(device: torch.device, enabled: bool) -> AbstractContextManager:
    """float16 autocast on CUDA when mixed precision is on; a no-op elsewhere."""
    return torch.autocast(device_type=device.type, dtype=torch.float16, enabled=enabled and device.type == "cuda")


def grad_scaler(device: torch.device, enabled: bool) -> torch.amp.GradScaler:
    return torch.amp.GradScaler("cuda", enabled=enabled and device.type == "cuda")


def write_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")


def read_json(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8"))


def dataset_versions(directory: str | Path) -> dict:
    """The dataset and schema versions (and code commit) of a written dataset's manifest.json; {} without one (a
    dataset in the HAtten/SymTax JSON layout has none). Results files carry it, so a figure names its data."""
    path = Path(directory) / "manifest.json"
    if not path.is_file():
        return {}
    manifest = read_json(path)
    keys = ("dataset", "dataset_version", "schema_version", "citrec_version", "git_commit")
    return {key: manifest[key] for key in keys if key in manifest}


def write_split_metrics(path: Path, split: str, metrics: dict, shown: Sequence[str] | None = None) -> None:
    """One split's results as JSON at `path`, and its numbers (those named in `shown`, or all) on one line."""
    write_json(path, metrics)
    keys = [k for k in (shown if shown is not None else metrics) if isinstance(metrics.get(k), float)]
    print(f"{split}: " + ", ".join(f"{k}={metrics[k]:.4f}" for k in keys) + f" ({path})")


def run_command(
    args: argparse.Namespace,
    run: Callable[[argparse.Namespace], dict],
    expected: tuple[type[Exception], ...],
) -> dict:
    """A trainer's `main` once its flags are read: seeds from `--seed`, then `run(args)`; an `expected` error (a
    missing file or model, an empty split) ends the command with its one line, not a traceback."""
    seed_everything(args.seed)
    try:
        return run(args)
    except expected as error:
        raise SystemExit(f"error: {error}") from error


def command_parser(prog: str, description: str | None) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """A trainer's command line of subcommands (`train`, `evaluate`...): the parser, its module docstring as the
    description kept as written, and the required subcommand (`args.command`) to add them to."""
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    return parser, parser.add_subparsers(dest="command", required=True)


def add_dataset_flags(parser: argparse.ArgumentParser) -> None:
    """--dataset, --context_field."""
    parser.add_argument(
        "--dataset", required=True, help="A dataset directory: Parquet shards or the HAtten JSON layout."
    )
    parser.add_argument(
        "--context_field",
        choices=CONTEXT_FIELDS,
        default="char_context",
        help="Which local context the queries use (the JSON layout only has char_context).",
    )


def add_common_flags(parser: argparse.ArgumentParser) -> None:
    """The dataset flags and --device, --amp, --seed, --no_progress."""
    add_dataset_flags(parser)
    add_runtime_flags(parser)


def add_runtime_flags(parser: argparse.ArgumentParser) -> None:
    """--device (auto: CUDA when present), --amp (on by default; `autocast` and `grad_scaler` make it a no-op off
    CUDA), --seed, --no_progress: every trainer's, so that each takes the GPU and mixed precision the same way."""
    parser.add_argument("--device", default="auto", help="auto (CUDA when present), cpu, cuda or cuda:N.")
    parser.add_argument(
        "--amp", action=argparse.BooleanOptionalAction, default=True, help="Mixed precision (float16) on CUDA."
    )
    parser.add_argument("--seed", type=int, default=0, help="Seed for Python, numpy and torch.")
    parser.add_argument("--no_progress", action="store_true", help="No progress bars.")


def add_preset_flag(parser: argparse.ArgumentParser, presets, what: str, paper: str = "the published settings") -> None:
    """--preset: `paper` (the default) or another of `presets`; `what` says what smoke is, `paper` what paper is."""
    parser.add_argument(
        "--preset",
        choices=sorted(presets),
        default="paper",
        help=f"paper: {paper} (default); smoke: {what}. Explicit flags override the preset.",
    )


def train_command(
    commands: argparse._SubParsersAction,
    presets,
    what: str,
    paper: str = "the published settings",
    help: str = "Train.",
    description: str | None = None,
) -> argparse.ArgumentParser:
    """A trainer's `train` subcommand with the common flags and --preset (`add_preset_flag`'s `what`/`paper`)."""
    train = commands.add_parser("train", help=help, description=description)
    add_common_flags(train)
    add_preset_flag(train, presets, what, paper)
    return train


def parse_with_preset(build_parser: Callable[[str], argparse.ArgumentParser], argv: list[str] | None):
    """Parse `argv` with the parser `build_parser(preset)` makes for the --preset it names (`paper` when none), so
    that a preset's values are the defaults and explicit flags override them."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--preset", default="paper")
    return build_parser(first.parse_known_args(argv)[0].preset).parse_args(argv)


# Fine-tuning a pretrained encoder: BERT-family encoders are fine-tuned at 1e-5 to 5e-5 (BERT's and SBERT's 2e-5).
# Beyond these bounds a few steps wreck what the encoder learned (above: a smoke run of all-MiniLM-L6-v2 at 1e-3
# ends below the untrained encoder and BM25, docs/trainers.md) or leave it as it was (below).
USUAL_FINE_TUNING_RATES = "1e-5 to 5e-5"
FINE_TUNING_RATE_BOUNDS = (1e-7, 5e-4)


@dataclass(frozen=True)
class PresetRates:
    """A preset's learning rate for each kind of encoder a trainer may be given: `pretrained` fine-tunes a
    pretrained encoder (the trainer's published rate, whatever the preset), `tiny` trains the randomly initialised
    model of `trainers.tiny_model`, which a short smoke run must move far to learn anything."""

    pretrained: float
    tiny: float


@dataclass(frozen=True)
class LearningRateChoice:
    """The rate a run uses, why (recorded beside the results), and a `warning:` line when it looks like a mistake."""

    rate: float
    reason: str
    warning: str | None = None


def choose_learning_rate(
    explicit: float | None, rates: PresetRates, preset: str, pretrained: bool, flag: str = "--learning_rate"
) -> LearningRateChoice:
    """An explicit rate wins (with a warning when it is far outside the usual range for fine-tuning a pretrained
    encoder, `FINE_TUNING_RATE_BOUNDS`); without one, the preset's rate for the kind of encoder trained."""
    kind = "a pretrained encoder" if pretrained else "the tiny random model"
    if explicit is None:
        rate = rates.pretrained if pretrained else rates.tiny
        return LearningRateChoice(rate, f"--preset {preset}'s rate for {kind}")
    low, high = FINE_TUNING_RATE_BOUNDS
    warning = None
    if pretrained and not low <= explicit <= high:
        effect = "a few steps can wreck what it learned" if explicit > high else "it will barely change"
        warning = (
            f"warning: {flag} {explicit:g} is far {'above' if explicit > high else 'below'} the usual rates for "
            f"fine-tuning a pretrained encoder ({USUAL_FINE_TUNING_RATES}; this trainer's is {rates.pretrained:g}): "
            f"{effect}"
        )
    return LearningRateChoice(explicit, f"{flag} given, {kind}", warning)


def add_learning_rate_flag(
    parser: argparse.ArgumentParser,
    rates: Mapping[str, PresetRates],
    flag: str = "--learning_rate",
    optimizer: str = "AdamW",
    whose: str = "",
) -> None:
    """The learning-rate flag of a trainer that fine-tunes an encoder, its help written from `rates` (the
    `settle_learning_rate` table: the value given wins, None lets the preset choose); `whose` names the published
    rate ("SBERT's")."""
    published = f"{_rate(rates['paper'].pretrained)}{f', {whose},' if whose else ''}"
    low, high = FINE_TUNING_RATE_BOUNDS
    parser.add_argument(
        flag,
        type=float,
        help=f"{optimizer} learning rate (default: {published} for a pretrained encoder; the tiny model of "
        f"trainers.tiny_model gets {_rate(rates['smoke'].tiny)} under --preset smoke; a warning when far outside "
        f"{_rate(low)} to {_rate(high)} for a pretrained encoder).",
    )


def _rate(value: float) -> str:
    """A rate as the help texts write it, in scientific notation: 1e-4, 2.5e-5 (not 0.0001 or 1e-05)."""
    mantissa, exponent = f"{value:e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def settle_learning_rate(
    args: argparse.Namespace,
    rates: Mapping[str, PresetRates],
    pretrained: bool,
    attribute: str = "learning_rate",
) -> LearningRateChoice:
    """Set `args.<attribute>` (None: not given) to the rate `choose_learning_rate` picks for `args.preset`, record
    why in `args.learning_rate_choice` (the options written beside the results), print its warning on stderr."""
    flag = f"--{attribute}"
    choice = choose_learning_rate(getattr(args, attribute), rates[args.preset], args.preset, pretrained, flag)
    setattr(args, attribute, choice.rate)
    args.learning_rate_choice = choice.reason
    if choice.warning:
        print(choice.warning, file=sys.stderr)
    return choice


def add_field_flag(parser: argparse.ArgumentParser, field) -> None:
    """--<name> for one dataclass field of a config (`hatten_model.flag_fields`): its type and default, a boolean
    as --name / --no-name, the help from its metadata."""
    help_text = f"{field.metadata['help']} (default {field.default})"
    if isinstance(field.default, bool):
        parser.add_argument(
            f"--{field.name}", action=argparse.BooleanOptionalAction, default=field.default, help=help_text
        )
    else:
        parser.add_argument(f"--{field.name}", type=type(field.default), default=field.default, help=help_text)
