"""The collector's settings while tagging: settled for the block, the caller's back after (deid tag, API)."""

from __future__ import annotations

import gc

import pytest

from deid_core.app.heap import settled_heap
from deid_core.config import load_config

GC = load_config().job.gc  # conf/deidentify.toml [job.gc]
GC_YOUNG_THRESHOLD = GC.young_threshold


def test_settled_heap_freezes_and_raises_the_young_threshold_then_restores(default_collector):
    with settled_heap(GC):
        assert gc.get_freeze_count() > 0 and gc.get_threshold() == (GC_YOUNG_THRESHOLD, 10, 10)
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_block_raises(default_collector):
    with pytest.raises(RuntimeError), settled_heap(GC):
        raise RuntimeError("stage failed")
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


def test_objects_the_caller_froze_stay_frozen(default_collector):
    gc.freeze()  # (the count itself moves as frozen objects are freed: only "still frozen" is checked)
    with settled_heap(GC):
        assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] == GC_YOUNG_THRESHOLD
    assert gc.get_freeze_count() > 0 and gc.get_threshold() == (700, 10, 10)  # not thawed by the block


def test_nested_blocks_restore_once_at_the_end(default_collector):
    with settled_heap(GC):
        with settled_heap(GC):
            pass
        assert gc.get_freeze_count() > 0 and gc.get_threshold()[0] == GC_YOUNG_THRESHOLD  # still settled
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)


def test_automatic_collection_left_off_stays_off(default_collector):
    gc.set_threshold(0, 10, 10)
    with settled_heap(GC):
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold() == (0, 10, 10)


def test_deid_tag_leaves_the_callers_collector_as_it_was(default_collector, tmp_path, monkeypatch):
    from deid_core.app import heap
    from deid_core.app.cli import main as deid_main
    from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, SAMPLES

    seen = []
    real = heap.settle_heap
    monkeypatch.setattr(heap, "settle_heap", lambda gcs: (real(gcs), seen.append(gc.get_threshold()[0]))[0])
    assert deid_main(["tag", "--input", str(SAMPLES), "--output", str(tmp_path / "out"), "--config",
                      str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key"]) == 0
    assert seen == [GC_YOUNG_THRESHOLD]  # tagged with the settled heap, once
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == (700, 10, 10)
