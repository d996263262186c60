"""Leave-phrasings-out probe (issue 14, round 7): notes of conf/evaluation/layout_probe.toml, a template family
never in training, scored per label with a bundle, so a gain from new training phrasings can be told
from fitting them (the probe's phrasings are written apart from the training snippets).

    .venv/bin/python scripts/probe_layouts.py --bundle DIR [--seed 27127] [--notes 600] [--labels CITY,FAX] [--show 20]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from pathlib import Path

from deid_core.bundle import load_bundle
from deid_core.config import conf_dir
from deid_core.training.corpus_eval import aggregate, run_pipeline
from deid_core.training.generalization import Bench
from deid_core.training.generalization_config import settings
from deid_core.training.generalization_report import DEFAULT_CACHE, DEFAULT_DATA
from deid_core.training.synth.generate import SynthNote, patient_identity
from deid_core.training.synth.lexicon import pools
from deid_core.training.synth.notetypes import load_family
from deid_core.training.synth.output import to_corpus
from deid_core.training.synth.template import render
from deid_core.training.synth.values import NoteValues

PROBE = "evaluation/layout_probe.toml"


def probe_notes(n_notes: int, seed: int, per_patient: int = 4) -> list[SynthNote]:
    """n_notes notes of the probe family: the generator's patients and values, the probe's templates only."""
    fam = load_family(conf_dir() / PROBE)
    out: list[SynthNote] = []
    for i in range((n_notes + per_patient - 1) // per_patient):
        rng, pt = patient_identity(seed, i)
        for k in range(min(per_patient, n_notes - len(out))):
            day = pt.first_date + dt.timedelta(days=7 * k)
            text, spans = render(fam.compose(rng), NoteValues(rng, pt, day, k, pools(seed)), rng,
                                 case=fam.case(rng), glue_p=fam.glue, sep=fam.sep)
            out.append(SynthNote(f"Q{i:07d}-{k:03d}", f"Q{i:07d}", day, fam.name, text, tuple(spans),
                                 pt.person.first, pt.person.last, None, fam.family))
    return out


def main() -> None:
    from inner_layouts import (
        show_label_misses,  # scripts/, beside this file (on sys.path when run as a script)
    )

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--seed", type=int, default=27127)
    ap.add_argument("--notes", type=int, default=600)
    ap.add_argument("--labels", default="")
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args()
    if not Path(args.bundle).is_dir():
        print(f"probe_layouts: --bundle {args.bundle}: not a directory", file=sys.stderr)
        sys.exit(2)
    bench = Bench(settings(False, None, "previous"), DEFAULT_DATA, DEFAULT_CACHE, False)
    bundle = load_bundle(args.bundle)
    corpus = to_corpus(probe_notes(args.notes, args.seed))
    pred, outs = run_pipeline(bench.deid(bundle), corpus.notes)
    rep = aggregate(corpus.notes, corpus.gold, pred, outs, bench.cfg.readable)["report"]
    print(f"probe notes {len(corpus.notes)} seed {args.seed} bundle {bundle.id[:12]}")
    print("bin-tok R/P {:.3f}/{:.3f} strict F1 {:.3f}".format(
        rep["binary_token"]["recall"], rep["binary_token"]["precision"], rep["strict"]["f1"]))
    per, strict = rep["per_label"]["token"], rep["per_label"]["strict"]
    for lab in sorted(per):
        v = per[lab]
        print(f"{lab:15s} tokR {v['recall']:.3f} strictF1 {strict.get(lab, {}).get('f1', 0):.3f} n {v['tp'] + v['fn']:5d}")
    texts = {n.note_id: n.text for n in corpus.notes}
    for lab in [x for x in args.labels.split(",") if x]:
        print(f"-- {lab}: gold spans not tagged {lab} with its extent")
        show_label_misses(corpus.gold, pred, texts, lab, args.show, exact=True)


if __name__ == "__main__":
    main()
