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
from deid_core.bundle import load_bundle
from deid_core.engine.pipeline import build_deidentifier
from deid_core.notes import Note

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
    return build_deidentifier(effective_config(), load_bundle(), b"ids13-test-key-0123456789abcdefghij")


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
    res = deid.process(Note("ids13", text))
    start = text.index(phi)
    assert res.ok and (start, start + len(phi), label) in {(s.start, s.end, s.label) for s in res.spans}


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
