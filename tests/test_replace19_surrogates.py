"""Surrogates, audit digests and the shifted note date pinned for a fixed key (round 19, replace19).

The replace step's speed work must keep every output byte-identical: the same key, patient and
original give the same surrogate and the same original_digest. These values were produced by main's
code (c83be33) before the round's changes; a change to any generator, keyed draw, pool or digest fails
here. Invented people and places only.
"""

from __future__ import annotations

import datetime as dt

import pytest

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.surrogates.modes import surrogate_mode
from deid_core.keys import audit_digest
from deid_core.notes import Note
from deid_core.spans import Span

KEY = b"replace19-fixed-test-key-not-secret"
TEXT = ("Zandrow Quillby (MRN 4471-0923, Room 4B) seen 03/14/2031 and on March 3rd, 2031 by Dr. Ottoline Ferrars, "
        "QUILLBY Z.; age 67, 93 yo; phone (617) 555-0142 x12; SSN 123-45-6789; email zquillby@example.org; "
        "http://www.example.org/a1; 10.1.2.3; Springfield, Ohio 02139; 12 Elm Street; Mercy General Hospital; "
        "MGH; carpenter; Acme Ambulance Service; Portugal; Patterson 8 North; spring of 2030; '09; user zquillby7")
ITEMS = [("Zandrow Quillby", "PATIENT"), ("4471-0923", "MEDICALRECORD"), ("Room 4B", "ROOM"), ("03/14/2031", "DATE"),
         ("March 3rd, 2031", "DATE"), ("Ottoline Ferrars", "DOCTOR"), ("QUILLBY Z.", "PATIENT"), ("67", "AGE"),
         ("93", "AGE"), ("(617) 555-0142 x12", "PHONE"), ("123-45-6789", "SSN"), ("zquillby@example.org", "EMAIL"),
         ("http://www.example.org/a1", "URL"), ("10.1.2.3", "IPADDR"), ("Springfield", "CITY"), ("Ohio", "STATE"),
         ("02139", "ZIP"), ("12 Elm Street", "STREET"), ("Mercy General Hospital", "HOSPITAL"), ("MGH", "HOSPITAL"),
         ("carpenter", "PROFESSION"), ("Acme Ambulance Service", "ORGANIZATION"), ("Portugal", "COUNTRY"),
         ("Patterson 8 North", "DEPARTMENT"), ("spring of 2030", "DATE"), ("09", "DATE"), ("zquillby7", "USERNAME")]

EXPECTED = {
    "P-Q1": [
        "Duffy Estrada", "3326-9635", "Gcqr 1H", "01/13/2031", "January 2nd, 2031", "Norton Mitchell",
        "ESTRADA D.", "65", "90+", "(332) 668-1588 x46", "852-62-2976", "dillon@stonehealth.org",
        "http://www.schmittcare.org/c1", "215.252.178.16", "Port Lori", "Washington", "021**", "76 Marie Wall",
        "Lopezshire Regional Medical Center", "FHC", "arts development officer", "Lee Group", "Saudi Arabia",
        "Chase 9 North", "winter of 2030", "08", "gsrsftsz3",
    ],
    None: [
        "Larson Everett", "1538-5194", "Dyyh 0U", "12/24/2030", "December 13th, 2030", "Donovan Navarro",
        "EVERETT L.", "64", "90+", "(908) 304-1573 x46", "296-41-2046", "lester@brewerhealth.org",
        "http://www.preston.org/f4", "168.70.98.110", "Lake Anthonyfort", "Arkansas", "021**", "42 Levi Key",
        "Simpson Health Center", "GHC", "tax adviser", "Banks LLC", "Western Sahara", "Watkins 0 North",
        "winter of 2030", "08", "houdnrha3",
    ],
}
DIGESTS = [
    "７６８０ｅｆ６３８０ｂ７４ｂ８２５０ｂ８ｅｄ６４ｅ６ｃ４ｆｂ７８５６８４２９３０ｃ９６ａ４ｃ８４８６７ｅｃ４ｂ１ｂｃａ９ｄｂ８１",
    "４０ｅ２ａａｆｃ３ｃｄｆ２ｂ８７２２７８ｄ０２ｅ８４２８７ｂｃｆ４ｃｅａｄ１３６８ｂａｃ８６２３３６３ｃ６ａ０ｄｆｂ７ｄ７７ｃ９",
    "６ｅ６９５２７０ｄｄ６ｅ６８５５ｄｄ３７５１ｄ３８２２９ｆ３ｄｂｄ０ａｆ５ｄｅ５ｂｅｃｅ２０ｄ８４０ｄｄａｆ５８２ｂ８ｅ８５３１",
]


def _spans() -> list[Span]:
    out, pos = [], 0
    for sub, label in ITEMS:
        i = TEXT.index(sub, pos)
        out.append(Span(i, i + len(sub), label))
        pos = i + len(sub)
    return out


@pytest.fixture(scope="module")
def replacer():
    return surrogate_mode(load_config(), KEY)


@pytest.mark.parametrize("pid", ["P-Q1", None])
def test_surrogates_pinned(replacer, pid):
    note = Note("n-q1", TEXT, pid, dt.date(2031, 3, 20), (("Zandrow", "PATIENT"), ("Quillby", "PATIENT")))
    got = replacer(Doc(note), _spans())
    assert dict(zip([s for s, _ in ITEMS], got, strict=True)) == dict(zip([s for s, _ in ITEMS], EXPECTED[pid],
                                                                           strict=True))


def test_surrogates_pinned_twice(replacer):
    """A second note of the same patient (warm caches, reused per-label plans) gives the same surrogates."""
    note = Note("n-q2", TEXT, "P-Q1", dt.date(2031, 3, 20), (("Zandrow", "PATIENT"), ("Quillby", "PATIENT")))
    assert replacer(Doc(note), _spans()) == EXPECTED["P-Q1"]
    assert replacer(Doc(note), _spans()) == EXPECTED["P-Q1"]


def test_digests_and_note_date_pinned(replacer):
    assert [audit_digest(KEY, "P-Q1", s) for s, _ in ITEMS[:3]] == DIGESTS
    assert replacer.shift_note_date(Note("n-q1", TEXT, "P-Q1", dt.date(2031, 3, 20))) == dt.date(2031, 1, 19)


def test_memo_rechecks_collisions_per_note():
    """A kept first candidate that is real PHI of a later note is re-drawn there, as a fresh Replacer does."""
    warm = surrogate_mode(load_config(), KEY)
    first = Note("n-m1", "Seen at Quillby Clinic.", "P-M1")
    span = [Span(8, 22, "HOSPITAL")]
    kept = warm(Doc(first), span)[0]
    assert any(k[0] == "drawn-first" for k in warm.memo.young)  # the first candidate is kept
    # The next note of the patient names that very surrogate as a real place: it must not be reused.
    text = f"Seen at Quillby Clinic, then {kept}."
    second = Note("n-m2", text, "P-M1")
    spans = [Span(8, 22, "HOSPITAL"), Span(29, 29 + len(kept), "HOSPITAL")]
    got = warm(Doc(second), spans)
    assert got == surrogate_mode(load_config(), KEY)(Doc(second), spans)  # same as without the memo
    assert got[0] != kept


def test_global_label_context_once_per_note():
    """[surrogates] global_labels: one global context per note (its forbidden set computed once), same surrogates."""
    from deid_core.engine.surrogates.generators import NoteCtx

    ctx = NoteCtx(KEY, "p:P-Q1", Note("n", TEXT, "P-Q1"), [TEXT[:7]], None, [TEXT[:7]])
    assert ctx.as_global is ctx.as_global and ctx.as_global.scope == "global"
    assert ctx.as_global.forbidden == ctx.forbidden


def test_memo_keys_cover_patient_year_and_key():
    """Review: one warm Replacer over notes that share originals across patients, note years (yearless dates
    read in the note's year) and HMAC keys gives what a fresh Replacer gives each note (the memo key must hold
    every input of the kept surrogate)."""
    cfg = load_config({"surrogates": {"dates": {"yearless_year": "note_date"}}})
    text = "Seen Feb 29 and 03/14, age 67, call (617) 555-0142, Ashvale."
    items = [("Feb 29", "DATE"), ("03/14", "DATE"), ("67", "AGE"), ("(617) 555-0142", "PHONE"), ("Ashvale", "CITY")]
    spans = [Span(text.index(s), text.index(s) + len(s), label) for s, label in items]
    notes = [Note("n1", text, "P-A", dt.date(2032, 5, 1)), Note("n2", text, "P-A", dt.date(2031, 5, 1)),
             Note("n3", text, "P-B", dt.date(2032, 5, 1)), Note("n4", text, None, dt.date(2032, 5, 1)),
             Note("n5", text, None, dt.date(2032, 5, 1))]
    for key in (KEY, b"another-invented-key"):
        warm = surrogate_mode(cfg, key)
        outs = [warm(Doc(n), spans) for n in notes]
        assert outs == [surrogate_mode(cfg, key)(Doc(n), spans) for n in notes]
        assert outs[0][0] != outs[1][0]  # Feb 29 of 2032 shifts; of 2031 it is no date (masked)
        assert outs[0] != outs[2] and outs[3] != outs[4]  # another patient, another note without a patient
