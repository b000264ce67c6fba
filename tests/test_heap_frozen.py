"""An in-process run leaves the objects alive before it out of the garbage collector's full collections, and hands
them back when it ends, also when it fails; a run on a remote runner changes nothing."""

from __future__ import annotations

import gc

import pytest

from pipelines.skeleton import heap_so_far_frozen


def test_the_heap_is_frozen_while_the_run_lasts_and_handed_back_after():
    assert gc.get_freeze_count() == 0
    alive = [object() for _ in range(10)]  # noqa: F841 (alive through the run)
    with heap_so_far_frozen():
        assert gc.get_freeze_count() >= 10
    assert gc.get_freeze_count() == 0
    with pytest.raises(RuntimeError), heap_so_far_frozen():
        raise RuntimeError("the run failed")
    assert gc.get_freeze_count() == 0


def test_a_run_elsewhere_freezes_nothing():
    with heap_so_far_frozen(frozen=False):
        assert gc.get_freeze_count() == 0


def test_a_heap_the_process_froze_itself_is_left_frozen():
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with heap_so_far_frozen():
            pass
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
