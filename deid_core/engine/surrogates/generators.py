"""Surrogate generators by name: [surrogates.generators] in conf/surrogates.toml maps each label to
one. A generator is (replacer, note context, label, original) -> surrogate, or None when it
cannot handle the original (the caller masks it). Every choice is a keyed hash of (key, scope,
label, normalized original[, attempt]): no state is shared between notes or executors.

A generator registered `pure` depends on (key, scope, label, original, note year) only, never on the note's
other PHI: the Replacer keeps its surrogate per (scope, label, original, note year) and reuses it for the
patient's next mention (modes.ModeReplacer.memo). A `pure` drawn generator's first candidate is kept the
same way; it is still checked against each note's real PHI, and a collision re-draws exactly as before.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, partial
from typing import TYPE_CHECKING

from deid_core.engine.replace import mask_token
from deid_core.engine.surrogates import contact, numbers, safe_harbor
from deid_core.engine.surrogates.consistency import (
    collides,
    draw_distinct,
    forbidden_strings,
    keyed_rng,
    normalize,
)
from deid_core.notes import Note

if TYPE_CHECKING:
    from deid_core.engine.surrogates.modes import ModeReplacer


@dataclass
class NoteCtx:
    """What every span of one note shares: key, scope, note year, real PHI strings (lazily)."""

    key: bytes
    scope: str
    note: Note
    originals: Sequence[str]
    note_year: int | None
    name_originals: Sequence[str]

    @cached_property
    def forbidden(self) -> frozenset[str]:
        """Casefolded real PHI strings and name words of the note (only computed when needed)."""
        return forbidden_strings(self.note, self.originals, self.name_originals)

    @cached_property
    def as_global(self) -> NoteCtx:
        """This note's context in the "global" scope ([surrogates] global_labels): one per note, so its
        forbidden strings are computed once per note, not once per span of a global label."""
        return NoteCtx(self.key, "global", self.note, self.originals, self.note_year, self.name_originals)


Generator = Callable[["ModeReplacer", NoteCtx, str, str], "str | None"]
# One candidate of a drawn generator from its keyed random source (re-drawn on collision with real PHI).
Candidate = Callable[["ModeReplacer", NoteCtx, str, str, random.Random], str]
GENERATORS: dict[str, Generator] = {}
PURE: set[str] = set()  # generators whose whole surrogate is a function of (key, scope, label, original, note year)


def generator(name: str, *, pure: bool = False) -> Callable[[Generator], Generator]:
    """Register a generator under the name conf/surrogates.toml uses (`pure`: see the module docstring)."""

    def deco(fn: Generator) -> Generator:
        GENERATORS[name] = fn
        if pure:
            PURE.add(name)
        return fn

    return deco


def drawn(name: str, *, pure: bool = False) -> Callable[[Candidate], Candidate]:
    """Register a generator drawn with re-draws: a candidate that collides with the note's real PHI
    (or shares a non-generic word with it) is drawn again, up to [surrogates] max_redraws. `pure`: the
    candidate reads only (replacer settings, label, original, its keyed random source), so its first
    candidate may be kept per (scope, label, original)."""

    def deco(candidate: Candidate) -> Candidate:
        # picklable, like the Replacer holding it
        GENERATORS[name] = partial(draw, candidate=candidate, keep_first=pure)
        return candidate

    return deco


def draw(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, candidate: Candidate,
         keep_first: bool = False) -> str | None:
    """The first candidate (attempt 0, 1, ...) that does not collide with the note's real PHI."""
    norm = normalize(original) or original

    def make(attempt: int) -> str:
        return candidate(r, ctx, label, original, keyed_rng(ctx.key, ctx.scope, label, norm, str(attempt)))

    if keep_first:  # attempt 0 from the memo when this scope drew it before; checked against this note's PHI
        key = (DRAWN, ctx.key, ctx.scope, label, original)
        first = r.memo.get(key)
        if first is None:
            first = make(0)
            r.memo.put(key, first)
        if not collides(first, original, ctx.forbidden, r.generic):
            return first
    return draw_distinct(original, ctx.forbidden, make, r.max_redraws, r.generic)


DRAWN = "drawn-first"  # memo key tag of a drawn generator's first candidate (whole surrogates: WHOLE)
WHOLE = "whole"


@generator("name")
def person_name(r: ModeReplacer, ctx: NoteCtx, label: str, original: str) -> str | None:
    """Person names, token by token (titles kept, initials mapped per patient)."""
    return r.names.replace(ctx.key, ctx.scope, original, ctx.forbidden)


@generator("date", pure=True)
def date(r: ModeReplacer, ctx: NoteCtx, label: str, original: str) -> str | None:
    """Every date shape in the span moved by the patient's shift (Safe Harbor: the year only)."""
    shift = r.dates.shift_days(ctx.key, ctx.scope)
    return r.dates.replace(original, shift, ctx.note_year, r.safe_harbor, mask_token(label))


@generator("age", pure=True)
def age(r: ModeReplacer, ctx: NoteCtx, label: str, original: str) -> str | None:
    """Ages over the Safe Harbor threshold bucketed; younger ones kept or jittered ([surrogates.ages])."""
    return safe_harbor.age(original, r.settings.ages, keyed_rng(ctx.key, ctx.scope, label, normalize(original)))


@drawn("identifier", pure=True)
def identifier(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, rng: random.Random) -> str:
    """Digits for digits, letters for letters, separators kept (Luhn kept for card-like numbers)."""
    return numbers.identifier(rng, original, luhn=numbers.wants_luhn(label, original))


@generator("username")
def username(r: ModeReplacer, ctx: NoteCtx, label: str, original: str) -> str | None:
    """A name-like user id from the person's surrogate; else a format-preserving identifier."""
    user = r.names.username(ctx.key, ctx.scope, original, ctx.forbidden)
    if user is not None and user.casefold() != original.casefold():
        return user
    return draw(r, ctx, label, original, candidate=identifier)


@generator("zip")
def zip_code(r: ModeReplacer, ctx: NoteCtx, label: str, original: str) -> str | None:
    """ZIP codes truncated to 3 digits (Safe Harbor), or surrogate digits ([surrogates.zip] policy)."""
    if r.zip_policy == "truncate":
        return safe_harbor.zip_code(original, r.settings.zip)
    return draw(r, ctx, label, original, candidate=identifier)


@drawn("ssn", pure=True)
def ssn(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, rng: random.Random) -> str:
    """A valid-looking SSN in the original's format."""
    return numbers.ssn(rng, original)


@drawn("phone", pure=True)
def phone(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, rng: random.Random) -> str:
    """A NANP-valid number in the original's format (extensions and country code kept)."""
    return numbers.phone(rng, original)


@drawn("email")
def email(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, rng: random.Random) -> str:
    """An address whose user part follows the person's name surrogate."""
    def user(u: str) -> str:
        return r.names.replace(ctx.key, ctx.scope, u, ctx.forbidden)

    return contact.email(rng, r.names.pools, original, user)


@drawn("url", pure=True)
def url(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, rng: random.Random) -> str:
    """A URL with a surrogate host, scheme and path shape kept."""
    return contact.url(rng, r.names.pools, original)


@drawn("ip_address", pure=True)
def ip_address(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, rng: random.Random) -> str:
    """An IP address of the same family."""
    return contact.ip_address(rng, original)


@drawn("place", pure=True)
def place(r: ModeReplacer, ctx: NoteCtx, label: str, original: str, rng: random.Random) -> str:
    """A place, organisation or profession of the same kind ([surrogates.locations])."""
    return r.places.replace(label, rng, original)
