"""What a CRF bundle depends on (feature code, taxonomy, rules, gazetteers), the check that
refuses a bundle built for other versions, and the check that a file is a whole crfsuite model."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import tomllib
from pathlib import Path

from deid_core.bundle import Bundle, BundleError


def _tree_digest(path: Path) -> str | None:
    """sha256 (first 16 hex) over a folder's or file's bytes; None when absent."""
    if not path.exists():
        return None
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    h = hashlib.sha256()
    for f in files:
        h.update(f.name.encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


_MACRO_USE = re.compile(r"\{\{(\w+)\}\}")


def feature_rules(path: Path) -> dict[str, dict]:
    """Each rule file of a folder as the CRF's rule_hits features see it: the rules marked
    `crf_feature = false` (merge only; suppressors kept) and the macros only they use left out, comments dropped."""
    files = {f.name: tomllib.loads(f.read_text(encoding="utf-8")) for f in sorted(path.glob("*.toml"))}
    # a suppressor (NONPHI) cancels hits before the features read them, merge-only or not (rules/tagger.py)
    rules = {name: [r for r in t.get("rule", []) if r.get("crf_feature", True) is not False or r.get("label") == "NONPHI"]
             for name, t in files.items()}
    macros = {k: v for t in files.values() for k, v in t.get("macros", {}).items()}  # shared by every file
    used: set[str] = set()
    todo = _MACRO_USE.findall(json.dumps(rules))
    while todo:
        name = todo.pop()
        if name not in used:
            used.add(name)
            todo.extend(_MACRO_USE.findall(macros.get(name, "")))
    out = {}
    for name, tables in files.items():
        kept = {**tables, "rule": rules[name], "macros": {k: v for k, v in tables.get("macros", {}).items() if k in used}}
        kept = {k: v for k, v in kept.items() if v or k not in ("rule", "macros")}
        if kept:  # a file of merge-only rules is no file to the features
            out[name] = kept
    return out


def _rules_digest(path: Path) -> str | None:
    """sha256 (first 16 hex) of the rules the CRF reads (feature_rules); None when the folder is absent."""
    if not path.is_dir():
        return None
    return hashlib.sha256(json.dumps(feature_rules(path), sort_keys=True).encode()).hexdigest()[:16]


def current_versions() -> dict[str, str | None]:
    """Versions of what a CRF bundle depends on: features, taxonomy, rules, gazetteers."""
    from deid_core.config import conf_dir, conf_file
    from deid_core.engine.crf.words import features_version
    from deid_core.gazetteers import DATA

    return {
        "features": features_version(),
        "taxonomy": str(conf_file("taxonomy.toml")["version"]),
        "rules": _rules_digest(conf_dir() / "rules"),  # merge-only rules leave bundles valid
        "gazetteers": _tree_digest(DATA),  # the lists only: code changes that keep them leave bundles valid
    }


# Mismatches that make a model unusable (feature strings or labels changed) always refuse;
# rule and gazetteer versions only shift the rule-hit / gazetteer features, so they refuse
# only in strict mode ([tagging] strict_versions) and otherwise log a warning.
HARD_VERSIONS = ("features", "taxonomy")


def check_versions(bundle: Bundle, current: dict[str, str | None] | None = None, *, strict: bool = True) -> list[str]:
    """Raise BundleError naming each mismatched version; soft mismatches are returned when not strict."""
    import logging

    recorded = bundle.manifest.get("versions")
    if not recorded or not bundle.manifest.get("components", {}).get("crf"):
        return []
    current = current or current_versions()
    needed = set(bundle.manifest["components"]["crf"].get("depends_on", ["features", "taxonomy"]))
    bad = [k for k in sorted(needed) if recorded.get(k) != current.get(k)]
    hard = [k for k in bad if strict or k in HARD_VERSIONS]
    if hard:
        detail = "; ".join(f"{k}: bundle {recorded.get(k)!r}, engine {current.get(k)!r}" for k in hard)
        raise BundleError(
            f"model bundle {bundle.path} was built for other versions ({detail}); "
            "retrain it with `deid train` (see docs/crf.md) or use a matching engine"
        )
    if bad:
        logging.getLogger(__name__).warning(
            "model bundle %s was trained with other %s versions; retrain it for best accuracy (docs/crf.md)",
            bundle.id[:12], ", ".join(bad))
    return bad


def open_model(tagger, path: Path) -> None:
    """`tagger.open(path)` for a file that is a whole crfsuite model, else BundleError naming it.

    crfsuite reads a truncated model past its end and crashes the process; bundle digests
    (deid_core/bundle.py) catch that first, and this header check (magic "lCRF", then the file
    size the header records) guards a model opened by any other path.
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
        size = path.stat().st_size
    except OSError as exc:
        raise BundleError(f"CRF model file {path} cannot be read: {exc.strerror or exc}") from None
    if len(head) < 8 or head[:4] != b"lCRF" or struct.unpack("<I", head[4:8])[0] != size:
        raise BundleError(f"CRF model file {path} is not a whole crfsuite model (truncated or damaged)")
    try:
        tagger.open(str(path))
    except (OSError, ValueError) as exc:
        raise BundleError(f"CRF model file {path} cannot be opened by crfsuite: {exc}") from None
