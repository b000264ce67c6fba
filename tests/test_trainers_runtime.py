"""What every trainer's command shares (`trainers.runtime`, `trainers.rerank.evaluate_prefetched_splits`): the
command line of subcommands, seeding and one-line errors, the learning-rate flag written from the rates, and the
per-split evaluation every pair reranker runs, on hand-made data with hand-counted figures."""

from __future__ import annotations

import argparse
import json
import random

import pytest

pytest.importorskip("torch")

from tests.support.trainer_data import TOPICS, topical_dataset  # noqa: E402
from trainers import runtime  # noqa: E402
from trainers.rerank import evaluate_prefetched_splits  # noqa: E402


def test_a_command_seeds_first_and_ends_an_expected_error_in_one_line():
    random.seed(3)
    expected = random.random()
    random.seed(99)  # whatever the state before, the command draws from --seed
    args = argparse.Namespace(seed=3)
    assert runtime.run_command(args, lambda _: {"draw": random.random()}, (ValueError,)) == {"draw": expected}

    def missing(_: argparse.Namespace) -> dict:
        raise FileNotFoundError("out/ holds neither contexts/ nor papers.json")

    with pytest.raises(SystemExit, match=r"^error: out/ holds neither contexts/ nor papers.json$"):
        runtime.run_command(args, missing, (ValueError, FileNotFoundError))
    with pytest.raises(FileNotFoundError):  # an error the command does not expect keeps its traceback
        runtime.run_command(args, missing, (ValueError,))


def test_the_command_line_needs_a_subcommand_and_keeps_the_docstring_as_written(capsys):
    doc = "First line.\n\n    python -m trainers.x train --dataset out/   # indented, kept"
    parser, commands = runtime.command_parser("python -m trainers.x", doc)
    commands.add_parser("train").add_argument("--dataset")
    assert parser.parse_args(["train", "--dataset", "d"]).command == "train"
    with pytest.raises(SystemExit):
        parser.parse_args([])
    error = capsys.readouterr().err
    assert "required" in error and "command" in error
    assert parser.format_help().startswith("usage: python -m trainers.x")
    assert "\n    python -m trainers.x train --dataset out/   # indented, kept\n" in parser.format_help()


def test_the_learning_rate_flag_states_the_rates_it_is_given():
    rates = {"paper": runtime.PresetRates(3e-5, 3e-5), "smoke": runtime.PresetRates(3e-5, 2e-3)}
    parser = argparse.ArgumentParser()
    runtime.add_learning_rate_flag(parser, rates, flag="--lr", optimizer="Adam", whose="the authors'")
    (action,) = [a for a in parser._actions if "--lr" in a.option_strings]
    assert action.help == (
        "Adam learning rate (default: 3e-5, the authors', for a pretrained encoder; the tiny model of "
        "trainers.tiny_model gets 2e-3 under --preset smoke; a warning when far outside 1e-7 to 5e-4 for a "
        "pretrained encoder)."
    )
    assert parser.parse_args([]).lr is None  # the preset chooses (`settle_learning_rate`)
    assert parser.parse_args(["--lr", "1e-4"]).lr == pytest.approx(1e-4)


def equal_scores(query, candidates):
    """Every candidate alike: the reranked order is the prefetched one."""
    return dict.fromkeys(candidates, 0.0)


@pytest.fixture
def prefetched_in_topic_order(tmp_path):
    """The 12 test queries of `topical_dataset` (query i cites p<i>), each prefetched as p0, p1, ..., p11."""
    dataset = topical_dataset()
    lists = {q.context_id: [f"p{i}" for i in range(len(TOPICS))] for q in dataset.queries["test"]}
    (tmp_path / "prefetched_test.json").write_text(json.dumps(lists))
    args = argparse.Namespace(
        split=["test"], prefetched=str(tmp_path), checkpoint=str(tmp_path), pool_sizes=[5, 100], no_oracle=True
    )
    return dataset, args


def test_each_split_is_reranked_from_its_prefetched_lists_and_written(prefetched_in_topic_order, tmp_path):
    dataset, args = prefetched_in_topic_order
    results = evaluate_prefetched_splits(args, dataset, equal_scores, "cpu", extra={"fusion": "vector"})
    written = json.loads((tmp_path / "results_rerank_test.json").read_text())
    assert written == results["test"]
    # query i finds its paper at rank i + 1: in the top 10 for i < 10, in the top-5 pool for i < 5
    assert written["recall@10_rerank_top100"] == pytest.approx(10 / 12)
    assert written["recall@10_rerank_top5"] == pytest.approx(5 / 12)
    assert written["mrr_rerank_top100"] == pytest.approx(sum(1 / rank for rank in range(1, 13)) / 12)
    assert (written["num_queries"], written["split"], written["fusion"]) == (12, "test", "vector")
    assert written["prefetched"] == str(tmp_path)


def test_prepare_gives_the_queries_the_reranker_reads(prefetched_in_topic_order):
    dataset, args = prefetched_in_topic_order

    def first_six(queries):
        return [q for q in queries if int(q.cited_ids[0][1:]) < 6]

    metrics = evaluate_prefetched_splits(args, dataset, equal_scores, "cpu", prepare=first_six)["test"]
    assert metrics["num_queries"] == 6
    assert metrics["recall@10_rerank_top100"] == pytest.approx(1.0)
    assert metrics["recall@10_rerank_top5"] == pytest.approx(5 / 6)  # p5 is sixth


def test_a_split_without_its_prefetched_file_names_the_prefetch_to_run(prefetched_in_topic_order):
    dataset, args = prefetched_in_topic_order
    args.split = ["validation"]
    with pytest.raises(SystemExit, match=r"prefetched_validation.json is missing: .*prefetch --split validation"):
        evaluate_prefetched_splits(args, dataset, equal_scores, "cpu")
