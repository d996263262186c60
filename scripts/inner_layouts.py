"""Inner layout instrument (issue 14, round 4): the generalization benchmark's tune+synthetic bundle on a
fresh seed of the *training* note types only, per-label token recall, strict labelled F1, label
confusions and misses of chosen labels (training types only: the held-out types are never generated).

    .venv/bin/python scripts/inner_layouts.py --recipe previous [--seed 24024] [--notes 1000]
        [--labels FAX,CITY] [--show 40] [--json FILE] [--bundle DIR] [--dump FILE | --corpus FILE]

--dump FILE writes the generated notes (a pickle) and stops; --corpus FILE scores those notes instead of
generating: the same test notes for two revisions whose templates differ (round 7: run --dump with
PYTHONPATH set to an export of the other revision, e.g. `git archive main | tar -x -C /tmp/main`).
"""

from __future__ import annotations

import argparse
import json
import pickle
from collections import Counter
from pathlib import Path

from deid_core.bundle import load_bundle
from deid_core.training.corpus_eval import aggregate, run_pipeline
from deid_core.training.evaluation.readable import readable_names
from deid_core.training.generalization import NOTES_PER_TEST_PATIENT, Bench, synth_types
from deid_core.training.generalization_config import settings
from deid_core.training.generalization_report import DEFAULT_CACHE, DEFAULT_DATA
from deid_core.training.synth import generate
from deid_core.training.synth.output import to_corpus


def confusions(notes, gold, pred) -> Counter:
    """(gold label, predicted label or MISS) counts over gold spans: the predicted label of the
    prediction overlapping most of the gold span."""
    out: Counter = Counter()
    for n in notes:
        for g in gold.get(n.note_id, []):
            best = max(((min(g.end, p.end) - max(g.start, p.start), p.label) for p in pred.get(n.note_id, [])
                        if p.overlaps(g)), default=(0, "MISS"))
            out[(g.label, best[1])] += 1
    return out


def error_kind(g, pred_spans) -> str:
    """Why gold span `g` is a strict error: miss, label (same extent), short / long / shifted (same label),
    or label+extent; "" when a prediction matches it strictly."""
    ps = [p for p in pred_spans if p.overlaps(g)]
    if any((p.start, p.end, p.label) == (g.start, g.end, g.label) for p in ps):
        return ""
    if not ps:
        return "miss"
    if any((p.start, p.end) == (g.start, g.end) for p in ps):
        return "label"
    same = [p for p in ps if p.label == g.label]
    if not same:
        return "label+extent"
    if len(same) > 1:
        return "split"
    p = same[0]
    if p.start >= g.start and p.end <= g.end:
        return "short"
    return "long" if p.start <= g.start and p.end >= g.end else "shifted"


def error_kinds(notes, gold, pred) -> Counter:
    """(gold label, error kind) counts of the gold spans without a strict match (error_kind)."""
    out: Counter = Counter()
    for n in notes:
        for g in gold.get(n.note_id, []):
            k = error_kind(g, pred.get(n.note_id, []))
            if k:
                out[(g.label, k)] += 1
    return out


def show_gold(gold, pred, texts, limit: int, pick, types=None) -> None:
    """Print up to `limit` gold spans in context for which `pick(gold span, overlapping predictions)`
    returns the predictions to show (None skips the span); "MISS" when it returns none."""
    shown = 0
    for nid, gs in gold.items():
        t = texts[nid]
        for g in gs:
            if shown >= limit:
                return
            chosen = pick(g, [p for p in pred.get(nid, []) if p.overlaps(g)])
            if chosen is None:
                continue
            got = ";".join(f"{p.label}:{t[p.start:p.end]!r}/{p.source}" for p in chosen) or "MISS"
            where = f"{types[nid]:18s} " if types else ""
            print(f"  {where}{t[max(0, g.start - 40):g.start]!r} [[{t[g.start:g.end]}]] {t[g.end:g.end + 25]!r} -> {got}")
            shown += 1


def show_label_misses(gold, pred, texts, label: str, limit: int, types=None, exact: bool = False) -> None:
    """Print up to `limit` gold spans of `label` that no prediction of that label covers (`exact`: with
    the gold extent), with what was predicted there."""
    def pick(g, ps):
        if g.label != label or any(p.label == label and ((p.start, p.end) == (g.start, g.end) if exact
                                                         else p.start <= g.start and p.end >= g.end) for p in ps):
            return None
        return ps
    show_gold(gold, pred, texts, limit, pick, types)


def show_readable(corpus, pred, outs, settings, types, limit: int) -> None:
    """Gold person names still standing in the output (training types), with what was predicted there."""
    print("-- names readable in the output (training types)")
    shown = 0
    for n in corpus.notes:
        out = outs.get(n.note_id)
        for g in corpus.gold.get(n.note_id, []):
            if out is None or shown >= limit or readable_names(n.text, [g], out, settings)[1] == 0:
                continue
            ps = [p for p in pred.get(n.note_id, []) if p.overlaps(g)]
            got = ";".join(f"{p.label}:{n.text[p.start:p.end]!r}/{p.source}" for p in ps) or "MISS"
            print(f"  {types[n.note_id]:18s} {g.label} {n.text[max(0, g.start - 40):g.start]!r} "
                  f"[[{n.text[g.start:g.end]}]] {n.text[g.end:g.end + 25]!r} -> {got}")
            shown += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipe", default="previous")
    ap.add_argument("--seed", type=int, default=24024)
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--labels", default="")
    ap.add_argument("--show", type=int, default=30)
    ap.add_argument("--json", default=None)
    ap.add_argument("--kinds", type=int, default=0, help="print the N commonest strict errors by label and kind")
    ap.add_argument("--kind", default="", help="LABEL:KIND,... show gold spans of LABEL with that error kind")
    ap.add_argument("--pairs", default="", help="GOLD>PRED,... show gold spans of GOLD tagged PRED")
    ap.add_argument("--readable", type=int, default=0, help="show up to N gold names still readable in the output")
    ap.add_argument("--dump", default=None, help="write the generated test notes to this file (pickle) and stop")
    ap.add_argument("--corpus", default=None, help="score the notes of this --dump file instead of generating")
    ap.add_argument("--bundle", default=None, help="tag with this trained bundle (no training; e.g. the "
                                                   "previous code's bundle with this code's rules and merge)")
    args = ap.parse_args()
    if args.corpus:
        test = pickle.loads(Path(args.corpus).read_bytes())  # noqa: S301 (our own --dump file)
    else:
        held_out = tuple(synth_types(settings(False, None, args.recipe))[1])
        test = generate(args.notes, args.seed, max(1, args.notes // NOTES_PER_TEST_PATIENT), exclude=held_out)
    if args.dump:
        Path(args.dump).write_bytes(pickle.dumps(test))
        print(f"wrote {len(test)} notes of the training types, seed {args.seed}, to {args.dump}")
        return
    bench = Bench(settings(False, None, args.recipe), DEFAULT_DATA, DEFAULT_CACHE, False)
    bundle = load_bundle(args.bundle) if args.bundle else bench.main_bundle()
    deid = bench.deid(bundle)
    corpus = to_corpus(test)
    pred, outs = run_pipeline(deid, corpus.notes)
    res = aggregate(corpus.notes, corpus.gold, pred, outs, bench.cfg.readable)
    rep = res["report"]
    print(f"notes {len(test)} {args.corpus or f'seed {args.seed}'} bundle {bundle.id[:12]}")
    print("bin-tok R/P {:.3f}/{:.3f} strict R/P/F1 {:.3f}/{:.3f}/{:.3f} readable {}".format(
        rep["binary_token"]["recall"], rep["binary_token"]["precision"], rep["strict"]["recall"],
        rep["strict"]["precision"], rep["strict"]["f1"], res["readable"]))
    conf = confusions(corpus.notes, corpus.gold, pred)
    per = rep["per_label"]["token"]
    strict = rep["per_label"]["strict"]
    for lab in sorted(per, key=lambda k: per[k]["recall"]):
        v, s = per[lab], strict.get(lab, {})
        top = ", ".join(f"{p} {c}" for (g, p), c in conf.most_common() if g == lab and p != lab)[:120]
        print(f"{lab:15s} tokR {v['recall']:.3f} strictF1 {s.get('f1', 0):.3f} n {v['tp'] + v['fn']:5d}  {top}")
    wanted = [x for x in args.labels.split(",") if x]
    texts = {n.note_id: n.text for n in corpus.notes}
    types = {n.note_id: s.note_type for n, s in zip(corpus.notes, test, strict=True)}
    for lab in wanted:
        print(f"-- {lab}: gold spans not tagged {lab} (training types)")
        show_label_misses(corpus.gold, pred, texts, lab, args.show, types=types)
    if args.kinds:
        kinds = error_kinds(corpus.notes, corpus.gold, pred)
        print(f"-- strict errors by kind ({sum(kinds.values())} gold spans)")
        for (lab, k), c in kinds.most_common(args.kinds):
            print(f"  {lab:15s} {k:13s} {c}")
    for lk in [x for x in args.kind.split(",") if x]:
        lab, kind = lk.split(":")
        print(f"-- {lab} {kind} (training types)")
        show_gold(corpus.gold, pred, texts, args.show,
                  lambda g, ps, lab=lab, kind=kind: ps if g.label == lab and error_kind(g, ps) == kind else None, types)
    for pair in [x for x in args.pairs.split(",") if x]:
        gl, pl = pair.split(">")
        print(f"-- {gl} tagged {pl} (training types)")
        show_gold(corpus.gold, pred, texts, args.show,
                  lambda g, ps, gl=gl, pl=pl: [p for p in ps if p.label == pl] if g.label == gl and any(
                      p.label == pl for p in ps) else None, types)
    if args.readable:
        show_readable(corpus, pred, outs, bench.cfg.readable, types, args.readable)
    if args.json:
        Path(args.json).write_text(json.dumps({"aggregate": res, "confusions": {f"{g}>{p}": c for (g, p), c in
                                                                                 conf.items()}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
