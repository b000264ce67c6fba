"""An in-process run leaves the objects alive before it out of the garbage collector's full collections and makes
its young collections rarer, and hands both back when it ends, also when it fails; a run on a remote runner, or in
a process that turned the collector off, changes nothing."""

from __future__ import annotations

import gc

import pytest

from pipelines.skeleton import RUN_GC_THRESHOLD, gc_tuned_for_run


@pytest.fixture(autouse=True)
def default_collector():
    """Each test starts from CPython's defaults and leaves them so."""
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    assert gc.get_freeze_count() == 0
    yield
    gc.set_threshold(*thresholds)
    gc.enable() if enabled else gc.disable()
    gc.unfreeze()


def test_the_heap_is_frozen_and_young_collections_rarer_while_the_run_lasts():
    before = gc.get_threshold()
    assert before[0] < RUN_GC_THRESHOLD  # CPython's 700
    alive = [object() for _ in range(10)]  # noqa: F841 (alive through the run)
    with gc_tuned_for_run():
        assert gc.get_freeze_count() >= 10
        assert gc.get_threshold() == (RUN_GC_THRESHOLD, *before[1:])
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_failed_run_hands_both_back():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), gc_tuned_for_run():
        raise RuntimeError("the run failed")
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_run_elsewhere_changes_nothing():
    before = gc.get_threshold()
    with gc_tuned_for_run(tuned=False):
        assert gc.get_freeze_count() == 0
        assert gc.get_threshold() == before


def test_a_heap_the_process_froze_itself_is_left_frozen():
    gc.freeze()
    frozen = gc.get_freeze_count()
    with gc_tuned_for_run():
        assert gc.get_threshold()[0] == RUN_GC_THRESHOLD
    assert gc.get_freeze_count() == frozen


def test_a_higher_threshold_and_a_collector_turned_off_are_the_process_own():
    gc.set_threshold(RUN_GC_THRESHOLD * 2, 5, 5)
    with gc_tuned_for_run():
        assert gc.get_threshold() == (RUN_GC_THRESHOLD * 2, 5, 5)
    assert gc.get_threshold() == (RUN_GC_THRESHOLD * 2, 5, 5)
    gc.disable()
    with gc_tuned_for_run():
        assert not gc.isenabled()
        assert gc.get_freeze_count() == 0
    assert not gc.isenabled()
