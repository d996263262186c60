"""Ship the secret key to Python workers as a file distributed with the job, never in a closure.

Everything Spark pickles (the tagging function and what it closes over) can reach a log: py4j
logs each command at DEBUG, and the pickled function is one. So the function carries only a
KeyRef (file name + public fingerprint); the key itself travels as a file through Spark's own
file distribution (`SparkContext.addFile`, or `addArtifacts(file=True)` under Spark Connect)
and is read on the worker, where its fingerprint is checked before use.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from deid_core.keys import KeyError_, key_id
from deid_core.workdirs import OwnedDir

KEY_DIR_PREFIX = "deid-key-"


@dataclass(frozen=True)
class KeyRef:
    """Where a worker finds the key: a shipped file's name and the key's public fingerprint."""

    file_name: str
    key_id: str
    local_path: str | None = None  # the driver's copy: read directly when no SparkFiles exist (tests)


class ShippedKey:
    """A key written to a private temporary file and registered with Spark; `close()` removes it."""

    def __init__(self, spark, key: bytes) -> None:
        self._dir = OwnedDir(KEY_DIR_PREFIX)  # a killed driver's copy is removed by the next run
        name = f"deid-key-{secrets.token_hex(8)}.bin"
        path = self._dir.path / name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        connect = ship_file(spark, str(path))
        # the driver's path means nothing to a Spark Connect server's workers: SparkFiles only there
        self.ref = KeyRef(name, key_id(key), None if connect else str(path))

    def close(self) -> None:
        """Remove the driver's copy (Spark removes its own copies when the application ends)."""
        self._dir.close()


def ship_file(spark, path: str) -> bool:
    """Distribute a local file to every worker (classic SparkContext.addFile, or Connect artifacts);
    True under Spark Connect."""
    try:
        sc = spark.sparkContext
    except Exception:  # noqa: BLE001 - Spark Connect has no SparkContext
        sc = None
    if sc is not None:
        sc.addFile(path)
        return False
    spark.addArtifacts(path, file=True)
    return True


def read_key(ref: KeyRef) -> bytes:
    """The key on a worker: the shipped file (SparkFiles), else the driver's path; fingerprint checked."""
    candidates = []
    try:
        from pyspark import SparkFiles

        candidates.append(SparkFiles.get(ref.file_name))
    except Exception:  # noqa: BLE001 - not inside Spark: only the driver's path can serve
        pass
    if ref.local_path:
        candidates.append(ref.local_path)
    for p in candidates:
        if os.path.isfile(p):
            key = Path(p).read_bytes()
            if key_id(key) != ref.key_id:
                raise KeyError_(f"shipped key file {ref.file_name}: fingerprint mismatch (expected key id {ref.key_id})")
            return key
    raise KeyError_(f"shipped key file {ref.file_name} is not available on this worker")
