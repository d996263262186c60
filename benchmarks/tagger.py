"""Full Deidentifier tagging throughput (rules + CRF + merge) on one core, with a stage profile.

Input: the PhysioNet dev split notes (ICU nursing notes, ~840 characters, ~200 tokens each)
with patients.tsv metadata, tagged by the Deidentifier that conf/deidentify.toml builds
(stages, merge) from a bundle (default: models/default). Reports notes/s of process CPU time
(best of --repeat passes) and where the time goes: tokenization, rules, CRF feature
extraction, crfsuite (Viterbi + marginals), merge.
"""

from __future__ import annotations

import argparse
import time

from benchmarks.tokenize import DEFAULT_CORPUS, machine
from deid_core.bundle import load_bundle
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.pipeline import build_deidentifier
from deid_core.io.physionet import read_physionet


def _profile(deid, notes) -> dict[str, float]:
    """CPU seconds per stage over the notes (same work as Deidentifier.tag, timed piecewise)."""
    from deid_core.engine.contract import NoteState
    from deid_core.engine.crf.chars import CharCrfTagger
    from deid_core.engine.crf.labels import decode
    from deid_core.engine.crf.tagger import CrfTagger

    t = {"tokenize": 0.0, "rules/other stages": 0.0, "crf features": 0.0, "crfsuite": 0.0,
         "crf decode": 0.0, "merge": 0.0}
    clock = time.process_time
    for n in notes:
        doc = Doc(n)
        t0 = clock()
        doc.tokens  # noqa: B018 - computed and cached once per note
        t["tokenize"] += clock() - t0
        found = []
        state = NoteState()
        for stage in deid.stages:
            if isinstance(stage, CrfTagger):
                rules = stage.rule_spans(state)
                for m in stage.models:
                    t0 = clock()
                    feats = m.features(doc, rules)
                    t1 = clock()
                    tags, phi = m.predict(feats, stage.threshold)
                    if stage.threshold >= 1.0 and stage.gate:
                        for i in stage._gate_positions(doc, rules):
                            phi[i] = 1.0 - m.tagger.marginal("O", i)
                    t2 = clock()
                    decode(tags, doc.tokens[1], doc.tokens[2])
                    t["crf features"] += t1 - t0
                    t["crfsuite"] += t2 - t1
                    t["crf decode"] += clock() - t2
                spans = stage.run(doc, state)  # for the merge input (not timed twice)
            elif isinstance(stage, CharCrfTagger):
                m = stage.model
                t0 = clock()
                feats = m.extractor.extract(doc, state.rule_spans or ())
                t1 = clock()
                m.tagger.tag(feats) if feats else []
                t["char features"] = t.get("char features", 0.0) + t1 - t0
                t["char crfsuite"] = t.get("char crfsuite", 0.0) + clock() - t1
                spans = stage.run(doc, state)  # for the merge input (not timed twice)
            else:
                t0 = clock()
                spans = stage.run(doc, state)
                t["rules/other stages"] += clock() - t0
            state.spans[stage.name] = spans
            found.extend(spans)
        t0 = clock()
        deid.merge(found, doc, state)
        t["merge"] += clock() - t0
    return t


def main(argv: list[str]) -> int:
    """Tag every note --repeat times; print notes/s (best pass) and the stage profile."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks tagger", description=__doc__)
    ap.add_argument("--corpus", default=str(DEFAULT_CORPUS), help="PhysioNet folder (id.text)")
    ap.add_argument("--bundle", default=None, help="model bundle (default models/default)")
    ap.add_argument("--stages", default=None, help="comma-separated stages (default from config)")
    ap.add_argument("--merge", default=None, help="merge policy (default from config)")
    ap.add_argument("--repeat", type=int, default=3, help="passes over the corpus (best is reported)")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N notes")
    ap.add_argument("--marginal-threshold", type=float, default=None,
                    help="override conf/crf.toml [tagging] marginal_threshold (1.0: recall knob off)")
    args = ap.parse_args(argv)
    notes = read_physionet(args.corpus).notes
    if args.limit:
        notes = notes[: args.limit]
    pipeline = {k: v for k, v in (("stages", args.stages and args.stages.split(",")), ("merge", args.merge)) if v}
    tagging = {} if args.marginal_threshold is None else {"marginal_threshold": args.marginal_threshold}
    config = load_config({"pipeline": pipeline, "crf": {"tagging": tagging}})
    bundle = load_bundle(args.bundle)
    t0 = time.process_time()
    deid = build_deidentifier(config, bundle, b"benchmark-key-not-secret-000000")
    load_s = time.process_time() - t0
    chars = sum(len(n.text) for n in notes)
    print(f"tagger: {len(notes)} PhysioNet nursing notes, {chars / len(notes):.0f} chars/note avg; "
          f"stages={list(config.pipeline.stages)} merge={config.pipeline.merge} "
          f"marginal_threshold={config.crf.tagging.marginal_threshold} "
          f"bundle={bundle.id[:12]}; load {load_s:.2f} s; process CPU time, one core")
    best = float("inf")
    for _ in range(args.repeat):
        t0 = time.process_time()
        for n in notes:
            deid.tag(n)
        best = min(best, time.process_time() - t0)
    print(f"  Deidentifier.tag: {len(notes) / best:.0f} notes/s ({best * 1000 / len(notes):.2f} ms/note, "
          f"{chars / best / 1e6:.2f} MB/s), best of {args.repeat}")
    prof = _profile(deid, notes)
    total = sum(prof.values())
    for k, v in prof.items():
        print(f"  {k:20s} {v * 1000 / len(notes):6.3f} ms/note  {100 * v / total:5.1f}%")
    print(f"machine: {machine()}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
