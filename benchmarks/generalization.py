"""Generalization benchmark (issue 14): blind PhysioNet patients, unseen synthetic layouts,
re-inserted PHI strings, names readable in the output. Recall first.

    python -m benchmarks generalization [--part blind|layouts|reinsert|readable] [--quick] [--json FILE]

Logic in deid_core.training.generalization; the table and options in
deid_core.training.generalization_report; details in docs/evaluation.md.
"""

from __future__ import annotations

from deid_core.training.generalization_report import main as _main


def main(argv: list[str]) -> int:
    """Run the benchmark (see the module docstring)."""
    return _main(argv)
