"""Schema of conf/evaluation/generalization.toml (the generalization benchmark's settings): every key
required, unknown keys and wrong types refused naming the file, table and key (deid_core/config)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from deid_core.config import ConfigError, conf_table, file_table
from deid_core.config.convert import at_least, member_of
from deid_core.config.tables import Count, Label, Positive
from deid_core.training.evaluation.readable import Readable
from deid_core.training.reinsert import KINDS

CONF = "evaluation/generalization.toml"
Kind = Annotated[str, member_of(lambda: KINDS, "a re-insertion kind")]


@dataclass(frozen=True)
class Recipe:
    """[recipe]: the default recipe's synthetic corpus and configuration files."""

    synth_notes: Positive
    synth_seed: int
    synth_patients: Positive
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
        return replace(self, recipe=replace(self.recipe, synth_notes=q.synth_notes, synth_patients=q.synth_patients),
                       layouts=replace(self.layouts, held_out_notes=q.held_out_notes, seen_notes=q.seen_notes),
                       reinsert=replace(self.reinsert, folds=q.folds))


def settings(quick: bool = False, path: str | Path | None = None) -> Generalization:
    """conf/evaluation/generalization.toml (or a file of its shape), with the [quick] sizes when asked."""
    cfg = file_table(Generalization, path) if path else conf_table(Generalization, CONF)
    if cfg.layouts.test_seed == cfg.recipe.synth_seed:
        raise ConfigError(f"{path or 'conf/' + CONF}: [layouts] test_seed must differ from the recipe's synth_seed")
    return cfg.quick_sizes() if quick else cfg
