"""Real faults, real kills: a Python worker and the driver are SIGKILLed in the middle of a job.

(a) A Python worker killed mid-task with task retries enabled (master local[2,3]): Spark retries
the task and the outputs equal those of a clean run. (b) The driver killed mid-run: re-running
the same command gives the clean result and leaves no staging folder, no unpacked bundle and no
key file behind (Spark's own temp dirs included: SPARK_LOCAL_DIRS and TMPDIR point into the test's
folder). Each job runs as `python jobs/deidentify.py` in its own session, so the processes found
and killed are only the ones this test started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, ROOT, SAMPLES, read_rows

pytestmark = pytest.mark.faults
SORT = {"notes": ("note_id",), "spans": ("note_id", "start"), "quarantine": ("note_id", "patient_id")}
ORPHANS = ("staging-*", "deid-bundle-*", "deid-key-*")


def slow_input(path: Path, big_notes: int = 3, chars: int = 500_000) -> Path:
    """The sample notes plus a few long notes of separate patients: each task tags for seconds."""
    table = pq.read_table(SAMPLES)
    row = table.slice(0, 1).to_pylist()[0]
    unit = f"{row['patient_first_name']} {row['patient_last_name']} seen on 2/3/2024, stable, plan unchanged.\n"
    rows = [dict(row, note_id=f"BIG-{i}", patient_id=f"PBIG{i}", text=unit * (chars // len(unit)))
            for i in range(big_notes)]
    pq.write_table(pa.concat_tables([table, pa.Table.from_pylist(rows, schema=table.schema)]), path)
    return path


def job_command(inp: Path, out: Path) -> list[str]:
    return [sys.executable, str(ROOT / "jobs" / "deidentify.py"), "--input", str(inp), "--output", str(out),
            "--config", str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key", "--partitions", "2",
            "--spark-log-level", "WARN"]


def job_env(tmp: Path, master: str) -> dict[str, str]:
    scratch = tmp / "scratch"
    scratch.mkdir(exist_ok=True)
    return dict(os.environ, PYTHONPATH=str(ROOT), DEID_SPARK_MASTER=master, TMPDIR=str(scratch),
                SPARK_LOCAL_DIRS=str(scratch))


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


def reference(inp: Path, out: Path) -> None:
    """The clean result, from `deid tag` (the same rows as the job: tests/test_job_spark.py)."""
    assert deid_main(["tag", "--input", str(inp), "--output", str(out), "--config", str(LITERAL_CONF),
                      "--name-columns", NAME_COLUMNS, "--demo-key"]) == 0


def assert_same_outputs(out: Path, ref: Path) -> None:
    """Same rows as the clean run, and the same counts (read from the staged data: a retry adds nothing)."""
    for part, keys in SORT.items():
        assert read_rows(out / part, keys) == read_rows(ref / part, keys), part
    job, clean = (json.loads((p / "_manifest.json").read_text())["counts"] for p in (out, ref))
    for k in ("input_rows", "tagged", "notes", "quarantined", "spans", "spans_by_label"):
        assert job[k] == clean[k], k


def orphans(*folders: Path) -> list[str]:
    return sorted(str(p) for f in folders for pattern in ORPHANS for p in f.rglob(pattern))


@pytest.fixture(scope="module")
def slow(tmp_path_factory) -> tuple[Path, Path]:
    """(input, clean result): the slow input and its `deid tag` output, shared by both kill tests (read only)."""
    base = tmp_path_factory.mktemp("faults")
    inp = slow_input(base / "in.parquet")
    reference(inp, base / "ref")
    return inp, base / "ref"


def test_worker_killed_mid_task_is_retried(tmp_path, slow):
    inp, ref = slow
    proc = subprocess.Popen(job_command(inp, tmp_path / "out"), env=job_env(tmp_path, "local[2,3]"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        victim = busy_python_worker(proc.pid)
        os.kill(victim, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, stderr[-3000:]
    assert "Lost task" in stderr or "Python worker exited unexpectedly" in stderr, "the kill hit no task"
    assert_same_outputs(tmp_path / "out", ref)
    assert not orphans(tmp_path / "out", tmp_path / "scratch")


def test_driver_killed_mid_run_then_rerun_is_clean(tmp_path, slow):
    inp, ref = slow
    out, env = tmp_path / "out", job_env(tmp_path, "local[2]")
    proc = subprocess.Popen(job_command(inp, out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        busy_python_worker(proc.pid)
        assert list(out.glob("staging-*")), "the kill must land while the staging result is being written"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        wait_session_gone(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert not (out / "_manifest.json").exists()  # the killed run never committed
    left = orphans(out, tmp_path / "scratch")
    assert any("staging-" in p for p in left) and any("deid-key-" in p for p in left), left
    res = subprocess.run(job_command(inp, out), env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert_same_outputs(out, ref)
    assert not orphans(out, tmp_path / "scratch")
