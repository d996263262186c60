"""Template families (conf/synth/templates/*.toml): one file is one family of one note type.

A file gives its note `type` (default: `name`, then the file stem up to its first dot), its
`family` id ("type.variant", default: the file stem, or "stem.base" for a stem without a dot;
unique), its weight in the corpus, case styles, layouts and parts. A layout is a list
of part names; "name?" is optional (p = 0.5), "name*" repeats 1-3 times and "name+" repeats 1-2
times, or 40-120 times in a very long note (probability `long` of the family). A part is a list
of alternative templates; a template whose first line is "@w 0.2" is drawn with that weight
(default 1), which keeps rare identifiers rare. Templates may name snippets ("{~age_pt}") from
conf/synth/snippets.toml or from the file's own [snippets] table; a snippet is itself a list of
alternative templates and is expanded when a note is composed.

A breadth overlay (conf/synth/breadth/NAME.toml, named by a training recipe's [synthetic] breadth)
appends one optional part, `part?`, to every layout of the note types it lists; the part is its
snippet of the same name (defined in the overlay's [snippets], with the shared snippets in scope).
`compose` leaves the overlay parts out and `compose_breadth` draws one from its own RNG (generate.breadth_rng),
so a note with overlays is the note without them plus the overlays' appended parts, and without an overlay
the families are exactly the files' (the same notes for a seed).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from deid_core.config import conf_dir, load_toml
from deid_core.config.recipe import breadth_file
from deid_core.training.synth.fillers import FILLERS
from deid_core.training.synth.template import Part, Ref, Slot, TemplateError, parse

MAX_DEPTH = 6
Alternatives = tuple[tuple[tuple[Part, ...], ...], tuple[float, ...] | None]


@dataclass(frozen=True)
class NoteType:
    """One template family: its note type (`name`), family id, weight, case styles, layouts, parts."""

    name: str
    weight: float
    cases: tuple[tuple[str, ...], tuple[float, ...]]
    glue: float
    sep: str
    layouts: tuple[tuple[str, ...], ...]
    parts: dict[str, tuple[tuple[Part, ...], ...]]
    long_p: float = 0.0
    part_weights: dict[str, tuple[float, ...] | None] | None = None
    family: str = ""
    description: str = ""
    snippets: dict[str, Alternatives] | None = None
    breadth: tuple[str, ...] = ()

    def compose(self, rng: random.Random) -> list[tuple[Part, ...]]:
        """The parsed templates of one note, chosen from a random layout, snippets expanded (overlay parts left out)."""
        layout = rng.choice(self.layouts)
        long_note = rng.random() < self.long_p
        out: list[tuple[Part, ...]] = []
        for item in layout:
            name, mod = (item[:-1], item[-1]) if item[-1] in "?*+" else (item, "")
            if name in self.breadth:
                continue
            if mod == "?" and rng.random() < 0.5:
                continue
            n = 1
            if mod == "*":
                n = rng.randint(1, 3)
            elif mod == "+":
                n = rng.randint(40, 120) if long_note else rng.randint(1, 2)
            alts = self.parts[name]
            cum = self.part_weights[name] if self.part_weights else None
            chosen = [rng.choice(alts) for _ in range(n)] if cum is None else rng.choices(alts, cum_weights=cum, k=n)
            out.extend(self.expand(t, rng) for t in chosen)
        return out

    def compose_breadth(self, key: str, rng: random.Random) -> list[tuple[Part, ...]]:
        """Overlay part `key` ("breadth.NAME", optional: p = 0.5) of one note, every choice from `rng` alone."""
        if rng.random() < 0.5:
            return []
        return [self.expand(rng.choice(self.parts[key]), rng)]

    def expand(self, parts: tuple[Part, ...], rng: random.Random, depth: int = 0) -> tuple[Part, ...]:
        """The template with every snippet reference replaced by one of its alternatives."""
        if not any(p.__class__ is Ref for p in parts):
            return parts
        out: list[Part] = []
        for p in parts:
            if p.__class__ is Ref:
                alts, cum = self.snippets[p.name]
                sub = rng.choice(alts) if cum is None else rng.choices(alts, cum_weights=cum)[0]
                if p.arg:
                    sub = bind(sub, p.arg)
                if depth < MAX_DEPTH:
                    sub = self.expand(sub, rng, depth + 1)
                out.extend(sub)
            else:
                out.append(p)
        return _merge_literals(out)

    def case(self, rng: random.Random) -> str:
        """A case style for a note of this family."""
        return rng.choices(self.cases[0], cum_weights=self.cases[1])[0]

    def templates(self) -> int:
        """How many alternative templates the family's parts hold (snippets not counted)."""
        return sum(len(v) for v in self.parts.values())


@lru_cache(maxsize=8192)
def bind(parts: tuple[Part, ...], arg: str) -> tuple[Part, ...]:
    """A snippet alternative with every "$" in its slots' forms and refs (and nested refs' args) set to `arg`."""
    out: list[Part] = []
    for p in parts:
        if p.__class__ is Slot and ("$" in p.form or "$" in p.ref):
            p = replace(p, form=p.form.replace("$", arg), ref=p.ref.replace("$", arg))
        elif p.__class__ is Ref and "$" in p.arg:
            p = Ref(p.name, p.arg.replace("$", arg))
        out.append(p)
    return tuple(out)


def _merge_literals(parts: list[Part]) -> tuple[Part, ...]:
    """Adjacent literal strings joined into one (the renderer's glue logic sees whole literals)."""
    out: list[Part] = []
    for p in parts:
        if p.__class__ is str and out and out[-1].__class__ is str:
            out[-1] = out[-1] + p
        elif p != "":
            out.append(p)
    return tuple(out)


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


def parse_alternatives(table: dict[str, list[str]], where: str) -> dict[str, Alternatives]:
    """{name: (parsed templates, cumulative weights)} of a table of template lists; errors name `where`."""
    out: dict[str, Alternatives] = {}
    for name, templates in table.items():
        if not isinstance(templates, list) or not templates:
            raise TemplateError(f"{where}: {name!r} must be a non-empty list of templates")
        weighted = [_weighted(t) for t in templates]
        out[name] = (tuple(parse(t) for _, t in weighted), _cumulative([w for w, _ in weighted]))
    return out


@lru_cache(maxsize=1)
def global_snippets() -> dict[str, Alternatives]:
    """The shared snippets of conf/synth/snippets.toml."""
    path = conf_dir() / "synth" / "snippets.toml"
    if not path.is_file():
        return {}
    try:
        return parse_alternatives(load_toml(path).get("snippets", {}), str(path))
    except TemplateError as exc:
        raise TemplateError(f"{path}: {exc}") from None


def _refs(parts: tuple[Part, ...]) -> list[Ref]:
    """The snippet references of a template."""
    return [p for p in parts if p.__class__ is Ref]


def _takes_arg(alts: tuple[tuple[Part, ...], ...]) -> bool:
    """Whether a snippet's templates use "$" (so every reference must pass an argument)."""
    return any((p.__class__ is Slot and ("$" in p.form or "$" in p.ref)) or (p.__class__ is Ref and "$" in p.arg)
               for t in alts for p in t)


def _check_snippets(snippets: dict[str, Alternatives], roots: list[tuple[Part, ...]], where: str) -> None:
    """Every referenced snippet exists, gets an argument when it uses "$", and no snippet refers to itself."""
    def check_ref(ref: Ref, owner: str) -> None:
        if ref.name not in snippets:
            raise TemplateError(f"{where}: {owner} names unknown snippet {{~{ref.name}}}")
        if not ref.arg and _takes_arg(snippets[ref.name][0]):
            raise TemplateError(f"{where}: {owner} must pass an argument to {{~{ref.name}@...}}")

    def visit(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            raise TemplateError(f"{where}: snippet cycle {' -> '.join(stack + (name,))}")
        for alt in snippets[name][0]:
            for sub in _refs(alt):
                check_ref(sub, f"snippet {name!r}")
                visit(sub.name, stack + (name,))

    for t in roots:
        for ref in _refs(t):
            check_ref(ref, "a template")
            visit(ref.name, ())


def _check_fillers(templates: list[tuple[Part, ...]], path: Path) -> None:
    """Every lower-case slot names a known filler."""
    for t in templates:
        for p in t:
            if p.__class__ is Slot and not p.phi and p.name not in FILLERS:
                raise TemplateError(f"{path}: unknown filler {{{p.name}}}")


def load_family(path: Path) -> NoteType:
    """Parse one template file; every error names the file."""
    data = load_toml(path)
    shared = global_snippets()
    try:
        weighted = {k: [_weighted(t) for t in v] for k, v in data["parts"].items()}
        parts = {k: tuple(parse(t) for _, t in v) for k, v in weighted.items()}
        part_weights = {k: _cumulative([w for w, _ in v]) for k, v in weighted.items()}
        layouts = tuple(tuple(x) for x in data["layouts"])
        snippets = dict(shared)
        snippets.update(parse_alternatives(data.get("snippets", {}), str(path)))
    except KeyError as exc:
        raise TemplateError(f"{path}: missing {exc}") from None
    except TemplateError as exc:
        raise TemplateError(f"{path}: {exc}") from None
    for lay in layouts:
        for item in lay:
            if item.rstrip("?*+") not in parts:
                raise TemplateError(f"{path}: layout names unknown part {item!r}")
    _check_snippets(snippets, [t for alts in parts.values() for t in alts], str(path))
    _check_fillers([t for alts in parts.values() for t in alts] + [t for alts, _ in snippets.values() for t in alts], path)
    names = tuple(data.get("case", {"as_is": 1.0}))
    cum, total = [], 0.0
    for n in names:
        total += float(data["case"][n]) if "case" in data else 1.0
        cum.append(total)
    ntype = data.get("type", data.get("name", path.stem.split(".")[0]))
    family = data.get("family", path.stem if "." in path.stem else f"{path.stem}.base")
    if not family.startswith(ntype + "."):
        raise TemplateError(f"{path}: family {family!r} must be named '{ntype}.<variant>'")
    return NoteType(ntype, float(data.get("weight", 1.0)), (names, tuple(cum)),
                    float(data.get("glue", 0.01)), data.get("sep", "\n\n"), layouts, parts,
                    float(data.get("long", 0.0)), part_weights, family,
                    data.get("description", ""), snippets)


@dataclass(frozen=True)
class Breadth:
    """A breadth overlay: the optional part it appends (a snippet name), the note types it reaches, its snippets."""

    name: str
    part: str
    types: tuple[str, ...]
    snippets: dict[str, Alternatives]


@lru_cache(maxsize=16)
def breadth_overlay(name: str) -> Breadth:
    """conf/synth/breadth/NAME.toml, checked: its part is one of its snippets, every reference resolves."""
    path = breadth_file(name)
    data = load_toml(path)
    try:
        part, types = str(data["part"]), tuple(data["types"])
        snippets = parse_alternatives(data["snippets"], str(path))
    except KeyError as exc:
        raise TemplateError(f"{path}: missing {exc}") from None
    if part not in snippets:
        raise TemplateError(f"{path}: part {part!r} must be one of its [snippets]")
    if not types:
        raise TemplateError(f"{path}: types is empty")
    shadowed = sorted(set(snippets) & set(global_snippets()))
    if shadowed:
        raise TemplateError(f"{path}: snippets {shadowed} are already conf/synth/snippets.toml's: an overlay only "
                            "adds its part, it never changes what the templates write")
    scope = {**global_snippets(), **snippets}
    _check_snippets(scope, [t for alts, _ in snippets.values() for t in alts], str(path))
    _check_fillers([t for alts, _ in snippets.values() for t in alts], path)
    return Breadth(name, part, types, snippets)


def with_breadth(family: NoteType, overlay: Breadth) -> NoteType:
    """The family with the overlay's optional part at the end of every layout (unchanged if its type is not listed)."""
    if family.name not in overlay.types:
        return family
    key = f"breadth.{Path(overlay.name).stem}"
    shadowed = sorted(set(overlay.snippets) & set(family.snippets or {}))
    if shadowed:
        raise TemplateError(f"{breadth_file(overlay.name)}: snippets {shadowed} are already note type {family.family!r}'s: "
                            "an overlay only adds its part, it never changes what the templates write")
    return replace(family, layouts=tuple((*lay, key + "?") for lay in family.layouts),
                   parts={**family.parts, key: (parse("{~" + overlay.part + "}"),)},
                   part_weights={**(family.part_weights or {}), key: None},
                   snippets={**(family.snippets or {}), **overlay.snippets},
                   breadth=(*family.breadth, key))


@lru_cache(maxsize=8)
def note_types(breadth: tuple[str, ...] = ()) -> tuple[NoteType, ...]:
    """Every template family of conf/synth/templates/, ordered by family id, with the named breadth overlays."""
    folder = conf_dir() / "synth" / "templates"
    fams = tuple(sorted((load_family(p) for p in folder.glob("*.toml")), key=lambda f: f.family))
    if not fams:
        raise TemplateError(f"{folder}: no note-type templates (*.toml)")
    seen: set[str] = set()
    for f in fams:
        if f.family in seen:
            raise TemplateError(f"{folder}: family {f.family!r} defined twice")
        seen.add(f.family)
    stems = [Path(n).stem for n in breadth]
    if len(set(stems)) < len(stems):
        raise TemplateError(f"breadth overlays {list(breadth)}: two share a name (each becomes the part 'breadth.NAME')")
    for name in breadth:
        overlay = breadth_overlay(name)
        unknown = sorted(set(overlay.types) - {f.name for f in fams})
        if unknown:
            raise TemplateError(f"{breadth_file(name)}: unknown note types {unknown}")
        fams = tuple(with_breadth(f, overlay) for f in fams)
    return fams
