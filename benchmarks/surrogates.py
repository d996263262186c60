"""Replacement throughput of the output modes on synthetic notes with gold spans.

    python -m benchmarks surrogates [--notes 5000] [--seed 3] [--repeat 2]

Times the Replacer alone (no tagging) per mode and per label family, in one process, as process
CPU time (the shared machine is noisy; best of --repeat); prints
notes/s and spans/s. The leak check lives in benchmarks/leakcheck.py.
"""

from __future__ import annotations

import argparse
import collections
import time

from benchmarks._corpus import synthetic_notes
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.replace import apply_replacements
from deid_core.engine.surrogates.modes import ModeReplacer
from deid_core.keys import DEMO_KEY
from deid_core.spans import resolve_overlaps
from deid_core.taxonomy import category_of


def consistency(corpus) -> None:
    """Each patient's notes in two halves, fresh replacer and caches per half (as on two
    executors): how many (patient, label, original) get more than one surrogate."""
    from deid_core.engine.surrogates import dates, names

    by_patient: dict[str, list] = collections.defaultdict(list)
    for note, spans in corpus:
        by_patient[note.patient_id].append((note, resolve_overlaps(spans)))
    seen: dict[tuple[str, str, str], set[str]] = collections.defaultdict(set)
    for pid, notes in by_patient.items():
        half = len(notes) // 2
        for part in (notes[:half], notes[half:]):
            names._letter_map.cache_clear()
            dates._shift.cache_clear()
            rep = ModeReplacer(load_config(), DEMO_KEY, "surrogate")
            for note, spans in part:
                for s, r in zip(spans, rep(Doc(note), spans), strict=True):
                    seen[(pid, s.label, note.text[s.start:s.end])].add(r)
    split = collections.Counter(k[1] for k, v in seen.items() if len(v) > 1)
    n_split = sum(split.values())
    print(f"  consistency over halves: {n_split} of {len(seen)} (patient, label, original) got >1 "
          f"surrogate ({n_split / max(len(seen), 1):.3%}; collision re-draws) {dict(split)}")


def main(argv: list[str]) -> int:
    """Run the throughput benchmark and print the numbers."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks surrogates")
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args(argv)
    source, corpus = synthetic_notes(args.notes, args.seed)
    docs = [(Doc(n), resolve_overlaps(s)) for n, s in corpus]
    n_spans = sum(len(s) for _, s in docs)
    print(f"surrogates: generator={source} notes={len(docs)} spans={n_spans} repeat={args.repeat}")
    for mode in ("surrogate", "hash", "redact"):
        t0 = time.process_time()
        rep = ModeReplacer(load_config(), DEMO_KEY, mode)
        t_init = time.process_time() - t0
        best = float("inf")
        for _ in range(args.repeat):
            rep = ModeReplacer(load_config(), DEMO_KEY, mode)  # fresh per pass: no parse cache carried over
            t0 = time.process_time()
            for doc, spans in docs:
                apply_replacements(doc.text, spans, rep(doc, spans))
            best = min(best, time.process_time() - t0)
        print(f"  {mode:9s} init {t_init * 1000:.0f} ms; {len(docs) / best:,.0f} notes/s, "
              f"{n_spans / best:,.0f} spans/s ({best / max(n_spans, 1) * 1e6:.1f} us/span)")
    consistency(corpus)
    # Per label family, surrogate mode: where the time goes.
    rep = ModeReplacer(load_config(), DEMO_KEY, "surrogate")
    by_cat: dict[str, list] = collections.defaultdict(list)
    for doc, spans in docs:
        for s in spans:
            by_cat[category_of(s.label)].append((doc, s))
    for cat, items in sorted(by_cat.items()):
        t0 = time.process_time()
        for doc, s in items:
            rep(doc, [s])
        dt_ = time.process_time() - t0
        print(f"    {cat:10s} {len(items):7d} spans {dt_ / len(items) * 1e6:7.1f} us/span (one-span calls)")
    return 0
