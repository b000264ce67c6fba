"""`pipelines.joins.KeyedBatches` (the per-bundle batches of a weighted `FanOutJoin`'s many side), by hand; the
joins themselves are tested where they are used (tests/test_transforms.py, tests/test_graph.py)."""

from __future__ import annotations

import pytest

from pipelines.joins import KeyedBatches, batch_size_for


def test_a_key_s_batch_comes_back_when_full_and_the_rest_when_drained():
    batches = KeyedBatches(batch_size=2, buffer_size=100)
    assert batches.add("a", 1) is None
    assert batches.add("b", 2) is None
    assert batches.add("a", 3) == [1, 3]  # a's batch is full: sent, and no longer held
    assert batches.held == 1
    assert batches.add("a", 4) is None
    assert dict(batches.drain()) == {"b": [2], "a": [4]}
    assert batches.held == 0 and list(batches.drain()) == []


def test_the_buffer_is_full_at_its_size_whatever_the_keys():
    batches = KeyedBatches(batch_size=10, buffer_size=3)
    for i, key in enumerate("xyz"):
        assert not batches.full
        batches.add(key, i)
    assert batches.full
    assert sorted(batches.drain()) == [("x", [0]), ("y", [1]), ("z", [2])]
    assert not batches.full


def test_offer_gives_what_must_be_sent_now():
    batches = KeyedBatches(batch_size=2, buffer_size=3)
    assert batches.offer("a", 1) == []
    assert batches.offer("a", 2) == [("a", [1, 2])]  # a's batch full
    assert batches.offer("b", 3) == [] and batches.offer("c", 4) == []
    assert sorted(batches.offer("d", 5)) == [("b", [3]), ("c", [4]), ("d", [5])]  # the buffer full: everything
    assert batches.held == 0


def test_every_value_comes_out_once_in_its_key_s_batches_in_order():
    batches = KeyedBatches(batch_size=3, buffer_size=7)
    values = [(f"k{i % 4}", i) for i in range(50)]
    out = []
    for key, value in values:
        full = batches.add(key, value)
        if full is not None:
            out.append((key, full))
        elif batches.full:
            out.extend(batches.drain())
    out.extend(batches.drain())
    assert all(1 <= len(batch) <= 3 for _, batch in out)
    assert sorted((key, v) for key, batch in out for v in batch) == sorted(values)
    for key, batch in out:
        assert batch == sorted(batch) and all(f"k{v % 4}" == key for v in batch)


def test_batch_sizes_are_a_sixteenth_of_a_group_between_1_and_256():
    assert [batch_size_for(g) for g in (1, 16, 50, 160, 4096, 10_000)] == [1, 1, 3, 10, 256, 256]
    with pytest.raises(ValueError):
        KeyedBatches(batch_size=0)
