"""Names in the configuration's [registry.*] tables ('package.module:attribute') resolved to objects."""

from __future__ import annotations

import importlib
from typing import Any

from deid_core.config import ConfigError


def resolve(ref: str) -> Any:
    """Import 'package.module:attribute' (a stage, mode or merge factory); ConfigError naming it otherwise."""
    module_name, _, attr = ref.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"registry entry {ref!r} cannot be imported: {exc}") from None
