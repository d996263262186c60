"""The garbage collector's settings while a process tags many notes (the job's workers, `deid tag`)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between two young-generation collections while tagging (CPython's default is 700): a
# batch allocates millions of short-lived, mostly acyclic objects that reference counting frees.
GC_YOUNG_THRESHOLD = 10_000


def settle_heap() -> None:
    """Collect once and freeze what survives (rules, automata, models: never garbage, no longer scanned by
    each full collection), then collect the young generation every GC_YOUNG_THRESHOLD allocations."""
    gc.collect()
    gc.freeze()
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), *older)


@contextmanager
def settled_heap() -> Iterator[None]:
    """settle_heap() for a block, the caller's collector settings back after it (a notebook's process
    is not ours to change for good)."""
    before = gc.get_threshold()
    settle_heap()
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
