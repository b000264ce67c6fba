"""bench/scale.py's cost model on hand-computed cases (docs/scale.md quotes its output)."""

import argparse

import pytest

from bench import scale

pytestmark = pytest.mark.unit


def test_rates_are_the_slopes_between_sizes_and_the_bytes_per_paper():
    def run(cpu, shuffled):
        steps = {"a": shuffled / 2, "Match/ByTitle/JoinBuckets": shuffled / 4, "Match/ByTitle/JoinRefs": shuffled / 4}
        return {"beam": {"cpu_s": cpu, "shuffle_bytes": steps}}

    measured = {"sizes": {"100": run(10.0, 1e6), "1000": run(40.0, 2e7), "5000": run(240.0, 2e8)}}
    rates = scale.rates(measured)
    assert rates["low"] == {
        "cpu_s": pytest.approx(30.0 / 900),
        "shuffle_bytes": pytest.approx(2e4),
        "title_join_bytes": pytest.approx(1e4),  # the two ByTitle steps: half of 2e7 over 1,000 papers
        "papers": 1000,
    }
    assert rates["high"] == {
        "cpu_s": pytest.approx(200.0 / 4000),
        "shuffle_bytes": pytest.approx(4e4),
        "title_join_bytes": pytest.approx(2e4),
        "papers": 5000,
    }


def test_simulate_by_hand():
    args = argparse.Namespace(
        efficiency=0.5, startup_min=6.0, vcpus=4, memory_gb=10.0, vcpu_hour=0.1, gb_hour=0.01, shuffle_gb=0.02
    )
    # 36,000 papers x 0.1 s / 0.5 = 2 CPU hours; on 2 workers x 4 vCPUs: 0.25 h + 0.1 h start-up = 0.35 h;
    # billed 0.35 x 8 = 2.8 vCPU hours ($0.28), 0.35 x 2 x 10 = 7 GB hours ($0.07), 36,000 x 50 kB = 1.8 GB ($0.036)
    result = scale.simulate(36_000, 2, {"cpu_s": 0.1, "shuffle_bytes": 50_000}, args)
    assert result["wall_hours"] == pytest.approx(0.35)
    assert result["vcpu_hours"] == pytest.approx(2.8)
    assert result["shuffle_gb"] == pytest.approx(1.8)
    assert result["usd"] == pytest.approx(0.28 + 0.07 + 0.036)


def _join_scale(*rows: tuple[int, float, float, float]) -> dict:
    """A bench/join_scale.py JSON with (database size, bytes a reference, bytes a database paper, candidates)."""
    return {
        "refs_per_paper": 40.0,
        "rows": [
            {
                "size": size,
                "titles": "synthetic",
                "bytes_after": {"reference_total": ref, "database_paper_total": paper},
                "per_reference": {"candidates": {"mean": candidates}},
            }
            for size, ref, paper, candidates in rows
        ]
        + [  # a real-titles row is a check of the synthetic ones, never a point of the model
            {
                "size": 50,
                "titles": "real",
                "bytes_after": {"reference_total": 1e9, "database_paper_total": 1e9},
                "per_reference": {"candidates": {"mean": 1e9}},
            }
        ],
    }


def test_join_bytes_are_linear_in_the_database_size_and_extrapolated_along_the_last_slope():
    table = _join_scale((10, 1000.0, 500.0, 1.0), (110, 1200.0, 500.0, 11.0), (1010, 2100.0, 600.0, 101.0))
    # 60 is halfway from 10 to 110
    assert scale.join_bytes(table, 60) == pytest.approx(
        {"bytes_per_ref": 1100.0, "bytes_per_database_paper": 500.0, "candidates_per_ref": 6.0}
    )
    # 560 is halfway from 110 to 1,010
    assert scale.join_bytes(table, 560)["bytes_per_ref"] == pytest.approx(1650.0)
    # 1,910 is 900 past the last size: once more the last slope (+900 bytes, +100 bytes, +90 candidates)
    assert scale.join_bytes(table, 1910) == pytest.approx(
        {"bytes_per_ref": 3000.0, "bytes_per_database_paper": 700.0, "candidates_per_ref": 191.0}
    )
    # below the smallest size: the smallest's figures
    assert scale.join_bytes(table, 3)["bytes_per_ref"] == pytest.approx(1000.0)


def test_the_title_join_is_taken_out_of_the_rate_and_put_back_at_the_corpus_database():
    table = _join_scale((10, 1000.0, 500.0, 1.0), (2010, 3000.0, 700.0, 201.0))
    args = argparse.Namespace(refs_per_paper=None, check_us=2.0)
    rate = {"cpu_s": 0.05, "shuffle_bytes": 100_000.0, "title_join_bytes": 30_000.0, "papers": 337}
    # the benchmark's database: 337 papers + 1,663 bibliography titles = 2,000 (1 + 2000/2000 x 200 candidates);
    # the corpus's: 1,010 (101 candidates, 2,000 bytes a reference, 600 a database paper)
    result = scale.with_title_join(rate, 505, 1010, table, args)
    # 100,000 - 30,000 + 40 references x 2,000 + 1,010 / 505 database papers x 600 = 151,200
    assert result["title_join_bytes"] == pytest.approx(40 * 2000 + 2 * 600)
    assert result["shuffle_bytes"] == pytest.approx(151_200.0)
    # fewer candidates at the corpus's database than at the benchmark's: no CPU taken off
    assert result["cpu_s"] == pytest.approx(0.05)
    bigger = scale.with_title_join(rate, 505, 2010, table, args)
    # 201 - 200 = 1 extra candidate a reference x 40 references x 2 us
    assert bigger["cpu_s"] == pytest.approx(0.05 + 40 * 1 * 2e-6)


def test_corpora_are_named_with_papers_and_database():
    assert scale.corpora("arXiv=1700000:2400000,small=10:0") == [("arXiv", 1_700_000, 2_400_000), ("small", 10, 0)]
