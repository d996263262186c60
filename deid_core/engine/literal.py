"""Test helpers that ship with the engine: a literal known-PHI tagger usable as a pipeline stage.

Only test configurations register `literal_stage`; production configs use the real taggers.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import regex

from deid_core.config import Config
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState, PerNoteStage
from deid_core.spans import Span

_DATE = regex.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b")


class LiteralTagger(PerNoteStage):
    """Finds each known-PHI value of the note verbatim (word-bounded) and m/d/y dates."""

    name = "literal"
    needs: Mapping[str, str] = MappingProxyType({})
    provides: frozenset[str] = frozenset()

    def run(self, doc: Doc, state: NoteState) -> list[Span]:
        """The stage: the literal spans (reads nothing from earlier stages)."""
        return self.tag(doc)

    def tag(self, doc: Doc) -> list[Span]:
        """Spans of the note's known PHI values and slash dates."""
        text = doc.text
        spans = [Span(m.start(), m.end(), "DATE", "test-literal") for m in _DATE.finditer(text)]
        for value, label in doc.note.known_phi:
            pattern = regex.compile(r"(?<!\w)" + regex.escape(value) + r"(?!\w)")
            spans.extend(Span(m.start(), m.end(), label, "test-literal") for m in pattern.finditer(text))
        return spans


def literal_stage(config: Config, bundle) -> LiteralTagger:
    """Stage factory for tests: [registry.stages] literal = "deid_core.engine.literal:literal_stage"."""
    return LiteralTagger()
