"""SymTax's layout (goyalkaraniit/SymTax @ e3de5b2c, per.py and its reranker). papers_cat.json (categories[0]
one of its 40 cs.* classes), contexts_new_head.json (`sentence_context`, heading), *_data.json; per.py reads
citing and cited off the context id, so ids escape `%` and `_`. Beside them, the prefetcher and reranker
configurations with top-K values kept within the exported papers. Details: docs/exports.md."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from functools import cache

from mapping.taxonomy import load_categories
from pipelines.exports.configs import Config, ConfigFiles
from pipelines.exports.contexts import ContextEntry, ContextLayout
from pipelines.exports.hatten import (
    HATTEN_PREFETCH_CONFIG,
    HATTEN_RERANK_TRAINING,
    HATTEN_RERANK_VALIDATING,
    prefetch_config_within,
    rerank_configs_within,
)


@cache
def symtax_classes() -> frozenset[str]:
    """The 40 cs.* categories SymTax has category embeddings for (the keys of its Scibert_data.json and
    Specter_data.json @ e3de5b2c): arXiv's cs.* names, aliases included (cs.SY, cs.NA)."""
    names, _ = load_categories()
    return frozenset(name for name in names if name.startswith("cs."))


def symtax_category(category: str) -> str:
    """The name SymTax knows a category by: our data keeps arXiv's canonical names (eess.SY, math.NA), SymTax
    keys its embeddings by the cs.* alias (cs.SY, cs.NA); any other category is returned as it is."""
    if category in symtax_classes():
        return category
    _, aliases = load_categories()
    return next((a for a, c in aliases.items() if c == category and a in symtax_classes()), category)


def symtax_categories(primary: str | None, categories: Sequence[str] | None) -> list[str]:
    """The primary category first, then the others, in SymTax's names, without repeats."""
    ordered = ([primary] if primary else []) + list(categories or [])
    return list(dict.fromkeys(symtax_category(c) for c in ordered))


def symtax_id(paper_id: str) -> str:
    """A paper id with no `_` in it (per.py splits context ids on `_`): `%` -> `%25`, `_` -> `%5F`, reversible."""
    return paper_id.replace("%", "%25").replace("_", "%5F")


def symtax_context_id(context_id: str, citing_id: str, cited_id: str) -> str:
    """`CITING_CITED_k` over SymTax ids; k is our id's tail (or, for an id of another form, a digest of it)."""
    prefix = f"{citing_id}_{cited_id}_"
    tail = context_id[len(prefix) :] if context_id.startswith(prefix) else hashlib.sha1(context_id.encode()).hexdigest()
    return f"{symtax_id(citing_id)}_{symtax_id(cited_id)}_{tail}"


def symtax_paper(row: dict) -> tuple[str, dict[str, object]] | str:
    categories = symtax_categories(row["primary_category"], row["categories"])
    if not categories or categories[0] not in symtax_classes():
        return "primary_category_not_in_symtax"
    value = {"title": row["title"] or "", "abstract": row["abstract"] or "", "categories": categories}
    return symtax_id(row["paper_id"]), value


def symtax_context(row: dict) -> ContextEntry | str:
    if not row["sentence_context"]:
        return "no_sentence_context"
    citing, cited = symtax_id(row["citing_id"]), symtax_id(row["cited_id"])
    value = {
        "masked_text": row["sentence_context"],
        "citing_id": citing,
        "ref_id": cited,
        "heading": row["section_heading"] or "",
    }
    return ContextEntry(symtax_context_id(row["context_id"], row["citing_id"], row["cited_id"]), value, citing, cited)


SYMTAX = ContextLayout(
    papers_file="papers_cat.json",
    contexts_file="contexts_new_head.json",
    split_files={"train": "train_data.json", "validation": "val_data.json", "test": "test_data.json"},
    paper_columns=("paper_id", "title", "abstract", "categories", "primary_category"),
    context_columns=("context_id", "citing_id", "cited_id", "sentence_context", "section_heading"),
    paper_entry=symtax_paper,
    context_entry=symtax_context,
)


SYMTAX_PREFETCH_CONFIG: Config = HATTEN_PREFETCH_CONFIG | {
    "max_num_samples_per_batch": 650,
    "paper_database_path": "../../arxiv/papers_cat.json",
    "context_database_path": "../../arxiv/contexts_new_head.json",
    "input_corpus_path_for_get_prefetched_ids_during_training": "../../arxiv/train_data.json",
    "input_corpus_path_for_validation": "../../arxiv/val_data.json",
    "input_corpus_path_for_test": "../../arxiv/test_data.json",
}
"""Their `src/prefetch/config/custom/global_config.cfg` @ e3de5b2c (HAtten's but for a batch of 650), reading
this layout's files under `arxiv/` (where per.py reads them); the prefetched-ids files stay in `data/custom/`."""

SYMTAX_RERANK_TRAINING: Config = HATTEN_RERANK_TRAINING | {
    "model_folder": "../../model/rerank/arxiv/scibert/NN_prefetch/",
    "log_folder": "../../log/rerank/arxiv/scibert/NN_prefetch/",
    "paper_database_path": "../../arxiv/papers_cat.json",
    "context_database_path": "../../arxiv/contexts_new_head.json",
}
"""The reranker configuration their src/rerank/train.py reads (the keys of HAtten's training_NN_prefetch.config;
SymTax ships none): train.py appends `per_v1/text/scibert` to model_folder, which gives per.py's default
reranker path `model/rerank/arxiv/scibert/NN_prefetch/per_v1/text/scibert/`."""

SYMTAX_PREFETCH_CONFIG_FILE = "src/prefetch/config/custom/citrec.cfg"
SYMTAX_RERANK_TRAINING_FILE = "src/rerank/citrec_rerank.config"


def symtax_configs(counts: Mapping[str, int]) -> ConfigFiles:
    """The prefetcher and reranker configurations for the papers this export wrote (`papers_cat.json`). per.py
    takes its own prefetch size (100) as a constant in the script: docs/exports.md says what to set it to."""
    prefetch = prefetch_config_within(SYMTAX_PREFETCH_CONFIG, counts.get("papers_cat.json", 0))
    training, _ = rerank_configs_within(
        SYMTAX_RERANK_TRAINING, HATTEN_RERANK_VALIDATING, prefetch["top_K_prefetched_ids_for_reranking"]
    )
    return {SYMTAX_PREFETCH_CONFIG_FILE: prefetch, SYMTAX_RERANK_TRAINING_FILE: training}
