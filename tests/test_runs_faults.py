"""A scheduled run killed after writing part of its rows (real SIGKILL of the driver), then re-run with its id.

The run is paused by the test-suite hook `[testing] pause_after_write = "notes"` once notes/ of
the run is written (spans/ and quarantine/ not yet), read by a reader at that moment, then killed:
readers never count it, and the re-run with the same run id commits exactly a clean run's rows.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deid_core.app.cli import main as deid_main
from deid_core.app.reader import read_committed
from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, ROOT
from tests.helpers_kill import job_env, kill_session, orphans
from tests.helpers_runs import (
    SORT,
    assert_committed_equal,
    committed_ids,
    paused_config,
    rows,
    start_paused,
    write_days,
)

pytestmark = pytest.mark.faults
OPTS = ["--name-columns", NAME_COLUMNS, "--demo-key", "--mode", "surrogate"]


def command(runner: str, inp: Path, out: Path, config: Path) -> list[str]:
    args = ["--input", str(inp), "--output", str(out), "--config", str(config), *OPTS, "--incremental",
            "--run-id", "d2"]
    if runner == "job":
        return [sys.executable, str(ROOT / "jobs" / "deidentify.py"), *args, "--partitions", "2",
                "--spark-log-level", "WARN"]
    return [sys.executable, "-m", "deid_core.app.cli", "tag", *args]


def committed_rows(out: Path) -> dict[str, list[dict]]:
    return {part: rows(read_committed(out, part), part, drop_run_id=False) for part in SORT}


@pytest.mark.parametrize("runner", ["tag", "job"])
def test_killed_run_is_never_read_and_its_rerun_equals_a_clean_run(tmp_path, runner):
    days = write_days(tmp_path / "in")
    out, env = tmp_path / "out", job_env(tmp_path, "local[2]")
    assert deid_main(["tag", "--input", str(days["day1"]), "--output", str(out), "--config", str(LITERAL_CONF),
                      *OPTS, "--run-id", "d1"]) == 0
    day1 = committed_rows(out)
    proc = start_paused(command(runner, days["both"], out, paused_config(tmp_path)), env)
    try:
        assert any((out / "notes" / "run_id=d2").rglob("*.parquet")) and not (out / "spans" / "run_id=d2").exists()
        assert committed_ids(out) == ["d1"]  # a reader while the run is half written
        assert committed_rows(out) == day1
    finally:
        kill_session(proc)
    assert committed_ids(out) == ["d1"] and committed_rows(out) == day1
    res = subprocess.run(command(runner, days["both"], out, LITERAL_CONF), env=env, capture_output=True, text=True,
                         timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    assert committed_ids(out) == ["d1", "d2"]
    assert deid_main(["tag", "--input", str(days["both"]), "--output", str(tmp_path / "ref"), "--config",
                      str(LITERAL_CONF), *OPTS]) == 0
    assert_committed_equal(out, tmp_path / "ref")
    history = read_committed(out, "notes", latest=False)["note_id"].to_pylist()
    assert len(history) == len(set(history))  # nothing twice, nothing lost (the equality above)
    assert not orphans(out, tmp_path / "scratch")
