"""Trained bundles cached by a digest of everything that shapes them: the training notes and gold,
the effective configuration, conf/ (but the folders of CONF_SKIP), and the code of the engine and
of training. A re-run with the same inputs reuses the bundle; any change to an input trains anew."""

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
from deid_core.training.train import RuleSource, TrainDoc, train_bundle

log = logging.getLogger(__name__)

_PKG = Path(__file__).resolve().parents[1]  # deid_core/
# What a trained bundle depends on besides its data and configurations.
# conf/ folders that shape no bundle except through what is hashed anyway: benchmark settings and Spark
# logging shape none; recipes and synthetic templates only through the training docs (hashed note by
# note); profiles only through the effective configuration (hashed). Editing a recipe or an overlay
# then retrains only the bundles whose docs change (not, e.g., the physionet profile's).
CONF_SKIP = ("evaluation", "spark", "recipes", "synth", "profiles")
_CODE = ("engine", "text", "gazetteers", "doc.py", "spans.py", "notes.py", "taxonomy.py", "config",
         "bundle.py", "training/train.py")


def _tree(h: hashlib._Hash, path: Path, skip: tuple[str, ...] = ()) -> None:
    files = [path] if path.is_file() else sorted(
        p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts
        and p.relative_to(path).parts[0] not in skip)  # folders of `path` only, never of where it is installed
    for f in files:
        h.update(str(f.relative_to(_PKG.parent) if f.is_relative_to(_PKG.parent) else f.name).encode())
        h.update(f.read_bytes())


def inputs_digest(docs: Sequence[TrainDoc], config: Config, extra: dict | None = None) -> str:
    """sha256 of the training docs (ids, text, metadata, domain, gold), the configuration, conf/ and code."""
    h = hashlib.sha256()
    tables = [asdict(config.crf), config.document]  # [crf] and what runs the rules (rule_hits features)
    h.update(json.dumps([tables, current_versions(), extra or {}], sort_keys=True, default=str).encode())
    for d in docs:
        n = d.doc.note
        h.update(json.dumps([n.note_id, n.patient_id, n.text, [list(k) for k in n.known_phi], d.domain,
                             [(s.start, s.end, s.label) for s in d.gold]]).encode())
    _tree(h, conf_dir(), skip=CONF_SKIP)
    for part in _CODE:
        _tree(h, _PKG / part)
    return h.hexdigest()


def cached_bundle(docs: Sequence[TrainDoc], config: Config, cache_dir: Path, name: str, *,
                  rules: RuleSource | None = None, extra: dict | None = None) -> tuple[Bundle, bool]:
    """(bundle, trained now?): the cached bundle for these inputs, trained (train.train_bundle with
    config.crf) if absent."""
    digest = inputs_digest(docs, config, extra)
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
