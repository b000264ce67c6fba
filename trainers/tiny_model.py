"""A tiny local BERT for the reranker where no hub (or no GPU) is at hand: a word-piece vocabulary of the dataset's
own text (its characters and most frequent words, the same for the same dataset), a small randomly initialised
BERT, saved as `from_pretrained` reads it.

    python -m trainers.tiny_model --dataset out/ --output runs/tiny-bert     # or a CitationR dataset

It runs the whole reranking path in minutes on a CPU; its rankings mean nothing. Its config.json marks it
(`TINY_MODEL_KEY`), so the presets give it the large learning rate it needs (`is_tiny_model`).
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from trainers.data import is_json_dataset, is_parquet_dataset, load_dataset

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TINY_MODEL_KEY = "citrec_tiny_model"  # true in the config.json of a model `build_tiny_bert` made


def model_config(model: str | Path) -> dict | None:
    """The config.json of a local model directory or of a hub id in the local cache (nothing is downloaded);
    None where there is none to read."""
    import json

    path = Path(model)
    if path.is_dir():
        config = path / "config.json"
    else:
        from huggingface_hub import try_to_load_from_cache

        try:
            cached = try_to_load_from_cache(str(model), "config.json")
        except ValueError:  # not a hub id either (`resolve_model` says so when the model is loaded)
            cached = None
        config = Path(cached) if isinstance(cached, str) else None
    if config is None or not config.is_file():
        return None
    try:
        value = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, dict) else None


def is_tiny_model(model: str | Path) -> bool:
    """Whether `model` is a tiny random model `build_tiny_bert` made (or one trained from it); any other model,
    one whose config cannot be read included, counts as a pretrained encoder."""
    config = model_config(model)
    return bool(config and config.get(TINY_MODEL_KEY) is True)


def dataset_texts(directory: str | Path) -> list[str]:
    """What the models read: for a citation-context dataset (Parquet shards or the JSON layout) every paper's title
    and abstract and the training contexts; for a CitationR dataset (`pipelines.citationr`'s Parquet or RMC's JSON
    layout) every paper's title, abstract and reference titles."""
    directory = Path(directory)
    if not is_parquet_dataset(directory) and not is_json_dataset(directory):
        from trainers.citationr_data import citationr_texts, load_citationr

        try:
            return citationr_texts(load_citationr(directory))
        except FileNotFoundError:
            pass  # neither: `load_dataset` says what it looked for
    dataset = load_dataset(directory)
    texts = [f"{p.title} {p.abstract}" for p in dataset.papers.values()]
    return texts + [q.context for q in dataset.queries.get("train", [])]


def wordpiece_vocabulary(texts: Iterable[str], vocab_size: int) -> list[str]:
    """A word-piece vocabulary that depends on the texts alone: the special tokens, every character seen (alone and
    as a `##` continuation, so no word of the texts is [UNK]), then the most frequent words (ties alphabetical)
    until `vocab_size`. Words as BERT's normaliser (lower case, accents stripped) and pre-tokeniser cut them.
    (`tokenizers`' WordPiece trainer breaks ties between merges differently in each process: two builds from the
    same dataset gave different vocabularies, so no smoke figure could be repeated.)"""
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    normalizer, pre_tokenizer = BertNormalizer(lowercase=True), BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    characters = sorted({c for word in counts for c in word})
    vocabulary = list(dict.fromkeys([*SPECIAL_TOKENS, *characters, *(f"##{c}" for c in characters)]))
    known = set(vocabulary)
    for word, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        if len(vocabulary) >= vocab_size:
            break
        if word not in known:
            vocabulary.append(word)
            known.add(word)
    return vocabulary


def build_tiny_bert(
    directory: Path,
    texts: Iterable[str],
    *,
    vocab_size: int = 2000,
    hidden_size: int = 64,
    layers: int = 2,
    heads: int = 2,
    seed: int = 0,
) -> Path:
    """A BERT of `layers` x `hidden_size` and a word-piece tokenizer trained on `texts`, saved like a hub model
    (config.json, weights, vocab.txt and tokenizer files) in `directory`."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocabulary = wordpiece_vocabulary(texts, vocab_size)
    wordpiece = BertWordPieceTokenizer({token: i for i, token in enumerate(vocabulary)}, lowercase=True)
    wordpiece.save_model(str(directory))
    # The trained tokenizer object itself, not `vocab_file=`: transformers 5 ignores a vocab_file given to
    # BertTokenizerFast and builds a vocabulary of the special tokens alone (every word [UNK]).
    BertTokenizerFast(
        tokenizer_object=wordpiece._tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        do_lower_case=True,
    ).save_pretrained(directory)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=wordpiece.get_vocab_size(),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=2 * hidden_size,
        max_position_embeddings=512,
        **{TINY_MODEL_KEY: True},
    )
    BertModel(config).save_pretrained(directory)
    return directory


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(
        prog="python -m trainers.tiny_model", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--dataset",
        required=True,
        help="A dataset directory: citation contexts (Parquet shards or the JSON layout) or CitationR (Parquet or "
        "RMC's JSON layout).",
    )
    parser.add_argument("--output", required=True, help="Directory for the model (created).")
    parser.add_argument("--vocab_size", type=int, default=2000, help="Word-piece vocabulary size (2000).")
    parser.add_argument("--hidden_size", type=int, default=64, help="Hidden size (64).")
    parser.add_argument("--layers", type=int, default=2, help="Transformer layers (2).")
    parser.add_argument("--heads", type=int, default=2, help="Attention heads (2).")
    parser.add_argument("--seed", type=int, default=0, help="Seed of the random weights.")
    args = parser.parse_args(argv)
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    try:
        texts = dataset_texts(args.dataset)
    except FileNotFoundError as error:
        raise SystemExit(f"error: {error}") from error
    directory = build_tiny_bert(
        Path(args.output),
        texts,
        vocab_size=args.vocab_size,
        hidden_size=args.hidden_size,
        layers=args.layers,
        heads=args.heads,
        seed=args.seed,
    )
    print(
        f"tiny BERT ({args.layers} layers x {args.hidden_size}), vocabulary trained on {len(texts)} texts: {directory}"
    )
    return directory


if __name__ == "__main__":
    main()
