"""HAtten's layout (nianlonggu/Local-Citation-Recommendation @ e46cae55, `data/custom/`). papers.json,
contexts.json (masked_text = our 200-character `char_context`), train/val/test.json; a context without text is
left out, as their code tokenises `masked_text`. Beside them, their prefetcher and reranker configurations with the
top-K values kept within the exported papers. File by file: docs/exports.md."""

from __future__ import annotations

from collections.abc import Mapping

from pipelines.exports.configs import Config, ConfigFiles, answerable_k, k_list_within, within
from pipelines.exports.contexts import ContextEntry, ContextLayout


def hatten_paper(row: dict) -> tuple[str, dict[str, object]]:
    """Title and abstract as their loader reads them, and the date (their code ignores it; our trainers read it
    to leave out papers published after the citing one, as they do from Parquet)."""
    date = row["date"].isoformat() if row["date"] else None
    return row["paper_id"], {"title": row["title"] or "", "abstract": row["abstract"] or "", "date": date}


def hatten_context(row: dict) -> ContextEntry | str:
    if not row["char_context"]:
        return "no_char_context"
    value = {
        "masked_text": row["char_context"],
        "context_id": row["context_id"],
        "citing_id": row["citing_id"],
        "refid": row["cited_id"],
    }
    return ContextEntry(row["context_id"], value, row["citing_id"], row["cited_id"])


HATTEN = ContextLayout(
    papers_file="papers.json",
    contexts_file="contexts.json",
    split_files={"train": "train.json", "validation": "val.json", "test": "test.json"},
    paper_columns=("paper_id", "title", "abstract", "date"),
    context_columns=("context_id", "citing_id", "cited_id", "char_context"),
    paper_entry=hatten_paper,
    context_entry=hatten_context,
)


HATTEN_PREFETCH_CONFIG: Config = {
    "prefetch_model_folder": "../../model/prefetch/custom/",
    "paper_database_path": "../../data/custom/papers.json",
    "context_database_path": "../../data/custom/contexts.json",
    "train_corpus_path": "../../data/custom/train_with_prefetched_ids.json",
    "log_folder": "../../log/prefetch/custom/",
    "prefetch_embedding_path": "../../embedding/prefetch/custom/paper_embedding.pkl",
    "input_corpus_path_for_get_prefetched_ids_during_training": "../../data/custom/train.json",
    "output_corpus_path_for_get_prefetched_ids_during_training": "../../data/custom/train_with_prefetched_ids.json",
    "input_corpus_path_for_validation": "../../data/custom/val.json",
    "output_corpus_path_for_validation_with_prefetched_ids": "../../data/custom/val_with_prefetched_ids.json",
    "input_corpus_path_for_test": "../../data/custom/test.json",
    "max_num_samples_per_batch": 100,
    "n_device": 1,
    "max_num_loops_for_training_updating_embedding_and_prefetched_ids": 5,
    "num_training_examples_with_prefetched_ids_for_reranking": 10000,
    "num_val_examples_with_prefetched_ids_for_reranking": 1000,
    "print_every": 500,
    "save_every": 5000,
    "max_num_iterations": 5000,
    "K_list": [10, 20, 50, 100, 200, 500, 1000, 2000],
    "top_K_prefetched_ids_for_mining_hard_negative": 100,
    "top_K_prefetched_ids_for_reranking": 2000,
    "num_papers_with_updated_embeddings_per_loop": 0,
    "num_training_examples_with_updated_prefetched_ids_per_loop": 50000,
    "num_val_examples_per_loop": 0,
    "unigram_words_path": "../../model/glove/vocabulary_200dim.pkl",
    "unigram_embedding_path": "../../model/glove/unigram_embeddings_200dim.pkl",
    "train_log_file_name": "train.log",
    "val_log_file_name": "validate_NN.log",
    "test_log_file_name": "test_NN.log",
    "max_n_positive": 1,
    "max_n_hard_negative": 3,
    "max_n_easy_negative": 1,
    "num_workers": 2,
    "initial_learning_rate": 1e-4,
    "l2_weight": 1e-5,
    "dropout_rate": 0.1,
    "moving_average_decay": 0.999,
    "base_margin": 0.05,
    "similarity": "cosine",
    "positive_irrelevance_levels": [1, 2],
    "max_num_checkpoints": 20,
    "embed_dim": 200,
    "num_heads": 8,
    "hidden_dim": 1024,
    "max_seq_len": 512,
    "max_doc_len": 3,
    "n_para_types": 100,
    "num_enc_layers": 1,
    "document_title_label": 0,
    "document_abstract_label": 1,
    "document_fullbody_label": 2,
    "citation_title_label": 0,
    "citation_abstract_label": 1,
    "citation_fullbody_label": 2,
    "citation_context_label": 3,
    "padding_paragraph_label": 10,
}
"""Their `src/prefetch/config/custom/global_config.cfg` @ e46cae55, value for value (comments dropped)."""

HATTEN_RERANK_TRAINING: Config = {
    "model_folder": "../../model/rerank/custom/scibert/NN_prefetch/",
    "initial_model_path": "allenai/scibert_scivocab_uncased",
    "log_folder": "../../log/rerank/custom/scibert/NN_prefetch/",
    "log_file_name": "train.log",
    "paper_database_path": "../../data/custom/papers.json",
    "train_corpus_path": "../../data/custom/train_with_prefetched_ids.json",
    "val_corpus_path": "../../data/custom/val_with_prefetched_ids.json",
    "num_epochs": 1,
    "n_device": 1,
    "n_document": 10,
    "n_query_per_batch": 1,
    "gpu_list": None,
    "restore_old_checkpoint": 1,
    "initial_learning_rate": 1e-5,
    "l2_weight": 0.01,
    "num_workers": 2,
    "print_every": 1000,
    "save_every": 5000,
    "validate_every": 5000,
    "num_validation_iterations": 1000,
    "max_input_length": 512,
    "base_margin": 0.1,
    "rerank_top_K": 2000,
    "max_n_positive": 1,
    "context_database_path": "../../data/custom/contexts.json",
    "train_corpus_sampling_ratio": 1.0,
    "val_corpus_sampling_ratio": 1.0,
    "max_num_checkpoints": 20,
}
"""Their `src/rerank/config/custom/scibert/training_NN_prefetch.config` @ e46cae55."""

HATTEN_RERANK_VALIDATING: Config = {
    "model_folder": "../../model/rerank/custom/scibert/NN_prefetch/",
    "model_path": None,
    "initial_model_path": "allenai/scibert_scivocab_uncased",
    "log_folder": "../../log/rerank/custom/scibert/NN_prefetch/",
    "log_file_name": "validate.log",
    "paper_database_path": "../../data/custom/papers.json",
    "corpus_path": "../../data/custom/val_with_prefetched_ids.json",
    "n_device": 1,
    "n_query_per_batch": 1,
    "sub_batch_size": 50,
    "gpu_list": None,
    "num_workers": 2,
    "max_input_length": 512,
    "rerank_top_K": 2000,
    "start": 0,
    "size": 0,
    "rerank_results_save_path": "../../results/rerank/custom/scibert/NN_prefetch/validate_results.pkl",
    "context_database_path": "../../data/custom/contexts.json",
    "K_list": [10, 20],
}
"""Their `src/rerank/config/custom/scibert/validating_NN_prefetch.config` @ e46cae55."""

HATTEN_PREFETCH_CONFIG_FILE = "src/prefetch/config/custom/citrec.cfg"
HATTEN_RERANK_TRAINING_FILE = "src/rerank/config/custom/scibert/citrec_training_NN_prefetch.config"
HATTEN_RERANK_VALIDATING_FILE = "src/rerank/config/custom/scibert/citrec_validating_NN_prefetch.config"


def prefetch_config_within(defaults: Config, papers: int) -> Config:
    """A HAtten-style prefetcher configuration for an index of `papers` papers: test.py asks the index for
    max(K_list) + 1 neighbours and get_prefetched_ids.py for top_K + 1 (the citing paper is dropped after), so
    each K is at most papers - 1."""
    limit = answerable_k(papers, asked_beyond=1)
    return defaults | {
        "K_list": k_list_within(defaults["K_list"], limit),
        "top_K_prefetched_ids_for_mining_hard_negative": within(
            defaults["top_K_prefetched_ids_for_mining_hard_negative"], limit
        ),
        "top_K_prefetched_ids_for_reranking": within(defaults["top_K_prefetched_ids_for_reranking"], limit),
    }


def rerank_configs_within(training: Config, validating: Config, prefetched: int) -> tuple[Config, Config]:
    """The reranker's configurations for lists of `prefetched` candidates: rerank_top_K and the validation
    cut-offs at most what the prefetcher hands over."""
    top = within(training["rerank_top_K"], prefetched)
    return training | {"rerank_top_K": top}, validating | {
        "rerank_top_K": within(validating["rerank_top_K"], prefetched),
        "K_list": k_list_within(validating["K_list"], top),
    }


def hatten_configs(counts: Mapping[str, int]) -> ConfigFiles:
    """Their prefetcher and reranker configurations, for the papers this export wrote (`papers.json`: every
    paper is in their index); every other value is theirs."""
    prefetch = prefetch_config_within(HATTEN_PREFETCH_CONFIG, counts.get("papers.json", 0))
    training, validating = rerank_configs_within(
        HATTEN_RERANK_TRAINING, HATTEN_RERANK_VALIDATING, prefetch["top_K_prefetched_ids_for_reranking"]
    )
    return {
        HATTEN_PREFETCH_CONFIG_FILE: prefetch,
        HATTEN_RERANK_TRAINING_FILE: training,
        HATTEN_RERANK_VALIDATING_FILE: validating,
    }
