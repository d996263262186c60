"""Label decisions around the merge (engine/label_decisions.py): CRF spans cut at line breaks, deciding
rules' labels over the CRF's, identifiers grown to their whole word, person spans cut to the names; and the same through the real
rules stage and union merge of the default configuration (invented text)."""

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.label_decisions import (
    drop_role_word_logins,
    kin_person_labels,
    person_field_labels,
    place_head_labels,
    place_heads,
    rule_labels_win,
    split_crf_lines,
    title_labels,
    trim_person_spans,
    whole_words,
)
from deid_core.engine.merge import union_merge
from deid_core.engine.pipeline import build_stage
from deid_core.notes import Note
from deid_core.spans import Span


def _at(text: str, part: str, label: str, source: str) -> Span:
    i = text.index(part)
    return Span(i, i + len(part), label, source)


def test_crf_span_over_a_line_break_becomes_one_span_per_line():
    text = "Memorial Hospital of Quillby\nQuillby, Oregon\n"
    crf = Span(0, text.index(","), "HOSPITAL", "crf:single")
    out = split_crf_lines([crf], text)
    assert [(text[s.start:s.end], s.label) for s in out] == [("Memorial Hospital of Quillby", "HOSPITAL"),
                                                            ("Quillby", "HOSPITAL")]
    rule = Span(0, 40, "HOSPITAL", "hospital-keyword")  # rule spans are never cut
    assert split_crf_lines([rule], text) == [rule]


def test_deciding_rule_keeps_its_label_and_the_crf_keeps_its_remainder():
    text = "ins Zorbacare 855811954A | ref"
    crf = _at(text, "ins Zorbacare 855811954", "HOSPITAL", "crf:single")
    rule = _at(text, "855811954A", "HEALTHPLAN", "healthplan-payer")
    out = rule_labels_win([crf, rule], text, ["healthplan-*"])
    assert sorted((text[s.start:s.end], s.label) for s in out) == [("855811954A", "HEALTHPLAN"),
                                                                  ("ins Zorbacare", "HOSPITAL")]
    # a rule not listed does not decide; a CRF span of the same label is left to the policy
    assert rule_labels_win([crf, rule], text, ["fax"]) == [crf, rule]
    same = _at(text, "855811954A", "HEALTHPLAN", "crf:single")
    assert rule_labels_win([same, rule], text, ["healthplan-*"]) == [same, rule]


def test_deciding_rule_keeps_its_extent_against_a_longer_crf_number_of_its_label():
    text = "Tel 555 201 3344  Fax +1 555 201 9988\nMR 0012345 | bed 4"
    crf = _at(text, "Fax +1 555 201 9988", "FAX", "crf:single")
    rule = _at(text, "+1 555 201 9988", "FAX", "fax")
    out = rule_labels_win([crf, rule], text, ["fax"])
    # the rule's number stands; the CRF keeps its remainder (the same tokens stay tagged)
    assert sorted((text[s.start:s.end], s.source) for s in out) == [("+1 555 201 9988", "fax"), ("Fax", "crf:single")]
    mr = _at(text, "MR 0012345", "MEDICALRECORD", "crf:single")
    mrn = _at(text, "0012345", "MEDICALRECORD", "mrn")
    assert sorted(text[s.start:s.end] for s in rule_labels_win([mr, mrn], text, ["mrn"])) == ["0012345", "MR"]
    # a rule not listed does not decide; a shorter or equal CRF span is left to the policy
    assert rule_labels_win([crf, rule], text, ["mrn"]) == [crf, rule]
    # more digits past the rule's number (a grouped number the rule cut) or a prefix glued to it: the CRF stands
    text2 = "UNIT NUMBER: 549 76 7 | member IDF2664287907"
    grouped, cut = _at(text2, "549 76 7", "MEDICALRECORD", "crf:single"), _at(text2, "549 76", "MEDICALRECORD", "mrn")
    assert rule_labels_win([grouped, cut], text2, ["mrn"]) == [grouped, cut]
    glued, plan = _at(text2, "IDF2664287907", "HEALTHPLAN", "crf:single"), _at(text2, "F2664287907", "HEALTHPLAN", "healthplan")
    assert rule_labels_win([glued, plan], text2, ["healthplan"]) == [glued, plan]
    short = _at(text, "555 201 9988", "FAX", "crf:single")
    assert rule_labels_win([short, rule], text, ["fax"]) == [short, rule]
    # names and places: the CRF's longer extent is often the whole name ('stepdaughter [Tao] Tang')
    text = "stepdaughter Tao Tang visits"
    name = _at(text, "Tao Tang", "PATIENT", "crf:single")
    kin = _at(text, "Tao", "PATIENT", "name-kin")
    assert rule_labels_win([name, kin], text, ["name-kin"]) == [name, kin]


def test_same_label_extent_cut_never_drops_a_one_character_remainder():
    # review14: the CRF's remainder is kept only as a piece of 2 characters or more; a check letter past the
    # rule's number ('MRN 4412983 K', 'Fax (555) 201-9988 B') was cut off and dropped: the CRF's extent stands
    text = "MRN 4412983 K\nFax (555) 201-9988 B\nID A-4412983"
    for crf_text, rule_text, label, source in (("4412983 K", "4412983", "MEDICALRECORD", "mrn"),
                                               ("(555) 201-9988 B", "(555) 201-9988", "FAX", "fax"),
                                               ("A-4412983", "4412983", "IDNUM", "mrn")):
        crf, rule = _at(text, crf_text, label, "crf:single"), _at(text, rule_text, label, source)
        assert rule_labels_win([crf, rule], text, [source]) == [crf, rule], crf_text


def test_username_grows_to_its_whole_word_but_not_over_an_address():
    text = "Verified by: gracem9  (kq.lo77@host.org) u307621."
    spans = [_at(text, "gracem", "USERNAME", "crf:single"), _at(text, "kq.lo", "USERNAME", "crf:single"),
             _at(text, "u", "USERNAME", "crf:single"), _at(text, "host.org", "URL", "crf:single")]
    spans[2] = Span(text.index("u307621"), text.index("u307621") + 1, "USERNAME", "crf:single")
    out = whole_words(spans, text, ["USERNAME"])
    assert [text[s.start:s.end] for s in out] == ["gracem9", "kq.lo77", "host.org", "u307621"]
    assert whole_words(spans, text, []) == spans


def test_crf_person_spans_lose_a_lead_role_or_kin_word_and_split_at_and():
    lead = frozenset(load_config().merge.crf_name_lead_words)
    cases = [("Dear Dr. Tovrin and colleagues:", "Tovrin and colleagues", ["Tovrin"]),
             ("met with Dr. QX and elsa brandvik rn", "QX and elsa brandvik", ["QX", "elsa brandvik"]),
             ("Rose and Will visited", "Rose and Will", ["Rose", "Will"]),  # known names stay, common or not
             ("pills brought by cousin Miloslav.", "cousin Miloslav", ["Miloslav"]),
             ("spoke with hospitalist Arlette Osei at 1900", "hospitalist Arlette Osei", ["Arlette Osei"]),
             ("F/u GINGER WILSON, MD", "u GINGER WILSON", ["GINGER WILSON"]),
             # a kin word that may be a surname stays when the case does not set it apart
             ("COUSIN, GEORGES seen", "COUSIN, GEORGES", ["COUSIN, GEORGES"]),
             ("Georges Cousin seen", "Georges Cousin", ["Georges Cousin"]),
             ("cousin georges seen", "cousin georges", ["cousin georges"])]
    for text, part, want in cases:
        out = trim_person_spans([_at(text, part, "DOCTOR", "crf:single")], text, lead)
        assert [text[s.start:s.end] for s in out] == want, text
        assert all(s.label == "DOCTOR" and s.source == "crf:single" for s in out)
    text = "pills brought by cousin Miloslav and colleagues."
    net = _at(text, "cousin Miloslav and colleagues", "PATIENT", "names:net")  # any source is cut
    assert [text[s.start:s.end] for s in trim_person_spans([net], text, lead)] == ["Miloslav"]
    kin = _at(text, "cousin", "USERNAME", "crf:single")  # a span on the lead word alone goes with it
    assert [text[s.start:s.end] for s in trim_person_spans([kin, net], text, lead)] == ["Miloslav"]
    text2 = "spoke with hospitalist Arlette Osei at 1900"
    role = _at(text2, "hospitalist", "PROFESSION", "crf:single")  # a PROFESSION on the role word stays
    person = _at(text2, "hospitalist Arlette Osei", "DOCTOR", "crf:single")
    assert [text2[s.start:s.end] for s in trim_person_spans([role, person], text2, lead)] == ["hospitalist", "Arlette Osei"]
    place = _at(text, "cousin Miloslav", "HOSPITAL", "crf:single")  # other labels are not cut
    assert trim_person_spans([place], text, lead) == [place]
    assert trim_person_spans([place], text, frozenset()) == [place]


def test_a_role_or_kin_word_is_never_a_login_but_a_cut_login_is_kept():
    words = frozenset(load_config().merge.crf_name_lead_words)
    text = "consent signed by fiance. Signed by u on 3/4 (u307621), signed by qenby on 3/4"
    spans = [_at(text, "fiance", "USERNAME", "username-signed-word"), _at(text, "u307621", "USERNAME", "crf:single"),
             Span(text.index("u307621"), text.index("u307621") + 1, "USERNAME", "crf:single"),
             _at(text, "qenby", "USERNAME", "username-signed-word"), _at(text, "fiance", "PATIENT", "crf:single")]
    assert drop_role_word_logins(spans, text, words) == spans[1:]
    assert drop_role_word_logins(spans, text, frozenset()) == spans


def test_default_pipeline_drops_a_kin_word_read_as_a_login():
    config = load_config()
    rules = build_stage(config, "rules", None)
    text = "Consent signed by fiance.\nNote signed by qenbyx on 3/4\n"
    doc = Doc(Note("n", text))
    found = rules.tag(doc)
    assert any(text[s.start:s.end] == "fiance" and s.label == "USERNAME" for s in found)  # the rule reads it
    out = union_merge(config)(found, doc)
    assert {text[s.start:s.end]: s.label for s in out if s.label == "USERNAME"} == {"qenbyx": "USERNAME"}


def test_default_pipeline_labels_fax_by_its_cue_word_and_towns_before_state_and_zip():
    config = load_config()
    rules = build_stage(config, "rules", None)
    merge = union_merge(config)
    text = "Records were requested by fax to 617-555-0142 today.\n156 Lauren Views\nQUILLBY, NE 65426\n"
    doc = Doc(Note("n", text))
    found = rules.tag(doc)
    crf = [_at(text, "617-555-0142", "PHONE", "crf:single"),
           Span(text.index("156"), text.index(", NE"), "STREET", "crf:single")]
    out = merge([*found, *crf], doc)
    got = {text[s.start:s.end]: s.label for s in out}
    assert got["617-555-0142"] == "FAX"
    assert got["QUILLBY"] == "CITY"
    assert got["156 Lauren Views"] == "STREET"


def test_default_pipeline_labels_account_record_and_user_ids_by_their_words_but_not_after_acc():
    """Round 5: an account or record word and a signature decide the label over the CRF's; after
    'Acc' (an accession or an account number) the CRF's label stands."""
    config = load_config()
    rules = build_stage(config, "rules", None)
    merge = union_merge(config)
    text = ("Patient: Orla Quenby, account 115552847877, Hosp #: B551203947\nAcc 17-980450\n"
            "Signed by qenby7 on Monday\nwinifred tarrow RN (WTARROW)\n12 oak hollow, fernbrook, ks 66001\n")
    doc = Doc(Note("n", text))
    found = rules.tag(doc)
    crf = [_at(text, "115552847877", "IDNUM", "crf:single"), _at(text, "B551203947", "IDNUM", "crf:single"),
           _at(text, "17-980450", "IDNUM", "crf:single"), _at(text, "qenby", "DOCTOR", "crf:single"),
           _at(text, "WTARROW", "DOCTOR", "crf:single"), _at(text, "fernbrook", "HOSPITAL", "crf:single")]
    out = merge([*found, *crf], doc)
    got = {text[s.start:s.end]: s.label for s in out}
    assert got["115552847877"] == "ACCOUNT"
    assert got["B551203947"] == "MEDICALRECORD"
    assert got["17-980450"] == "IDNUM"
    assert got["qenby7"] == "USERNAME"
    assert got["WTARROW"] == "USERNAME"
    assert got["fernbrook"] == "CITY"


def test_a_field_key_before_a_person_span_says_whose_name_it_is():
    """Round 10: 'Patient: X', 'RE: X' give PATIENT, 'PCP: X', 'Ordered by X' give DOCTOR (any source);
    the key must open its line or follow a column break (invented names)."""
    m = load_config().merge
    cases = [("Discharge Summary\nPt name: Quiola K. Marbet   MR#: 1", "Quiola K. Marbet", "DOCTOR", "PATIENT"),
             ("3/8/2011\n\nRE: Quiola Marbet\nDOB 1/1/1950", "Quiola Marbet", "DOCTOR", "PATIENT"),
             ("Patient Quiola P. Marbet, 31 yr-old", "Quiola P. Marbet", "DOCTOR", "PATIENT"),
             ("Pt name: Quiola P. Marbet\nDOB", "Marbet", "DOCTOR", "PATIENT"),  # the name's first words left out
             ("MRN 5521 | Patient: Quiola Marbet | DOB", "Quiola Marbet", "DOCTOR", "PATIENT"),
             ("PCP: Onoh\nPharmacy: none", "Onoh", "PATIENT", "DOCTOR"),
             ("Referring physician: Ryal Colles\n", "Ryal Colles", "PATIENT", "DOCTOR"),
             ("CXR - 6/6/2020 - Ordered by Tovrin Quell\nINDICATION", "Tovrin Quell", "PATIENT", "DOCTOR"),
             # round 16: reports', messages' and phone notes' keys
             ("Sonographer: Joy Quell, RDCS\n", "Joy Quell", "PATIENT", "DOCTOR"),
             ("Message taken by: Ryal Colles\n", "Ryal Colles", "PATIENT", "DOCTOR"),
             ("Caller: Quiola Marbet (daughter)\n", "Quiola Marbet", "DOCTOR", "PATIENT"),
             ("Emergency contact: Quiola Marbet - 555-0101", "Quiola Marbet", "DOCTOR", "PATIENT"),
             # no key at a column break: the label stands
             ("Provider name: Onoh\n", "Onoh", "PATIENT", "PATIENT"),
             ("ACC 14-96  REQ QUELL, ANN\nPANEL", "QUELL, ANN", "DOCTOR", "DOCTOR"),  # 'REQ' is not 're' + 'Q'
             ("the patient Onoh said", "Onoh", "DOCTOR", "DOCTOR"),
             ("spoke with daughter Quiola Marbet", "Quiola Marbet", "PATIENT", "PATIENT"),
             # no key through a clinician's title, 'by', a word without a separator, or 're' of 'Re-'
             ("Name: Dr. Ryal Colles\n", "Ryal Colles", "DOCTOR", "DOCTOR"),
             ("Patient Care Coordinator Ryal Colles called.", "Ryal Colles", "DOCTOR", "DOCTOR"),
             ("Patient Referred By Onoh\n", "Onoh", "DOCTOR", "DOCTOR"),
             ("Re-Evaluated By Ryal Colles\n", "Ryal Colles", "DOCTOR", "DOCTOR")]
    for text, part, label, want in cases:
        span = _at(text, part, label, "crf:single")
        out = person_field_labels([span], text, m.patient_field_keys, m.doctor_field_keys)
        assert [(s.start, s.end, s.label, s.source) for s in out] == [(span.start, span.end, want, "crf:single")], text
    other = _at("Patient: Qx-77 | DOB", "Qx-77", "IDNUM", "crf:single")  # only person labels move
    assert person_field_labels([other], "Patient: Qx-77 | DOB", m.patient_field_keys, m.doctor_field_keys) == [other]
    span = _at("PCP: Onoh\n", "Onoh", "PATIENT", "crf:single")
    assert person_field_labels([span], "PCP: Onoh\n", [], []) == [span]


def test_the_head_word_of_a_named_place_decides_hospital_or_organization():
    """Round 10: 'South Quell General' is a hospital, 'Quell High School' an organization, whatever the
    tagger said; ambiguous heads ('Quell Health') and other labels stay (invented places)."""
    m = load_config().merge
    heads = place_heads(m.hospital_head_words, m.organization_head_words)
    cases = [("Lab draw at South Quell General.", "South Quell General", "ORGANIZATION", "HOSPITAL"),
             ("faxed to QUELL NURSING admissions", "QUELL NURSING", "ORGANIZATION", "HOSPITAL"),
             ("from Quellby Medical Center today", "Quellby Medical Center", "CITY", "HOSPITAL"),
             ("To the school nurse, Quell High School:", "Quell High School", "HOSPITAL", "ORGANIZATION"),
             ("attends Quell Baptist Church", "Quell Baptist Church", "LOCATION-OTHER", "ORGANIZATION"),
             ("PCP at Quell Health (fax)", "Quell Health", "ORGANIZATION", "ORGANIZATION"),
             ("lives on Quell Memorial Drive", "Quell Memorial Drive", "STREET", "STREET"),
             ("seen in Quell Hospital Unit 4", "Quell Hospital Unit 4", "DEPARTMENT", "DEPARTMENT")]
    for text, part, label, want in cases:
        span = _at(text, part, label, "crf:single")
        out = place_head_labels([span], text, heads)
        assert [(s.start, s.end, s.label) for s in out] == [(span.start, span.end, want)], text
    span = _at("Lab draw at South Quell General.", "South Quell General", "ORGANIZATION", "crf:single")
    assert place_head_labels([span], "Lab draw at South Quell General.", {}) == [span]


KIN = ["wife", "husband", "son", "stepson", "partner", "granddaughter", "daughter"]


def test_a_kin_word_beside_a_person_span_makes_it_a_relative():
    cases = [("Qorvel (stepson) updated at bedside.", "Qorvel"),
             ("Lives with his partner, Ulmo Brisk, who drives.", "Ulmo Brisk"),
             ("08:15 granddaughter jessa quell arrived.", "jessa quell"),
             ("Emergency contact: Tavi Orn ( partner ) 555", "Tavi Orn"),
             ("Brought in by Imre Vask, her husband, today.", "Imre Vask")]
    for text, name in cases:
        out = kin_person_labels([_at(text, name, "DOCTOR", "crf:single")], text, KIN)
        assert [s.label for s in out] == ["PATIENT"], text


def test_no_kin_word_beside_it_or_a_title_keeps_the_doctor():
    cases = [("consent signed by stepson; krista to follow up.", "krista"),  # ';' ends the clause
             ("Her son saw Dr. Ulmo Brisk today.", "Ulmo Brisk"),
             ("son Dr. Ulmo Brisk called.", "Dr. Ulmo Brisk"),
             ("Discussed with Ulmo Brisk, MD (partner practice).", "Ulmo Brisk"),
             ("Ulmo Brisk, his attending, called.", "Ulmo Brisk")]
    for text, name in cases:
        span = _at(text, name, "DOCTOR", "crf:single")
        assert kin_person_labels([span], text, KIN) == [span], text
    text = "Qorvel (stepson) updated"  # another label, or no kin list: untouched
    place = _at(text, "Qorvel", "HOSPITAL", "crf:single")
    assert kin_person_labels([place], text, KIN) == [place]
    assert kin_person_labels([_at(text, "Qorvel", "DOCTOR", "crf:single")], text, []) == [
        _at(text, "Qorvel", "DOCTOR", "crf:single")]


def test_a_titled_doctor_before_a_kin_word_stays_the_doctor():
    for text, name in [("Family meeting held with Dr. Patel, his wife, and two daughters.", "Patel"),
                       ("Case discussed with attending, Dr. Weiss, pt's wife present.", "Weiss"),
                       ("Seen by Doctor  Weiss (son present).", "Weiss")]:
        span = _at(text, name, "DOCTOR", "crf:single")
        assert kin_person_labels([span], text, KIN) == [span], text
    text = "Family meeting held with Patel, his wife, and two daughters."  # no title: a relative
    assert [s.label for s in kin_person_labels([_at(text, "Patel", "DOCTOR", "crf:single")], text, KIN)] == ["PATIENT"]


def test_a_patients_title_before_a_doctor_span_makes_it_patient():
    """Round 14 (i2b2 2014: clinicians are titled Dr., patients and their relatives Mr./Ms.): a DOCTOR span of
    any source after a patient's title is PATIENT unless a role or credential follows it; other spans and
    spans without a title keep their label."""
    m = load_config().merge
    roles = frozenset(m.crf_name_lead_words)
    cases = [("ID: Mr. Quellby is a 22 yo man", "Quellby", "DOCTOR", "PATIENT"),
             ("Dear Ms. Quellby,\nThank you", "Quellby", "DOCTOR", "PATIENT"),
             ("MRS QUELLBY NOTED FEVER", "QUELLBY", "DOCTOR", "PATIENT"),  # no '.', capitals
             ("seen with Mrs. Ann Quellby", "Mrs. Ann Quellby", "DOCTOR", "PATIENT"),  # the span opens with the title
             ("Dear Dr. Quellby,\nI am referring", "Quellby", "PATIENT", "PATIENT"),  # a clinician's title: no change
             # a role or credential after the name: a clinician called Ms.
             ("Discussed with Ms. Quellby, RN today", "Quellby", "DOCTOR", "DOCTOR"),
             ("Mr. Quellby NP will call", "Quellby", "DOCTOR", "DOCTOR"),
             # no title right before it
             ("Mr. Ann saw Quellby today", "Quellby", "DOCTOR", "DOCTOR"),
             ("Summary Quellby noted", "Quellby", "DOCTOR", "DOCTOR"),
             ("Hmr. Quellby noted", "Quellby", "DOCTOR", "DOCTOR")]  # 'Hmr' is no 'Mr'
    for text, part, label, want in cases:
        span = _at(text, part, label, "crf:single")
        out = title_labels([span], text, m.patient_titles, roles)
        assert [(s.start, s.end, s.label) for s in out] == [(span.start, span.end, want)], text
    other = _at("Mr. Quellby Street", "Quellby Street", "STREET", "crf:single")
    assert title_labels([other], "Mr. Quellby Street", m.patient_titles, roles) == [other]
    span = _at("Mr. Quellby", "Quellby", "DOCTOR", "crf:single")
    assert title_labels([span], "Mr. Quellby", [], roles) == [span]  # [] turns it off


def test_a_clinicians_credential_after_a_titled_name_keeps_it_doctor_through_the_merge():
    """Review 14: the title decision read only crf_name_lead_words after the name, so a clinician called
    Mr./Ms. with another credential ("CRNA", "LCSW", "PharmD") or one in brackets became PATIENT; the merge now
    also reads [merge] title_roles and a bracket. A patient's title before other words still decides."""
    from deid_core.engine.contract import NoteState
    from deid_core.engine.merge import Merger
    from deid_core.notes import Note

    merger = Merger("union", load_config().merge)
    cases = [("Mr. Tomas Quellby, CRNA, at bedside for intubation.", "Tomas Quellby", "DOCTOR"),
             ("Discussed with Ms. Ann Quellby, LCSW today.", "Ann Quellby", "DOCTOR"),
             ("Ms. Quellby, PharmD, recommends zosyn.", "Quellby", "DOCTOR"),
             ("Ms. Quellby (SW) met with the family.", "Quellby", "DOCTOR"),
             ("Ms. Quellby (RN) gave report.", "Quellby", "DOCTOR"),
             ("Mr. Quellby, 64, CHF, admitted.", "Quellby", "PATIENT"),
             ("Mr. Quellby (see above) is stable.", "Quellby", "PATIENT")]
    for text, part, want in cases:
        span = _at(text, part, "DOCTOR", "crf:single")
        out = merger([span], Doc(Note("n", text)), NoteState())
        assert [s.label for s in out if s.start == span.start] == [want], text


def test_a_clinicians_title_or_credential_makes_a_patient_span_doctor_but_not_a_relatives():
    """Lead, round 14: "Dr. X" / "X, RN" is the clinician even when the patient shares the name (the breadth12b model
    reads "Dr. Jordan Park" as PATIENT when the patient is a Jordan); a relative stays PATIENT."""
    from deid_core.engine.label_decisions import clinician_labels

    def out(text: str, word: str) -> list[str]:
        start = text.index(word)
        spans = clinician_labels([Span(start, start + len(word), "PATIENT", "crf:single")], text, ["dr", "doctor"],
                                 frozenset({"rn", "crna"}))
        return [s.label for s in spans]

    assert out("Plan reviewed by Dr. Jordan Park.", "Jordan Park") == ["DOCTOR"]
    assert out("Spoke with Doctor Quell re plan.", "Quell") == ["DOCTOR"]
    assert out("Care by Jordan, RN overnight.", "Jordan") == ["DOCTOR"]
    assert out("Hi Angela, Dr. Quell reviewed your message.", "Angela") == ["PATIENT"]  # a title after it
    assert out("Mr. Jordan Lee seen today.", "Jordan Lee") == ["PATIENT"]
    assert out("Drew Quell seen today.", "Quell") == ["PATIENT"]  # 'Drew' is no title
    assert out("Dr.\n\nMadison Quell was referred", "Madison Quell") == ["PATIENT"]  # not across a line break
    text = "Her daughter Ann Quell, RN called for update."
    from tests.helpers_rules import shipped_deidentifier

    spans = shipped_deidentifier("clinician-titles").tag(Note("n", text))
    assert [(text[s.start:s.end], s.label) for s in spans] == [("Ann Quell", "PATIENT")]  # kin decides after


def test_a_clinicians_role_before_a_patient_span_makes_it_doctor_through_the_merge():
    """Round 15 ([merge] clinician_roles): a role word right before a PATIENT span says it is a clinician, as "Dr."
    does ("chaplain X with family", "Cigna rep X at"); a relative's kin word still decides after it, "resident" is
    no such role (a nursing home's resident is the patient), and [] turns the step off."""
    from deid_core.engine.label_decisions import clinician_labels

    roles = load_config().merge.clinician_roles

    def out(text: str, word: str, titles=("dr", "doctor"), before=roles) -> list[str]:
        start = text.index(word)
        spans = clinician_labels([Span(start, start + len(word), "PATIENT", "crf:single")], text, list(titles),
                                 frozenset(), before)
        return [s.label for s in spans]

    assert out("Son present; chaplain Quorra Vell with family.", "Quorra Vell") == ["DOCTOR"]
    assert out("Verified with Acme rep Quorra at 555-0100", "Quorra") == ["DOCTOR"]
    assert out("FAX to 555-0100 attn Quorra Vell - today", "Quorra Vell") == ["DOCTOR"]
    assert out("Pt is a resident Quorra Vell of the home", "Quorra Vell") == ["PATIENT"]
    assert out("Son present; chaplain Quorra Vell with family.", "Quorra Vell", before=()) == ["PATIENT"]
    # review 15: a role word ends a sentence before the patient's name: no '.' after a role (a title's only)
    assert out("Plan discussed with attending. Quorra Vell is a 45 yo F.", "Quorra Vell") == ["PATIENT"]
    assert out("Mother of pt is an RN. Quorra Vell denies pain.", "Quorra Vell") == ["PATIENT"]
    assert out("Plan discussed with Dr. Quorra Vell today.", "Quorra Vell") == ["DOCTOR"]
    assert out("Chaplaincy\nQuorra Vell with family.", "Quorra Vell") == ["PATIENT"]  # no role right before it
    from tests.helpers_rules import shipped_deidentifier

    deid = shipped_deidentifier("clinician-roles")
    text = "Wife present; chaplain Quorra Vellmont with family.\nHer son Ann Quell at bedside."
    spans = deid.tag(Note("n", text))
    assert [(text[s.start:s.end], s.label) for s in spans] == [("Quorra Vellmont", "DOCTOR"), ("Ann Quell", "PATIENT")]
    text = "Plan discussed with attending. Anna Perez is a 45 yo F with CHF."
    spans = deid.tag(Note("n", text))
    assert ("Anna Perez", "PATIENT") in [(text[s.start:s.end], s.label) for s in spans]


def test_a_patient_key_leaves_a_clinician_whose_credential_follows_the_name():
    """Review round 16: the phone notes' patient keys ("Caller:", "Member:") also name clinicians who call; a role or
    credential after the name keeps DOCTOR ("Caller: X RN from the clinic"), a kin word does not ("Caller: X
    (daughter)"), as title_labels reads them."""
    from deid_core.engine.merge import Merger

    m = load_config().merge
    roles = Merger("union", m)._credentials
    for text, part, label, want in [("Caller: Quiola Marbet RN from the clinic\n", "Quiola Marbet", "DOCTOR", "DOCTOR"),
                                    ("Caller: Quiola Marbet, NP\n", "Quiola Marbet", "DOCTOR", "DOCTOR"),
                                    ("Caller: Quiola Marbet (daughter)\n", "Quiola Marbet", "DOCTOR", "PATIENT"),
                                    ("Patient: Quiola Marbet\n", "Quiola Marbet", "DOCTOR", "PATIENT")]:
        span = _at(text, part, label, "crf:single")
        out = person_field_labels([span], text, m.patient_field_keys, m.doctor_field_keys, roles)
        assert [s.label for s in out] == [want], text
    from deid_core.engine.contract import NoteState

    text = "Caller: Quiola Marbet RN from the clinic.\nSeen today."  # the merge passes its credentials
    span = _at(text, "Quiola Marbet", "DOCTOR", "crf:single")
    out = Merger("union", m)([span], Doc(Note("n", text)), NoteState())
    assert [s.label for s in out if s.start == span.start] == ["DOCTOR"]


def test_a_doctor_key_leaves_a_relative_or_the_patient_whose_kin_word_follows_the_name():
    """Review round 16: the messages' clinician keys ("Sent by:", "Taken by:", "Reported by:", "Nurse:") also name a
    relative or the patient who wrote or called; a kin word or 'patient' after the name keeps PATIENT ("Sent by: X
    (daughter)"), a credential or nothing after it gives DOCTOR."""
    from deid_core.engine.contract import NoteState
    from deid_core.engine.merge import Merger

    merger = Merger("union", load_config().merge)
    for text, want in [("Sent by: Quiola Marbet (daughter)\nRe: refill", "PATIENT"),
                       ("Sent by: Quiola Marbet (patient)\nRe: refill", "PATIENT"),
                       ("Reported by: Quiola Marbet, wife\n", "PATIENT"),
                       ("Nurse: Quiola Marbet (husband) at bedside", "PATIENT"),
                       ("Sent by: Quiola Marbet, RN\n", "DOCTOR"),
                       ("Message taken by: Quiola Marbet\n", "DOCTOR"),
                       ("PCP: Quiola Marbet  Patient: Ann Quell\n", "DOCTOR")]:  # the next column's key
        span = _at(text, "Quiola Marbet", "PATIENT", "crf:single")
        out = merger([span], Doc(Note("n", text)), NoteState())
        assert [s.label for s in out if s.start == span.start] == [want], text
