"""Which template families a corpus draws from: selection by note type or family, weighted picking, listing.

A selection names note types ("radiology": all its families) or families ("radiology.base");
`exclude` removes names from what `include` (default: everything) gives. Leave-type-out and
leave-family-out corpora are selections: generate the training corpus with `exclude` and the
test corpus with `include` of the same names.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from deid_core.training.synth.notetypes import NoteType, note_types


class SelectionError(ValueError):
    """A selection names an unknown note type or family, or selects nothing."""


def family_names() -> tuple[str, ...]:
    """Every family id, in order (sorted by id)."""
    return tuple(f.family for f in note_types())


def type_names() -> tuple[str, ...]:
    """Every note type, in family order."""
    return tuple(dict.fromkeys(f.name for f in note_types()))


def _families_of(name: str) -> list[str]:
    """The family ids a type or family name stands for."""
    fams = [f.family for f in note_types() if f.name == name or f.family == name]
    if not fams:
        raise SelectionError(f"unknown note type or family {name!r}; `deid synth --list-types` lists them")
    return fams


@lru_cache(maxsize=64)
def resolve(include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The selected family ids (in order) for include/exclude lists of type or family names."""
    chosen = {x for n in include for x in _families_of(n)} if include else set(family_names())
    chosen -= {x for n in exclude for x in _families_of(n)}
    if not chosen:
        raise SelectionError("the selection of note types/families is empty")
    return tuple(f for f in family_names() if f in chosen)


@lru_cache(maxsize=64)
def _pool(selected: tuple[str, ...], breadth: tuple[str, ...] = ()) -> tuple[tuple[NoteType, ...], tuple[float, ...]]:
    """The selected families (with the named breadth overlays) and their cumulative weights."""
    fams = tuple(f for f in note_types(breadth) if f.family in selected)
    cum, total = [], 0.0
    for f in fams:
        total += f.weight
        cum.append(total)
    return fams, tuple(cum)


def pick_type(rng: random.Random, selected: tuple[str, ...] | None = None, breadth: tuple[str, ...] = ()) -> NoteType:
    """A family drawn by weight among the selected ones (all when None), with the named breadth overlays."""
    fams, cum = _pool(selected if selected is not None else family_names(), tuple(breadth))
    return rng.choices(fams, cum_weights=cum)[0]


@dataclass(frozen=True)
class FamilyInfo:
    """One family for listings: type, family id, share of the corpus, layouts, templates, description."""

    note_type: str
    family: str
    share: float
    layouts: int
    templates: int
    description: str


def catalog(selected: Iterable[str] | None = None) -> list[FamilyInfo]:
    """Every (selected) family with its share of the notes among the selection."""
    sel = tuple(selected) if selected is not None else family_names()
    fams, cum = _pool(sel)
    total = cum[-1] if cum else 1.0
    return [FamilyInfo(f.name, f.family, f.weight / total, len(f.layouts), f.templates(), f.description)
            for f in fams]


def catalog_text(selected: Iterable[str] | None = None) -> str:
    """A plain-text table of note types and families (what `deid synth --list-types` prints)."""
    rows = catalog(selected)
    lines = [f"{'note type':<22} {'family':<36} {'share':>6} {'layouts':>7} {'templates':>9}  description"]
    for r in rows:
        lines.append(f"{r.note_type:<22} {r.family:<36} {100 * r.share:5.1f}% {r.layouts:>7} {r.templates:>9}  {r.description}")
    n_types = len({r.note_type for r in rows})
    lines.append(f"{n_types} note types, {len(rows)} families, {sum(r.layouts for r in rows)} layouts, "
                 f"{sum(r.templates for r in rows)} templates")
    return "\n".join(lines)
