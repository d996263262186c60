"""A Doc: one note plus its analysis (tokens, sentences, sections), computed once, shared by all taggers."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any, TypeVar

from deid_core.notes import Note
from deid_core.text.sections import Section, find_sections
from deid_core.text.tokenize import sentence_bounds, token_offsets

T = TypeVar("T")


class Doc:
    """Lazily analysed note: every tagger reads the same tokens and sections.

    Derived values of the text (gazetteer hits, attributes...) go through `memo`. What the stages
    find is not kept here: it is the pipeline's NoteState (deid_core/engine/contract.py).
    """

    __slots__ = ("note", "_memo", "__dict__")

    def __init__(self, note: Note) -> None:
        self.note = note
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
