"""Round 12: the merge's and the name net's shortcuts (engine/initials.py, names.py, propagation.py) find
exactly what the full scans they replace find (invented text). Each property compares the shortcut with the
full scan on generated notes, so a shortcut that skips a word it should read fails here."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.initials import (
    _CANDIDATE,
    _dictation_line,
    _initials_words,
    dictation_initials,
    doctor_initials,
    metadata_initials,
    name_initials,
    patient_initials,
)
from deid_core.engine.label_decisions import _TITLE_BEFORE, _TITLED, _kin_context, kin_person_labels
from deid_core.engine.names import NameNet
from deid_core.engine.propagation import (
    _person_cue,
    is_crf,
    may_end_with,
    person_cue_word,
    phrase_ends,
    propagate_note,
    source_kind,
)
from deid_core.notes import Note
from deid_core.spans import Span

OPTS = load_config().merge
KEYS = tuple(OPTS.dictation_keys)
INITIALS = ["QT", "QKT", "AS", "ST", "KT", "DD"]


def _full_scan(text: str, spelt: set[str], pairs: set[str]) -> list[tuple[int, int, str]]:
    """Round 11's scan: every 2-3 letter word, then set lookups."""
    out = []
    for m in _CANDIDATE.finditer(text):
        w = m.group()
        if w in spelt or (len(w) == 3 and (w[0] + w[2]).upper() in pairs):
            out.append((m.start(), m.end(), w))
    return out


# letters of the initials in both cases, other letters, digits and every character _CANDIDATE's look-arounds read
_ASCII = st.lists(st.sampled_from(["QT", "qt", "QKT", "qxt", "AS", "as", "ST", "Q", "T", "a", "x", "X", "0", "_", " ",
                                   ".", "'", "-", "\n", "\t", "(", ")", "/", ":"]), max_size=16).map("".join)
_ANY = st.lists(st.sampled_from(["QT", "qt", "QKT", "qét", "AS", "ΣS", "as", "Q", "é", "Ö", "x", "0", "_", " ", ".",
                                 "'", "’", "-", "\n", "("]), max_size=16).map("".join)
_SETS = st.sets(st.sampled_from(INITIALS), min_size=1, max_size=4)


@settings(max_examples=400, deadline=None)
@given(_ASCII, _SETS, st.booleans())
@example(".QT -qt 'AS _as 0ST x(QKT) qxt-", {"QT", "AS", "ST"}, True)
def test_the_ascii_scan_finds_exactly_the_initials_the_full_scan_finds(text, initials, middle):
    spelt = set(initials) | {i.lower() for i in initials}
    pairs = {i for i in initials if len(i) == 2} if middle else set()
    assert text.isascii()
    assert list(_initials_words(text, spelt, pairs)) == _full_scan(text, spelt, pairs)


@settings(max_examples=200, deadline=None)
@given(_ANY, _SETS, st.booleans())
def test_any_text_finds_exactly_the_initials_the_full_scan_finds(text, initials, middle):
    spelt = set(initials) | {i.lower() for i in initials}
    pairs = {i for i in initials if len(i) == 2} if middle else set()
    assert list(_initials_words(text, spelt, pairs)) == _full_scan(text, spelt, pairs)


def test_the_ascii_scan_reads_the_edges_and_the_characters_around_a_word():
    """The cases a literal search gets wrong: a word at the text's start or end, after '_' (a candidate) but
    not after '.', '-', a digit or a letter, nor before '-' or a letter; 'QKT' by its pair; case mixed never."""
    spelt, pairs = {"QT", "qt"}, {"QT"}
    text = "QT x_QT .QT -QT 9QT aQT QT- QTa QKT qkt QkT qKt (qt) QT"
    assert [w for _, _, w in _initials_words(text, spelt, pairs)] == ["QT", "QT", "QKT", "qkt", "qt", "QT"]
    assert list(_initials_words(text, spelt, pairs)) == _full_scan(text, spelt, pairs)
    assert list(_initials_words(text, {"Qt", "QTTT"}, set())) == []  # no 2-3 letter word of one case


def test_patient_and_clinician_initials_are_the_same_on_ascii_and_non_ascii_notes():
    """An ASCII note takes the stdlib scans, a note with one accented letter the generic ones: same spans."""
    text = ("Pt: Tarrow, Quenby (QT)   41 YO F\nS: QT is a 41 yo woman. qkt is a 41-year woman. QT: see above.\n"
            "FS = FRANCINE SOWA, RN\nTURNED L SIDE  FS\nGM/ak/9912\nD: 3/29/09\n")
    spans = [Span(4, 18, "PATIENT", "crf:single"), Span(text.index("FRANCINE"), text.index(", RN"), "DOCTOR", "crf:single")]
    accented = text + "Café."
    assert text.isascii() and not accented.isascii()

    def run(t):
        out = patient_initials(spans, t, OPTS.patient_initials_verbs, OPTS.not_initials)
        out = doctor_initials(out, t, OPTS.not_initials, (), tuple(OPTS.clinical_not_initials))
        return [(s.start, s.end, s.label) for s in dictation_initials(out, t, KEYS)]
    got = run(text)
    assert got == run(accented)
    assert [text[a:b] for a, b, _ in got if (a, b, "PATIENT") not in [(s.start, s.end, s.label) for s in spans]
            and (a, b) != (spans[1].start, spans[1].end)] == ["QT", "QT", "qkt", "FS", "FS", "GM", "ak"]


_PIECES = st.sampled_from(["GM", "ak", "TCD", "mc", "GM/ak", "/9912", "NW:GBN", ":51-52", "/", ":", " ", "\t", "\n",
                           "9912", "D", "dd", "DT", "Dict", "dictated", "Transcribed", "\nD: 3/29/09", " DD 12-01-08",
                           ": ", "3/29/09", "June", " 19", "x", "-", "1", ".", "Pt", "q4h", "\r\n", "_"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=16))
@example(["GM/ak", "/9912", "\nD: 3/29/09"])
@example(["TCD", "/", "mc", ":", "\t", "dictated", ": ", "June", " 19"])
@example(["NW:GBN", ":51-52", " DD 12-01-08", "\r\n", "GM/ak", "\nD: 3/29/09"])
def test_the_ascii_dictation_pattern_matches_as_the_generic_one(pieces):
    text = "".join(pieces)
    fast, generic = _dictation_line(KEYS, True), _dictation_line(KEYS)
    assert fast is not generic
    assert ([(m.span(), m.span("run"), m.group("job")) for m in fast.finditer(text)]
            == [(m.span(), m.span("run"), m.group("job")) for m in generic.finditer(text)])


def test_dictation_keys_out_of_ascii_keep_the_generic_pattern():
    assert _dictation_line(("dé",), True) is None
    assert _dictation_line((), True) is None and _dictation_line(()) is None
    text = "Seen.\nGM/ak/9912\nD: 3/29/09\n"
    for t in (text, text + "Émile"):
        assert [t[s.start:s.end] for s in dictation_initials([], t, KEYS)] == ["GM", "ak"]


def test_metadata_initials_are_the_same_whatever_the_container():
    known = (("Quenby", "PATIENT"), ("Tarrow", "PATIENT"), ("Gil Marsh", "DOCTOR"))
    assert metadata_initials(known, "PATIENT") == {"QT"} == name_initials("Quenby Tarrow")
    assert metadata_initials([list(k) for k in known], "DOCTOR") == {"GM"}
    assert metadata_initials((), "PATIENT") == set()


_WORDS = st.sampled_from(["Dr", "DR", "dr", "Doctor", ".", ",", "Down", "DOWN", "down", "R", "c", "little", "NP",
                          "md", "MD", "on", "call", "For", "Any", "the", "Quorvik", "spoke", "with", "I", "Orders",
                          ":", "\n", "9"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(_WORDS, st.sampled_from([" ", "", "  "])), max_size=14))
def test_the_name_net_frames_only_words_after_a_title_or_a_dot(parts):
    """The name net tests its title and credential frames only after a doctor title or a '.'
    (NameNet._frame_words): the spans are those of a net that tests every word."""
    text = "".join(w + gap for w, gap in parts)

    class EveryWord(NameNet):
        def _frame_words(self, toks, low):
            return list(range(len(toks)))

    names = load_config().names
    doc = Doc(Note("n", text))
    assert NameNet(names).run(doc, NoteState()) == EveryWord(names).run(doc, NoteState())


def test_frames_after_a_glued_title_dot_and_after_an_initial_are_read():
    net = NameNet(load_config().names)
    for text, word in (("Seen by Dr. Down today.", "Down"), ("Seen by Dr Rue today.", "Rue"),
                       ("signed R. DOWN NP", "DOWN"), ("c. little md", "little")):
        assert [text[s.start:s.end] for s in net.run(Doc(Note("n", text)), NoteState())][-1].endswith(word)


def test_a_note_without_cued_name_words_skips_the_kin_words_and_keeps_its_spans():
    """propagate_note reads the kin words before names only for cued repeats: with none, the spans come back as
    they were; with one ('father royal' after 'father Royal'), the lower-case repeat is found."""
    text = "Her father Royal (50) visits. father royal helps."
    spans = [Span(11, 16, "PATIENT", "crf:single")]
    assert [text[s.start:s.end] for s in propagate_note(spans, text, OPTS)] == ["Royal", "royal"]
    text = "Her father Quorvik (50) visits. father quorvik helps."  # not a dictionary word: spreads freely
    assert [text[s.start:s.end] for s in propagate_note([Span(11, 18, "PATIENT", "crf:single")], text, OPTS)] == [
        "Quorvik", "quorvik"]


def test_source_kinds_are_memoised_without_changing_them():
    for source, kind, crf in (("crf:single", "crf", True), ("crf_char:x", "crf_char", True), ("rules:date", "rules", False),
                              ("names:net", "names", False), ("gaz-city/x", "gaz-city", False), ("", "", False)):
        assert source_kind(source) == kind
        assert is_crf(Span(0, 1, "CITY", source)) is crf


def _kin_labels_by_search(spans, text, kin_words):
    """Round 11's kin_person_labels: every DOCTOR span's windows searched."""
    before, after = _kin_context(tuple(kin_words))
    out = []
    for s in spans:
        if (s.label == "DOCTOR" and not _TITLED.match(text, s.start)
                and not _TITLE_BEFORE.search(text, max(0, s.start - 40), s.start)
                and (before.search(text, max(0, s.start - 40), s.start)
                     or after.match(text, s.end, min(len(text), s.end + 40)))):
            s = s.with_label("PATIENT")
        out.append(s)
    return out


def _cue_by_search(text, start, opts):
    """Round 11's person_cue_word: both cue patterns searched over the window."""
    for kind, cues in (("kin", opts.propagate_kin_words), ("cue", opts.propagate_cue_words)):
        cue = _person_cue(tuple(cues))
        m = cue.search(text, max(0, start - 40), start) if cue is not None else None
        if m is not None:
            return kind, " ".join(m.group("cue").lower().split())
    return None


_BEFORE = st.lists(st.sampled_from(["son", "Son", "SON", "grandson", "daughter-in-law", "in-law", "law", "mother",
                                    "social", "worker", "social worker", "Dr", "dr", "Dr.", ".", "x", "3", "-", "'",
                                    "’", ",", ":", ";", "(", " ", "  ", "\t", "\n", "his", "wife", "ſon", "é", "Mr",
                                    "caseworker"]), max_size=10).map("".join)
_AFTER = st.sampled_from(["", " (son)", ", her husband,", " ( wife )", ", the patient's daughter", ";", " MD", "(ſon)"])


@settings(max_examples=400, deadline=None)
@given(_BEFORE, _AFTER, st.sampled_from(["DOCTOR", "PATIENT"]))
def test_kin_labels_and_person_cues_are_those_of_the_full_window_search(before, after, label):
    """The kin and cue patterns are searched only where one of their last words ends right before the word
    (propagation.may_end_with): the labels and cues are those of searching every window."""
    text = before + "Quorvik" + after
    spans = [Span(len(before), len(before) + 7, label, "crf:single")]
    assert kin_person_labels(spans, text, OPTS.propagate_kin_words) == _kin_labels_by_search(
        spans, text, OPTS.propagate_kin_words)
    assert person_cue_word(text, len(before), OPTS) == _cue_by_search(text, len(before), OPTS)


def test_a_kin_or_cue_word_right_before_a_name_is_found_however_it_is_written():
    for before, kin in (("his son ", True), ("SON: ", True), ("daughter-in-law , ", True), ("stepson\t", True),
                        ("Son, ", True), ("grandson ", True), ("ſon ", True), ("son; ", False), ("sonar ", False),
                        ("json ", False)):
        text = before + "Quorvik called"
        spans = [Span(len(before), len(before) + 7, "DOCTOR", "crf:single")]
        assert (kin_person_labels(spans, text, OPTS.propagate_kin_words)[0].label == "PATIENT") is kin, before
        assert kin_person_labels(spans, text, OPTS.propagate_kin_words) == _kin_labels_by_search(
            spans, text, OPTS.propagate_kin_words)
    for before, cue in (("Dr. ", ("cue", "dr")), ("dr(", ("cue", "dr")), ("social worker: ", ("cue", "social worker")),
                        ("wife, ", ("kin", "wife")), ("MOTHER ( ", ("kin", "mother")), ("spoke with ", None)):
        assert person_cue_word(before + "Quorvik", len(before), OPTS) == cue, before


def test_phrase_ends_leave_the_search_to_the_regex_when_a_word_is_not_plain_ascii():
    assert phrase_ends(("son", "social worker", "son-in-law")) == (("son", "son-in-law", "worker"), 10)
    assert phrase_ends(("fiancé",)) is None and phrase_ends(("st.",)) is None and phrase_ends(()) is None
    assert may_end_with("ab ſon", 6, phrase_ends(("son",)))  # not ASCII: unsure
    assert not may_end_with("ab sun", 6, phrase_ends(("son",)))


def test_a_two_word_name_spreads_in_its_other_order():
    """Round 16: "Rose Little" tagged once is tagged where a header or a list inverts it ("LITTLE, ROSE"), and
    back; its words alone stay guarded (dictionary words: "little" in prose is no name)."""
    text = "Rose Little is a 44 yo F.\nLabs: LITTLE, ROSE 3/4. A little pain."
    spans = [Span(0, 11, "PATIENT", "names:net")]
    assert [text[s.start:s.end] for s in propagate_note(spans, text, OPTS)] == ["Rose Little", "LITTLE, ROSE"]
    text = "Pt: Quell, Anvar\nSeen with anvar quell today."
    spans = [Span(4, 16, "PATIENT", "crf:single")]
    assert [text[s.start:s.end] for s in propagate_note(spans, text, OPTS)] == ["Quell, Anvar", "anvar quell"]


@pytest.mark.parametrize(("text", "span"), [
    ("Attending: Dr. A. Page\nSent page, a second one at 3pm.", (15, 22)),  # "page, a": an initial inverted
    ("Attending: Page, A\nA page was sent to covering.", (11, 18)),  # "a page"
    ("Seen by Dr. Will Page.\nPlan: page, will call back.", (12, 21)),  # a function word
])
def test_a_name_with_an_initial_or_a_function_word_does_not_spread_inverted(text, span):
    """Review round 16: the other order of "A. Page" is "page, a", of "Page, A" "a page" (prose); an initial or a
    function word ("will", "may") is no name word to turn round."""
    spans = [Span(*span, "DOCTOR", "crf:single")]
    assert [text[s.start:s.end] for s in propagate_note(spans, text, OPTS)] == [text[span[0]:span[1]]]


@pytest.mark.parametrize(("text", "span", "expected"), [
    ("Pt: Rose Little\nHPI: 80 yo woman. Ate a little, rose from bed.", (4, 15), ["Rose Little"]),
    ("Dr. Mark Hall saw the patient. Will hall, mark the site.", (4, 13), ["Mark Hall"]),
    ("Pt: Rose Little\nLabs: LITTLE, ROSE 3/4; Little, Rose seen.", (4, 15), ["Rose Little", "LITTLE, ROSE", "Little, Rose"]),
    ("Pt: Quell, Anvar\nSeen with anvar quell today.", (4, 16), ["Quell, Anvar", "anvar quell"]),  # not both words
])
def test_a_name_of_two_dictionary_words_spreads_inverted_only_capitalised(text, span, expected):
    """Review round 16 (fixed round 17): "Rose Little" spread as "little, rose" into prose; the other order of a
    name whose two words are dictionary words now spreads only where both words open with a capital."""
    spans = [Span(*span, "PATIENT", "crf:single")]
    assert [text[s.start:s.end] for s in propagate_note(spans, text, OPTS)] == expected


def test_the_inverted_order_can_be_turned_off():
    opts = load_config({"merge": {"propagate_inverted": False}}).merge
    text = "Pt: Quell, Anvar\nSeen with anvar quell today."
    spans = propagate_note([Span(4, 16, "PATIENT", "crf:single")], text, opts)
    assert [text[s.start:s.end] for s in spans] == ["Quell, Anvar", "anvar"]  # its words alone still spread


@pytest.mark.parametrize(("text", "word", "expected"), [
    ("Consult for Mr. Glass.\n\nIMPRESSION: Glass has PTSD; the glass is empty.", "Glass", [16, 36]),
    ("Pt: Hope Little\nPain better. Hope reports less pain. Hope is to go home. hope reports", "Hope Little", [4, 29]),
    ("Pt: Hope Little\nHope to discharge. Hope: none. We hope reports come", "Hope Little", [4]),
])
def test_a_dictionary_word_name_spreads_to_a_capitalised_subject_before_a_reporting_verb(text, word, expected):
    """Round 17: a name word that is a dictionary word ("Glass", "Hope") spreads, capitalised, where it is a clause's
    subject before a [merge] propagate_subject_verbs verb, opening a line, a field or a sentence; not before "is",
    not in lower case, not elsewhere."""
    i = text.index(word)
    spans = propagate_note([Span(i, i + len(word), "PATIENT", "crf:single")], text, OPTS)
    assert [s.start for s in spans] == expected


@pytest.mark.parametrize(("text", "word"), [
    ("Seen with Dr. Hand today.\nEXAM:\nHand feels cold. Hand has improved.", "Hand"),
    ("Mr. Stone here for f/u.\nStone noted in the left kidney. Stone has passed.", "Stone"),
    ("Dr. Page saw pt.\nPage returned at 0300. Page has been sent.", "Page"),
    ("Ms. Rash here.\nSkin: Rash has resolved. Rash felt raised.", "Rash"),
])
def test_a_dictionary_word_name_does_not_spread_before_a_verb_a_thing_takes(text, word):
    """Review 17: "feels", the participles a passive reads the same ("noted", "returned", "felt") and a perfect tense
    ("has passed", "has been sent") take things as their subject: the body part, the stone, the page stay clear
    (left: "Dr. Hand" ... "Hand has mild swelling" spreads)."""
    i = text.index(word)
    spans = propagate_note([Span(i, i + len(word), "PATIENT", "crf:single")], text, OPTS)
    assert [s.start for s in spans] == [i]


def test_the_subject_spread_can_be_turned_off():
    opts = load_config({"merge": {"propagate_subject_verbs": []}}).merge
    text = "Consult for Mr. Glass.\n\nIMPRESSION: Glass has PTSD."
    assert len(propagate_note([Span(16, 21, "PATIENT", "crf:single")], text, opts)) == 1
