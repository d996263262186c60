"""Patient-grouped cross-validation of the full hybrid (rules + CRF + merge), and its scores."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path

import regex

from deid_core import taxonomy
from deid_core.crf.tagger import CrfTagger, load_models, rule_source
from deid_core.crf.train import TrainDoc, make_docs, patient_folds, train_bundle
from deid_core.doc import Doc
from deid_core.notes import Note
from deid_core.spans import Span, validate_spans

log = logging.getLogger(__name__)

StageSpans = dict[str, dict[str, list[Span]]]  # note_id -> stage -> spans


def cv_stage_spans(
    notes: Sequence[Note], gold: dict[str, list[Span]], conf: dict, deid_config: dict, *,
    k: int = 5, c1: float | None = None, c2: float | None = None, extra: Sequence[TrainDoc] = (),
    threshold: float | None = None, models: Sequence[str] | None = None, easy: bool | None = None,
    use_rules: bool = True,
) -> StageSpans:
    """Each fold's held-out notes tagged by rules and by CRFs trained without that fold's patients."""
    rules = rule_source(deid_config, None) if use_rules else None
    folds = patient_folds(notes, k)
    out: StageSpans = {}
    thr = float(conf.get("tagging", {}).get("marginal_threshold", 1.0) if threshold is None else threshold)
    for fi, test_pids in enumerate(folds):
        train_notes = [n for n in notes if (n.patient_id or n.note_id) not in test_pids]
        test_notes = [n for n in notes if (n.patient_id or n.note_id) in test_pids]
        docs = make_docs(train_notes, gold) + list(extra)
        with tempfile.TemporaryDirectory(prefix="deid-cv-") as tmp:
            bundle = train_bundle(docs, conf, Path(tmp), rules=rules, c1=c1, c2=c2, models=models, easy=easy)
            tagger = CrfTagger(load_models(bundle), threshold=thr, rules=rules)
            for n in test_notes:
                doc = Doc(n)
                staged = {"rules": list(rules(doc)) if rules else []}
                doc.__dict__["stage_spans"] = dict(staged)
                staged["crf"] = tagger.tag(doc)
                out[n.note_id] = staged
        log.info("fold %d/%d: %d train notes, %d test notes", fi + 1, k, len(train_notes), len(test_notes))
    return out


def merged_predictions(notes: Sequence[Note], staged: StageSpans, merger, stages: Sequence[str]) -> dict[str, list[Span]]:
    """Predictions of a merge policy over the chosen stages' spans."""
    out = {}
    for n in notes:
        found = [s for st in stages for s in staged.get(n.note_id, {}).get(st, [])]
        spans = merger(found, doc=Doc(n)) if getattr(merger, "wants_doc", False) else merger(found)
        validate_spans(spans, len(n.text))
        out[n.note_id] = spans
    return out


_WORD_RE = regex.compile(r"[\p{L}\p{N}]+")


def score(notes: Sequence[Note], gold: dict[str, list[Span]], pred: dict[str, list[Span]]) -> dict:
    """Overlap recall/PPV, binary token P/R/F1 and per-category overlap recall (local scorer)."""
    g_found = g_total = p_hit = p_total = 0
    tp = fp = fn = 0
    per_cat: dict[str, list[int]] = {}
    for n in notes:
        g = gold.get(n.note_id, [])
        p = pred.get(n.note_id, [])
        for s in g:
            hit = any(s.overlaps(q) for q in p)
            g_total += 1
            g_found += hit
            c = per_cat.setdefault(taxonomy.category_of(s.label), [0, 0])
            c[0] += hit
            c[1] += 1
        for q in p:
            p_total += 1
            p_hit += any(q.overlaps(s) for s in g)
        for m in _WORD_RE.finditer(n.text):
            a, b = m.span()
            ing = any(s.start < b and a < s.end for s in g)
            inp = any(s.start < b and a < s.end for s in p)
            tp += ing and inp
            fp += inp and not ing
            fn += ing and not inp
    prec = tp / (tp + fp) if tp + fp else 0.0
    rec = tp / (tp + fn) if tp + fn else 0.0
    return {
        "overlap": {"recall": g_found / g_total if g_total else 0.0, "ppv": p_hit / p_total if p_total else 0.0,
                    "found": g_found, "gold": g_total, "pred": p_total},
        "binary_token": {"precision": prec, "recall": rec, "f1": 2 * prec * rec / (prec + rec) if prec + rec else 0.0,
                         "tp": tp, "fp": fp, "fn": fn},
        "per_category_recall": {c: {"recall": v[0] / v[1], "found": v[0], "gold": v[1]} for c, v in sorted(per_cat.items())},
    }
