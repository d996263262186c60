"""CRF feature families, label schemes and EasyAdapt."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.doc import Doc
from deid_core.engine.crf.features import (
    FeatureConfig,
    FeatureExtractor,
    all_families,
    easyadapt,
    regex_shape,
    shape,
    short_shape,
)
from deid_core.engine.crf.labels import decode, encode
from deid_core.notes import Note
from deid_core.spans import Span


def test_shapes():
    assert shape("Smith") == "Aaaaa"
    assert short_shape("Smith") == "Aa"
    assert short_shape("12/03") == "#/#"
    assert regex_shape("1998") == "YEAR"
    assert regex_shape("Dec") == "MONTH"
    assert regex_shape("SMITH") == "ALLCAPS"
    assert regex_shape("7") == "D12"
    assert regex_shape("Dr") == "TITLE"


def test_unknown_family_is_refused():
    with pytest.raises(ValueError, match="unknown feature families"):
        FeatureConfig(["word", "nope"])


def test_window_features_by_reference_and_type_cache():
    ext = FeatureExtractor(FeatureConfig(["word", "window_word", "window_shape"], window=2))
    doc = Doc(Note("n", "Dr. Smith saw Smith today"))
    feats = ext.extract(doc)
    assert len(feats) == len(doc.tokens[0])
    smith = ext.cache.get("Smith")
    # the left neighbour of 'saw' is 'Smith': its pre-built window string, the same object
    saw = feats[3]
    hit = [f for f in saw if f == "-1:low=smith"]
    assert hit and hit[0] is smith.win[-1][0]
    assert "1:low=<PAD>" in feats[-1]
    assert len(ext.cache) == 5  # 'Dr', '.', 'Smith', 'saw', 'today': one entry per type


def test_doc_families_metadata_and_rules():
    note = Note("n", "Patient Kowalski seen.\nPlan:\ncall Anna", known_phi=(("KOWALSKI", "PATIENT"),))
    ext = FeatureExtractor(FeatureConfig(["word", "metadata", "rule_hits", "line", "sentence"]))
    doc = Doc(note)
    feats = ext.extract(doc, [Span(34, 38, "PATIENT", "r")])
    toks = doc.tokens[0]
    assert "meta=PATIENT" in feats[toks.index("Kowalski")]
    assert "-1meta=PATIENT" in feats[toks.index("seen")]
    assert "rule=PATIENT" in feats[toks.index("Anna")]
    assert "bol" in feats[toks.index("Plan")]
    assert "ss=colon" in feats[toks.index("Plan")]


def test_sentence_family_lengths_shapes_and_first_tokens():
    doc = Doc(Note("n", "Pt stable. Seen by the team today at noon.\n- call back.\nPlan:\nrest"))
    feats = FeatureExtractor(FeatureConfig(["sentence"])).extract(doc)
    toks = doc.tokens[0]
    assert feats[toks.index("Pt")][-2:] == ["sl=3", "sfirst"] and feats[toks.index("stable")][-1] == "sl=3"
    assert feats[toks.index("Seen")][-2:] == ["sl=6+", "sfirst"] and feats[toks.index("noon")][-1] == "sl=6+"
    assert feats[toks.index("-")][-3:] == ["sl=4", "ss=enum", "sfirst"] and feats[toks.index("back")][-2:] == ["sl=4", "ss=enum"]
    assert feats[toks.index("Plan")][-3:] == ["sl=2", "ss=colon", "sfirst"]
    assert feats[toks.index("rest")][-2:] == ["sl=1", "sfirst"]


@pytest.mark.parametrize(("text", "expected"), [
    ("Seen by Kowal today", {"Kowal": ["meta~"], "by": ["+1meta~"], "today": ["-1meta~"]}),  # clipped name
    ("Seen by nurse today", {}),  # no known name nor prefix: nothing anywhere
])
def test_metadata_family_on_notes_with_and_without_a_name(text, expected):
    note = Note("n", text, known_phi=(("Kowalski", "PATIENT"),))
    doc = Doc(note)
    feats = FeatureExtractor(FeatureConfig(["metadata"])).extract(doc)
    got = {t: [f for f in fs if "meta" in f] for t, fs in zip(doc.tokens[0], feats, strict=True)}
    assert {t: fs for t, fs in got.items() if fs} == expected


def test_all_configured_families_are_registered():
    from deid_core.engine.crf.chars import CHAR_FAMILIES, is_char_model
    from deid_core.training.train import crf_config

    conf = crf_config()
    for m in conf.models.values():
        assert set(m.features) <= set(CHAR_FAMILIES if is_char_model(m) else all_families())


@pytest.mark.parametrize("scheme", ["BIO", "BIOES"])
def test_encode_decode_roundtrip(scheme):
    text = "Dr. John Smith on 3/4 ok"
    doc = Doc(Note("n", text))
    _, starts, ends = doc.tokens
    spans = [Span(4, 14, "DOCTOR"), Span(18, 21, "DATE")]
    tags = encode(spans, starts, ends, scheme)
    runs = decode(tags, starts, ends)
    assert [(starts[i], ends[j - 1], lab) for i, j, lab in runs] == [(4, 14, "DOCTOR"), (18, 21, "DATE")]
    if scheme == "BIOES":
        assert tags[tags.index("B-DOCTOR") + 1] == "E-DOCTOR"


def test_encode_label_map_and_keep():
    doc = Doc(Note("n", "at Mercy on 3/4"))
    _, starts, ends = doc.tokens
    tags = encode([Span(3, 8, "HOSPITAL"), Span(12, 15, "DATE")], starts, ends, "BIO",
                  {"HOSPITAL": "LOCATION-OTHER"}, keep={"LOCATION-OTHER"})
    assert tags == ["O", "B-LOCATION-OTHER", "O", "O", "O", "O"]


def test_easyadapt_copies_features_per_domain():
    out = easyadapt([["a", "b"]], "S")
    assert out == [["a", "b", "S|a", "S|b"]]


_WORDS = ["Dr", "Smith", "saw", "|", "a|b", "12", "Mercy", ".", ":", "Jan", "\n", "\n\n", "of", "x"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_WORDS), max_size=30), st.integers(0, 2**32 - 1))
def test_known_filter_and_bytes_keep_what_the_model_knows_in_order(words, seed):
    """Tagging path (known set, bytes) = training path filtered by the known set, same order."""
    import random

    fams = ["word", "shape", "affixes", "gazetteer", "window_word", "window_shape", "window_gazetteer",
            "word_bigram", "shape_ngram", "line", "sentence"]
    doc = Doc(Note("n", " ".join(words)))
    full = FeatureExtractor(FeatureConfig(fams, 2)).extract(doc)
    strings = sorted({f for fs in full for f in fs})
    rng = random.Random(seed)
    known = {f for f in strings if rng.random() < 0.5}
    fast = FeatureExtractor(FeatureConfig(fams, 2), known=known, as_bytes=True).extract(Doc(Note("n", " ".join(words))))

    def text(f):
        return f.decode() if isinstance(f, bytes) else f

    assert [[text(f) for f in fs if text(f) in known] for fs in fast] == [[f for f in fs if f in known] for fs in full]
    # strings cached per type or per n-gram are known bytes; doc families' may be str, even unknown
    doc_family = ("sl=", "ss=", "sfirst", "bol", "eol")
    for fs in fast:
        for f in fs:
            assert (isinstance(f, bytes) and f.decode() in known) or f.startswith(doc_family)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab1 .\n\t", max_size=40))
def test_line_family_marks_tokens_after_a_newline(text):
    """bol: first token, or a newline between it and the previous token; eol: the token before."""
    doc = Doc(Note("n", text))
    toks, starts, ends = doc.tokens
    feats = FeatureExtractor(FeatureConfig(["line"])).extract(doc)
    bol = [i == 0 or "\n" in text[ends[i - 1]:starts[i]] for i in range(len(toks))]
    eol = [i == len(toks) - 1 or bol[i + 1] for i in range(len(toks))]
    assert ["bol" in f for f in feats] == bol
    assert ["eol" in f for f in feats] == eol


@st.composite
def _spans_over_tokens(draw):
    """Token count and non-overlapping (first, last + 1, label) runs, adjacent ones included."""
    segments = draw(st.lists(st.tuples(st.integers(1, 3), st.sampled_from([None, "DATE", "DOCTOR"])),
                             max_size=12))
    runs, pos = [], 0
    for length, label in segments:
        if label:
            runs.append((pos, pos + length, label))
        pos += length
    return pos, runs


@settings(max_examples=200, deadline=None)
@given(_spans_over_tokens())
def test_io_encode_decode_roundtrip(case):
    """IO: every token of a span I-<label>; decode gives the spans back, adjacent same-label ones as one."""
    from deid_core.engine.crf.labels import mention_counts

    n, runs = case
    starts, ends = [2 * i for i in range(n)], [2 * i + 1 for i in range(n)]
    spans = [Span(starts[a], ends[b - 1], lab) for a, b, lab in runs]
    tags = encode(spans, starts, ends, "IO")
    assert all(t == "O" or t.startswith("I-") for t in tags)
    merged: list[list] = []
    for a, b, lab in runs:
        if merged and merged[-1][1] == a and merged[-1][2] == lab:
            merged[-1][1] = b
        else:
            merged.append([a, b, lab])
    assert decode(tags, starts, ends) == [tuple(r) for r in merged]
    assert sum(mention_counts(tags).values()) == len(merged)
    for scheme in ("BIO", "IOB1"):  # lossless: adjacent same-label spans stay apart
        tags = encode(spans, starts, ends, scheme)
        assert decode(tags, starts, ends) == runs and sum(mention_counts(tags).values()) == len(runs)
    iob1 = encode(spans, starts, ends, "IOB1")
    assert sum(t.startswith("B-") for t in iob1) == len(runs) - len(merged)
