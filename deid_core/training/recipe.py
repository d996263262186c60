"""A training recipe's corpus (conf/recipes/*.toml, `deid train --recipe`): what the CRF learns from.

Training data that teaches context, not strings (issue 14): the target corpus's notes with their
gold harmonized ([training] harmonize), re-inserted copies of those notes in which every gold PHI
is a new string (seed 004: random, ambiguous, out-of-vocabulary, lower- or upper-cased names;
training.reinsert), and synthetic notes of the generator, pooled.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence

from deid_core.config import CrfSettings, Recipe, conf_dir, load_config
from deid_core.engine.surrogates.locations import faker_version
from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.training.harmonize import training_gold
from deid_core.training.reinsert import reinsert
from deid_core.training.synth import generate
from deid_core.training.synth.output import to_corpus
from deid_core.training.train import TrainDoc, make_docs

log = logging.getLogger(__name__)


def copy_kinds(notes: Sequence[Note], recipe: Recipe) -> list[dict[str, list[Note]]]:
    """Per copy, the notes of each kind: copy j of the i-th note gets kinds[(i + j) % len(kinds)]
    (with as many copies as kinds, every note gets every kind)."""
    kinds = recipe.reinsert.kinds
    out: list[dict[str, list[Note]]] = []
    for j in range(recipe.reinsert.copies):
        by_kind: dict[str, list[Note]] = {}
        for i, n in enumerate(notes):
            by_kind.setdefault(kinds[(i + j) % len(kinds)], []).append(n)
        out.append(by_kind)
    return out


def reinserted_docs(notes: Sequence[Note], gold: dict[str, list[Span]], recipe: Recipe) -> list[TrainDoc]:
    """The recipe's re-inserted copies of the notes with gold PHI (target domain), gold moved with the
    new strings (a note without PHI would be copied unchanged: it is not)."""
    notes = [n for n in notes if gold.get(n.note_id)]
    if not recipe.reinsert.copies or not notes:
        return []
    config = load_config(config_file=conf_dir() / recipe.reinsert.config)
    key = recipe.reinsert.key.encode()
    docs: list[TrainDoc] = []
    for by_kind in copy_kinds(notes, recipe):
        for kind, subset in by_kind.items():
            new_notes, new_gold = reinsert(subset, gold, kind, key, config)
            docs.extend(make_docs(new_notes, new_gold))
    return docs


def target_docs(notes: Sequence[Note], gold: dict[str, list[Span]], conf: CrfSettings,
                recipe: Recipe | None) -> list[TrainDoc]:
    """The target corpus as the recipe trains it: its notes (gold harmonized) and their re-inserted copies."""
    gold = training_gold(notes, gold, conf)
    docs = make_docs(notes, gold)
    if recipe is not None:
        docs += reinserted_docs(notes, gold, recipe)
    return docs


def synthetic_provenance(recipe: Recipe) -> dict[str, str | None]:
    """What a bundle's manifest records of the synthetic notes generated for it now: their names and places
    come from Faker's lists, so another Faker release draws other notes (and trains another CRF)."""
    return {"synthetic_faker_version": faker_version()} if recipe.synthetic.notes else {}


def synthetic_docs(recipe: Recipe, exclude_types: Sequence[str] = ()) -> tuple[list[TrainDoc], Counter]:
    """The recipe's synthetic notes (source domain) without `exclude_types`, and their note types."""
    s = recipe.synthetic
    if not s.notes:
        return [], Counter()
    notes = generate(s.notes, s.seed, s.patients, exclude=tuple(exclude_types), breadth=s.breadth)
    corpus = to_corpus(notes)
    return make_docs(corpus.notes, corpus.gold, domain="S"), Counter(n.note_type for n in notes)
