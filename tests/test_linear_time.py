"""Linear time on hostile notes (issue 13.1): CPU time at 40k characters over CPU time at 4k stays
below RATIO_LIMIT (a linear step gives ~10, a quadratic one ~100) for every crafted input of
tests/adversarial.py, in every step: tokenizer, sentences, sections, attributes, each rule file
(also on texts made of its own triggers and examples),
gazetteer rules, metadata matching, merge and propagation, and the whole Deidentifier.

Not a benchmark: only the ratio is asserted, on the calling thread's CPU time, the small size the
minimum of a few runs and the large one timed once (noise there only raises the ratio; see
adversarial.growth). `python -m benchmarks linear` prints absolute times. A ratio over the limit
is measured once more with several runs of both sizes, and then confirmed from LARGE to 2 * LARGE
(timings of tens of milliseconds; a linear step doubles, a quadratic one quadruples) before the test
fails, so load on the shared machine (cache pressure on millisecond timings) does not fail it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import pytest

from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.notes import Note
from tests.adversarial import KINDS, KNOWN_PHI, growth, rule_file_kinds

RATIO_LIMIT = 15.0
DOUBLING_LIMIT = 3.0  # LARGE -> 2 * LARGE: a linear step gives ~2, a quadratic one ~4
SMALL, LARGE = 4_000, 40_000
RULE_FILES = ("rules/contact.toml", "rules/ids.toml", "rules/dates.toml", "rules/ages.toml",
              "rules/locations.toml", "rules/names.toml", "rules/nonphi.toml")


def rule_tagger(**rules):
    """A RuleTagger with [rules] settings changed from conf/deidentify.toml."""
    from deid_core.config import load_config
    from deid_core.engine.rules.tagger import RuleTagger

    return RuleTagger(load_config({"rules": rules}).rules)


def doc_of(text: str) -> Doc:
    return Doc(Note("adv", text, "p-adv", None, KNOWN_PHI))


def assert_linear(fn: Callable[[str], object], what: str, kinds: dict | None = None, repeats: int = 3) -> None:
    """fn's CPU-time ratio LARGE / SMALL below RATIO_LIMIT on every kind (one re-measure allowed)."""
    bad = []
    for kind, make in (kinds or KINDS).items():
        ta, tb, ratio = growth(fn, make, SMALL, LARGE, repeats)
        if ratio >= RATIO_LIMIT:
            ta, tb, ratio = growth(fn, make, SMALL, LARGE, repeats + 2, large_repeats=repeats + 2)
        if ratio >= RATIO_LIMIT:  # confirmed at sizes whose timings are long enough not to be noise
            _, tc, doubled = growth(fn, make, LARGE, 2 * LARGE, repeats, large_repeats=repeats)
            if doubled >= DOUBLING_LIMIT:
                bad.append(f"{kind}: {ta:.4f} s at {SMALL}, {tb:.4f} s at {LARGE} (x{ratio:.0f}), "
                           f"{tc:.4f} s at {2 * LARGE} (x{doubled:.1f})")
    assert not bad, f"{what} grows faster than linear:\n" + "\n".join(bad)


def test_tokenizer_is_linear():
    from deid_core.text.tokenize import _unicode_token_offsets, token_offsets

    assert_linear(token_offsets, "token_offsets")
    assert_linear(_unicode_token_offsets, "the Unicode tokenizer")


def test_sentences_sections_attributes_are_linear():
    from deid_core.text.attributes import attributes
    from deid_core.text.sections import find_sections
    from deid_core.text.tokenize import sentence_bounds

    assert_linear(sentence_bounds, "sentence_bounds")
    assert_linear(find_sections, "find_sections")
    assert_linear(lambda t: attributes(doc_of(t)), "attributes")


def test_normalized_view_is_linear():
    from deid_core.text.normalize import normalize_text

    assert_linear(lambda t: normalize_text(t.replace("a", "\u200b")), "normalize_text")


@pytest.mark.parametrize("rule_file", RULE_FILES)
def test_each_rule_file_is_linear(rule_file):
    tagger = rule_tagger(files=[rule_file], gazetteer_file="", metadata=False)
    assert_linear(lambda t: tagger.tag(doc_of(t)), rule_file, {**KINDS, **rule_file_kinds(rule_file)})


def test_gazetteer_rules_and_metadata_matching_are_linear():
    gaz = rule_tagger(files=["rules/nonphi.toml"], metadata=False)
    assert_linear(lambda t: gaz.gazetteer_spans(doc_of(t)), "gazetteer rules")
    meta = rule_tagger(files=["rules/nonphi.toml"], gazetteer_file="", metadata=True)
    assert_linear(lambda t: meta.metadata.match(doc_of(t)), "metadata matching")


@cache
def default_deidentifier():
    from deid_core.app.options import effective_config
    from deid_core.bundle import load_bundle
    from deid_core.engine.pipeline import build_deidentifier

    return build_deidentifier(effective_config(), load_bundle(), b"linear-time-test-key-0123456789ab")


@cache
def stage_spans(text: str) -> tuple[list, Doc, NoteState]:
    """Every stage's spans of a crafted note (computed once, outside the timed merge)."""
    deid = default_deidentifier()
    doc = doc_of(text)
    state = NoteState()
    found = []
    for stage in deid.stages:
        found += state.spans.setdefault(stage.name, stage.run(doc, state))
    return found, doc, state


def test_merge_and_propagation_are_linear():
    deid = default_deidentifier()

    def merge(text: str) -> None:
        found, doc, state = stage_spans(text)
        merged = deid.merge(found, doc, state)
        deid.cross_note.spread([(text, merged), ("Seen today with Smith.", [])])

    def primed(make: Callable[[int], str]) -> Callable[[int], str]:
        return lambda n: stage_spans(make(n))[1].text  # the stages run here, untimed: only merge is timed

    assert_linear(merge, "merge + propagation", {kind: primed(make) for kind, make in KINDS.items()})


def test_round10_label_decisions_are_linear_on_one_long_span():
    """Round 10: the place head and the field key are read in a bounded window, whatever the span's length."""
    from deid_core.config import load_config
    from deid_core.engine.label_decisions import person_field_labels, place_head_labels
    from deid_core.spans import Span

    m = load_config().merge

    def run(text: str) -> None:
        place_head_labels([Span(0, len(text), "CITY", "crf:single")], text, {"general": "HOSPITAL"})
        person_field_labels([Span(0, len(text), "PATIENT", "crf:single")], text, m.patient_field_keys,
                            m.doctor_field_keys)

    assert_linear(run, "label decisions", {"one word then a letter": lambda n: "a" * (n - 2) + "!b",
                                           "words": lambda n: ("Quell " * n)[:n - 8] + " General"})


def test_round11_kin_labels_and_patient_initials_are_linear():
    """Round 11: kin words are read in a bounded window beside a span, initials candidates in a bounded
    window around each, whatever the span's or the note's length."""
    from deid_core.config import load_config
    from deid_core.engine.initials import dictation_initials, doctor_initials, patient_initials
    from deid_core.engine.label_decisions import kin_person_labels
    from deid_core.spans import Span

    m = load_config().merge

    def run(text: str) -> None:
        kin_person_labels([Span(0, len(text), "DOCTOR", "crf:single")], text, m.propagate_kin_words)
        name = Span(0, 13, "PATIENT", "crf:single")
        patient_initials([name], text, m.patient_initials_verbs, m.not_initials)
        doctor_initials([name.with_label("DOCTOR")], text, m.not_initials)
        dictation_initials([name], text, m.dictation_keys)

    assert_linear(run, "round 11 label decisions", {
        "initials": lambda n: ("Quenby Tarrow " + "(QT) QT is a 4 Pt QT, QT/qt/ by QT  QT\n" * n)[:n],
        "blanks": lambda n: "Quenby Tarrow" + " " * (n - 17) + "(QT)",
        "kin words": lambda n: ("Quenby Tarrow" + " son" * n)[:n],
        "dictation lines": lambda n: ("Quenby Tarrow\n" + "QT/kb/QT/ab/1-2 QT/qt\n" * n)[:n - 6] + "\nD: 3/"})


def test_round11_initials_of_many_names_are_linear():
    """Round 11: initials are found by one generic pass and set lookups, so a patient whose notes name many
    people (the union of the initials of all their notes, propagate_patient) costs no more per character."""
    from itertools import product
    from string import ascii_uppercase

    from deid_core.config import load_config
    from deid_core.engine.initials import doctor_initials, patient_initials

    m = load_config().merge
    every = ["".join(p) for p in product(ascii_uppercase, repeat=3)]

    def run(text: str) -> None:
        known = set(every[:len(text) // 40])  # distinct names grow with the patient's text
        patient_initials([], text, m.patient_initials_verbs, m.not_initials, known)
        doctor_initials([], text, m.not_initials, known)

    assert_linear(run, "initials of many names", {
        "many initials": lambda n: ("".join(f"Pt {w} states. by {w}.  {w}\n" for w in every) * (1 + n // 500_000))[:n]})


def test_round12_name_pieces_and_recipient_cut_are_linear():
    """Round 12: each span looks at its neighbour and a bounded window at its edges (name pieces), a recipient
    cue is searched inside one span (recipient cut), whatever the number of spans or a span's length."""
    import regex

    from deid_core.config import load_config
    from deid_core.engine.label_decisions import recipient_names
    from deid_core.engine.name_pieces import join_name_pieces
    from deid_core.spans import Span

    m = load_config().merge
    roles = frozenset(m.crf_name_lead_words)

    def run(text: str) -> None:
        spans = [Span(a.start(), a.end(), "DOCTOR" if k % 2 else "HOSPITAL", "crf:single")
                 for k, a in enumerate(regex.finditer(r"[^ ,'-]+", text))]
        join_name_pieces(spans, text, m.name_particles, roles)
        recipient_names([Span(0, len(text), "FAX", "crf:single")], text, m.recipient_words)

    assert_linear(run, "round 12 name pieces", {
        "pieces": lambda n: ("Quell Van-Dorr, Ann O'Brel la " * n)[:n],
        "particles": lambda n: ("van " * n)[:n - 6] + " Quell",
        "attn": lambda n: ("555 attn " * n)[:n - 9] + "Ann Quell"})


def test_round13_place_decisions_are_linear():
    """Round 13: a state after each of many towns, many records keepers, lead words opening a long place span and
    many name-net spans beside many place rule spans cost linear time (bisect, no span-by-span scans)."""
    import regex

    from deid_core.config import load_config
    from deid_core.engine.place_decisions import (
        person_records_organizations,
        place_rules_cut_net,
        state_after_town,
        trim_place_leads,
    )
    from deid_core.spans import Span

    m = load_config().merge
    lead = frozenset(w.lower() for w in m.place_lead_words)

    def run(text: str) -> None:
        words = list(regex.finditer(r"[A-Za-z]+", text))
        towns = [Span(a.start(), a.end(), "CITY", "crf:single") for a in words if a.group().istitle()]
        state_after_town(towns, text)
        people = [Span(a.start(), a.end(), "PATIENT", "name-kin") for a in words if a.group().istitle()]
        person_records_organizations(people, text, m.organization_record_words)
        trim_place_leads([Span(0, len(text), "ORGANIZATION", "crf:single")], text, lead)
        places = [Span(a.start(), a.end(), "COUNTRY", "country-context") for a in words if a.group().istitle()]
        nets = [Span(a.start(), min(len(text), a.end() + 8), "PATIENT", "names:net") for a in words]
        place_rules_cut_net([*places, *nets], text, m.rule_label_sources)

    assert_linear(run, "round 13 place decisions", {
        "towns": lambda n: ("Quell, MA, Dorr NH " * n)[:n],
        "records": lambda n: ("per Quell Pharmacy records and Dorr records " * n)[:n],
        "leads": lambda n: ("attends for the " * n)[:n]})



def test_round14_place_decisions_are_linear():
    """Round 14: gazetteer labels and state joins over many place spans, many strong-frame towns and their
    repeats, and many professions each before an employer cost linear time (set look-ups, bisect)."""
    import regex

    from deid_core.config import load_config
    from deid_core.engine.label_decisions import place_heads
    from deid_core.engine.place_decisions import (
        gazetteer_place_labels,
        grow_place_heads,
        profession_employers,
        town_labels,
    )
    from deid_core.spans import Span

    m = load_config().merge

    def run(text: str) -> None:
        words = list(regex.finditer(r"[A-Za-z]+", text))
        places = [Span(a.start(), a.end(), "CITY", "crf:single") for a in words]
        gazetteer_place_labels(places, text)
        towns = [Span(a.start(), a.end(), "CITY" if k % 2 else "HOSPITAL", "city-residence-state" if k % 2 else "crf:single")
                 for k, a in enumerate(words)]
        town_labels(towns, text, m.town_label_sources)
        jobs = [Span(a.start(), a.end(), "PROFESSION" if a.group() == "roofer" else "PATIENT", "crf:single") for a in words]
        profession_employers(jobs, text)
        heads = place_heads(m.hospital_head_words, m.organization_head_words)
        grow_place_heads([Span(0, len(text), "HOSPITAL", "crf:single"), *places[1:]], text, heads)

    assert_linear(run, "round 14 place decisions", {
        "states": lambda n: ("west virginia new york Ohio " * n)[:n],
        "towns": lambda n: ("Quellton Dorr Harrow " * n)[:n],
        "employers": lambda n: ("roofer at Quellmart Dorr " * n)[:n],
        "heads": lambda n: ("Quell High School " * n)[:n]})

def test_round14_rule_extents_are_linear_on_one_long_crf_span():
    """Round 14: a long CRF span of a deciding rule's own label over many of its numbers: digits are counted once
    per note and the CRF's remainder is cut in one sweep over the rules."""
    import regex

    from deid_core.engine.label_decisions import rule_labels_win
    from deid_core.spans import Span

    def run(text: str) -> None:
        rules = [Span(m.start(), m.end(), "EMAIL", "email") for m in regex.finditer(r"\S+@\S+", text)]
        rules += [Span(m.start(), m.end(), "FAX", "fax") for m in regex.finditer(r"\d{3} \d{4}", text)]
        label = "EMAIL" if "@" in text else "FAX"
        rule_labels_win([Span(0, len(text), label, "crf:single"), *rules], text, ["fax", "email"])

    assert_linear(run, "same-label rule extents", {"fax numbers": lambda n: ("Fax 555 2013 " * n)[:n],
                                                   "addresses without digits": lambda n: ("mail ann@quell.org " * n)[:n]})


def test_round14_rule_label_rivals_are_found_by_bisection():
    """Review14: a note of many numbers that both the CRF and a deciding rule find: each CRF span's rivals are
    found by bisection over the rule spans, not by comparing it with every one (quadratic before)."""
    import regex

    from deid_core.engine.label_decisions import rule_labels_win
    from deid_core.spans import Span

    def run(text: str) -> None:
        rules = [Span(m.start(), m.end(), "FAX", "fax") for m in regex.finditer(r"\d{3} \d{4}", text)]
        crf = [Span(m.start(), m.end(), "FAX", "crf:single") for m in regex.finditer(r"Fax \d{3} \d{4}", text)]
        crf += [Span(m.start(), m.end(), "PHONE", "crf:single") for m in regex.finditer(r"\d{3}-\d{4}", text)]
        rule_labels_win([*crf, *rules], text, ["fax"])

    assert_linear(run, "rule_labels_win's rivals", {"fax lines": lambda n: ("Fax 555 2013\n" * n)[:n],
                                                   "phone lines": lambda n: ("Tel 555-2013 555 2013\n" * n)[:n]})


@pytest.mark.slow
def test_whole_deidentifier_is_linear():
    deid = default_deidentifier()

    def process(text: str) -> None:
        res = deid.process_many([Note("adv", text, "p-adv", None, KNOWN_PHI),
                                 Note("other", "Seen today with Smith.", "p-adv", None, KNOWN_PHI)])
        assert res[0].ok, (res[0].error_stage, res[0].error_class)

    assert_linear(process, "Deidentifier.process_many", repeats=2)


def test_round13_flowsheet_initials_and_name_frames_are_linear():
    """Round 13: flowsheet rows are read line by line (a lazy scan bounded by the line), the net's kin and
    credential frames look at a fixed window around each cue word."""
    from deid_core.config import load_config
    from deid_core.engine.initials import flowsheet_initials, not_clinician_initials
    from deid_core.engine.names import name_stage

    config = load_config()
    m, net = config.merge, name_stage(config, None)
    clinical = not_clinician_initials(m)

    def run(text: str) -> None:
        flowsheet_initials([], text, m.not_initials, clinical)
        net.run(doc_of(text), NoteState())

    assert_linear(run, "round 13 flowsheet initials and name frames", {
        "rows": lambda n: ("2300  turned L side  qvd\n" * n)[:n],
        "one long row": lambda n: "2300  " + ("a  " * n)[:n - 11] + "  qvd",
        "blank columns": lambda n: "2300  " + " " * (n - 9) + "qvd",
        "kin frames": lambda n: ("her mother Ginger, son hope helps, wife D. Deep. " * n)[:n],
        "credential pairs": lambda n: ("Hope Black, RN Rose Hill MD M. LA RUE, MD GERI (CNA) " * n)[:n]})


def test_round14_title_labels_signature_lines_and_capitals_kin_are_linear():
    """Round 14: the signature-line frame reads a bounded window before and after each credential (a line of
    credentials, or one with no line break, stays linear), the capitals kin frame a fixed window around each
    relation word, and title labels a fixed window before each person span."""
    from deid_core.config import load_config
    from deid_core.engine.label_decisions import title_labels
    from deid_core.engine.names import name_stage
    from deid_core.spans import Span

    config = load_config()
    m, net = config.merge, name_stage(config, None)
    roles = frozenset(m.crf_name_lead_words)

    def run(text: str) -> None:
        net.run(doc_of(text), NoteState())
        spans = [Span(i, i + 5, "DOCTOR", "crf:single") for i in range(4, len(text) - 5, 40)]
        title_labels(spans, text, m.patient_titles, roles)

    assert_linear(run, "round 14 signature lines, capitals kin, title labels", {
        "credentials on one line": lambda n: ("draga pop rn bsn " * n)[:n],
        "signature lines": lambda n: ("draga pop bsn, rn  3/12 0800\n" * n)[:n],
        "capitals kin": lambda n: ("WITH HER DAUGHTER QUARTZELL, HIS WIFE TOPAZ)\n" * n)[:n],
        "titles": lambda n: ("Mr. Quellby is a 22 yo man, Ms. Quellby, RN " * n)[:n]})


def test_round15_name_frames_and_clinician_roles_are_linear():
    """Round 15: the break-cover frame reads one match after each "covering" and a bounded window before it, the
    initials after "Dr." and the pairs of credentials a fixed number of tokens, clinician roles a fixed window
    before each PATIENT span."""
    from deid_core.config import load_config
    from deid_core.engine.label_decisions import clinician_labels
    from deid_core.engine.names import name_stage
    from deid_core.spans import Span

    config = load_config()
    m, net = config.merge, name_stage(config, None)

    def run(text: str) -> None:
        net.run(doc_of(text), NoteState())
        spans = [Span(i, i + 5, "PATIENT", "crf:single") for i in range(4, len(text) - 5, 40)]
        clinician_labels(spans, text, m.clinician_titles, frozenset(), m.clinician_roles)

    assert_linear(run, "round 15 name frames, clinician roles", {
        "break covers": lambda n: ("ann covering lee bo's pts; " * n)[:n],
        "coverings without pts": lambda n: ("covering " * n)[:n],
        "one long word after covering": lambda n: ("ann covering " + "q" * n)[:n],
        "initials and pairs": lambda n: ("Dr. QX. W. Quell MD and ping rn, chaplain Ann Quell " * n)[:n]})


def test_round16_letter_frames_and_inverted_names_are_linear():
    """Round 16: each frame opening a line reads its line and at most a few lines under it, the copies line its
    items, the dash signature the last line, an inverted name a bounded window around each proposed given name."""
    from deid_core.config import load_config
    from deid_core.engine.names import name_stage

    net = name_stage(load_config(), None)

    def run(text: str) -> None:
        net.run(doc_of(text), NoteState())

    assert_linear(run, "round 16 letter frames, inverted names", {
        "valedictions and signers": lambda n: ("Sincerely,\n\nRose Little, RN\n" * n)[:n],
        "valedictions without signers": lambda n: ("Thanks,\n\n\n" * n)[:n],
        "greetings": lambda n: ("Dear Rose,\nHi Hope!\n" * n)[:n],
        "one long copies line": lambda n: ("cc: " + "Page, Hunter; " * n)[:n],
        "inverted names": lambda n: ("PCP: Vole, Harriet  " * n)[:n],
        "one long dash line": lambda n: ("- " + "Rose " * n)[:n]})


def test_round17_name_frames_are_linear():
    """Round 17: a bracket reads a bounded run of words back, a copies line at most a few lines below it, a signature
    line a bounded window back to its start, a possessive a fixed window before each kin word."""
    from deid_core.config import load_config
    from deid_core.engine.names import name_stage

    net = name_stage(load_config(), None)

    def run(text: str) -> None:
        net.run(doc_of(text), NoteState())

    assert_linear(run, "round 17 name frames", {
        "brackets": lambda n: ("IRYA DE (PARTNER) Hattie Quorn (72 F) ryfosuk (PA-C) " * n)[:n],
        "particles before a bracket": lambda n: ("Quorn " + "de " * n)[:n - 6] + " (son)",
        "copies lines at the end": lambda n: ("Sincerely,\n" + "x\n" * (n // 4) + "CC: BURNS, PAGE\n" * n)[:n],
        "many copies lines": lambda n: ("CC: BURNS, PAGE\n" * n)[:n],
        "signature lines": lambda n: ("Major Bell, MD\n" * n)[:n],
        "one long line of credentials": lambda n: ("Major Bell MD " * n)[:n],
        "possessives": lambda n: ("Hope's husband " * n)[:n],
        "columns": lambda n: ("given  V. Best\n" * n)[:n]})


def test_a_200k_space_note_takes_seconds():
    import time

    deid = default_deidentifier()
    t0 = time.process_time()
    res = deid.process(Note("spaces", " " * 200_000, "p"))
    assert res.ok and res.text == " " * 200_000
    assert time.process_time() - t0 < 5.0


def test_a_planted_quadratic_rule_fails_the_check(tmp_path):
    """The check's power to fail: a rule whose every match attempt reads to the end of a run is quadratic."""
    planted = tmp_path / "quadratic.toml"
    planted.write_text("[[rule]]\nid = \"planted-quadratic\"\nlabel = \"DOCTOR\"\npriority = 60\n"
                       "pattern = '''(?:Smith )+MD'''\n")
    tagger = rule_tagger(files=[str(planted)], gazetteer_file="", metadata=False)
    # cheap, still n^2; one real match up front, so the one-pass screen (screen.py) lets the rule run
    run = {"a quarter of Smith repeated": lambda n: ("Smith MD " + KINDS["Smith repeated"](n // 4)).ljust(n)}
    with pytest.raises(AssertionError, match="grows faster than linear"):
        assert_linear(lambda t: tagger.tag(doc_of(t)), "the planted rule", run)


def test_round16_organization_kinds_and_field_values_are_linear():
    """Round 16 (review16): many kind hits and field values in one long note cost linear time: the look for a
    'Pharmacy' after each entry is bounded (the regex module searches a required literal up to the end of the text)."""
    from deid_core.config import load_config
    from deid_core.engine import org_decisions as od

    m = load_config().merge
    framing = od.frames(m.organization_frame_words, m.organization_field_words, m.organization_store_words,
                        m.organization_tail_words)

    def run(text: str) -> None:
        od.named_organizations([], Doc(Note("x", text)), framing, m)

    # 4k -> 40k hides it (a few ms): 100k -> 400k characters, a linear step gives ~4, the unbounded look ~10 or more
    for kind, make in {"kinds": lambda n: ("Quell Home Care. " * n)[:n],
                       "fields": lambda n: ("Company: Quellco\n" * n)[:n]}.items():
        ratio = min(growth(run, make, 100_000, 400_000, 2, large_repeats=k)[2] for k in (1, 2))
        assert ratio < 7.0, f"round 16 organization decision on {kind}: x{ratio:.1f} from 100k to 400k characters"


def test_round17_lower_case_list_names_on_one_long_line_are_linear():
    """Review17: a list name on a lower-case line ('resources given: elder services, ...') reads its line once, not
    once per entry (orgs17's _lower_line scanned the whole line for each entry: quadratic on one long line)."""
    from deid_core.config import load_config
    from deid_core.engine import org_decisions as od

    m = load_config().merge
    framing = od.frames(m.organization_frame_words, m.organization_field_words, m.organization_store_words,
                        m.organization_tail_words)

    def run(text: str) -> None:
        od.named_organizations([], Doc(Note("x", text)), framing, m)

    line = "resources given: elder services, alcoholics anonymous, united way, "
    ratio = min(growth(run, lambda n: (line * n)[:n], 20_000, 80_000, 2, large_repeats=k)[2] for k in (1, 2))
    assert ratio < 7.0, f"round 17 lower-case line: x{ratio:.1f} from 20k to 80k characters"

def test_strict_extents_is_linear():
    """review17: each weekday cut off a name was checked against every span of the note (quadratic on a note of many
    'Dr. Quellby Friday' lines); fails with that loop."""
    import regex

    from deid_core.engine.extents import strict_extents
    from deid_core.spans import Span

    def run(text: str) -> None:
        spans = [Span(m.start(), m.end(), "DOCTOR", "crf:single") for m in regex.finditer(r"Ann Quellby Friday", text)]
        strict_extents(spans, text)

    assert_linear(run, "strict_extents", {"weekdays after names": lambda n: ("f/u Dr. Ann Quellby Friday. " * n)[:n]})


def test_round17_address_towns_are_linear_on_a_blank_run_in_a_non_ascii_note():
    """city17-address-zip's '[ \\t]{2}' opening read a long blank run again from every blank of it (quadratic:
    13.6 s at 8,000 blanks) wherever its digits gate cannot screen (non-ASCII notes); it opens at a run's
    first blank only now (review of round 18)."""
    tagger = rule_tagger(files=["rules/locations.toml", "rules/places15.toml", "rules/places16.toml",
                                "rules/places17.toml"], gazetteer_file="", metadata=False)
    def run(head: str, blanks: str, tail: str):
        return lambda n: head + (blanks * n)[: n - len(head) - len(tail)] + tail

    kinds = {"blanks after a comma": run("Quell Clinic é,\nHospital,", " ", "x 12345\n"),
             "blanks and tabs": run("é Quell\n", " \t", "Ab 12345\n")}
    assert_linear(lambda t: tagger.tag(doc_of(t)), "city17-address-zip on blank runs", kinds)
