"""Which output mode each label gets, from the one typed configuration: [pipeline] mode, overridden
per label by [surrogates.label_modes]. The surrogate settings themselves are `config.surrogates`."""

from __future__ import annotations

from typing import get_args

from deid_core.config import Config
from deid_core.config.surrogates import Mode

MODES: tuple[str, ...] = get_args(Mode)
KEYED_MODES = frozenset({"surrogate", "hash"})


def label_mode(config: Config, label: str, default_mode: str) -> str:
    """The mode of a label: its [surrogates.label_modes] entry, else `default_mode`."""
    return config.surrogates.label_modes.get(label, default_mode)


def requires_key(config: Config) -> bool:
    """True when the configured modes (global or any per-label override) need a secret key."""
    return bool({config.pipeline.mode, *config.surrogates.label_modes.values()} & KEYED_MODES)


def shifts_note_date(config: Config) -> bool:
    """True when DATE spans get surrogates (shifted dates): then notes/ carries the shifted note_date.

    In every other mode the note_date column is PHI with nothing to agree with: it is not output.
    """
    return (label_mode(config, "DATE", config.pipeline.mode) == "surrogate"
            and not config.surrogates.profiles[config.surrogates.profile].safe_harbor)
