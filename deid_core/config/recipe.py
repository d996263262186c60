"""Schema of a training recipe (conf/recipes/*.toml, `deid train --recipe NAME`): what is pooled."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from deid_core.config.convert import SchemaError, build
from deid_core.config.effective import Layer, message
from deid_core.config.files import ConfigError, conf_dir, load_toml
from deid_core.config.tables import Count, Positive

# The kinds of deid_core/training/reinsert.py (a test keeps them equal).
Kind = Literal["random", "ambiguous", "oov", "lower", "upper"]


@dataclass(frozen=True)
class RecipeReinsert:
    """[reinsert]: re-inserted copies of every target-corpus note."""

    copies: Count
    kinds: tuple[Kind, ...]
    key: str
    config: str  # an override file (relative to conf/) with the surrogate settings that draw the strings


@dataclass(frozen=True)
class RecipeSynthetic:
    """[synthetic]: the generated notes pooled with the target corpus."""

    notes: Count
    seed: int
    patients: Positive
    breadth: tuple[str, ...]  # overlays conf/synth/breadth/NAME.toml: an optional part in their note types' layouts


@dataclass(frozen=True)
class Recipe:
    """A training recipe: re-inserted copies of the target notes and generated synthetic notes."""

    reinsert: RecipeReinsert
    synthetic: RecipeSynthetic


def recipe_file(name: str) -> Path:
    """A recipe by name (conf/recipes/NAME.toml) or a path to a file of that shape."""
    path = Path(name)
    if path.suffix != ".toml":
        path = conf_dir() / "recipes" / f"{name}.toml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in (conf_dir() / "recipes").glob("*.toml")))
        raise ConfigError(f"--recipe {name}: no such recipe (conf/recipes: {known}; or a .toml file)")
    return path


def recipe_settings(name: str) -> Recipe:
    """A recipe, checked (ConfigError naming the file, [table] and key)."""
    path = recipe_file(name)
    layer = Layer(str(path), load_toml(path))
    try:
        recipe = build(Recipe, layer.tables)
    except SchemaError as exc:
        raise ConfigError(message(exc, (layer,))) from None
    if recipe.reinsert.copies and not recipe.reinsert.kinds:
        raise ConfigError(f"{path}: [reinsert] kinds is empty but copies = {recipe.reinsert.copies}")
    for name in recipe.synthetic.breadth:
        if not breadth_file(name).is_file():
            known = ", ".join(sorted(p.stem for p in (conf_dir() / "synth" / "breadth").glob("*.toml")))
            raise ConfigError(f"{path}: [synthetic] breadth names {name!r}: no such overlay "
                              f"(conf/synth/breadth: {known or 'none'})")
    return recipe


def breadth_file(name: str) -> Path:
    """A breadth overlay by name, conf/synth/breadth/NAME.toml, or a path to a .toml file of that shape
    (deid_core/training/synth/notetypes.py reads it)."""
    return Path(name) if name.endswith(".toml") else conf_dir() / "synth" / "breadth" / f"{name}.toml"
