"""Approximate randomization test (Noreen 1989; Yeh 2000) for the F1 difference of two systems."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from deid_core.training.evaluation.metrics import NoteScores, micro

_BATCH = 512  # shuffles per vectorized step: bounds memory at _BATCH x notes


def _f1(c: np.ndarray) -> np.ndarray:
    """F1 of rows of summed counts [tp, fp, fn, ptp], with the vacuous conventions of Counts."""
    tp, fp, fn, ptp = c[..., 0], c[..., 1], c[..., 2], c[..., 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(ptp + fp > 0, ptp / (ptp + fp), 1.0)
        r = np.where(tp + fn > 0, tp / (tp + fn), 1.0)
        return np.where(p + r > 0, 2 * p * r / (p + r), 0.0)


def _matrix(scores: Mapping[str, NoteScores], metric: str, ids: list[str]) -> np.ndarray:
    """notes x [tp, fp, fn, ptp] micro counts of one metric."""
    rows = []
    for nid in ids:
        c = micro(scores[nid][metric])
        rows.append((c.tp, c.fp, c.fn, c.ptp))
    return np.asarray(rows, dtype=np.float64).reshape(len(ids), 4)


def approximate_randomization(a: Mapping[str, NoteScores], b: Mapping[str, NoteScores], metric: str,
                              n: int = 9999, seed: int = 0) -> float:
    """Two-sided p-value that systems a and b differ in `metric` F1, swapping per-note outcomes at random."""
    if set(a) != set(b):
        raise ValueError(f"the two systems were scored on different notes ({len(a)} vs {len(b)})")
    ids = sorted(a)
    ma, mb = _matrix(a, metric, ids), _matrix(b, metric, ids)
    observed = abs(_f1(ma.sum(0)) - _f1(mb.sum(0)))
    diff = mb - ma
    rng = np.random.default_rng(seed)
    at_least, done = 0, 0
    while done < n:
        k = min(_BATCH, n - done)
        swap = (rng.random((k, len(ids))) < 0.5).astype(np.float64)
        moved = swap @ diff
        stat = np.abs(_f1(ma.sum(0) + moved) - _f1(mb.sum(0) - moved))
        at_least += int(np.count_nonzero(stat >= observed - 1e-12))
        done += k
    return (at_least + 1) / (n + 1)
