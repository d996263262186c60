"""Arrow batches in, staged results out: the one tagging path shared by the Spark job and `deid tag`.

A staged row holds, per input note, either the de-identified text and its audit spans or a
quarantine reason (never text), plus the pass-through columns (deid_core/app/schema.py).
notes/, spans/ and quarantine/ are projections of the staged table, so each note is tagged once.
A string value that is not valid UTF-8 (a lone surrogate included) quarantines its note only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from operator import attrgetter

import pyarrow as pa

from deid_core.app.policies import (
    DUPLICATE,
    INVALID_NAME_COLUMN,
    INVALID_PATIENT_ID,
    INVALID_TEXT,
    NULL_TEXT,
    VALIDATE,
)
from deid_core.app.schema import DUP_COLUMN, SPANS, STAGED_CORE, BatchSpec
from deid_core.bundle import Bundle
from deid_core.config import Config
from deid_core.engine.pipeline import Deidentifier, build_deidentifier
from deid_core.engine.surrogates.settings import shifts_note_date  # noqa: F401 - used by app/run.py
from deid_core.io.tables import SPAN_STRUCT
from deid_core.notes import AuditSpan, Note, NoteResult

_SPAN_FIELDS = [(attrgetter(f.name), f) for f in SPAN_STRUCT]  # one getter per audit struct field
PATIENT_BATCH_MAX = 20_000  # rows one patient's notes may gather into a batch (cross-note propagation)


@dataclass(frozen=True)
class FaultNoteMarker:
    """The test-only fault hook of [testing] fault_note_marker: notes whose id holds it raise in the tag stage."""

    marker: str

    def __call__(self, note: Note) -> None:
        if self.marker in note.note_id:
            raise RuntimeError("injected test fault")


def make_deidentifier(config: Config, bundle: Bundle, key: bytes) -> Deidentifier:
    """build_deidentifier, with the fault hook when [testing] sets one (only allowed under the test suite)."""
    marker = config.testing.fault_note_marker
    return build_deidentifier(config, bundle, key, fault_hook=FaultNoteMarker(marker) if marker else None)


def _binary_view(col: pa.Array) -> pa.Array:
    """The same values as bytes (no UTF-8 check): strings, large strings, lists of either."""
    t = col.type
    if pa.types.is_string(t):
        return col.view(pa.binary())
    if pa.types.is_large_string(t):
        return col.view(pa.large_binary())
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        item = pa.large_binary() if pa.types.is_large_string(t.value_type) else pa.binary()
        return col.cast(pa.large_list(item) if pa.types.is_large_list(t) else pa.list_(item))
    return col


def _utf8(value: object) -> object:
    if isinstance(value, bytes):
        return value.decode("utf-8")  # strict: invalid bytes and encoded surrogates raise
    if isinstance(value, list):
        return [_utf8(v) for v in value]
    return value


def decode_column(col: pa.Array) -> tuple[list, list[bool]]:
    """Python values of a string-like column, and which rows are not valid UTF-8 (their value: None)."""
    try:
        col.validate(full=True)
        return col.to_pylist(), [False] * len(col)
    except pa.ArrowInvalid:
        pass
    values: list = []
    bad: list[bool] = []
    for raw in _binary_view(col).to_pylist():
        try:
            values.append(_utf8(raw))
            bad.append(False)
        except UnicodeDecodeError:
            values.append(None)
            bad.append(True)
    return values, bad


def valid_ids(col: pa.Array | pa.ChunkedArray) -> pa.Array:
    """True where a value is present and valid UTF-8: the note ids a run can carry to its outputs."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    parts = []
    for c in chunks:
        try:
            c.validate(full=True)
            parts.append(c.is_valid())
            continue
        except pa.ArrowInvalid:
            _, bad = decode_column(c)
        parts.append(pa.array([ok and not b for ok, b in zip(c.is_valid().to_pylist(), bad, strict=True)],
                              pa.bool_()))
    return pa.concat_arrays(parts) if parts else pa.array([], pa.bool_())


def _as_date(v: object) -> dt.date | None:
    if isinstance(v, dt.datetime):
        return v.date()
    return v if isinstance(v, dt.date) else None


def _known_phi(batch: pa.RecordBatch, spec: BatchSpec) -> tuple[list[tuple[tuple[str, str], ...]], list[bool]]:
    """Per row: the (value, label) pairs of the name columns, and whether one of them is not UTF-8."""
    rows: list[list[tuple[str, str]]] = [[] for _ in range(batch.num_rows)]
    invalid = [False] * batch.num_rows
    for col, label in spec.name_columns.items():
        values, bad = decode_column(batch.column(col))
        for i, v in enumerate(values):
            invalid[i] = invalid[i] or bad[i]
            for x in (v if isinstance(v, list) else [v]):
                if x is not None and x.strip():
                    rows[i].append((x, label))
    return [tuple(r) for r in rows], invalid


def _spans_array(results: list[NoteResult]) -> pa.Array:
    """The staged spans column: one list of audit structs per result (empty when quarantined), built
    column by column (one pass per field over the batch's spans, no row tuples)."""
    offsets = [0]
    spans: list[AuditSpan] = []
    for r in results:
        spans.extend(r.spans)
        offsets.append(len(spans))
    values = pa.StructArray.from_arrays([pa.array(list(map(get, spans)), f.type) for get, f in _SPAN_FIELDS],
                                        fields=list(SPAN_STRUCT))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=pa.list_(SPAN_STRUCT))


@dataclass
class _Screened:
    """One batch's rows decoded for the tagger; `results` holds a validate-stage result per row not to tag."""

    ids: list[str]
    texts: list[str | None]
    pids: list[str | None]
    known: list[tuple[tuple[str, str], ...]]
    results: list[NoteResult | None]


def _screen(batch: pa.RecordBatch, spec: BatchSpec) -> _Screened:
    """Decode the batch's strings; quarantine duplicates, null text and values that are not UTF-8."""
    names = batch.schema.names
    n = batch.num_rows
    ids, bad_ids = decode_column(batch.column("note_id"))
    if any(bad_ids):  # the pre-pass (policies.plan_ids) drops or refuses them: never reached in a run
        raise ValueError(f"{sum(bad_ids)} note_id value(s) are not valid UTF-8 (rows must pass plan_ids first)")
    texts, bad_text = decode_column(batch.column("text"))
    pids, bad_pid = decode_column(batch.column("patient_id")) if "patient_id" in names else ([None] * n, [False] * n)
    dups = batch.column(DUP_COLUMN).to_pylist() if DUP_COLUMN in names else [False] * n
    known, bad_known = _known_phi(batch, spec)
    results: list[NoteResult | None] = [None] * n
    for i in range(n):
        cls = (DUPLICATE if dups[i] else INVALID_TEXT if bad_text[i] else NULL_TEXT if texts[i] is None
               else INVALID_PATIENT_ID if bad_pid[i] else INVALID_NAME_COLUMN if bad_known[i] else None)
        if cls is not None:
            results[i] = NoteResult(ids[i], pids[i], error_stage=VALIDATE, error_class=cls)
    return _Screened(ids, texts, pids, known, results)


def process_batch(batch: pa.RecordBatch, deid: Deidentifier, spec: BatchSpec,
                  out_schema: pa.Schema) -> pa.RecordBatch:
    """Tag and replace every note of one Arrow batch; one staged row per input row, same order."""
    rows = _screen(batch, spec)
    results = rows.results
    dates = batch.column("note_date").to_pylist() if "note_date" in batch.schema.names else [None] * len(results)
    shifted: list[dt.date | None] = [None] * len(results)
    shift = deid.replacer.shift_note_date if spec.note_date_out else None
    todo = [i for i, r in enumerate(results) if r is None]
    notes = [Note(rows.ids[i], rows.texts[i], rows.pids[i], _as_date(dates[i]), rows.known[i]) for i in todo]
    for i, note, result in zip(todo, notes, deid.process_many(notes), strict=True):
        if result.ok and shift is not None:
            try:
                shifted[i] = shift(note)
            except Exception as exc:  # noqa: BLE001 - fail closed, like Deidentifier.process
                result = NoteResult(note.note_id, note.patient_id, error_stage="replace", error_class=type(exc).__name__)
        results[i] = result
    done: list[NoteResult] = results  # type: ignore[assignment]  # every row has its result now
    staged = {f.name: pa.array([getattr(r, f.name) for r in done], f.type) for f in STAGED_CORE if f.name != SPANS}
    staged[SPANS] = _spans_array(done)
    staged["note_date"] = pa.array([d if r.ok else None for d, r in zip(shifted, done, strict=True)], pa.date32())
    arrays = [staged[f.name] if f.name in staged else batch.column(f.name) for f in out_schema]
    return pa.RecordBatch.from_arrays(arrays, schema=out_schema)


def patient_batches(batches: Iterable[pa.RecordBatch], max_rows: int) -> Iterator[pa.RecordBatch]:
    """Re-cut a stream of batches sorted by patient so no patient's notes straddle two batches.

    The cross-note step of Deidentifier.process_many sees one batch at a time; the job sorts
    each partition by patient and feeds it through here. A patient with more than `max_rows`
    notes is still split (memory stays bounded); unsorted input only loses cross-note matches.
    """
    carry: pa.RecordBatch | None = None
    for b in batches:
        if "patient_id" not in b.schema.names:
            yield b
            continue
        if carry is not None:
            b = pa.Table.from_batches([carry, b]).combine_chunks().to_batches()[0]
            carry = None
        if b.num_rows == 0:
            continue
        pids = _binary_view(b.column("patient_id")).to_pylist()  # bytes: no UTF-8 check here
        cut = len(pids)
        if pids[-1] is not None:
            while cut > 0 and pids[cut - 1] == pids[-1]:
                cut -= 1
            if cut == 0 and b.num_rows < max_rows:
                carry = b  # one patient so far: wait for the rest of their notes
                continue
            cut = cut or len(pids)
        yield b.slice(0, cut)
        if cut < len(pids):
            carry = b.slice(cut)
    if carry is not None:
        yield carry
