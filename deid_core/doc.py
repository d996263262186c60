"""A Doc: one note plus its analysis (tokens, sentences, sections), computed once, shared by all taggers."""

from __future__ import annotations

from functools import cached_property

from deid_core.notes import Note
from deid_core.text.sections import Section, find_sections
from deid_core.text.tokenize import sentence_bounds, token_offsets


class Doc:
    """Lazily analysed note: every tagger reads the same tokens and sections."""

    __slots__ = ("note", "__dict__")

    def __init__(self, note: Note) -> None:
        self.note = note

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
