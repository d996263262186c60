"""Trained bundles cached by a digest of everything that shapes them: the training notes and gold, the
rule spans the CRF's rule_hits features read, the effective [crf] settings (but [crf.tagging]), conf/ (but
CONF_SKIP) and the code training runs (CODE). A re-run with the same inputs reuses the bundle; any change
to an input trains anew; a change that only tagging reads (the merge, merge-only rules, the scorer)
keeps it."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from deid_core.bundle import Bundle, BundleError, load_bundle
from deid_core.config import Config, conf_dir
from deid_core.engine.crf.versions import current_versions
from deid_core.spans import Span
from deid_core.training.train import RuleSource, TrainDoc, train_bundle

log = logging.getLogger(__name__)

_PKG = Path(__file__).resolve().parents[1]  # deid_core/
# What a trained bundle depends on besides its data and configurations.
# conf/ folders that shape no bundle except through what is hashed anyway: benchmark settings and Spark
# logging shape none; recipes and synthetic templates only through the training docs (hashed note by
# note); profiles only through the effective configuration (hashed). Editing a recipe or an overlay
# then retrains only the bundles whose docs change (not, e.g., the physionet profile's).
# conf/rules and conf/deidentify.toml shape a bundle only through the rule spans and [crf] (both hashed) and
# the training gold (hashed: harmonization reads the rules); conf/surrogates.toml shapes none.
CONF_SKIP = ("evaluation", "spark", "recipes", "synth", "profiles", "rules", "deidentify.toml", "surrogates.toml")
# The code training runs (tests/test_bundle_cache.py trains a bundle and checks that every deid_core module
# it loads is here): not the merge, the rules' code (their spans are hashed) nor the scorer.
CODE = (
    "__init__.py", "compiled.py", "engine/__init__.py", "engine/contract.py", "engine/generations.py",
    "engine/crf/__init__.py", "engine/crf/chars.py", "engine/crf/clusters.py", "engine/crf/doc_families.py",
    "engine/crf/extractor.py", "engine/crf/features.py", "engine/crf/labels.py", "engine/crf/shapes.py",
    "engine/crf/token_families.py", "engine/crf/versions.py", "engine/crf/words.py",
    "text", "gazetteers", "doc.py", "spans.py", "notes.py", "taxonomy.py", "bundle.py",
    "config/__init__.py", "config/convert.py", "config/crf.py", "config/effective.py", "config/files.py",
    "config/recipe.py", "training/__init__.py", "training/train.py",
)
# Loaded by training but not hashed: the tagging tables' schema ([merge], [names], [rules], [surrogates]...).
# Training reads [crf] only, whose effective values are hashed; the rules' settings reach it through the
# hashed rule spans and gold. A new [merge] option then keeps every bundle.
TAGGING_SCHEMA = ("config/tables.py", "config/surrogates.py")


def _tree(h: hashlib._Hash, path: Path, skip: tuple[str, ...] = ()) -> None:
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
        and p.relative_to(path).parts[0] not in skip)  # folders of `path` only, never of where it is installed
    for f in files:
        h.update(str(f.relative_to(_PKG.parent) if f.is_relative_to(_PKG.parent) else f.name).encode())
        h.update(f.read_bytes())


def uses_rule_hits(config: Config) -> bool:
    """Whether a model training trains reads the rules' spans (the rule_hits feature family)."""
    crf = config.crf
    return any("rule_hits" in crf.models[m].features for m in crf.training.models if m in crf.models)


def inputs_digest(docs: Sequence[TrainDoc], config: Config, extra: dict | None = None,
                  rule_spans: Sequence[Sequence[Span]] | None = None) -> str:
    """sha256 of the training docs (ids, text, metadata, domain, gold), their rule spans, [crf] but its
    tagging table, the versions, conf/ and the training code."""
    h = hashlib.sha256()
    crf = {k: v for k, v in asdict(config.crf).items() if k != "tagging"}  # tagging-only settings shape no bundle
    h.update(json.dumps([crf, current_versions(), extra or {}], sort_keys=True, default=str).encode())
    for i, d in enumerate(docs):
        n = d.doc.note
        h.update(json.dumps([n.note_id, n.patient_id, n.text, [list(k) for k in n.known_phi], d.domain,
                             [(s.start, s.end, s.label) for s in d.gold],
                             [(s.start, s.end, s.label) for s in rule_spans[i]] if rule_spans else None,  # rule_hits
                             ]).encode())
    _tree(h, conf_dir(), skip=CONF_SKIP)
    for part in CODE:
        _tree(h, _PKG / part)
    return h.hexdigest()


def cached_bundle(docs: Sequence[TrainDoc], config: Config, cache_dir: Path, name: str, *,
                  rules: RuleSource | None = None, extra: dict | None = None) -> tuple[Bundle, bool]:
    """(bundle, trained now?): the cached bundle for these inputs, trained (train.train_bundle with
    config.crf) if absent."""
    spans = [list(rules(d.doc)) for d in docs] if rules and uses_rule_hits(config) else None
    digest = inputs_digest(docs, config, extra, spans)
    target = Path(cache_dir) / f"{name}-{digest[:16]}"
    if (target / "bundle.json").is_file():
        try:
            return load_bundle(target), False
        except BundleError:
            shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.process_time()
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        if spans is not None:  # the spans hashed are the spans trained on (the rules run once)
            by_doc = {id(d.doc): s for d, s in zip(docs, spans, strict=True)}
            rules = lambda doc: by_doc[id(doc)]  # noqa: E731
        train_bundle(docs, config.crf, tmp, rules=rules, extra={**(extra or {}), "inputs_digest": digest})
        try:
            tmp.rename(target)
        except OSError:  # another run trained the same inputs meanwhile: keep its copy
            if not (target / "bundle.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log.info("trained %s (%d docs) in %.0f s CPU", name, len(docs), time.process_time() - t0)
    return load_bundle(target), True
