"""Full Deidentifier tagging throughput (rules + CRF + merge) on one core, with a stage profile.

Input: the PhysioNet dev split notes (ICU nursing notes, ~840 characters, ~200 tokens each)
with patients.tsv metadata, or with --synthetic N the snapshot's synthetic notes, tagged by the
Deidentifier that conf/deidentify.toml builds (stages, merge) from a bundle (default:
models/default), in batches of --batch-size notes (default [job] batch_size, as the job hands
them to Deidentifier.process_many). Reports notes/s of process CPU time (best of --repeat
passes; the cross-note step is not included) and where the time goes: tokenization, rules,
CRF features, CRF scoring (numpy: emissions, forward-backward, MAP path; crfsuite: Viterbi +
marginals), span decoding, merge. The collector is settled as the job's workers and `deid tag` settle it
(conf/deidentify.toml [job.gc], deid_core/app/heap.py; `--config` a file with `[job.gc] settle = false` measures
CPython's defaults), and its collections per generation and their CPU time per note are reported (gc.callbacks).
"""

from __future__ import annotations

import argparse
import time

from benchmarks.tokenize import DEFAULT_CORPUS, machine
from deid_core import compiled
from deid_core.app.heap import GcMeter, settled_heap
from deid_core.bundle_choice import resolve_bundle
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.pipeline import build_deidentifier
from deid_core.io.physionet import read_physionet


def _crf_profile(stage, docs, states, t: dict[str, float]) -> None:
    """CPU seconds of one batch through the token CRF stage: features, scoring, span decoding."""
    from deid_core.engine.crf.labels import decode

    clock = time.process_time
    live = [i for i, d in enumerate(docs) if d.tokens[1]]
    docs = [docs[i] for i in live]
    rules = [stage.rule_spans(states[i]) for i in live]
    full = stage.threshold < 1.0 or stage.keep_marginals
    gates = [[] if full or not stage.gate else stage._gate_positions(d, r) for d, r in zip(docs, rules, strict=True)]
    for m in stage.models:
        t0 = clock()
        if m.batch is not None:
            out = [None] * len(docs)
            encoded = m.batch.encode_many(docs, rules, out)
            t1 = clock()
            m.batch.score_many(encoded, stage.threshold, stage.keep_marginals, gates, out)
        else:
            feats = [m.features(d, r) for d, r in zip(docs, rules, strict=True)]
            t1 = clock()
            out = [m.predict(f, stage.threshold, stage.keep_marginals, g) for f, g in zip(feats, gates, strict=True)]
        t2 = clock()
        for d, (tags, _) in zip(docs, out, strict=True):
            decode(tags, d.tokens[1], d.tokens[2])
        t["crf features"] += t1 - t0
        t["crf scoring"] += t2 - t1
        t["crf decode"] += clock() - t2


def _profile(deid, notes, batch_size: int) -> dict[str, float]:
    """CPU seconds per stage over the notes, batch by batch (the stages and merge of Deidentifier._tag_docs, timed piecewise)."""
    from deid_core.engine.contract import NoteState
    from deid_core.engine.crf.chars import CharCrfTagger
    from deid_core.engine.crf.tagger import CrfTagger

    t = {"tokenize": 0.0, "crf features": 0.0, "crf scoring": 0.0,
         "crf decode": 0.0, "merge": 0.0}
    clock = time.process_time
    for b in range(0, len(notes), batch_size):
        docs = [Doc(n) for n in notes[b: b + batch_size]]
        states = [NoteState() for _ in docs]
        t0 = clock()
        for doc in docs:
            doc.tokens  # noqa: B018 - computed and cached once per note
        t["tokenize"] += clock() - t0
        found: list[list] = [[] for _ in docs]
        for stage in deid.stages:
            if isinstance(stage, CrfTagger):
                _crf_profile(stage, docs, states, t)
                spans = stage.run_many(docs, states)  # for the merge input (not timed twice)
            elif isinstance(stage, CharCrfTagger):
                t0 = clock()
                spans = stage.run_many(docs, states)
                t["char crf"] = t.get("char crf", 0.0) + clock() - t0
            else:
                t0 = clock()
                spans = stage.run_many(docs, states)
                t[stage.name] = t.get(stage.name, 0.0) + clock() - t0
            for state, f, s in zip(states, found, spans, strict=True):
                state.spans[stage.name] = s
                f.extend(s)
        t0 = clock()
        for doc, state, f in zip(docs, states, found, strict=True):
            deid.merge(f, doc, state)
        t["merge"] += clock() - t0
    return t


def synthetic(n: int) -> list:
    """n synthetic notes with their metadata names (seed 4242, 60 patients per 400 notes: the snapshot's corpus)."""
    from deid_core.training.synth.generate import generate
    from deid_core.training.synth.output import to_note

    return [to_note(s) for s in generate(n, seed=4242, n_patients=max(1, n * 60 // 400))]


def main(argv: list[str]) -> int:
    """Tag every note --repeat times; print notes/s (best pass) and the stage profile."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks tagger", description=__doc__)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="PhysioNet folder (id.text)")
    ap.add_argument("--bundle", default=None, help="model bundle (default: the config's [model] bundle)")
    ap.add_argument("--config", default=None, help="TOML merged over conf/deidentify.toml, e.g. a profile")
    ap.add_argument("--stages", default=None, help="comma-separated stages (default from config)")
    ap.add_argument("--merge", default=None, help="merge policy (default from config)")
    ap.add_argument("--repeat", type=int, default=3, help="passes over the corpus (best is reported)")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N notes")
    ap.add_argument("--synthetic", type=int, default=0,
                    help="tag N synthetic notes (deid synth, seed 4242, as scripts/snapshot_spans.py) instead of --corpus")
    ap.add_argument("--marginal-threshold", type=float, default=None,
                    help="override conf/crf.toml [tagging] marginal_threshold (1.0: recall knob off)")
    ap.add_argument("--scorer", choices=("numpy", "crfsuite"), default=None,
                    help="override conf/crf.toml [tagging] scorer")
    ap.add_argument("--batch-size", type=int, default=None,
                    help="notes per Deidentifier._analyse_many call (default: [job] batch_size, as the job)")
    args = ap.parse_args(argv)
    notes = synthetic(args.synthetic) if args.synthetic else read_physionet(args.corpus).notes
    if args.limit:
        notes = notes[: args.limit]
    pipeline = {k: v for k, v in (("stages", args.stages and args.stages.split(",")), ("merge", args.merge)) if v}
    tagging = {k: v for k, v in (("marginal_threshold", args.marginal_threshold), ("scorer", args.scorer))
               if v is not None}
    config = load_config({"pipeline": pipeline, "crf": {"tagging": tagging}}, args.config)
    batch_size = args.batch_size or config.job.batch_size
    bundle = resolve_bundle(config, args.bundle)
    t0 = time.process_time()
    deid = build_deidentifier(config, bundle, b"benchmark-key-not-secret-000000")
    load_s = time.process_time() - t0
    chars = sum(len(n.text) for n in notes)
    kind = "synthetic" if args.synthetic else "PhysioNet nursing"
    print(f"tagger: {len(notes)} {kind} notes, {chars / len(notes):.0f} chars/note avg; "
          f"stages={list(config.pipeline.stages)} merge={config.pipeline.merge} "
          f"marginal_threshold={config.crf.tagging.marginal_threshold} "
          f"scorer={config.crf.tagging.scorer} domain={config.crf.tagging.domain} batch={batch_size} "
          f"bundle={bundle.id[:12]}; load {load_s:.2f} s; process CPU time, one core")
    print(f"  {compiled.status()}")
    best = float("inf")
    meter = GcMeter()
    with settled_heap(config.job.gc), meter.installed():
        for _ in range(args.repeat):
            t0 = time.process_time()
            for b in range(0, len(notes), batch_size):
                deid._analyse_many(notes[b: b + batch_size])
            best = min(best, time.process_time() - t0)
        print(f"  Deidentifier._analyse_many: {len(notes) / best:.0f} notes/s ({best * 1000 / len(notes):.2f} ms/note, "
              f"{chars / best / 1e6:.2f} MB/s), best of {args.repeat}")
        print(f"  {meter.summary(len(notes) * args.repeat)} ([job.gc] {config.job.gc})")
        prof = _profile(deid, notes, batch_size)
    total = sum(prof.values())
    for k, v in prof.items():
        print(f"  {k:20s} {v * 1000 / len(notes):6.3f} ms/note  {100 * v / total:5.1f}%")
    print(f"machine: {machine()}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
