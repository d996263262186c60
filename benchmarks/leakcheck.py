"""Leak check: de-identify synthetic notes with their gold spans as the tagger and count gold
original strings (length >= 3) that survive in the output of their note (as whole words,
case-insensitive), excluding strings that also occur in the note outside PHI spans.

    python -m benchmarks leakcheck [--notes 10000] [--seed 7] [--mode surrogate] [--profile default]

Prints counts by label only (never the strings). Exit 1 when an original survives in place
(collisions, where one span's surrogate happens to equal another real string of the note, e.g.
a shifted date equal to another date of the patient, and bare years kept in place, which the
safe_harbor profile does on purpose, are counted and reported separately).
"""

from __future__ import annotations

import argparse
import collections
import time

from benchmarks._corpus import synthetic_notes
from deid_core.config import load_config
from deid_core.engine.pipeline import Deidentifier, LongestMerge
from deid_core.engine.surrogates.leaks import leaks_of
from deid_core.engine.surrogates.modes import ModeReplacer
from deid_core.keys import DEMO_KEY
from deid_core.spans import Span, resolve_overlaps


class GoldTagger:
    """The gold spans of the note being processed (set before each call)."""

    name = "gold"
    needs: dict[str, str] = {}
    provides: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.spans: list[Span] = []

    def run(self, doc, state) -> list[Span]:
        return list(self.spans)


def main(argv: list[str]) -> int:
    """Run the leak check; print counts and timings."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks leakcheck")
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--mode", default="surrogate", choices=["surrogate", "redact", "hash"])
    ap.add_argument("--profile", default="default", choices=["default", "safe_harbor"])
    args = ap.parse_args(argv)

    t0 = time.process_time()
    source, corpus = synthetic_notes(args.notes, args.seed)
    t_gen = time.process_time() - t0
    gold = GoldTagger()
    replacer = ModeReplacer(load_config({"surrogates": {"profile": args.profile}}), DEMO_KEY, args.mode)
    deid = Deidentifier([gold], key=DEMO_KEY, replacer=replacer, merge=LongestMerge())
    by_label: collections.Counter[tuple[str, str]] = collections.Counter()
    n_spans = quarantined = leaky_notes = 0
    t_rep = 0.0
    for note, spans in corpus:
        gold.spans = resolve_overlaps(spans)
        t1 = time.process_time()
        res = deid.process(note)
        t_rep += time.process_time() - t1
        if not res.ok:
            quarantined += 1
            continue
        n_spans += len(gold.spans)
        found = leaks_of(note, gold.spans, res.text, [(a.out_start, a.out_end) for a in res.spans])
        by_label.update(found)
        leaky_notes += bool(found)
    total = sum(by_label.values())
    kinds = collections.Counter()
    for (_, kind), c in by_label.items():
        kinds[kind] += c
    own = kinds["in place"]
    print(f"leakcheck: generator={source} notes={len(corpus)} seed={args.seed} mode={args.mode} "
          f"profile={args.profile}")
    print(f"  gold spans={n_spans} quarantined notes={quarantined}")
    print(f"  leaks (original >= 3 chars surviving in its note's output)={total} in {leaky_notes} notes")
    print(f"    surviving in place (own replacement or around it)={own}; "
          f"only inside another span's surrogate (collision)={kinds['collision']}; "
          f"bare years kept={kinds['year kept']}")
    for (label, kind), c in sorted(by_label.items()):
        print(f"    {label} {kind}: {c}")
    print(f"  generation {t_gen:.1f}s CPU; de-identification {t_rep:.2f}s CPU "
          f"({len(corpus) / max(t_rep, 1e-9):.0f} notes/s, {n_spans / max(t_rep, 1e-9):.0f} spans/s)")
    strict_years = args.profile != "safe_harbor"
    return 1 if own or quarantined or (strict_years and kinds["year kept"]) else 0
