"""HAtten as the authors' code builds it: Eq. 2's pooling by hand, their positional encodings, fixed word vectors,
and the packed batching giving the embeddings of the padded one."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from tests.support.trainer_data import topical_dataset  # noqa: E402
from trainers.data import ContextQuery, PaperText  # noqa: E402
from trainers.documents import paper_document, query_document  # noqa: E402
from trainers.hatten_model import (  # noqa: E402
    ABSTRACT,
    CONTEXT,
    TITLE,
    HAttenConfig,
    HAttenEncoder,
    MultiHeadPooling,
    sinusoidal_positions,
)
from trainers.hatten_training import HAttenTrainConfig, make_model, train_hatten  # noqa: E402
from trainers.prefetch import embed_documents, embed_documents_padded  # noqa: E402
from trainers.tokenization import build_vocabulary  # noqa: E402


def test_pooling_is_eq_2_computed_by_hand():
    """Two heads over three positions (the third padded): softmax of each head's scores over the unpadded
    positions, the heads' slices of the values averaged by those weights, ReLU on the concatenation, then W_o."""
    pooling = MultiHeadPooling(dim=4, num_heads=2)
    w_scores = [[1.0, 0.0, 0.5, 0.0], [0.0, -1.0, 0.0, 2.0]]
    b_scores = [0.1, -0.2]
    w_values = [[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, -1.0, 0.0], [0.5, 0.0, 0.0, 1.0]]
    b_values = [0.0, -0.5, 0.0, 0.1]
    w_output = [[1.0, 1.0, 0.0, 0.0], [0.0, 1.0, -1.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, -1.0]]
    b_output = [0.05, 0.0, -0.05, 0.0]
    with torch.no_grad():
        pooling.scores.weight.copy_(torch.tensor(w_scores))
        pooling.scores.bias.copy_(torch.tensor(b_scores))
        pooling.values.weight.copy_(torch.tensor(w_values))
        pooling.values.bias.copy_(torch.tensor(b_values))
        pooling.output.weight.copy_(torch.tensor(w_output))
        pooling.output.bias.copy_(torch.tensor(b_output))
    states = [[0.5, -1.0, 2.0, 0.0], [-0.3, 0.4, 1.0, -1.5], [9.0, 9.0, 9.0, 9.0]]
    unpadded = states[:2]

    def affine(weight, bias, x):
        return [sum(w * xi for w, xi in zip(row, x, strict=True)) + b for row, b in zip(weight, bias, strict=True)]

    scores = [affine(w_scores, b_scores, x) for x in unpadded]  # [position][head]
    values = [affine(w_values, b_values, x) for x in unpadded]
    concatenated = []
    for head in range(2):
        exps = [math.exp(scores[j][head]) for j in range(2)]
        alphas = [e / sum(exps) for e in exps]
        concatenated += [sum(alphas[j] * values[j][2 * head + d] for j in range(2)) for d in range(2)]
    assert min(concatenated) < 0  # so that the ReLU of Eq. 2 matters here
    expected = affine(w_output, b_output, [max(0.0, v) for v in concatenated])
    padding = torch.tensor([[False, False, True]])
    got = pooling(torch.tensor([states]), padding)[0].tolist()
    assert got == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("dim", [6, 5])
def test_positional_encoding_is_their_formula(dim):
    """`PositionalEncoding` of the original model.py: sin(pos / 10000^(i/d)) at even i, cos of the same at i + 1."""
    expected = np.zeros((7, dim))
    for pos in range(7):
        for i in range(0, dim, 2):
            expected[pos, i] = math.sin(pos / 10000 ** (i / dim))
            if i + 1 < dim:
                expected[pos, i + 1] = math.cos(pos / 10000 ** (i / dim))
    np.testing.assert_allclose(sinusoidal_positions(7, dim).numpy(), expected, atol=1e-6)


def test_document_encoder_knows_paragraph_order():
    """Paragraph positions are added before the document layer, as in their MultipleParagraphEncoder: the same
    paragraphs of the same type in another order give another embedding."""
    torch.manual_seed(0)
    model = HAttenEncoder(HAttenConfig(vocab_size=10, embed_dim=8, num_heads=2, hidden_dim=16, dropout=0.0)).eval()
    vectors = torch.randn(1, 3, 8)
    types = torch.full((1, 3), TITLE)
    with torch.no_grad():
        forward = model.combine(vectors, types.clone())
        reversed_order = model.combine(vectors.flip(1), types.clone())
    assert not torch.allclose(forward, reversed_order, atol=1e-4)


def write_glove(path, words, dim=8, seed=0):
    rng = np.random.default_rng(seed)
    path.write_text("".join(f"{w} {' '.join(f'{v:.4f}' for v in rng.standard_normal(dim))}\n" for w in words))
    return path


def test_pretrained_word_vectors_stay_fixed_through_training(tmp_path):
    dataset = topical_dataset()
    words = sorted(build_vocabulary(f"{p.title} {p.abstract}" for p in dataset.papers.values()).words[2:])
    glove = write_glove(tmp_path / "glove.txt", words)
    model, vocabulary = make_model(dataset, {"num_heads": 2, "hidden_dim": 16, "max_seq_len": 32}, str(glove))
    vectors = model.paragraphs.embedding.weight.detach().clone()
    pooling = model.pooling.output.weight.detach().clone()
    config = HAttenTrainConfig(queries_per_batch=8, max_iterations=3, refresh_every=100, moving_average_decay=0.0)
    train_hatten(dataset, model, vocabulary, tmp_path / "run", config, torch.device("cpu"), progress=False)
    assert torch.equal(model.paragraphs.embedding.weight, vectors)
    assert not torch.equal(model.pooling.output.weight, pooling)  # the rest did train
    assert all(p is not model.paragraphs.embedding.weight for p in model.trainable_parameters())


def mixed_documents():
    papers = [
        PaperText("a", "Graph ranking", "We rank graphs by their spectra, " * 6),
        PaperText("b", "", "An abstract without a title."),
        PaperText("c", "A title alone", ""),
        PaperText("d", "", ""),
        PaperText("e", "Citation contexts in scholarly text", "Short."),
    ]
    citing = papers[0]
    queries = [
        ContextQuery("q1", "a", "as TARGETCIT shows, spectra rank graphs", ("b",)),
        ContextQuery("q2", "a", "OTHERCIT and TARGETCIT", ("c",)),
        ContextQuery("q3", "a", "", ("e",)),
    ]
    documents = [paper_document(p) for p in papers]
    documents += [query_document(q, citing) for q in queries]
    documents += [query_document(queries[0], citing, with_citing_paper=False)]  # one paragraph among three
    documents += [((ABSTRACT, "only an abstract"), (CONTEXT, "and a context"))]
    return documents


def test_packed_batching_gives_the_padded_embeddings():
    documents = mixed_documents()
    vocabulary = build_vocabulary(text for doc in documents for _, text in doc)
    torch.manual_seed(0)
    model = HAttenEncoder(HAttenConfig(vocab_size=len(vocabulary), embed_dim=16, num_heads=4, hidden_dim=32))
    padded = embed_documents_padded(model, vocabulary, documents, torch.device("cpu"), batch_size=4)
    for budget in (8, 64, 10_000):  # many small batches (a row longer than the budget alone), and one
        packed = embed_documents(
            model, vocabulary, documents, torch.device("cpu"), token_budget=budget, chunk_documents=3
        )
        np.testing.assert_allclose(packed.numpy(), padded.numpy(), atol=1e-5)


def test_the_tiny_bert_tokenizer_keeps_its_trained_vocabulary(tmp_path, monkeypatch):
    """Under transformers 5, a BertTokenizerFast built from `vocab_file=` held the five special tokens alone, so
    every word became [UNK] and the tiny model saw only lengths."""
    pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from transformers import AutoConfig, AutoTokenizer

    from trainers.tiny_model import build_tiny_bert

    texts = ["graph spectra of citation networks", "protein folding with graph networks"] * 20
    directory = build_tiny_bert(tmp_path / "tiny", texts, vocab_size=200)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    vocabulary = (directory / "vocab.txt").read_text(encoding="utf-8").split()
    assert len(tokenizer) == len(vocabulary) == AutoConfig.from_pretrained(directory).vocab_size
    assert tokenizer.tokenize("graph networks") == ["graph", "networks"]
    ids = tokenizer("graph networks")["input_ids"]
    assert ids == [
        vocabulary.index("[CLS]"),
        vocabulary.index("graph"),
        vocabulary.index("networks"),
        vocabulary.index("[SEP]"),
    ]
