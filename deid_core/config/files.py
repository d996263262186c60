"""Locate and load the declarative configuration in conf/ (TOML), merge overrides, digest it."""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent.parent  # deid_core/


class ConfigError(ValueError):
    """A configuration file or option is missing or malformed (message names which and why)."""


def conf_dir() -> Path:
    """The conf/ folder: packaged as deid_core/conf in a wheel, the repository's conf/ in a checkout."""
    for candidate in (_HERE / "conf", _HERE.parent / "conf"):
        if (candidate / "taxonomy.toml").is_file():
            return candidate
    raise ConfigError(f"cannot find the conf/ folder next to {_HERE} (expected conf/taxonomy.toml)")


def conf_path(path: str | Path) -> Path:
    """The path as given, or (a relative name that does not exist here) the file of that name in conf/."""
    p = Path(path)
    return conf_dir() / p if not p.is_absolute() and not p.exists() else p


def load_toml(path: str | Path) -> dict[str, Any]:
    """Read one TOML file; a relative name is looked up in conf/. Errors name the file."""
    p = conf_path(path)
    try:
        with open(p, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {p}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"configuration file {p} is not valid TOML: {exc}") from None


@lru_cache(maxsize=64)
def conf_file(name: str) -> dict[str, Any]:
    """A file of conf/ by name, parsed once per process (treat the result as read-only)."""
    return load_toml(conf_dir() / name)


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """A new dict: `override` merged into `base`, tables recursively, other values replaced."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def digest(config: dict[str, Any]) -> str:
    """A stable sha256 of an effective configuration (goes into the run manifest)."""
    blob = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
