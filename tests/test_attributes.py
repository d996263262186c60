"""Attribute-value extraction."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deid_core.doc import Doc
from deid_core.notes import Note
from deid_core.text.attributes import attribute_of, attributes, normalize_name


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
