"""Private temporary folders that never outlive their process for long (unpacked bundles, key files).

A folder made by `OwnedDir` holds a lock file that its process keeps locked (flock) until
`close()`. The lock is released by the kernel when the process dies, even by SIGKILL, so the
next `OwnedDir` with the same prefix removes every folder whose lock it can take: folders left
by killed processes are cleaned up by the next run, and a live process's folder never is
(whatever PID namespace it runs in, as long as the file system is shared and local).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

LOCK_NAME = ".owner.lock"
UNLOCKED_GRACE_S = 3600.0  # a folder without a lock file (being created, or from an old version)


def _held_by_someone(lock: Path) -> bool:
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock we may have taken
    return False


def sweep_orphans(prefix: str, parent: str | Path | None = None) -> int:
    """Remove folders `parent/prefix*` whose owner died; how many were removed."""
    base = Path(parent or tempfile.gettempdir())
    removed = 0
    for d in base.glob(f"{prefix}*"):
        if not d.is_dir() or d.is_symlink():
            continue
        lock = d / LOCK_NAME
        if lock.exists():
            if _held_by_someone(lock):
                continue
        else:
            try:
                if time.time() - d.stat().st_mtime < UNLOCKED_GRACE_S:
                    continue
            except OSError:
                continue
        shutil.rmtree(d, ignore_errors=True)
        removed += 1
    return removed


class OwnedDir:
    """A new private folder `prefix<random>` under `parent` (default: the temp dir), locked by this process."""

    def __init__(self, prefix: str, parent: str | Path | None = None) -> None:
        sweep_orphans(prefix, parent)
        self.path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        self._fd: int | None = os.open(self.path / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)

    def close(self) -> None:
        """Remove the folder and release the lock (idempotent)."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __enter__(self) -> OwnedDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
