"""HAtten's layout (nianlonggu/Local-Citation-Recommendation @ e46cae55, `data/custom/`). papers.json,
contexts.json (masked_text = our 200-character `char_context`), train/val/test.json; a context without text is
left out, as their code tokenises `masked_text`. File by file: docs/exports.md."""

from __future__ import annotations

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
