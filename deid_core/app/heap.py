"""The garbage collector's settings while a process tags many notes (the job's workers, `deid tag`, the benchmarks).

Every entry point that tags many notes settles the collector here, with the settings of conf/deidentify.toml
[job.gc] (config.job.gc: the off switch and the young threshold; no default lives in code): the Spark worker
after its Deidentifier is built (udfs/deidentify.py, for the worker's life), `deid tag` and the library's runs for
their tagging stage (app/runner.py, the caller's settings given back after), `bench tagger` and `bench worker`.
The collector only frees reference cycles: outputs do not depend on its settings.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from deid_core.config.tables import GcSettings

_LOCK = threading.Lock()
_BLOCKS = {"depth": 0, "threshold": None, "froze": False}  # settled_heap blocks open in this process


def settle_heap(settings: GcSettings) -> bool:
    """Collect once and freeze what survives (rules, automata, models: never garbage, no longer scanned by
    each full collection; settings.freeze), then collect the young generation every settings.young_threshold
    allocations (a batch allocates millions of short-lived, mostly acyclic objects that reference counting
    frees). settings.settle false: nothing changes. Objects someone else froze stay as they are (no second
    freeze); automatic collection left off stays off. Returns whether it froze."""
    if not settings.settle:
        return False
    young, *older = gc.get_threshold()
    if young:  # first: a threshold set_threshold refuses leaves nothing frozen (review18)
        gc.set_threshold(max(young, settings.young_threshold), *older)
    froze = settings.freeze and gc.get_freeze_count() == 0
    if froze:
        gc.collect()
        gc.freeze()
    return froze


@contextmanager
def settled_heap(settings: GcSettings) -> Iterator[None]:
    """settle_heap() for a block, the caller's collector settings back after the last open block (a
    notebook's process is not ours to change for good; nested or concurrent blocks settle once)."""
    with _LOCK:
        if _BLOCKS["depth"] == 0:
            _BLOCKS["threshold"] = gc.get_threshold()
            _BLOCKS["froze"] = settle_heap(settings)
        _BLOCKS["depth"] += 1
    try:
        yield
    finally:
        with _LOCK:
            _BLOCKS["depth"] -= 1
            if _BLOCKS["depth"] == 0:
                gc.set_threshold(*_BLOCKS["threshold"])
                if _BLOCKS["froze"]:
                    gc.unfreeze()


class GcMeter:
    """Collections per generation and their CPU seconds while installed (gc.callbacks): a measuring aid."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.seconds = [0.0, 0.0, 0.0]
        self.collected = 0
        self._start = 0.0

    def _on_gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            g = info["generation"]
            self.count[g] += 1
            self.seconds[g] += time.process_time() - self._start
            self.collected += info["collected"]

    @contextmanager
    def installed(self) -> Iterator[GcMeter]:
        """Counting inside the block only."""
        gc.callbacks.append(self._on_gc)
        try:
            yield self
        finally:
            gc.callbacks.remove(self._on_gc)

    def summary(self, notes: int) -> str:
        """One line: collections per 1,000 notes and µs per note, per generation, and what they freed."""
        per = max(notes, 1)
        counts = " / ".join(f"{1000 * c / per:.1f}" for c in self.count)
        micros = " / ".join(f"{1e6 * s / per:.1f}" for s in self.seconds)
        return (f"gc: collections per 1,000 notes (gen 0 / 1 / 2) {counts}; CPU µs/note {micros}; "
                f"{self.collected} objects freed; thresholds {gc.get_threshold()}, {gc.get_freeze_count()} frozen")
