"""Output profiles ([surrogates] profile, [surrogates.profiles.*]): what of the detected PHI is replaced.

Detection follows the i2b2 2014 conventions (every age, weekday, profession, state, country); a
profile is policy applied after tagging and the cross-note step: spans it *drops* are not PHI under
its conventions (they leave spans/ and stay as they are in the text, e.g. the `physionet` profile's
ages under 90), spans it *keeps* stay in clear but are audited (their spans/ row remains, its
replacement the original, e.g. the `safe_harbor` profile's ages under 90).
"""

from __future__ import annotations

from collections.abc import Sequence

import regex

from deid_core.config import Config
from deid_core.config.surrogates import Profile
from deid_core.spans import Span
from deid_core.text.calendar_words import calendar_words

_NUMBER = regex.compile(r"\d+")
_SEPARATORS = regex.compile(r"[\s.,;:]+")
SPELLED_AGE = 90  # an age span without digits ("ninety-two", "forty-five") counts as this age


def age_value(original: str) -> int:
    """The age an AGE span states: its first number, else SPELLED_AGE (kept out of the age rules of a profile)."""
    m = _NUMBER.search(original)
    return int(m.group(0)) if m else SPELLED_AGE


class OutputProfile:
    """One [surrogates.profiles.<name>] table, applied to a note's spans."""

    def __init__(self, settings: Profile) -> None:
        self.settings = settings
        self.drop_labels = frozenset(settings.drop_labels)
        self.weekdays = calendar_words().weekday_words() if settings.drop_weekdays else frozenset()
        self.active = bool(self.drop_labels or self.weekdays or settings.drop_ages_under or settings.keep_ages_under)

    def dropped(self, text: str, span: Span) -> bool:
        """True when the span is not PHI under the profile's conventions."""
        if span.label in self.drop_labels:
            return True
        original = text[span.start:span.end]
        if span.label == "AGE":
            return age_value(original) < self.settings.drop_ages_under
        if span.label == "DATE" and self.weekdays:
            word = _SEPARATORS.sub("", original).lower()
            return word in self.weekdays or (word.endswith("s") and word[:-1] in self.weekdays)
        return False

    def kept(self, text: str, span: Span) -> bool:
        """True when the span stays in clear in the output (audited as kept)."""
        return span.label == "AGE" and age_value(text[span.start:span.end]) < self.settings.keep_ages_under

    def select(self, text: str, spans: Sequence[Span]) -> list[Span]:
        """The spans the profile outputs (dropped ones left out)."""
        if not self.active:
            return list(spans)
        return [s for s in spans if not self.dropped(text, s)]

    def replacements(self, text: str, spans: Sequence[Span], reps: Sequence[str]) -> list[str]:
        """The replacements with every kept span's original in place of its surrogate."""
        if not self.settings.keep_ages_under:
            return list(reps)
        return [text[s.start:s.end] if self.kept(text, s) else r for s, r in zip(spans, reps, strict=True)]


def output_profile(config: Config) -> OutputProfile:
    """The profile [surrogates] profile names."""
    sur = config.surrogates
    return OutputProfile(sur.profiles[sur.profile])
