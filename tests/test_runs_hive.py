"""Table mode with a real embedded Hive metastore (Derby): incremental runs, retries, a killed run, a missing database.

The metastore lives in a temp warehouse; embedded Derby admits one JVM at a time, so everything
runs in two processes (tests/hive_driver.py): the first does the day-1/day-2/retry runs, then is
SIGKILLed while its last run is paused after writing notes; the second reads what is committed,
re-runs the killed run id and reads again. The reference rows come from `deid tag` (same rows).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from deid_core.app.cli import main as deid_main
from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, ROOT
from tests.helpers_kill import kill_session
from tests.helpers_runs import SORT, reference_rows, rows, start_paused, write_days

pytestmark = [pytest.mark.spark, pytest.mark.faults, pytest.mark.slow]


def _env(base: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), DEID_SPARK_MASTER="local[2]", TMPDIR=str(base / "scratch"),
                SPARK_LOCAL_DIRS=str(base / "scratch"))


@pytest.fixture(scope="module")
def hive(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("hive")
    (base / "scratch").mkdir()
    cmd = [sys.executable, "-m", "tests.hive_driver", str(base)]
    kill_session(start_paused([*cmd, "first"], _env(base), cwd=base))  # its last run paused after notes/
    res = subprocess.run([*cmd, "second"], cwd=base, env=_env(base), capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stderr[-4000:]
    days = write_days(base / "ref-in")
    opts = ["--config", str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key", "--mode", "surrogate"]
    for name in ("both", "day1"):
        assert deid_main(["tag", "--input", str(days[name]), "--output", str(base / f"ref-{name}"), *opts]) == 0
    return base


def dumped(base: Path, name: str, part: str, history: bool = False) -> list[dict]:
    return rows(pq.read_table(base / "dumps" / name / f"{part}{'-history' if history else ''}.parquet"), part,
                drop_run_id=False)


def facts(base: Path, name: str) -> dict:
    return json.loads((base / "dumps" / name / "facts.json").read_text())


def strip(rows_: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "run_id"} for r in rows_]


def test_missing_database_refused_before_any_spark_job(hive):
    f = facts(hive, "two_days")
    assert f["missing_db_exit"] == 2 and f["missing_db_jobs"] == 0


def test_incremental_tables_union_equals_one_run(hive):
    f = facts(hive, "two_days")
    assert (f["day1_exit"], f["day2_exit"]) == (0, 0)
    assert f["committed"] == ["2024-06-01", "2024-06-02"]
    for part in SORT:
        assert strip(dumped(hive, "two_days", part)) == reference_rows(hive / "ref-both", part), part
    assert f["manifests"][1]["selection"]["rows"] == {"new": 24, "already_committed": 32, "retried": 1}


def test_retried_run_id_replaces_its_partition_only(hive):
    f = facts(hive, "retried")
    assert f["retry_exit"] == 0 and f["committed"] == ["2024-06-01", "2024-06-02"]
    for part in SORT:
        before, after = dumped(hive, "two_days", part, True), dumped(hive, "retried", part, True)
        assert [r for r in after if r["run_id"] == "2024-06-01"] == [r for r in before if r["run_id"] == "2024-06-01"]
    d2 = [r["note_id"] for r in dumped(hive, "retried", "notes", True) if r["run_id"] == "2024-06-02"]
    assert len(d2) == 5 == len(set(d2)) and f["manifests"][1]["counts"]["notes"] == 5


def test_killed_run_never_counted_then_rerun_equals_a_clean_run(hive):
    killed = facts(hive, "killed")
    assert killed["committed"] == [] and killed["partitions"]["notes"] == ["k1"]  # rows written, never committed
    assert all(dumped(hive, "killed", part) == [] for part in SORT)
    rerun = facts(hive, "rerun")
    assert rerun["rerun_exit"] == 0 and rerun["committed"] == ["k1"]
    assert rerun["summary"].startswith("exit 0") and "committed runs: 1" in rerun["summary"], rerun["summary"]
    for part in SORT:
        assert strip(dumped(hive, "rerun", part, True)) == reference_rows(hive / "ref-day1", part), part
