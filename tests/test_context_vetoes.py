"""Round 5: not-name contexts drop CRF-only names and places and stop propagation (engine/vetoes.py,
engine/propagation.py). Invented text only; each veto with what it must keep."""

from __future__ import annotations

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.merge import Merger
from deid_core.engine.propagation import not_name_context, propagate_note
from deid_core.notes import Note
from deid_core.spans import Span

TEXT = ("Pt is very SOB today. PT IS TAGALOG SPEAKING; Farsi interpreter called. Speaks Farsi only. "
        "Fio2 40. Given XYLOFEN/ATROVENT. PMH: COPD, ASTHMA, QWERTAL. Allergy: Zorbicil \n"
        "JT is a 45 yo. Seen by Smith, cardiology. Qqplorvik at bedside. PMH: COPD. Son Quellor visited. "
        "Interpreter Wheeler called. Wife Quellor very kind. Dr. Wheeler, very SOB, aware.")


def at(word: str, label: str = "DOCTOR", source: str = "crf:single", nth: int = 0) -> Span:
    """The nth occurrence of `word` in TEXT as a span."""
    i = -1
    for _ in range(nth + 1):
        i = TEXT.index(word, i + 1)
    return Span(i, i + len(word), label, source)


def merged(spans: list[Span], on: bool) -> list[str]:
    """Surfaces the union merge keeps, the context veto on or off (other vetoes and propagation off)."""
    opts = load_config({"merge": {"crf_context_veto": on, "crf_name_guard": False, "crf_place_guard": False,
                                  "propagate": False}}).merge
    out = Merger("union", opts)(spans, Doc(Note("x", TEXT)), NoteState())
    return [TEXT[s.start:s.end] for s in out]


def test_crf_context_veto_drops_crf_names_and_places_where_the_note_says_they_are_none():
    crf = [at("SOB"), at("TAGALOG", "PATIENT"), at("Farsi", "LOCATION-OTHER"), at("Farsi", "DOCTOR", nth=1),
           at("Fio"), at("XYLOFEN"), at("QWERTAL"), at("Zorbicil"),
           at("JT", "PATIENT"), at("Smith"), at("Qqplorvik"), at("Quellor", "PATIENT"), at("Wheeler"),
           at("Quellor", "PATIENT", nth=1)]
    rules = [at("Wheeler", "DOCTOR", "name-doctor-title", nth=1), at("SOB", "DOCTOR", "name-doctor-title", nth=1)]
    kept = ["JT", "Smith", "Qqplorvik", "Quellor", "Wheeler", "Quellor", "Wheeler", "SOB"]
    assert merged(crf + rules, True) == kept
    assert len(merged(crf + rules, False)) == len(crf + rules)


def test_not_name_contexts_are_cues_beside_the_word_or_a_digit_glued_to_a_person():
    opts = load_config().merge
    assert not_name_context("pt is very SOB.", 11, 14, opts)
    assert not_name_context("russian-speaking pt", 0, 7, opts)
    assert not_name_context("fio2 60", 0, 3, opts)
    assert not not_name_context("fio2 60", 0, 3, opts, person=False)  # places: "Tower5" is no evidence
    assert not not_name_context("Interpreter Wheeler called", 12, 19, opts)
    assert not not_name_context("everyone agreed, Wheeler interpreted", 17, 24, opts)
    off = load_config({"merge": {"not_name_preceding": [], "not_name_following": []}}).merge
    assert not not_name_context("pt is very SOB.", 11, 14, off)


def test_propagation_skips_repeats_in_not_name_contexts():
    """A name found with context ("Dr. Quellor") is not repeated where the note says the string is no name."""
    text = "Dr. Quellor saw pt. Pt is very QUELLOR. Quellor to call back."
    opts = load_config({"merge": {"propagate": True}}).merge
    found = [Span(4, 11, "DOCTOR", "name-doctor-title")]
    out = propagate_note(found, text, opts)
    assert [text[s.start:s.end] for s in out] == ["Quellor", "Quellor"]
    assert out[1].start == text.rindex("Quellor")



def test_typos_a_crf_or_the_name_net_alone_calls_a_name_are_dropped():
    """One edit from a dictionary or clinical word of 5+ letters and in no list: a typo ("visitted",
    "CURRNTLY"), not a name. Known names, unknown words far from every word, short words, a typo'd name
    after an initial or before a bracketed role, and anything a rule also found stay."""
    from deid_core.engine.vetoes import misspelt

    assert misspelt("visitted") and misspelt("CURRNTLY") and misspelt("stbale")
    assert misspelt("wondr") and misspelt("leavng") and not misspelt("gardner")
    assert not misspelt("Qqplorvik") and not misspelt("tehn") and not misspelt("Marsh") and not misspelt("visited")
    text = ("Son and wife visitted. CURRNTLY: stable. Qqplorvik at bedside. talked to m. wondr today. "
            "leavng (partner) updated. Dr. Statign aware.")

    def span(word: str, source: str) -> Span:
        i = text.index(word)
        return Span(i, i + len(word), "PATIENT", source)
    spans = [span("visitted", "names:net"), span("CURRNTLY", "crf:single"), span("Qqplorvik", "crf:single"),
             span("wondr", "names:net"), span("leavng", "crf:single"), span("Statign", "crf:single"),
             span("Statign", "name-doctor-title")]
    opts = load_config({"merge": {"crf_name_guard": False, "crf_place_guard": False, "propagate": False}}).merge
    out = Merger("union", opts)(spans, Doc(Note("x", text)), NoteState())
    assert [text[s.start:s.end] for s in out] == ["Qqplorvik", "wondr", "leavng", "Statign"]


def test_a_letters_addressee_is_no_typo():
    """Round 17: "Dear Faize," is a letter's addressee, one edit from a word or not ('maize'); "I hold dear" is no
    greeting and "Dear" must open its line."""
    opts = load_config({"merge": {"crf_name_guard": False, "crf_place_guard": False, "propagate": False}}).merge
    for text, kept in (("Re: visit\nDear Faize,\nThank you.", True), ("Dear Dr. Faize:\nsee below", True),
                       ("We all visitted dear Faize today.", False)):
        i = text.index("Faize")
        out = Merger("union", opts)([Span(i, i + 5, "PATIENT", "names:net")], Doc(Note("x", text)), NoteState())
        assert bool(out) is kept, text


def _login(text: str, word: str, source: str = "crf:single") -> Span:
    start = text.index(word)
    return Span(start, start + len(word), "USERNAME", source)


def test_a_crf_login_opening_with_a_clinical_code_is_none_in_mixed_case():
    """Lead, round 14: breadth12b reads '<participle> by <code>' as a login; the code is no login, a Title-case
    name after it is the clinician's, a capitals note or a rule's login keeps it."""
    from deid_core.engine.vetoes import guard_crf_logins

    def out(text: str, spans: list[Span]) -> list[tuple[str, str]]:
        return [(text[s.start:s.end], s.label) for s in guard_crf_logins(spans, text)]

    text = "Acidosis compensated by HCO3 of 30"
    assert out(text, [_login(text, "HCO3 of")]) == []
    text = "Caused by HSV2 reactivation"
    assert out(text, [_login(text, "HSV")]) == []  # the CRF's piece of the word: the whole word is the code
    text = "reviewed by PGY2 Ames"
    assert out(text, [_login(text, "PGY2 Ames")]) == [("Ames", "DOCTOR")]
    text = "Thank you. -- J. Quell, MD (NHJ70)"
    assert out(text, [_login(text, "NHJ70")]) == [("NHJ70", "USERNAME")]  # not after "by"
    text = "MESSAGE TAKEN BY XT41"
    assert out(text, [_login(text, "XT41")]) == [("XT41", "USERNAME")]  # a note in capitals
    text = "Signed by kq77 at 10:00; reviewed by AB12 ok"
    assert out(text, [_login(text, "kq77")]) == [("kq77", "USERNAME")]  # no code shape
    spans = [_login(text, "AB12"), _login(text, "AB12", "username-by-login")]
    assert ("AB12", "USERNAME") in out(text, spans)  # a rule's login beside it keeps the CRF's


def test_the_login_guard_can_be_turned_off():
    text = "Caused by HSV2 reactivation"
    doc = Doc(Note("n", text))
    on = Merger("union", load_config({"merge": {"propagate": False}}).merge)([_login(text, "HSV2")], doc, NoteState())
    off_opts = load_config({"merge": {"crf_login_guard": False, "propagate": False}}).merge
    off = Merger("union", off_opts)([_login(text, "HSV2")], doc, NoteState())
    assert [s.label for s in on] == [] and [s.label for s in off] == ["USERNAME"]
