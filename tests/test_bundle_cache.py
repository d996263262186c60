"""The bench's bundle cache: what its digest reads of conf/."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from deid_core.config import conf_dir
from deid_core.training.bundle_cache import CONF_SKIP, _tree


def _digest(conf) -> str:
    h = hashlib.sha256()
    _tree(h, conf, skip=CONF_SKIP)
    return h.hexdigest()


def test_conf_is_hashed_wherever_the_checkout_lives(tmp_path):
    """Skipped folders are conf/'s own (conf/spark, conf/rules...): a checkout under a folder named
    like one of them (…/spark/conf) still hashes conf/sections.toml, so a section-header edit (a feature
    family reads them) is not served a stale bundle."""
    for home in ("ok", "spark", "rules"):
        conf = tmp_path / home / "conf"
        shutil.copytree(conf_dir(), conf)
        before = _digest(conf)
        rule = conf / "sections.toml"
        rule.write_text(rule.read_text() + "\n# edited\n")
        assert _digest(conf) != before, home
        spark = next((conf / "spark").rglob("*.*"))
        changed = _digest(conf)
        spark.write_text(spark.read_text() + "\n# edited\n")
        assert _digest(conf) == changed, home  # conf/spark shapes no bundle


# --- round 13: the digest reads what training reads, and only that ---------------------------------

_MERGE_ONLY = '''
[macros]
ZZONLY = 'zz\\d+'

[[rule]]
id = "zz-merge-only"
label = "IDNUM"
priority = 60
description = "test rule"
pattern = '{{ZZONLY}}'
crf_feature = false
examples = ["[[zz12]]"]
'''


def test_merge_only_rules_keep_the_rules_version(tmp_path):
    """The bundles' rules version reads the rules the CRF's features read: a merge-only rule (and a macro
    only it uses) or a comment leaves it; a feature rule's pattern, or a macro a feature rule uses from
    another file, changes it."""
    from deid_core.engine.crf.versions import _rules_digest

    rules = tmp_path / "rules"
    shutil.copytree(conf_dir() / "rules", rules)
    before = _rules_digest(rules)
    (rules / "zz.toml").write_text(_MERGE_ONLY)
    assert _rules_digest(rules) == before
    ids = rules / "ids.toml"
    ids.write_text(ids.read_text() + "\n# a comment\n")
    assert _rules_digest(rules) == before
    (rules / "zz.toml").write_text(_MERGE_ONLY.replace("crf_feature = false", "crf_feature = true"))
    assert _rules_digest(rules) != before  # the same rule as a feature rule
    (rules / "zz.toml").write_text(_MERGE_ONLY.replace("[macros]\nZZONLY = 'zz\\d+'\n", "")
                                   .replace("crf_feature = false", ""))
    with_feature = _rules_digest(rules)
    (rules / "yy.toml").write_text("[macros]\nZZONLY = 'zz\\d+'\n")  # a feature rule's macro from another file
    changed = _rules_digest(rules)
    assert changed != with_feature
    (rules / "yy.toml").write_text("[macros]\nZZONLY = 'zz\\d{2}'\n")
    assert _rules_digest(rules) != changed


def test_feature_rule_edits_change_the_rules_version(tmp_path):
    """Editing the pattern of any one feature rule of the shipped files changes the version."""
    import tomllib

    from deid_core.engine.crf.versions import _rules_digest

    rules = tmp_path / "rules"
    shutil.copytree(conf_dir() / "rules", rules)
    before = _rules_digest(rules)
    for f in sorted(rules.glob("*.toml")):
        tables = tomllib.loads(f.read_text())
        feature = [r for r in tables.get("rule", []) if r.get("crf_feature", True)]
        if not feature:
            continue
        text = f.read_text()
        rid = feature[-1]["id"]
        edited = text.replace(f'id = "{rid}"', f'id = "{rid}-x"', 1)
        assert edited != text, (f.name, rid)
        f.write_text(edited)
        assert _rules_digest(rules) != before, f.name
        f.write_text(text)
    assert _rules_digest(rules) == before


def _digest_inputs():
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from crf_fixtures import tiny_corpus

    from deid_core.config import load_config
    from deid_core.training.train import make_docs

    notes, gold = tiny_corpus(12)
    return make_docs(notes, gold), load_config()


def test_inputs_digest_reads_training_inputs_only():
    """Tagging-only settings ([crf.tagging], [merge]) keep the digest; training settings, the gold and the
    rule spans the features read change it."""
    from deid_core.spans import Span
    from deid_core.training.bundle_cache import inputs_digest

    docs, config = _digest_inputs()
    spans = [[Span(0, 3, "DATE", "r")] for _ in docs]
    base = inputs_digest(docs, config, None, spans)
    assert inputs_digest(docs, config.override({"crf": {"tagging": {"marginal_threshold": 0.31}}}), None, spans) == base
    assert inputs_digest(docs, config.override({"merge": {"propagate": False}}), None, spans) == base
    assert inputs_digest(docs, config, None, [[Span(0, 3, "DATE", "another-rule-id")] for _ in docs]) == base
    assert inputs_digest(docs, config.override({"crf": {"training": {"c1": 0.123}}}), None, spans) != base
    assert inputs_digest(docs, config, None, [[Span(0, 3, "AGE", "r")] for _ in docs]) != base
    assert inputs_digest(docs, config, None, [[Span(0, 4, "DATE", "r")] for _ in docs]) != base
    assert inputs_digest(docs, config, None, None) != base
    first = docs[0]
    changed = [type(first)(first.doc, [*first.gold, Span(0, 1, "NAME", "gold")], first.domain), *docs[1:]]
    assert inputs_digest(changed, config, None, spans) != base


_LOADED = r'''
import json, sys, tempfile
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import deid_core.training.train  # what training imports
first = sorted(m for m in sys.modules if m.startswith("deid_core"))
from crf_fixtures import tiny_corpus
from deid_core.config import load_config
from deid_core.engine.pipeline import build_stage
from deid_core.training.bundle_cache import cached_bundle
from deid_core.training.train import make_docs
notes, gold = tiny_corpus(30)
config = load_config().override({"crf": {"training": {"max_iterations": 5}, "clusters": {"k": [4], "min_count": 2}}})
rules = build_stage(config, "rules", None)
docs = make_docs(notes, gold)
spans = [rules.feature_spans(d.doc) for d in docs]
before = set(sys.modules)
with tempfile.TemporaryDirectory() as tmp:
    bundle, trained = cached_bundle(docs, config, Path(tmp), "t", rules=rules.feature_spans)
    assert trained and any(spans)
during = sorted(m for m in set(sys.modules) - before if m.startswith("deid_core"))
print(json.dumps({"import": first, "train": during}))
'''


def test_the_digest_hashes_the_code_training_runs():
    """Every deid_core module that importing training, or training a bundle with rule features, loads is
    hashed (CODE): a change to it retrains. The rules' code is not (its spans are hashed)."""
    import json
    import subprocess
    import sys

    from deid_core.training.bundle_cache import _PKG, CODE, TAGGING_SCHEMA

    out = subprocess.run([sys.executable, "-c", _LOADED, str(Path(__file__).parent)], capture_output=True,
                         text=True, check=True, timeout=600)
    loaded = json.loads(out.stdout.strip().splitlines()[-1])

    def covered(module: str) -> bool:
        path = Path(sys.modules[module].__file__) if module in sys.modules else None
        if path is None:
            __import__(module)
            path = Path(sys.modules[module].__file__)
        rel = path.relative_to(_PKG).as_posix()
        return rel in TAGGING_SCHEMA or any(rel == part or rel.startswith(part + "/") for part in CODE)

    missing = [m for m in loaded["import"] + loaded["train"]
               if m != "deid_core.training.bundle_cache" and not covered(m)]
    assert not missing, missing
    assert "deid_core.engine.crf.scorer" not in loaded["import"] + loaded["train"]
    assert {"deid_core.config.tables", "deid_core.config.crf"} <= set(loaded["import"])  # the test sees config


def test_tagging_schema_holds_no_training_setting():
    """config/tables.py and config/surrogates.py are not hashed: they must define no table training reads
    ([crf] lives in config/crf.py, hashed with its effective values)."""
    from deid_core.config import effective

    unhashed = {"deid_core.config.tables", "deid_core.config.surrogates"}
    assert effective.TABLES["crf"].__module__ not in unhashed
    assert all(cls.__module__ in unhashed | {"deid_core.config.crf"} for cls in effective.TABLES.values())


def test_a_merge_only_suppressor_still_changes_the_rules_version(tmp_path):
    """A suppressor cancels hits before the CRF's features read them, merge-only or not: it counts."""
    from deid_core.engine.crf.versions import _rules_digest

    rules = tmp_path / "rules"
    shutil.copytree(conf_dir() / "rules", rules)
    before = _rules_digest(rules)
    (rules / "zz.toml").write_text(_MERGE_ONLY.replace('label = "IDNUM"', 'label = "NONPHI"'))
    assert _rules_digest(rules) != before
