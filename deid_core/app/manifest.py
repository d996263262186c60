"""The run manifest (_manifest.json): counts, versions, digests and timings; ids and counts only."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

import deid_core
from deid_core.app.policies import INPUT_STAGES
from deid_core.bundle import Bundle
from deid_core.config import Config, conf_dir
from deid_core.engine.surrogates.locations import faker_version
from deid_core.keys import key_id

MANIFEST_NAME = "_manifest.json"


def rules_version(bundle: Bundle, config: Config) -> str:
    """The bundle's rules_version if it has one, else a content hash of the configured rule files."""
    v = bundle.manifest.get("rules_version")
    if isinstance(v, str) and v:
        return v
    rules = config.rules
    names = list(rules.files) + ([rules.gazetteer_file] if rules.gazetteer_file else [])
    if not names or "rules" not in config.pipeline.stages:
        return "none"
    h = hashlib.sha256()
    for name in names:
        p = conf_dir() / name
        h.update(name.encode() + b"\0" + (p.read_bytes() if p.is_file() else b"<missing>"))
    return "rules-" + h.hexdigest()[:12]


class QuarantineRateError(RuntimeError):
    """More notes were quarantined by a processing stage than [job] max_quarantine_rate allows."""


def quarantine_quality(counts: Mapping[str, Any], limit: float) -> dict[str, Any]:
    """The run's processing-quarantine rate against the ceiling (notes quarantined by tag/replace over tagged)."""
    by_stage = counts.get("quarantined_by_stage", {})
    faults = sum(n for stage, n in by_stage.items() if stage not in INPUT_STAGES)
    tagged = int(counts.get("tagged", 0))
    rate = faults / tagged if tagged else 0.0
    return {"quarantine_rate": round(rate, 6), "max_quarantine_rate": float(limit), "passed": rate <= limit}


def enforce_quality(manifest: Mapping[str, Any]) -> None:
    """Raise QuarantineRateError (counts only) when the manifest's quality check failed."""
    q = manifest.get("quality") or {}
    if q and not q.get("passed", True):
        raise QuarantineRateError(
            f"{q['quarantine_rate']:.2%} of tagged notes were quarantined by a processing stage, above "
            f"[job] max_quarantine_rate {q['max_quarantine_rate']:.2%}; outputs are written, see quarantine/ "
            "by error_class")


def build_manifest(
    *,
    runner: str,
    counts: Mapping[str, Any],
    spans_by_label: Mapping[str, int],
    config: Config,
    bundle: Bundle,
    key: bytes,
    timings: Mapping[str, float],
    started: dt.datetime,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The manifest dict; `counts` holds input_rows, null_note_id_dropped, tagged and status_counts()."""
    total = float(timings.get("total_s", 0.0)) or 0.0
    processed = int(counts.get("input_rows", 0)) - int(counts.get("null_note_id_dropped", 0))
    pipe = config.pipeline
    manifest: dict[str, Any] = {
        "engine": "deid-spark",
        "engine_version": deid_core.__version__,
        "faker_version": faker_version(),
        "runner": runner,
        "started_at": started.isoformat(timespec="seconds"),
        "bundle_id": bundle.id,
        "rules_version": rules_version(bundle, config),
        "config_digest": config.digest,
        "key_id": key_id(key),
        "mode": pipe.mode,
        "stages": list(pipe.stages),
        "counts": {**dict(counts), "spans": int(sum(spans_by_label.values())),
                   "spans_by_label": dict(sorted(spans_by_label.items()))},
        "timings_s": {k: round(float(v), 3) for k, v in timings.items()},
        "throughput_notes_per_s": round(processed / total, 1) if total > 0 else None,
    }
    manifest["quality"] = quarantine_quality(manifest["counts"], config.job.max_quarantine_rate)
    manifest.update(dict(extra or {}))
    return manifest


def manifest_json(manifest: Mapping[str, Any]) -> str:
    """Stable, readable JSON text of a manifest."""
    return json.dumps(manifest, indent=2, sort_keys=True) + "\n"


def summary_lines(manifest: Mapping[str, Any]) -> list[str]:
    """A short human summary of a manifest (counts only)."""
    c = manifest.get("counts", {})
    lines = [
        f"notes in: {c.get('input_rows', 0)}   de-identified: {c.get('notes', 0)}   "
        f"quarantined: {c.get('quarantined', 0)}   spans: {c.get('spans', 0)}",
        f"mode: {manifest.get('mode')}   stages: {', '.join(manifest.get('stages', []))}   "
        f"bundle: {str(manifest.get('bundle_id', ''))[:12]}   key id: {manifest.get('key_id')}",
    ]
    if c.get("quarantined_by_error_class"):
        lines.append("quarantined by error: " + ", ".join(
            f"{k} {v}" for k, v in c["quarantined_by_error_class"].items()))
    if c.get("spans_by_label"):
        lines.append("spans by label: " + ", ".join(f"{k} {v}" for k, v in c["spans_by_label"].items()))
    if manifest.get("throughput_notes_per_s"):
        lines.append(f"time: {manifest['timings_s'].get('total_s')} s   "
                     f"throughput: {manifest['throughput_notes_per_s']} notes/s")
    return lines
