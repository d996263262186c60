"""Where a run's outputs live and how it commits them: files on this machine or any Hadoop URI.

`Files` does the few file operations a run needs (write a small text atomically, read, list,
remove), in plain Python for local paths and through the executor for URIs (HDFS, S3...) and,
under Spark Connect, for every path (udfs/files.py). `FramesStore` is the in-memory sink's (none).
`FolderStore` keeps a folder output's bookkeeping in both layouts (deid_core/app/runs.py):
which layout is there, which runs are committed, uncommit, sweep what killed runs left, commit.
The table-prefix store with the same methods is Spark's (udfs/runs.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import shutil
from pathlib import Path
from typing import Any, Protocol

from deid_core.app.manifest import MANIFEST_NAME
from deid_core.app.runs import RUN_COLUMN, RUNS, RUNS_DIR, SINGLE, RunPlan, parse_committed
from deid_core.config import ConfigError

log = logging.getLogger("deid.run")
TABLES = ("notes", "spans", "quarantine")
LOCK_NAME = ".deid-writer.lock"
EMPTY = "empty"


def is_local(path: str) -> bool:
    """A path on this machine's file system (no scheme, or file:)."""
    return "://" not in path or path.startswith("file:")


def local_path(path: str) -> Path:
    """The file-system path of a local path or file: URI."""
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            return Path(path[len(prefix):])
    return Path(path)


def join(base: str, *names: str) -> str:
    """base/name/... for paths and URIs alike."""
    return "/".join([base.rstrip("/"), *names])


def table_path(root: str, table: str, run_id: str | None = None) -> str:
    """A table's folder under an output folder, or its partition of one run (`notes/run_id=R`)."""
    return join(root, table, f"{RUN_COLUMN}={run_id}") if run_id else join(root, table)


class RemoteFiles(Protocol):
    """File operations on Hadoop file systems, done by an executor (udfs/plan.py)."""

    def write_remote_text(self, path: str, text: str) -> None: ...
    def read_remote_text(self, path: str) -> str | None: ...
    def read_remote_texts(self, folder: str, suffix: str) -> list[tuple[str, str]]: ...
    def remove_remote(self, path: str) -> None: ...
    def list_remote(self, folder: str) -> list[str]: ...
    def remote_files_available(self) -> bool: ...


class Files:
    """Local paths in plain Python; other URIs through the executor.

    local=False (Spark Connect): every path, with a scheme or not, is the server's, so all go through
    the executor.
    """

    def __init__(self, remote: RemoteFiles, local: bool = True) -> None:
        self.remote, self.local = remote, local

    def is_local(self, path: str) -> bool:
        """A path this process reaches in plain Python."""
        return self.local and is_local(path)

    def write_text(self, path: str, text: str) -> None:
        """Write a small text file; a reader sees the old file, no file, or the whole new one."""
        if not self.is_local(path):
            self.remote.write_remote_text(path, text)
            return
        p = local_path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        tmp = p.with_name(f".{p.name}.tmp")
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(p)

    def read_text(self, path: str) -> str | None:
        """A small text file's content, None if it does not exist."""
        if not self.is_local(path):
            return self.remote.read_remote_text(path)
        p = local_path(path)
        return p.read_text() if p.is_file() else None

    def read_texts(self, folder: str, suffix: str) -> list[tuple[str, str]]:
        """(name, text) of the files named *suffix in a folder, names starting with '.' left out."""
        if not self.is_local(folder):
            return [(n, t) for n, t in self.remote.read_remote_texts(folder, suffix) if not n.startswith(".")]
        p = local_path(folder)
        files = sorted(p.glob(f"*{suffix}")) if p.is_dir() else []
        return [(f.name, f.read_text()) for f in files if not f.name.startswith(".") and f.is_file()]

    def remove(self, path: str) -> None:
        """Remove a file or folder (missing is fine)."""
        if not self.is_local(path):
            self.remote.remove_remote(path)
            return
        p = local_path(path)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        elif p.exists() or p.is_symlink():
            p.unlink()

    def names(self, folder: str) -> list[str]:
        """The names in a folder ([] if it does not exist)."""
        if not self.is_local(folder):
            return [p.rstrip("/").rsplit("/", 1)[-1] for p in self.remote.list_remote(folder)]
        p = local_path(folder)
        return sorted(c.name for c in p.iterdir()) if p.is_dir() else []


class _NoRemote:
    def __getattr__(self, name: str) -> Any:
        raise ValueError("not a local path: reading or writing URIs needs an executor (udfs/files.py on Spark)")


def local_files() -> Files:
    """File operations on local paths only (URIs refused with one line)."""
    return Files(_NoRemote())  # type: ignore[arg-type]


class FolderStore:
    """The bookkeeping of a folder output (notes/, spans/, quarantine/, _runs/, _manifest.json)."""

    def __init__(self, path: str, files: Files, where: str) -> None:
        self.path, self.files, self.where = path.rstrip("/"), files, where
        self._lock: int | None = None

    def layout(self) -> str:
        """What the folder holds: RUNS (has _runs/), SINGLE (a manifest or unpartitioned rows), or EMPTY."""
        top = self.files.names(self.path)
        if RUNS_DIR in top:
            return RUNS
        if MANIFEST_NAME in top:
            return SINGLE
        for table in TABLES:
            if table in top and any(not _hidden(n) and not n.startswith(f"{RUN_COLUMN}=")
                                    for n in self.files.names(join(self.path, table))):
                return SINGLE
        return EMPTY

    def check(self, plan: RunPlan) -> None:
        """Refuse a layout the run cannot join (before any work); take the writer lock of a local folder."""
        if not self.files.is_local(self.path) and plan.partitioned and not self.files.remote.remote_files_available():
            raise ConfigError(f"{self.where}: scheduled runs into a non-local folder need file-system access "
                              "(classic Spark, not Spark Connect); use a local folder or --output-table-prefix")
        self.check_layout(plan)
        if self.files.is_local(self.path) and local_path(self.path).is_dir():
            self._take_lock()  # a new folder is made and locked when work starts (uncommit)

    def check_layout(self, plan: RunPlan) -> None:
        """Refuse to add runs to a single-run folder, or a single run to a folder of runs."""
        found = self.layout()
        if found == RUNS and not plan.partitioned:
            raise ConfigError(f"{self.where} holds scheduled runs ({RUNS_DIR}/): pass --run-id ID or --incremental "
                              "to add or redo a run, or choose another folder")
        if found == SINGLE and plan.partitioned:
            raise ConfigError(f"{self.where} holds a single-run output (no run ids): scheduled runs need a folder "
                              "of their own; choose a new one, or remove it")

    def _take_lock(self) -> None:
        if self._lock is not None:
            return
        folder = local_path(self.path)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise ConfigError(f"{self.where}: another run is writing it (a live process holds {LOCK_NAME}); "
                              "runs of one output go one at a time") from None
        self._lock = fd

    def release(self) -> None:
        """Drop the writer lock (the kernel drops it too when the process dies)."""
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.close(self._lock)
            self._lock = None

    def committed(self) -> list[dict[str, Any]]:
        """The committed runs' manifests, oldest commit first ([] for a single-run folder)."""
        return parse_committed(self.files.read_texts(join(self.path, RUNS_DIR), ".json"))

    def uncommit(self, plan: RunPlan) -> None:
        """Before any write: the run's previous commit stops counting (its manifest goes first)."""
        if self.files.is_local(self.path):
            self._take_lock()
        latest = join(self.path, MANIFEST_NAME)
        if plan.partitioned:
            self.files.remove(join(self.path, RUNS_DIR, f"{plan.run_id}.json"))
            if _run_of(self.files.read_text(latest)) == plan.run_id:
                self.files.remove(latest)
        else:
            self.files.remove(latest)

    def sweep(self, keep: set[str]) -> int:
        """Remove the partitions of runs that are not committed (left by killed runs, or this run's old rows)."""
        removed = 0
        for table in TABLES:
            for name in self.files.names(join(self.path, table)):
                if name.startswith(f"{RUN_COLUMN}=") and name.split("=", 1)[1] not in keep:
                    self.files.remove(join(self.path, table, name))
                    removed += 1
        for name in self.files.names(join(self.path, RUNS_DIR)):
            if name.startswith("."):  # a manifest write cut short
                self.files.remove(join(self.path, RUNS_DIR, name))
        if removed:
            log.warning("removed %d partition(s) of runs that never committed", removed)
        return removed

    def table_path(self, table: str, run_id: str | None) -> str:
        """Where one table's rows of a run go (the whole table in the single layout)."""
        return table_path(self.path, table, run_id)

    def commit(self, plan: RunPlan, text: str) -> None:
        """The commit point: the run's manifest, written last (then the folder's latest-run copy)."""
        if plan.partitioned:
            self.files.write_text(join(self.path, RUNS_DIR, f"{plan.run_id}.json"), text)
        self.files.write_text(join(self.path, MANIFEST_NAME), text)


def _run_of(text: str | None) -> str | None:
    try:
        return json.loads(text).get(RUN_COLUMN) if text else None
    except (ValueError, AttributeError):
        return None


def _hidden(name: str) -> bool:
    return name.startswith((".", "_"))


class FramesStore:
    """The bookkeeping of an in-memory sink (the library API's returned frames): nothing is kept."""

    def check(self, plan: RunPlan) -> None:
        """Scheduled runs need an output that keeps them: refused before any work."""
        if plan.partitioned:
            raise ConfigError("run ids and incremental runs need an output that keeps them (--output or "
                              "--output-table-prefix), not returned frames")

    def committed(self) -> list[dict[str, Any]]:
        """No run is kept."""
        return []

    def uncommit(self, plan: RunPlan) -> None:
        """Nothing to uncommit."""

    def sweep(self, keep: set[str]) -> int:
        """Nothing to sweep."""
        return 0

    def commit(self, plan: RunPlan, text: str) -> None:
        """The manifest goes back with the frames; nothing is written."""

    def release(self) -> None:
        """Nothing held."""
