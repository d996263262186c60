"""The surrogate memos (names.TOKEN_CACHE first draws, modes.DRAW_CACHE, one note's repeats) never change a
replacement: a warm Replacer, filled by other patients' and other notes' PHI, answers what a fresh one does."""

from __future__ import annotations

import pickle

import pytest

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.surrogates import modes, names
from deid_core.engine.surrogates.modes import surrogate_mode
from deid_core.notes import Note
from deid_core.spans import Span

KEY = b"surrogate-memo-test-key-0000000"
CONFIG = load_config()

# Invented notes: the same strings under several patients, and within one note more than once.
TEXT = "Anna Perez (Perez) seen at Mercy Hill Clinic, Boston; call (617) 555-0142, MRN 7712094. Perez, Anna."
ITEMS = [("Anna Perez", "PATIENT"), ("Perez", "PATIENT"), ("Mercy Hill Clinic", "HOSPITAL"), ("Boston", "CITY"),
         ("(617) 555-0142", "PHONE"), ("7712094", "MEDICALRECORD"), ("Perez", "PATIENT"), ("Anna", "PATIENT")]


def _spans(text: str, items) -> list[Span]:
    out, pos = [], 0
    for sub, label in items:
        i = text.index(sub, pos)
        out.append(Span(i, i + len(sub), label))
        pos = i + len(sub)
    return out


def _doc(patient: str, note_id: str, known=(), text: str = TEXT) -> Doc:
    return Doc(Note(note_id, text, patient, None, tuple(known)))


def _fresh(doc: Doc, spans: list[Span]) -> list[str]:
    return surrogate_mode(CONFIG, KEY)(doc, spans)


def test_warm_replacer_across_patients_equals_a_fresh_one():
    warm = surrogate_mode(CONFIG, KEY)
    spans = _spans(TEXT, ITEMS)
    seen = {}
    for k in range(6):  # patients interleaved: p0, p1, p2, p0, p1, p2
        doc = _doc(f"p{k % 3}", f"n{k}")
        got = warm(doc, spans)
        assert got == _fresh(doc, spans)
        seen.setdefault(doc.note.patient_id, got)
        assert got == seen[doc.note.patient_id]  # one patient, one surrogate per string
    assert len({tuple(v) for v in seen.values()}) == 3  # a stale entry of another patient would repeat one
    assert len(warm.names._first) > 0 and len(warm.first_draws) > 0  # the memos were used


def test_a_memoised_first_draw_that_is_real_phi_in_this_note_is_drawn_again():
    warm = surrogate_mode(CONFIG, KEY)
    spans = _spans(TEXT, ITEMS)
    first = warm(_doc("p1", "n1"), spans)  # memoises the first draws of patient p1
    surname, city, phone = first[1], first[3], first[4]
    # the next note of p1 holds those surrogates as its real PHI (metadata names, a city, a phone)
    text = TEXT + f" {city} {phone}"
    items = [*ITEMS, (city, "CITY"), (phone, "PHONE")]
    doc = _doc("p1", "n2", known=((surname, "PATIENT"),), text=text)
    spans2 = _spans(text, items)
    again = warm(doc, spans2)
    assert again == _fresh(doc, spans2)
    assert again[1] != surname and again[3] != city and again[4] != phone


def test_repeats_within_a_note_and_two_digit_years_read_at_their_place():
    warm = surrogate_mode(CONFIG, KEY)
    text = "CABG '09 and in 09 again '09"
    items = [("09", "DATE"), ("09", "DATE"), ("09", "DATE")]
    doc = _doc("p1", "n1", text=text)
    assert warm(doc, _spans(text, items)) == _fresh(doc, _spans(text, items))


def test_memos_are_bounded_and_left_behind_when_pickled(monkeypatch):
    monkeypatch.setattr(names, "TOKEN_CACHE", 2)
    monkeypatch.setattr(modes, "DRAW_CACHE", 2)
    tiny = surrogate_mode(CONFIG, KEY)
    spans = _spans(TEXT, ITEMS)
    for k in range(4):
        doc = _doc(f"p{k % 2}", f"n{k}")
        assert tiny(doc, spans) == _fresh(doc, spans)
        assert len(tiny.names._first) <= 2 and len(tiny.first_draws) <= 2
    shipped = pickle.loads(pickle.dumps(tiny))
    assert len(shipped.names._first) == 0 and len(shipped.first_draws) == 0
    assert shipped(_doc("p0", "n9"), spans) == _fresh(_doc("p0", "n9"), spans)


@pytest.mark.parametrize("label", ["PHONE", "MEDICALRECORD", "CITY", "HOSPITAL"])
def test_first_draws_are_keyed_by_label_and_scope(label):
    warm = surrogate_mode(CONFIG, KEY)
    text = "value 7712094 Boston"
    doc_a, doc_b = _doc("pa", "n1", text=text), _doc("pb", "n2", text=text)
    sp = _spans(text, [("7712094", label)]) if label in ("PHONE", "MEDICALRECORD") else _spans(text, [("Boston", label)])
    a, b = warm(doc_a, sp), warm(doc_b, sp)
    assert a == _fresh(doc_a, sp) and b == _fresh(doc_b, sp)
