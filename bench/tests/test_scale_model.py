"""bench/scale.py's cost model on a hand-computed case (docs/scale.md quotes its output)."""

import argparse

import pytest

from bench import scale

pytestmark = pytest.mark.unit


def test_rates_are_the_slopes_between_sizes_and_the_bytes_per_paper():
    def run(cpu, shuffled):
        return {"beam": {"cpu_s": cpu, "shuffle_bytes": {"a": shuffled / 2, "b": shuffled / 2}}}

    measured = {"sizes": {"100": run(10.0, 1e6), "1000": run(40.0, 2e7), "5000": run(240.0, 2e8)}}
    rates = scale.rates(measured)
    assert rates["low"] == {"cpu_s": pytest.approx(30.0 / 900), "shuffle_bytes": pytest.approx(2e4)}
    assert rates["high"] == {"cpu_s": pytest.approx(200.0 / 4000), "shuffle_bytes": pytest.approx(4e4)}


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
