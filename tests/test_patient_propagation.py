"""Cross-note propagation: a name found in one of a patient's notes is replaced in all of them."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.app.batch import patient_batches
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.merge import Merger
from deid_core.engine.pipeline import build_deidentifier
from deid_core.engine.propagation import propagate_patient
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
    # the note's own span wins over the other note's; the first name also spreads alone (part by part)
    assert [(b[s.start:s.end], s.label) for s in out[1]] == [("Quillaby Tarrant", "DOCTOR"), ("Quillaby", "PATIENT")]


def test_four_notes_a_name_found_once_is_replaced_part_by_part_everywhere():
    """Issue 14: after "Dr. Zyxwvutsson Qqplorvik saw pt." the surname alone must not stay in clear."""
    conf = load_config({"pipeline": {"stages": ["rules"], "mode": "mask"}})
    deid = build_deidentifier(conf, None, b"k" * 32)
    notes = [Note("n1", "Dr. Zyxwvutsson Qqplorvik saw pt. Plan per team.", "p1"),
             Note("n2", "Qqplorvik was seen again, no changes.", "p1"),
             Note("n3", "Discussed with zyxwvutsson by phone; QQPLORVIK aware.", "p1"),
             Note("n4", "Pt resting. Qqplorvik to follow up in am.", "p1")]
    res = deid.process_many(notes)
    for r in res:
        assert "qqplorvik" not in r.text.lower() and "zyxwvutsson" not in r.text.lower(), r.note_id
    assert {s.source for r in res[1:] for s in r.spans} == {"patient:propagate"}
    off = build_deidentifier(conf.override({"merge": {"propagate_parts": False}}), None, b"k" * 32)
    assert sum("Qqplorvik" in r.text for r in off.process_many(notes)) == 2  # whole strings only: leaks


def test_clinical_vocabulary_guard_never_spreads_clinical_words_abbreviations_or_drugs():
    """A name span that swallowed clinical words spreads only its name-like words, in and across notes."""
    a = "EPI Qqplorvik and Heparin Quexbury at bedside. EPI gtt."
    spans_a = [Span(0, 13, "PATIENT", "crf:single"), Span(18, 34, "PATIENT", "crf:single")]
    b = "EPI 0.1 started, TOL well, heparin gtt, Qqplorvik here; quexbury called. Levophed off."
    c = "TOL Pending. Levophed weaned."
    out = propagate_patient([(a, spans_a), (b, []), (c, [Span(0, 3, "PATIENT", "crf:single"),
                                                        Span(13, 21, "PATIENT", "crf:single")])], OPTS)
    assert [a[s.start:s.end] for s in out[0]] == ["EPI Qqplorvik", "Heparin Quexbury"]  # "EPI gtt" stays
    # no EPI, TOL, heparin, Levophed; "Heparin Quexbury" (a CRF guess over a clinical word) spreads its
    # known names only across notes (round 4: "Beta Blockers, Celebrex"), so "quexbury" stays
    assert [b[s.start:s.end] for s in out[1]] == ["Qqplorvik"]
    assert [c[s.start:s.end] for s in out[2]] == ["TOL", "Levophed"]  # the note's own spans, unchanged
    within = Merger("union", OPTS)(spans_a + [Span(a.rindex("EPI"), a.rindex("EPI") + 3, "PATIENT", "crf:single")], Doc(Note("x", a)), NoteState())
    assert [a[s.start:s.end] for s in within] == ["EPI Qqplorvik", "Heparin Quexbury", "EPI"]  # no repeat of EPI


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


def test_a_short_word_found_by_the_name_net_is_not_spread_as_a_name():
    """'tol' (tolerated) proposed once must not become a name in every note ("wean FIO2 as tol")."""
    a = "sheath d/c'd by fellow, tol well. Daughter Ymfgi called."
    spans = [Span(a.index("tol"), a.index("tol") + 3, "DOCTOR", "names:net"),
             Span(a.index("Ymfgi"), a.index("Ymfgi") + 5, "PATIENT", "names:net")]
    b = "P: wean FIO2 as tol. Ymfgi updated."
    out = propagate_patient([(a, spans), (b, [])], OPTS)
    assert [b[s.start:s.end] for s in out[1]] == ["Ymfgi"]


def test_a_lone_place_word_guessed_by_the_crf_stays_in_its_note_unless_context_found_it():
    """Tune-CV false positives: a clinical abbreviation the CRF took for a place in one note ("CVVH")
    spread to every note of the patient; a rule-found acronym or a known city still spreads."""
    a = "Renal: CVVH started. Transferred from BGH. Lives in Towson."
    spans_a = [Span(7, 11, "LOCATION-OTHER", "crf:single"), Span(38, 41, "HOSPITAL", "hospital-transfer"),
               Span(52, 58, "CITY", "crf:single")]
    b = "CVVH running. Records from BGH. Son in Towson."
    out = propagate_patient([(a, spans_a), (b, [])], OPTS)
    assert [b[s.start:s.end] for s in out[1]] == ["BGH", "Towson"]


def test_a_crf_name_over_a_clinical_phrase_and_drug_repeats_stay_in_clear():
    """Round 4 (tune-CV false positives): a CRF "name" over an allergy list ("Beta Blockers, Celebrex")
    no longer spreads whole to the patient's other notes, and a repeat that a dose, route or frequency
    follows ("Flovent bid", "Celebrex 400 mg") is a drug, not a name; a person's name and its words still
    spread, also before other words ("Qqplorvik called")."""
    a = "Allergies: Ca Beta Blockers, Celebrex. Flovent Quexbury given. Son Zyxw Qqplorvik here."
    spans_a = [Span(a.index("Beta"), a.index("Celebrex") + 8, "DOCTOR", "crf:single"),
               Span(a.index("Flovent"), a.index("Quexbury") + 8, "DOCTOR", "crf:single"),
               Span(a.index("Zyxw"), a.index("Qqplorvik") + 9, "PATIENT", "crf:single")]
    b = "Allergies: Ca Beta Blockers, Celebrex. Celebrex 400 mg po. Flovent bid. Qqplorvik called. Quexbury in."
    # "Flovent Quexbury" holds no dictionary word: both words spread, but not where a dose follows
    out = propagate_patient([(a, spans_a), (b, [])], OPTS)
    assert [b[s.start:s.end] for s in out[1]] == ["Qqplorvik", "Quexbury"]
    off = load_config({"merge": {"propagate_patient": True, "propagate_dosing_cues": []}}).merge
    spread = [b[s.start:s.end] for s in propagate_patient([(a, spans_a), (b, [])], off)[1]]
    assert "Flovent" in spread  # without the cues, the drug word spreads
    ruled = [Span(s.start, s.end, s.label, "name-title") for s in spans_a[:1]]
    assert [b[s.start:s.end] for s in propagate_patient([(a, ruled), (b, [])], OPTS)[1]] == [
        "Beta Blockers, Celebrex"]  # a rule's span (context) still spreads whole


def test_a_hyphenated_name_spreads_by_its_halves_and_clinical_halves_stay():
    """Round 6: "Oakes-Vantrell" found once; "Vantrell" or "Oakes" written alone later is replaced too."""
    a = "Wife Maren Oakes-Vantrell at bedside."
    b = "Vantrell called back. Oakes called. Quellor-PT eval, PT aware."
    c = "Son Quellor-PT here."
    out = propagate_patient([(a, [Span(5, 25, "PATIENT", "name-kin")]), (b, []),
                             (c, [Span(4, 14, "PATIENT", "name-kin")])], OPTS)
    assert [b[s.start:s.end] for s in out[1]] == ["Vantrell", "Oakes", "Quellor-PT"]  # never "PT" alone


def test_a_full_name_of_dictionary_words_found_by_context_spreads_across_notes():
    """Round 6: "GRACE LONG AWARE" (a rule) makes "GRACE LONG" a name in the patient's other notes;
    a CRF guess over the same words, or a phrase of dictionary words that are no names, stays in its note."""
    a = "RUN OF SVT. GRACE LONG AWARE."
    b = "LYTES REPLETED, GRACE LONG AND TEAM UPDATED. LONG WALK. HOLY CROSS."
    a2 = a + " Transfer from HOLY CROSS."
    place = a2.index("HOLY CROSS")
    rule = [Span(12, 22, "DOCTOR", "name-before-aware"), Span(place, place + 10, "HOSPITAL", "rules")]
    out = propagate_patient([(a2, rule), (b, [])], OPTS)
    assert [b[s.start:s.end] for s in out[1]] == ["GRACE LONG"]
    guess = propagate_patient([(a, [Span(12, 22, "DOCTOR", "crf:single")]), (b, [])], OPTS)
    assert guess[1] == []


def test_a_dictionary_word_name_spreads_only_after_a_person_cue():
    """Round 10: a name that is a dictionary word ("Pebble") spreads to its repeats right after a kin
    word, title or role, in the note and across the patient's notes, and nowhere else."""
    a = "Spoke with girlfriend (Pebble) at 1900; PEBBLE agrees with plan. Pebble stones on CT."
    b = "Bottles brought by girlfriend Pebble. GIRLFRIEND (PEBBLE) here; son-in-law pebble? pebble gravel."
    spans_a = [Span(a.index("PEBBLE"), a.index("PEBBLE") + 6, "PATIENT", "crf:single")]
    out = propagate_patient([(a, spans_a), (b, [])], OPTS)
    assert [(a[s.start:s.end], s.label) for s in out[0]] == [("Pebble", "PATIENT"), ("PEBBLE", "PATIENT")]
    assert [(b[s.start:s.end], b[s.start - 3:s.start]) for s in out[1]] == [
        ("Pebble", "nd "), ("PEBBLE", "D (")]  # a lower-case repeat ("son-in-law pebble") is as likely the word itself
    off = load_config({"merge": {"propagate_patient": True, "propagate_cue_words": [],
                                 "propagate_kin_words": []}}).merge
    assert propagate_patient([(a, spans_a), (b, [])], off) == [spans_a, []]


def test_a_name_that_is_a_function_word_does_not_spread_after_cues():
    """A patient named Will: "Wife will call", "Nurse will review" stay words, in the note and across notes."""
    a = "Patient: Will Barnes, 67M.\nWife will pick him up tomorrow. Nurse will call with results. Son will visit."
    b = "Doctor will review labs. WIFE WILL CALL. Wife May visit."
    spans_a = [Span(9, 20, "PATIENT", "crf:single")]
    out = propagate_patient([(a, spans_a), (b, [])], OPTS)
    assert [a[s.start:s.end] for s in out[0]] == ["Will Barnes"]
    assert out[1] == []


def test_a_repeat_after_a_kin_word_is_a_relative_and_after_a_title_keeps_its_label():
    """A name found as DOCTOR elsewhere, repeated after a kin word, is a relative (PATIENT in i2b2 2014)."""
    a = "Seen by Dr. Pebble today."
    b = "Her husband Pebble came along. Dr. Pebble aware."
    out = propagate_patient([(a, [Span(12, 18, "DOCTOR", "crf:single")]), (b, [])], OPTS)
    assert [(b[s.start - 4:s.start], s.label) for s in out[1]] == [("and ", "PATIENT"), ("Dr. ", "DOCTOR")]


def test_a_one_word_crf_guess_crosses_notes_only_after_a_person_cue():
    """Across notes a one-word CRF name (no rule or net behind it) spreads only where a cue stands."""
    a = "Neighbor Quorv asks about discharge."
    b = "Quorv scan read. Called neighbor Quorv."
    out = propagate_patient([(a, [Span(9, 14, "PATIENT", "crf:single")]), (b, [])], OPTS)
    assert [(s.start, b[s.start:s.end]) for s in out[1]] == [(33, "Quorv")]


def test_a_lower_case_repeat_spreads_only_after_the_kin_word_of_a_tagged_mention():
    """'father Royal' tagged: 'father royal' is the same relative; 'son royal' or 'royal blue' stay words."""
    a = "Her father Royal (50) visits."
    b = "father royal helps on weekends; son royal jelly? royal blue gown. Father ROYAL called."
    out = propagate_patient([(a, [Span(11, 16, "PATIENT", "crf:single")]), (b, [])], OPTS)
    assert [(b[s.start:s.end], b[s.start - 7:s.start].strip()) for s in out[1]] == [("royal", "father"),
                                                                                      ("ROYAL", "Father")]
    text = a + "\n" + b  # within one note too
    spans = Merger("union", OPTS)([Span(11, 16, "PATIENT", "crf:single")], Doc(Note("n", text)), NoteState())
    assert [text[s.start:s.end] for s in spans] == ["Royal", "royal", "ROYAL"]


def test_a_lower_case_kin_repeat_followed_where_no_name_stands_stays_a_word():
    """'daughter Hope' tagged: 'daughter hope to arrange' is the verb ('to' or 'that' after it), 'daughter hope
    called' the relative."""
    a = "HCP: daughter Hope (cell 555-201-3344)."
    b = "Plan: daughter hope to arrange rehab. daughter hope called; daughter hope will visit.\ndaughter hope"
    out = propagate_patient([(a, [Span(a.index("Hope"), a.index("Hope") + 4, "PATIENT", "crf:single")]), (b, [])], OPTS)
    assert [b[s.start - 9:s.end] for s in out[1]] == ["daughter hope"] * 3
    assert [s.start for s in out[1]] == [b.index("hope called"), b.index("hope will"), b.rindex("hope")]
    a = "HCP: daughter Hope Wren (cell 555-201-3344)."  # another word of her name follows
    b = "daughter hope wren visits daily."
    out = propagate_patient([(a, [Span(a.index("Hope"), a.index("Hope") + 9, "PATIENT", "crf:single")]), (b, [])], OPTS)
    assert [b[s.start:s.end] for s in out[1]] == ["hope"]
