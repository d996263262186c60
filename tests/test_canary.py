"""Canary: a planted fake name must appear in no log line (Python, py4j, Spark at DEBUG), exception,
manifest, audit row or output file of a job run with the default pipeline (rules + metadata matching)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from tests.helpers_job import NAME_COLUMNS, ROOT, SAMPLES

pytestmark = pytest.mark.spark
FIRST, LAST = "Thaddeus", "Vorhandlerquist"


def canary_input(path: Path) -> Path:
    table = pq.read_table(SAMPLES)
    base = {"patient_id": "PCANARY", "note_date": None, "patient_first_name": FIRST,
            "patient_last_name": LAST, "attending_name": f"{FIRST} {LAST}", "encounter_type": "canary"}
    rows = [
        dict(base, note_id="C-1", text=f"{FIRST} {LAST} seen today. Mr. {LAST} is 51. Dr. {FIRST} {LAST} signed."),
        dict(base, note_id="C-2-FAULTME", text=f"{LAST}, {FIRST}: this note makes the tagger raise."),
        dict(base, note_id="C-3", text=None),
    ]
    pq.write_table(pa.concat_tables([table, pa.Table.from_pylist(rows, schema=table.schema)]), path)
    return path


def all_text_under(out: Path) -> str:
    """Every value of every Parquet file and the raw text of every other file under `out`."""
    parts = []
    for f in sorted(p for p in out.rglob("*") if p.is_file()):
        if f.suffix == ".parquet":
            parts.append(repr(ds.dataset(str(f), format="parquet").to_table().to_pylist()))
        else:
            parts.append(f.read_bytes().decode("utf-8", "replace"))
    return "\n".join(parts)


def test_canary_name_nowhere(tmp_path):
    inp = canary_input(tmp_path / "in.parquet")
    out = tmp_path / "out"
    # every log goes to this process's stdout/stderr: ours, py4j's and the JVM's (Spark's log4j
    # default console appender), Python workers' stderr included
    env = dict(os.environ, PYTHONPATH=str(ROOT), DEID_SPARK_MASTER="local[1]")
    res = subprocess.run([sys.executable, str(ROOT / "jobs" / "deidentify.py"), "--input", str(inp), "--output", str(out),
                          "--config", str(ROOT / "tests" / "data" / "fault.toml"), "--name-columns", NAME_COLUMNS, "--demo-key",
                          "--log-level", "DEBUG", "--spark-log-level", "DEBUG", "--partitions", "2"],
                         env=env, capture_output=True, text=True, errors="replace", timeout=400)
    logs = res.stdout + res.stderr
    assert res.returncode == 0, logs[-3000:]
    spark_debug = [line for line in logs.splitlines() if re.match(r"\d\d/\d\d/\d\d \S+ DEBUG ", line)]
    assert "DEBUG deid.job" in logs and "DEBUG py4j" in logs and len(spark_debug) > 20  # DEBUG was really on
    produced = all_text_under(out)
    assert "'note_id': 'C-2-FAULTME'" in produced and "'note_id': 'C-1'" in produced  # canary notes went through
    for name in (FIRST, LAST):
        for where, text in (("logs", logs), ("outputs", produced)):
            hits = [line[:120] for line in text.splitlines() if name.lower() in line.lower()]
            assert not hits, f"{name!r} found in {where}: {len(hits)} line(s)"
