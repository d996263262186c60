"""`deid eval`: score predicted PHI spans against gold spans on the same notes (docs/evaluation.md)."""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from deid_core.app.cli import UsageError
from deid_core.io.formats import load_notes, load_spans
from deid_core.training.evaluation import (
    METRICS,
    approximate_randomization,
    format_table,
    score_corpus,
    summary,
)
from deid_core.training.evaluation.metrics import LABEL_SETS

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `deid eval`."""
    parser.add_argument("--notes", help="notes Parquet (note_id, text) or a corpus folder holding the text; "
                                        "default: the --gold corpus when it holds the text")
    parser.add_argument("--gold", required=True, help="gold spans: Parquet (note_id, start, end, label) "
                                                      "or an i2b2 / BRAT / PhysioNet corpus")
    parser.add_argument("--pred", required=True, help="predicted spans, same formats, or a job's spans/ "
                                                      "audit table or output folder")
    parser.add_argument("--labels", choices=LABEL_SETS, default="all",
                        help="score all labels, or only those HIPAA requires removing")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON ('-' = stdout)")
    parser.add_argument("--by-category", action="store_true", help="group per-label results by main category")
    parser.add_argument("--compare", metavar="PRED2",
                        help="a second system's spans: score it too and test each metric's F1 difference")
    parser.add_argument("--rounds", type=int, default=9999, help="approximate randomization shuffles")
    parser.add_argument("--seed", type=int, default=0, help="seed of the randomization test")


def _load_spans(option: str, path: str) -> dict:
    """Spans of one input; problems become one-line errors naming the option and file."""
    try:
        return load_spans(path)
    except (ValueError, FileNotFoundError, KeyError) as exc:
        raise UsageError(f"{option} {path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    """Load notes, gold and predictions, score them, print the table and write the JSON."""
    notes_path = args.notes or args.gold
    try:
        notes = load_notes(notes_path)
    except (ValueError, FileNotFoundError) as exc:
        hint = "" if args.notes else " (no --notes given, so the text was looked for in --gold)"
        raise UsageError(f"--notes {notes_path}: {exc}{hint}") from None
    if not notes:
        raise UsageError(f"--notes {notes_path}: no notes with text")
    texts: dict[str, str] = {}
    for n in notes:
        if n.note_id in texts:
            raise UsageError(f"--notes {notes_path}: duplicate note_id {n.note_id!r}")
        if n.text is None:
            raise UsageError(f"--notes {notes_path}: note {n.note_id!r} has no text (column text is null)")
        texts[n.note_id] = n.text
    if args.rounds < 1:
        raise UsageError("--rounds must be at least 1")
    gold = _load_spans("--gold", args.gold)
    systems = [("--pred", args.pred)] + ([("--compare", args.compare)] if args.compare else [])
    scores = []
    for option, path in systems:
        pred = _load_spans(option, path)
        try:
            scores.append(score_corpus(texts, gold, pred, args.labels,
                                       names=(f"--gold {args.gold}", f"{option} {path}")))
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    log.info("scored %d notes, %d gold spans, label set %s", len(texts),
             sum(len(v) for v in gold.values()), args.labels)
    result = summary(scores[0], args.by_category)
    print(format_table(result, args.by_category, title=f"PRED {args.pred} ({args.labels} labels)"))
    if args.compare:
        other = summary(scores[1], args.by_category)
        print(format_table(other, args.by_category, title=f"PRED2 {args.compare} ({args.labels} labels)"))
        p_values = {m: approximate_randomization(scores[0], scores[1], m, args.rounds, args.seed) for m in METRICS}
        print(f"approximate randomization, {args.rounds} shuffles, seed {args.seed}: F1 PRED vs PRED2")
        print(f"{'metric':<14}{'PRED':>8}{'PRED2':>8}{'p':>9}")
        for m in METRICS:
            print(f"{m:<14}{result[m]['f1']:>8.4f}{other[m]['f1']:>8.4f}{p_values[m]:>9.4f}")
        result["compare"] = {"pred2": {m: other[m] for m in METRICS}, "p_values": p_values,
                             "rounds": args.rounds, "seed": args.seed}
    if args.json:
        text = json.dumps(result, indent=2) + "\n"
        if args.json == "-":
            print(text, end="")
        else:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).write_text(text, encoding="utf-8")
    return 0
