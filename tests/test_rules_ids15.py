"""Round 15 (issue 14): field words that name an id from elsewhere than right before it on its line (after it,
in brackets or after 'is'; ending the line above), a writer's initials that look like a field word ('MR/cc/'),
a field word right at an id naming its repeats before a farther one, and the new table words (engine/field_ids.py,
[merge] id_fields). Every example is invented."""

from __future__ import annotations

import time

import pytest

from deid_core.app.options import effective_config
from deid_core.engine.field_ids import capital_logins, field_id_labels, table_pairs
from deid_core.spans import Span
from tests.adversarial import cpu_seconds
from tests.helpers_rules import crf_span

PAIRS = table_pairs(effective_config().merge.id_fields)
DECIDING = effective_config().merge.rule_label_sources


def _labels(text: str, spans: list[Span]) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.label) for s in field_id_labels(spans, text, PAIRS, DECIDING)]


@pytest.mark.parametrize("text,piece,label,want", [
    # the field word after the id, in brackets or after 'is'
    ("Ann Lee 4455667 (MRN) seen today", "4455667", "IDNUM", "MEDICALRECORD"),
    ("Ann Lee  4455667 [MRN]  DOB 3/4/1950", "4455667", "IDNUM", "MEDICALRECORD"),
    ("Ann Lee ( 4455667 ) ( Acct # )", "4455667", "MEDICALRECORD", "MEDICALRECORD"),  # not right after: no change
    ("Her number 4455667 is her MRN.", "4455667", "IDNUM", "MEDICALRECORD"),
    ("device 88XQ31204 (serial) placed", "88XQ31204", "MEDICALRECORD", "DEVICE"),
    # the field word ending the line above an id that opens its line
    ("Ann Lee\nAccount Number:\n   88776655\n", "88776655", "MEDICALRECORD", "ACCOUNT"),
    ("MRN\n4455667\nDOB 3/4/1950", "4455667", "IDNUM", "MEDICALRECORD"),
    # new table words
    ("EMPI: 4455667", "4455667", "IDNUM", "MEDICALRECORD"),
    ("Patient Number: 4455667", "4455667", "IDNUM", "MEDICALRECORD"),
    ("FIN: 88776655  HAR 77665544", "88776655", "IDNUM", "ACCOUNT"),
    ("FIN: 88776655  HAR 77665544", "77665544", "IDNUM", "ACCOUNT"),
])
def test_a_field_word_after_the_id_or_above_it_names_it(text, piece, label, want):
    assert _labels(text, [crf_span(text, piece, label)]) == [(piece, want)]


@pytest.mark.parametrize("text,piece,label", [
    ("MRN 4455667 (99887766) seen", "99887766", "IDNUM"),  # a number after another field's id
    ("kit 99812207 (MRN 4455667)", "99812207", "IDNUM"),  # '(MRN X)' names X, not the id before it
    ("Ann Lee\nMRN: 4455667 ref\n99812207\n", "99812207", "IDNUM"),  # a word other than a separator after it
    ("Ann Lee\nMRN:\n\n99812207\n", "99812207", "IDNUM"),  # a blank line between
    ("Ann Lee\nMRN:\nnotes 99812207\n", "99812207", "IDNUM"),  # the id does not open its line
    ("Dr Ames\nMRN:\n617-555-1212\n", "617-555-1212", "PHONE"),  # a phone number stays one
    ("Seen 3/4/2020 (MRN)", "3/4/2020", "DATE"),  # and a date
    ("Group 2019 (policy renewal)", "2019", "DATE"),
])
def test_look_alikes_of_a_field_word_elsewhere_keep_their_label(text, piece, label):
    assert _labels(text, [crf_span(text, piece, label)]) == [(piece, label)]


def test_a_writers_initials_are_no_field_word_and_a_near_field_word_names_the_repeats():
    # 'MR' of 'MR/cc/' is the dictating clinician's initials: the job number's label comes from 'JOB #:'
    text = "ANN LEE, M.D.\nMR/cc/22562-970\nD: 3/6/2018\nJOB #: 22562-970"
    spans = [crf_span(text, "22562-970", "MEDICALRECORD"), crf_span(text, "22562-970", "MEDICALRECORD", nth=1)]
    assert _labels(text, spans) == [("22562-970", "IDNUM"), ("22562-970", "IDNUM")]


def test_a_field_word_right_at_an_id_names_its_repeats_before_a_farther_one():
    # 'Chart' three words before the first mention names it loosely; 'Acct #' right before the second names both
    text = "Chart copy to billing: 88776655\nAcct #: 88776655"
    spans = [crf_span(text, "88776655", "MEDICALRECORD"), crf_span(text, "88776655", "MEDICALRECORD", nth=1)]
    assert _labels(text, spans) == [("88776655", "ACCOUNT"), ("88776655", "ACCOUNT")]


@pytest.mark.parametrize("text,spans,want", [
    # a login made of a person's name in the note: untagged or a one-word person span
    ("ROBERTO AMESTOY / AMESTOYR", [("ROBERTO AMESTOY", "DOCTOR")],
     [("ROBERTO AMESTOY", "DOCTOR"), ("AMESTOYR", "USERNAME")]),
    ("Signed: Ann Marie Quell, MD [annmarie]", [("Ann Marie Quell", "DOCTOR"), ("annmarie", "DOCTOR")],
     [("Ann Marie Quell", "DOCTOR"), ("annmarie", "USERNAME")]),
    ("Dr. Mark Stone reviewed; note by mstone.", [("Mark Stone", "DOCTOR")],
     [("Mark Stone", "DOCTOR"), ("mstone", "USERNAME")]),
    # no login: a dictionary word, a name written as a name, a one-word name, a piece of a longer word
    ("Will Power came; willpower was low.", [("Will Power", "PATIENT")], [("Will Power", "PATIENT")]),
    ("Ann Lee saw Lee today", [("Ann Lee", "PATIENT"), ("Lee", "PATIENT")], [("Ann Lee", "PATIENT"), ("Lee", "PATIENT")]),
    ("Stone saw mstone", [("Stone", "DOCTOR")], [("Stone", "DOCTOR")]),
    ("Mark Stone; xmstonex", [("Mark Stone", "DOCTOR")], [("Mark Stone", "DOCTOR")]),
])
def test_a_login_made_of_a_name_in_the_note_is_a_login(text, spans, want):
    assert _labels(text, [crf_span(text, p, lab) for p, lab in spans]) == want


@pytest.mark.parametrize("text,piece,want", [
    ("Seen 5/12 14:32\nCosigned 12th May 2020 by LVRB\n", "LVRB", "USERNAME"),
    ("Results called to Ann Lee, RN at 2200 on 11/6/2021 by NVLO.", "NVLO", "USERNAME"),
    # no login: a capitals line, words after it, a dictionary word, a name in the note, three letters
    ("COSIGNED BY LVRB\n", "LVRB", "DOCTOR"),
    ("Cosigned by LVRB and Ann Lee\n", "LVRB", "DOCTOR"),
    ("Note written by SMITH\n", "SMITH", "DOCTOR"),
    ("Seen 5/12 14:32\nCosigned by NOWAK\n", "NOWAK", "DOCTOR"),  # a known surname
    ("Seen 5/12 14:32\nCosigned by JONES\n", "JONES", "DOCTOR"),
    ("Seen by Dr. Ann Quell.\nCosigned by QUELL\n", "QUELL", "DOCTOR"),
    ("Cosigned by JQR\n", "JQR", "DOCTOR"),
])
def test_a_capitals_login_after_by_ending_its_line_is_a_login(text, piece, want):
    spans = [crf_span(text, piece, "DOCTOR")]
    if "Ann Quell" in text:
        spans.insert(0, crf_span(text, "Ann Quell", "DOCTOR"))
    assert (piece, want) in _labels(text, spans)


@pytest.mark.parametrize("text,piece,label,want", [
    # a field word glued by '/' to another field word is still a field word (only initials are not)
    ("Med Rec/MRN: 4455667", "4455667", "IDNUM", "MEDICALRECORD"),
    ("Hospital/MR #: 4455667", "4455667", "IDNUM", "MEDICALRECORD"),
    ("MRN/Acct: 4455667", "4455667", "IDNUM", "ACCOUNT"),
    ("AB/MR/4455667", "4455667", "IDNUM", "IDNUM"),  # 'MR' of initials
])
def test_field_words_glued_by_a_slash_are_initials_only_when_they_look_like_initials(text, piece, label, want):
    assert _labels(text, [crf_span(text, piece, label)]) == [(piece, want)]


def _names_note(n: int) -> tuple[str, list[Span]]:
    """n two-word names (letters only), each followed by a capitals word after 'by' and a login made of the name."""
    def word(i: int) -> str:
        return "".join("abcdefghij"[int(d)] for d in f"{i:05d}")
    text, spans = "", []
    for i in range(n):
        name = f"Ann{word(i)} Quell{word(i)}"
        a = len(text) + len("Seen by ")
        text += f"Seen by {name}, MD.\nCosigned by QVRB\naquell{word(i)}\n"
        spans.append(Span(a, a + len(name), "DOCTOR", "crf:single", 0.9))
        c = text.rindex("QVRB")
        spans.append(Span(c, c + 4, "DOCTOR", "crf:single", 0.9))
    return text, spans


def test_the_login_steps_are_linear_in_the_number_of_names():
    per_name = {}
    for n in (200, 2000):
        text, spans = _names_note(n)
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            out = field_id_labels(spans, text, PAIRS, DECIDING)
            best = min(best, time.process_time() - start)
        per_name[n] = best / n
        assert sum(s.label == "USERNAME" for s in out) == 2 * n  # the capitals words and the name-made logins
    assert per_name[2000] < 3 * per_name[200] + 2e-5, per_name


def test_a_login_made_of_a_name_is_found_after_a_letter_lower_casing_to_two():
    """'İ'.lower() has two characters: the search on the lower-cased note must not shift the offsets."""
    text = "Seen by Ann Quell. İİİ Login aquell signed."
    assert _labels(text, [crf_span(text, "Ann Quell", "DOCTOR")]) == [("Ann Quell", "DOCTOR"), ("aquell", "USERNAME")]


def test_the_capitals_login_step_is_linear_on_one_long_line():
    """Each capitals DOCTOR span read back to its line's start before asking whether it ends its line: quadratic
    on a note with no line break."""
    per_span = {}
    unit = "seen by QWRT and "
    for n in (5000, 80000):
        text = unit * n
        spans = [Span(i * len(unit) + 8, i * len(unit) + 12, "DOCTOR", "crf:single", 0.9) for i in range(n)]
        out = capital_logins(spans, text)
        best = cpu_seconds(lambda spans=spans, text=text: capital_logins(spans, text))
        per_span[n] = best / n
        assert all(s.label == "DOCTOR" for s in out)  # none ends its line
    assert per_span[80000] < 2 * per_span[5000] + 2e-6, per_span


@pytest.mark.parametrize("text,piece,label,want", [
    ("Seen 5/12 14:32\r\nCosigned 12th May 2020 by LVRB\r\n", "LVRB", "DOCTOR", "USERNAME"),
    ("Lab results:\r\nMRN:\r\n  4455667\r\n", "4455667", "IDNUM", "MEDICALRECORD"),
])
def test_crlf_line_ends_are_line_ends_for_the_round15_steps(text, piece, label, want):
    assert _labels(text, [crf_span(text, piece, label)]) == [(piece, want)]
