"""Canaries: a planted fake name, and the secret key itself, must appear in no log line (Python and
py4j at DEBUG, Spark at TRACE), exception, manifest, audit row or output file of a job run with the
default pipeline. The key is looked for as text, hex, and inside every base64 run of the logs
(py4j logs pickled functions base64-encoded)."""

from __future__ import annotations

import base64
import os
import re
import secrets
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


_B64_RUN = re.compile(r"[A-Za-z0-9+/]{24,}={0,2}")


def key_in_base64(key: bytes, text: str) -> int:
    """How many base64 runs of `text` decode (at any of the 4 alignments) to bytes holding `key`."""
    hits = 0
    for m in _B64_RUN.finditer(text):
        run = m.group(0).rstrip("=")
        for off in range(4):
            part = run[off:]
            part = part[: len(part) // 4 * 4]
            try:
                if key in base64.b64decode(part):
                    hits += 1
                    break
            except ValueError:
                continue
    return hits


def test_key_in_base64_finds_a_pickled_key():
    key = secrets.token_hex(24).encode()
    for pad in (b"", b"x", b"xy"):
        blob = base64.b64encode(pad + b"pickled-prefix" + key + b"suffix").decode()
        assert key_in_base64(key, f"Command to send: {blob}\n") == 1
    assert key_in_base64(key, base64.b64encode(b"no key here at all, none").decode()) == 0


def test_canary_name_and_key_nowhere(tmp_path):
    inp = canary_input(tmp_path / "in.parquet")
    out = tmp_path / "out"
    key = secrets.token_hex(24).encode()
    key_file = tmp_path / "deid.key"
    key_file.write_bytes(key)
    # every log goes to this process's stdout/stderr: ours, py4j's and the JVM's (Spark's log4j
    # default console appender), Python workers' stderr included
    env = dict(os.environ, PYTHONPATH=str(ROOT), DEID_SPARK_MASTER="local[1]")
    res = subprocess.run([sys.executable, str(ROOT / "jobs" / "deidentify.py"), "--input", str(inp), "--output", str(out),
                          "--config", str(ROOT / "tests" / "data" / "fault.toml"), "--name-columns", NAME_COLUMNS,
                          "--key-file", str(key_file),
                          "--log-level", "DEBUG", "--spark-log-level", "TRACE", "--partitions", "2"],
                         env=env, capture_output=True, text=True, errors="replace", timeout=400)
    logs = res.stdout + res.stderr
    assert res.returncode == 0, logs[-3000:]
    spark_trace = [line for line in logs.splitlines() if re.match(r"\d\d/\d\d/\d\d \S+ TRACE ", line)]
    assert "DEBUG deid.job" in logs and "DEBUG py4j" in logs and len(spark_trace) > 20  # TRACE was really on
    assert "Command to send" in logs  # py4j logged its commands, pickled tagging function included
    produced = all_text_under(out)
    assert "'note_id': 'C-2-FAULTME'" in produced and "'note_id': 'C-1'" in produced  # canary notes went through
    for name in (FIRST, LAST):
        for where, text in (("logs", logs), ("outputs", produced)):
            hits = [line[:120] for line in text.splitlines() if name.lower() in line.lower()]
            assert not hits, f"{name!r} found in {where}: {len(hits)} line(s)"
    for where, text in (("logs", logs), ("outputs", produced)):
        assert key.decode() not in text and key.hex() not in text, f"the key found in {where}"
        assert key_in_base64(key, text) == 0, f"the key found base64-encoded in {where}"
