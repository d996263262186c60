"""Rule tagger on the PhysioNet dev split: overlap recall / PPV per category, and throughput.

`python -m benchmarks rules [--data DIR] [--no-metadata] [--errors N] [--per-rule N]`. Overlap
(deid_core.training.evaluation.metrics.overlap, PhysioNet's own scorer): a gold PHI is found when a
predicted span overlaps it; PPV = share of predicted spans overlapping a gold span. Labels are compared at the category level, and the corpus's
coarse Location is compared with every LOCATION subtype (`physionet_label`). Throughput is
rule tagger + metadata matching alone on one core, over the whole split, best of 3 runs.
--errors prints missed / spurious spans with context to the terminal only (never to files).
"""

from __future__ import annotations

import argparse
import os
import time
from functools import lru_cache
from pathlib import Path

from deid_core import taxonomy
from deid_core.config import load_config
from deid_core.doc import Doc
from deid_core.engine.profiles import OutputProfile
from deid_core.engine.rules.tagger import RuleTagger
from deid_core.io.physionet import read_physionet
from deid_core.spans import Span
from deid_core.training.evaluation.metrics import Counts, overlap

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "physionet-deid"


def physionet_label(label: str) -> str:
    """A predicted label as the PhysioNet gold sees it: LOCATION subtypes -> LOCATION-OTHER."""
    return "LOCATION-OTHER" if taxonomy.category_of(label) == "LOCATION" else label


def physionet_spans(text: str, spans: list[Span]) -> list[Span]:
    """Predictions as PhysioNet's gold marks them: what the `physionet` output profile drops
    (STATE, COUNTRY, PROFESSION, ages under 90, weekdays alone) left out, then physionet_label."""
    return [s.with_label(physionet_label(s.label)) for s in _physionet_profile().select(text, spans)]


@lru_cache(maxsize=1)
def _physionet_profile() -> OutputProfile:
    return OutputProfile(load_config().surrogates.profiles["physionet"])


def evaluate(tagger: RuleTagger, corpus) -> dict:
    """Overall and per-category overlap counts (deid_core.training.evaluation.metrics.overlap), plus errors."""
    tot = Counts()
    cats: dict[str, Counts] = {c: Counts() for c in taxonomy.categories()}
    errors: list[tuple[str, Span, str]] = []
    for note in corpus.notes:
        pred = physionet_spans(note.text, tagger.tag(Doc(note)))
        gold = corpus.gold.get(note.note_id, [])
        for label, counts in overlap(gold, pred).items():
            tot = tot + counts
            cat = taxonomy.category_of(label)
            cats[cat] = cats[cat] + counts
        errors += [(note.note_id, s, "FN") for s in gold if not any(s.overlaps(x) for x in pred)]
        errors += [(note.note_id, s, "FP") for s in pred if not any(s.overlaps(x) for x in gold)]
    return {"total": tot, "categories": cats, "errors": errors}


def _ratio(a: int, b: int) -> float:
    return a / b if b else float("nan")


def throughput(tagger: RuleTagger, notes, repeats: int = 3) -> tuple[float, float]:
    """(wall, CPU) MB of note text per second: best of `repeats` passes over all notes, fresh Docs.

    The CPU figure (time.process_time) is the one to compare on a shared machine: it does not
    count the time other processes hold the core."""
    size = sum(len(n.text.encode("utf-8")) for n in notes)
    best_wall = best_cpu = float("inf")
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        for n in notes:
            tagger.tag(Doc(n))
        best_wall = min(best_wall, time.perf_counter() - w0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return size / best_wall / 1e6, size / best_cpu / 1e6


def _best_ns(fn, repeats: int) -> int:
    """CPU nanoseconds of the fastest of `repeats` calls of fn (this thread only)."""
    best = None
    for _ in range(repeats):
        t0 = time.thread_time_ns()
        fn()
        took = time.thread_time_ns() - t0
        best = took if best is None else min(best, took)
    return best or 0


def per_rule(tagger: RuleTagger, notes, repeats: int = 3) -> list[tuple[str, float, str]]:
    """(rule id, µs per note, what it did) for every regex rule, each timed alone over all notes (one clock
    read per pass, so no per-call clock cost): its gates (`requires`, `digits`, `needs`), then its search
    (scan rules, on the notes its gates let through) or its matches at its trigger positions (triggered
    rules), spans and filters included. Anchors and the trigger automaton are shared and not counted. A scan
    rule is timed on the notes the screen (one RE2 Set pass, screen.py) lets it into (a triggered rule: where its
    `needs` is screened); the pass is a row of its own."""
    from deid_core.engine.rules.prefilter import gate_shape

    docs = [Doc(n) for n in notes]
    texts = [d.text for d in docs]
    shapes = [gate_shape(t) for t in texts]
    starts: list[dict[int, list[int]]] = []  # per note: rule -> trigger positions (anchored rules: -1)
    for d in docs:
        per, anchored = tagger.trigger_starts(d)
        per.update(dict.fromkeys(anchored - per.keys(), [-1]))
        starts.append(per)
    possible = [tagger.screen.possible(t) for t in texts]
    screen_ns = _best_ns(lambda: [tagger.screen.possible(t) for t in texts], repeats)
    out = [("(screen: one RE2 Set pass)", screen_ns / len(notes) / 1000,
            f"{len(tagger.screen.screened)} rules screened")]
    for i, rule in enumerate(tagger.rules):
        need, run = tagger.need_patterns[i], tagger.digit_runs[i]
        has = [k for k in range(len(texts)) if not (rule.triggers or rule.anchors) or i in starts[k]]
        has = [k for k in has if possible[k] is None or i in possible[k]]  # triggered rules: by their `needs`
        has = [k for k in has if not rule.requires or any(r in texts[k] for r in rule.requires)]
        has = [k for k in has if not run or run in shapes[k]]
        gate_ns = _best_ns(lambda has=has, need=need: [need.search(texts[k]) for k in has], repeats) if need else 0
        passed = [k for k in has if need is None or need.search(texts[k])]
        phi: list = []
        if rule.triggers:
            work_ns = _best_ns(lambda passed=passed, rule=rule, i=i, phi=phi: [tagger._apply_at(
                rule, sorted(set(starts[k][i])), texts[k], phi, phi) for k in passed], repeats)
            tries = sum(len(set(starts[k][i])) for k in passed)
            what = f"{len(passed)} notes pass, {tries} trigger tries"
        else:
            pattern = tagger.scan_patterns[i]
            work_ns = _best_ns(lambda passed=passed, rule=rule, pattern=pattern, phi=phi: [tagger._apply(
                rule, pattern.finditer(texts[k]), texts[k], phi, phi) for k in passed], repeats)
            what = f"{len(passed)} notes searched"
        out.append((rule.id, (gate_ns + work_ns) / len(notes) / 1000, what + (f", needs {gate_ns / len(notes) / 1000:.1f}" if need else "")))
    return sorted(out, key=lambda r: -r[1])


def main(argv: list[str]) -> int:
    """Print the recall/PPV table and the throughput."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks rules")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--no-metadata", action="store_true")
    ap.add_argument("--errors", type=int, default=0, help="print up to N errors with context (terminal only)")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--per-rule", type=int, default=0, metavar="N",
                    help="print the N costliest regex rules (CPU µs per note, each rule timed alone)")
    args = ap.parse_args(argv)
    if not (args.data / "id.text").is_file():
        print(f"rules benchmark: no PhysioNet data at {args.data}; skipped")
        return 0
    corpus = read_physionet(args.data)
    tagger = RuleTagger(load_config({"rules": {"metadata": not args.no_metadata}}).rules)
    res = evaluate(tagger, corpus)
    t = res["total"]
    print(f"notes {len(corpus.notes)}  gold {t.tp + t.fn}  predicted {t.ptp + t.fp}")
    print(f"overlap recall {t.recall:.4f}  PPV {t.precision:.4f}")
    print(f"{'category':<12}{'gold':>6}{'recall':>9}{'pred':>7}{'PPV':>8}")
    for cat, c in res["categories"].items():
        if c.tp + c.fn or c.ptp + c.fp:
            print(f"{cat:<12}{c.tp + c.fn:>6}{_ratio(c.tp, c.tp + c.fn):>9.3f}"
                  f"{c.ptp + c.fp:>7}{_ratio(c.ptp, c.ptp + c.fp):>8.3f}")
    if args.errors:
        by_id = {n.note_id: n for n in corpus.notes}
        for nid, s, kind in res["errors"][: args.errors]:
            text = by_id[nid].text
            ctx = (text[max(0, s.start - 30):s.start] + "[[" + text[s.start:s.end] + "]]" + text[s.end:s.end + 20])
            print(kind, s.label, s.source, repr(ctx))
    if args.per_rule:
        rows = per_rule(tagger, corpus.notes)
        print(f"per rule, µs per note (all {len(rows) - 1} regex rules and the screen: {sum(r[1] for r in rows):.0f}), the {args.per_rule} costliest:")
        for rid, us, what in rows[: args.per_rule]:
            print(f"  {rid:34s} {us:7.1f}  {what}")
    if not args.no_speed:
        wall, cpu = throughput(tagger, corpus.notes)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"throughput {wall:.2f} MB/s wall, {cpu:.2f} MB/s CPU time "
              f"(rules + metadata, one core; load average {load:.1f})")
    return 0
