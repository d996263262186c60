"""Schema of conf/evaluation/generalization.toml (the generalization benchmark's settings): every key
required, unknown keys and wrong types refused naming the file, table and key (deid_core/config)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from deid_core.config import ConfigError, conf_table, file_table, recipe_settings
from deid_core.config import Recipe as TrainingRecipe
from deid_core.config.convert import at_least, member_of
from deid_core.config.tables import Count, Label, Positive
from deid_core.training.evaluation.readable import Readable
from deid_core.training.reinsert import KINDS

CONF = "evaluation/generalization.toml"
Kind = Annotated[str, member_of(lambda: KINDS, "a re-insertion kind")]


@dataclass(frozen=True)
class Recipe:
    """[recipe]: the training recipe (conf/recipes/NAME.toml, as `deid train --recipe NAME`) and configuration files."""

    name: str
    crf_config: str
    pipeline_config: str  # an override file merged over conf/ ("" = none)


@dataclass(frozen=True)
class BlindPart:
    """[blind]: the patient split and the comparability profile (an override file)."""

    split: str
    profile: str


@dataclass(frozen=True)
class Conventions:
    """[physionet]: PhysioNet's annotation conventions (labels it leaves out, smallest age it tags)."""

    drop_labels: tuple[Label, ...]
    min_age: Count


@dataclass(frozen=True)
class Layouts:
    """[layouts]: the note-type split and the scored synthetic corpora."""

    split: str
    test_seed: int
    held_out_notes: Positive
    seen_notes: Positive


@dataclass(frozen=True)
class Reinsert:
    """[reinsert]: kinds of re-inserted strings, their key and surrogate settings, tune CV folds."""

    kinds: tuple[Kind, ...]
    key: str
    config: str  # an override file: the surrogate settings that draw the re-inserted strings
    folds: Annotated[int, at_least(2)]


@dataclass(frozen=True)
class Quick:
    """[quick]: tiny sizes for the tests, and an override file for a short CRF training."""

    tune_patients: Positive
    blind_patients: Positive
    synth_notes: Positive
    synth_patients: Positive
    held_out_notes: Positive
    seen_notes: Positive
    folds: Annotated[int, at_least(2)]
    config: str


@dataclass(frozen=True)
class Generalization:
    """Every table of conf/evaluation/generalization.toml."""

    recipe: Recipe
    blind: BlindPart
    physionet: Conventions
    layouts: Layouts
    reinsert: Reinsert
    readable: Readable
    quick: Quick

    def quick_sizes(self) -> Generalization:
        """These settings with the [quick] sizes in place of the full ones."""
        q, replace = self.quick, dataclasses.replace
        return replace(self, layouts=replace(self.layouts, held_out_notes=q.held_out_notes, seen_notes=q.seen_notes),
                       reinsert=replace(self.reinsert, folds=q.folds))


def model_recipe(cfg: Generalization) -> str:
    """The [model] recipe of the pipeline configuration the benchmark runs (conf/, with [recipe] pipeline_config)."""
    from deid_core.config import load_config

    config = load_config()
    return (config.with_file(cfg.recipe.pipeline_config) if cfg.recipe.pipeline_config else config).model.recipe


def settings(quick: bool = False, path: str | Path | None = None, recipe: str | None = None) -> Generalization:
    """conf/evaluation/generalization.toml (or a file of its shape), with the [quick] sizes when asked
    and another training recipe (conf/recipes/NAME.toml or a .toml file) when `recipe` names one."""
    cfg = file_table(Generalization, path) if path else conf_table(Generalization, CONF)
    if not recipe and not cfg.recipe.name:  # "": the recipe the configuration's bundle is trained with
        recipe = model_recipe(cfg)
    if recipe:
        cfg = dataclasses.replace(cfg, recipe=dataclasses.replace(cfg.recipe, name=recipe))
    if cfg.layouts.test_seed == recipe_settings(cfg.recipe.name).synthetic.seed:
        raise ConfigError(f"{path or 'conf/' + CONF}: [layouts] test_seed must differ from the recipe's synthetic seed")
    return cfg.quick_sizes() if quick else cfg


def training_recipe(cfg: Generalization, quick: bool, name: str | None = None) -> TrainingRecipe:
    """The recipe [recipe] names (or `name`: a profile's [model] recipe), with the [quick] synthetic sizes when asked."""
    recipe = recipe_settings(name or cfg.recipe.name)
    if recipe.synthetic.notes and cfg.layouts.test_seed == recipe.synthetic.seed:
        raise ConfigError(f"recipe {name or cfg.recipe.name}: [synthetic] seed must differ from the benchmark's "
                          "[layouts] test_seed")
    if not quick:
        return recipe
    q, replace = cfg.quick, dataclasses.replace
    return replace(recipe, synthetic=replace(recipe.synthetic, notes=q.synth_notes, patients=q.synth_patients))
