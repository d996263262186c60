"""Metadata name matching, gazetteer lookups, attribute extraction."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deid_core.doc import Doc
from deid_core.engine.rules.metadata import MetadataMatcher, within_one_edit
from deid_core.gazetteers import (
    _rule_entries,
    automaton,
    gazetteer_hits,
    is_common,
    is_frequent,
    is_name,
    rule_hits,
    token_gazetteers,
    words,
)
from deid_core.notes import Note

NAMES = (("Quentin", "PATIENT"), ("VORSTADT", "PATIENT"), ("Hal Brisco", "DOCTOR"))


def _found(text: str, names=NAMES, **kw) -> list[tuple[str, str]]:
    doc = Doc(Note("m", text, known_phi=names))
    return sorted({(text[s.start:s.end], s.label) for s in MetadataMatcher(**kw).match(doc)})


def test_any_case_possessive_and_label():
    got = _found("QUENTIN seen; vorstadt's wife; Dr brisco aware")
    assert ("QUENTIN", "PATIENT") in got and ("vorstadt", "PATIENT") in got
    assert ("brisco", "DOCTOR") in got


def test_conjoined_tokens():
    got = [t for t, _ in _found("ptVorstadt and hxQUENTIN then VORSTADTpt")]
    assert "Vorstadt" in got and "QUENTIN" in got and "VORSTADT" in got


def test_fuzzy_one_edit_only_for_long_names():
    assert ("Vorstad", "PATIENT") in _found("Mr Vorstad here")
    assert ("Qentin", "PATIENT") in _found("Qentin called")
    assert _found("Mr Vorstad here", fuzzy=False) == []
    assert _found("Hl here") == []  # 'Hal' is too short for fuzzy matching
    assert _found("Vorxxadt here") == []  # two edits


def test_no_match_inside_ordinary_words():
    names = (("Art", "PATIENT"), ("Ana", "PATIENT"))
    assert _found("arterial line, banana", names) == []


def test_initials():
    assert ("H.B.", "DOCTOR") in _found("signed H.B. today")


def test_no_names_no_spans():
    assert _found("anything at all", names=()) == []


def test_within_one_edit():
    assert within_one_edit("smith", "smyth") and within_one_edit("smith", "smiht")
    assert within_one_edit("smith", "smit") and within_one_edit("smith", "smiths")
    assert not within_one_edit("smith", "jones") and not within_one_edit("smith", "sm")


@given(st.text(max_size=200))
def test_metadata_spans_inside_text(text):
    for s in MetadataMatcher().match(Doc(Note("m", text, known_phi=NAMES))):
        assert 0 <= s.start < s.end <= len(text)


def test_gazetteer_lists_and_guard():
    assert is_name("maria") and is_common("will") and is_name("will")
    assert "texas" in words("us_state") and "denver" in words("city")
    assert not is_common("zelnikowski")


def test_gazetteer_hits_whole_words():
    doc = Doc(Note("g", "From Denver, Texas; denverite."))
    hits = {(doc.text[s:e], n) for s, e, ns in gazetteer_hits(doc) for n in ns}
    assert ("Denver", "city") in hits and ("Texas", "us_state") in hits
    assert not any(t.startswith("denverite") for t, _ in hits)


def test_rule_hits_are_the_entries_rules_act_on_in_end_order():
    doc = Doc(Note("g", "Will saw Maria Zelnikowski in New York, Texas; will denverite."))
    hits = rule_hits(doc)
    found = {(doc.text[s:e], n) for s, e, ns in hits for n in ns}
    assert ("Maria", "first_name") in found and ("New York", "us_state") in found and ("Texas", "us_state") in found
    assert is_frequent("will") and not any(t.lower() == "will" for t, _ in found), "frequent words are not rule entries"
    assert not any(t.startswith("denverite") for t, _ in found)
    assert [(e, s) for s, e, _ in hits] == sorted((e, s) for s, e, _ in hits)
    assert {(s, e) for s, e, _ in hits} <= {(s, e) for s, e, _ in gazetteer_hits(doc)}


def test_gazetteer_tables_share_their_values():
    """~98,000 entries, a few hundred distinct values: one object each (memory, and objects the collector scans)."""
    table = _rule_entries()
    assert len(table) > 50_000 and len({id(v) for v in table.values()}) == len(set(table.values())) < 64
    auto = automaton()
    assert len({id(v) for _, v in auto.items()}) == len({v for _, v in auto.items()}) < 1_000
    assert table["denver"] == frozenset({"city", "first_name", "last_name"})
    assert auto.get(" denver ") == (6, ("city", "first_name", "last_name"))


def test_token_gazetteers_aligned_with_tokens():
    doc = Doc(Note("g", "Maria moved to Ohio"))
    member = token_gazetteers(doc)
    assert len(member) == len(doc.tokens[0])
    assert "first_name" in member[0] and "us_state" in member[3] and not member[2] - {"last_name"}


def test_names_that_are_common_words_need_title_case_mid_sentence():
    names = (("WILL", "PATIENT"), ("FOLEY", "PATIENT"))
    text = "Will follow up. Pt will walk. foley draining. Spoke with Will today. Mr. Foley aware."
    got = [(text[s.start:s.end], s.start) for s in MetadataMatcher().match(Doc(Note("c", text, known_phi=names)))]
    assert ("Will", text.index("Will today")) in got and ("Foley", text.index("Foley aware")) in got
    assert len(got) == 2


def test_titles_inside_known_values_are_not_names():
    names = (("Dr. Hal Brisco MD", "DOCTOR"),)
    text = "Dr. Lund and the MD saw him; Brisco aware."
    got = [text[s.start:s.end] for s in MetadataMatcher().match(Doc(Note("t", text, known_phi=names)))]
    assert got == ["Brisco"]


def test_values_split_once_per_tuple_and_also_when_unhashable():
    from deid_core.engine.rules.metadata import _split, _split_values

    assert _split_values(NAMES) == _split(NAMES) and _split_values(NAMES) is _split_values(NAMES)
    listed = (["Hal Brisco", "DOCTOR"], ["Quentin", "PATIENT"])  # not the typed input: still split
    assert _split_values(listed) == _split(listed)
    assert ("H.B.", "DOCTOR") in _found("signed H.B. today", names=listed)


@given(st.text(max_size=80) | st.text(alphabet="aZ09 '-.,;:\t\n/()[]{}\"#@~`^|\\_x\x7f\x00", max_size=80))
def test_lowered_ascii_path_maps_as_the_table(text):
    from deid_core.gazetteers import _TABLE, _padded_lower

    low = text.lower()
    if len(low) != len(text):
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    assert _padded_lower(text) == " " + low.translate(_TABLE) + " "
