"""Surrogates and output modes: keyed, patient-consistent, format-preserving replacements.

Modules: modes (mode factories, per-label dispatch), settings (each label's mode, requires_key),
consistency (keyed randomness, scope, case, collision re-draws), names, dates, numbers (ids,
phones and other format-preserving numbers), contact (email, URL, IP), locations, safe_harbor
(ages, ZIP codes), leaks (which gold originals survive an output). Never imports pyspark; no
PHI in logs or messages.
"""

from deid_core.engine.surrogates.modes import hash_mode, redact_mode, surrogate_mode
from deid_core.engine.surrogates.settings import requires_key

__all__ = ["hash_mode", "redact_mode", "requires_key", "surrogate_mode"]
