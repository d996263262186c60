"""The garbage collector's settings while a process tags many notes (the job's workers, `deid tag`)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between two young-generation collections while tagging (CPython's default is 700): a
# batch allocates millions of short-lived, mostly acyclic objects that reference counting frees.
GC_YOUNG_THRESHOLD = 10_000

_LOCK = threading.Lock()
_BLOCKS = {"depth": 0, "threshold": None, "froze": False}  # settled_heap blocks open in this process


def settle_heap() -> bool:
    """Collect once and freeze what survives (rules, automata, models: never garbage, no longer scanned by
    each full collection), then collect the young generation every GC_YOUNG_THRESHOLD allocations.
    Objects someone else froze stay as they are (no second freeze); automatic collection left off stays
    off. Returns whether it froze."""
    froze = gc.get_freeze_count() == 0
    if froze:
        gc.collect()
        gc.freeze()
    young, *older = gc.get_threshold()
    if young:
        gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), *older)
    return froze


@contextmanager
def settled_heap() -> Iterator[None]:
    """settle_heap() for a block, the caller's collector settings back after the last open block (a
    notebook's process is not ours to change for good; nested or concurrent blocks settle once)."""
    with _LOCK:
        if _BLOCKS["depth"] == 0:
            _BLOCKS["threshold"] = gc.get_threshold()
            _BLOCKS["froze"] = settle_heap()
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
