"""Harmonize annotation conventions before pooling corpora (DESIGN.md §4, issue 14).

The PhysioNet corpus leaves ages under 90, weekdays and professions unmarked (and marks states
and countries only sometimes); the synthetic corpus marks them all. Pooled as they are, the CRF
learns both that "58 yo" is PHI and that it is not. `complete_gold` adds the hits of reviewed
high-precision rules (conf/conventions.toml) wherever no gold span overlaps them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from deid_core.config import CrfSettings, conf_file, load_config
from deid_core.doc import Doc
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.notes import Note
from deid_core.spans import Span, sort_spans, source_in

log = logging.getLogger(__name__)

SOURCE = "harmonize:"  # prefix of the source of every added span


def completion_rules(corpus: str = "physionet") -> tuple[list[str], RuleTagger]:
    """The rule-id globs that complete a corpus's gold, and the rule tagger that finds them."""
    conv = conf_file("conventions.toml").get(corpus)
    if not conv:
        raise ValueError(f"conf/conventions.toml has no [{corpus}] table")
    rules = RuleTagger(load_config({"rules": {"min_age": int(conv["min_age"]), "metadata": False}}).rules)
    globs = list(conv["complete_with"])
    skipped = sorted(r.id for r in rules.rules if not r.crf_feature and source_in(r.id, globs))
    if skipped:  # merge-only rules never shape training: they complete no gold, whatever the globs say
        log.info("conf/conventions.toml [%s] complete_with: merge-only rules not used: %s", corpus, ", ".join(skipped))
    return globs, rules


def complete_gold(notes: Sequence[Note], gold: dict[str, list[Span]], corpus: str = "physionet"
                  ) -> tuple[dict[str, list[Span]], dict[str, int]]:
    """Gold with the completion rules' hits added where no gold span overlaps; counts added per label."""
    globs, rules = completion_rules(corpus)
    out: dict[str, list[Span]] = {}
    added: dict[str, int] = {}
    for note in notes:
        spans = list(gold.get(note.note_id, []))
        extra = []
        for s in rules.feature_spans(Doc(note)):  # merge-only rules never shape training (rules/loader.py)
            if not source_in(s.source, globs):
                continue
            if any(s.start < g.end and g.start < s.end for g in spans):
                continue
            extra.append(Span(s.start, s.end, s.label, SOURCE + s.source, s.confidence))
            added[s.label] = added.get(s.label, 0) + 1
        out[note.note_id] = sort_spans(spans + extra) if extra else spans
    for nid, spans in gold.items():
        out.setdefault(nid, list(spans))
    return out, dict(sorted(added.items()))


def training_gold(notes: Sequence[Note], gold: dict[str, list[Span]], conf: CrfSettings,
                  corpus: str = "physionet") -> dict[str, list[Span]]:
    """The gold a target corpus is trained on: completed when [training] harmonize is on, else as read."""
    if not conf.training.harmonize:
        return gold
    completed, added = complete_gold(notes, gold, corpus)
    log.info("harmonized %s gold: %s spans added", corpus, sum(added.values()))
    return completed
