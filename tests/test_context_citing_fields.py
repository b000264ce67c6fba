"""`cut_contexts` gives every context the citing paper's fields it is handed (its taxonomy), as it makes it."""

from __future__ import annotations

from dataclasses import replace

from extractors.contexts import cut_contexts
from tests.support.documents import document, paragraph

FIELDS = {"citing_categories": ("cs.CL", "cs.IR"), "citing_primary_category": "cs.CL", "citing_acm_classes": ("H.3",)}


def test_contexts_carry_the_citing_fields_and_nothing_else_changes():
    text = "We build on parsing [1] and on search [2]."
    doc = document([paragraph(text, [("[1]", "b0"), ("[2]", "b1")])], ["b0", "b1"])
    resolved = {"b0": "P0", "b1": "P1"}
    plain = cut_contexts(doc, resolved)
    given = cut_contexts(doc, resolved, citing_fields=FIELDS)
    assert [c.citing_primary_category for c in given] == ["cs.CL", "cs.CL"]
    assert given == [replace(c, **FIELDS) for c in plain]
    assert [c.sentence_context for c in given] == [
        "We build on parsing TARGETCIT and on search OTHERCIT.",
        "We build on parsing OTHERCIT and on search TARGETCIT .",
    ]
