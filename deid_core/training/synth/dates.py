"""Date surface formats (3/14/2019, 14-MAR-19, the 9th, 03.14.2019, Tues, ...) and ages."""

from __future__ import annotations

import datetime as dt
import random

from deid_core.text.calendar_words import calendar_words
from deid_core.training.synth.lexicon import words

_CAL = calendar_words()  # conf/calendar.toml
MONTHS = _CAL.months
WEEKDAYS = _CAL.weekdays
# each weekday's abbreviations ("Tue", "Tues"), in list order
WEEKDAY_ABBR = tuple(tuple(a for a in _CAL.weekday_abbreviations if day.lower().startswith(a.lower()))
                     for day in WEEKDAYS)
# Formats drawn by "any" (repeats weight the common ones): US numeric first, then written months.
ANY = ("mdy", "mdy", "mdy", "mdy", "mdy0", "mdy0", "mdy2", "mdy2", "dash2", "dash0", "long", "long",
       "dmy", "md", "md", "md", "iso", "mon_d", "dmon", "dmon2", "long_ord", "mon_d_y", "dots",
       "dots1", "dmy_long", "ymd_slash", "mon_dash", "long_nocomma", "month_d", "mon_ord", "my")
# Formats drawn by "full": a complete date with year, any style.
FULL = ("mdy", "mdy0", "mdy2", "dash2", "dash0", "dash4", "long", "dmy", "dmon", "dmon2", "iso",
        "long_ord", "mon_d_y", "dots", "dots1", "dots2", "dmy_long", "dmy_ord", "ymd_slash",
        "compact", "mon_dash", "long_nocomma")
# Formats drawn by "short": day and month without a year.
SHORT = ("md", "md", "md0", "mon_d", "month_d", "mon_ord", "ord_of", "md_dash", "d_mon")


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 22nd ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def fmt_date(d: dt.date, fmt: str, rng: random.Random) -> str:
    """A date in one of many surface formats ('any', 'full' and 'short' pick one)."""
    if fmt in ("", "any"):
        fmt = rng.choice(ANY)
    elif fmt == "full":
        fmt = rng.choice(FULL)
    elif fmt == "short":
        fmt = rng.choice(SHORT)
    m, day, y = d.month, d.day, d.year
    mon = MONTHS[m - 1]
    match fmt:
        case "mdy":
            return f"{m}/{day}/{y}"
        case "mdy0":
            return f"{m:02d}/{day:02d}/{y}"
        case "mdy2":
            return f"{m}/{day}/{y % 100:02d}"
        case "dash2":
            return f"{m:02d}-{day:02d}-{y % 100:02d}"
        case "dash0":
            return f"{m:02d}-{day:02d}-{y}"
        case "dash4":
            return f"{m}-{day}-{y}"
        case "long":
            return f"{mon} {day}, {y}"
        case "long_nocomma":
            return f"{mon} {day} {y}"
        case "long_ord":
            return f"{mon} {ordinal(day)}, {y}"
        case "dmy":
            return f"{day} {mon[:3]} {y}"
        case "dmy_long":
            return f"{day} {mon} {y}"
        case "dmy_ord":
            return f"{ordinal(day)} {mon} {y}"
        case "dmon":
            return f"{day:02d}-{mon[:3]}-{y}"
        case "dmon2":
            return f"{day:02d}-{mon[:3].upper()}-{y % 100:02d}"
        case "mon_dash":
            return f"{mon[:3]}-{day:02d}-{y}"
        case "mon_d_y":
            return rng.choice((f"{mon[:3]} {day} {y}", f"{mon[:3]}. {day}, {y}", f"{mon[:3]} {day}, {y}"))
        case "dots":
            return f"{m:02d}.{day:02d}.{y}"
        case "dots1":
            return f"{m}.{day}.{y}"
        case "dots2":
            return f"{m}.{day}.{y % 100:02d}"
        case "ymd_slash":
            return f"{y}/{m:02d}/{day:02d}"
        case "compact":
            return f"{y}{m:02d}{day:02d}"
        case "md":
            return f"{m}/{day}"
        case "md0":
            return f"{m:02d}/{day:02d}"
        case "md_dash":
            return f"{m}-{day}"
        case "mon_d":
            return f"{mon[:3]} {day}"
        case "d_mon":
            return f"{day} {mon[:3]}"
        case "month_d":
            return f"{mon} {ordinal(day)}"
        case "mon_ord":
            return f"{mon[:3]} {ordinal(day)}"
        case "ord":
            return ordinal(day)
        case "ord_of":
            return f"{ordinal(day)} of {mon}"
        case "monyear":
            return f"{mon} {y}"
        case "mon_y":
            return rng.choice((f"{mon[:3]} {y}", f"{mon[:3]}-{y}", f"{mon[:3]} '{y % 100:02d}"))
        case "my":
            return rng.choice((f"{m:02d}/{y}", f"{m}/{y}"))
        case "month":
            return mon
        case "mon":
            return mon[:3]
        case "year":
            return str(y)
        case "yr2":
            return f"'{y % 100:02d}"
        case "iso":
            return d.isoformat()
        case "weekday":
            return WEEKDAYS[d.weekday()]
        case "wd_abbr":
            return rng.choice(WEEKDAY_ABBR[d.weekday()])
        case "holiday":
            return rng.choice(words("lists.holidays"))
        case "season":
            return rng.choice(words("lists.seasons"))
    raise ValueError(f"unknown date format {fmt!r}")


def age_on(dob: dt.date, day: dt.date) -> int:
    """Age in whole years on `day`."""
    return day.year - dob.year - ((day.month, day.day) < (dob.month, dob.day))


def decade(age: int) -> str:
    """The decade an age falls in, as written in notes ("60s")."""
    return f"{max(age // 10, 1) * 10}s"
