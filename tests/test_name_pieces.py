"""One person's name cut into pieces by the taggers made one span again (engine/name_pieces.py), the
recipient cut of CRF spans (label_decisions.recipient_names), and both through the default merge
(invented text)."""

import pytest

from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.label_decisions import recipient_names
from deid_core.engine.merge import union_merge
from deid_core.engine.name_pieces import join_name_pieces
from deid_core.notes import Note
from deid_core.spans import Span

OPTS = load_config().merge
ROLES = frozenset(OPTS.crf_name_lead_words)


def _spans(text: str, pieces: list[tuple[str, str, str]]) -> list[Span]:
    out, pos = [], 0
    for part, label, source in pieces:
        i = text.index(part, pos)
        out.append(Span(i, i + len(part), label, source))
        pos = i + len(part)
    return out


def _joined(text: str, pieces: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    out = join_name_pieces(_spans(text, pieces), text, OPTS.name_particles, ROLES, OPTS.hyphen_eponyms)
    assert all(a.end <= b.start for a, b in zip(out, out[1:], strict=False))  # never overlapping
    return [(text[s.start:s.end], s.label) for s in out]


@pytest.mark.parametrize(("text", "pieces", "expected"), [
    # two person pieces across a blank: the first piece's label (no context rule on either)
    ("History from friend Orla van den Quist today.",
     [("Orla", "PATIENT", "crf:single"), ("van den Quist", "DOCTOR", "crf:single")],
     [("Orla van den Quist", "PATIENT")]),
    # a context rule's label over a CRF guess
    ("uncle Yarro Pellquist, 50, sepsis",
     [("Yarro", "DOCTOR", "crf:single"), ("Pellquist", "PATIENT", "name-kin")],
     [("Yarro Pellquist", "PATIENT")]),
    # a name word the CRF read as a place, in the inverted order after a comma (a given name)
    ("last filled 2011-02-03 - QUELLMAN, SHAUNDA\nPharmacy: Rite Aid",
     [("QUELLMAN", "DOCTOR", "crf:single"), ("SHAUNDA", "ORGANIZATION", "crf:single")],
     [("QUELLMAN, SHAUNDA", "DOCTOR")]),
    ("MORVASH, Isabela - 8M - admitted 5/6",
     [("MORVASH", "PATIENT", "crf:single"), ("Isabela", "HOSPITAL", "crf:single")],
     [("MORVASH, Isabela", "PATIENT")]),
    # a hyphenated surname in two pieces
    ("Re: Claudia Renquist-Balzar (DOB 5/28/1961)",
     [("Claudia Renquist", "PATIENT", "crf:single"), ("Balzar", "DOCTOR", "crf:single")],
     [("Claudia Renquist-Balzar", "PATIENT")]),
])
def test_pieces_of_one_name_become_one_span(text, pieces, expected):
    assert _joined(text, pieces) == expected


@pytest.mark.parametrize(("text", "pieces"), [
    # a weekday after a name is a date, not a piece of the name
    ("Dispo: home. F/u Dr. Quellby Thursday. Work note given.",
     [("Quellby", "DOCTOR", "crf:single"), ("Thursday", "DATE", "crf:single")]),
    # a list of names
    ("Time-out performed with Brynn, Quazo and Pellick present.",
     [("Brynn", "DOCTOR", "crf:single"), ("Quazo", "DOCTOR", "crf:single")]),
    ("ASSISTANT: Dr. vk, Latoya\nSCRUB: M. Rock",
     [("vk", "DOCTOR", "crf:single"), ("Latoya", "DOCTOR", "crf:single")]),
    # a credential or a specialty after the comma, a clinical word, a rule's span
    ("REPORT GIVEN TO DYLAN, BSN, RN AT 6:30 PM",
     [("DYLAN", "DOCTOR", "crf:single"), ("BSN", "DOCTOR", "name-signature")]),
    ("Dr. N. Zoqa, Nephrology fellow, page 4455",
     [("N. Zoqa", "DOCTOR", "crf:single"), ("Nephrology", "DOCTOR", "names:net")]),
    ("seen by Dr. Quellby Memorial Hospital staff",
     [("Quellby", "DOCTOR", "crf:single"), ("Memorial Hospital", "HOSPITAL", "crf:single")]),
    ("seen by Dr. Quellby Brimford today",
     [("Quellby", "DOCTOR", "crf:single"), ("Brimford", "HOSPITAL", "hospital-keyword")]),
    # a kin word trimmed off a name stays off
    ("Collateral from fiancee V. Malquist (555): well.",
     [("fiancee", "PATIENT", "names:net"), ("V. Malquist", "PATIENT", "crf:single")]),
    # a possessive after the comma: two people
    ("Hello, this is Lukas, Ernesto's nephew.",
     [("Lukas", "PATIENT", "crf:single"), ("Ernesto", "PATIENT", "crf:single")]),
    # a role or dictionary word read as a name piece
    ("blue house. Caregiver Carmela (brother) present",
     [("Caregiver", "DOCTOR", "crf:single"), ("Carmela", "PATIENT", "name-kin")]),
    # two person labels in the inverted order: no evidence which one
    ("TRUVEL, Lamar - 72F - admitted 11/12",
     [("TRUVEL", "DOCTOR", "crf:single"), ("Lamar", "PATIENT", "crf:single")]),
    # a list with a serial comma before 'and', '&' or 'or': two people, not 'Last, First'
    ("Family: Kessick, Jordan, and Ann at bedside.",
     [("Kessick", "DOCTOR", "crf:single"), ("Jordan", "COUNTRY", "crf:single")]),
    ("Drs. Smith, Taylor, and Lee", [("Smith", "DOCTOR", "crf:single"), ("Taylor", "DOCTOR", "crf:single")]),
    ("Drs. Quellby, Taylor, & Vorn", [("Quellby", "DOCTOR", "crf:single"), ("Taylor", "DOCTOR", "crf:single")]),
    ("call Quellby, Taylor, or Vorn", [("Quellby", "DOCTOR", "crf:single"), ("Taylor", "DOCTOR", "crf:single")]),
    # an eponym's hyphen ('Jackson-Pratt'): a device, not a hyphenated name
    ("JACKSON-PRATT DRAIN", [("JACKSON", "DOCTOR", "crf:single"), ("PRATT", "ORGANIZATION", "crf:single")]),
])
def test_pieces_of_different_things_stay_apart(text, pieces):
    assert _joined(text, pieces) == [(p, label) for p, label, _ in pieces]


@pytest.mark.parametrize(("text", "piece", "expected"), [
    ("Discussed with O'Brell, Ajoke, M.D.", "Brell, Ajoke", "O'Brell, Ajoke"),
    ("Yours sincerely, for j. pikus-vertanz", "vertanz", "pikus-vertanz"),
    ("llow-up CT.\nVAN DRUYKE, JON MD / VE", "DRUYKE, JON", "VAN DRUYKE, JON"),
    ("GI WAS CONSULTED (JEAN DE LACROIX, MD).", "JEAN DE", "JEAN DE LACROIX"),
    ("GI WAS CONSULTED (RODNEY LA RUE, MD).", "RODNEY LA", "RODNEY LA RUE"),
    ("ORDERING: DR. VAN DRUYKE   LOCATION: MERCY", "VAN", "VAN DRUYKE"),
    ("PT eval by Milo O'Neeil Tuesday.", "Milo O", "Milo O'Neeil"),
    ("Results called to BENJAMIN ARIETTA-HOLZBORG RD", "BENJAMIN ARIETTA", "BENJAMIN ARIETTA-HOLZBORG"),
    # round 15: a half that is a dictionary word but a known name (a double-barrelled surname cut at its hyphen)
    ("FOLLOWUP: Dr. Quellstad-Page in one week", "Quellstad", "Quellstad-Page"),
    ("Signed: COX-QUELLBY, NICKOLE, M.D.", "QUELLBY, NICKOLE", "COX-QUELLBY, NICKOLE"),
])
def test_a_person_span_grows_over_untagged_particles_and_glued_name_words(text, piece, expected):
    assert _joined(text, [(piece, "DOCTOR", "crf:single")]) == [(expected, "DOCTOR")]


@pytest.mark.parametrize(("text", "piece"), [
    ("Seen on the ward by Quellby-like staff", "Quellby"),  # a dictionary word glued on
    ("NOTED BY DE Quellby today", "Quellby"),  # a particle in capitals before a Title-case piece
    ("Dr. Rodney La at bedside", "Rodney La"),  # after a final particle, a function word
    ("CRITICAL RESULT CALLED TO AL LPN (555-0101)", "AL"),  # a lone particle-word span; a credential
    ("DRIP-GIVEN. CARAFATE-W. QUELLOTTA AWARE", "W. QUELLOTTA"),  # no glued growth onto an initial
    ("Dr. Quell le fort fracture.", "Quell le"),  # a clinical word after a particle, a word after it
    ("Dr. Quell al fresco meeting.", "Quell al"),
    ("Jackson-Pratt drain placed by Dr. Jackson.", "Jackson"),  # an eponym ([merge] hyphen_eponyms)
    ("MALLORY-WEISS TEAR", "MALLORY"),
    ("h/o Stevens-Johnson", "Johnson"),
    ("seen by Quellby-Will today", "Quellby"),  # a known name that is a function word ("will")
    ("Quellby-Cancer center", "Quellby"),  # a medical word
    ("Dr. Quellby-page", "Quellby"),  # another case
])
def test_no_growth_over_dictionary_words_or_mixed_case(text, piece):
    assert _joined(text, [(piece, "DOCTOR", "crf:single")]) == [(piece, "DOCTOR")]


@pytest.mark.parametrize(("text", "pieces", "expected"), [
    # both pieces may grow over the particle between them: the second stops at the first's growth
    ("Seen by Ann van de Tamsel", ["Ann van", "Tamsel"], "Ann van de Tamsel"),
    ("SEEN BY ANN DEL LA TAMSEL", ["ANN DEL", "TAMSEL"], "ANN DEL LA TAMSEL"),
])
def test_neighbours_growing_over_one_particle_never_overlap(text, pieces, expected):
    assert _joined(text, [(p, "DOCTOR", "crf:single") for p in pieces]) == [(expected, "DOCTOR")]


def test_a_crf_span_run_over_a_recipient_word_is_cut_there():
    text = "FAX to 555 201 3344 attn Dorrit Vaneska-Holm - March 2, 2011"
    crf = _spans(text, [("555 201 3344 attn Dorrit Vaneska-Holm", "FAX", "crf:single")])
    out = recipient_names(crf, text, OPTS.recipient_words)
    assert [(text[s.start:s.end], s.label) for s in out] == [("555 201 3344", "FAX"),
                                                            ("Dorrit Vaneska-Holm", "DOCTOR")]
    text = "FAX TO 555.201.3344 ATTN: BILLING OFFICE"  # no person after the cue: the span stays
    crf = _spans(text, [("555.201.3344 ATTN: BILLING OFFICE", "FAX", "crf:single")])
    assert recipient_names(crf, text, OPTS.recipient_words) == crf
    assert recipient_names(crf, text, []) == crf


def test_the_default_merge_joins_the_pieces_and_the_switch_turns_it_off():
    text = "History from friend Orla van den Quist today."
    spans = _spans(text, [("Orla", "PATIENT", "crf:single"), ("van den Quist", "DOCTOR", "crf:single")])
    doc = Doc(Note("n", text))
    out = union_merge(load_config())(spans, doc)
    assert [(text[s.start:s.end], s.label) for s in out] == [("Orla van den Quist", "PATIENT")]
    off = union_merge(load_config({"merge": {"join_name_pieces": False}}))(spans, doc)
    assert [(text[s.start:s.end], s.label) for s in off] == [("Orla", "PATIENT"), ("van den Quist", "DOCTOR")]
