"""Processes of one job session, found in /proc and killed for real (SIGKILL): the fault tests' tools."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.helpers_job import ROOT

ORPHANS = ("staging-*", "deid-bundle-*", "deid-key-*")


def job_env(tmp: Path, master: str) -> dict[str, str]:
    """The job's environment: master `master`, Spark's and Python's temp dirs inside the test's folder."""
    scratch = tmp / "scratch"
    scratch.mkdir(exist_ok=True)
    return dict(os.environ, PYTHONPATH=str(ROOT), DEID_SPARK_MASTER=master, TMPDIR=str(scratch),
                SPARK_LOCAL_DIRS=str(scratch))


def orphans(*folders: Path) -> list[str]:
    """Staging folders, unpacked bundles and key files left under `folders`."""
    return sorted(str(p) for f in folders for pattern in ORPHANS for p in f.rglob(pattern))


def _stat(pid: int) -> tuple[int, int, float] | None:
    """(parent pid, session id, CPU seconds) of a live process, None if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[3]), (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def session_processes(sid: int) -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every live process in session `sid` (ours only)."""
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            st = _stat(int(d.name))
            if st and st[1] == sid:
                try:
                    cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                out[int(d.name)] = (st[0], cmd)
    return out


def busy_python_worker(sid: int, timeout: float = 300.0) -> int:
    """A forked PySpark worker of session `sid` that is burning CPU (tagging), waited for."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        procs = session_processes(sid)
        daemons = {p for p, (_, cmd) in procs.items() if "pyspark.daemon" in cmd}
        for pid, (ppid, _) in procs.items():
            st = _stat(pid)
            if ppid in daemons and st and st[2] >= 1.0:
                return pid
        time.sleep(0.2)
    raise AssertionError("no Python worker got busy in time")


def wait_session_gone(sid: int, timeout: float = 120.0) -> None:
    """Wait until every process of the session has exited (the JVM and workers follow the driver)."""
    deadline = time.monotonic() + timeout
    while session_processes(sid) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = session_processes(sid)
    for pid in left:  # only processes of the session this test started
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes still alive {timeout:.0f} s after the driver was killed: {sorted(left)}"



def kill_session(proc: subprocess.Popen) -> None:
    """SIGKILL the driver, then wait until its whole session (JVM, Python workers) is gone."""
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        wait_session_gone(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
