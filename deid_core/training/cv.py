"""Patient-grouped cross-validation of the full hybrid (rules + CRF + merge), and its scores."""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from deid_core.config import Config, CrfSettings
from deid_core.doc import Doc
from deid_core.engine.contract import MergeStep, NoteState, Stage, check_stages, spans_or_raise
from deid_core.engine.crf.chars import CharCrfTagger, load_char_model
from deid_core.engine.crf.tagger import CrfTagger, load_models
from deid_core.engine.crossnote import spread_across_notes
from deid_core.engine.pipeline import build_stage
from deid_core.notes import Note
from deid_core.spans import Span, validate_spans
from deid_core.training.harmonize import training_gold
from deid_core.training.train import TrainDoc, make_docs, patient_folds, train_bundle

log = logging.getLogger(__name__)

StageStates = dict[str, NoteState]  # note_id -> what each stage found (spans, CRF marginals)
Augment = Callable[[Sequence[Note], dict[str, list[Span]]], list[TrainDoc]]


def cv_stage_spans(
    notes: Sequence[Note], gold: dict[str, list[Span]], conf: CrfSettings, deid_config: Config, *,
    k: int = 5, c1: float | None = None, c2: float | None = None, extra: Sequence[TrainDoc] = (),
    threshold: float | None = None, models: Sequence[str] | None = None, easy: bool | None = None,
    use_rules: bool = True, augment: Augment | None = None,
) -> StageStates:
    """Each fold's held-out notes tagged by rules and by CRFs trained without that fold's patients.

    Stages per note: "rules", "crf" (token CRFs) and, when the bundle has a char model, "crf_char".
    The rules stage is built here from the configuration's registry (use_rules); without it the
    CRFs are trained and tagged with no rule spans. `augment(train_notes, train_gold)` adds
    training docs made from each fold's training notes only (a recipe's re-inserted copies).
    """
    rules = build_stage(deid_config, "rules", None) if use_rules else None
    train_gold = training_gold(notes, gold, conf)  # the folds' training part; scored on `gold`
    folds = patient_folds(notes, k)
    out: StageStates = {}
    thr = conf.tagging.marginal_threshold if threshold is None else threshold
    for fi, test_pids in enumerate(folds):
        train_notes = [n for n in notes if (n.patient_id or n.note_id) not in test_pids]
        test_notes = [n for n in notes if (n.patient_id or n.note_id) in test_pids]
        docs = make_docs(train_notes, train_gold) + list(extra)
        if augment is not None:
            docs += augment(train_notes, train_gold)
        with tempfile.TemporaryDirectory(prefix="deid-cv-") as tmp:
            bundle = train_bundle(docs, conf, Path(tmp), rules=rules.feature_spans if rules else None, c1=c1, c2=c2,
                                  models=models, easy=easy)
            stages: list[Stage] = [] if rules is None else [rules]
            # tagged like the target corpus it is scored on (EasyAdapt bundles: the target copy)
            crf_models = load_models(bundle, conf.tagging.cache_size, "target")
            stages.append(CrfTagger(crf_models, threshold=thr, needs_rules=use_rules, keep_marginals=True,
                                    min_gate_examples=conf.tagging.min_gate_examples, gate=False,
                                    gated_source=lambda src: False))
            char_model = load_char_model(bundle, conf.tagging.cache_size)
            if char_model:
                stages.append(CharCrfTagger(char_model, needs_rules=use_rules))
            stages += [build_stage(deid_config, s, bundle) for s in extra_stages(deid_config)]
            check_stages(stages)
            docs = [Doc(n) for n in test_notes]  # the fold's held-out notes as one batch
            states = [NoteState(spans={"rules": []}) for _ in test_notes]  # rules scored even when not run
            for stage in stages:
                for state, found in zip(states, stage.run_many(docs, states), strict=True):
                    state.spans[stage.name] = spans_or_raise(found)
            out.update(zip([n.note_id for n in test_notes], states, strict=True))
        log.info("fold %d/%d: %d train notes, %d test notes", fi + 1, k, len(train_notes), len(test_notes))
    return out


def extra_stages(config: Config) -> list[str]:
    """Configured stages after the taggers CV builds itself (rules, crf, crf_char): the name net."""
    return [s for s in config.pipeline.stages if s not in ("rules", "crf", "crf_char")]


def merged_predictions(notes: Sequence[Note], staged: StageStates, merger: MergeStep,
                       stages: Sequence[str]) -> dict[str, list[Span]]:
    """Predictions of a merge policy over the chosen stages' spans, with its cross-note step."""
    merged: list[list[Span] | None] = []
    for n in notes:
        state = staged[n.note_id]
        found = [s for st in stages for s in state.spans.get(st, [])]
        # the merge sees the CRF marginals only when the CRF's spans are merged
        view = NoteState(crf=state.crf if "crf" in stages else None,
                         nonphi=state.nonphi if "rules" in stages else None)
        spans = merger(found, Doc(n), view)
        validate_spans(spans, len(n.text))
        merged.append(spans)
    spread = spread_across_notes(merger.cross_note(), notes, merged)
    return {n.note_id: spans for n, spans in zip(notes, spread, strict=True)}


def score(notes: Sequence[Note], gold: dict[str, list[Span]], pred: dict[str, list[Span]]) -> dict:
    """deid_core.training.evaluation summary (every metric, per label and per category) of predictions."""
    from deid_core.training.evaluation.metrics import score_corpus
    from deid_core.training.evaluation.report import summary

    texts = {n.note_id: n.text for n in notes}
    return summary(score_corpus(texts, {k: v for k, v in gold.items() if k in texts}, pred), by_category=True)


def brief(report: dict) -> dict:
    """The headline numbers of a report: overlap recall/PPV, binary token F1, strict F1, per-category overlap."""
    return {
        "overlap_recall": round(report["overlap"]["recall"], 4), "overlap_ppv": round(report["overlap"]["precision"], 4),
        "binary_token_f1": round(report["binary_token"]["f1"], 4), "strict_f1": round(report["strict"]["f1"], 4),
        "per_category_overlap": {c: [round(v["recall"], 3), round(v["precision"], 3), v["tp"] + v["fn"]]
                                 for c, v in report["per_category"]["overlap"].items()},
    }


def evaluate_bundle(bundle_path, notes: Sequence[Note], gold: dict[str, list[Span]], config: Config,
                    stages: Sequence[str] = ("rules", "crf"), merge: str | None = None) -> dict:
    """Score the Deidentifier built from a bundle on a held-out corpus (e.g. synthetic, unseen seed)."""
    from deid_core.bundle import load_bundle
    from deid_core.engine.pipeline import build_deidentifier

    cfg = config.override({"pipeline": {"stages": list(stages), **({"merge": merge} if merge else {})}})
    deid = build_deidentifier(cfg, load_bundle(bundle_path), b"evaluation-key-not-secret-00000")
    return score(notes, gold, dict(zip([n.note_id for n in notes], deid.tag_many(notes), strict=True)))


def run_cv(notes, gold, conf: CrfSettings, dconf: Config, k, *, extra, c1=None, c2=None, use_rules=True,
           models=None, easy=None, augment: Augment | None = None) -> dict:
    """CV report of the full hybrid under the configured merge policy."""
    from deid_core.engine.registry import resolve

    staged = cv_stage_spans(notes, gold, conf, dconf, k=k, c1=c1, c2=c2, extra=extra,
                            use_rules=use_rules, models=models, easy=easy, augment=augment)
    merge_name = dconf.pipeline.merge
    merger = resolve(dconf.registry.merge[merge_name])(dconf)
    stages = ["rules", "crf"] if use_rules else ["crf"]
    if "crf_char" in dconf.pipeline.stages and any("crf_char" in v.spans for v in staged.values()):
        stages.append("crf_char")  # the char CRF is scored when the configured pipeline runs it
    stages += extra_stages(dconf)
    report = score(notes, gold, merged_predictions(notes, staged, merger, stages))
    report["crf_only"] = score(notes, gold, merged_predictions(notes, staged, merger, ["crf"]))
    report["setup"] = {"folds": k, "merge": merge_name, "grouped_by": "patient", "notes": len(notes),
                       "source_notes": len(extra), "c1": c1, "c2": c2}
    return report


def f_beta(precision: float, recall: float, beta: float) -> float:
    """F-beta (beta 2: recall weighs four times precision): the recall-first tuning objective."""
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall) if precision + recall else 0.0
