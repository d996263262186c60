"""`crf_feature = false`: a rule's spans reach the merge but not the CRF's rule_hits features."""

from __future__ import annotations

import pytest

from deid_core.config import ConfigError, load_config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState
from deid_core.engine.crf.extractor import FeatureConfig, FeatureExtractor
from deid_core.engine.rules.loader import load_rules
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note

RULES = '''
[[rule]]
id = "t-short"
label = "IDNUM"
priority = 40
pattern = '\\b(?P<phi>\\d{4})\\b'
examples = ["code [[1234]]"]

[[rule]]
id = "t-long"
label = "MEDICALRECORD"
priority = 80
crf_feature = false
pattern = 'card (?P<phi>\\d{4} \\d{4})'
examples = ["card [[1234 5678]]"]

[[rule]]
id = "t-alone"
label = "HEALTHPLAN"
crf_feature = false
pattern = 'plan (?P<phi>[A-Z]{3}\\d{3})'
examples = ["plan [[ABC123]]"]
'''

TEXT = "card 1234 5678 and plan XYZ987 today"


def _tagger(tmp_path) -> RuleTagger:
    f = tmp_path / "t.toml"
    f.write_text(RULES)
    return RuleTagger(load_config({"rules": {"files": [str(f)], "gazetteer_file": "", "metadata": False}}).rules)


def _show(spans, text=TEXT) -> list[tuple[str, str]]:
    return [(text[s.start:s.end], s.source) for s in spans]


def test_merge_only_rules_reach_the_merge(tmp_path):
    t = _tagger(tmp_path)
    assert t.merge_only == {"t-long", "t-alone"}
    assert _show(t.tag(Doc(Note("n", TEXT)))) == [("1234 5678", "t-long"), ("XYZ987", "t-alone")]


def test_features_read_the_rules_as_if_merge_only_rules_were_absent(tmp_path):
    t = _tagger(tmp_path)
    doc = Doc(Note("n", TEXT))
    expected = [("1234", "t-short"), ("5678", "t-short")]  # what t-long beat comes back
    assert _show(t.feature_spans(doc)) == expected
    state = NoteState()
    merged = t.run(doc, state)
    assert _show(merged) == _show(t.tag(doc)), "the stage hands the merge every rule span"
    assert _show(state.rule_spans) == expected, "and the CRF features only the others"


def test_crf_features_do_not_see_merge_only_rules(tmp_path):
    t = _tagger(tmp_path)
    doc = Doc(Note("n", TEXT))
    ext = FeatureExtractor(FeatureConfig(["word", "rule_hits"], 1), None)
    feats = ext.extract(doc, t.feature_spans(doc))
    flat = {f for tok in feats for f in tok}
    assert "rule=IDNUM" in flat
    assert not {"rule=MEDICALRECORD", "rule=HEALTHPLAN"} & flat
    with_all = {f for tok in ext.extract(doc, t.tag(doc)) for f in tok}
    assert {"rule=MEDICALRECORD", "rule=HEALTHPLAN"} <= with_all, "the check above has the power to fail"


def test_a_misspelt_field_is_refused(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(RULES.replace("crf_feature = false", "crf_features = false", 1))
    with pytest.raises(ConfigError, match="unknown field"):
        load_rules([str(bad)])
