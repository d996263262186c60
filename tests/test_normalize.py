"""Normalization for matching, not for output (issue 13.3): zero-width characters, soft hyphens and
full-width forms are mapped for detection; spans index the original text and cover the whole mention."""

from __future__ import annotations

import datetime as dt
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.notes import Note
from deid_core.text.normalize import fold_case, normalize_text

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u00ad", "\u2060", "\ufeff", "\u200e"]
WORDS = ["Zyxwvutsson", "March", "3,", "2021", "Dr.", "seen", "on", "\n", "Verity", "07:30", "12/3/2020"]


def fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


@st.composite
def obfuscated(draw):
    """Text of words, some in full-width forms, with invisible characters sprinkled anywhere."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8))
    text = " ".join(fullwidth(w) if draw(st.booleans()) else w for w in words)
    chars = list(text)
    for _ in range(draw(st.integers(0, 6))):
        chars.insert(draw(st.integers(0, len(chars))), draw(st.sampled_from(INVISIBLE)))
    return "".join(chars)


@settings(max_examples=400, deadline=None)
@given(obfuscated(), st.data())
def test_spans_on_the_view_map_back_over_the_whole_original_mention(text, data):
    view = normalize_text(text)
    assert len(view.text) <= len(text)
    if not view.text:
        return
    start = data.draw(st.integers(0, len(view.text) - 1))
    end = data.draw(st.integers(start + 1, len(view.text)))
    a, b = view.original_span(start, end)
    assert 0 <= a < b <= len(text)
    # the original slice is exactly the mention: it normalizes to the view's span, removed
    # characters inside it included, none of those around it
    assert normalize_text(text[a:b]).text == view.text[start:end]
    assert text[a] not in INVISIBLE and text[b - 1] not in INVISIBLE
    # offsets stay in order
    assert all(view.original_offset(i) < view.original_offset(i + 1) for i in range(len(view.text) - 1))


def test_plain_text_is_its_own_view():
    text = "Seen by Dr. Smith on 3/4/2021.\n"
    view = normalize_text(text)
    assert view.text is text and view.same_offsets
    assert normalize_text("café au lait").same_offsets


def test_fold_case_keeps_the_length():
    assert fold_case("İstanbul ÉCOLE") == "İstanbul école" and len(fold_case("İ")) == 1


@cache
def deid():
    from deid_core.app.options import effective_config
    from deid_core.bundle import load_bundle
    from deid_core.engine.pipeline import build_deidentifier

    return build_deidentifier(effective_config(), load_bundle(), b"normalize-test-key-0123456789abcd")


KNOWN = (("Verity", "PATIENT"), ("Vandersloot", "PATIENT"), ("Zyxwvutsson", "DOCTOR"))


def process(text: str):
    res = deid().process(Note("n", text, "p-norm", dt.date(2021, 3, 20), KNOWN))
    assert res.ok, (res.error_stage, res.error_class)
    return res


def test_a_name_split_by_an_invisible_character_is_replaced_whole():
    for sep in ("\u200b", "\u00ad", "\u2060"):
        res = process(f"Seen by Dr. Zyx{sep}wvutsson today.")
        assert "Zyx" not in res.text and "wvutsson" not in res.text and sep not in res.text, repr(res.text)
        [span] = [s for s in res.spans if s.label == "DOCTOR"]
        assert (span.start, span.end) == (12, 24)  # the whole original mention, the invisible character inside


def test_a_date_with_an_invisible_character_is_shifted_whole_and_consistently():
    plain = process("Admitted on March 3, 2021 for pain.").text
    for text in ("Admitted on Mar\u200bch 3, 2021 for pain.", "Admitted on March\u200b 3, 2021 for pain.",
                 "Admitted on March 3,\u00ad 2021 for pain."):
        out = process(text).text
        assert "March" not in out and "Mar" not in out and "2021" not in out, repr(out)
        assert out == plain, (out, plain)


def test_full_width_forms_of_a_metadata_name_are_matched():
    res = process(f"Patient {fullwidth('Vandersloot')} was seen.")
    assert fullwidth("Vandersloot") not in res.text
    assert [(s.start, s.end, s.label) for s in res.spans] == [(8, 19, "PATIENT")]


def test_text_outside_the_spans_is_kept_exactly():
    text = "Pain \u200bresolved.\u00a0Seen by Dr. Zyx\u200bwvutsson\uff0e"
    res = process(text)
    assert res.text.startswith("Pain \u200bresolved.\u00a0Seen by Dr. ") and res.text.endswith("\uff0e")
