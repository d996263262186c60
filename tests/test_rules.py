"""Rule tagger: every rule's own examples, suppressors, config, pickling, property tests."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core.config import ConfigError, load_config
from deid_core.doc import Doc
from deid_core.engine.rules.loader import compile_rule, load_rules, parse_example
from deid_core.engine.rules.tagger import RuleTagger, rule_stage
from deid_core.notes import Note


@pytest.fixture(scope="module")
def tagger() -> RuleTagger:
    """All rules, every age tagged (the examples include ages under 90)."""
    return RuleTagger(load_config({"rules": {"min_age": 0}}).rules)


def _all_examples():
    t = RuleTagger(load_config({"rules": {"min_age": 0}}).rules)
    for r in list(t.rules) + list(t.gazetteer_rules):
        for ex in r.examples:
            yield pytest.param(r.id, r.label, ex, True, id=f"{r.id}+{ex[:25]}")
        for ex in r.negatives:
            yield pytest.param(r.id, r.label, ex, False, id=f"{r.id}-{ex[:25]}")


@pytest.mark.parametrize("rule_id,label,example,positive", list(_all_examples()))
def test_rule_examples(tagger, rule_id, label, example, positive):
    """Positive examples yield a span of the rule's label over the marked text; negatives none."""
    text, marks = parse_example(example)
    spans = tagger.tag_raw(Doc(Note("t", text)))
    if not positive:
        assert not [s for s in spans if s.label == label], rule_id
        return
    assert marks, f"{rule_id}: positive example without [[...]]"
    for s, e in marks:
        if label == "NONPHI":
            assert not any(x.start < e and s < x.end for x in spans), rule_id
        else:
            assert any((x.start, x.end, x.label) == (s, e, label) for x in spans), rule_id


def test_every_rule_has_examples(tagger):
    """Each PHI rule documents at least one positive example and every rule a description."""
    for r in tagger.rules:
        assert r.description, r.id
        assert r.examples, r.id


def test_parse_example():
    assert parse_example("a [[b]] c [[dd]]") == ("a b c dd", [(2, 3), (6, 8)])
    assert parse_example("none") == ("none", [])


def test_nonphi_lookalikes_not_tagged(tagger):
    """Blood pressures, ratios, strengths, doses, times, counts and lab runs give no PHI."""
    text = ("BP 120/80, HR 88. sitter 1:1. strength 5/5 bilat. lasix 40 mg IV x3. "
            "ABG 7.45/33/80. pain 4/10. at 10:30 pm. D5 1/2 NS at 75 cc/hr. PEEP 5/5.")
    assert tagger.tag(Doc(Note("t", text))) == []


def test_tag_is_non_overlapping_and_sources_are_rule_ids(tagger):
    text = "Dr. Zelnik saw pt on 3/14/2019; call (617) 555-0123. Mr. Ovantis, 92 yo."
    spans = tagger.tag(Doc(Note("t", text)))
    ids = {r.id for r in tagger.rules} | {g.id for g in tagger.gazetteer_rules}
    assert all(s.source in ids for s in spans)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))
    assert {"DOCTOR", "DATE", "PHONE", "PATIENT", "AGE"} <= {s.label for s in spans}


def test_min_age_default_detects_every_age():
    """Detection follows i2b2 2014 (every age); [rules] min_age = 90 detects only Safe Harbor's."""
    text = "74 yo man, mother 94 yo"
    labels = [s.label for s in RuleTagger(load_config().rules).tag(Doc(Note("t", text)))]
    assert labels.count("AGE") == 2
    hipaa = RuleTagger(load_config({"rules": {"min_age": 90}}).rules)
    assert [text[s.start:s.end] for s in hipaa.tag(Doc(Note("t", text))) if s.label == "AGE"] == ["94"]


def test_metadata_matches_are_tagged():
    t = RuleTagger(load_config().rules)
    note = Note("t", "seen with zorblatt today", known_phi=(("ZORBLATT", "PATIENT"),))
    spans = t.tag(Doc(note))
    assert [(s.start, s.end, s.label) for s in spans] == [(10, 18, "PATIENT")]
    off = RuleTagger(load_config({"rules": {"metadata": False}}).rules)
    assert off.tag(Doc(note)) == []


def test_pickle_roundtrip_same_output(tagger):
    clone = pickle.loads(pickle.dumps(tagger))
    doc_text = "Dr. Zelnik on 3/14/2019, pager 40123."
    assert clone.tag(Doc(Note("t", doc_text))) == tagger.tag(Doc(Note("t", doc_text)))
    assert len(pickle.dumps(tagger)) < 5000


def test_rule_stage_reads_rules_table():
    t = rule_stage(load_config({"rules": {"fuzzy": False}}), None)
    assert isinstance(t, RuleTagger) and t.metadata is not None and t.metadata.fuzzy is False


def test_bad_rule_files_fail_with_named_rule(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[rule]]\nid = "x"\nlabel = "NOPE"\npattern = "a"\n')
    with pytest.raises(ConfigError, match="x"):
        load_rules([str(bad)])
    bad.write_text('[[rule]]\nid = "y"\nlabel = "DATE"\npattern = "(unclosed"\n')
    with pytest.raises(ConfigError, match="y"):
        load_rules([str(bad)])
    with pytest.raises(ConfigError):
        load_rules([str(tmp_path / "missing.toml")])


def test_compile_rule_rejects_unknown_flag():
    from deid_core.engine.rules.loader import Rule

    with pytest.raises(ConfigError, match="flag"):
        compile_rule(Rule(id="z", label="DATE", pattern="a", flags="q"))


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_spans_always_inside_text(text):
    """Whatever the input, spans are non-empty, inside the text and non-overlapping."""
    t = _PROP_TAGGER
    note = Note("p", text, known_phi=(("Ab", "PATIENT"), ("Zelnik", "DOCTOR")))
    spans = t.tag(Doc(note))
    for s in spans:
        assert 0 <= s.start < s.end <= len(text)
    assert all(a.end <= b.start for a, b in zip(spans, spans[1:], strict=False))


_ALPHABET = "Dr. Mr 0123456789/-:()'#@ \nabcxyzSMITHsmith yo MD RN hospital daughter"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=_ALPHABET, max_size=200))
def test_spans_inside_text_on_rule_like_input(text):
    """Same invariant on inputs built from rule trigger characters and words."""
    spans = _PROP_TAGGER.tag(Doc(Note("p", text, known_phi=(("SMITH", "PATIENT"),))))
    for s in spans:
        assert 0 <= s.start < s.end <= len(text)


_PROP_TAGGER = RuleTagger(load_config({"rules": {"min_age": 0}}).rules)


def test_required_labels_have_rules_with_examples(tagger):
    """Every label the rule tagger is responsible for has a rule (or gazetteer rule) with examples."""
    required = {"PHONE", "FAX", "EMAIL", "URL", "IPADDR", "SSN", "MEDICALRECORD", "HEALTHPLAN",
                "ACCOUNT", "LICENSE", "VEHICLE", "DEVICE", "BIOID", "IDNUM", "DATE", "AGE", "ZIP",
                "STATE", "STREET", "USERNAME", "ROOM", "CITY", "HOSPITAL", "COUNTRY", "DOCTOR",
                "PATIENT", "PROFESSION", "ORGANIZATION"}
    covered = {r.label for r in list(tagger.rules) + list(tagger.gazetteer_rules) if r.examples}
    assert required <= covered, sorted(required - covered)
    assert any(r.label == "NONPHI" for r in tagger.rules)
