"""Issue 14's own list of miss kinds (invented examples, several phrasings, case variants and positions
in the line) through the default pipeline of conf/deidentify.toml without its CRF stage (rules, names
stage, merge, propagation), so that what the rules find is pinned whatever model is shipped; and the
label decisions of round 6 against CRF spans of another label."""

from __future__ import annotations

import pytest

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.merge import union_merge
from deid_core.engine.pipeline import build_deidentifier, build_stage
from deid_core.notes import Note
from deid_core.spans import Span

DEID = build_deidentifier(load_config({"pipeline": {"stages": ["rules", "names"]}}), None, b"k" * 32)

# (text, [(phi string, label), ...]): each string must come out as one span of that label.
FOUND = [
    # initials standing for a person
    ("JT is a 45 yo man admitted with CP.", [("JT", "PATIENT"), ("45", "AGE")]),
    ("Seen today.\nMW is a 67 year old man with COPD.", [("MW", "PATIENT")]),
    ("Assessment: QF is a 71-y/o with bipolar disorder.", [("QF", "PATIENT")]),
    ("S: RW IS A 66 YR OLD MAN", [("RW", "PATIENT")]),
    ("Dictated by Dr. Quorvan\nAB/cd", [("AB", "DOCTOR"), ("cd", "DOCTOR")]),
    ("Thank you.\nMK:jl\nD: 04/02/2019", [("MK", "DOCTOR"), ("jl", "DOCTOR")]),
    ("Electronically signed.\nHV/DVR/tb\nDD: 7/21/19", [("HV", "DOCTOR"), ("DVR", "DOCTOR"), ("tb", "DOCTOR")]),
    ("QS / KL / mn", [("QS", "DOCTOR"), ("KL", "DOCTOR"), ("mn", "DOCTOR")]),
    # facilities
    ("Recently discharged from St. Brigid's after a fall.", [("St. Brigid's", "HOSPITAL")]),
    ("Followed at saint luke's for dialysis.", [("saint luke's", "HOSPITAL")]),
    ("Transferred from Harwick Regional for cath.", [("Harwick Regional", "HOSPITAL")]),
    ("Follows with cardiology, f/u NWH in 2 weeks.", [("NWH", "HOSPITAL")]),
    ("Pt was transferred from KMC overnight.", [("KMC", "HOSPITAL")]),
    # ages in every form
    ("Pt is a 48 YO male with HTN.", [("48", "AGE")]),
    ("83yo female, fell at home.", [("83", "AGE")]),
    ("Now 64 years old, retired.", [("64", "AGE")]),
    ("Her children, ages 8 and 11, are with her sister.", [("8", "AGE"), ("11", "AGE")]),
    ("Father died at 71 of a stroke.", [("71", "AGE")]),
    ("Son (52) is the HCP.", [("52", "AGE")]),
    ("BRADLEY, KEITH   61 F   ADM 3/2", [("61", "AGE")]),
    ("wife, 59, at bedside", [("59", "AGE")]),
    ("pt turns 45 next week", [("45", "AGE")]),
    ("SHE JUST TURNED 80.", [("80", "AGE")]),
    # ids with spaces, biobank and device ids, user names
    ("MRN: 482 19 05", [("482 19 05", "MEDICALRECORD")]),
    ("Medical record # 55 301 882", [("55 301 882", "MEDICALRECORD")]),
    ("Biobank ID: BB-0042-7731", [("BB-0042-7731", "BIOID")]),
    ("Pacemaker serial number PJN449201X", [("PJN449201X", "DEVICE")]),
    ("E-signed by xyz9 on 03/14/2019", [("xyz9", "USERNAME")]),
    ("Signed by qdrawe on Monday, May 4", [("qdrawe", "USERNAME")]),
    ("E-signed by VKLI 6/3/2020 noon", [("VKLI", "USERNAME")]),
    ("Verified by: ZNAL   7/26/2020 2200", [("ZNAL", "USERNAME")]),
    ("Privacy review: chart accessed by tovanej (Jo Tovane) on 5/1", [("tovanej", "USERNAME")]),
    ("Jane Orwell, RN / JORW", [("JORW", "USERNAME")]),
    # states after a city, lower case too
    ("Lives in Fairbury, Nebraska with wife.", [("Fairbury", "CITY"), ("Nebraska", "STATE")]),
    ("address: 12 Elm St, Kentwood, MI 49508", [("Kentwood", "CITY"), ("MI", "STATE"), ("49508", "ZIP")]),
    ("12 oak hollow, fernbrook, ks 66001", [("fernbrook", "CITY"), ("ks", "STATE")]),
    ("SH: lives quarrow, wi with her father", [("quarrow", "CITY")]),
    ("He moved from Dover, DE last year.", [("Dover", "CITY")]),
    # rooms, beds, departments
    ("Pt moved to Rm 4N12 at 0200.", [("4N12", "ROOM")]),
    ("in bay C114 on the unit", [("C114", "ROOM")]),
    ("Transferred to Tower 5 Telemetry overnight.", [("Tower 5 Telemetry", "DEPARTMENT")]),
    ("Admitted to Blue 3 CCU.", [("Blue 3 CCU", "DEPARTMENT")]),
    # ordinal, weekday-plus-date and dotted dates (a weekday and its date are two spans)
    ("Follow-up on the 9th with cardiology.", [("9th", "DATE")]),
    ("Return on Tuesday the 21st.", [("Tuesday", "DATE"), ("21st", "DATE")]),
    ("Echo Wed 3.14 normal", [("Wed", "DATE"), ("3.14", "DATE")]),
    ("Labs drawn 03.14.2019", [("03.14.2019", "DATE")]),
    # employers and organizations, landmarks
    ("Works at Harbor Freight as a manager.", [("Harbor Freight", "ORGANIZATION")]),
    ("Home with First Baptist Church when stable.", [("First Baptist Church", "ORGANIZATION")]),
    ("MOLECULAR TESTING SENT TO QUEST DIAGNOSTICS, X", [("QUEST DIAGNOSTICS", "ORGANIZATION")]),
    ("To the school nurse, Harrow Academy:", [("Harrow Academy", "ORGANIZATION")]),
    ("since he lost his job at sutton, quail and moreno. Reports", [("sutton, quail and moreno", "ORGANIZATION")]),
    ("WORKS AS A CORPORATE INVESTMENT BANKER AT VORTANA.", [("VORTANA", "ORGANIZATION")]),
    ("Employer: Halvorsen Plumbing", [("Halvorsen Plumbing", "ORGANIZATION")]),
    ("FALL AT ASHBY NATIONAL PARK TUESDAY.", [("ASHBY NATIONAL PARK", "LOCATION-OTHER")]),
    ("Walks near Linden Pond daily.", [("Linden Pond", "LOCATION-OTHER")]),
]

# (text, words that must not be inside any span)
CLEAN = [
    ("PT is a 45 yo man with CP.", ["PT"]),
    ("HPI: PT is a 45 yo man.", ["PT"]),
    ("Exam:\nCTA/RRR/soft\nPlan: diuresis", ["CTA", "RRR", "soft"]),
    ("Code: DNR/DNI/ok with family", ["DNR", "DNI"]),
    ("consent signed by patient on 3/4", ["patient"]),
    ("SIGNED BY HUSBAND ON 3/4", ["HUSBAND"]),
    ("signed by RN on 3/4", ["RN"]),
    ("Pt turned 30 degrees q2h, turned 2 times overnight.", ["30", "2"]),
    ("went to church on Sunday", ["church"]),
    ("STARTED NURSING SCHOOL IN MAY; BACK TO WORK", ["SCHOOL"]),
    ("works at home, nights and weekends", ["home", "nights"]),
    ("lives alone, ok with plan", ["alone", "ok"]),
    ("moved from bed, in pain", ["bed"]),
    ("Fall in the Nurses Station.", ["Nurses", "Station"]),
]


def _spans(text: str) -> set[tuple[str, str]]:
    res = DEID.process(Note("n", text))
    assert res.ok
    return {(text[s.start:s.end], s.label) for s in res.spans}


@pytest.mark.parametrize(("text", "wanted"), FOUND, ids=[t[:40] for t, _ in FOUND])
def test_miss_kinds_of_issue_14_are_found_with_their_label(text, wanted):
    got = _spans(text)
    for phi, label in wanted:
        assert (phi, label) in got, (phi, label, sorted(got))


@pytest.mark.parametrize(("text", "words"), CLEAN, ids=[t[:40] for t, _ in CLEAN])
def test_lookalikes_of_those_kinds_stay_clear(text, words):
    got = _spans(text)
    for word in words:
        assert not any(word in s for s, _ in got), (word, sorted(got))


def _at(text: str, part: str, label: str) -> Span:
    start = text.index(part)
    return Span(start, start + len(part), label, "crf:single", 0.9)


def test_round_6_rules_decide_their_label_over_the_crf():
    """A login word after 'Signed by', initials before 'is a 45 yo' and a name before an organization
    kind and a relative's name after a kin word keep the rule's label where the CRF read DOCTOR or HOSPITAL;
    elsewhere the CRF's label stands."""
    config = load_config()
    rules, merge = build_stage(config, "rules", None), union_merge(config)
    text = ("Seen today.\nMW is a 67 year old man.\nHome with First Baptist Church.\nSigned by qdrawe on 5/4\n"
            "Talked to Orlan Vesk.\nHe came with his niece, Dorya Tasmel, today.\n")
    doc = Doc(Note("n", text))
    crf = [_at(text, "MW", "DOCTOR"), _at(text, "Baptist Church", "HOSPITAL"), _at(text, "qdrawe", "DOCTOR"),
           _at(text, "Orlan Vesk", "DOCTOR"), _at(text, "Dorya Tasmel", "DOCTOR")]
    got = {text[s.start:s.end]: s.label for s in merge([*rules.tag(doc), *crf], doc)}
    assert got["MW"] == "PATIENT"
    assert got["First Baptist Church"] == "ORGANIZATION"
    assert got["qdrawe"] == "USERNAME"
    assert got["Dorya Tasmel"] == "PATIENT"
    assert got["Orlan Vesk"] == "DOCTOR"
