"""The evaluation's JSON summary (DESIGN.md §4 keys) and its readable table, recall first."""

from __future__ import annotations

from collections.abc import Mapping

from deid_core.taxonomy import categories, category_of
from deid_core.training.evaluation.metrics import (
    METRICS,
    Counts,
    NoteScores,
    label_order,
    micro,
    totals,
)

TABLE_METRICS = ("strict", "token", "overlap")  # per-label columns of the readable table


def counts_json(c: Counts) -> dict[str, float | int]:
    """{precision, recall, f1, tp, fp, fn} of one Counts."""
    return {"precision": c.precision, "recall": c.recall, "f1": c.f1, "tp": c.tp, "fp": c.fp, "fn": c.fn}


def category_counts(by_label: Mapping[str, Counts]) -> dict[str, Counts]:
    """Per-label Counts summed into main categories (labels outside the taxonomy under OTHER)."""
    out: dict[str, Counts] = {}
    for label, c in by_label.items():
        try:
            cat = category_of(label)
        except KeyError:
            cat = "OTHER"
        out[cat] = out.get(cat, Counts()) + c
    order = {c: i for i, c in enumerate(categories())}
    return {k: out[k] for k in sorted(out, key=lambda x: (order.get(x, len(order)), x))}


def summary(scores: Mapping[str, NoteScores], by_category: bool = False) -> dict:
    """The JSON summary: one entry per metric, then per_label (and per_category when asked)."""
    by_label = {m: totals(scores, m) for m in METRICS}
    out: dict = {m: counts_json(micro(by_label[m])) for m in METRICS}
    out["per_label"] = {m: {lab: counts_json(by_label[m][lab]) for lab in label_order(by_label[m])}
                        for m in METRICS}
    if by_category:
        out["per_category"] = {m: {cat: counts_json(c) for cat, c in category_counts(by_label[m]).items()}
                               for m in METRICS}
    return out


def format_table(result: Mapping, by_category: bool = False, title: str = "") -> str:
    """Readable tables: every metric (recall first), then per label or per category."""
    lines = [title] if title else []
    lines.append(f"{'metric':<14}{'recall':>8}{'prec':>8}{'f1':>8}{'tp':>8}{'fp':>8}{'fn':>8}")
    for m in METRICS:
        r = result[m]
        lines.append(f"{m:<14}{r['recall']:>8.4f}{r['precision']:>8.4f}{r['f1']:>8.4f}"
                     f"{r['tp']:>8}{r['fp']:>8}{r['fn']:>8}")
    key = "per_category" if by_category else "per_label"
    groups = label_order({g for m in TABLE_METRICS for g in result[key][m]}) if not by_category else \
        list(dict.fromkeys(g for m in TABLE_METRICS for g in result[key][m]))
    head = f"{'category' if by_category else 'label':<16}{'gold':>6}"
    for m in TABLE_METRICS:
        head += f"  {m + ' R':>10}{'P':>7}{'F1':>7}"
    lines += ["", head]
    for g in groups:
        strict = result[key]["strict"].get(g)
        n_gold = strict["tp"] + strict["fn"] if strict else 0
        row = f"{g:<16}{n_gold:>6}"
        for m in TABLE_METRICS:
            r = result[key][m].get(g)
            row += f"  {r['recall']:>10.4f}{r['precision']:>7.4f}{r['f1']:>7.4f}" if r else f"  {'-':>10}{'-':>7}{'-':>7}"
        lines.append(row)
    return "\n".join(lines) + "\n"
