"""Format-preserving surrogates for ids and phone numbers: same length, separators, char classes."""

from __future__ import annotations

import random
import re
import string

_UP = string.ascii_uppercase
_LO = string.ascii_lowercase


def format_preserving(rng: random.Random, text: str) -> str:
    """Each digit -> a digit, upper -> upper, lower -> lower letter; everything else kept."""
    out = []
    for c in text:
        if c.isdigit():
            out.append(str(rng.randrange(10)))
        elif "A" <= c <= "Z":
            out.append(rng.choice(_UP))
        elif "a" <= c <= "z":
            out.append(rng.choice(_LO))
        elif c.isalpha():
            out.append(rng.choice(_UP if c.isupper() else _LO))
        else:
            out.append(c)
    return "".join(out)


def digits_of(text: str) -> str:
    """The ASCII digits of a string, in order."""
    return "".join(c for c in text if c.isdigit())


def fill_digits(template: str, digits: str) -> str:
    """`template` with its digits replaced, in order, by `digits` (same count)."""
    it = iter(digits)
    return "".join(next(it) if c.isdigit() else c for c in template)


def _luhn_sum(digits: str, *, double_last: bool) -> int:
    """The Luhn sum of a digit string, doubling every second digit from the right (the last one when double_last)."""
    total = 0
    for i, c in enumerate(reversed(digits), start=0 if double_last else 1):
        n = ord(c) - 48 if "0" <= c <= "9" else (int(c) if c.isdecimal() else 0)  # isdigit() admits "²"
        if i % 2 == 0:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total


def luhn_valid(digits: str) -> bool:
    """True when a digit string passes the Luhn check."""
    return len(digits) >= 2 and _luhn_sum(digits, double_last=False) % 10 == 0


def luhn_complete(body: str) -> str:
    """body + the Luhn check digit (one pass over body, whatever its length)."""
    return body + str(-_luhn_sum(body, double_last=True) % 10)


def identifier(rng: random.Random, text: str, *, luhn: bool = False) -> str:
    """A format-preserving id; with `luhn`, its digits pass the Luhn check like the original's."""
    out = format_preserving(rng, text)
    ds = digits_of(out)
    if luhn and len(ds) >= 2:
        out = fill_digits(out, luhn_complete(ds[:-1]))
    return out


def wants_luhn(label: str, text: str) -> bool:
    """Account-like numbers (13-19 digits) and any long number whose original passes Luhn."""
    ds = digits_of(text)
    return (label == "ACCOUNT" and 13 <= len(ds) <= 19) or (len(ds) >= 12 and luhn_valid(ds))


def ssn(rng: random.Random, text: str) -> str:
    """A valid-looking SSN: area not 000/666/9xx, group not 00, serial not 0000."""
    if len(digits_of(text)) != 9:
        return format_preserving(rng, text)
    area = rng.randint(1, 898)
    area += area >= 666  # 001-899 without 666
    group = rng.randint(1, 99)
    serial = rng.randint(1, 9999)
    return fill_digits(text, f"{area:03d}{group:02d}{serial:04d}")


_EXT = re.compile(r"(?i)(\s*(?:x|ext\.?|extension|#)\s*)(\d+)\s*$")


def phone(rng: random.Random, text: str) -> str:
    """A phone number of the same layout (extension marker kept); NANP keeps valid area/exchange."""
    m = _EXT.search(text)
    if m and m.start() > 0:
        ext = "".join(str(rng.randrange(10)) for _ in m.group(2))
        return _phone_main(rng, text[: m.start()]) + m.group(1) + ext + text[m.end(2):]
    return _phone_main(rng, text)


def _phone_main(rng: random.Random, text: str) -> str:
    ds = digits_of(text)
    prefix = ""
    core = ds
    if len(ds) == 11 and ds[0] == "1":
        prefix, core = "1", ds[1:]
    if len(core) == 10:
        new = (str(rng.randint(2, 9)) + str(rng.randint(0, 8)) + str(rng.randint(0, 9))
               + str(rng.randint(2, 9)) + "".join(str(rng.randrange(10)) for _ in range(6)))
        return fill_digits(text, prefix + new)
    if len(core) == 7:
        new = str(rng.randint(2, 9)) + "".join(str(rng.randrange(10)) for _ in range(6))
        return fill_digits(text, new)
    return format_preserving(rng, text)
