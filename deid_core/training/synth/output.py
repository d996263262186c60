"""Synthetic notes as the project's tables: notes + gold spans Parquet, a Corpus for i2b2/BRAT writers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from deid_core.io.corpus import Corpus
from deid_core.io.tables import SPAN_SCHEMA
from deid_core.notes import Note
from deid_core.training.synth.generate import Plan, SynthNote, block_notes

METADATA_COLUMNS = ("patient_first_name", "patient_last_name", "attending_name")
# --name-columns value that feeds the metadata columns to `deid tag` / jobs/deidentify.py.
NAME_COLUMNS = "patient_first_name,patient_last_name,attending_name:DOCTOR"
NOTES_SCHEMA = pa.schema([
    ("note_id", pa.string()), ("patient_id", pa.string()), ("note_date", pa.date32()),
    ("text", pa.string()), ("patient_first_name", pa.string()), ("patient_last_name", pa.string()),
    ("attending_name", pa.string()), ("note_type", pa.string()), ("family", pa.string()),
])
GOLD_STRUCT = pa.struct([("start", pa.int32()), ("end", pa.int32()), ("label", pa.string())])
# One row per note with its gold spans nested: what the Spark job's mapInArrow returns.
NESTED_SCHEMA = pa.schema(list(NOTES_SCHEMA) + [pa.field("gold", pa.list_(GOLD_STRUCT))])
FORMATS = ("parquet", "i2b2", "brat")


def notes_table(notes: Iterable[SynthNote]) -> pa.Table:
    """The notes table (NOTES_SCHEMA) of synthetic notes."""
    notes = list(notes)
    cols = {name: [getattr(n, name) for n in notes] for name in NOTES_SCHEMA.names}
    return pa.table(cols, schema=NOTES_SCHEMA)


def gold_table(notes: Iterable[SynthNote]) -> pa.Table:
    """The gold spans table (io.tables.SPAN_SCHEMA), notes in the given order, spans in text order."""
    nid, start, end, label = [], [], [], []
    for n in notes:
        for s in n.spans:
            nid.append(n.note_id)
            start.append(s.start)
            end.append(s.end)
            label.append(s.label)
    k = len(nid)
    return pa.table({"note_id": nid, "start": start, "end": end, "label": label,
                     "source": ["synth"] * k, "confidence": [1.0] * k}, schema=SPAN_SCHEMA)


def nested_batch(notes: Iterable[SynthNote]) -> pa.RecordBatch:
    """One Arrow batch (NESTED_SCHEMA): note columns plus a `gold` list of (start, end, label)."""
    notes = list(notes)
    cols = [pa.array([getattr(n, name) for n in notes], f.type) for name, f in zip(NOTES_SCHEMA.names, NOTES_SCHEMA, strict=True)]
    gold = [[{"start": s.start, "end": s.end, "label": s.label} for s in n.spans] for n in notes]
    cols.append(pa.array(gold, pa.list_(GOLD_STRUCT)))
    return pa.RecordBatch.from_arrays(cols, schema=NESTED_SCHEMA)


def to_note(n: SynthNote) -> Note:
    """The engine's Note, with the metadata columns as known PHI (attending -> DOCTOR)."""
    known = tuple((v, lab) for v, lab in ((n.patient_first_name, "PATIENT"), (n.patient_last_name, "PATIENT"),
                                          (n.attending_name, "DOCTOR")) if v)
    return Note(n.note_id, n.text, n.patient_id, n.note_date, known)


def to_corpus(notes: Iterable[SynthNote]) -> Corpus:
    """A Corpus (notes + gold by note_id) for the io writers and the evaluator."""
    notes = list(notes)
    return Corpus([to_note(n) for n in notes], {n.note_id: list(n.spans) for n in notes})


def iter_chunks(plan: Plan, chunk_notes: int = 5000) -> Iterator[list[SynthNote]]:
    """The plan's notes in lists of about `chunk_notes`, in block order."""
    buf: list[SynthNote] = []
    for b in range(plan.n_blocks):
        buf.extend(block_notes(plan, b))
        if len(buf) >= chunk_notes:
            yield buf
            buf = []
    if buf:
        yield buf


def write_parquet(plan: Plan, out: str | Path) -> tuple[int, int]:
    """Stream the corpus to OUT/notes/part-00000.parquet and OUT/gold/part-00000.parquet; (notes, spans)."""
    out = Path(out)
    (out / "notes").mkdir(parents=True, exist_ok=True)
    (out / "gold").mkdir(parents=True, exist_ok=True)
    n_notes = n_spans = 0
    with pq.ParquetWriter(out / "notes" / "part-00000.parquet", NOTES_SCHEMA) as nw, \
            pq.ParquetWriter(out / "gold" / "part-00000.parquet", SPAN_SCHEMA) as gw:
        for chunk in iter_chunks(plan):
            nw.write_table(notes_table(chunk))
            g = gold_table(chunk)
            gw.write_table(g)
            n_notes += len(chunk)
            n_spans += g.num_rows
    return n_notes, n_spans


def write_corpus(plan: Plan, out: str | Path, fmt: str = "parquet") -> tuple[int, int]:
    """Write the plan's corpus in a format (parquet, i2b2, brat); returns (notes, spans)."""
    if fmt == "parquet":
        return write_parquet(plan, out)
    notes = [n for chunk in iter_chunks(plan) for n in chunk]
    corpus = to_corpus(notes)
    if fmt == "i2b2":
        from deid_core.io.i2b2 import write_i2b2

        write_i2b2(corpus, out)
    elif fmt == "brat":
        from deid_core.io.brat import write_brat

        write_brat(corpus, out)
    else:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    return len(notes), sum(len(n.spans) for n in notes)
