"""Schema of conf/deidentify.toml: [pipeline], [registry], [rules], [merge], [job], [testing], [model].

Types only: every value comes from conf/deidentify.toml (or a file merged over it); the classes
hold no defaults of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated, Literal

from deid_core.config.convert import Check, at_least, between, member_of


def _categories() -> tuple[str, ...]:
    from deid_core import taxonomy

    return taxonomy.categories()


def _labels() -> tuple[str, ...]:
    from deid_core import taxonomy

    return taxonomy.labels()


Category = Annotated[str, member_of(_categories, "a category of conf/taxonomy.toml")]
def _id_labels() -> tuple[str, ...]:
    from deid_core import taxonomy

    return taxonomy.labels_of("ID")


def _one_label_a_word(table: dict) -> bool:
    """Does every field word (case and blanks aside) stand under one label only?"""
    words = [" ".join(w.lower().split()) for ws in table.values() for w in ws]
    return len(words) == len(set(words))


Label = Annotated[str, member_of(_labels, "a label of conf/taxonomy.toml")]
IdLabel = Annotated[str, member_of(_id_labels, "a label of category ID in conf/taxonomy.toml")]
ContactLabel = Annotated[str, member_of(lambda: ("PHONE", "FAX"), "PHONE or FAX")]
ONE_LABEL_A_WORD = Check(_one_label_a_word, "each field word under one label only (case and blanks aside)")
Count = Annotated[int, at_least(0)]
Positive = Annotated[int, at_least(1)]
Share = Annotated[float, between(0, 1)]
Seconds = Annotated[float, at_least(0)]
Token = Annotated[str, Check(lambda v: re.fullmatch(r"\S+", v) is not None, "one word (no blank)")]
# [merge] clinician_roles: read in the 12 characters before a person span (engine/label_decisions.py _TITLE_REACH)
RoleWord = Annotated[str, Check(lambda v: re.fullmatch(r"\S{1,11}", v) is not None,
                                "one word of at most 11 characters (the window read before a name)")]
Phrase = Annotated[str, Check(lambda v: v.strip() != "", "a word or phrase, not blank")]
Ref = Annotated[str, Check(lambda v: ":" in v, "'package.module:attribute'")]
BundleName = Annotated[str, Check(lambda v: re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", v) is not None,
                                  "a bundle name under models/ (letters, digits, '_', '.', '-'; e.g. 'default')")]
RecipeName = Annotated[str, Check(lambda v: re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", v) is not None,
                                  "a recipe name under conf/recipes/ (letters, digits, '_', '.', '-'; e.g. 'previous')")]


@dataclass(frozen=True)
class Pipeline:
    """[pipeline]: which stages run, in order, how their spans merge, how they are replaced."""

    stages: tuple[str, ...]
    merge: str
    mode: str
    note_cpu_budget_s: Seconds  # 0: no limit (deid_core/engine/budget.py)
    note_cpu_budget_s_per_mb: Seconds
    window_chars: Annotated[int, at_least(1000)]  # longer notes are tagged in windows (engine/windows.py)
    window_overlap_chars: Count  # less than half of window_chars (checked with the references)


@dataclass(frozen=True)
class Registry:
    """[registry.*]: stage, mode and merge names -> 'module:factory'."""

    stages: dict[str, Ref]
    modes: dict[str, Ref]
    merge: dict[str, Ref]


@dataclass(frozen=True)
class Rules:
    """[rules]: the rule tagger's files, gazetteer rules and metadata matching."""

    files: tuple[str, ...]
    gazetteer_file: str
    metadata: bool
    fuzzy: bool
    fuzzy_min_len: Positive
    min_age: Count
    metadata_priority: int


@dataclass(frozen=True)
class Merge:
    """[merge]: source priority, type agreement, propagation and the CRF gate on weak rules."""

    priority: tuple[str, ...]
    reconcile: bool
    propagate: bool
    propagate_categories: tuple[Category, ...]
    propagate_min_length: Positive
    propagate_parts: bool
    propagate_part_min_length: Positive
    propagate_inverted: bool
    propagate_patient: bool
    propagate_dosing_cues: tuple[str, ...]
    not_name_preceding: tuple[str, ...]
    not_name_following: tuple[str, ...]
    not_name_list_labels: tuple[str, ...]
    crf_context_veto: bool
    rule_gate: Share
    rule_gate_sources: tuple[str, ...]
    rule_gate_exempt: tuple[str, ...]
    nonphi_veto: tuple[Category, ...]
    crf_name_guard: bool
    crf_place_guard: bool
    crf_login_guard: bool
    crf_place_heads: tuple[str, ...]
    crf_split_lines: bool
    rule_label_sources: tuple[str, ...]
    whole_word_labels: tuple[Label, ...]
    crf_name_lead_words: tuple[str, ...]
    propagate_kin_words: tuple[Phrase, ...]
    propagate_cue_words: tuple[Phrase, ...]
    propagate_subject_verbs: tuple[Token, ...]
    patient_field_keys: tuple[str, ...]
    doctor_field_keys: tuple[str, ...]
    patient_titles: tuple[Token, ...]
    clinician_titles: tuple[Token, ...]
    clinician_roles: tuple[RoleWord, ...]
    title_roles: tuple[Token, ...]
    patient_initials: bool
    patient_initials_verbs: tuple[str, ...]
    doctor_initials: bool
    not_initials: tuple[str, ...]
    clinical_not_initials: tuple[str, ...]
    dictation_keys: tuple[str, ...]
    flowsheet_initials: bool
    join_name_pieces: bool
    name_particles: tuple[Phrase, ...]
    recipient_words: tuple[Phrase, ...]
    hyphen_eponyms: tuple[Phrase, ...]
    hospital_head_words: tuple[str, ...]
    organization_head_words: tuple[str, ...]
    place_lead_words: tuple[Token, ...]
    state_after_town: bool
    organization_record_words: tuple[Phrase, ...]
    place_gazetteer_labels: bool
    street_numbers: bool
    towns_before_states: bool
    landmark_heads: bool
    town_label_sources: tuple[str, ...]
    profession_employers: bool
    grow_place_heads: bool
    organization_gazetteer: bool
    organization_frame_words: tuple[Phrase, ...]
    organization_field_words: tuple[Phrase, ...]
    organization_store_words: tuple[Phrase, ...]
    organization_tail_words: tuple[Phrase, ...]
    organization_value_fields: tuple[Phrase, ...]
    id_fields: Annotated[dict[IdLabel, tuple[Phrase, ...]], ONE_LABEL_A_WORD]
    contact_fields: Annotated[dict[ContactLabel, tuple[Phrase, ...]], ONE_LABEL_A_WORD]
    phone_extensions: bool
    known_person_label: bool
    strict_extents: bool


@dataclass(frozen=True)
class NameWeights:
    """[names.weights]: what each piece of evidence adds to a word's name score (negative: against)."""

    first_name: float
    last_name: float
    unknown: float
    dictionary: float
    title_case: float
    title: float
    relation: float
    contact: float
    weak: float
    credential: float
    initial: float
    neighbour: float


@dataclass(frozen=True)
class NameCues:
    """[names.cues]: the context words of the name net (lower case; phrases of several words allowed)."""

    titles: tuple[str, ...]
    doctor_titles: tuple[str, ...]
    relations: tuple[str, ...]
    contacts: tuple[str, ...]
    weak: tuple[str, ...]
    credentials: tuple[str, ...]
    roles: tuple[str, ...]
    line_credentials: tuple[Token, ...]
    kin_states: tuple[Token, ...]
    greetings: tuple[Phrase, ...]
    valedictions: tuple[Phrase, ...]
    copy_keys: tuple[Phrase, ...]
    clinician_valedictions: tuple[Token, ...]
    addressees: tuple[Token, ...]
    service_endings: tuple[Token, ...]


@dataclass(frozen=True)
class NameFrames:
    """[names.frames]: on / off switches of the net's frames for names that are words (rounds 16-17)."""

    greetings: bool
    valedictions: bool
    copies: bool
    dash_signature: bool
    inverted_fields: bool
    chief_complaint_guard: bool
    brackets: bool
    possessive_kin: bool


@dataclass(frozen=True)
class NameNet:
    """[names]: the name recall net (deid_core/engine/names.py): threshold, window, weights, cues, frames."""

    threshold: Annotated[float, between(0.5, 10)]
    window: Annotated[int, between(1, 6)]
    weights: NameWeights
    cues: NameCues
    frames: NameFrames


# gc.set_threshold takes a C int: a larger value passed the table and then raised OverflowError when a worker or
# `deid tag` settled the collector, after the build (review18)
_C_INT_MAX = 2**31 - 1
GcThreshold = Annotated[int, Check(lambda v: 1 <= v <= _C_INT_MAX, f"from 1 to {_C_INT_MAX}", bound=True)]


@dataclass(frozen=True)
class GcSettings:
    """[job.gc]: the garbage collector while a process tags many notes (deid_core/app/heap.py)."""

    settle: bool  # false: the collector as the process has it (CPython's defaults), the off switch
    freeze: bool  # collect once after the build and freeze what survives (models, rules, automata)
    young_threshold: GcThreshold  # allocations between two young-generation collections (CPython: 700)


@dataclass(frozen=True)
class Job:
    """[job]: run options of the Spark job and `deid tag`."""

    batch_size: Positive
    partitions: Count
    on_duplicate: Literal["fail", "quarantine"]
    on_null_note_id: Literal["fail", "drop"]
    staging: Literal["parquet", "persist"]
    name_columns: tuple[str, ...]
    max_quarantine_rate: Share
    progress_interval_s: Annotated[float, at_least(0)]
    retry_quarantined: tuple[Literal["validate", "tag", "replace"], ...]
    gc: GcSettings


@dataclass(frozen=True)
class Testing:
    """[testing]: test-suite hooks, empty = off (refused unless $DEID_TEST_HOOKS=1: app/options.py)."""

    fault_note_marker: str
    pause_after_write: Annotated[str, Check(lambda v: v in ("", "notes", "spans", "quarantine"),
                                            "'' (off), notes, spans or quarantine")]

    def hooks(self) -> dict[str, str]:
        """The hooks that are set (non-empty)."""
        hooks = {"fault_note_marker": self.fault_note_marker, "pause_after_write": self.pause_after_write}
        return {k: v for k, v in hooks.items() if v}


@dataclass(frozen=True)
class ModelChoice:
    """[model]: the model bundle a configuration (or profile) runs with, by name under models/ (--bundle DIR wins),
    and the training recipe that bundle is trained with (conf/recipes/NAME.toml: `deid train --recipe NAME`)."""

    bundle: BundleName
    recipe: RecipeName
