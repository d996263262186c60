from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.text.tokenize import (
    _ASCII_SENT_END_RES,
    _SENT_END_RES,
    sentence_bounds,
    token_offsets,
    tokenize,
)


def words(text):
    return [t.text for t in tokenize(text)]


def test_aggressive_splits_letter_digit_and_case_boundaries():
    assert words("winterHx stantonPsychiatric 22at #8et") == [
        "winter", "Hx", "stanton", "Psychiatric", "22", "at", "#", "8", "et"]


def test_all_caps_and_punctuation():
    assert words("BP 120/80, HR 80's.") == ["BP", "120", "/", "80", ",", "HR", "80", "'", "s", "."]


def test_unicode_letters_stay_whole():
    assert words("naïve Zoë ÉCOLE") == ["naïve", "Zoë", "ÉCOLE"]


def test_empty_and_whitespace():
    assert token_offsets("") == ([], [], [])
    assert tokenize(" \n\t ") == []


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_offsets_index_the_original_text(text):
    prev_end = 0
    for tok in tokenize(text):
        assert text[tok.start:tok.end] == tok.text
        assert tok.start >= prev_end and tok.end > tok.start
        assert text[prev_end:tok.start].strip() == ""
        prev_end = tok.end
    assert text[prev_end:].strip() == ""


def test_colon_newline_ends_sentence():
    text = "Allergies:\nNKDA. Pt stable\n\nPlan: d/c"
    assert [text[a:b] for a, b in sentence_bounds(text)] == ["Allergies:", "NKDA.", "Pt stable", "Plan: d/c"]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_sentences_are_ordered_and_inside_text(text):
    prev = 0
    for a, b in sentence_bounds(text):
        assert prev <= a < b <= len(text)
        prev = b


def test_ascii_fast_path_handles_control_characters():
    # \x1c-\x1f are not whitespace for the tokenizer: each is a token of its own
    assert words("a\x1cb \x1f\t12") == ["a", "\x1c", "b", "\x1f", "12"]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_equals_the_unicode_pattern(text):
    from deid_core.text.tokenize import _unicode_token_offsets

    assert token_offsets(text) == _unicode_token_offsets(text)


def _cuts(patterns, text):
    return sorted(m.end() for p in patterns for m in p.finditer(text))


@settings(max_examples=500)
@given(st.text(alphabet=".!?\"')] \t\n\r\x0b\x0c\x1c:-*1a", max_size=40))
def test_ascii_sentence_ends_match_the_regex_patterns(text):
    assert _cuts(_ASCII_SENT_END_RES, text) == _cuts(_SENT_END_RES, text)


def _reference_bounds(text):
    """sentence_bounds as first written: trimmed one character at a time."""
    bounds, pos = [], 0
    for cut in [*_cuts(_SENT_END_RES, text), len(text)]:
        start, end = pos, cut
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            bounds.append((start, end))
        pos = max(pos, cut)
    return bounds


@settings(max_examples=500)
@given(st.text(alphabet="ab. :!?\n\t -*•1)\x1c\x85\u2003\r\"", max_size=40))
def test_sentence_bounds_match_the_reference(text):
    assert sentence_bounds(text) == _reference_bounds(text)
