"""Date surrogates: a per-patient keyed shift applied to every recognised date shape, format kept.

Shapes come from conf/surrogates.toml ([[surrogates.dates.formats]]): regexes whose named groups
(y4, y2, m, mon, d, ord, wd, season, time, holiday) are re-rendered in place, so separators,
zero padding, month names vs abbreviations and case survive. A span with anything left that is
not a date or a connector word is not parsed: the caller masks it (fail closed).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from deid_core.config.surrogates import Dates
from deid_core.engine.generations import Generations
from deid_core.engine.surrogates.consistency import keyed_rng, match_case
from deid_core.text.calendar_words import alternation, calendar_words

PARSE_CACHE = 10_000  # parsed date strings a DateShifter keeps (~0.8 KB each; docs/BENCHMARKS.md, round 11)
SHIFT_CACHE = 8_192  # consistency scopes whose shift is kept (one per patient; the job sorts by patient)
_MISSING = object()
_CAL = calendar_words()
MONTHS = _CAL.months
WEEKDAYS = _CAL.weekdays  # Monday first, like date.weekday()
_MON_RE = alternation(_CAL.months + _CAL.month_abbreviations)
_WD_RE = alternation(_CAL.weekdays + _CAL.weekday_abbreviations)
MACROS = {
    "{MON}": _MON_RE,
    "{WD}": _WD_RE,
    "{ORD}": r"st|nd|rd|th",
    "{WDP}": r"(?:\b(?P<wd>" + _WD_RE + r")\b\.?,?\s+)?",
}
_FILLER = re.compile(r"[\s,.\-–—/()~&+:;]+")
_WORD = re.compile(r"[^\W\d_]+|\d+")
_FULL_NAMES = frozenset(n.casefold() for n in MONTHS + WEEKDAYS)


@dataclass
class _Hit:
    """One recognised date inside a span."""

    start: int
    end: int
    match: re.Match
    fields: dict[str, Any]


def ordinal_suffix(day: int) -> str:
    """st / nd / rd / th for a day number."""
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _month_of(text: str) -> int:
    t = text.casefold().rstrip(".")
    for i, name in enumerate(MONTHS, 1):
        if name.casefold().startswith(t[:3]):
            return i
    raise ValueError("not a month")


def _weekday_of(text: str) -> int:
    t = text.casefold().rstrip(".")[:3]
    for i, name in enumerate(WEEKDAYS):
        if name.casefold().startswith(t):
            return i
    raise ValueError("not a weekday")


def shift_season(season: str, days: int) -> str:
    """The season moved by round(days / 91.3) seasons (never a whole year: at least one)."""
    order = ["winter", "spring", "summer", "fall"]
    n = (round(abs(days) / 91.3) % 4 or 1) * (1 if days > 0 else -1)
    new = order[(order.index("fall" if season == "autumn" else season) + n) % 4]
    return "autumn" if new == "fall" and season == "autumn" else new


def shift_season_year(season: str, year: int, days: int) -> tuple[str, int]:
    """(season, year) moved by sign(days) * max(1, round(|days| / 91.3)) seasons: always changes."""
    order = ["winter", "spring", "summer", "fall"]
    steps = max(1, round(abs(days) / 91.3)) * (1 if days > 0 else -1)
    ordinal = year * 4 + order.index("fall" if season == "autumn" else season) + steps
    new = order[ordinal % 4]
    return ("autumn" if new == "fall" and season == "autumn" else new), ordinal // 4


def year_shift(days: int) -> int:
    """Whole years a lone year moves: sign(days) * max(1, round(|days| / 365.25))."""
    if days == 0:
        return 0
    n = max(1, round(abs(days) / 365.25))
    return n if days > 0 else -n


class DateShifter:
    """Finds dates in a DATE span and renders them shifted (or reduced to the year)."""

    def __init__(self, conf: Dates) -> None:
        self.lo = conf.shift_min_days
        self.hi = conf.shift_max_days
        self.avoid7 = conf.avoid_weekday_preserving
        if not any(_ok_shift(s, self.avoid7) for s in range(self.lo, self.hi + 1)):
            raise ValueError("[surrogates.dates] shift range holds no usable shift")
        self.ref_year = conf.reference_year
        self.yearless = conf.yearless_year
        self.pivot = conf.two_digit_pivot
        self.year_alone = conf.year_alone
        self.holiday_mode = conf.holidays
        self.season_mode = conf.seasons
        self.decade_mode = conf.decades
        self.bare_two_digits = conf.bare_two_digits
        self.sh_year = conf.safe_harbor_year
        self.connectors = frozenset(w.casefold() for w in conf.connectors)
        hol = list(conf.holiday_dates.items())
        self.holiday_dates = [md for _, md in hol]
        self.holiday_rx = re.compile(
            r"\b(?:" + "|".join(f"(?P<h{i}>{pat})" for i, (pat, _) in enumerate(hol)) + r")\b", re.I
        ) if hol else None
        self.patterns = [(f.name, _compile(f.pattern), _needs(f.pattern)) for f in conf.formats]
        self._cache: Generations[tuple[str, int | None], list[_Hit] | None] = Generations(PARSE_CACHE)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (e.g. shipped to Spark workers): the parse cache is left behind."""
        state = dict(self.__dict__)
        state["_cache"] = Generations(PARSE_CACHE)
        return state

    # -- the shift -------------------------------------------------------------------------
    def shift_days(self, key: bytes, scope: str) -> int:
        """The scope's shift in days: keyed, uniform in the configured range, never 0."""
        return _shift(key, scope, self.lo, self.hi, self.avoid7)

    # -- parsing ---------------------------------------------------------------------------
    def find(self, text: str, note_year: int | None = None) -> list[_Hit] | None:
        """Recognised dates of a span in text order, or None if something else is left over."""
        ck = (text, note_year if self.yearless == "note_date" else None)
        hits = self._cache.get(ck, _MISSING)
        if hits is _MISSING:
            hits = self._find(text, note_year)
            self._cache.put(ck, hits)
        return hits  # type: ignore[return-value]

    def _find(self, text: str, note_year: int | None) -> list[_Hit] | None:
        hits: list[_Hit] = []
        has_digit = any(c.isdigit() for c in text)
        has_alpha = any(c.isalpha() for c in text)
        if has_alpha and self.holiday_rx is not None:
            for m in self.holiday_rx.finditer(text):
                i = int(m.lastgroup[1:]) if m.lastgroup else 0
                hits.append(_Hit(m.start(), m.end(), m, {"holiday": self.holiday_dates[i]}))
        for _name, rx, (need_digit, need_alpha) in self.patterns:
            if (need_digit and not has_digit) or (need_alpha and not has_alpha):
                continue
            for m in rx.finditer(text):
                if any(m.start() < h.end and h.start < m.end() for h in hits):
                    continue
                fields = self._fields(m, note_year)
                if fields is not None:
                    hits.append(_Hit(m.start(), m.end(), m, fields))
        if not hits:
            return None
        hits.sort(key=lambda h: h.start)
        pos = 0
        for h in hits + [_Hit(len(text), len(text), None, {})]:  # type: ignore[arg-type]
            for w in _WORD.findall(_FILLER.sub(" ", text[pos:h.start])):
                if w.casefold() not in self.connectors:
                    return None
            pos = max(pos, h.end)
        return hits

    def _fields(self, m: re.Match, note_year: int | None) -> dict[str, Any] | None:
        g = {k: v for k, v in m.groupdict().items() if v is not None}
        f: dict[str, Any] = {}
        try:
            if "time" in g:
                return {"time": True}
            if "decade" in g:
                return {"decade": True}
            if "season" in g:
                f["season"] = g["season"].casefold()
            if "y4" in g:
                f["y"] = int(g["y4"])
                if not 1000 <= f["y"] <= 2999:
                    return None
            elif "y2" in g:
                yy = int(g["y2"])
                f["y"] = (2000 if yy <= self.pivot else 1900) + yy
            if "m" in g:
                f["m"] = int(g["m"])
            elif "mon" in g:
                f["m"] = _month_of(g["mon"])
            if "d" in g:
                f["d"] = int(g["d"])
            if "wd" in g:
                f["wd"] = _weekday_of(g["wd"])
        except ValueError:
            return None
        if "m" in f and not 1 <= f["m"] <= 12:
            return None
        if "d" in f:
            if "m" not in f:
                return None
            year = f.get("y") or self._yearless(note_year)
            if not 1 <= f["d"] <= calendar.monthrange(year, f["m"])[1]:
                return None
        return f

    def _yearless(self, note_year: int | None) -> int:
        if self.yearless == "note_date" and note_year:
            return note_year
        return self.ref_year

    # -- rendering -------------------------------------------------------------------------
    def replace(self, text: str, shift: int, note_year: int | None = None,
                safe_harbor: bool = False, mask: str = "[**DATE**]") -> str | None:
        """The span with every date shifted in its own format; None if it cannot be parsed."""
        hits = self.find(text, note_year)
        if hits is None:
            return None
        parts: list[str] = []
        pos = 0
        for h in hits:
            parts.append(text[pos:h.start])
            rendered = (self._year_only(h, shift, mask) if safe_harbor
                        else self._render(h, shift, note_year, mask))
            if rendered is None:
                return None
            parts.append(rendered)
            pos = h.end
        parts.append(text[pos:])
        return "".join(parts)

    def shifted_fields(self, f: dict[str, Any], shift: int, note_year: int | None) -> dict[str, Any]:
        """New y/m/d/wd values of one parsed date under `shift`."""
        y, m, d, wd = f.get("y"), f.get("m"), f.get("d"), f.get("wd")
        out: dict[str, Any] = {}
        if m is not None and d is not None:
            base = dt.date(y or self._yearless(note_year), m, d)
            new = base + dt.timedelta(days=shift)
            out.update(m=new.month, d=new.day, wd=new.weekday())
            if y is not None:
                out["y"] = new.year
            elif wd is not None:
                out["wd"] = (wd + shift) % 7
        elif m is not None:
            new = dt.date(y or self._yearless(note_year), m, 15) + dt.timedelta(days=shift)
            out["m"] = new.month
            if y is not None:
                out["y"] = new.year
        elif y is not None:
            out["y"] = y + (year_shift(shift) if self.year_alone == "shift" else 0)
        if wd is not None and "wd" not in out:
            out["wd"] = (wd + shift) % 7
        return out

    def _render(self, h: _Hit, shift: int, note_year: int | None, mask: str) -> str | None:
        f = h.fields
        if f.get("time"):
            return h.match.group(0)
        if "holiday" in f:
            return self._holiday(h, shift, mask)
        if "decade" in f:
            return h.match.group(0) if self.decade_mode == "keep" else mask
        if "season" in f:
            if self.season_mode != "shift":
                return mask
            if "y" not in f:
                return match_case(h.match.group("season"), shift_season(f["season"], shift))
            season, year = shift_season_year(f["season"], f["y"], shift)
            return _substitute(h.match, {"season": season, "y": year})
        new = self.shifted_fields(f, shift, note_year)
        return _substitute(h.match, new)

    def _holiday(self, h: _Hit, shift: int, mask: str) -> str:
        md = h.fields["holiday"]
        if self.holiday_mode != "shift" or not md:
            return mask
        mm, dd = (int(x) for x in md.split("-"))
        new = dt.date(self.ref_year, mm, dd) + dt.timedelta(days=shift)
        return f"{MONTHS[new.month - 1]} {new.day}"

    def _year_only(self, h: _Hit, shift: int, mask: str) -> str | None:
        f = h.fields
        if f.get("time") or (f.get("decade") and self.decade_mode == "keep"):
            return h.match.group(0)
        if "y" not in f:
            return mask
        y = f["y"]
        if self.sh_year == "shift":
            y = self.shifted_fields(f, shift, None).get("y", y)
        return f"{y:04d}"


def _needs(pattern: str) -> tuple[bool, bool]:
    """(needs a digit, needs a letter) for a format pattern to match at all."""
    need_alpha = any(g in pattern for g in ("(?P<mon>", "(?P<wd>{WD})", "(?P<season>"))
    return r"\d" in pattern, need_alpha


def _compile(pattern: str) -> re.Pattern:
    for macro, body in MACROS.items():
        pattern = pattern.replace(macro, body)
    return re.compile(pattern, re.I)


def _padded(m: re.Match, gname: str) -> bool:
    """Zero-pad a number group if it was padded, or if it and its numeric m/d sibling are 2 wide."""
    orig = m.group(gname)
    if orig.startswith("0"):
        return True
    other = "d" if gname == "m" else "m"
    sib = m.group(other) if other in m.re.groupindex else None
    return len(orig) == 2 and sib is not None and (sib.startswith("0") or len(sib) == 2)


def _name(orig: str, full: str, dotted: bool = False) -> str:
    """`full` as a full name or a 3-letter abbreviation, like `orig`, in `orig`'s case."""
    o = orig.rstrip(".")
    if o.casefold() in _FULL_NAMES and not (dotted and len(o) == 3):
        return match_case(o, full)
    return match_case(o, full[:3])


def _substitute(m: re.Match, new: dict[str, Any]) -> str:
    """The matched text with each date group re-rendered from the new values."""
    edits: list[tuple[int, int, str]] = []
    for gname in ("y4", "y2", "m", "mon", "d", "ord", "wd", "season"):
        if gname not in m.re.groupindex or m.group(gname) is None:
            continue
        orig = m.group(gname)
        if gname == "y4" and "y" in new:
            rep = f"{new['y']:04d}"
        elif gname == "y2" and "y" in new:
            rep = f"{new['y'] % 100:02d}"
        elif gname == "m" and "m" in new:
            rep = f"{new['m']:02d}" if _padded(m, "m") else str(new["m"])
        elif gname == "d" and "d" in new:
            rep = f"{new['d']:02d}" if _padded(m, "d") else str(new["d"])
        elif gname == "ord" and "d" in new:
            rep = match_case(orig, ordinal_suffix(new["d"]))
        elif gname == "mon" and "m" in new:
            rep = _name(orig, MONTHS[new["m"] - 1], m.string[m.end(gname):m.end(gname) + 1] == ".")
        elif gname == "season" and "season" in new:
            rep = match_case(orig, new["season"])
        elif gname == "wd" and "wd" in new:
            rep = _name(orig, WEEKDAYS[new["wd"]], m.string[m.end(gname):m.end(gname) + 1] == ".")
        else:
            continue
        edits.append((m.start(gname) - m.start(), m.end(gname) - m.start(), rep))
    text = m.group(0)
    for s, e, rep in sorted(edits, reverse=True):
        text = text[:s] + rep + text[e:]
    return text


def _ok_shift(s: int, avoid7: bool) -> bool:
    return s != 0 and not (avoid7 and s % 7 == 0)


@lru_cache(maxsize=SHIFT_CACHE)
def _shift(key: bytes, scope: str, lo: int, hi: int, avoid7: bool) -> int:
    rng = keyed_rng(key, scope, "DATE-shift")
    while True:
        s = rng.randint(lo, hi)
        if _ok_shift(s, avoid7):
            return s
