"""SymTax's layout (goyalkaraniit/SymTax @ e3de5b2c, per.py and its reranker). papers_cat.json (categories[0]
one of its 40 cs.* classes), contexts_new_head.json (`sentence_context`, heading), *_data.json; per.py reads
citing and cited off the context id, so ids escape `%` and `_`. Details: docs/exports.md."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache

from mapping.taxonomy import load_categories
from pipelines.exports.contexts import ContextEntry, ContextLayout


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
