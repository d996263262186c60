"""A reused Python worker keeps at most WORKER_DEIDENTIFIERS Deidentifiers, however many runs (configs, keys) it serves."""

from __future__ import annotations

import gc
import weakref

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.options import effective_config, parse_name_columns
from deid_core.app.schema import validate_input_schema
from deid_core.bundle import bundle_bytes, load_bundle
from deid_core.keys import DEMO_KEY, key_id
from deid_spark.udfs import deidentify as worker
from deid_spark.udfs.shipping import KeyRef
from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, SAMPLES


@pytest.fixture(scope="module")
def payloads(tmp_path_factory):
    """Five payloads of the cheap literal config, each another run's (another config digest)."""
    key_file = tmp_path_factory.mktemp("key") / "demo.key"
    key_file.write_bytes(DEMO_KEY)
    spec = validate_input_schema(pq.read_schema(SAMPLES), parse_name_columns(NAME_COLUMNS), "test")
    bundle = load_bundle()
    zipped = bundle_bytes(bundle)
    ref = KeyRef("not-shipped.bin", key_id(DEMO_KEY), str(key_file))
    return [worker.WorkerPayload(bundle.id, zipped, effective_config(str(LITERAL_CONF), {"job": {"batch_size": 1000 + i}}),
                                 ref, spec) for i in range(5)]


@pytest.fixture(autouse=True)
def _fresh_worker():
    """An empty worker cache and the collector as it was (the tagging function freezes the heap)."""
    saved, before = dict(worker._CACHE), gc.get_threshold()
    worker._CACHE.clear()
    gc.unfreeze()
    yield
    worker._CACHE.clear()
    worker._CACHE.update(saved)
    gc.unfreeze()
    gc.set_threshold(*before)


def test_a_worker_keeps_the_last_used_deidentifiers_only(payloads):
    a, b, c = payloads[:3]
    assert worker.WORKER_DEIDENTIFIERS == 2
    first = worker.worker_deidentifier(a)
    gone = weakref.ref(worker.worker_deidentifier(b))
    assert worker.worker_deidentifier(a) is first  # a used again: b is now the least recently used
    built = worker.BUILDS["count"]
    worker.worker_deidentifier(c)
    assert worker.BUILDS["count"] == built + 1
    assert len(worker._CACHE) == 2 and set(worker._CACHE) == {a.cache_key, c.cache_key}
    gc.collect()
    assert gone() is None  # dropped for good, not held by a frozen heap
    assert worker.worker_deidentifier(a) is first  # still cached: no rebuild
    assert worker.BUILDS["count"] == built + 1


def test_many_runs_in_one_worker_stay_bounded(payloads):
    for p in payloads:
        worker.worker_deidentifier(p)
        assert len(worker._CACHE) <= worker.WORKER_DEIDENTIFIERS


def test_dropped_deidentifier_collectable_after_the_heap_was_frozen(payloads):
    """The first build freezes the heap (settle_heap) with its models in it; dropped later, it is still freed
    (reference counting: a frozen object is only out of the collector's scans), and the worker stays settled."""
    a, b, c = payloads[:3]
    gone = weakref.ref(worker.worker_deidentifier(a))
    assert gc.get_freeze_count() > 0
    worker.worker_deidentifier(b)
    worker.worker_deidentifier(c)  # drops a
    assert gone() is None
    assert gc.get_freeze_count() > 0  # settled again after the build


def test_outputs_same_after_an_eviction(payloads):
    """A Deidentifier built again after its eviction tags the same rows the same way."""
    table = pq.read_table(SAMPLES)
    table = table.append_column("_deid_duplicate", pa.array([False] * table.num_rows))
    a, b, c = payloads[:3]
    first = pa.Table.from_batches(list(worker.tag_batches(a)(iter(table.to_batches(16)))))
    for p in (b, c):  # a is evicted
        worker.worker_deidentifier(p)
    assert a.cache_key not in worker._CACHE
    again = pa.Table.from_batches(list(worker.tag_batches(a)(iter(table.to_batches(16)))))
    assert again.equals(first)
