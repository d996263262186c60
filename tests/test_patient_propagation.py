"""Cross-note propagation: a name found in one of a patient's notes is replaced in all of them."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.app.batch import patient_batches
from deid_core.config import load_config
from deid_core.engine.merge import propagate_patient
from deid_core.engine.pipeline import build_deidentifier
from deid_core.notes import Note
from deid_core.spans import Span, validate_spans

OPTS = load_config({"merge": {"propagate_patient": True}}).merge


def test_a_name_tagged_in_one_note_is_tagged_in_the_patients_other_notes():
    a = "Son Quillaby at bedside."
    b = "Quillaby called, updated. Bay window view."
    out = propagate_patient([(a, [Span(4, 12, "PATIENT", "name-kin")]), (b, [])], OPTS)
    assert out[0] == [Span(4, 12, "PATIENT", "name-kin")]
    assert [(b[s.start:s.end], s.label, s.source) for s in out[1]] == [("Quillaby", "PATIENT", "patient:propagate")]


def test_dictionary_word_strings_stay_in_their_note():
    a = "Daughter is at the Bay today."
    b = "Bay window view. Holy water."
    out = propagate_patient([(a, [Span(19, 22, "LOCATION-OTHER", "crf:single")]), (b, [])], OPTS)
    assert out[1] == []


def test_spans_stay_valid_and_existing_spans_win():
    a = "Mr Quillaby Tarrant here."
    b = "Quillaby Tarrant and Quillaby again; quillabyx is not a word match."
    spans_b = [Span(0, 16, "DOCTOR", "rules")]
    out = propagate_patient([(a, [Span(3, 19, "PATIENT", "rules")]), (b, spans_b)], OPTS)
    validate_spans(out[1], len(b))
    assert [(b[s.start:s.end], s.label) for s in out[1]] == [("Quillaby Tarrant", "DOCTOR")]


def test_deidentifier_replaces_a_relatives_name_in_every_note_of_the_patient():
    conf = load_config({"pipeline": {"stages": ["rules"], "mode": "mask"}, "merge": {"propagate_patient": True}})
    deid = build_deidentifier(conf, None, b"k" * 32)
    notes = [Note("n1", "Social: son Quillaby visited today.", "p1"),
             Note("n2", "Quillaby updated by phone at 1400.", "p1"),
             Note("n3", "Quillaby updated by phone at 1400.", "p2")]  # another patient: not carried over
    res = deid.process_many(notes)
    assert "Quillaby" not in res[0].text and "Quillaby" not in res[1].text
    assert [s.source for s in res[1].spans] == ["patient:propagate"]
    assert "Quillaby" in res[2].text
    assert deid.tag_many(notes)[1] == [Span(0, 8, "PATIENT", "patient:propagate", 0.5)]
    off = build_deidentifier(conf.override({"merge": {"propagate_patient": False}}), None, b"k" * 32)
    assert "Quillaby" in off.process_many(notes)[1].text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", None]), min_size=1, max_size=40).map(
    lambda xs: sorted(xs, key=lambda x: (x is None, x or ""))),
    st.integers(1, 7), st.integers(2, 9))
def test_patient_batches_keeps_every_row_once_and_patients_whole(pids, size, max_rows):
    table = pa.table({"note_id": [str(i) for i in range(len(pids))], "patient_id": pa.array(pids, pa.string())})
    out = list(patient_batches(table.to_batches(size), max_rows))
    ids = [x for b in out for x in b.column("note_id").to_pylist()]
    assert ids == table.column("note_id").to_pylist()  # every row once, order kept
    where: dict[str, set[int]] = {}
    for k, b in enumerate(out):
        for p in b.column("patient_id").to_pylist():
            if p is not None:
                where.setdefault(p, set()).add(k)
    for p, batches in where.items():
        if pids.count(p) <= max_rows:
            assert len(batches) == 1, p  # a patient with few notes never straddles two batches
