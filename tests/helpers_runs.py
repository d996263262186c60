"""Helpers for the scheduled-run tests: inputs that arrive over two days, committed rows, comparisons."""

from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deid_core.app.reader import committed_runs, read_committed
from tests.helpers_job import LITERAL_CONF, SAMPLES, edge_rows, read_rows

SORT = {"notes": ("note_id",), "spans": ("note_id", "start"), "quarantine": ("note_id", "patient_id", "error_class")}
PAUSED = "[testing] pause_after_write: paused after writing notes"
LOADED = {1: dt.datetime(2024, 6, 1, 2, 0, tzinfo=dt.UTC), 2: dt.datetime(2024, 6, 2, 2, 0, tzinfo=dt.UTC)}


def day_tables() -> dict[int, pa.Table]:
    """The sample notes and the edge rows as two days of arrivals, with a `loaded_at` timestamp.

    Day 1: the notes of half of the sample patients and every edge row (null text, a duplicate id
    three times, a note that fails in the tag stage...); day 2: the other patients' notes. A
    patient's notes arrive in one run: cross-note propagation (a name found in one of a patient's
    notes is replaced in the others, part by part) sees the notes of its run only, so the union of
    runs equals one run when each patient's notes of a stay arrive together (docs/etl.md).
    """
    table = pq.read_table(SAMPLES)
    edge = pa.Table.from_pylist(edge_rows(), schema=table.schema)
    patients = sorted(set(table.column("patient_id").to_pylist()))
    first = pa.array(patients[: len(patients) // 2])
    on_day1 = pc.is_in(table.column("patient_id"), value_set=first)
    days = {1: pa.concat_tables([table.filter(on_day1), edge]), 2: table.filter(pc.invert(on_day1))}
    ts = pa.timestamp("us", tz="UTC")
    return {d: t.append_column("loaded_at", pa.array([LOADED[d]] * t.num_rows, ts)) for d, t in days.items()}


def write_days(base: Path) -> dict[str, Path]:
    """day1.parquet, day2.parquet and both.parquet (what a growing source table holds after day 2)."""
    base.mkdir(parents=True, exist_ok=True)
    days = day_tables()
    paths = {"day1": base / "day1.parquet", "day2": base / "day2.parquet", "both": base / "both.parquet"}
    pq.write_table(days[1], paths["day1"])
    pq.write_table(days[2], paths["day2"])
    pq.write_table(pa.concat_tables([days[1], days[2]]), paths["both"])
    return paths


def _instant(value):
    """Spark writes timestamps as INT96, which pyarrow reads as naive UTC: compare instants."""
    if hasattr(value, "to_pydatetime"):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime) and value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC) if isinstance(value, dt.datetime) else value


def rows(table: pa.Table, part: str, drop_run_id: bool = True) -> list[dict]:
    """Rows of an output table, sorted, without run_id (compared with a single run's)."""
    out = [{k: _instant(v) for k, v in r.items() if not (drop_run_id and k == "run_id")} for r in table.to_pylist()]
    return sorted(out, key=lambda r: tuple((r[k] is None, r[k]) for k in SORT[part]))


def reference_rows(folder: Path, part: str) -> list[dict]:
    """A single run's rows of one table, sorted, timestamps as instants."""
    return [{k: _instant(v) for k, v in r.items()} for r in read_rows(folder / part, SORT[part])]


def assert_committed_equal(out: Path, reference: Path) -> None:
    """The committed rows (each note from its latest run) equal a single run's rows, table for table."""
    for part in SORT:
        got = rows(read_committed(out, part), part)
        want = reference_rows(reference, part)
        assert got == want, part


def committed_ids(out: Path) -> list[str]:
    """The committed run ids, oldest commit first."""
    return [m["run_id"] for m in committed_runs(out)]


def paused_config(base: Path) -> Path:
    """The tests' config with the hook that makes a run sleep once its notes/ rows are written."""
    path = base / "pause.toml"
    path.write_text(LITERAL_CONF.read_text().replace("[testing]\n", '[testing]\npause_after_write = "notes"\n'))
    return path


def start_paused(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen:
    """Start a run in its own session; return once it says it paused after writing notes/."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    tail: list[str] = []
    for line in proc.stderr:
        tail = (tail + [line])[-40:]
        if PAUSED in line:
            return proc
    proc.wait(timeout=60)
    raise AssertionError("the run ended before the pause:\n" + "".join(tail))


