"""Merge policies and global reconciliation."""

from __future__ import annotations

from deid_core import taxonomy
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import CrfMarginals, NoteState
from deid_core.engine.merge import Merger, gated_source, source_kind
from deid_core.notes import Note
from deid_core.spans import Span


def options(**keys):
    """[merge] options for these tests: rules first, no gate, on top of conf/deidentify.toml."""
    base = {"priority": ["rules", "metadata", "crf_char", "crf"], "rule_gate": 0.0, "rule_gate_sources": ["*"],
            "propagate_patient": False}
    return load_config({"merge": {**base, **keys}}).merge


OFF = options(reconcile=False, propagate=False)
EVERY_CATEGORY = frozenset(taxonomy.categories())


def test_source_kind():
    assert source_kind("crf:single") == "crf"
    assert source_kind("date_mdy") == "date_mdy"


def test_rules_win_drops_overlapping_crf():
    rule = Span(0, 5, "DATE", "date_mdy")
    crf = Span(3, 12, "DOCTOR", "crf:single")
    other = Span(20, 25, "DOCTOR", "crf:single")
    assert Merger("rules_win", OFF)([rule, crf, other]) == [rule, other]


def test_cascade_prefers_char_crf_over_token_crf():
    tok = Span(0, 10, "DOCTOR", "crf:single")
    char = Span(2, 6, "PATIENT", "crf_char:x")
    assert Merger("cascade", OFF)([tok, char]) == [char]


def test_union_takes_extent_and_priority_label():
    rule = Span(5, 9, "DATE", "date_mdy")
    crf = Span(0, 7, "AGE", "crf:single", 0.4)
    crf2 = Span(8, 14, "DATE", "crf:single", 0.9)
    out = Merger("union", OFF)([rule, crf, crf2])
    assert out == [Span(0, 14, "DATE", "date_mdy", 1.0)]


CRF_FIRST = options(reconcile=False, propagate=False, priority=["crf", "crf_char", "metadata", "rules"])


def test_union_known_name_person_label_beats_the_crf():
    # 'Dear Ann,': the CRF reads a clinician; the EHR's metadata names the patient Ann (an exact match)
    crf = Span(5, 8, "DOCTOR", "crf:single", 0.9)
    known = Span(5, 8, "PATIENT", "metadata", 1.0)
    net = Span(5, 8, "PATIENT", "names:net", 0.7)
    assert Merger("union", CRF_FIRST)([crf, known, net]) == [Span(5, 8, "PATIENT", "crf:single", 1.0)]
    # the known name may be one piece of the union ('Ann Quell' read as a clinician, metadata 'Quell')
    assert Merger("union", CRF_FIRST)([Span(0, 9, "DOCTOR", "crf:single"), Span(4, 9, "PATIENT", "metadata")])[0].label \
        == "PATIENT"
    # without the metadata, the priority's label stands
    assert Merger("union", CRF_FIRST)([crf, net])[0].label == "DOCTOR"
    # [merge] known_person_label = false turns it off: the priority's label, as before round 14
    off = options(reconcile=False, propagate=False, priority=list(CRF_FIRST.priority), known_person_label=False)
    assert Merger("union", off)([crf, known, net])[0].label == "DOCTOR"


def test_union_known_name_label_yields_to_context_and_fuzzy_matches():
    crf = Span(4, 7, "DOCTOR", "crf:single", 0.9)
    known = Span(4, 7, "PATIENT", "metadata", 1.0)
    # a rule's context gives the CRF's label ('Dr. Ann'): it stays
    title = Span(0, 7, "DOCTOR", "name-doctor-title", 1.0)
    assert Merger("union", CRF_FIRST)([crf, known, title])[0].label == "DOCTOR"
    # a one-edit (fuzzy) known-name match is no evidence against the CRF
    assert Merger("union", CRF_FIRST)([crf, Span(4, 7, "PATIENT", "metadata-fuzzy", 0.8)])[0].label == "DOCTOR"
    # known names of both roles on the same string: the priority decides
    assert Merger("union", CRF_FIRST)([crf, known, Span(4, 7, "DOCTOR", "metadata")])[0].label == "DOCTOR"
    # only person labels: a login the CRF found keeps its label against a clinician's known name
    login = Span(0, 6, "USERNAME", "crf:single", 0.9)
    assert Merger("union", CRF_FIRST)([login, Span(0, 6, "DOCTOR", "metadata")])[0].label == "USERNAME"


def test_union_known_name_label_yields_to_the_name_nets_clinician_cue():
    # review14: 'Dr. Jordan Park' when the patient is Jordan Lee. The rules stage resolves the title rule's span
    # under the known-name match (metadata_priority 90 > 60), so no rule reaches the union; the name net's
    # DOCTOR (a title, role or credential it read) is that context: the clinician stays DOCTOR
    crf = Span(4, 15, "DOCTOR", "crf:single", 0.9)
    known = Span(4, 10, "PATIENT", "metadata", 1.0)
    net = Span(4, 15, "DOCTOR", "names:net", 0.7)
    assert Merger("union", CRF_FIRST)([crf, known, net])[0].label == "DOCTOR"
    # the net's PATIENT is its default (no cue): no evidence either way, the known name decides
    assert Merger("union", CRF_FIRST)([crf, known, Span(4, 15, "PATIENT", "names:net", 0.7)])[0].label == "PATIENT"
    # a clinician's known name against the CRF's PATIENT: the net's PATIENT is no kin context
    crf_p, known_d = Span(4, 10, "PATIENT", "crf:single", 0.9), Span(4, 10, "DOCTOR", "metadata", 1.0)
    assert Merger("union", CRF_FIRST)([crf_p, known_d, Span(4, 10, "PATIENT", "names:net")])[0].label == "DOCTOR"


def test_known_patient_first_name_leaves_a_titled_or_credentialed_clinician_doctor():
    from tests.helpers_rules import shipped_deidentifier

    deid = shipped_deidentifier("merge-known-clinician")
    known = (("Jordan", "PATIENT"), ("Lee", "PATIENT"), ("Maria Okafor", "DOCTOR"))
    for text in ("Pt Jordan Lee seen today. Plan reviewed by Dr. Jordan Park.",
                 "Pt Jordan Lee seen today. Spoke with Dr Jordan re plan.",
                 "Pt Jordan Lee seen today. Care by Jordan, RN overnight."):
        spans = deid.tag(Note("n", text, known_phi=known))
        start = text.index("Jordan", 20)
        assert [s.label for s in spans if s.start <= start < s.end] == ["DOCTOR"], text
    # the patient's own name and 'Dear Jordan,' stay PATIENT
    text = "Dear Jordan,\nThank you for coming in. Jordan Lee is doing well."
    assert {s.label for s in deid.tag(Note("n", text, known_phi=known))} == {"PATIENT"}


def test_reconcile_majority_label_and_propagation():
    text = "Dr. Moreau called. Moreau agreed. Later moreau left; Moreauville is a town."
    doc = Doc(Note("n", text))
    spans = [Span(4, 10, "DOCTOR", "crf:single"), Span(19, 25, "PATIENT", "crf:single"),
             Span(40, 46, "DOCTOR", "date_rule")]
    out = Merger("rules_win", options(propagate=False))(spans, doc, NoteState())
    assert {s.label for s in out} == {"DOCTOR"}
    out = Merger("rules_win", options())([Span(4, 10, "DOCTOR", "crf:single")], doc, NoteState())
    assert [(s.start, s.end) for s in out] == [(4, 10), (19, 25), (40, 46)]  # not inside Moreauville
    assert all(s.label == "DOCTOR" for s in out)


def test_merge_output_is_non_overlapping():
    from deid_core.spans import validate_spans

    spans = [Span(0, 5, "DATE", "r1"), Span(2, 8, "DATE", "r2"), Span(6, 12, "DOCTOR", "crf:a"),
             Span(11, 15, "PATIENT", "crf:b")]
    for pol in ("rules_win", "cascade", "union"):
        validate_spans(Merger(pol, OFF)(spans), 20)


def test_rule_gate_drops_rule_spans_the_crf_rejects():
    doc = Doc(Note("n", "Ward 5 seen by Dr Moreau"))
    toks = doc.tokens[0]
    phi = [0.0] * len(toks)
    phi[toks.index("Moreau")] = 0.9
    state = NoteState(crf=CrfMarginals(phi, EVERY_CATEGORY))
    ward = Span(0, 6, "HOSPITAL", "hospital-ward-number")
    name = Span(18, 24, "DOCTOR", "name-doctor-title")
    meta = Span(0, 4, "PATIENT", "metadata")
    m = Merger("rules_win", options(reconcile=False, propagate=False, rule_gate=0.1))
    assert m([ward, name], doc, state) == [name]
    assert m([meta], doc, state) == [meta]  # exempt source
    assert Merger("rules_win", OFF)([ward, name], doc, state) == [ward, name]  # gate off
    assert m([ward, name], doc, NoteState()) == [ward, name]  # no CRF marginals: nothing to gate on
    only_names = NoteState(crf=CrfMarginals(phi, frozenset({"NAME"})))
    assert m([ward, name], doc, only_names) == [ward, name]  # LOCATION: too few CRF examples to gate


def test_rule_gate_applies_only_to_the_configured_sources():
    doc = Doc(Note("n", "Ward 5 seen by Dr Moreau"))
    state = NoteState(crf=CrfMarginals([0.0] * len(doc.tokens[0]), EVERY_CATEGORY))  # the CRF rejects every token
    ward = Span(0, 6, "HOSPITAL", "hospital-ward-number")
    name = Span(18, 24, "DOCTOR", "name-doctor-title")
    weak_only = Merger("rules_win", options(reconcile=False, propagate=False, rule_gate=0.1,
                                            rule_gate_sources=["hospital-*", "gaz-*"]))
    assert weak_only([ward, name], doc, state) == [name]  # contextual rule kept, weak rule gated
    exempt = Merger("rules_win", options(reconcile=False, propagate=False, rule_gate=0.1,
                                         rule_gate_exempt=["metadata*", "hospital-ward-*"]))
    assert exempt([ward, name], doc, state) == [ward]
    assert gated_source("gaz-city", weak_only.options) and not gated_source("name-kin", weak_only.options)
    assert not gated_source("metadata-fuzzy", load_config().merge)  # metadata never gated by default


def test_tagger_dates_inside_non_phi_contexts_are_vetoed_by_context():
    """Vent settings, pain scores and exam fractions the suppressors recognise are not DATEs (issue 14)."""
    from deid_core.engine.pipeline import build_stage

    rules = build_stage(load_config(), "rules", None)
    text = "Vent PS 10/5, FiO2 40%. C/O 5/10 pain. Crackles 1/3 up bilat. Seen on 10/5 by cardiology."
    doc, state = Doc(Note("n", text)), NoteState()
    assert [(text[s.start:s.end], s.start) for s in rules.run(doc, state)] == [("10/5", text.rindex("10/5"))]
    crf = [Span(m, m + len(s), "DATE", "crf:single") for s in ("10/5", "5/10", "1/3")
           for m in [text.index(s)]] + [Span(text.rindex("10/5"), text.rindex("10/5") + 4, "DATE", "crf:single")]
    on = Merger("union", options(reconcile=False, propagate=False))(crf, doc, state)
    assert [text[s.start:s.end] for s in on] == ["10/5"] and on[0].start == text.rindex("10/5")  # the real date stays
    off = Merger("union", options(reconcile=False, propagate=False, nonphi_veto=[]))(crf, doc, state)
    assert len(off) == 4
    phone = [Span(text.index("10/5"), text.index("10/5") + 4, "PHONE", "rules")]  # rule spans are not vetoed here
    assert Merger("union", options(reconcile=False, propagate=False))(phone, doc, state) == phone


def test_crf_name_guard_drops_a_crf_name_only_where_the_note_says_the_word_is_clinical():
    """Round 4: a one-word CRF name shaped like a clinical word goes when the note shows it is one (a
    measurement label "VT= 450", a clinical-vocabulary word, a lower-case word standing elsewhere
    outside every name); initials ("JT is a 45 yo", "JM = Jo Marsh" in a key), known names, unknown
    words and anything a rule also found stay, and so does a bare abbreviation with no evidence ("NRS")."""
    from deid_core.config import load_config
    from deid_core.doc import Doc
    from deid_core.engine.contract import NoteState
    from deid_core.engine.merge import Merger
    from deid_core.notes import Note
    from deid_core.spans import Span

    text = ("Vent VT= 450. Given ceftaz. No mvt in L foot, gross mvt in R. Pain NRS. JT is a 45 yo; "
            "JT stable. Key: JM = Jo Marsh. NP Foley aware. Qqplorvik here. Son BOB in.")

    def at(word, label="DOCTOR", source="crf:single", nth=0):
        i = -1
        for _ in range(nth + 1):
            i = text.index(word, i + 1)
        return Span(i, i + len(word), label, source)
    crf = [at("VT"), at("ceftaz"), at("mvt", nth=1), at("NRS"), at("JT", "PATIENT"), at("JM"), at("Foley"),
           at("Qqplorvik"), at("BOB", "PATIENT")]
    rules = [at("BOB", "PATIENT", "name-kin")]
    for on, kept in ((True, ["NRS", "JT", "JM", "Foley", "Qqplorvik", "BOB"]),
                     (False, ["VT", "ceftaz", "mvt", "NRS", "JT", "JM", "Foley", "Qqplorvik", "BOB"])):
        opts = load_config({"merge": {"crf_name_guard": on, "crf_place_guard": False, "propagate": False}}).merge
        out = Merger("union", opts)(crf + rules, Doc(Note("x", text)), NoteState())
        assert [text[s.start:s.end] for s in out] == kept


def test_crf_place_guard_drops_clinical_prose_the_crf_alone_calls_a_place():
    """Round 4: CRF places made only of dictionary or clinical words ("drink nutritional supplements",
    "spoke at length") go; proper-noun shapes ("Habitat for Humanity"), two-word names ("UNITED
    STATES"), place heads ("Holy Family Hospital"), known places and rule-found spans stay. A
    profession the CRF took for a place goes too ("data entry clerk": no place word in it)."""
    from deid_core.config import load_config
    from deid_core.doc import Doc
    from deid_core.engine.contract import NoteState
    from deid_core.engine.merge import Merger
    from deid_core.notes import Note
    from deid_core.spans import Span

    text = ("Urged pt to drink nutritional supplements. Wife spoke at length with team. Volunteers at "
            "Habitat for Humanity. MOVED FROM UNITED STATES. Seen at Holy Family Hospital. Former data entry "
            "clerk. Lives in Boston. Went to sheltered housing today.")

    def at(phrase, label="ORGANIZATION", source="crf:single"):
        i = text.index(phrase)
        return Span(i, i + len(phrase), label, source)
    crf = [at("drink nutritional supplements"), at("length", "HOSPITAL"), at("Habitat for Humanity"),
           at("UNITED STATES", "COUNTRY"), at("Holy Family Hospital", "HOSPITAL"), at("data entry clerk", "STREET"),
           at("Boston", "CITY"), at("sheltered housing today", "LOCATION-OTHER")]
    rules = [at("sheltered housing today", "LOCATION-OTHER", "place-after-transfer")]
    everything = ["drink nutritional supplements", "length", "Habitat for Humanity", "UNITED STATES",
                  "Holy Family Hospital", "data entry clerk", "Boston", "sheltered housing today"]
    for on, kept in ((True, everything[2:5] + everything[6:]), (False, everything)):
        opts = load_config({"merge": {"crf_place_guard": on, "crf_name_guard": False, "propagate": False}}).merge
        out = Merger("union", opts)(crf + rules, Doc(Note("x", text)), NoteState())
        assert [text[s.start:s.end] for s in out] == kept


def test_source_memos_answer_per_source_as_the_source_tests():
    m = Merger("union", options(rule_gate=0.1, rule_gate_sources=["hospital-*", "gaz-*"], rule_gate_exempt=["gaz-zip"]))
    sources = ["crf:single", "names", "gaz-city", "gaz-zip", "hospital-ward-number", "name-kin", "crf/char:propagate",
               "patient:propagate", "gaz-city"]
    for _ in range(2):  # the second pass is answered by the memos
        for src in sources:
            s = Span(0, 4, "CITY", src)
            kind = source_kind(src)
            rule = not kind.startswith("crf") and kind != "names"
            assert m.is_rule(s) == rule, src
            assert m.gated(s) == (rule and gated_source(src, m.options)), src
    assert [m.gated(Span(0, 4, "CITY", s)) for s in ("gaz-city", "gaz-zip", "crf:single", "hospital-ward-number")] == [
        True, False, False, True]
