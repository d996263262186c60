"""Attribute-value extraction."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deid_core.doc import Doc
from deid_core.notes import Note
from deid_core.text.attributes import (
    _ASCII_ATTR_RE,
    _ATTR_RE,
    _line_matches,
    attribute_of,
    attributes,
    normalize_name,
)


def test_attribute_value_lines():
    doc = Doc(Note("a", "Referral source: Dr. Zelnik\nPCP - Jo Ames\nplain line here\nHCP: son"))
    got = [(a.name, doc.text[a.value_start:a.value_end]) for a in attributes(doc)]
    assert ("referral source", "Dr. Zelnik") in got
    assert ("pcp", "Jo Ames") in got and ("hcp", "son") in got
    assert not any(name == "plain line here" for name, _ in got)


def test_attribute_of_per_token():
    doc = Doc(Note("a", "Proxy: Ann Lee\nno attribute"))
    names = attribute_of(doc)
    toks = doc.tokens[0]
    assert len(names) == len(toks)
    assert names[toks.index("Ann")] == "proxy" and names[toks.index("Lee")] == "proxy"
    assert names[toks.index("attribute")] == "" and names[0] == ""


def test_normalize_name():
    assert normalize_name(" Health Care  Proxy ") == "health care proxy"


@given(st.text(max_size=200))
def test_attribute_offsets_inside_text(text):
    doc = Doc(Note("a", text))
    for a in attributes(doc):
        assert 0 <= a.value_start < a.value_end <= len(text)
    assert len(attribute_of(doc)) == len(doc.tokens[0])


def _spans(matches):
    return [(m.span(), m.span("name"), m.span("value")) for m in matches]


_ASCII_ATTR_TEXT = st.text(alphabet=st.sampled_from(list("aZb .;:=-\t\n\r\x0b\x0c(/&')1")), max_size=60)


@given(_ASCII_ATTR_TEXT)
def test_ascii_pattern_matches_regex_pattern(text):
    assert _spans(_line_matches(text, _ASCII_ATTR_RE)) == _spans(_line_matches(text, _ATTR_RE))


def test_ascii_pattern_look_behind_cases():
    # after a line break, a sentence end, two spaces, one space past each; not after one space alone
    for text in ("Name: Al\nPCP: Bo", "Seen. PCP: Bo", "x;\tHCP = y", "x  PCP: Bo", "x\n PCP: Bo", "x.  \tPCP: y",
                 "one two three four five PCP: Bo", " PCP: Bo", "\tPCP - Bo", "x\x0b\x0cPCP: y", "a\x0b PCP: y", "word-attr- val"):
        assert _spans(_line_matches(text, _ASCII_ATTR_RE)) == _spans(_line_matches(text, _ATTR_RE)), text
    assert not _line_matches("one two three four five PCP: Bo", _ASCII_ATTR_RE)  # one space: no label start
