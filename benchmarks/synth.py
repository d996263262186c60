"""Benchmark of the synthetic corpus generator: local notes/s (one core), exactness, unannotated-PHI
audit, label table, per-note-type table.

    python -m benchmarks synth [--notes 10000] [--seed 0] [--markdown] [--types]
"""

from __future__ import annotations

import argparse
import collections
import time

from deid_core.spans import trim_span, validate_spans
from deid_core.taxonomy import category_of, labels


def label_table(notes) -> str:
    """A Markdown table: label, category, spans, share, notes containing it."""
    counts = collections.Counter(s.label for n in notes for s in n.spans)
    in_notes = collections.Counter(lab for n in notes for lab in {s.label for s in n.spans})
    total = sum(counts.values()) or 1
    rows = ["| label | category | spans | % of spans | notes with it |", "|---|---|---:|---:|---:|"]
    for lab in sorted(labels(), key=lambda x: (-counts[x], x)):
        rows.append(f"| {lab} | {category_of(lab)} | {counts[lab]} | {100 * counts[lab] / total:.2f} | {in_notes[lab]} |")
    rows.append(f"| **total** | | {total} | 100.00 | {sum(1 for n in notes if n.spans)} |")
    return "\n".join(rows)


def type_table(notes) -> str:
    """A Markdown table per note type: families, notes, spans, spans per note, its most frequent labels."""
    by_type: dict[str, list] = collections.defaultdict(list)
    for n in notes:
        by_type[n.note_type].append(n)
    rows = ["| note type | families | notes | spans | spans/note | top labels |", "|---|---|---:|---:|---:|---|"]
    for t in sorted(by_type):
        ns = by_type[t]
        counts = collections.Counter(s.label for n in ns for s in n.spans)
        fams = ", ".join(sorted({n.family.split(".", 1)[1] for n in ns}))
        top = ", ".join(f"{lab} {c}" for lab, c in counts.most_common(4))
        rows.append(f"| {t} | {fams} | {len(ns)} | {sum(counts.values())} | {sum(counts.values()) / len(ns):.1f} | {top} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    """Generate, time, verify every span, print numbers and the label table."""
    from deid_core.training.synth import generate
    from deid_core.training.synth.lexicon import pools

    p = argparse.ArgumentParser(prog="benchmarks synth")
    p.add_argument("--notes", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--markdown", action="store_true", help="print the label distribution table")
    p.add_argument("--types", action="store_true", help="print the per-note-type table")
    args = p.parse_args(argv)
    from deid_core.training.synth.audit import audit_corpus
    from deid_core.training.synth.catalog import catalog

    t0 = time.process_time()
    pools(args.seed)
    t_pool = time.process_time() - t0
    surfaces: list[list[str]] = []
    t0, w0 = time.process_time(), time.perf_counter()
    notes = generate(args.notes, seed=args.seed, surfaces=surfaces)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    n_spans = 0
    for note, surf in zip(notes, surfaces, strict=True):
        validate_spans(note.spans, len(note.text))
        for s, expected in zip(note.spans, surf, strict=True):
            if note.text[s.start:s.end] != expected or trim_span(s, note.text) != s:
                raise AssertionError(f"inexact span in {note.note_id} at [{s.start}, {s.end})")
        n_spans += len(note.spans)
    chars = sum(len(n.text) for n in notes)
    print(f"synth: {len(notes)} notes, {n_spans} gold spans (all exact, trimmed, non-overlapping), "
          f"{chars / len(notes):.0f} chars/note, max {max(len(n.text) for n in notes)} chars, "
          f"{sum(1 for n in notes if not n.spans)} notes without PHI")
    print(f"synth: pools {t_pool:.2f} s CPU; generation {cpu:.2f} s CPU ({len(notes) / cpu:.0f} notes/s per core), "
          f"{wall:.2f} s wall")
    rows = catalog()
    print(f"synth: {len({r.note_type for r in rows})} note types, {len(rows)} template families, "
          f"{sum(r.layouts for r in rows)} layouts, {sum(r.templates for r in rows)} templates; "
          f"{len({n.family for n in notes})} families and {len({n.note_type for n in notes})} types in this corpus")
    t0 = time.process_time()
    findings = audit_corpus(notes, args.seed)
    print(f"synth: unannotated PHI-like strings outside gold spans: {len(findings)} "
          f"(audit {time.process_time() - t0:.2f} s CPU)")
    if args.markdown:
        print(label_table(notes))
    if args.types:
        print(type_table(notes))
    return 0
