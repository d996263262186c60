"""Helpers for the job tests: edge-case inputs, reading outputs, the shared contract checker."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples" / "notes.parquet"
LITERAL_CONF = ROOT / "tests" / "data" / "literal.toml"
NAME_COLUMNS = "patient_first_name,patient_last_name,attending_name:DOCTOR"
CHECKER = ROOT.parent / "shared" / "tools" / "check_outputs.py"
FAULT_MARKER = "FAULTME"


def edge_rows() -> list[dict]:
    """Rows that exercise every defined bad-input case (all text invented here)."""
    base = {"patient_first_name": "Zebulon", "patient_last_name": "Quackenbush",
            "attending_name": "Ottoline Ferrars", "encounter_type": "edge", "note_date": dt.date(2024, 2, 3)}
    return [
        dict(base, note_id="E-null", patient_id="PE1", text=None),
        dict(base, note_id="E-empty", patient_id="PE1", text=""),
        dict(base, note_id="E-space", patient_id="PE1", text="  \n\t "),
        dict(base, note_id="E-ctrl", patient_id="PE2", text="Zebulon\x00 seen\x07 on 2/3/2024\x1b[0m ok\r\n"),
        dict(base, note_id="E-dup", patient_id="PE2", text="first copy: Zebulon Quackenbush"),
        dict(base, note_id="E-dup", patient_id="PE3", text="second copy: Zebulon Quackenbush"),
        dict(base, note_id="E-dup", patient_id="PE2", text="third copy: Zebulon Quackenbush"),
        dict(base, note_id=f"E-{FAULT_MARKER}", patient_id="PE3", text="Quackenbush raises here"),
        dict(base, note_id="E-nopatient", patient_id=None, text="Dr. Ottoline Ferrars called."),
    ]


def write_edge_input(path: Path, big_chars: int = 0) -> Path:
    """samples/notes.parquet plus the edge rows (and one note of `big_chars` characters if > 0)."""
    table = pq.read_table(SAMPLES)
    rows = edge_rows()
    if big_chars:
        head = "Zebulon Quackenbush was seen on 2/3/2024 for follow up. \x0c\n"
        unit = "Vitals stable overnight, tolerating diet, continue current plan.\n"
        body = (unit * (big_chars // len(unit) + 1))[: big_chars - 2 * len(head)]
        rows.append(dict(rows[1], note_id="E-big", text=head + body + head))
    extra = pa.Table.from_pylist(rows, schema=table.schema)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.concat_tables([table, extra]), path)
    return path


def read_rows(path: Path, sort: tuple[str, ...] = ("note_id",)) -> list[dict]:
    """All rows of an output folder, sorted (file layout independent)."""
    if not any(path.rglob("*.parquet")):
        return []
    rows = ds.dataset(str(path), format="parquet").to_table().to_pylist()
    return sorted(rows, key=lambda r: tuple((r[k] is None, r[k]) for k in sort))


def check_outputs(notes: Path, out: Path, name_columns: str = NAME_COLUMNS) -> str:
    """Run the shared contract checker; returns its output (asserts it passed)."""
    if not CHECKER.is_file():
        import pytest

        pytest.skip(f"shared checker not found at {CHECKER}")
    res = subprocess.run([sys.executable, str(CHECKER), str(notes), str(out), "--name-columns", name_columns],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


INVALID_UTF8 = {  # note_id -> (column, bytes): each row's one value that is not valid UTF-8
    "U-text": ("text", b"Zebulon seen \xff\xfe today"),
    "U-surrogate": ("text", b"lone surrogate \xed\xa0\x80 Quackenbush"),
    "U-pid": ("patient_id", b"PU\xc3"),
    "U-name": ("patient_first_name", b"Zeb\x80ulon"),
}


def write_invalid_utf8_input(path: Path, bad_note_id: bool = False) -> Path:
    """samples/notes.parquet plus rows holding invalid UTF-8 (Parquet strings that are not UTF-8)."""
    table = pq.read_table(SAMPLES)
    base = dict(edge_rows()[4], patient_id="PU1")
    rows = [dict(base, note_id=nid, **{col: value}) for nid, (col, value) in INVALID_UTF8.items()]
    if bad_note_id:
        rows.append(dict(base, note_id=b"U-\xffid", text="fine text"))
    cols = {}
    for f in table.schema:
        if pa.types.is_string(f.type):
            raw = [v if isinstance(v, bytes) or v is None else str(v).encode() for v in (r[f.name] for r in rows)]
            cols[f.name] = pa.array(raw, pa.binary()).view(pa.string())  # no UTF-8 check: bytes as given
        else:
            cols[f.name] = pa.array([r[f.name] for r in rows], f.type)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.concat_tables([table, pa.table(cols, schema=table.schema)]), path)
    return path
