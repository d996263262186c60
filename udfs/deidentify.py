"""The Spark-side tagging function: Arrow batches in, staged results out, one Deidentifier per worker.

Nothing here touches a SparkContext: the function closes over plain bytes and dicts (bundle
zip, config, column spec) and a KeyRef, so it runs the same under classic Spark and Spark
Connect. The secret key is never in the closure (py4j logs pickled functions at DEBUG): it is
read on the worker from the file shipped with the job (udfs/shipping.py).
PySpark broadcasts a pickled function over 1 MB by itself, so a large bundle still travels
once per executor. The Deidentifier is built on first use in each Python worker and cached
there by (bundle id, config digest, key id); workers are reused across tasks, and across the runs
of one Spark application (a notebook, a service), so the cache keeps the WORKER_DEIDENTIFIERS
used last: another run's config or key evicts the oldest instead of adding a Deidentifier for good. The bundle is
unpacked into a private folder that is removed as soon as the Deidentifier is built (its models
are in memory by then); a worker killed mid-build leaves a folder the next unpack removes.
Once built, the worker's heap is settled (settle_heap, as conf [job.gc] says): the models are frozen out of
the garbage collector's full passes and young collections run less often. Outputs do not change: the
collector only frees cycles; the CPU it cost was ~10-12 % of a worker's (docs/BENCHMARKS.md, round 8).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pyarrow as pa

from deid_core.app.batch import PATIENT_BATCH_MAX, make_deidentifier, patient_batches, process_batch
from deid_core.app.heap import settle_heap
from deid_core.app.schema import BatchSpec, staged_schema
from deid_core.bundle import BundleError, unpack_bundle
from deid_core.config import Config
from deid_core.engine.pipeline import Deidentifier
from deid_core.workdirs import OwnedDir
from deid_spark.udfs.shipping import KeyRef, read_key

WORKER_DEIDENTIFIERS = 2  # Deidentifiers a Python worker keeps (one per payload identity), the used last
_CACHE: dict[str, Deidentifier] = {}  # cache key -> Deidentifier, least recently used first
BUILDS = {"count": 0}  # how many Deidentifiers this worker built (tests, diagnostics)
BUNDLE_DIR_PREFIX = "deid-bundle-"


@dataclass(frozen=True)
class WorkerPayload:
    """What every Python worker needs to build the Deidentifier: plain, picklable values only."""

    bundle_id: str
    bundle_zip: bytes = field(repr=False)
    config: Config = field(repr=False)
    key: KeyRef  # where the worker reads the key: never the key itself
    spec: BatchSpec

    @property
    def cache_key(self) -> str:
        """Identity of the Deidentifier this payload builds."""
        return f"{self.bundle_id}:{self.config.digest}:{self.key.key_id}"


def worker_deidentifier(payload: WorkerPayload) -> Deidentifier:
    """This worker's Deidentifier for the payload, built (bundle unpacked, heap settled) on first use only;
    at most WORKER_DEIDENTIFIERS are kept, the least recently used dropped first.

    The state lives in this module, not in the tagging function: Spark pickles that closure by value,
    so a global it read directly (a counter, a flag) would be the pickled copy, not the worker's."""
    deid = _CACHE.pop(payload.cache_key, None)
    if deid is None:
        _evict(WORKER_DEIDENTIFIERS - 1)  # freed by reference counting, frozen heap or not (tests/test_worker_bounds.py)
        with OwnedDir(BUNDLE_DIR_PREFIX) as folder:  # removed once built: the models are in memory
            # a subfolder: the bundle's files are checked against bundle.json, the owner lock is not one
            bundle = unpack_bundle(payload.bundle_zip, folder.path / "bundle")
            if bundle.id != payload.bundle_id:
                raise BundleError(f"shipped bundle id {bundle.id[:12]} != expected {payload.bundle_id[:12]}")
            deid = make_deidentifier(payload.config, bundle, read_key(payload.key))
        BUILDS["count"] += 1
        settle_heap(payload.config.job.gc)  # the worker process is ours: settled for its life ([job.gc])
    _CACHE[payload.cache_key] = deid  # last: the most recently used
    return deid


def _evict(keep: int) -> None:
    """Drop the least recently used Deidentifiers until at most `keep` remain."""
    while len(_CACHE) > max(keep, 0):
        del _CACHE[next(iter(_CACHE))]


def tag_batches(payload: WorkerPayload) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function: staged results for every input batch (plain values in its closure)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        deid = worker_deidentifier(payload)
        for batch in patient_batches(batches, PATIENT_BATCH_MAX):
            yield process_batch(batch, deid, payload.spec, staged_schema(batch.schema, payload.spec))

    return run
