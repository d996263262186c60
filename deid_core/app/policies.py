"""The row rules of a run, stated once for both executors: bad ids, duplicates, what counts as tagged.

The executors (deid_core/app/runner.py on Arrow, udfs/plan.py on Spark) count and mark rows;
what the counts mean, when the run stops and which copy of a duplicate is kept is decided here.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from deid_core.app.schema import BatchSpec
from deid_core.config import ConfigError, Job

log = logging.getLogger("deid.run")

VALIDATE = "validate"  # the stage of quarantines for bad input: never reaches the tagger
INPUT_STAGES = (VALIDATE,)
DUPLICATE = "DuplicateNoteId"
NULL_TEXT = "NullText"
# Stage-"validate" classes for string values that are not valid UTF-8 (lone surrogates included).
INVALID_TEXT = "InvalidText"
INVALID_PATIENT_ID = "InvalidPatientId"
INVALID_NAME_COLUMN = "InvalidNameColumn"
# Which copy of a repeated note_id is kept: the first in ascending order of the dedup keys,
# nulls first (Spark's asc_nulls_first; Arrow's null_placement="at_start"); the others are
# quarantined as (VALIDATE, DUPLICATE).
DEDUP_NULLS_FIRST = True
_SORTABLE = (pa.types.is_integer, pa.types.is_floating, pa.types.is_string, pa.types.is_date,
             pa.types.is_timestamp, pa.types.is_boolean, pa.types.is_large_string)


class DuplicateNoteIdError(ConfigError):
    """on_duplicate = "fail" and the input repeats note ids (message gives the counts)."""


class NullNoteIdError(ConfigError):
    """on_null_note_id = "fail" and some rows have no usable note_id (message gives the count)."""


@dataclass(frozen=True)
class InputCounts:
    """What the pre-pass over note ids found (a null or non-UTF-8 id counts as null)."""

    rows: int
    null_ids: int
    duplicate_ids: int
    duplicate_rows: int


@dataclass(frozen=True)
class IdPlan:
    """What the executor does before tagging: drop the null ids? mark duplicates, in which order?"""

    drop_null_ids: bool
    dedup_keys: tuple[str, ...] | None  # None: no repeated note_id, nothing to mark


def dedup_keys(spec: BatchSpec, schema: pa.Schema) -> tuple[str, ...]:
    """The columns after note_id whose ascending order decides which copy of a duplicate is kept."""
    keys = [c for c in ("patient_id", "note_date", "text") if c in schema.names]
    keys += [c for c in sorted(spec.passthrough) if any(f(schema.field(c).type) for f in _SORTABLE)]
    return tuple(keys)


def plan_ids(counts: InputCounts, spec: BatchSpec, schema: pa.Schema, job: Job) -> IdPlan:
    """Apply [job] on_null_note_id and on_duplicate to the counts: raise under "fail", else the plan."""
    if counts.null_ids:
        if job.on_null_note_id == "fail":
            raise NullNoteIdError(f"{counts.null_ids} input row(s) have a null or non-UTF-8 note_id; fix the "
                                  "input or set [job] on_null_note_id = \"drop\" to drop and count them")
        log.warning("dropping %d row(s) with a null or non-UTF-8 note_id (on_null_note_id = drop)",
                    counts.null_ids)
    if not counts.duplicate_rows:
        return IdPlan(bool(counts.null_ids), None)
    if job.on_duplicate == "fail":
        raise DuplicateNoteIdError(
            f"{counts.duplicate_rows} duplicate note_id row(s) over {counts.duplicate_ids} note_id value(s); fix "
            "the input or set [job] on_duplicate = \"quarantine\" (or --on-duplicate quarantine)")
    log.warning("quarantining %d duplicate note_id row(s)", counts.duplicate_rows)
    return IdPlan(bool(counts.null_ids), dedup_keys(spec, schema))


def run_counts(inp: InputCounts, status_rows: Iterable[tuple[str | None, str | None, int]]) -> dict[str, Any]:
    """The manifest's counts from the input pre-pass and the staged (error_stage, error_class, n) rows.

    `tagged` is every staged row that reached the tagger (not quarantined at input validation):
    read from the staged data, so task retries and Spark Connect change nothing.
    """
    rows = list(status_rows)
    tagged = sum(n for stage, _, n in rows if stage not in INPUT_STAGES)
    return {"input_rows": inp.rows, "null_note_id_dropped": inp.null_ids, "duplicate_rows": inp.duplicate_rows,
            "tagged": tagged, **status_counts(rows)}


def status_counts(rows: Iterable[tuple[str | None, str | None, int]]) -> dict[str, Any]:
    """(error_stage, error_class, n) rows -> notes, quarantined totals and breakdowns."""
    notes = quarantined = duplicates = 0
    by_stage: dict[str, int] = {}
    by_class: dict[str, int] = {}
    for stage, cls, n in rows:
        if stage is None:
            notes += n
            continue
        quarantined += n
        by_stage[stage] = by_stage.get(stage, 0) + n
        by_class[str(cls)] = by_class.get(str(cls), 0) + n
        if cls == "DuplicateNoteId":
            duplicates += n
    return {"notes": notes, "quarantined": quarantined, "duplicates_quarantined": duplicates,
            "quarantined_by_stage": dict(sorted(by_stage.items())),
            "quarantined_by_error_class": dict(sorted(by_class.items()))}
