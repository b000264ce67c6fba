"""arXiv categories mapped onto the ACM Computing Classification System (CCS 1998), derived and checked.

Derived from arXiv's category texts (the ACM classes a cs.* category "roughly includes"), with codes chosen by
hand where a text names none (`HAND_CHOSEN`); shipped in `mapping/data/` (docs/taxonomy.md).

    python -m mapping.taxonomy build --definitions .../arxiv_taxonomy_definitions.py --ccs .../acm_ccs_1998.html
    python -m mapping.taxonomy graph --out out/taxonomy      # GraphML and JSON of the fused graph
    python -m mapping.taxonomy compare --symtax .../symtax-arxiv-acm-mapping.csv
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import networkx as nx

DATA = "mapping.data"
TREE_FILE = "acm_ccs1998.csv"
MAPPING_FILE = "arxiv_acm_ccs1998.csv"
CATEGORIES_FILE = "arxiv_categories.json"

# Categories whose definition names no ACM subject class: real CCS 1998 codes, chosen by hand.
HAND_CHOSEN: dict[str, list[tuple[str, str]]] = {
    "cs.ET": [
        ("B.7.1", "VLSI Types and Design Styles holds 'advanced technologies', alternatives to silicon CMOS"),
        ("C.1.3", "Other Architecture Styles covers analog, neural and non-von-Neumann (e.g. optical) computing"),
        ("J.2", "Physical Sciences and Engineering: the physics, chemistry and biology behind new devices"),
    ],
    "cs.GT": [
        ("J.4", "Social and Behavioral Sciences is where CCS 1998 puts economics, so mechanism design"),
        ("I.2.11", "Distributed Artificial Intelligence covers multiagent systems and agent modelling in games"),
        ("F.2.m", "Analysis of Algorithms, Miscellaneous: complexity of equilibria and algorithmic game theory"),
    ],
    "cs.LG": [
        ("I.2.6", "Learning is CCS 1998's node for machine learning (concept, connectionist, induction)"),
        ("I.5.1", "Pattern Recognition Models holds statistical and neural-net models of learning"),
        ("G.3", "Probability and Statistics: the statistical side of learning theory and bandits"),
    ],
    "cs.OH": [
        ("A.m", "MISCELLANEOUS of General Literature is the scheme's catch-all for what fits nowhere else"),
    ],
    "cs.SY": [
        ("J.7", "Computers in Other Systems covers process, industrial and command-and-control systems"),
        ("I.2.8", "Problem Solving, Control Methods, and Search holds control methods and planning"),
        ("I.6", "Simulation and Modeling: the modelling and simulation tools of control system design"),
    ],
}


@dataclass(frozen=True)
class AcmNode:
    code: str
    name: str
    parent: str | None


@dataclass(frozen=True)
class MappingRow:
    category: str
    acm_code: str
    relation: str  # roughly_includes | intersects | may_include | chosen_by_hand
    evidence: str


# ---------------------------------------------------------------------------------------------------------
# Parsing the sources
def parse_ccs1998_html(html: bytes | str) -> dict[str, AcmNode]:
    """The CCS 1998 tree from its nested-list HTML: `<li id="code:I.2.10">…: Vision and Scene Understanding`.

    Top-level codes are written "I." there; here they are "I".
    """
    from lxml import html as lxml_html

    root = lxml_html.fromstring(html)
    nodes: dict[str, AcmNode] = {}
    for item in root.iter("li"):
        raw = (item.get("id") or "").removeprefix("code:")
        if not raw:
            continue
        code = raw.rstrip(".")
        own_text = "".join(item.xpath("text()")).strip()
        name = own_text.lstrip(":").strip()
        parent_li = next((a for a in item.iterancestors("li") if (a.get("id") or "").startswith("code:")), None)
        parent = parent_li.get("id").removeprefix("code:").rstrip(".") if parent_li is not None else None
        nodes[code] = AcmNode(code=code, name=name, parent=parent)
    return nodes


def parse_arxiv_definitions(source: str) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """Categories ({id: {name, description, archive}}) and aliases ({alias: canonical}) from arXiv's
    `definitions.py`, read with `ast` (the file is never executed)."""
    tree = ast.parse(source)
    categories: dict[str, dict[str, str]] = {}
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Category":
            fields = {k.arg: k.value for k in node.keywords}
            try:
                values = {
                    k: ast.literal_eval(v)
                    for k, v in fields.items()
                    if k in ("id", "full_name", "description", "in_archive")
                }
            except ValueError:
                continue
            if "id" in values:
                categories[values["id"]] = {
                    "name": values.get("full_name", ""),
                    "description": values.get("description", ""),
                    "archive": values.get("in_archive", ""),
                }
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "CATEGORY_ALIASES" for t in node.targets):
            aliases = ast.literal_eval(node.value)
    return categories, aliases


# ---------------------------------------------------------------------------------------------------------
# Reading the ACM text of a definition
_CODE = re.compile(r"(?<![\w.])([A-K](?:\.(?:\d+|m)){0,2})(?:\s*--\s*([A-K](?:\.(?:\d+|m)){0,2}))?(?![\w])")
_SENTENCE_END = re.compile(r"(?<=[a-z)\d])\.\s+(?=[A-Z])|;")


def acm_sentence(description: str) -> str:
    """The definition from the sentence that first names an ACM subject class to its end ('' if none)."""
    match = re.search(r"ACM Subject Class", description, re.IGNORECASE)
    if not match:
        return ""
    start = max(description.rfind(". ", 0, match.start()) + 2, 0) if ". " in description[: match.start()] else 0
    return description[start:]


def children(code: str, tree: Mapping[str, AcmNode]) -> list[str]:
    return sorted((n.code for n in tree.values() if n.parent == code), key=_code_key)


def _code_key(code: str) -> tuple:
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in code.split("."))


def is_under(code: str, ancestor: str, tree: Mapping[str, AcmNode]) -> bool:
    node = tree.get(code)
    while node is not None and node.parent is not None:
        if node.parent == ancestor:
            return True
        node = tree.get(node.parent)
    return False


def expand_except(code: str, excluded: Iterable[str], tree: Mapping[str, AcmNode]) -> list[str]:
    """`code`'s subtree without the `excluded` codes, as the fewest nodes that cover the rest."""
    excluded = set(excluded)
    if code in excluded:
        return []
    if not any(is_under(e, code, tree) for e in excluded):
        return [code]
    result: list[str] = []
    for child in children(code, tree):
        result.extend(expand_except(child, excluded, tree))
    return result


def _existing(code: str, tree: Mapping[str, AcmNode]) -> str | None:
    """The code itself when the tree has it, else its parent for an X.0 code that the tree lacks."""
    if code in tree:
        return code
    if code.endswith(".0") and code.rsplit(".", 1)[0] in tree:
        return code.rsplit(".", 1)[0]
    return None


def _range(first: str, last: str, tree: Mapping[str, AcmNode]) -> list[str]:
    parent = tree[first].parent if first in tree else None
    siblings = children(parent, tree) if parent else []
    if first in siblings and last in siblings:
        return siblings[siblings.index(first) : siblings.index(last) + 1]
    return [c for c in (first, last) if c in tree]


def codes_from_definition(description: str, tree: Mapping[str, AcmNode]) -> list[tuple[str, str, str]]:
    """(code, relation, evidence) for every ACM code a definition's text names, read as described above."""
    text = re.sub(r"(\d)\.(?=[,;\s])", r"\1", acm_sentence(description))  # "D.4.2.," -> "D.4.2,"
    found: dict[str, tuple[str, str]] = {}
    for clause in _SENTENCE_END.split(text):
        relation = "may_include" if re.search(r"may (?:also )?be appropriate", clause) else "roughly_includes"
        state = relation
        all_of: list[str] = []
        excluded: list[str] = []
        named: list[tuple[str, str]] = []
        cursor = 0
        for match in _CODE.finditer(clause):
            between = clause[cursor : match.start()]
            if "intersects" in between:
                state = "intersects"
            if "except" in between:
                state = "excluded"
            codes = _range(match.group(1), match.group(2), tree) if match.group(2) else [match.group(1)]
            for code in codes:
                if state == "excluded":
                    excluded.append(code)
                    continue
                if "all of" in between:
                    all_of.append(code)
                named.append((code, state))
            cursor = match.end()
        evidence = clause.strip()
        for code, rel in named:
            targets = expand_except(code, excluded, tree) if code in all_of else [code]
            for target in targets:
                existing = _existing(target, tree)
                if existing is not None and existing not in found:
                    found[existing] = (rel, evidence)
    return [(code, rel, ev) for code, (rel, ev) in found.items()]


def derive_mapping(categories: Mapping[str, Mapping[str, str]], tree: Mapping[str, AcmNode]) -> list[MappingRow]:
    """Every cs.* category's ACM codes: from its text, or `HAND_CHOSEN` where the text names none."""
    rows: list[MappingRow] = []
    for category in sorted(c for c in categories if c.startswith("cs.")):
        derived = codes_from_definition(categories[category]["description"], tree)
        if derived:
            rows.extend(MappingRow(category, code, rel, ev) for code, rel, ev in derived)
        else:
            if category not in HAND_CHOSEN:
                raise ValueError(f"{category} names no ACM class and has no hand-chosen codes")
            rows.extend(MappingRow(category, code, "chosen_by_hand", reason) for code, reason in HAND_CHOSEN[category])
    missing = [r for r in rows if r.acm_code not in tree]
    if missing:
        raise ValueError(f"codes not in the CCS 1998 tree: {missing}")
    return rows


# ---------------------------------------------------------------------------------------------------------
# The shipped data and the lookups the pipeline uses
def write_data(
    tree: Mapping[str, AcmNode], rows: Sequence[MappingRow], categories: Mapping, aliases: Mapping, out: Path
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / TREE_FILE).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["code", "name", "parent"])
        for code in sorted(tree, key=_code_key):
            writer.writerow([code, tree[code].name, tree[code].parent or ""])
    with (out / MAPPING_FILE).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["category", "category_name", "acm_code", "acm_name", "relation", "evidence"])
        for row in rows:
            writer.writerow(
                [
                    row.category,
                    categories[row.category]["name"],
                    row.acm_code,
                    tree[row.acm_code].name,
                    row.relation,
                    row.evidence,
                ]
            )
    names = {c: v["name"] for c, v in sorted(categories.items())}
    (out / CATEGORIES_FILE).write_text(json.dumps({"names": names, "aliases": dict(aliases)}, indent=1) + "\n")


def _read(name: str) -> str:
    return resources.files(DATA).joinpath(name).read_text(encoding="utf-8")


@cache
def load_tree() -> dict[str, AcmNode]:
    rows = csv.DictReader(io.StringIO(_read(TREE_FILE)))
    return {r["code"]: AcmNode(r["code"], r["name"], r["parent"] or None) for r in rows}


@cache
def load_mapping() -> tuple[MappingRow, ...]:
    rows = csv.DictReader(io.StringIO(_read(MAPPING_FILE)))
    return tuple(MappingRow(r["category"], r["acm_code"], r["relation"], r["evidence"]) for r in rows)


@cache
def load_categories() -> tuple[dict[str, str], dict[str, str]]:
    data = json.loads(_read(CATEGORIES_FILE))
    return data["names"], data["aliases"]


@cache
def _codes_by_category() -> dict[str, tuple[str, ...]]:
    result: dict[str, list[str]] = {}
    for row in load_mapping():
        result.setdefault(row.category, []).append(row.acm_code)
    return {c: tuple(sorted(codes, key=_code_key)) for c, codes in result.items()}


def canonical_category(category: str) -> str:
    """arXiv's canonical name for a category (cs.SY -> eess.SY, cs.NA -> math.NA, math.IT -> cs.IT)."""
    _, aliases = load_categories()
    return aliases.get(category, category)


def _mapped_name(category: str) -> str | None:
    """The cs.* name under which a category's ACM codes are kept, for a category or any of its aliases."""
    codes = _codes_by_category()
    if category in codes:
        return category
    _, aliases = load_categories()
    for alias, canonical in aliases.items():
        if canonical == category and alias in codes:
            return alias
        if alias == category and canonical in codes:
            return canonical
    return None


def normalize_categories(categories: Iterable[str]) -> tuple[str, ...]:
    """Canonical names, order kept (the first is arXiv's primary category), duplicates removed."""
    seen: dict[str, None] = {}
    for category in categories:
        seen.setdefault(canonical_category(category.strip()), None)
    return tuple(c for c in seen if c)


def acm_classes(categories: Iterable[str]) -> tuple[str, ...]:
    """The CCS 1998 codes of a paper's categories, in code order; non-CS categories contribute none."""
    codes: set[str] = set()
    for category in categories:
        name = _mapped_name(category)
        if name is not None:
            codes.update(_codes_by_category()[name])
    return tuple(sorted(codes, key=_code_key))


def taxonomy_fields(categories: Iterable[str]) -> dict[str, object]:
    """`categories` (aliases normalised), `primary_category` (arXiv lists it first) and `acm_classes`."""
    normalized = normalize_categories(categories)
    return {
        "categories": normalized,
        "primary_category": normalized[0] if normalized else None,
        "acm_classes": acm_classes(normalized),
    }


def unmapped_categories(categories: Iterable[str]) -> list[str]:
    """The categories that carry no ACM code (every non-CS category)."""
    return [c for c in categories if _mapped_name(c) is None]


# ---------------------------------------------------------------------------------------------------------
# The fused graph
def build_graph(
    tree: Mapping[str, AcmNode] | None = None,
    rows: Iterable[MappingRow] | None = None,
    names: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
) -> nx.DiGraph:
    """The ACM tree (parent -> child, `subclass`) with the cs.* categories injected as nodes and edges from
    each category to the ACM nodes it maps to (labelled with the relation), plus alias nodes."""
    tree = tree if tree is not None else load_tree()
    rows = rows if rows is not None else load_mapping()
    if names is None or aliases is None:
        names, aliases = load_categories()
    graph = nx.DiGraph(name="arxiv-acm-ccs1998")
    for node in tree.values():
        level = node.code.count(".") + 1
        graph.add_node(f"acm:{node.code}", kind="acm", code=node.code, name=node.name, level=level)
    for node in tree.values():
        if node.parent:
            graph.add_edge(f"acm:{node.parent}", f"acm:{node.code}", relation="subclass")
    for row in rows:
        graph.add_node(
            f"arxiv:{row.category}", kind="arxiv", code=row.category, name=names.get(row.category, ""), level=0
        )
        graph.add_edge(f"arxiv:{row.category}", f"acm:{row.acm_code}", relation=row.relation)
    for alias, canonical in aliases.items():
        for a, b in ((alias, canonical), (canonical, alias)):
            if f"arxiv:{a}" in graph and f"arxiv:{b}" not in graph:
                graph.add_node(f"arxiv:{b}", kind="arxiv", code=b, name=names.get(b, ""), level=0)
                graph.add_edge(f"arxiv:{b}", f"arxiv:{a}", relation="alias_of")
    return graph


def export_graph(graph: nx.DiGraph, out: Path) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    graphml = out / "arxiv_acm_graph.graphml"
    as_json = out / "arxiv_acm_graph.json"
    nx.write_graphml(graph, graphml)
    as_json.write_text(json.dumps(nx.node_link_data(graph, edges="edges"), indent=1, sort_keys=True) + "\n")
    return graphml, as_json


def load_graph_json(path: Path) -> nx.DiGraph:
    return nx.node_link_graph(json.loads(path.read_text()), directed=True, edges="edges")


# ---------------------------------------------------------------------------------------------------------
# Comparison with SymTax's hand-made CSV
def compare_with_symtax(
    symtax_csv: str, tree: Mapping[str, AcmNode] | None = None, rows: Iterable[MappingRow] | None = None
) -> list[dict[str, object]]:
    """Per category: codes only SymTax has, only we have, and why, by rule."""
    tree = tree if tree is not None else load_tree()
    ours: dict[str, dict[str, MappingRow]] = {}
    for row in rows if rows is not None else load_mapping():
        ours.setdefault(row.category, {})[row.acm_code] = row
    result = []
    for record in csv.DictReader(io.StringIO(symtax_csv)):
        category = record["Category_code"].strip()
        theirs = [c.strip() for c in record["ACM_subject_classes"].split(",") if c.strip()]
        mine = ours.get(category, {})
        reasons = []
        only_theirs = [c for c in theirs if c not in mine]
        only_ours = [c for c in mine if c not in theirs]
        for code in only_theirs:
            if code not in tree:
                reasons.append(f"{code}: not a CCS 1998 code (SymTax invented it)")
            elif f"{code}.0" in mine:
                reasons.append(
                    f"{code}: the definition names {code}.0, the General node of {code}; SymTax widened it "
                    f"to all of {code}"
                )
            elif any(re.search(rf"except[^;]*\b{re.escape(code)}\b", r.evidence) for r in mine.values()):
                reasons.append(f"{code}: the definition excludes it")
            elif any(is_under(code, m, tree) for m in mine):
                reasons.append(
                    f"{code}: inside a class the definition maps whole ('all of'), which we keep as one node"
                )
            else:
                reasons.append(f"{code}: not named in arXiv's definition")
        for code in only_ours:
            row = mine[code]
            parent = code.rsplit(".", 1)[0]
            if row.relation == "chosen_by_hand":
                reasons.append(f"{code}: chosen by hand ({row.evidence})")
            elif code.endswith(".0") and parent in theirs:
                continue  # explained with SymTax's parent code above
            elif "all of" in row.evidence and tree[code].parent:
                reasons.append(
                    f"{code}: part of 'all of {tree[code].parent}' in the definition; SymTax lists only "
                    "the numbered children"
                )
            elif any(is_under(t, code, tree) for t in theirs):
                reasons.append(f"{code}: the definition says all of {code}; SymTax lists only some children")
            else:
                reasons.append(f"{code}: named in arXiv's definition ({row.relation}), missing from SymTax")
        result.append(
            {
                "category": category,
                "symtax": theirs,
                "ours": list(mine),
                "only_symtax": only_theirs,
                "only_ours": only_ours,
                "reasons": reasons,
            }
        )
    return result


def comparison_markdown(comparison: Sequence[Mapping[str, object]]) -> str:
    same = [c["category"] for c in comparison if not c["only_symtax"] and not c["only_ours"]]
    lines = [
        "# arXiv -> ACM CCS 1998: citrec's derived mapping against SymTax's hand-made CSV",
        "",
        "Generated by `python -m mapping.taxonomy compare --symtax ../shared/data/peers/symtax-arxiv-acm-mapping.csv`.",
        f"Identical for {len(same)} of {len(comparison)} categories: {', '.join(same) or 'none'}.",
        "",
        "| category | SymTax | citrec | where they differ and why |",
        "|---|---|---|---|",
    ]
    for c in comparison:
        if c in same:
            continue
        if not c["only_symtax"] and not c["only_ours"]:
            continue
        lines.append(
            f"| {c['category']} | {', '.join(c['symtax'])} | {', '.join(c['ours'])} | {'; '.join(c['reasons'])} |"
        )
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m mapping.taxonomy", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="derive the mapping and the tree into mapping/data")
    build.add_argument("--definitions", required=True, type=Path, help="arXiv's taxonomy definitions.py")
    build.add_argument("--ccs", required=True, type=Path, help="the CCS 1998 tree as nested-list HTML")
    build.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "data")
    graph = sub.add_parser("graph", help="write the fused graph as GraphML and JSON")
    graph.add_argument("--out", type=Path, required=True)
    compare = sub.add_parser("compare", help="compare with SymTax's CSV, as Markdown")
    compare.add_argument("--symtax", type=Path, required=True)
    compare.add_argument("--out", type=Path, help="write the Markdown here (default: print)")
    args = parser.parse_args(argv)
    if args.command == "build":
        categories, aliases = parse_arxiv_definitions(args.definitions.read_text(encoding="utf-8"))
        tree = parse_ccs1998_html(args.ccs.read_bytes())
        rows = derive_mapping(categories, tree)
        write_data(tree, rows, categories, aliases, args.out)
        names = {c: v["name"] for c, v in categories.items()}
        export_graph(build_graph(tree, rows, names, aliases), args.out)
        mapped = {r.category for r in rows}
        print(f"{len(tree)} CCS 1998 codes, {len(mapped)} cs.* categories, {len(rows)} mapping rows -> {args.out}")
    elif args.command == "graph":
        graphml, as_json = export_graph(build_graph(), args.out)
        print(f"wrote {graphml} and {as_json}")
    else:
        text = comparison_markdown(compare_with_symtax(args.symtax.read_text(encoding="utf-8")))
        if args.out:
            args.out.write_text(text)
        else:
            print(text)


if __name__ == "__main__":
    main()
