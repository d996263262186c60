"""Generations: the two-generation memo bounding the per-worker caches."""

from __future__ import annotations

import pytest

from deid_core.engine.generations import Generations


def test_holds_at_most_size_and_keeps_what_is_used():
    g: Generations[str, int] = Generations(4)
    for k in "abcd":
        g.put(k, ord(k))
    assert len(g) == 4 and g.get("a") == ord("a")  # read from the old generation: copied to the young one
    g.put("e", 5)  # the young generation (a, e) is full at the next put: c, d go, a stays
    g.put("f", 6)
    assert g.get("a") == ord("a") and g.get("c") is None and g.get("d") is None
    assert len(g.young) <= 2 and len(g.old) <= 2


def test_missing_default_and_falsy_values():
    g: Generations[str, float | None] = Generations(2)
    g.put("x", None)
    sentinel = object()
    assert g.get("x", sentinel) is None and g.get("y", sentinel) is sentinel
    g.clear()
    assert len(g) == 0 and g.get("x", sentinel) is sentinel


def test_too_small_is_refused():
    with pytest.raises(ValueError, match="size >= 2"):
        Generations(1)
