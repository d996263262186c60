"""Rule tagger on the PhysioNet dev split: overlap recall / PPV per category, and throughput.

`python -m benchmarks rules [--data DIR] [--no-metadata] [--errors N]`. Overlap
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


def main(argv: list[str]) -> int:
    """Print the recall/PPV table and the throughput."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks rules")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--no-metadata", action="store_true")
    ap.add_argument("--errors", type=int, default=0, help="print up to N errors with context (terminal only)")
    ap.add_argument("--no-speed", action="store_true")
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
    if not args.no_speed:
        wall, cpu = throughput(tagger, corpus.notes)
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"throughput {wall:.2f} MB/s wall, {cpu:.2f} MB/s CPU time "
              f"(rules + metadata, one core; load average {load:.1f})")
    return 0
