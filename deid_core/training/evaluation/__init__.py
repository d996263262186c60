"""Scoring predicted PHI spans against gold (DESIGN.md §6): metrics, summary/table, significance."""

from deid_core.training.evaluation.metrics import METRICS, Counts, score_corpus, score_note, totals
from deid_core.training.evaluation.report import format_table, summary
from deid_core.training.evaluation.significance import approximate_randomization

__all__ = ["METRICS", "Counts", "approximate_randomization", "format_table", "score_corpus", "score_note",
           "summary", "totals"]
