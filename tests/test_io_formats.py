"""Format detection and loading notes/spans from every format, including a job's output."""

import json

import pyarrow as pa
import pytest

from deid_core.io.brat import write_brat
from deid_core.io.corpus import Corpus
from deid_core.io.formats import detect_format, load_notes, load_spans, read_corpus, write_corpus
from deid_core.io.i2b2 import write_i2b2
from deid_core.io.physionet import write_physionet
from deid_core.io.tables import AUDIT_SCHEMA, notes_table, write_table
from deid_core.notes import Note
from deid_core.spans import Span

CORPUS = Corpus([Note("1-1", "Dr Lee saw Ann on 3/4.", "1"), Note("1-2", "Nothing here.", "1")],
                {"1-1": [Span(3, 6, "DOCTOR", "gold"), Span(11, 14, "PATIENT", "gold"), Span(18, 21, "DATE", "gold")]})


def triples(spans):
    return {k: [(s.start, s.end, s.label) for s in v] for k, v in spans.items()}


@pytest.mark.parametrize("fmt, writer", [("i2b2", write_i2b2), ("brat", write_brat), ("physionet", write_physionet),
                                         ("parquet", lambda c, p: write_corpus(c, p, "parquet"))])
def test_every_format_detected_and_loaded(tmp_path, fmt, writer):
    writer(CORPUS, tmp_path)
    assert detect_format(tmp_path) == fmt
    assert triples(load_spans(tmp_path)) == triples(CORPUS.gold)
    assert [(n.note_id, n.text) for n in load_notes(tmp_path)] == [(n.note_id, n.text) for n in CORPUS.notes]
    assert [n.patient_id for n in read_corpus(tmp_path).notes] == ["1", "1"]


def test_single_files_detected(tmp_path):
    write_i2b2(CORPUS, tmp_path / "x")
    write_physionet(CORPUS, tmp_path / "p")
    assert detect_format(tmp_path / "x" / "1-1.xml") == "i2b2"
    assert detect_format(tmp_path / "p" / "id.text") == "physionet"
    assert triples(load_spans(tmp_path / "p" / "id-phi.phrase")) == triples(CORPUS.gold)
    (tmp_path / "a.csv").write_text("x")
    with pytest.raises(ValueError, match="a.csv"):
        detect_format(tmp_path / "a.csv")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="empty"):
        detect_format(tmp_path / "empty")
    with pytest.raises(FileNotFoundError):
        detect_format(tmp_path / "missing")


def test_job_output_folder_and_audit_table(tmp_path):
    rows = [{"note_id": "1-1", "patient_id": "1", "start": 3, "end": 6, "label": "DOCTOR", "category": "NAME",
             "source": "rules", "confidence": 0.9, "out_start": 3, "out_end": 8, "replacement": "Smith",
             "original_digest": "ab"}]
    out = tmp_path / "out"
    write_table(pa.Table.from_pylist(rows, schema=AUDIT_SCHEMA), out / "spans" / "part-0.parquet")
    write_table(notes_table([Note("1-1", "Dr Smith saw [PATIENT] on [DATE].")]), out / "notes" / "part-0.parquet")
    (out / "_manifest.json").write_text(json.dumps({"notes": 1}))
    assert triples(load_spans(out)) == {"1-1": [(3, 6, "DOCTOR")]}
    assert triples(load_spans(out / "spans")) == {"1-1": [(3, 6, "DOCTOR")]}
    with pytest.raises(ValueError, match="de-identified"):
        load_notes(out)


def test_parquet_errors_name_file_and_column(tmp_path):
    write_table(pa.table({"note_id": ["a"], "begin": [0], "end": [1], "label": ["DATE"]}), tmp_path / "s.parquet")
    with pytest.raises(ValueError, match=r"s\.parquet.*missing column\(s\) start"):
        load_spans(tmp_path / "s.parquet")
    write_table(pa.table({"note_id": ["a"], "start": [0], "end": [1], "label": ["SPOUSE"]}), tmp_path / "t.parquet")
    with pytest.raises(ValueError, match=r"t\.parquet.*SPOUSE"):
        load_spans(tmp_path / "t.parquet")
    write_table(pa.table({"note_id": ["a"], "start": [0], "end": [1], "label": ["medical_record"]}),
                tmp_path / "u.parquet")
    assert triples(load_spans(tmp_path / "u.parquet")) == {"a": [(0, 1, "MEDICALRECORD")]}


def test_output_schemas_are_the_contract_and_derive_from_the_engine_records():
    import dataclasses

    from deid_core.app.schema import STAGED_CORE
    from deid_core.io.tables import QUARANTINE_SCHEMA
    from deid_core.notes import AuditSpan, NoteResult

    assert AUDIT_SCHEMA.names == ["note_id", "patient_id", "start", "end", "label", "category", "source",
                                  "confidence", "out_start", "out_end", "replacement", "original_digest"]
    assert [str(t) for t in AUDIT_SCHEMA.types] == ["string", "string", "int32", "int32", "string", "string",
                                                     "string", "double", "int32", "int32", "string", "string"]
    assert QUARANTINE_SCHEMA.names == ["note_id", "patient_id", "stage", "error_class"]
    assert AUDIT_SCHEMA.names[2:] == [f.name for f in dataclasses.fields(AuditSpan)]
    assert [f.name for f in STAGED_CORE] == [f.name for f in dataclasses.fields(NoteResult)]
