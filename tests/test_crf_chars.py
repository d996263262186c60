"""Character-level CRF: char sequence offsets, label round trip, training, the crf_char stage, merge, CV."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from crf_fixtures import crf_conf, tiny_corpus
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.bundle import BundleError, load_bundle
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.crf.chars import (
    CHAR_FAMILIES,
    CharFeatureExtractor,
    char_sequence,
    char_stage,
    char_tags,
    check_families,
    decode_chars,
)
from deid_core.engine.merge import Merger, source_kind
from deid_core.engine.pipeline import build_deidentifier
from deid_core.notes import Note
from deid_core.spans import Span, trim_span
from deid_core.training.train import crf_config, make_docs, train_bundle

ALPHABET = "abcXYZ019 .,:-/()'\n\t\u00e9\u00df\u00a0"
LABELS = ["PATIENT", "DATE", "PHONE"]
OFF = load_config({"merge": {"reconcile": False, "propagate": False}}).merge


@st.composite
def text_and_spans(draw):
    """A text and non-overlapping, trimmed gold spans on it."""
    text = draw(st.text(alphabet=ALPHABET, max_size=80))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8, unique=True)))
    spans = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        s = trim_span(Span(a, b, draw(st.sampled_from(LABELS)), "gold"), text) if a < b else None
        if s is not None:
            spans.append(s)
    return text, spans


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=80))
def test_char_sequence_positions_index_the_text(text):
    doc = Doc(Note("n", text))
    seq = char_sequence(doc)
    assert len(seq.chars) == len(seq.starts) == len(seq.ends) == len(seq.tok)
    prev = -1
    for p, ch in enumerate(seq.chars):
        s, e = seq.starts[p], seq.ends[p]
        assert prev <= s < e <= len(text)
        prev = e
        if seq.tok[p] >= 0:
            assert e == s + 1 and text[s] == ch
        else:  # one position per whitespace run between tokens
            assert not text[s:e].strip() and ch == ("\n" if "\n" in text[s:e] else " ")
    assert sum(1 for t in seq.tok if t >= 0) == sum(map(len, doc.tokens[0]))


@settings(max_examples=300, deadline=None)
@given(text_and_spans(), st.sampled_from(["BIO", "BIOES"]))
def test_encode_decode_round_trip(case, scheme):
    text, spans = case
    doc = Doc(Note("n", text))
    tags = char_tags(doc, spans, scheme)
    assert len(tags) == len(char_sequence(doc).chars)
    back = decode_chars(doc, tags, source="gold")
    assert back == spans


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=60), st.data())
def test_any_char_tags_decode_to_trimmed_spans_of_the_text(text, data):
    doc = Doc(Note("n", text))
    n = len(char_sequence(doc).chars)
    tags = data.draw(st.lists(st.sampled_from(["O", "B-DATE", "I-DATE", "I-PATIENT", "E-DATE", "S-PATIENT"]),
                              min_size=n, max_size=n))
    prev_end = 0
    for s in decode_chars(doc, tags):
        assert prev_end <= s.start < s.end <= len(text)
        assert trim_span(s, text) == s  # trimmed: no edge whitespace
        prev_end = s.end


def test_features_per_position_and_rule_hits():
    text = "Seen by Dr. Moreau on 3/4/2019.\n\n\n   Plan: home."
    doc = Doc(Note("n", text, patient_id="p", known_phi=(("Moreau", "PATIENT"),)))
    ext = CharFeatureExtractor(list(CHAR_FAMILIES), window=2)
    rule = Span(text.index("3/4"), text.index("2019") + 4, "DATE", "date_rule")
    feats = ext.extract(doc, [rule])
    seq = char_sequence(doc)
    assert len(feats) == len(seq.chars)
    assert seq.chars.count("\n") == 1  # the blank lines and indentation are one position
    m = seq.starts.index(text.index("Moreau"))
    assert {"c=M", "k=A", "tp=B", "tw=moreau", "t-1=.", "t+1=on", "meta=PATIENT", "1:c=o"} <= set(feats[m])
    d = seq.starts.index(rule.start)
    assert "rule=DATE" in feats[d] and "rb=DATE" in feats[d] and "rule=DATE" not in feats[d - 1]
    with pytest.raises(ValueError, match="unknown char feature families"):
        check_families(["char", "nope"])


@pytest.fixture(scope="module")
def char_bundle(tmp_path_factory):
    notes, gold = tiny_corpus(60)
    conf = crf_conf({"training": {"max_iterations": 30}, "clusters": {"k": [4, 8], "min_count": 2}})
    return train_bundle(make_docs(notes, gold), conf, tmp_path_factory.mktemp("charb"), models=["single", "char"])


def _config(stages):
    return load_config({"pipeline": {"stages": stages, "merge": "union"}})


def test_bundle_records_char_model(char_bundle):
    comp = char_bundle.manifest["components"]
    assert set(comp["crf"]["models"]) == {"single"}  # token models only
    char = comp["crf_char"]["models"]["char"]
    assert char["kind"] == "char" and (char_bundle.path / char["file"]).is_file()
    assert char["features"] == list(crf_config().models["char"].features)
    assert "PATIENT" in char["labels"] and sum(n for t, n in char["tag_counts"].items() if t.endswith("-PATIENT")) > 0
    assert comp["crf_char"]["features_version"] and comp["crf_char"]["scheme"] == crf_config().labels.scheme


def test_char_crf_learns_the_templates(char_bundle):
    deid = build_deidentifier(_config(["crf_char"]), char_bundle, b"k" * 32)
    notes, gold = tiny_corpus(10, seed=99)
    found = total = 0
    for n in notes:
        spans = deid.tag(n)
        assert all(source_kind(s.source) in ("crf_char", "crf") for s in spans)  # crf: merge propagation
        for g in gold[n.note_id]:
            total += 1
            found += any(g.start < s.end and s.start < g.end for s in spans)
    assert found / total > 0.8


def test_stage_registered_and_reads_rule_stage_spans(char_bundle):
    config = _config(["rules", "crf", "crf_char"])
    assert config.registry.stages["crf_char"] == "deid_core.engine.crf.chars:char_stage"
    deid = build_deidentifier(config, char_bundle, b"k" * 32)
    stage = deid.stages[-1]
    assert stage.name == "crf_char"
    seen = []
    real = stage.model.extractor.extract
    stage.model.extractor.extract = lambda doc, rules: seen.append(list(rules)) or real(doc, rules)
    note = tiny_corpus(1, seed=5)[0][0]
    stage.run(Doc(note), NoteState(rule_spans=[Span(0, 2, "DATE", "date_rule")]))
    assert seen == [[Span(0, 2, "DATE", "date_rule")]]  # the rules stage's output, not a second run
    assert deid.process(note).ok


def test_stage_refuses_bundle_without_char_model(char_bundle, tmp_path):
    import shutil

    dst = tmp_path / "b"
    shutil.copytree(char_bundle.path, dst)
    mf = json.loads((dst / "bundle.json").read_text())
    comp = mf["components"].pop("crf_char")
    (dst / "bundle.json").write_text(json.dumps(mf))
    with pytest.raises(BundleError, match=r"no character-level CRF.*crf_char.*\[pipeline\] stages") as exc:
        char_stage(_config(["crf_char"]), load_bundle(dst))
    assert str(dst) in str(exc.value)
    mf["components"]["crf_char"] = {**comp, "features_version": "0-old"}
    (dst / "bundle.json").write_text(json.dumps(mf))
    with pytest.raises(BundleError, match="char feature version '0-old'"):
        char_stage(_config(["crf_char"]), load_bundle(dst))


def test_merge_with_crf_char_source():
    tok = Span(0, 10, "DOCTOR", "crf:single")
    char = Span(2, 12, "PATIENT", "crf_char:char", 0.9)
    rule = Span(20, 25, "DATE", "date_rule")
    assert source_kind(char.source) == "crf_char"
    seed001 = Merger("cascade", replace(OFF, priority=("rules", "metadata", "crf_char", "crf")))
    assert seed001([tok, char, rule]) == [char, rule]
    shipped = Merger("union", OFF)  # the shipped priority (conf/deidentify.toml)
    out = shipped([tok, char, rule])
    assert out[0].start == 0 and out[0].end == 12 and out[0].label == "DOCTOR"  # token CRF's label first
    assert not Merger("union", OFF).is_rule(char)  # never gated as a rule span


def test_ablation_variant_gives_char_rows():
    from deid_core.training.ablate import VARIANTS, run_variant
    from deid_core.training.corpora import pipeline_config

    assert {"+char", "char"} <= set(VARIANTS)
    notes, gold = tiny_corpus(40, patients=8)
    r = run_variant("+char", notes, gold, [], pipeline_config(None), 2, 15)
    for key in ("crf_char", "rules+crf+crf_char/union", "rules+crf+crf_char/cascade_seed001", "rules+crf/union"):
        assert 0.0 <= r[key]["overlap_recall"] <= 1.0
    assert r["crf_char"]["overlap_recall"] > 0.5


def test_sequence_provider_feeds_token_models_only(tmp_path):
    from deid_core.training.train import model_sequences

    notes, gold = tiny_corpus(20, patients=4)
    docs = make_docs(notes, gold)
    conf = crf_conf({"training": {"max_iterations": 10}, "models": {"single": {"features": ["word", "shape"]}}})
    asked = []

    def provider(model, clusters, easy):  # what jobs/train.py passes (sequences built on executors)
        asked.append(model)
        return model_sequences(docs, conf, model, clusters=clusters, rule_spans=[()] * len(docs), easy=easy)

    b = train_bundle(docs, conf, tmp_path / "b", models=["single", "char"], sequence_provider=provider)
    assert asked == ["single"]  # the char model is trained on the driver from the docs
    assert set(b.manifest["components"]["crf_char"]["models"]) == {"char"}
    with pytest.raises(ValueError, match="unknown models"):
        train_bundle(docs, conf, tmp_path / "c", models=["nope"])
