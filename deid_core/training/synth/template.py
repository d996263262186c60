"""Templates with typed slots ("{PATIENT:last}", "{DATE:mdy@admit}", "{bp}") and their exact rendering.

A template is parsed once into literal strings, `Slot`s and `Ref`s to snippets ("{~age_pt}": a
named list of alternative sub-templates, expanded when a note is composed; "{~date@admit}" passes
"admit" to the snippet, where it replaces every "$" of a slot's form or ref). A slot's spec is
`form[@ref][!case]`, where case l/u/t writes that mention in lower, upper or title case. Rendering walks the parts left to
right, records each PHI slot's output offsets (trimmed like `spans.trim_span`), applies the
note's case style to every piece *before* measuring it, and sometimes glues a PHI slot to the
next word ("winterHx") by dropping the single space that follows it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import regex

from deid_core.spans import Span, trimmed_bounds
from deid_core.taxonomy import labels

SLOT_RE = regex.compile(r"\{(~?)([A-Za-z][A-Za-z0-9_\-]*)(?::([A-Za-z0-9_@!$]+))?\}|\{~([A-Za-z][A-Za-z0-9_]*)@([A-Za-z0-9_$]+)\}")
MODS = frozenset("lut")
SOURCE = "synth"


@dataclass(frozen=True, slots=True)
class Slot:
    """A typed slot: `name` is a PHI label (upper case) or a filler name; `form` picks the variant."""

    name: str
    form: str
    ref: str
    phi: bool
    mod: str = ""


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference to a snippet: replaced by one of the snippet's templates when a note is composed."""

    name: str
    arg: str = ""
    phi = False


Part = str | Slot | Ref


class TemplateError(ValueError):
    """A template names an unknown label or is malformed (message names the template)."""


@lru_cache(maxsize=1)
def _labels() -> frozenset[str]:
    """The taxonomy's 30 labels."""
    return frozenset(labels())


@lru_cache(maxsize=4096)
def parse(template: str) -> tuple[Part, ...]:
    """Literal strings and Slots of a template (cached by template text)."""
    parts: list[Part] = []
    pos = 0
    for m in SLOT_RE.finditer(template):
        if m.start() > pos:
            parts.append(template[pos:m.start()])
        if m.group(4):
            parts.append(Ref(m.group(4), m.group(5)))
            pos = m.end()
            continue
        tilde, name, spec = m.group(1), m.group(2), m.group(3) or ""
        if tilde:
            if spec:
                raise TemplateError(f"snippet reference {m.group()!r} takes no form, in template starting {template[:40]!r}")
            parts.append(Ref(name))
            pos = m.end()
            continue
        spec, _, mod = spec.partition("!")
        form, _, ref = spec.partition("@")
        phi = name.isupper() or "-" in name
        if phi and name not in _labels():
            raise TemplateError(f"unknown PHI label {name!r} in template starting {template[:40]!r}")
        if mod and (len(mod) != 1 or mod not in MODS):
            raise TemplateError(f"unknown case modifier {mod!r} (l, u or t) in template starting {template[:40]!r}")
        parts.append(Slot(name, form, ref, phi, mod))
        pos = m.end()
    if pos < len(template):
        parts.append(template[pos:])
    for p in parts:
        if isinstance(p, str) and ("{" in p or "}" in p):
            raise TemplateError(f"stray brace in template starting {template[:40]!r}")
    return tuple(parts)


CASES: dict[str, Callable[[str], str]] = {"as_is": lambda s: s, "upper": str.upper, "lower": str.lower}


def render(pieces: Sequence[Sequence[Part]], value: Callable[[Slot], str], rng: random.Random,
           *, case: str = "as_is", glue_p: float = 0.0, sep: str = "\n\n",
           surfaces: list[str] | None = None) -> tuple[str, list[Span]]:
    """The text of parsed templates joined by `sep`, and one exact Span per non-empty PHI slot.

    When `surfaces` is a list, each span's surface string (cut from the slot value, not from the
    text) is appended to it, so callers can check text[start:end] independently.
    """
    casefn = CASES[case]
    out: list[str] = []
    spans: list[Span] = []
    pos = 0
    glue = False
    rand = rng.random
    for i, parts in enumerate(pieces):
        if i:
            out.append(sep)
            pos += len(sep)
            glue = False
        last = len(parts) - 1
        for j, part in enumerate(parts):
            if part.__class__ is str:
                s = part
                if glue and len(s) > 1 and s[0] == " " and s[1].isalpha():
                    s = s[1:]
                glue = False
                if (glue_p > 0.0 and j < last and len(s) > 1 and s[-1] == " " and (s[-2].isalpha() or s[-2] == ".")
                        and parts[j + 1].phi and rand() < glue_p / 2):
                    s = s[:-1]
                if case != "as_is":
                    s = casefn(s)
            else:
                s = value(part)
                if case != "as_is":
                    s = casefn(s)
                glue = False
                if part.phi and s:
                    a, b = trimmed_bounds(s)
                    if a < b:
                        spans.append(Span(pos + a, pos + b, part.name, SOURCE))
                        if surfaces is not None:
                            surfaces.append(s[a:b])
                        glue = glue_p > 0.0 and rand() < glue_p
            out.append(s)
            pos += len(s)
    return "".join(out), spans
