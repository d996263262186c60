"""Initials standing for a person (engine/initials.py): the patient's as the subject of a note, a clinician's
where a note signs with them; in the note and across the patient's notes (invented text)."""

import pytest

from deid_core.config import load_config
from deid_core.engine.initials import (
    doctor_initials,
    metadata_initials,
    name_initials,
    not_clinician_initials,
    patient_initials,
)
from deid_core.engine.propagation import propagate_patient
from deid_core.spans import Span

VERBS = ["states", "says"]
ROLES = ["pt", "md", "rn", "np"]
OPTS = load_config({"merge": {"propagate_patient": True}}).merge


def _at(text: str, part: str, label: str = "PATIENT", source: str = "crf:single", nth: int = 0) -> Span:
    i = -1
    for _ in range(nth + 1):
        i = text.index(part, i + 1)
    return Span(i, i + len(part), label, source)


def _found(spans, text):
    return [(text[s.start:s.end], s.label) for s in spans]


def test_name_initials_in_writing_order_and_given_name_first_when_inverted():
    assert name_initials("Quenby Tarrow") == {"QT"}
    assert name_initials("Quenby K. Tarrow") == {"QKT", "QT"}
    assert name_initials("Tarrow, Quenby") == {"QT"}
    assert name_initials("Tarrow") == set()
    assert name_initials("Ann Bo Cy Dee") == set()


def test_initials_beside_the_name_and_as_the_subject_are_the_patient():
    text = ("Pt: Tarrow, Quenby (QT)   41 YO F\nS: QT is a 41 yo woman. QT states she slept.\n"
            "Pt QT, 41F, from home. qt (41 f) with pain.")
    out = patient_initials([_at(text, "Tarrow, Quenby")], text, VERBS, ROLES)
    assert _found(out, text) == [("Tarrow, Quenby", "PATIENT")] + [("QT", "PATIENT")] * 4 + [("qt", "PATIENT")]
    assert {s.source for s in out[1:]} == {"initials:propagate"}


def test_initials_a_crf_read_as_a_doctor_become_the_patient():
    text = "PT TARROW, QUENBY (QT) 29YO MALE"
    spans = [_at(text, "TARROW, QUENBY"), _at(text, "QT", "DOCTOR")]
    assert _found(patient_initials(spans, text, VERBS, ROLES), text) == [("TARROW, QUENBY", "PATIENT"), ("QT", "PATIENT")]


def test_initials_without_the_context_or_the_name_stay_clear():
    text = ("Quenby Tarrow admitted. QT prolonged on ECG; QT interval 480. Abdominal imaging (QT) done. "
            "Pt QT measured twice. Qt is a 41 yo.")
    spans = [_at(text, "Quenby Tarrow")]
    assert patient_initials(spans, text, VERBS, ROLES) == spans
    other = "Pt: Ulmo Brisk (UB). CT is a 41 yo. Pt CT, 41F."  # CT is no initials of a name here
    assert _found(patient_initials([_at(other, "Ulmo Brisk")], other, VERBS, ROLES), other) == [("Ulmo Brisk", "PATIENT"),
                                                                                        ("UB", "PATIENT")]
    doctor = "Dr. Quenby Tarrow (QT) saw him."  # a clinician's initials: only PATIENT names count
    assert patient_initials([_at(doctor, "Quenby Tarrow", "DOCTOR")], doctor, VERBS, ROLES) == [
        _at(doctor, "Quenby Tarrow", "DOCTOR")]


def test_initials_inside_another_span_are_left_alone():
    text = "Pt: Quenby Tarrow. ID QT-1 | QT is a 41 yo"
    spans = [_at(text, "Quenby Tarrow"), _at(text, "QT is a 41", "DATE")]
    assert patient_initials(spans, text, VERBS, ROLES) == spans


def test_initials_cross_the_patients_notes_to_a_note_without_the_name():
    a = "Pt: Tarrow, Quenby (QT) 41 YO F"
    b = "PT QT, 41F, BIBA FROM HOME.\nHPI: QT IS A 41 Y/O FEMALE. CT and QT interval normal."
    out = propagate_patient([(a, [_at(a, "Tarrow, Quenby")]), (b, [])], OPTS)
    assert _found(out[1], b) == [("QT", "PATIENT"), ("QT", "PATIENT")]
    off = load_config({"merge": {"propagate_patient": True, "patient_initials": False}}).merge
    assert propagate_patient([(a, [_at(a, "Tarrow, Quenby")]), (b, [])], off)[1] == []


def test_a_clinicians_initials_where_the_note_signs_with_them_are_the_doctor():
    text = ("0800  TURNED L SIDE  QV\n1200 | 98% | QV\nINITIALS KEY: QV = QUINN VARGO, RN\n"
            "QV/kb/99120\nTech QV.\nDictated by QV\n")
    spans = [_at(text, "QUINN VARGO", "DOCTOR")]
    out = doctor_initials(spans, text, ROLES)
    assert _found(out, text) == [("QV", "DOCTOR")] * 3 + [("QUINN VARGO", "DOCTOR")] + [("QV", "DOCTOR")] * 3


def test_a_clinicians_initials_elsewhere_or_credentials_stay_clear():
    text = "Quinn Vargo, MD saw her. QV wave noted; QV interval normal. Per QV protocol. (QV) MD"
    spans = [_at(text, "Quinn Vargo", "DOCTOR")]
    assert doctor_initials(spans, text, ROLES) == spans
    md = "Mara Dunn  MD\nsigned by MD"  # the initials 'MD' of Mara Dunn are a credential
    assert doctor_initials([_at(md, "Mara Dunn", "DOCTOR")], md, ROLES) == [_at(md, "Mara Dunn", "DOCTOR")]
    patient = "Pt Quinn Vargo.\nturned  QV"  # only DOCTOR names give clinicians' initials
    assert doctor_initials([_at(patient, "Quinn Vargo")], patient, ROLES) == [_at(patient, "Quinn Vargo")]


def test_a_clinicians_initials_cross_the_patients_notes():
    a = "Attending: Quinn Vargo, MD"
    b = "GM/QV/120\nCT and QV noted"
    out = propagate_patient([(a, [_at(a, "Quinn Vargo", "DOCTOR")]), (b, [])], OPTS)
    assert _found(out[1], b) == [("QV", "DOCTOR")]


def test_the_metadata_names_give_initials_and_a_middle_initial_is_allowed_for_the_patient_only():
    known = (("Quenby", "PATIENT"), ("Tarrow", "PATIENT"), ("Ulmo Brisk", "DOCTOR"))
    assert metadata_initials(known, "PATIENT") == {"QT"}
    assert metadata_initials(known, "DOCTOR") == {"UB"}
    text = "Pt (QKT) 20yo female. qkt is a 20 yo. UKB  \nturned  UB\nlabs neg"
    out = patient_initials([], text, VERBS, ROLES, metadata_initials(known, "PATIENT"))
    assert _found(out, text) == [("QKT", "PATIENT"), ("qkt", "PATIENT")]  # lower case: before an age only
    out = doctor_initials([], text, ROLES, metadata_initials(known, "DOCTOR") | {"NG"})
    assert _found(out, text) == [("UB", "DOCTOR")]  # no middle initial on the clinicians' side ('UKB', 'neg')


def test_a_word_of_not_initials_is_never_initials():
    known = (("Pina", "PATIENT"), ("Tarrow", "PATIENT"))  # P. T.: 'pt states' is the patient, not a name
    text = "pt states pain is controlled. Seen with pt, resting. PT is a 41 yo."  # an age: the subject
    out = patient_initials([], text, VERBS, ROLES, metadata_initials(known, "PATIENT"))
    assert [(text[s.start - 4:s.end], s.label) for s in out] == [("ng. PT", "PATIENT")]


KEYS = ["d", "dd", "dt", "dict", "dictated", "transcribed"]


def test_a_dictation_trailers_initials_are_the_doctor():
    from deid_core.engine.initials import dictation_initials

    cases = [("QUINN VARGO, M.D.\nQV/kb/994606\nD: 3/29/2009 2300", ["QV", "kb"]),
             ("accompanied him.\n\nqvr/db   DD: 1/30/11\n", ["qvr", "db"]),
             ("seen.\n\nQV/p696902\nDD: 2/6/23", ["QV"]),
             ("end.\nTCD:MC:21-22\nDictated: June 19, 2011", ["TCD", "MC"])]
    for text, found in cases:
        assert [text[s.start:s.end] for s in dictation_initials([], text, KEYS)] == found, text
    assert {s.label for s in dictation_initials([], cases[0][0], KEYS)} == {"DOCTOR"}


def test_lines_that_are_no_dictation_trailer_stay_clear():
    from deid_core.engine.initials import dictation_initials

    for text in ["A/P: stable\nD: 3/4 reviewed", "BP/HR\nT 98.6", "HEENT NC/AT\nD: 3/4", "NC/AT\nDD none",
                 "labs\nI/O 500/200\nD: 5", "QV/kb/994606\nplan: home", "QV\nD: 3/29"]:
        assert dictation_initials([], text, KEYS) == [], text
    assert dictation_initials([], "QV/kb\nD: 3/29", []) == []
    text = "QV/kb/99\nD: 3/29"  # inside another span: left alone
    ident = Span(0, 8, "IDNUM", "crf:single")
    assert dictation_initials([ident], text, KEYS) == [ident]


PRONOUNS_AND_KIN = [  # (the patient's name, a sentence of the note): no word here is the patient's initials
    ("Sarah Evans", "Patient: Sarah Evans, 67 yo F\nshe states it is worse; she feels tired."),
    ("Mary Moore", "Patient: Mary Moore\nmom states she ate. mom wants to go home."),
    ("Helen Edwards", "Patient: Helen Edwards\nhe states he slept. HE STATES PAIN."),
    ("Dan Dodd", "Patient: Dan Dodd\ndad wants a call. DAD WANTS A CALL."),
    ("Ian Thomas", "Patient: Ian Thomas\nit states on the label: IT SAYS so."),
    ("Sam Nguyen", "Patient: Sam Nguyen\nson states he is fine; SHE SAYS no."),
    ("Olivia Nguyen", "Patient: Olivia Nguyen\nplan: pt on\nheparin gtt."),
    ("Emma Davis", "Patient: Emma Davis\nThe ED is a 24 bed unit."),
]


def test_pronouns_kin_and_function_words_are_never_the_patients_initials():
    for name, text in PRONOUNS_AND_KIN:
        spans = [_at(text, name)]
        assert patient_initials(spans, text, OPTS.patient_initials_verbs, OPTS.not_initials) == spans, text
    kept = "Patient: Sarah Evans\nSE states she slept. SKE is a 67 yo. se says no. ske is a 67 yo."  # real initials
    out = patient_initials([_at(kept, "Sarah Evans")], kept, OPTS.patient_initials_verbs, OPTS.not_initials)
    assert _found(out, kept)[1:] == [("SE", "PATIENT"), ("SKE", "PATIENT"), ("se", "PATIENT"), ("ske", "PATIENT")]


CLINICAL_LINE_ENDS = [  # (a clinician's name, the note): routes, frequencies, O2 devices and words stay clear
    ("Peter Olsen", "Attending: Peter Olsen, MD\nTylenol 650 mg  PO\nLasix 20 mg  PO"),
    ("Rachel Adams", "Attending: Rachel Adams, MD\nSpO2 97%  RA"),
    ("Brian Ian Davis", "Attending: Brian Ian Davis, MD\nmetoprolol 25 mg  BID"),
    ("Nancy Clark", "Attending: Nancy Clark, MD\nO2 2 L via  NC"),
    ("Oscar Reyes", "Attending: Oscar Reyes, MD\nand/or\nper family"),
]


def test_clinical_abbreviations_and_words_at_a_line_end_are_no_clinicians_initials():
    for name, text in CLINICAL_LINE_ENDS:
        spans = [_at(text, name, "DOCTOR")]
        assert doctor_initials(spans, text, OPTS.not_initials, (), not_clinician_initials(OPTS)) == spans, text
    kept = "Attending: Paul Quist, MD\nTylenol 650 mg  PO\nturned  PQ"  # his own initials still sign
    assert _found(doctor_initials([_at(kept, "Paul Quist", "DOCTOR")], kept, OPTS.not_initials, (),
                                  not_clinician_initials(OPTS)), kept) == [("Paul Quist", "DOCTOR"), ("PQ", "DOCTOR")]
    signed = "Attending: Ann Sole, MD\nTURNED L SIDE  AS\nSupervising: Mia Gale\nSupervising: MG"  # exactly theirs
    spans = [_at(signed, "Ann Sole", "DOCTOR"), _at(signed, "Mia Gale", "DOCTOR")]
    out = doctor_initials(spans, signed, OPTS.not_initials, (), not_clinician_initials(OPTS))
    assert [w for w, _ in _found(out, signed)] == ["Ann Sole", "AS", "Mia Gale", "MG"]


def test_a_dictionary_word_that_is_exactly_the_initials_stays_the_patient():
    text = "Patient: Dana Shore\nDDS is a 71 yo. DDS, 71F. DDS states."  # a middle initial before an age
    out = patient_initials([_at(text, "Dana Shore")], text, OPTS.patient_initials_verbs, OPTS.not_initials)
    assert _found(out, text)[1:] == [("DDS", "PATIENT")] * 2


FLOWSHEET = ("Flowsheet 10/15\n2300  SOFA 6  turned L side  qvd\n2330  albuterol 20 g q6h given  QVD\n"
             "0100  SpO2 97%  RA\n6:30 PM  cousin at bedside  qvd\n0200  stool x2  BM\nmidnight  pain 2/10  | KLM\n")


def test_initials_signing_a_flowsheets_rows_are_the_doctor_whoever_they_are():
    from deid_core.engine.initials import flowsheet_initials

    out = flowsheet_initials([], FLOWSHEET, OPTS.not_initials, not_clinician_initials(OPTS))
    assert _found(out, FLOWSHEET) == [("qvd", "DOCTOR"), ("QVD", "DOCTOR"), ("qvd", "DOCTOR"), ("KLM", "DOCTOR")]


def test_row_ends_that_are_words_routes_credentials_or_one_row_stay_clear():
    from deid_core.engine.initials import flowsheet_initials

    clinical = not_clinician_initials(OPTS)
    for text in ["2300  turned L side  qvd\nplan: home  qvd\n",  # one row a time opens; the other is no row
                 "2300  SpO2 97%  RA\n2330  albuterol  PO\n0100  to chair  RN\n",  # route, device, credential
                 "2300  stool  BM\n2330  drain  cc\n0100  site  pin\n",  # frequent, dictionary words
                 "2300 turned qvd\n2330 given qvd\n",  # no column break before the word
                 "Meds given  qvd\nturned  qvd\n"]:  # no time opens the lines
        assert flowsheet_initials([], text, OPTS.not_initials, clinical) == [], text
    text = FLOWSHEET
    inside = Span(text.index("QVD"), text.index("QVD") + 3, "USERNAME", "crf:single")
    out = flowsheet_initials([inside], text, OPTS.not_initials, clinical)
    assert inside in out and ("QVD", "DOCTOR") not in _found(out, text)
    assert flowsheet_initials([], text, OPTS.not_initials, clinical) != []


@pytest.mark.parametrize("text", [  # review13n: a flowsheet's own column values at its rows' ends, no signer
    "0800  Rhythm  SR\n1000  Rhythm  ST\n1200  Rhythm  AF\n",  # one row each: a value, not a signature
    "0800  Dressing  C/D/I  dry\n1000  Site  CDI\n1200  Site  CDI\n",  # the same row repeated
    "0800  Pupils  PERRL  eq\n1000  Pupils  PERRL  eq\n",
    "0800  Output  urine  qs\n1200  Output  urine  qs\n",
    "0800  O2  2L  NC\n1200  O2  4L  FM\n1600  O2  BiPAP  NIV\n",
    "0800  Skin  intact  wnl\n1200  Skin  intact  WDL\n",
    "0800  Edema  +1  LE\n1200  Edema  +2  BLE\n",
    "0800  Temp  98.6  TM\n1200  Temp  99.1  AX\n",
    "0800  sputum  thick  yel\n1200  sputum  thin  wht\n",
    "0800  GCS  15  ao\n1200  GCS  14  aox\n",
    "0800  Activity  OOB  chr\n1200  Activity  ambulated  amb\n",
    "0800  morphine 2 mg  IV\n1200  zofran 4 mg  IV\n1600  Rhythm  AF\n",  # a route is no signer either
    "0800  NS 20 ml/h  KVO\n1200  flushed  KVO\n",  # lines, tubes and devices of clinical_not_initials
    "0800  legs  SCD\n1200  on, both legs  SCD\n",
    "0800  O2  2  LPM\n1200  O2 via NC  4  LPM\n",
    "0800  ETT 7.5 at 22 cm  ETT\n1200  suctioned via  ETT\n",
])
def test_a_flowsheets_column_values_at_row_ends_are_no_signature(text):
    from deid_core.engine.initials import flowsheet_initials

    assert _found(flowsheet_initials([], text, OPTS.not_initials, not_clinician_initials(OPTS)), text) == []
