"""Round 13 (issue 14): the merge-only login, id, room, age and date rules of conf/rules/{ids,ages,dates}.toml.

Their examples and negatives run in tests/test_rules.py; here: they stay out of the CRF's features, the
label-deciding ones beat the CRF's label in the shipped pipeline (default bundle), their spans stand there
with their extent, and look-alikes (doses, vitals, ranges, phone numbers, dates, lab values) stay clear of
them. Every example is invented.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.notes import Note
from tests.helpers_rules import shipped_deidentifier, span_stands

RULES = Path(__file__).resolve().parents[1] / "conf" / "rules"
IDS13 = ("username-dotted-by", "username-slash-dotted", "username-credential-paren", "mrn-record-hash", "mrn-pt-no",
         "healthplan-hash-is", "license-kind", "room-after-unit", "idnum-auth-bare", "idnum-ref-hash",
         "idnum-dictation-job", "account-client", "bioid-biobank-paren")
OTHERS13 = ("age-sex-slash", "date-mdy-year4", "date-birth-field", "date-med-rec")
DECIDING13 = (*IDS13, "date-birth-field", "date-med-rec")
ROUND13 = {r["id"]: r for f in ("ids", "ages", "dates") for r in tomllib.loads((RULES / f"{f}.toml").read_text())["rule"]
           if r["id"] in IDS13 + OTHERS13}


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("ids13")


def test_round13_rules_are_merge_only_and_the_id_rules_decide_their_label():
    assert set(ROUND13) == set(IDS13 + OTHERS13)
    sources = set(effective_config().merge.rule_label_sources)
    for rid, rule in ROUND13.items():
        assert rule.get("crf_feature") is False, rid
        assert (rid in sources) == (rid in DECIDING13), rid


@pytest.mark.parametrize("text,phi,label", [
    ("Verified by: MILLY.HANB   4/24/2020 1300", "MILLY.HANB", "USERNAME"),
    ("Signed by ivo.marsh on Monday", "ivo.marsh", "USERNAME"),
    ("Plan reviewed.\n\nSLP / IVO.MARSH", "IVO.MARSH", "USERNAME"),
    ("RECONCILED BY IVO MARSH, PHARMD (IMRS); REVIEWED BY DR. AMES.", "IMRS", "USERNAME"),
    ("Name: Ames, Ann   record #: 58401233\n", "58401233", "MEDICALRECORD"),
    ("Pt. No. 4821905", "4821905", "MEDICALRECORD"),
    ("Lab director on site. CLIA# 05D2087341", "05D2087341", "LICENSE"),
    ("she holds a commercial license (S72150046) and drives", "S72150046", "LICENSE"),
    ("Insurance: Aetna (ID 2QN9-ES7-JG44).", "2QN9-ES7-JG44", "HEALTHPLAN"),
    ("her plan # is XK99887766", "XK99887766", "HEALTHPLAN"),
    ("Location: 4E Oncology 414\nDate of consult: Monday", "414", "ROOM"),
    ("Pt Ames | Moffett Cardiac Unit E157 | Admit 12/10", "E157", "ROOM"),
    ("AGE/SEX: F/65\nORDERING: Dr. Ames", "65", "AGE"),
    ("Ann Ames (f/33), mrn 5355704, seen today", "33", "AGE"),
    ("EXAM: CHEST PA/LAT   DATE: 3/19/2013 2300", "3/19/2013", "DATE"),
    ("Date of birth: 3.6.71   MRN# 0000211111", "3.6.71", "DATE"),
    ("ADMISSION MED REC 2009/07/03; PT YR; COMPLETED BY PT", "2009/07/03", "DATE"),
    ("Home with VNA, auth FS63321497 through 1/14.", "FS63321497", "IDNUM"),
    ("TRANSFER CENTER CALL 11/7/2012 14:32, REF #19206999849: MERCY REQUESTING", "19206999849", "IDNUM"),
    ("ANN AMES, M.D.\nAA/rh/817071\nDD 01-04-19", "817071", "IDNUM"),
    ("Kimberly, MI | Client #7255-382172\nAMES, ANN", "7255-382172", "ACCOUNT"),
    ("Enrolled in the hospital biobank (BB-2017-508685).", "BB-2017-508685", "BIOID"),
])
def test_the_rule_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "ids13", text, phi, label)


@pytest.mark.parametrize("text", [
    # doses, vitals, lab values, ranges
    "insulin 1 unit 100.", "ICU 100 mg given", "Oncology 200 mg, daily", "M/2 mg po", "F/1.5 L", "F/U 2 weeks",
    "M/F 50/50", "ABG 7.29/65/135 on RA", "BP 120/80/2013x", "PA 45/20/15", "HR 88, RR 16, sat 97%",
    "auth 2 visits", "auth 12 PT visits", "claim # 12-3 approved", "biobank (2 samples)", "F/60% O2",
    # phone numbers and dates after id words
    "auth 617-555-1212.", "ticket 617-555-1212 called", "client # 617-555-1212", "record #: 617-555-1212",
    "Pt. No. 617-555-1212", "plan # is 617-555-1212", "CLIA # 617-555-1212", "pending auth 3/4/2020.",
    "ref #3/4/2020", "Pt. No. 03-04-2020", "Ticket 2019 closed", "plan # is 2019", "Medicine 2019.",
    "to ICU 1430.", "Medicine 2230\n", "med rec no. 20160327", "Med Rec #: 19530524",
    # names, titles, credentials, addresses
    "Signed by Dr.Ames", "reviewed by J.Ames", "created by Ann.Lee", "Plan / Dr.Ames",
    "seen by Ann Lee, MD (ICU)", "read by Ann Lee, MD (Cardiology)", "GROSSED BY ANN LEE, PA(ASCP).",
    "12 Elm St Unit 204, Town", "16900 Ames Spurs Unit 126\nTown, FL", "born 3.5 kg", "DOB: 3.6.7",
])
def test_look_alikes_get_no_round13_span(deid, text):
    res = deid.process(Note("ids13", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND13]


# Review of round 13 (review13i): invented look-alikes the first version of the rules tagged.
@pytest.mark.parametrize("text", [
    # a dotted pair of ordinary words after 'by' / a slash is a missing space, not a login
    "TAKEN BY MOUTH.TOLERATED WELL", "SENT BY FAX.WILL F/U IN AM", "REVIEWED BY TEAM.PLAN UNCHANGED",
    "BP stable / tol.po\n", "Plan: diuresis / neb.tx\n",
    # a service, training year or degree in brackets after a signer is not a login
    "by Ann Lee, MD (ONCOLOGY) today", "read by Ann Lee, MD (UROLOGY)", "by Ann Lee, MD (ANESTHESIA) at bedside",
    "seen by Ann Lee, MD (PGY3) today", "by Ann Lee, RN (BSN)",
    # durations, sizes and scores after a sex-letter slash
    "Vent f/15 minutes trial", "nodule f/2 cm", "seen f/3 episodes", "F/10 score", "pt M/24 hours",
    # drips, saline and power changed to a value; vitals in the 80s / 40s
    "changed to 1N", "reduced to 2N", "changed to 15W", "ablation power changed to 30W", "titrate to 10W",
    "decreased from 30W", "SBP 80 S AWARE", "HR 40 S AWARE",
    # a year after an id word; units on a line of frequent abbreviations
    "record # 2019", "medical license 2019 renewal", "BP/hr/1200\n", "US/kg/1000\n",
])
def test_review13i_look_alikes_get_no_round13_span(deid, text):
    res = deid.process(Note("ids13", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND13 or s.source == "department-direction"]


@pytest.mark.parametrize("text,street", [
    ("12 Elm Gardens Unit 117, Town, NM", "12 Elm Gardens Unit 117"),
    ("Pt lives at 4 Oak Village Unit 220, Town", "4 Oak Village Unit 220"),
])
def test_review13i_an_address_unit_is_not_a_room(deid, text, street):
    """A house number of any length before the unit word: the unit number stays in the street."""
    res = deid.process(Note("ids13", text))
    assert res.ok and not [s for s in res.spans if s.source == "room-after-unit"]


@pytest.mark.parametrize("text,phi,label", [
    ("Location: 4 West Cardiac Unit 412\n", "412", "ROOM"),
    ("Transferred to 7N overnight", "7N", "DEPARTMENT"),
    ("if stable, 10 e aware.", "10 e", "DEPARTMENT"),
    ("Signed by ivo.marsh on Monday", "ivo.marsh", "USERNAME"),
    ("READ BY: ANN LEE, MD (LEE) FRI 2/8/2008", "LEE", "USERNAME"),
    ("ANN AMES, M.D.\nAA/rh/817071\nDD 01-04-19", "817071", "IDNUM"),
])
def test_review13i_positives_still_stand(deid, text, phi, label):
    res = deid.process(Note("ids13", text))
    start = text.rindex(phi)
    assert res.ok and (start, start + len(phi), label) in {(s.start, s.end, s.label) for s in res.spans}


@pytest.mark.parametrize("text", ["PT. NO. 2000 ML", "Pt. no. 1500cc out", "transferred to ICU 2400."])
def test_review13i_volumes_and_midnight_are_no_id(deid, text):
    res = deid.process(Note("ids13", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND13]


@pytest.mark.parametrize("prefix", ["auth ", "ticket ", "Client #", "biobank (", "Pt. No. 1234"])
def test_review13i_an_id_word_before_a_long_dash_run_reads_in_linear_time(prefix):
    """'auth 1-1-1-…': an id that must not be followed by a dash is taken whole or not at all (atomic),
    not given back one character at a time (quadratic: a ratio near 50-90 before the fix)."""
    from deid_core.config import load_config
    from deid_core.doc import Doc
    from deid_core.engine.rules.tagger import RuleTagger
    from tests.adversarial import growth

    tagger = RuleTagger(load_config({"rules": {"min_age": 0}}).rules)

    def make(n: int) -> str:
        return (prefix + "1-" * n)[:n]

    ratio = min(growth(lambda t: tagger.tag_raw(Doc(Note("t", t))), make)[2] for _ in range(2))
    assert ratio < 25, (prefix, ratio)


@pytest.mark.parametrize("text,phi", [
    ("she holds a state licence (S72150046) and drives", "S72150046"),
    ("nursing licence (RN4821905) on file", "RN4821905"),
])
def test_review13i_the_licence_spelling_passes_the_trigger_gate(deid, text, phi):
    """The pattern reads 'licen[cs]e': its triggers must hold both spellings, or the gate drops the match."""
    res = deid.process(Note("ids13", text))
    start = text.index(phi)
    assert res.ok and (start, start + len(phi), "LICENSE", "license-kind") in {
        (s.start, s.end, s.label, s.source) for s in res.spans}


@pytest.mark.parametrize("text", ["CO/CI/SVR 5/3/1900 on milrinone", "CI/CO/SVR: 2/4/2040", "HR/CO/SVR 9/4/2010"])
def test_review13i_a_hemodynamic_run_with_a_year_like_svr_is_no_date(deid, text):
    """date-mdy-year4 outranks the lab-run suppressor for 'PA/LAT … 3/19/2013'; not after a header of
    three haemodynamic labels, whose third value (SVR) can fall in 1900-2099."""
    res = deid.process(Note("ids13", text))
    assert res.ok and not [s for s in res.spans if s.source == "date-mdy-year4"]
