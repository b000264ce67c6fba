"""Dataset cards a reader can load: the YAML header HuggingFace `datasets` reads, checked by hand, by the
library's own parser and by loading a dataset laid out the way the card says; the options, columns and title
the card states; the warnings a run ends with, cause first; the progress lines a long step logs. The card's own
snippets, executed on real runs: tests/test_card_snippets.py."""

from __future__ import annotations

import logging
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from extractors.assembly import hf_front_matter
from extractors.contexts import ContextConfig
from extractors.dataset import SplitConfig, build_stats, dataset_card, dataset_warnings
from extractors.reviews import dataset as review_dataset

HF_SPLIT = re.compile(r"^\w+(\.\w+)*$")

GRAPH = {"nodes": 4, "edges": 3, "average_degree": 1.5, "average_clustering": 0.0, "clustering": "exact"}


def arsyta_stats(train=3, validation=2, test=1, papers=4, edges=3, contexts=None, **funnel):
    contexts = contexts or ContextConfig()
    tallies = {
        "contexts": train + validation + test,
        "contexts:train": train,
        "contexts:validation": validation,
        "contexts:test": test,
        "papers_written": papers,
        **funnel,
    }
    options = {"split": SplitConfig().as_metadata(), "contexts": contexts.as_metadata()}
    return build_stats(tallies, {**GRAPH, "edges": edges}, {}, options)


def citationr_stats(train=2, validation=1, test=0, **funnel):
    tallies = {
        "reviews_in": 5,
        "reviews_read": 5,
        "reviews_written": 5,
        "mentions": 7,
        "queries": train + validation + test,
        "queries:train": train,
        "queries:validation": validation,
        "queries:test": test,
        "positives": 4,
        "candidates": 6,
        **funnel,
    }
    return review_dataset.build_stats(tallies, {})


def front_matter(card: str) -> dict:
    assert card.startswith("---\n"), card[:40]
    header, _, _ = card[4:].partition("\n---\n")
    return yaml.safe_load(header)


def hf_configs(split_table: str, splits: tuple[str, ...], *tables: str) -> list[dict]:
    """The `configs` HuggingFace reads: `default` with one `{split, path}` per split of `split_table` (none when
    `splits` is empty), then one config per other table, named after it, whose one split bears its name too."""
    default = [{"split": split, "path": f"{split_table}/{split}-*.parquet"} for split in splits]
    return ([{"config_name": "default", "data_files": default}] if splits else []) + [
        {"config_name": table, "data_files": [{"split": table, "path": f"{table}/*.parquet"}]} for table in tables
    ]


def check_hf_configs(meta: dict) -> None:
    """The structure HuggingFace documents for `configs`, checked without the library."""
    configs = meta.get("configs", [])
    assert isinstance(configs, list)
    names = [c["config_name"] for c in configs]
    assert len(names) == len(set(names)) and all(isinstance(n, str) for n in names)
    for config in configs:
        assert set(config) == {"config_name", "data_files"}, config
        files = config["data_files"]
        if isinstance(files, str):
            paths = [files]
        else:
            assert isinstance(files, list) and files
            paths = []
            for item in files:
                if isinstance(item, str):
                    paths.append(item)
                    continue
                assert set(item) == {"split", "path"}, item
                assert HF_SPLIT.match(item["split"]), item["split"]
                paths += [item["path"]] if isinstance(item["path"], str) else item["path"]
        for path in paths:
            assert not path.startswith("/") and "://" not in path and ".." not in path, path
            assert path.endswith(".parquet"), path


def check_with_datasets(meta: dict) -> None:
    """The library's own reading of the header (it raises on a data_files it would not accept)."""
    from datasets.utils.metadata import DatasetCardData, MetadataConfigs

    configs = MetadataConfigs.from_dataset_card_data(DatasetCardData(**meta))
    assert set(configs) == {c["config_name"] for c in meta.get("configs", [])}


def test_the_arsyta_card_lists_the_three_splits_papers_and_citations():
    meta = front_matter(dataset_card(arsyta_stats()))
    assert meta == {
        "pretty_name": "citrec arsyta",
        "configs": hf_configs("contexts", ("train", "validation", "test"), "papers", "citations"),
    }
    assert meta["configs"][0]["data_files"][1] == {"split": "validation", "path": "contexts/validation-*.parquet"}
    check_hf_configs(meta)
    check_with_datasets(meta)


def test_an_empty_split_is_left_out_of_the_card_and_said_so():
    card = dataset_card(arsyta_stats(validation=0))
    meta = front_matter(card)
    assert meta["configs"][0]["data_files"] == [
        {"split": "train", "path": "contexts/train-*.parquet"},
        {"split": "test", "path": "contexts/test-*.parquet"},
    ]
    assert "The `validation` split has no contexts, so it has no files" in card
    assert "contexts = load_dataset(root)  # the default config: train, test" in card
    check_hf_configs(meta)
    check_with_datasets(meta)


def test_a_card_without_contexts_lists_no_contexts_config():
    card = dataset_card(arsyta_stats(train=0, validation=0, test=0, papers=0, edges=0))
    meta = front_matter(card)
    assert meta == {"pretty_name": "citrec arsyta"}
    assert "**No split has contexts**" in card
    assert "contexts/train-*.parquet" not in card
    with_papers = front_matter(dataset_card(arsyta_stats(train=0, validation=0, test=0, papers=2, edges=0)))
    assert with_papers["configs"] == hf_configs("contexts", (), "papers")


def test_a_lone_table_config_is_not_handed_out_as_train():
    """HuggingFace makes a card's only config its default: the papers of a dataset without contexts must then
    come as `papers`, never as a `train` split that reads like contexts."""
    from datasets.utils.metadata import DatasetCardData, MetadataConfigs

    meta = front_matter(dataset_card(arsyta_stats(train=0, validation=0, test=0, papers=2, edges=0)))
    configs = MetadataConfigs.from_dataset_card_data(DatasetCardData(**meta))
    assert configs.get_default_config_name() == "papers"
    assert [item["split"] for item in configs["papers"]["data_files"]] == ["papers"]
    check_hf_configs(meta)


def test_the_title_names_the_recipe():
    stats = arsyta_stats()
    stats["options"]["recipe"] = {"name": "hatten-arxiv"}
    card = dataset_card(stats)
    assert front_matter(card)["pretty_name"] == "citrec arsyta (recipe hatten-arxiv)"
    assert "\n# citrec arsyta (recipe hatten-arxiv): a local citation recommendation dataset\n" in card


def test_the_card_names_the_columns_as_the_tables_have_them():
    card = dataset_card(arsyta_stats())
    files = card[card.index("## Files") : card.index("## Versions")]
    assert "`paper_id`, `title`, `abstract`" in files and "(id, title" not in files
    assert "`citing_id`, `cited_id`, `num_contexts`, `section_headings`" in files
    citationr = review_dataset.dataset_card(citationr_stats())
    assert "`submission_id`, `paper_id`, `title`, `resolved`" in citationr


ABSOLUTE = re.compile(r"(?:^|[\s\"'`(\[=])(?:/|~/|[A-Za-z]:[\\/])[\w.~*-]")
"""An absolute local path where a path token starts: `/home/...`, `~/...`, `C:\\...`."""


def test_the_card_shows_no_absolute_local_path():
    stats = arsyta_stats()
    stats["options"]["inputs"] = {
        "tei": ["/home/someone/corpus/tei/*.tei.xml"],
        "metadata": ["~/data/arxiv.jsonl", "C:\\data\\meta\\s2.jsonl"],
        "s2orc": ["gs://bucket/s2orc/*.jsonl", "relative/s2orc/*.json"],
    }
    stats["options"]["grobid"] = {"tei_cache": "/var/cache/citrec/tei"}
    card = dataset_card(stats)
    assert not ABSOLUTE.search(card), ABSOLUTE.search(card)
    for hidden in ("/home/someone", "someone", "~/data", "C:\\", "/var/cache"):
        assert hidden not in card
    # what is left says which files, relative paths and URLs as given
    for shown in (".../tei/*.tei.xml", ".../data/arxiv.jsonl", ".../meta/s2.jsonl", "gs://bucket/s2orc/*.jsonl"):
        assert f'"{shown}"' in card
    assert '"relative/s2orc/*.json"' in card and '".../citrec/tei"' in card
    assert stats["options"]["inputs"]["tei"] == ["/home/someone/corpus/tei/*.tei.xml"]  # stats.json keeps them


def test_the_card_states_the_window_and_sentences_the_run_used():
    card = dataset_card(arsyta_stats(contexts=ContextConfig(char_window=300, sentences_before=2, sentences_after=0)))
    assert "`char_context`: 300 characters each side of the marker (`--char_window`" in card
    assert "the citing sentence with 2 sentences before and 0 after from\n  the same section" in card
    assert "200 characters" not in card
    default = dataset_card(arsyta_stats())
    assert "200 characters each side" in default and "with 1 sentence before and 1 after" in default


def test_the_citationr_card_carries_valid_huggingface_yaml():
    card = review_dataset.dataset_card(citationr_stats())
    meta = front_matter(card)
    assert meta == {
        "pretty_name": "citrec citationr",
        "configs": hf_configs("queries", ("train", "validation"), "positives", "candidates", "mentions", "reviews"),
    }
    assert card.split("\n---\n", 1)[1].startswith("# citrec citationr\n")
    assert "Splits with no queries have no files and are not in the header's configs: test." in card
    check_hf_configs(meta)
    check_with_datasets(meta)


def test_front_matter_refuses_what_huggingface_would_not_read():
    with pytest.raises(ValueError, match="split name"):
        hf_front_matter("x", [("default", [("dev-set", "contexts/dev-*.parquet")])])
    with pytest.raises(ValueError, match="plain relative"):
        hf_front_matter("x", [("papers", "/abs/papers/*.parquet")])
    with pytest.raises(ValueError, match="plain relative"):
        hf_front_matter("x", [("papers", "../papers/*.parquet")])


def _write(root, relative, rows):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array([f"{relative}:{k}" for k in range(rows)], pa.string())}), path)


def test_huggingface_datasets_loads_a_directory_laid_out_as_the_card_says(tmp_path):
    from datasets import load_dataset

    root = tmp_path / "dataset"
    _write(root, "contexts/train-00000-of-00002.parquet", 2)
    _write(root, "contexts/train-00001-of-00002.parquet", 1)
    _write(root, "contexts/test-00000-of-00001.parquet", 1)
    _write(root, "papers/papers-00000-of-00001.parquet", 4)
    _write(root, "citations/citations-00000-of-00001.parquet", 3)
    (root / "README.md").write_text(dataset_card(arsyta_stats(train=3, validation=0, test=1)))
    cache = str(tmp_path / "hf-cache")
    contexts = load_dataset(str(root), cache_dir=cache)
    assert {split: ds.num_rows for split, ds in contexts.items()} == {"train": 3, "test": 1}
    assert load_dataset(str(root), "papers", split="papers", cache_dir=cache).num_rows == 4
    assert load_dataset(str(root), "citations", split="citations", cache_dir=cache).num_rows == 3


# ------------------------------------------------------------------------------------------ warnings


def with_recipe(stats: dict, name: str, **split) -> dict:
    """`stats` as a run of the recipe `name` records it (its split dates and citing window)."""
    from extractors.recipes import RECIPES

    recipe = RECIPES[name].as_metadata()
    if split:
        recipe["split"] = {**recipe["split"], **split}
    stats["options"] = {**stats["options"], "recipe": recipe, "split": recipe["split"]}
    return stats


def with_years(stats: dict, per_year: dict) -> dict:
    stats["plots"] = {**stats.get("plots", {}), "contexts_per_year": per_year}
    return stats


def test_a_sound_run_has_no_warnings():
    assert dataset_warnings(arsyta_stats(mentions_linked=10, dropped_unresolved_reference=5)) == []


def test_an_empty_split_under_a_recipe_that_takes_the_flags_names_its_dates_and_the_flags():
    stats = with_years(arsyta_stats(test=0), {"2019": {"train": 3}, "2024": {"validation": 2}})
    assert dataset_warnings(stats) == [
        "split 'test' has no contexts: it takes citing papers published from 2025-01-01 on, and the contexts' "
        "citing papers are from 2019-2024 (train 3, validation 2); check --validation_from/--test_from against "
        "your papers' dates"
    ]
    citrec = with_recipe(with_years(arsyta_stats(validation=0), {"2019": {"train": 3}, "2026": {"test": 1}}), "citrec")
    assert dataset_warnings(citrec) == [
        "split 'validation' has no contexts: it takes citing papers published from 2024-01-01 and before "
        "2025-01-01, and the contexts' citing papers are from 2019-2026 (train 3, test 1); check "
        "--validation_from/--test_from against your papers' dates"
    ]


def test_an_empty_split_under_a_published_recipe_gives_its_fixed_window_not_the_flags():
    stats = arsyta_stats(validation=0, dropped_citing_outside_recipe_after_window=0)
    stats["funnel"]["dropped_citing_outside_recipe:after_window"] = 36
    stats = with_recipe(with_years(stats, {"2018": {"train": 3}, "2020": {"train": 1, "test": 1}}), "hatten-arxiv")
    (line,) = dataset_warnings(stats)
    assert line == (
        "split 'validation' has no contexts: recipe `hatten-arxiv` fixes it to citing papers published from "
        "2020-01-01 and before 2020-03-01, and no kept context's citing paper falls there: the contexts' citing "
        "papers are from 2018-2020 (train 3, test 1); 36 contexts were dropped as their citing paper is outside "
        "the recipe (after_window 36). The recipe's split dates cannot be changed (--validation_from/--test_from "
        "are for --recipe citrec)"
    )
    assert "check --validation_from" not in line
    # the test split of a recipe with a citing window ends on its last day
    test = with_recipe(with_years(arsyta_stats(test=0), {"2019": {"train": 3}}), "hatten-arxiv")
    assert "published from 2020-03-01 to 2020-04-30, and" in dataset_warnings(test)[0]
    acl = with_recipe(with_years(arsyta_stats(train=0), {"2014": {"validation": 2}}), "acl200")
    assert "published from 2009-01-01 and before 2014-01-01, and" in dataset_warnings(acl)[0]


def test_fewer_than_half_of_the_linked_mentions_resolving_is_a_warning():
    # reached resolution: 12 linked - 2 dangling = 10; lost: 4 unresolved + 2 not in the database; 4 resolve
    stats = arsyta_stats(
        mentions_linked=12,
        dropped_dangling_link=2,
        dropped_unresolved_reference=4,
        dropped_cited_not_in_database=2,
        dropped_self_citation=3,
        metadata_records_in=1_500,
    )
    stats["options"]["inputs"] = {"tei": ["x/*.xml"], "metadata": ["arxiv.jsonl"]}
    assert dataset_warnings(stats) == [
        "only 4 of 10 linked mentions (40.0%) resolve to a paper in the database (4 unresolved_reference, 2 "
        "cited_not_in_database dropped), and only a resolved mention becomes a context: --metadata must hold the "
        "papers your documents cite (arXiv or S2ORC records, matched by arXiv id, DOI or title); this run's "
        "--metadata (1,500 records) holds few of them"
    ]
    # exactly half is not fewer than half
    assert dataset_warnings(arsyta_stats(mentions_linked=10, dropped_unresolved_reference=5)) == []
    assert dataset_warnings(arsyta_stats(mentions_linked=0)) == []


def test_the_resolution_warning_comes_first_and_says_when_no_database_was_given():
    """Nothing resolves (no --metadata): that cause leads; the empty splits are one line naming the drops, with
    no word of split dates, which cannot empty every split."""
    stats = arsyta_stats(
        train=0,
        validation=0,
        test=0,
        documents_parsed=30,
        mentions=2_111,
        mentions_linked=1_923,
        dropped_unresolved_reference=1_923,
        dropped_unlinked_mention=188,
    )
    stats["options"]["inputs"] = {"tei": ["grobid/*.xml"], "metadata": []}
    assert dataset_warnings(stats) == [
        "only 0 of 1,923 linked mentions (0.0%) resolve to a paper in the database (1,923 unresolved_reference "
        "dropped), and only a resolved mention becomes a context: --metadata must hold the papers your documents "
        "cite (arXiv or S2ORC records, matched by arXiv id, DOI or title); this run had no --metadata, so the "
        "database held only the 30 parsed documents themselves",
        "no split has contexts: none of the 2,111 mentions became a context; most were dropped as "
        "unresolved_reference (1,923), unlinked_mention (188)",
    ]


def test_no_contexts_and_no_mentions_points_at_the_dead_letters():
    stats = arsyta_stats(train=0, validation=0, test=0, documents_in=4, documents_dead_lettered=4)
    assert dataset_warnings(stats) == [
        "no split has contexts: no citation mention was found (0 of 4 documents parsed, 4 dead-lettered: "
        "dead_letter/ says why)"
    ]


def test_no_contexts_for_a_recipe_window_names_the_window():
    stats = with_recipe(arsyta_stats(train=0, validation=0, test=0, mentions=53, dropped_self_citation=1), "acl200")
    stats["funnel"]["dropped_citing_outside_recipe:after_window"] = 50
    assert dataset_warnings(stats) == [
        "no split has contexts: none of the 53 mentions became a context; most were dropped as "
        "citing_outside_recipe:after_window (50), self_citation (1); recipe `acl200` keeps citing papers "
        "published from 2009-01-01 to 2015-12-31"
    ]


def citationr_resolution(recommended: int, resolved: int, positives: int, kept: int, **options) -> dict:
    stats = citationr_stats(
        **{
            "mentions_kind:recommended": recommended,
            "recommended_resolved": resolved,
            "recommended_unresolved": recommended - resolved,
            "positives": positives,
            "positives_resolved": kept,
        }
    )
    stats["options"] = {"inputs": {"reviews": ["r/*.json"], "metadata": ["s2orc.jsonl"]}, **options}
    return stats


def test_citationr_warns_first_when_few_recommended_mentions_resolve():
    stats = citationr_resolution(2_161, 0, 1_079, 0, online_resolvers=[])
    stats["already_cited"] = {
        "submissions_undecided": 600,
        "submissions_reviewed": 600,
        "recommended_mentions_undecided": 2_161,
    }
    assert review_dataset.citationr_warnings(stats) == [
        "only 0 of 2,161 recommended mentions (0.0%) resolve to a paper in the database: --metadata must hold the "
        "works reviewers recommend (arXiv or S2ORC records, matched by arXiv id, DOI or title); this run's "
        "--metadata holds none of them; --online_resolvers dblp,s2 looks the rest up online. all 1,079 positives "
        "are title-only (`title:` ids, resolved = false), which the RMC export (--export rmc, --export_json) "
        "leaves out unless --export_unresolved",
        "already_cited undecided for 600 of 600 reviewed submissions (no --tei/--s2orc/--pdfs paper of theirs and "
        "no references list in --metadata): their 2,161 recommended mentions may include papers they already cite",
    ]


def test_citationr_resolution_warning_thresholds_and_figures():
    few = review_dataset.resolution_warning(citationr_resolution(10, 4, 6, 2, online_resolvers=["dblp"]))
    assert few.startswith("only 4 of 10 recommended mentions (40.0%) resolve")
    assert "holds few of them. 4 of the 6 positives are title-only" in few and "--online_resolvers" not in few
    assert review_dataset.resolution_warning(citationr_resolution(10, 5, 6, 3)) is None  # half is not fewer
    assert review_dataset.resolution_warning(citationr_resolution(0, 0, 0, 0)) is None
    none_given = citationr_resolution(4, 0, 2, 0)
    none_given["options"]["inputs"]["metadata"] = []
    assert "this run had no --metadata; --online_resolvers" in review_dataset.resolution_warning(none_given)
    assert review_dataset.citationr_warnings(citationr_stats()) == []


# ------------------------------------------------------------------------------- progress of a long step


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_logs_every_n_items_with_its_figures(caplog):
    from pipelines.citationr import Progress

    clock = FakeClock()
    progress = Progress("mining mentions", "reviews", every=3, seconds=10, clock=clock)
    with caplog.at_level(logging.INFO, logger="pipelines.citationr"):
        due = [progress.add(mentions=2, recommended=k % 2) for k in range(7)]
    assert due == [False, False, True, False, False, True, False]
    assert [r.getMessage() for r in caplog.records] == [
        "mining mentions: 3 reviews done on this worker (6 mentions, 1 recommended)",
        "mining mentions: 6 reviews done on this worker (12 mentions, 3 recommended)",
    ]
    assert {r.name for r in caplog.records} == {"pipelines.citationr"}
    # a batch that crosses several multiples makes one line
    with caplog.at_level(logging.INFO, logger="pipelines.citationr"):
        assert progress.add(n=10, last="a.json")
    assert len(caplog.records) == 3
    assert caplog.records[-1].getMessage() == (
        "mining mentions: 17 reviews done on this worker (14 mentions, 3 recommended, last: a.json)"
    )


def test_progress_logs_when_the_seconds_pass_whatever_the_count(caplog):
    from pipelines.citationr import Progress

    clock = FakeClock()
    progress = Progress("resolving mentions", "mentions", every=1_000, seconds=10, clock=clock)
    due = []
    with caplog.at_level(logging.INFO, logger="pipelines.citationr"):
        for _ in range(7):  # one item every 4 s, the first at 0 s
            due.append(progress.add())
            clock.now += 4
    assert due == [False, False, False, True, False, False, True]  # at 12 s and 24 s
    assert [r.getMessage() for r in caplog.records] == [
        "resolving mentions: 4 mentions done on this worker",
        "resolving mentions: 7 mentions done on this worker",
    ]


@given(
    every=st.integers(1, 20),
    seconds=st.floats(0.5, 30),
    steps=st.lists(st.tuples(st.integers(1, 30), st.floats(0, 20)), max_size=60),
)
def test_progress_is_never_silent_past_its_bounds_and_never_early(every, seconds, steps):
    """After every call: a line was due (`every` more items, or `seconds` since the last line) exactly when it
    was logged."""
    from pipelines.citationr import Progress

    clock = FakeClock()
    progress = Progress("step", "items", every=every, seconds=seconds, clock=clock)
    done = last_count = 0
    last_time = None
    for n, wait in steps:
        clock.now += wait
        last_time = clock.now if last_time is None else last_time
        done += n
        due = done // every > last_count // every or clock.now - last_time >= seconds
        assert progress.add(n) == due
        if due:
            last_count, last_time = done, clock.now
