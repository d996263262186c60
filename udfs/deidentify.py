"""The Spark-side tagging function: Arrow batches in, staged results out, one Deidentifier per worker.

Nothing here touches a SparkContext: the function closes over plain bytes and dicts (bundle
zip, config, column spec) and a KeyRef, so it runs the same under classic Spark and Spark
Connect. The secret key is never in the closure (py4j logs pickled functions at DEBUG): it is
read on the worker from the file shipped with the job (udfs/shipping.py).
PySpark broadcasts a pickled function over 1 MB by itself, so a large bundle still travels
once per executor. The Deidentifier is built on first use in each Python worker and cached
there by (bundle id, config digest, key id); workers are reused across tasks.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from deid_core.app.batch import (
    BatchSpec,
    make_deidentifier,
    patient_batches,
    process_batch,
    staged_schema,
    tagged_count,
)
from deid_core.bundle import BundleError, unpack_bundle
from deid_core.config import digest
from deid_core.engine.pipeline import Deidentifier
from udfs.shipping import KeyRef, read_key

_CACHE: dict[str, Deidentifier] = {}
BUILDS = {"count": 0}  # how many Deidentifiers this worker built (tests, diagnostics)
PATIENT_BATCH_MAX = 20_000  # rows one patient's notes may gather into a batch (cross-note propagation)


@dataclass(frozen=True)
class WorkerPayload:
    """What every Python worker needs to build the Deidentifier: plain, picklable values only."""

    bundle_id: str
    bundle_zip: bytes = field(repr=False)
    config: dict[str, Any] = field(repr=False)
    key: KeyRef  # where the worker reads the key: never the key itself
    spec: BatchSpec

    @property
    def cache_key(self) -> str:
        """Identity of the Deidentifier this payload builds."""
        return f"{self.bundle_id}:{digest(self.config)}:{self.key.key_id}"


def worker_deidentifier(payload: WorkerPayload) -> Deidentifier:
    """This worker's Deidentifier for the payload, built (bundle unpacked) on first use only."""
    deid = _CACHE.get(payload.cache_key)
    if deid is None:
        dest = Path(tempfile.mkdtemp(prefix=f"deid-bundle-{payload.bundle_id[:12]}-"))
        bundle = unpack_bundle(payload.bundle_zip, dest)
        if bundle.id != payload.bundle_id:
            raise BundleError(f"shipped bundle id {bundle.id[:12]} != expected {payload.bundle_id[:12]}")
        deid = make_deidentifier(payload.config, bundle, read_key(payload.key))
        _CACHE[payload.cache_key] = deid
        BUILDS["count"] += 1
    return deid


def tag_batches(payload: WorkerPayload, counter: Any | None = None
                ) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The mapInArrow function; `counter` (an accumulator, classic Spark only) counts tagged notes."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        deid = worker_deidentifier(payload)
        for batch in patient_batches(batches, PATIENT_BATCH_MAX):
            if counter is not None:
                counter.add(tagged_count(batch))
            yield process_batch(batch, deid, payload.spec, staged_schema(batch.schema, payload.spec))

    return run
