"""Scheduled runs: run ids, the two output layouts, and incremental selection, for both executors.

Layouts of one output (a folder or a table prefix):
- single (no --run-id, no --incremental): notes/, spans/, quarantine/ replaced whole; the run
  commits by writing _manifest.json (or appending a PREFIXmanifest row) last. DESIGN.md §4's
  original form, unchanged.
- runs: the three tables are partitioned by `run_id` (notes/run_id=R/...). A run replaces only
  its own partition and commits by writing its manifest last: `_runs/R.json` (then a copy as
  _manifest.json, the last committed run's), or the PREFIXmanifest partition run_id=R. Readers
  count committed runs only (deid_core.app.reader, udfs/runs.py); a re-run of R first removes R's
  manifest, so a killed re-run leaves R uncommitted, never half-replaced.
Selection (what a run takes from its input) is stated here once; each executor applies it on
its engine (policies.py works the same way). No PHI: marks come from columns that pass through
to notes/ anyway (never text, note_date or a name column).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from deid_core.app.options import RunOptions
from deid_core.app.policies import DUPLICATE
from deid_core.app.schema import BatchSpec, InputSchemaError
from deid_core.config import ConfigError

RUN_COLUMN = "run_id"
RUNS_DIR = "_runs"
SINGLE, RUNS = "single", "runs"
# What a run selects: every input row, rows whose note_id no committed run holds, rows past the mark.
ALL, NEW, SINCE = "all", "new", "since"
# Why an input row was or was not selected (the manifest's selection.rows keys).
TAKEN_NEW = "new"  # no committed run holds its note_id (or, in SINCE mode, it is past the mark)
TAKEN_RETRY = "retried"  # its latest state is quarantine at a retried stage
SKIP_DONE = "already_committed"  # in notes/ of a committed run, or quarantined at a stage not retried
SKIP_OLD = "at_or_before_mark"  # SINCE: its column is not past the high-water mark
SKIP_NULL = "null_mark_column"  # SINCE: its column is null (selected by the first run only)
SELECTED = (TAKEN_NEW, TAKEN_RETRY)
RUN_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")  # safe as a folder, a partition value, an SQL literal
_MARK_TYPES = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal, pa.types.is_date,
               pa.types.is_timestamp, pa.types.is_string, pa.types.is_large_string)


def default_run_id(started: dt.datetime) -> str:
    """The run id when none is given: the UTC start time to the second, e.g. 20240601T020000Z."""
    return started.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def check_run_id(run_id: str) -> str:
    """A run id usable as a folder name, partition value and SQL literal (else ConfigError)."""
    if not RUN_ID_RE.fullmatch(run_id):
        raise ConfigError(f"--run-id {run_id!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a "
                          "letter or digit (e.g. a scheduler's logical date, 2024-06-01)")
    return run_id


@dataclass(frozen=True)
class RunPlan:
    """This run's id and how it relates to the output's other runs."""

    run_id: str
    layout: str  # SINGLE or RUNS
    mode: str  # ALL, NEW or SINCE
    since_column: str | None
    retry_stages: tuple[str, ...]

    @property
    def partitioned(self) -> bool:
        """Rows carry run_id and the run commits by its own manifest."""
        return self.layout == RUNS


def plan_run(options: RunOptions, started: dt.datetime) -> RunPlan:
    """The run's plan from its options: --run-id, --incremental, --since-column, [job] retry_quarantined."""
    since = options.since_column
    mode = SINCE if since else NEW if options.incremental else ALL
    scheduled = options.run_id is not None or mode != ALL
    run_id = check_run_id(options.run_id) if options.run_id is not None else default_run_id(started)
    retry = tuple(options.job.retry_quarantined)
    return RunPlan(run_id, RUNS if scheduled else SINGLE, mode, since, retry)


def check_since_column(plan: RunPlan, schema: pa.Schema, spec: BatchSpec, where: str) -> str | None:
    """The input's column named by --since-column (matched case-insensitively); refuses PHI columns and bad types."""
    if plan.since_column is None:
        return None
    by_lower = {n.lower(): n for n in schema.names}
    col = by_lower.get(plan.since_column.lower())
    if col is None:
        raise InputSchemaError(f"{where}: --since-column {plan.since_column!r} is not a column of the input; "
                               f"found {', '.join(schema.names)}")
    if col in ("text", "note_date") or col in spec.name_columns:
        raise InputSchemaError(f"{where}: --since-column {col!r} holds PHI (its maximum would go into the "
                               "manifest); use a load or update timestamp column that passes through")
    t = schema.field(col).type
    if not any(f(t) for f in _MARK_TYPES):
        raise InputSchemaError(f"{where}: --since-column {col!r} must be a number, date, timestamp or string "
                               f"column, found {t}")
    return col


@dataclass(frozen=True)
class Selection:
    """What this run takes from its input, given the committed runs (this run's own id excluded)."""

    mode: str
    run_ids: tuple[str, ...]  # committed runs whose rows count as done (never this run's id)
    retry_stages: tuple[str, ...]
    since_column: str | None = None
    after: Any = None  # SINCE: the high-water mark of the committed runs (None: select every row)

    @property
    def reads_committed(self) -> bool:
        """The executor must read committed rows (note ids, quarantine stages) to select."""
        return self.mode != ALL and bool(self.run_ids)


def plan_selection(plan: RunPlan, committed: Sequence[Mapping[str, Any]], since_column: str | None) -> Selection:
    """The selection of a run from the committed manifests (a re-run of R ignores R's own rows and mark)."""
    others = [m for m in committed if m.get(RUN_COLUMN) != plan.run_id]
    ids = tuple(str(m[RUN_COLUMN]) for m in others)
    after = None
    if plan.mode == SINCE:
        marks = [m["selection"]["high_water_mark"] for m in others
                 if (m.get("selection") or {}).get("since_column", "").lower() == str(since_column).lower()
                 and m["selection"].get("high_water_mark") is not None]
        after = max(marks, key=mark_order) if marks else None
    return Selection(plan.mode, ids, plan.retry_stages, since_column, after)


# What committed rows say about a note_id, as codes whose maximum over all its rows decides:
# a row in notes/ or a quarantine row at a stage not retried settles the note (DONE); a quarantine
# row at a retried stage asks for a retry (RETRY); a DuplicateNoteId row has no say (its kept copy
# decides). Both executors compute max(code) per note_id from the committed runs' rows.
STATE_NONE, STATE_RETRY, STATE_DONE = 0, 1, 2


def quarantine_state(stage: str | None, error_class: str | None, retry_stages: Iterable[str]) -> int:
    """The state code of one committed quarantine row (the executors state the same rule on their engine)."""
    if error_class == DUPLICATE:
        return STATE_NONE
    return STATE_RETRY if stage in tuple(retry_stages) else STATE_DONE


def encode_mark(value: Any) -> Any:
    """A high-water mark as JSON: numbers as they are, dates and timestamps as ISO text (offset kept)."""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    return value


def decode_mark(value: Any, arrow_type: pa.DataType) -> pa.Scalar:
    """A stored high-water mark as a scalar of the column's type (naive timestamps are UTC)."""
    if pa.types.is_timestamp(arrow_type):
        t = dt.datetime.fromisoformat(str(value))
        if arrow_type.tz is None and t.tzinfo is not None:
            t = t.astimezone(dt.UTC).replace(tzinfo=None)
        elif arrow_type.tz is not None and t.tzinfo is None:
            t = t.replace(tzinfo=dt.UTC)
        return pa.scalar(t, arrow_type)
    if pa.types.is_date(arrow_type):
        return pa.scalar(dt.date.fromisoformat(str(value)), arrow_type)
    if pa.types.is_decimal(arrow_type):
        return pa.scalar(decimal.Decimal(str(value)), arrow_type)
    return pa.scalar(value).cast(arrow_type)


def mark_order(value: Any) -> tuple[int, Any]:
    """A sort key for stored marks: numbers, then ISO dates and timestamps in time order, then other text."""
    if isinstance(value, int | float):
        return (0, value)
    try:
        return (1, dt.datetime.fromisoformat(str(value)).astimezone(dt.UTC))
    except ValueError:
        return (2, str(value))


def selection_record(selection: Selection, rows: Mapping[str, int] | None, read_rows: int,
                     mark: Any) -> dict[str, Any]:
    """The manifest's `selection` block: what was read, what was taken and why, the new mark."""
    out: dict[str, Any] = {"mode": selection.mode, "read_rows": read_rows,
                           "selected_rows": read_rows if rows is None else sum(rows.get(k, 0) for k in SELECTED),
                           "rows": dict(rows or {TAKEN_NEW: read_rows}),
                           "committed_runs_considered": len(selection.run_ids),
                           "retry_stages": list(selection.retry_stages)}
    if selection.mode == SINCE:
        new = encode_mark(mark)
        keep = [m for m in (selection.after, new) if m is not None]
        out.update(since_column=selection.since_column, after=selection.after,
                   high_water_mark=max(keep, key=mark_order) if keep else None)
    return out


def parse_committed(files: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """Committed run manifests from (file name, text) pairs of _runs/, oldest commit first.

    A file that is not a complete manifest of the run its name says (a write cut short) is not a
    commit; the next run's sweep treats that run as uncommitted.
    """
    out = []
    for name, text in files:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            m = json.loads(text)
        except ValueError:
            continue
        if isinstance(m, dict) and m.get(RUN_COLUMN) == name[:-len(".json")] and m.get("committed_at"):
            out.append(m)
    return sort_committed(out)


def sort_committed(manifests: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Manifests in commit order (a re-run of an old id counts as its latest commit)."""
    return sorted(manifests, key=lambda m: (str(m.get("committed_at")), str(m.get(RUN_COLUMN))))


def check_columns(committed: Sequence[Mapping[str, Any]], spec: BatchSpec, where: str) -> None:
    """Refuse a run whose notes/ columns differ from the last committed run's (one table, one schema)."""
    last = next((m for m in reversed(committed) if m.get("notes_columns")), None)
    if last is not None and list(last["notes_columns"]) != spec.notes_columns:
        raise InputSchemaError(
            f"{where}: this run's notes/ columns ({', '.join(spec.notes_columns)}) differ from those of committed "
            f"run {last[RUN_COLUMN]} ({', '.join(last['notes_columns'])}); runs of one output share one schema: "
            "write to a new output, or change the input back")


def run_fields(plan: RunPlan, spec: BatchSpec) -> dict[str, Any]:
    """What every manifest says about its run: id and layout (plus the notes/ columns of partitioned runs)."""
    fields: dict[str, Any] = {RUN_COLUMN: plan.run_id, "layout": plan.layout}
    if plan.partitioned:
        fields["notes_columns"] = spec.notes_columns
    return fields


def now_iso() -> str:
    """A commit time: UTC, microseconds (orders commits within one second)."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
