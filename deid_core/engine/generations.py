"""A per-process memo bounded by entries, emptied half at a time (two generations, no per-hit bookkeeping).

New entries go to the young dict; when it holds half the bound it becomes the old one (the previous
old one is dropped) and a new young dict starts. A key found only in the old dict is copied to the
young one, so what is still in use survives the next turn and what is not is dropped. Hot loops
read `young` directly (one C-level dict lookup) and call `get` only on a miss. Values must be pure
functions of their key: a dropped entry is computed again, the same.
"""

from __future__ import annotations

from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")
_MISSING = object()


class Generations(Generic[K, V]):
    """A dict of at most `size` entries (two generations of size // 2)."""

    __slots__ = ("half", "old", "young")

    def __init__(self, size: int) -> None:
        if size < 2:
            raise ValueError(f"a cache of two generations needs size >= 2, not {size}")
        self.half = size // 2
        self.young: dict[K, V] = {}
        self.old: dict[K, V] = {}

    def get(self, key: K, default: object = None) -> V | object:
        """The value of key (moved to the young generation when found in the old one), else default."""
        v = self.young.get(key, _MISSING)
        if v is not _MISSING:
            return v
        v = self.old.get(key, _MISSING)
        if v is _MISSING:
            return default
        self.put(key, v)  # type: ignore[arg-type]
        return v

    def put(self, key: K, value: V) -> None:
        """Store key in the young generation, turning generations first when it is full."""
        if len(self.young) >= self.half:
            self.old = self.young
            self.young = {}
        self.young[key] = value

    def __len__(self) -> int:
        return len(self.young) + len(self.old)

    def clear(self) -> None:
        """Drop both generations."""
        self.young = {}
        self.old = {}
