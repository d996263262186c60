"""Note types (conf/synth/templates/*.toml): layouts of parts, each part a list of alternative templates.

A layout is a list of part names; "name?" is optional (p = 0.5), "name*" repeats 1-3 times and
"name+" repeats 1-2 times, or 40-120 times in a very long note (probability `long` of the type).
A template whose first line is "@w 0.2" is drawn with that weight among its part's templates
(default 1), which keeps rare identifiers rare.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import lru_cache

from deid_core.config import conf_dir, load_toml
from deid_core.training.synth.template import Part, TemplateError, parse


@dataclass(frozen=True)
class NoteType:
    """One note type: weight among types, case styles, glue probability, layouts and parts."""

    name: str
    weight: float
    cases: tuple[tuple[str, ...], tuple[float, ...]]
    glue: float
    sep: str
    layouts: tuple[tuple[str, ...], ...]
    parts: dict[str, tuple[tuple[Part, ...], ...]]
    long_p: float = 0.0
    part_weights: dict[str, tuple[float, ...]] | None = None

    def compose(self, rng: random.Random) -> list[tuple[Part, ...]]:
        """The parsed templates of one note, chosen from a random layout."""
        layout = rng.choice(self.layouts)
        long_note = rng.random() < self.long_p
        out: list[tuple[Part, ...]] = []
        for item in layout:
            name, mod = (item[:-1], item[-1]) if item[-1] in "?*+" else (item, "")
            if mod == "?" and rng.random() < 0.5:
                continue
            n = 1
            if mod == "*":
                n = rng.randint(1, 3)
            elif mod == "+":
                n = rng.randint(40, 120) if long_note else rng.randint(1, 2)
            alts = self.parts[name]
            cum = self.part_weights[name] if self.part_weights else None
            if cum is None:
                out.extend(rng.choice(alts) for _ in range(n))
            else:
                out.extend(rng.choices(alts, cum_weights=cum, k=n))
        return out

    def case(self, rng: random.Random) -> str:
        """A case style for a note of this type."""
        return rng.choices(self.cases[0], cum_weights=self.cases[1])[0]


def _weighted(template: str) -> tuple[float, str]:
    """(weight, template text) from an optional first line "@w <weight>"."""
    t = template.strip("\n")
    if t.startswith("@w "):
        head, _, rest = t.partition("\n")
        return float(head[3:]), rest
    return 1.0, t


def _cumulative(weights: list[float]) -> tuple[float, ...] | None:
    """Cumulative weights, or None when all are equal (uniform choice is faster)."""
    if len(set(weights)) <= 1:
        return None
    out, total = [], 0.0
    for w in weights:
        total += w
        out.append(total)
    return tuple(out)


def _load(path) -> NoteType:
    """Parse one note-type file; errors name the file."""
    data = load_toml(path)
    try:
        weighted = {k: [_weighted(t) for t in v] for k, v in data["parts"].items()}
        parts = {k: tuple(parse(t) for _, t in v) for k, v in weighted.items()}
        part_weights = {k: _cumulative([w for w, _ in v]) for k, v in weighted.items()}
        layouts = tuple(tuple(x) for x in data["layouts"])
    except (KeyError, TemplateError) as exc:
        raise TemplateError(f"{path}: {exc}") from None
    for lay in layouts:
        for item in lay:
            if item.rstrip("?*+") not in parts:
                raise TemplateError(f"{path}: layout names unknown part {item!r}")
    names = tuple(data.get("case", {"as_is": 1.0}))
    cum, total = [], 0.0
    for n in names:
        total += float(data["case"][n]) if "case" in data else 1.0
        cum.append(total)
    return NoteType(data.get("name", path.stem), float(data.get("weight", 1.0)), (names, tuple(cum)),
                    float(data.get("glue", 0.01)), data.get("sep", "\n\n"), layouts, parts,
                    float(data.get("long", 0.0)), part_weights)


@lru_cache(maxsize=1)
def note_types() -> tuple[NoteType, ...]:
    """Every note type of conf/synth/templates/, in file-name order."""
    folder = conf_dir() / "synth" / "templates"
    types = tuple(_load(p) for p in sorted(folder.glob("*.toml")))
    if not types:
        raise TemplateError(f"{folder}: no note-type templates (*.toml)")
    return types


@lru_cache(maxsize=1)
def type_weights() -> tuple[float, ...]:
    """Cumulative weights of the note types."""
    cum, total = [], 0.0
    for t in note_types():
        total += t.weight
        cum.append(total)
    return tuple(cum)


def pick_type(rng: random.Random) -> NoteType:
    """A note type drawn by weight."""
    return rng.choices(note_types(), cum_weights=type_weights())[0]
