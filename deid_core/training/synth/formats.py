"""Surface formats of contact numbers and identifiers: phones, record numbers, SSNs, accession and other ids."""

from __future__ import annotations

import random

from deid_core.training.synth.identity import digits, letters


def fmt_phone(num: str, rng: random.Random, *, ext_p: float = 0.1) -> str:
    """Ten digits in one of several phone formats, sometimes with an extension."""
    a, b, c = num[:3], num[3:6], num[6:]
    s = rng.choice((f"{a}-{b}-{c}", f"{a}-{b}-{c}", f"({a}) {b}-{c}", f"({a}) {b}-{c}", f"({a}){b}-{c}",
                    f"{a}.{b}.{c}", f"{a} {b} {c}", f"{a}{b}{c}", f"{b}-{c}", f"1-{a}-{b}-{c}",
                    f"+1 {a} {b} {c}", f"{a}/{b}-{c}", f"1 ({a}) {b}-{c}", f"{a}-{b}{c}"))
    if rng.random() < ext_p:
        s += rng.choice((" x", " ext. ", " ext ", " X", "x", " ext.")) + str(rng.randint(10, 99999))
    return s


def fmt_extension(num: str, rng: random.Random) -> str:
    """An internal extension written on its own ("4-5521", "45521", "x5521")."""
    return rng.choice((f"{num[5]}-{num[6:]}", f"{num[5]}{num[6:]}", num[6:], f"{num[3:6]}-{num[6:]}"))


def fmt_mrn(mrn: str, form: str, rng: random.Random) -> str:
    """A medical record number as written: plain, dashed, spaced in groups, zero-padded ('any' picks)."""
    if form == "any":
        form = rng.choice(("", "", "", "dashed", "spaced", "zeros"))
    d = "".join(c for c in mrn if c.isdigit())
    if form == "dashed" and mrn.isdigit() and len(mrn) >= 7:
        return f"{mrn[:3]}-{mrn[3:5]}-{mrn[5:]}"
    if form == "spaced" and len(d) >= 6:
        return rng.choice((f"{d[:3]} {d[3:5]} {d[5:]}", f"{d[:2]} {d[2:4]} {d[4:]}", f"{d[:4]} {d[4:]}"))
    if form == "zeros" and mrn.isdigit():
        return mrn.zfill(10)
    return mrn


def fmt_ssn(ssn: str, form: str, rng: random.Random) -> str:
    """A social security number: dashed, plain, spaced, or its last four digits."""
    if form == "plain":
        return ssn.replace("-", "")
    if form == "spaced":
        return ssn.replace("-", " ")
    if form == "last4":
        return ssn[-4:]
    return ssn


def fmt_idnum(form: str, year: int, rng: random.Random) -> str:
    """An accession, order, job, case, encounter, claim, ticket or other number, shaped by its form."""
    r = rng
    y = year % 100
    match form:
        case "acc" | "spec":
            return r.choice((f"{y:02d}-{digits(r, 6)}", f"{r.choice('ABCDEFGHKLMS')}{y:02d}-{digits(r, 5)}",
                             f"{letters(r, 2)}{digits(r, 7)}", f"{letters(r, 1)}{y:02d}{digits(r, 6)}"))
        case "case":
            return r.choice((f"{r.choice(['S', 'SP', 'C', 'NG', 'FNA'])}{y:02d}-{digits(r, 4 + r.randrange(2))}",
                             f"{r.choice(['S', 'CY'])}-{year}-{digits(r, 5)}"))
        case "job":
            return r.choice((digits(r, 6), f"{digits(r, 5)}-{digits(r, 3)}", digits(r, 8)))
        case "enc" | "csn" | "fin":
            return digits(r, r.choice((9, 10, 11)))
        case "npi":
            return "1" + digits(r, 9)
        case "ticket":
            return r.choice((f"INC{digits(r, 7)}", f"REQ{digits(r, 6)}", f"CHG{digits(r, 6)}"))
        case "claim" | "auth" | "ref":
            return r.choice((f"{letters(r, 2)}{digits(r, 8)}", f"{digits(r, 4)}-{digits(r, 6)}", digits(r, 11)))
        case "study":
            return r.choice((f"{letters(r, 3)}-{digits(r, 4)}", f"{year}P{digits(r, 6)}", f"{year}-{digits(r, 4)}"))
        case "order":
            return r.choice((digits(r, 8), f"{letters(r, 1)}{digits(r, 8)}", f"ORD-{digits(r, 7)}"))
        case "lot":
            return f"{letters(r, 2)}{digits(r, 4)}"
    return r.choice((f"{y:02d}-{digits(r, 6)}", f"{r.choice('ABCDEFGHKLMS')}{y:02d}-{digits(r, 5)}",
                     digits(r, 8), f"{letters(r, 2)}{digits(r, 7)}"))
