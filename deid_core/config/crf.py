"""Schema of conf/crf.toml ([crf] in a job config): labels, models, training, clusters, tagging."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from deid_core.config.convert import at_least, between
from deid_core.config.tables import Category, Count, Label, Positive

NonNegative = Annotated[float, at_least(0)]
Scheme = Literal["IOB1", "IO", "BIO", "BIOES"]
Scorer = Literal["numpy", "crfsuite"]  # token CRF inference: batched numpy, or python-crfsuite note by note


@dataclass(frozen=True)
class Labels:
    """[labels]: the token CRF's tag scheme and training label -> CRF label map."""

    scheme: Scheme
    map: dict[Label, Label]


@dataclass(frozen=True)
class Model:
    """[models.<name>]: one CRF model's kind, categories, feature families and window."""

    kind: Literal["token", "char"]
    categories: tuple[Category, ...]
    features: tuple[str, ...]
    window: Count


@dataclass(frozen=True)
class Training:
    """[training]: which models are trained, crfsuite settings, the c1/c2 grid, EasyAdapt, harmonization."""

    models: tuple[str, ...]
    algorithm: Literal["lbfgs", "l2sgd", "ap", "pa", "arow"]
    c1: NonNegative
    c2: NonNegative
    max_iterations: Positive
    grid_c1: tuple[NonNegative, ...]
    grid_c2: tuple[NonNegative, ...]
    folds: Annotated[int, at_least(2)]
    easyadapt: bool
    feature_minfreq: NonNegative
    harmonize: bool


@dataclass(frozen=True)
class Clusters:
    """[clusters]: word clusters learned from training text."""

    min_count: Positive
    dims: Positive
    k: tuple[Positive, ...]
    seed: int


@dataclass(frozen=True)
class Tagging:
    """[tagging]: recall knob, EasyAdapt domain, rule-gate threshold, version strictness, cache, scorer."""

    marginal_threshold: Annotated[float, between(0, 1)]
    domain: Literal["target", "source", "general"]
    min_gate_examples: Count
    strict_versions: bool
    cache_size: Annotated[int, at_least(2)]  # two generations of cache_size // 2 (engine/generations.py)
    scorer: Scorer
    batch_tokens: Positive


@dataclass(frozen=True)
class CrfSettings:
    """Every table of conf/crf.toml."""

    labels: Labels
    models: dict[str, Model]
    training: Training
    clusters: Clusters
    tagging: Tagging

    def token_models(self, names: tuple[str, ...] | list[str]) -> list[str]:
        """The names among `names` whose [models.*] kind is "token"."""
        return [n for n in names if self.models[n].kind == "token"]


__all__ = ["Clusters", "CrfSettings", "Labels", "Model", "Scorer", "Tagging", "Training"]
