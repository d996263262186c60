"""Rule tagger on the PhysioNet dev split: overlap recall / PPV per category, and throughput.

`python -m benchmarks rules [--data DIR] [--no-metadata] [--errors N]`. Overlap: a gold PHI
is found when a predicted span overlaps it; PPV = share of predicted spans overlapping a gold
span (PhysioNet's own scorer). Labels are compared at the category level, and the corpus's
coarse Location is compared with every LOCATION subtype (`physionet_label`). Throughput is
rule tagger + metadata matching alone on one core, over the whole split, best of 3 runs.
--errors prints missed / spurious spans with context to the terminal only (never to files).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path

from deid_core import taxonomy
from deid_core.doc import Doc
from deid_core.io.physionet import read_physionet
from deid_core.rules.tagger import RuleTagger
from deid_core.spans import Span

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "physionet-deid"


# PhysioNet's gold follows HIPAA for places: states and countries are not annotated.
NOT_PHYSIONET_PHI = frozenset({"STATE", "COUNTRY"})


def physionet_label(label: str) -> str | None:
    """A predicted label as the PhysioNet gold sees it: LOCATION subtypes -> LOCATION-OTHER;
    None for labels the corpus does not annotate (STATE, COUNTRY: not HIPAA PHI)."""
    if label in NOT_PHYSIONET_PHI:
        return None
    return "LOCATION-OTHER" if taxonomy.category_of(label) == "LOCATION" else label


def physionet_spans(spans: list[Span]) -> list[Span]:
    """Predictions mapped with physionet_label (unannotated labels dropped)."""
    out = []
    for s in spans:
        label = physionet_label(s.label)
        if label is not None:
            out.append(s.with_label(label))
    return out


def overlap_counts(gold: list[Span], pred: list[Span]) -> tuple[int, int, int, int]:
    """(gold found, gold total, predicted overlapping gold, predicted total) for one note."""
    found = sum(1 for g in gold if any(g.overlaps(p) for p in pred))
    good = sum(1 for p in pred if any(p.overlaps(g) for g in gold))
    return found, len(gold), good, len(pred)


def evaluate(tagger: RuleTagger, corpus) -> dict:
    """Overall and per-category overlap recall and PPV."""
    tot = Counter()
    cats: dict[str, Counter] = {}
    errors: list[tuple[str, Span, str]] = []
    for note in corpus.notes:
        pred = physionet_spans(tagger.tag(Doc(note)))
        gold = corpus.gold.get(note.note_id, [])
        f, g, ok, p = overlap_counts(gold, pred)
        tot.update(found=f, gold=g, good=ok, pred=p)
        for cat in taxonomy.categories():
            gc = [s for s in gold if taxonomy.category_of(s.label) == cat]
            pc = [s for s in pred if taxonomy.category_of(s.label) == cat]
            c = cats.setdefault(cat, Counter())
            c.update(found=sum(1 for s in gc if any(s.overlaps(x) for x in pred)), gold=len(gc),
                     good=sum(1 for s in pc if any(s.overlaps(x) for x in gold)), pred=len(pc))
        errors += [(note.note_id, s, "FN") for s in gold if not any(s.overlaps(x) for x in pred)]
        errors += [(note.note_id, s, "FP") for s in pred if not any(s.overlaps(x) for x in gold)]
    return {"total": tot, "categories": cats, "errors": errors}


def _ratio(a: int, b: int) -> float:
    return a / b if b else float("nan")


def throughput(tagger: RuleTagger, notes, repeats: int = 3) -> float:
    """MB of note text per second (best of `repeats` passes over all notes, fresh Docs)."""
    size = sum(len(n.text.encode("utf-8")) for n in notes)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for n in notes:
            tagger.tag(Doc(n))
        best = min(best, time.perf_counter() - t0)
    return size / best / 1e6


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
    tagger = RuleTagger.from_config({"rules": {"metadata": not args.no_metadata}})
    res = evaluate(tagger, corpus)
    t = res["total"]
    print(f"notes {len(corpus.notes)}  gold {t['gold']}  predicted {t['pred']}")
    print(f"overlap recall {_ratio(t['found'], t['gold']):.4f}  PPV {_ratio(t['good'], t['pred']):.4f}")
    print(f"{'category':<12}{'gold':>6}{'recall':>9}{'pred':>7}{'PPV':>8}")
    for cat, c in res["categories"].items():
        if c["gold"] or c["pred"]:
            print(f"{cat:<12}{c['gold']:>6}{_ratio(c['found'], c['gold']):>9.3f}{c['pred']:>7}{_ratio(c['good'], c['pred']):>8.3f}")
    if args.errors:
        by_id = {n.note_id: n for n in corpus.notes}
        for nid, s, kind in res["errors"][: args.errors]:
            text = by_id[nid].text
            ctx = (text[max(0, s.start - 30):s.start] + "[[" + text[s.start:s.end] + "]]" + text[s.end:s.end + 20])
            print(kind, s.label, s.source, repr(ctx))
    if not args.no_speed:
        mbps = throughput(tagger, corpus.notes)
        print(f"throughput {mbps:.2f} MB/s (rules + metadata, one core)")
    return 0
