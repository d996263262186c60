"""Helpers of the gate identity tests (rules_speed18/19): their texts, a rules stage with a gate taken off, its hits."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from deid_core.engine.rules.loader import parse_example


def gate_texts(tagger, gated: Collection[str], lines: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the gated rules' examples and negatives in four cases, the invented lines alone, paired and joined)."""
    own = []
    for rule in tagger.rules:
        if rule.id in gated:
            plain = [parse_example(e)[0] for e in rule.examples] + list(rule.negatives)
            own += [v for t in plain for v in (t, t.upper(), t.lower(), t.title())]
    invented = [f"{a}\n{b}" for a in lines for b in ("", "Plan: continue.", lines[0])] + ["\n".join(lines)]
    return own, invented


def training_type_notes(n: int, seed: int, n_patients: int) -> list[str]:
    """n synthetic notes of the training note types only (conf/evaluation/synth_type_split.tsv)."""
    from deid_core.training.generalization import synth_types
    from deid_core.training.generalization_config import settings
    from deid_core.training.synth.generate import generate
    from deid_core.training.synth.output import to_note

    held_out = tuple(synth_types(settings())[1])
    return [to_note(d).text for d in generate(n, seed=seed, n_patients=n_patients, exclude=held_out)]


def tagger_with(change):
    """The default rules stage with `change(rule)` applied to every rule as it loads (e.g. a gate taken off)."""
    from deid_core.config import load_config
    from deid_core.engine.rules import tagger as tagger_module

    real = tagger_module.load_rules
    tagger_module.load_rules = lambda files: [change(r) for r in real(files)]
    try:
        return tagger_module.RuleTagger(load_config({}).rules)
    finally:
        tagger_module.load_rules = real


def regex_hits(tagger, text: str) -> tuple[list, list]:
    """(PHI hits, suppressor hits) of the rules stage on one text, in order."""
    from deid_core.doc import Doc
    from deid_core.notes import Note

    return tagger.regex_hits(Doc(Note("n", text)))
