import re

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.text.sections import (
    _header_pattern,
    _line_start_matches,
    find_sections,
    prefix_tree,
    section_lookup,
)


def test_headers_found_at_line_start():
    text = "74 YO\nPMH: CAD\nHPI: PT IN USOH\nCV: IABP 1:1\nA: stable\nA lot of words\n"
    secs = find_sections(text)
    assert [s.name for s in secs] == ["past medical history", "history of present illness",
                                      "cardiovascular", "assessment"]
    at = section_lookup(secs)
    assert at(0) == ""
    assert at(text.index("USOH")) == "history of present illness"
    assert at(text.index("lot")) == "assessment"


def test_header_words_inside_a_line_are_not_headers():
    assert find_sections("pt has a history of CAD\nplan to discuss") == []


def test_prefix_tree_prefers_the_longest_form():
    alt = prefix_tree(["a", "ab", "abc", "b"], re.escape)
    assert [m.group(0) for m in re.finditer(rf"(?:{alt})", "abcab ba")] == ["abc", "ab", "b", "a"]
    # the longest form whose continuation fails gives way to the shorter one, as in a flat alternation
    assert re.match(rf"(?:{alt}):", "ab:").group(0) == "ab:"


_FORMS = sorted(_header_pattern()[1])


@st.composite
def _header_lines(draw) -> str:
    """Lines that start with (parts of, re-cased) header forms, and the separators around them."""
    out = []
    for _ in range(draw(st.integers(0, 4))):
        form = draw(st.sampled_from(_FORMS))
        form = form[: draw(st.integers(0, len(form)))] if draw(st.booleans()) else form
        form = draw(st.sampled_from([form, form.upper(), form.title()]))
        pad = st.text(alphabet=" \t\n\r:-ab", max_size=3)
        out.append(draw(pad) + form + draw(pad))
    return "".join(out)


@settings(max_examples=300)
@given(_header_lines())
def test_factored_patterns_match_the_flat_alternation(text):
    pat, canon, ascii_pat = _header_pattern()
    flat = "|".join(regex.escape(f) for f in sorted(canon, key=len, reverse=True))
    reference = regex.compile(rf"(?im)^[ \t]*+(?P<h>{flat})[ \t]*(?::|[ \t]-[ \t]|(?=\r?$))")

    def spans(p):
        return [(m.span(), m.span("h")) for m in _line_start_matches(p, text)]

    assert ascii_pat is not None  # the shipped forms are ASCII
    assert spans(pat) == spans(reference) == spans(ascii_pat)
