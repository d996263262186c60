"""Canary: a planted fake name must appear in no log line (Python, py4j, Spark at DEBUG), exception,
manifest, audit row or output file of a job run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from tests.helpers_job import LITERAL_CONF, NAME_COLUMNS, ROOT, SAMPLES

pytestmark = pytest.mark.spark
FIRST, LAST = "Thaddeus", "Vorhandlerquist"
LOG4J = """\
rootLogger.level = debug
rootLogger.appenderRef.console.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d %p %c: %m%n
"""


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
    (tmp_path / "log4j2.properties").write_text(LOG4J)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT), DEID_SPARK_MASTER="local[1]",
               PYSPARK_SUBMIT_ARGS=f"--driver-java-options -Dlog4j2.configurationFile=file:{tmp_path}/log4j2.properties "
                                   "--conf spark.ui.enabled=false pyspark-shell")
    res = subprocess.run([sys.executable, str(ROOT / "jobs" / "deidentify.py"), "--input", str(inp), "--output", str(out),
                          "--config", str(LITERAL_CONF), "--name-columns", NAME_COLUMNS, "--demo-key",
                          "--log-level", "DEBUG", "--partitions", "2"],
                         env=env, capture_output=True, text=True, errors="replace", timeout=400)
    logs = res.stdout + res.stderr
    assert res.returncode == 0, logs[-3000:]
    assert "DEBUG deid.job" in logs and "DEBUG org.apache.spark" in logs  # DEBUG logging was really on
    produced = all_text_under(out)
    assert "C-2-FAULTME" in produced and "seen today. Mr. [**PATIENT**] is 51" in produced  # the canary notes went through
    for name in (FIRST, LAST):
        for where, text in (("logs", logs), ("outputs", produced)):
            hits = [line[:120] for line in text.splitlines() if name.lower() in line.lower()]
            assert not hits, f"{name!r} found in {where}: {len(hits)} line(s)"
