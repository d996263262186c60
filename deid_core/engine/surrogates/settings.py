"""Effective surrogate settings: conf/surrogates.toml merged with a job config's [surrogates]."""

from __future__ import annotations

from typing import Any

from deid_core import taxonomy
from deid_core.config import ConfigError, conf_file, deep_merge

MODES = ("surrogate", "mask", "redact", "hash")


def surrogate_settings(config: dict[str, Any] | None = None) -> dict[str, Any]:
    """conf/surrogates.toml [surrogates] with the job config's [surrogates] merged over it."""
    base = conf_file("surrogates.toml").get("surrogates", {})
    override = (config or {}).get("surrogates", {})
    settings = deep_merge(base, override) if override else deep_merge(base, {})
    known = set(taxonomy.labels())
    for label, mode in settings.get("label_modes", {}).items():
        if label not in known:
            raise ConfigError(f"[surrogates.label_modes] unknown label {label!r}; expected one of {', '.join(sorted(known))}")
        if mode not in MODES:
            raise ConfigError(f"[surrogates.label_modes] {label} = {mode!r}; accepted: {', '.join(MODES)}")
    unknown = [lab for lab in settings.get("global_labels", ()) if lab not in known]
    if unknown:
        raise ConfigError(f"[surrogates] global_labels: unknown label(s) {unknown}")
    if settings.get("profile", "default") not in ("default", "safe_harbor"):
        raise ConfigError("[surrogates] profile must be 'default' or 'safe_harbor'")
    return settings


def global_mode(config: dict[str, Any] | None) -> str:
    """The [pipeline] mode of a job config (default surrogate)."""
    return (config or {}).get("pipeline", {}).get("mode", "surrogate")
