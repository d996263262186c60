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
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, ROOT, SAMPLES, read_rows
from tests.helpers_kill import busy_python_worker, job_env, kill_session, orphans

pytestmark = pytest.mark.faults
SORT = {"notes": ("note_id",), "spans": ("note_id", "start"), "quarantine": ("note_id", "patient_id")}


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
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    kill_session(proc)
    assert not (out / "_manifest.json").exists()  # the killed run never committed
    left = orphans(out, tmp_path / "scratch")
    assert any("staging-" in p for p in left) and any("deid-key-" in p for p in left), left
    res = subprocess.run(job_command(inp, out), env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert_same_outputs(out, ref)
    assert not orphans(out, tmp_path / "scratch")
