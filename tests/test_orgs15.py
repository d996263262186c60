"""Round 15 (issue 14, organizations): the hand-written lists of well-known organizations and the merge decision that
reads them (engine/org_decisions.py), and the merge-only rule of conf/rules/orgs15.toml. Examples are invented.

The rule's own examples and negatives run in tests/test_rules.py; here: the lists' tiers, the decision on hand-made
spans, its [merge] key, and the shipped pipeline (default bundle) on invented notes, with clinical look-alikes left
clear."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from deid_core.app.options import effective_config
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine import org_decisions as od
from deid_core.engine.contract import NoteState
from deid_core.engine.merge import Merger
from deid_core.gazetteers import is_common
from deid_core.notes import Note
from deid_core.spans import Span
from tests.helpers_rules import shipped_deidentifier, span_stands

ROOT = Path(__file__).resolve().parents[1]
CONF = ROOT / "conf"
ROUND15 = {r["id"]: r for r in tomllib.loads((CONF / "rules" / "orgs15.toml").read_text())["rule"]}
MERGE = effective_config().merge
FRAMES = od.frames(MERGE.organization_frame_words, MERGE.organization_field_words, MERGE.organization_store_words)


def _span(text: str, part: str, label: str, source: str = "crf:single") -> Span:
    start = text.index(part)
    return Span(start, start + len(part), label, source, 0.9)


def _orgs(spans: list[Span], text: str) -> list[tuple[str, str]]:
    return [(s.label, text[s.start:s.end]) for s in spans]


@pytest.fixture(scope="module")
def deid():
    return shipped_deidentifier("orgs15")


def test_round15_rules_are_merge_only_and_decide_their_label():
    assert ROUND15
    for rid, rule in ROUND15.items():
        assert rule.get("crf_feature") is False, rid
        assert rid in MERGE.rule_label_sources, rid


# -- the lists

def test_one_word_dictionary_entries_are_read_only_in_a_frame():
    """A one-word entry that is a dictionary or clinical word ('target', 'anthem') is FRAMED whatever its list."""
    for tier in (od.ANY, od.TITLED):
        assert all(" " in e or not is_common(e) for e in od.entries(tier)), tier
    assert {"ups", "cvs", "target", "anthem", "mercy", "kindred", "genesis", "ascension", "apple"} <= od.entries(od.FRAMED)
    assert {"ymca", "walgreens", "rite aid", "aetna", "meals on wheels"} <= od.entries(od.ANY)
    assert {"red cross", "united way"} <= od.entries(od.TITLED)
    assert {"ibm", "pfizer", "fresenius", "whole foods"} <= od.entries(od.FRAMED)  # a myositis, drug makers, a diet


def test_the_lists_are_lower_case_entries():
    for name in od.FILES.values():
        entries = od.list_entries(name)
        assert entries and all(e == e.lower() and e == e.strip() for e in entries), name


# -- the decision on hand-made spans

@pytest.mark.parametrize("text,rivals,want", [
    ("Social: attends YMCA twice a week.", [], ("ORGANIZATION", "YMCA")),
    ("attends ymca.", [("ymca", "DOCTOR", "names:net")], ("ORGANIZATION", "ymca")),
    ("To the UnitedHealthcare Appeals Department", [("UnitedHealthcare", "HOSPITAL", "crf:single")],
     ("ORGANIZATION", "UnitedHealthcare")),
    ("ins HUMANA W400", [("HUMANA", "HEALTHPLAN", "crf:single")], ("ORGANIZATION", "HUMANA")),
    ("LIFECENTER OHIO NOTIFIED", [("LIFECENTER OHIO", "DOCTOR", "crf:single")], ("ORGANIZATION", "LIFECENTER OHIO")),
    ("Attends Quellton Council on Aging.", [("Quellton", "CITY", "crf:single")],
     ("ORGANIZATION", "Quellton Council on Aging")),
    ("Pharmacy Costco Pharmacy delivers", [("Pharmacy Costco Pharmacy", "ORGANIZATION", "crf:single")],
     ("ORGANIZATION", "Costco Pharmacy")),
    ("Employer: UPS\n", [], ("ORGANIZATION", "UPS")),
    ("lost her job at ups. reports", [], ("ORGANIZATION", "ups")),
    ("Pharmacy: CVS, 12 Main", [], ("ORGANIZATION", "CVS")),
    ("seismic interpreter with Target.", [("seismic interpreter", "PROFESSION", "crf:single")], ("ORGANIZATION", "Target")),
    ("dispo: home with services (Red Cross).", [], ("ORGANIZATION", "Red Cross")),
])
def test_a_listed_organization_is_an_organization(text, rivals, want):
    spans = [_span(text, *r) for r in rivals]
    assert want in _orgs(od.named_organizations(spans, Doc(Note("x", text)), FRAMES), text)


@pytest.mark.parametrize("text,rivals", [
    ("CVS: RRR, no murmur.", []),  # the cardiovascular system
    ("did 20 push-ups; ups and downs", []),
    ("Target HR 60-80, target INR 2-3", []),
    ("red cross-hatching on film; a red cross on the sign", []),  # lower case
    ("Genesis of the bleed unclear", []),
    ("Mercy Hospital transfer", [("Mercy Hospital", "HOSPITAL", "crf:single")]),  # a place past the entry stands
    ("seen at Red Cross Hospital", [("Red Cross Hospital", "HOSPITAL", "crf:single")]),
    ("patient Ann Aetna", [("Aetna", "PATIENT", "metadata")]),  # the note's metadata names a person
    # a name past it (round 16: after a role word, 'KAISER PERMANENTE REP WANDA', the rep is a person of her own:
    # tests/test_orgs16.py)
    ("KAISER PERMANENTE WANDA QUELL", [("KAISER PERMANENTE WANDA QUELL", "ORGANIZATION", "crf:single")]),
    # a CRF person span across a sentence end is no one name: relabelled whole, 'Chase Ford' took an organization's
    # surrogate (final15)
    ("Mr. Chase Ford works for Ford. Chase Ford denies pain.", [("Ford. Chase Ford", "DOCTOR", "crf:single")]),
    ("Works at Target. Ann Quell called.", [("Target. Ann Quell", "PATIENT", "crf:single")]),
])
def test_no_listed_organization_where_the_words_say_otherwise(text, rivals):
    spans = [_span(text, *r) for r in rivals]
    out = od.named_organizations(spans, Doc(Note("x", text)), FRAMES)
    assert not [s for s in out if s.source == od.SOURCE]


def test_a_crf_organization_run_past_a_stop_keeps_its_other_words():
    """'Aetna (Quell Ames': the bracket ends the organization; the words after it stay a span of their own."""
    text = "UR approved by Aetna (Quell Ames, 749 386 6200)"
    out = od.named_organizations([_span(text, "Aetna (Quell Ames", "ORGANIZATION")], Doc(Note("x", text)), FRAMES)
    assert _orgs(out, text) == [("ORGANIZATION", "Aetna"), ("ORGANIZATION", "Quell Ames")]


def test_a_small_word_before_the_entry_is_no_chapter_town():
    """'per friend Ann and Walgreens': a CRF span over 'and' before the entry is not taken in as its town."""
    text = "per friend Ann and Walgreens records"
    out = od.named_organizations([_span(text, "and", "ORGANIZATION")], Doc(Note("x", text)), FRAMES)
    assert ("ORGANIZATION", "Walgreens") in _orgs(out, text)


def test_a_rule_organization_stands():
    text = "employer: Walgreens Boots Alliance"
    spans = [_span(text, "Walgreens Boots Alliance", "ORGANIZATION", "organization-work-frame")]
    assert od.named_organizations(spans, Doc(Note("x", text)), FRAMES) == spans


def test_the_frames_come_from_the_merge_table():
    """[merge] organization_frame_words / field_words / store_words: [] turns that kind of frame off."""
    for text, kind in (("works at Target today", "frame"), ("Employer: UPS\n", "field"), ("at the Target store", "store")):
        doc = Doc(Note("x", text))
        assert [s for s in od.named_organizations([], doc, FRAMES) if s.source == od.SOURCE], text
        off = load_config({"merge": {f"organization_{kind}_words": []}}).merge
        framing = od.frames(off.organization_frame_words, off.organization_field_words, off.organization_store_words)
        assert not od.named_organizations([], doc, framing), text


def test_organization_gazetteer_has_its_own_key():
    text = "Attends YMCA on Mondays."
    on = Merger("union", load_config({"merge": {"organization_gazetteer": True}}).merge)([], Doc(Note("x", text)), NoteState())
    off = Merger("union", load_config({"merge": {"organization_gazetteer": False}}).merge)([], Doc(Note("x", text)), NoteState())
    assert ("ORGANIZATION", "YMCA") in _orgs(on, text)
    assert ("ORGANIZATION", "YMCA") not in _orgs(off, text)


def test_a_long_note_is_read_in_linear_time():
    """One automaton pass and a bounded look-behind per hit: 400 hits in a long note stay fast."""
    import time

    text = "Employer: UPS. Attends YMCA. " * 400
    doc = Doc(Note("x", text))
    t = time.process_time()
    out = od.named_organizations([], doc, FRAMES)
    assert len(out) == 800 and time.process_time() - t < 2.0


# -- the shipped pipeline

@pytest.mark.parametrize("text,phi,label", [
    ("Social: retired, attends YMCA twice a week. Lives alone.", "YMCA", "ORGANIZATION"),
    ("Employer: UPS\nOccupation: driver", "UPS", "ORGANIZATION"),
    ("To: Human Resources, General Electric\n\nPlease excuse", "General Electric", "ORGANIZATION"),
    ("UR: day 2 approved by Aetna (Quell Ames, 749 386 6200).", "Aetna", "ORGANIZATION"),
    ("Works at Target as a cashier.", "Target", "ORGANIZATION"),
    ("Dispo: home with services (United Way). Condition stable.", "United Way", "ORGANIZATION"),
    ("she developed vomiting while at work at South Quellhaven Fire Department. She is", "South Quellhaven Fire Department",
     "ORGANIZATION"),
    ("TRANSPORT BY QUELLMOUTH FIRE RESCUE; DEPARTED 2 PM", "QUELLMOUTH FIRE RESCUE", "ORGANIZATION"),
])
def test_the_round15_label_and_extent_stand_in_the_pipeline(deid, text, phi, label):
    assert span_stands(deid, "orgs15", text, phi, label)


@pytest.mark.parametrize("text", [
    "CVS: RRR, no murmur. Resp: CTA bilaterally.", "Did 20 push-ups; mood ups and downs.", "Target HR 60-80, target INR 2-3.",
    "Genesis of the bleed unclear.", "Kindred spirits with her sister.", "Ascension of the diaphragm.", "Apple juice given.",
    "Chase the potassium.", "Shell vial culture sent.", "GAP: anion gap 12.", "Subway stop near home.",
    "pt eats whole foods; red cross-hatching on film.", "Called the fire department.", "Transferred via medflight.",
    "Staples removed from incision.", "Amazon basin travel 2019.", "Mercy of the court.",
    "Biopsy for IBM; CK elevated.", "s/p Pfizer vaccine x2.", "HD via Fresenius machine.", "HOME INSTEAD OF REHAB.",
    "EATS WHOLE FOODS DIET.",
])
def test_clinical_look_alikes_get_no_round15_span(deid, text):
    res = deid.process(Note("orgs15", text))
    assert res.ok and not [s for s in res.spans if s.source in ROUND15 or s.source == od.SOURCE]


# -- review15 (reviewer-fixer) findings; examples invented

@pytest.mark.parametrize("text", [
    "Work-up for IBM with muscle biopsy; CK 800.",  # inclusion body myositis: 'work-up for' is no work frame
    "Work up for target lesions on palms.",
    "Worked up for CVS in the past.",
])
def test_a_work_up_is_no_work_frame(text):
    assert not [s for s in od.named_organizations([], Doc(Note("x", text)), FRAMES) if s.source == od.SOURCE]


@pytest.mark.parametrize("text", [
    "Pt is working with PT for target weight bearing.",  # a frame word and a link word, then a common word's own use
    "She was shopping for apple juice when she fell.",
    "Member of the team in shell shock program.",
    "Job stress; worked for mercy of the court.",
    "Work for target INR 2.5.",
])
def test_a_lower_case_framed_name_that_a_word_follows_is_the_word(text):
    assert not [s for s in od.named_organizations([], Doc(Note("x", text)), FRAMES) if s.source == od.SOURCE]


@pytest.mark.parametrize("text,name", [("lost her job at ups. reports", "ups"), ("works at target\nPlan", "target"),
                                       ("works at target pharmacy", "target pharmacy"), ("Works at Target Monday", "Target")])
def test_a_framed_name_that_ends_its_clause_or_is_written_as_a_name_stays(text, name):
    assert ("ORGANIZATION", name) in _orgs(od.named_organizations([], Doc(Note("x", text)), FRAMES), text)


def test_a_crf_organization_over_a_persons_name_keeps_it():
    """'Worked with Chase Miller at Ford': the CRF span's words past the entry are dictionary words but 'Miller' is a
    known surname written as a name: the span stands (before the fix it gave way to 'Chase' and 'Miller' leaked)."""
    text = "Worked with Chase Miller at Ford."
    out = od.named_organizations([_span(text, "Chase Miller at Ford", "ORGANIZATION")], Doc(Note("x", text)), FRAMES)
    start = text.index("Miller")
    assert any(s.start <= start and start + len("Miller") <= s.end for s in out)


@pytest.mark.parametrize("text,clear", [
    ("Red cross-hatching noted on the lesion. Donated to Red Cross.", "Red cross"),  # lower case: the Title list's 'no'
    ("Works at Target. Goals: target INR 2-3.", "target INR"),
])
def test_a_list_organization_is_not_spread_to_repeats_the_list_reads_otherwise(deid, text, clear):
    """Propagation copied a list name to a lower-case or unframed repeat the decision had left clear on purpose."""
    res = deid.process(Note("orgs15", text))
    start = text.index(clear)
    assert res.ok and not [s for s in res.spans if s.start < start + len(clear) and start < s.end]


def test_a_long_note_with_many_spans_is_read_in_linear_time():
    """Each hit reads and rewrites only the spans near it: four times the note takes about four times the CPU time
    (it took about 14 times when every hit re-scanned and re-sorted every span of the note)."""
    import time

    def cpu(n: int) -> float:
        unit = "Seen by Dr Quell Ames. Attends YMCA. "
        text = unit * n
        spans = [Span(i * len(unit) + 11, i * len(unit) + 21, "DOCTOR", "crf:single", 0.9) for i in range(n)]
        doc = Doc(Note("x", text))
        od.named_organizations([], Doc(Note("warm", "YMCA")), FRAMES)
        t = time.process_time()
        out = od.named_organizations(spans, doc, FRAMES)
        assert len(out) == 2 * n
        return time.process_time() - t

    small, large = min(cpu(500) for _ in range(3)), min(cpu(2000) for _ in range(3))
    assert large < 9 * small + 0.05
@pytest.mark.parametrize("text,person", [("Wendy's husband called about her meds.", "Wendy's"),
                                         ("Dr. Lowe's office faxed the report.", "Lowe's"),
                                         ("Mrs. Kohl's daughter visited today.", "Kohl's")])
def test_a_persons_name_with_a_possessive_stays_a_person(text, person):
    """A list name that is a known name and "'s" ('Wendy's', 'Lowe's', 'Kohl's') is read only in a frame: in
    running text it is as often a person's possessive (it relabelled the name net's person ORGANIZATION)."""
    out = od.named_organizations([_span(text, person, "PATIENT", "names:net")], Doc(Note("x", text)), FRAMES)
    assert ("PATIENT", person) in _orgs(out, text)
    shop = f"Works at {person}."
    assert ("ORGANIZATION", person) in _orgs(od.named_organizations([], Doc(Note("x", shop)), FRAMES), shop)


@pytest.mark.parametrize("text,person,label", [("Seen by Dr. Nordstrom today.", "Nordstrom", "DOCTOR"),
                                               ("Called wife Wendy Kroger at home.", "Wendy Kroger", "PATIENT")])
def test_a_person_after_a_title_or_kin_word_stays_a_person(text, person, label):
    """'Dr. Nordstrom', 'wife Wendy Kroger': a person cue before the span says it is a person, not the list's store."""
    out = od.named_organizations([_span(text, person, label)], Doc(Note("x", text)), FRAMES, MERGE)
    assert (label, person) in _orgs(out, text)


@pytest.mark.parametrize("text,person", [("PCP: Dupont. Follow up 2 weeks.", "Dupont"),
                                         ("Discussed with Nordstrom, the covering resident.", "Nordstrom")])
def test_a_list_name_that_is_a_known_surname_needs_a_frame(text, person):
    """One-word list names that are known names ('Dupont', 'Kroger', 'Nordstrom', 'Meijer') are read only in a
    frame: a doctor of that name was relabelled ORGANIZATION."""
    out = od.named_organizations([_span(text, person, "DOCTOR")], Doc(Note("x", text)), FRAMES)
    assert ("DOCTOR", person) in _orgs(out, text)
    shop = f"Works at {person}."
    assert ("ORGANIZATION", person) in _orgs(od.named_organizations([], Doc(Note("x", shop)), FRAMES), shop)


def test_the_lists_leave_the_shipped_bundle_versions_alone():
    """The lists are merge-only data: the shipped model's gazetteers and rules versions still match (no retrain)."""
    import json

    from deid_core.engine.crf.versions import current_versions

    shipped = json.loads((ROOT / "models" / "default" / "bundle.json").read_text(encoding="utf-8"))["versions"]
    now = current_versions()
    assert (now["gazetteers"], now["rules"]) == (shipped["gazetteers"], shipped["rules"])
    assert not list((ROOT / "deid_core" / "gazetteers").rglob("organizations*"))
