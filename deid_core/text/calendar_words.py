"""Month, weekday and season names (conf/calendar.toml): the one list the CRF features, the date
surrogates and the synthetic notes read."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from deid_core.config import conf_table


@dataclass(frozen=True)
class CalendarWords:
    """The names of conf/calendar.toml, in calendar order."""

    months: tuple[str, ...]
    month_abbreviations: tuple[str, ...]
    weekdays: tuple[str, ...]
    weekday_abbreviations: tuple[str, ...]
    seasons: tuple[str, ...]

    def month_words(self) -> frozenset[str]:
        """Every month name and abbreviation, lower case."""
        return frozenset(w.lower() for w in self.months + self.month_abbreviations)

    def weekday_words(self) -> frozenset[str]:
        """Every weekday name and abbreviation, lower case."""
        return frozenset(w.lower() for w in self.weekdays + self.weekday_abbreviations)


@lru_cache(maxsize=1)
def calendar_words() -> CalendarWords:
    """conf/calendar.toml, checked (12 months, 7 weekdays)."""
    from deid_core.config import ConfigError

    words = conf_table(CalendarWords, "calendar.toml")
    if len(words.months) != 12 or len(words.weekdays) != 7:
        raise ConfigError("conf/calendar.toml: months must list 12 names and weekdays 7")
    return words


def alternation(names: tuple[str, ...]) -> str:
    """A regex alternation of the names, lower case, longest first (so the longest name matches first)."""
    return "|".join(sorted({n.lower() for n in names}, key=lambda n: (-len(n), n)))
