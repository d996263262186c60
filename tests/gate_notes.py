"""Texts for the gate identity tests (rules_speed18/19): a gated rule's hits must equal its ungated copy's on them."""

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
