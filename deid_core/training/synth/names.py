"""Surface forms of a person's name: styles (full, initials, "Last, First", nickname...), case and misspelling."""

from __future__ import annotations

import random
import string
from typing import Protocol

from deid_core.training.synth.lexicon import lexicon

P_UPPER, P_LOWER, P_MISSPELL = 0.06, 0.05, 0.03
# Styles drawn by the "any" style: the common ways a note writes a person.
ANY_STYLES = ("full", "full", "last", "first", "fi_last", "last_first", "initials", "nick",
              "first_i", "last_fi", "fml", "nick_last")


class Named(Protocol):
    """What a name style needs: first, middle initial, last, and a short form of the first name."""

    first: str
    middle: str
    last: str
    nick: str


def initials(p: Named) -> str:
    """A person's initials, with the middle one sometimes."""
    return p.first[0] + p.middle + p.last[0]


def _initial_letters(p: Named, rng: random.Random) -> str:
    """Two or three initials ("JT", "JAT")."""
    return initials(p) if rng.random() < 0.4 else p.first[0] + p.last[0]


def name_form(p: Named, style: str, rng: random.Random) -> str:
    """A surface form of a person's name in a style (see the match arms; "any" draws one)."""
    if style == "any":
        style = rng.choice(ANY_STYLES)
    match style:
        case "last":
            return p.last
        case "first":
            return p.first
        case "full" | "":
            return f"{p.first} {p.last}"
        case "fml":
            return f"{p.first} {p.middle}. {p.last}"
        case "fi_last":
            return f"{p.first[0]}. {p.last}"
        case "fi_last2":
            return f"{p.first[0]}{p.last}" if rng.random() < 0.3 else f"{p.first[0]} {p.last}"
        case "last_first":
            return f"{p.last}, {p.first}"
        case "last_first_tight":
            return f"{p.last},{p.first}"
        case "last_first_mi":
            return f"{p.last}, {p.first} {p.middle}"
        case "lastcaps_first":
            return f"{p.last.upper()}, {p.first}"
        case "first_i":
            return f"{p.first} {p.last[0]}"
        case "first_mi":
            return f"{p.first} {p.middle}."
        case "last_fi":
            return f"{p.last}, {p.first[0]}" if rng.random() < 0.5 else f"{p.last} {p.first[0]}"
        case "initials":
            return _initial_letters(p, rng)
        case "dinit":
            return ".".join(_initial_letters(p, rng)) + "."
        case "linit":
            return _initial_letters(p, rng).lower()
        case "i":
            return p.last[0]
        case "fi":
            return p.first[0]
        case "nick":
            return p.nick
        case "nick_last":
            return f"{p.nick} {p.last}"
    raise ValueError(f"unknown name style {style!r}")


def nickname(first: str, rng: random.Random) -> str:
    """An everyday short form of a given name: a listed nickname, a clipped name, or the name."""
    nicks = lexicon()["nicknames"].get(first.lower())
    if nicks:
        return rng.choice(nicks)
    if len(first) >= 6 and " " not in first and "-" not in first and rng.random() < 0.5:
        cut = next((i + 1 for i in range(2, len(first) - 2) if first[i].lower() not in "aeiouy"), 0)
        if cut:
            return first[:cut]
    return first


def misspell(s: str, rng: random.Random) -> str:
    """One-letter misspelling: substitution, deletion, doubling or transposition inside the word."""
    idx = [i for i, c in enumerate(s) if c.isalpha()]
    if len(idx) < 4:
        return s
    i = rng.choice(idx[1:-1])
    op = rng.randrange(4)
    if op == 0:
        c = rng.choice(string.ascii_lowercase)
        return s[:i] + (c.upper() if s[i].isupper() else c) + s[i + 1:]
    if op == 1:
        return s[:i] + s[i + 1:]
    if op == 2:
        return s[:i] + s[i] + s[i:]
    if s[i + 1].isalpha():
        return s[:i] + s[i + 1] + s[i] + s[i + 2:]
    return s


def surface_variant(s: str, rng: random.Random) -> str:
    """A name as written by a hurried clinician: sometimes upper/lower case or misspelled."""
    r = rng.random()
    if r < P_UPPER:
        return s.upper()
    if r < P_UPPER + P_LOWER:
        return s.lower()
    if r < P_UPPER + P_LOWER + P_MISSPELL:
        return misspell(s, rng)
    return s


def with_case(s: str, mod: str) -> str:
    """A slot's case modifier applied: l lower, u upper, t title, '' as is."""
    if mod == "l":
        return s.lower()
    if mod == "u":
        return s.upper()
    if mod == "t":
        return s.title()
    return s
