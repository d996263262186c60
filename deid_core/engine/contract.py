"""The stage contract: what each stage needs and adds, as typed per-note state, and the Protocols of
the steps a Deidentifier composes (stages, merge, cross-note step, replacer, test fault hook).

Stages run in the configured order, each over a batch of notes (`run_many`) before the next.
For each note a stage reads its Doc (text, tokens, sections) and the NoteState the earlier
stages filled, and returns its spans; a note it fails on gets the exception instead (fail
closed per note), and later stages skip that note. A stage with no batch path runs note by
note (`PerNoteStage`). A stage declares
`needs` (what must be in the state before it runs, and why) and `provides` (what it puts there);
building a Deidentifier whose stages do not provide what a later stage needs is refused.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from deid_core.config import ConfigError
from deid_core.doc import Doc
from deid_core.notes import Note
from deid_core.spans import Span

# What a stage can put in the NoteState, and the stage of conf/deidentify.toml that does.
RULE_SPANS = "rule spans"  # NoteState.rule_spans: the rule tagger's spans (CRF rule_hits features)
CRF_MARGINALS = "CRF marginals"  # NoteState.crf: per-token PHI marginals (the merge's rule gate)
NONPHI_SPANS = "non-PHI contexts"  # NoteState.nonphi: suppressor hits (the merge's veto on CRF spans)
PROVIDED_BY = {RULE_SPANS: "rules", CRF_MARGINALS: "crf", NONPHI_SPANS: "rules"}


@dataclass(frozen=True)
class CrfMarginals:
    """The token CRF's per-token PHI marginal and the categories it learned well enough to gate rules."""

    phi: list[float]
    gate_categories: frozenset[str]


@dataclass
class NoteState:
    """What the stages found in one note so far: every stage's spans, plus the typed hand-offs."""

    spans: dict[str, list[Span]] = field(default_factory=dict)  # by stage name
    rule_spans: list[Span] | None = None  # RULE_SPANS
    crf: CrfMarginals | None = None  # CRF_MARGINALS
    nonphi: list[Span] | None = None  # NONPHI_SPANS, sorted by start


def rule_spans_of(state: NoteState, stage: str, required: bool) -> Sequence[Span]:
    """The rule spans a stage's rule_hits features read; none when absent and not `required`."""
    if state.rule_spans is None:
        if required:
            raise RuntimeError(f"stage {stage!r} ran without the rule spans it needs")
        return ()
    return state.rule_spans


Outcome = list[Span] | Exception  # one note's result in a batch: its spans, or what its stage raised


class Stage(Protocol):
    """A tagger in the pipeline: finds PHI spans in a note, given what earlier stages found."""

    name: str
    needs: Mapping[str, str]  # what must be in the NoteState before it runs -> why (for the error)
    provides: frozenset[str]

    def run(self, doc: Doc, state: NoteState) -> list[Span]: ...

    def run_many(self, docs: Sequence[Doc], states: Sequence[NoteState]) -> list[Outcome]: ...


def spans_or_raise(outcome: Outcome) -> list[Span]:
    """The spans of one note's outcome; its exception re-raised."""
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


class PerNoteStage:
    """Mixin for a stage with no batch path: run_many calls run() note by note."""

    def run_many(self, docs: Sequence[Doc], states: Sequence[NoteState]) -> list[Outcome]:
        """run() for each note; a note that raises gets its exception (the others proceed)."""
        out: list[Outcome] = []
        run = self.run  # type: ignore[attr-defined]  # the stage's own run()
        for doc, state in zip(docs, states, strict=True):
            try:
                out.append(run(doc, state))
            except Exception as exc:  # noqa: BLE001 - fail closed for this note only
                out.append(exc)
        return out


class CrossNoteStep(Protocol):
    """Spreads findings across one patient's notes: (text, merged spans) pairs -> new spans per note."""

    def spread(self, notes: Sequence[tuple[str, list[Span]]]) -> list[list[Span]]: ...


class MergeStep(Protocol):
    """Turns every stage's spans of a note into one non-overlapping list; may have a cross-note step."""

    def __call__(self, spans: Sequence[Span], doc: Doc, state: NoteState) -> list[Span]: ...

    def cross_note(self) -> CrossNoteStep | None: ...

    def whole_note(self, spans: list[Span], text: str) -> list[Span]:
        """The note-wide steps (type agreement, propagation) redone over a note tagged in windows."""
        ...


class Replacer(Protocol):
    """One replacement string per span (an output mode), and the note date moved like the dates inside."""

    def __call__(self, doc: Doc, spans: Sequence[Span]) -> list[str]: ...

    def shift_note_date(self, note: Note) -> dt.date | None: ...


class FaultHook(Protocol):
    """Test-suite fault injection ([testing] fault_note_marker): raises for chosen notes."""

    def __call__(self, note: Note) -> None: ...


def check_stages(stages: Sequence[Stage]) -> None:
    """ConfigError naming the first stage that needs what no earlier stage provides (or a repeated name)."""
    provided: set[str] = set()
    names = [s.name for s in stages]
    for i, stage in enumerate(stages):
        if stage.name in names[:i]:
            raise ConfigError(f"[pipeline] stages: stage {stage.name!r} is listed twice")
        for need, why in stage.needs.items():
            if need not in provided:
                raise ConfigError(
                    f"[pipeline] stages = {names}: stage {stage.name!r} needs the {need} ({why}), which no "
                    f"earlier stage provides; list the {PROVIDED_BY.get(need, 'providing')!r} stage before "
                    f"{stage.name!r}, or use a bundle trained without them")
        provided.update(stage.provides)
