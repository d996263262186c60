"""A Doc: one note plus its analysis (tokens, sentences, sections), computed once, shared by all taggers."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, TypeVar

from deid_core.notes import Note
from deid_core.spans import Span
from deid_core.text.sections import Section, find_sections
from deid_core.text.tokenize import sentence_bounds, token_offsets

T = TypeVar("T")


class Doc:
    """Lazily analysed note: every tagger reads the same tokens and sections.

    Stages hand results to later ones through declared fields: `stage_spans` (each stage's
    spans, by stage name), `crf_phi` (per-token PHI marginal, read by the merge's rule gate)
    and `crf_gate_categories`. Other per-note derived values go through `memo`.
    """

    __slots__ = ("note", "stage_spans", "crf_phi", "crf_gate_categories", "_memo", "__dict__")

    def __init__(self, note: Note) -> None:
        self.note = note
        self.stage_spans: dict[str, list[Span]] = {}
        self.crf_phi: list[float] | None = None
        self.crf_gate_categories: frozenset[str] | set[str] | None = None
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """The value of `compute()` for this note, computed once (gazetteer hits, attributes...)."""
        try:
            return self._memo[key]
        except KeyError:
            value = self._memo[key] = compute()
            return value

    @property
    def text(self) -> str:
        """The original text."""
        return self.note.text

    @cached_property
    def tokens(self) -> tuple[list[str], list[int], list[int]]:
        """(texts, starts, ends) of the aggressive tokenization."""
        return token_offsets(self.note.text)

    @cached_property
    def sentences(self) -> list[tuple[int, int]]:
        """[start, end) of each sentence."""
        return sentence_bounds(self.note.text)

    @cached_property
    def sections(self) -> list[Section]:
        """Section headers and extents."""
        return find_sections(self.note.text)
