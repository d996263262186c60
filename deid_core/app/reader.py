"""Read an output folder as its readers should: committed runs only (pyarrow, no Spark).

    from deid_core.app.reader import committed_runs, read_committed
    runs = committed_runs("out/")              # manifests of the committed runs, oldest commit first
    notes = read_committed("out/", "notes")    # rows of committed runs, each note from its latest run

A single-run folder (no run ids) reads as one run when its _manifest.json is there, as nothing
otherwise. In a folder of runs, rows of a run without `_runs/<run_id>.json` (running, or killed)
are never read. A note can be in several runs (a quarantined note retried later, or an input
given twice): `latest=True` keeps, for each note_id, the rows of the last committed run that holds
it (in notes/ or quarantine/), so every note is in exactly one of notes/ and quarantine/;
`latest=False` returns every committed row (the history). The Spark recipe is udfs/runs.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from deid_core.app.manifest import MANIFEST_NAME
from deid_core.app.runs import RUN_COLUMN, RUNS, STATE_DONE, quarantine_state
from deid_core.app.store import TABLES, FolderStore, local_files, table_path
from deid_core.io.tables import AUDIT_SCHEMA, QUARANTINE_SCHEMA

_SCHEMAS = {"spans": AUDIT_SCHEMA, "quarantine": QUARANTINE_SCHEMA}


def _store(out: str | Path) -> FolderStore:
    return FolderStore(str(out), local_files(), str(out))


def committed_runs(out: str | Path) -> list[dict[str, Any]]:
    """Manifests of the committed runs, oldest commit first (a single-run folder: its manifest, if committed)."""
    store = _store(out)
    if store.layout() == RUNS:
        return store.committed()
    mf = Path(out) / MANIFEST_NAME
    return [json.loads(mf.read_text())] if mf.is_file() else []


def _read_folder(path: Path, columns: Sequence[str] | None) -> pa.Table | None:
    if not any(path.rglob("*.parquet")):
        return None
    return ds.dataset(str(path), format="parquet").to_table(columns=list(columns) if columns else None)


def read_runs(out: str | Path, table: str, run_ids: Sequence[str],
              columns: Sequence[str] | None = None) -> pa.Table:
    """Every row of `table` in the given runs' partitions, with a run_id column (no commit check)."""
    parts = []
    for rid in run_ids:
        t = _read_folder(Path(table_path(str(out), table, rid)), columns)
        if t is not None:
            parts.append(t.append_column(RUN_COLUMN, pa.array([rid] * t.num_rows, pa.string())))
    if not parts:
        return _empty(table, columns)
    # Runs written by different executors may store a type differently (Spark: INT96 timestamps,
    # read as naive ns; pyarrow: us with its zone): read every run as the last one's types.
    target = parts[-1].schema
    return pa.concat_tables([p if p.schema == target else p.select(target.names).cast(target) for p in parts])


def _empty(table: str, columns: Sequence[str] | None) -> pa.Table:
    schema = _SCHEMAS.get(table, pa.schema([("note_id", pa.string()), ("patient_id", pa.string())]))
    fields = [schema.field(c) if c in schema.names else pa.field(c, pa.string()) for c in (columns or schema.names)]
    return pa.schema([*fields, pa.field(RUN_COLUMN, pa.string())]).empty_table()


def read_committed(out: str | Path, table: str, *, latest: bool = True,
                   columns: Sequence[str] | None = None) -> pa.Table:
    """The rows of committed runs of `table` (notes, spans or quarantine); see the module docstring."""
    if table not in TABLES:
        raise ValueError(f"{table!r}: one of {', '.join(TABLES)}")
    runs = committed_runs(out)
    if _store(out).layout() != RUNS:
        rows = _read_folder(Path(out) / table, columns) if runs else None
        return rows if rows is not None else _empty(table, columns).drop_columns([RUN_COLUMN])
    ids = [str(m[RUN_COLUMN]) for m in runs]
    rows = read_runs(out, table, ids, columns if columns is None or "note_id" in columns else [*columns, "note_id"])
    if not latest or rows.num_rows == 0:
        return rows.select([*columns, RUN_COLUMN]) if columns else rows
    rank = {rid: i for i, rid in enumerate(ids)}
    heard = pa.concat_tables([read_runs(out, t, ids, ["note_id"]) for t in ("notes", "quarantine")])
    winner = _latest_run(heard, rank)
    keyed = rows.append_column("_rank", pa.array([rank[r] for r in rows[RUN_COLUMN].to_pylist()], pa.int64()))
    kept = keyed.join(winner, ["note_id", "_rank"], join_type="left semi").drop_columns(["_rank"])
    return kept.select([*columns, RUN_COLUMN]) if columns else kept


def _latest_run(heard: pa.Table, rank: dict[str, int]) -> pa.Table:
    """(note_id, _rank) of the last committed run that holds each note."""
    ranks = pa.array([rank[r] for r in heard[RUN_COLUMN].to_pylist()], pa.int64())
    t = pa.table({"note_id": heard["note_id"], "_rank": ranks})
    return t.group_by("note_id", use_threads=False).aggregate([("_rank", "max")]).rename_columns(["note_id", "_rank"])


def committed_state(out: str | Path, run_ids: Sequence[str], retry_stages: Sequence[str]) -> pa.Table:
    """(note_id, state) over the given committed runs: runs.STATE_DONE / STATE_RETRY / STATE_NONE per note."""
    notes = read_runs(out, "notes", run_ids, ["note_id"])
    q = read_runs(out, "quarantine", run_ids, ["note_id", "stage", "error_class"])
    codes = [quarantine_state(s, c, retry_stages) for s, c in zip(q["stage"].to_pylist(),
                                                                   q["error_class"].to_pylist(), strict=True)]
    both = pa.table({"note_id": pc.cast(pa.concat_arrays([notes["note_id"].combine_chunks().cast(pa.string()),
                                                          q["note_id"].combine_chunks().cast(pa.string())]),
                                        pa.string()),
                     "state": pa.array([STATE_DONE] * notes.num_rows + codes, pa.int8())})
    return both.group_by("note_id", use_threads=False).aggregate([("state", "max")]).rename_columns(
        ["note_id", "state"])


def summary_runs(runs: Sequence[dict[str, Any]]) -> list[str]:
    """One line per committed run (counts only), oldest commit first."""
    lines = []
    for m in runs:
        c, sel = m.get("counts", {}), m.get("selection") or {}
        lines.append(f"run {m.get(RUN_COLUMN)}  committed {str(m.get('committed_at', ''))[:19]}  "
                     f"selected {sel.get('selected_rows', c.get('input_rows', 0))} of {sel.get('read_rows', '?')}  "
                     f"notes {c.get('notes', 0)}  quarantined {c.get('quarantined', 0)}  spans {c.get('spans', 0)}")
    return lines
