"""Merge policies for the spans of several taggers, and global reconciliation per document.

- rules_win (seed 000): a CRF span overlapping a rule span is dropped; the rest longest-first.
- cascade (seed 001): priority order of sources (rules > char CRF > token CRF), then length.
- union (max recall): overlapping spans become one span covering their union; the label is
  the highest-priority source's (then the longest span's), but a person label the note's metadata
  gives the name (an exact known-name match) wins over a tagger's other person label.
Then, with the document at hand (seed 000 §3.3.4): type agreement (one label per surface
string: the majority, ties to priority) and propagation (engine/propagation.py: other whole-word
occurrences of a tagged name or location string, and of the words of a name, are tagged too).
Configured by the [merge] table of the pipeline configuration.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence

from deid_core import taxonomy
from deid_core.config import Config
from deid_core.config import Merge as MergeOptions
from deid_core.doc import Doc
from deid_core.engine.contact_fields import contact_cue_labels, phone_extensions
from deid_core.engine.contract import CrfMarginals, NoteState
from deid_core.engine.extents import extent_table, strict_extents
from deid_core.engine.field_ids import field_id_labels, table_pairs
from deid_core.engine.initials import (
    dictation_initials,
    doctor_initials,
    flowsheet_initials,
    metadata_initials,
    not_clinician_initials,
    patient_initials,
)
from deid_core.engine.label_decisions import (
    clinician_labels,
    drop_role_word_logins,
    kin_person_labels,
    person_field_labels,
    place_head_labels,
    place_heads,
    recipient_names,
    rule_labels_win,
    split_crf_lines,
    title_labels,
    trim_person_spans,
    whole_words,
)
from deid_core.engine.name_pieces import join_name_pieces
from deid_core.engine.names import SOURCE as NAME_NET
from deid_core.engine.note_text import lower_text
from deid_core.engine.org_decisions import frames as org_frames
from deid_core.engine.org_decisions import named_organizations
from deid_core.engine.place_decisions import (
    GROWN_LABELS,
    LANDMARK_LABELS,
    STREET_SHAPED_LABELS,
    gazetteer_place_labels,
    grow_place_heads,
    landmark_heads,
    person_records_organizations,
    place_rules_cut_net,
    profession_employers,
    state_after_town,
    street_numbers,
    town_labels,
    towns_before_states,
    trim_place_leads,
)
from deid_core.engine.propagation import PatientPropagation, propagate_note, source_kind
from deid_core.engine.rules.metadata import SOURCE as KNOWN_NAME
from deid_core.engine.vetoes import (
    PERSON,
    guard_crf_context,
    guard_crf_logins,
    guard_crf_names,
    guard_crf_places,
    rule_cover,
)
from deid_core.spans import Span, default_rank, resolve_overlaps, sort_spans, source_in

# labels street_numbers reads: CRF place or phone spans, and person spans ending in a street suffix ('12 [birch road]')
_STREET_GATE = STREET_SHAPED_LABELS | PERSON


class Merger:
    """A configured merge policy (a MergeStep): (spans, doc, state) -> non-overlapping spans.

    Without a doc (and state) only the policy runs: no rule gate, reconciliation or propagation.
    """

    def __init__(self, policy: str, options: MergeOptions) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown merge policy {policy!r}; accepted: {', '.join(POLICIES)}")
        self.policy = policy
        self.options = options
        pri = list(options.priority)
        self._pri = {k: i for i, k in enumerate(pri)}
        # rule ids and other unnamed sources rank where "rules" stands
        self._unknown = self._pri.get("rules", len(pri))
        self._heads = frozenset(w.lower() for w in options.crf_place_heads)
        self._roles = frozenset(options.crf_name_lead_words)
        self._title_roles = self._roles | frozenset(w.lower() for w in options.title_roles)  # "Ms. X, LCSW"
        # a clinician's role or credential after a name, no kin word or title ("X, RN"; not "X, son", "Hi X, Dr. Y")
        self._credentials = self._title_roles - {w.lower() for w in (*options.propagate_kin_words, *options.clinician_titles,
                                                                     *options.patient_titles)}
        # a relative or the patient after a name a clinician's field key names ("Sent by: X (daughter)")
        self._kin_after = frozenset(w.lower() for w in options.propagate_kin_words) | {"patient", "pt"}
        self._place_leads = frozenset(w.lower() for w in options.place_lead_words)
        self._heads_of = place_heads(options.hospital_head_words, options.organization_head_words)
        self._not_clinical = not_clinician_initials(options)  # from the options: once, not per note
        self._id_fields = table_pairs(options.id_fields)
        # the extents table is read and checked when the merger is built: a bad table stops the run before any note
        self._extents = extent_table() if options.strict_extents else None
        self._contact_fields = table_pairs(options.contact_fields)
        self._org_frames = org_frames(options.organization_frame_words, options.organization_field_words,
                                      options.organization_store_words, options.organization_tail_words)
        self._rule_of: dict[str, bool] = {}  # source -> is_rule (the sources are few: rule ids, taggers)
        self._gated_of: dict[str, bool] = {}  # source -> a rule span the rule gate weighs

    def priority(self, s: Span) -> int:
        """Smaller is stronger."""
        return self._pri.get(source_kind(s.source), self._unknown)

    def is_rule(self, s: Span) -> bool:
        """True for spans of the rules (not a CRF, not the name net)."""
        rule = self._rule_of.get(s.source)
        if rule is None:
            kind = source_kind(s.source)
            rule = self._rule_of[s.source] = not kind.startswith("crf") and kind != "names"
        return rule

    def gated(self, s: Span) -> bool:
        """A rule span of a source the rule gate weighs (is_rule and gated_source), memoised per source."""
        g = self._gated_of.get(s.source)
        if g is None:
            g = self._gated_of[s.source] = self.is_rule(s) and gated_source(s.source, self.options)
        return g

    def cross_note(self) -> PatientPropagation | None:
        """Names and places spread across a patient's notes when [merge] propagate_patient is on."""
        return PatientPropagation(self.options) if self.options.propagate_patient else None

    def whole_note(self, spans: list[Span], text: str) -> list[Span]:
        """Type agreement and propagation over a whole note tagged in windows (engine/windows.py)."""
        if self.options.reconcile or self.options.propagate:
            return reconcile(spans, text, self)
        return spans

    def __call__(self, spans: Sequence[Span], doc: Doc | None = None, state: NoteState | None = None,
                 note_wide: bool = True) -> list[Span]:
        gate = self.options.rule_gate
        if gate > 0 and doc is not None and state is not None and state.crf is not None:
            spans = gate_rules(spans, doc, state.crf, gate, self)
        if state is not None and state.nonphi and self.options.nonphi_veto:
            spans = veto_nonphi(spans, state.nonphi, self)
        if doc is not None and self.options.crf_name_guard:
            spans = guard_crf_names(spans, doc.text)
        if doc is not None and self.options.crf_place_guard:
            spans = guard_crf_places(spans, doc.text, self._heads)
        if doc is not None and self.options.crf_context_veto:
            spans = guard_crf_context(spans, doc.text, self.options)
        if doc is not None:
            if self.options.crf_split_lines:
                spans = split_crf_lines(spans, doc.text)
            if self._roles:
                spans = drop_role_word_logins(trim_person_spans(spans, doc.text, self._roles), doc.text, self._roles)
            spans = rule_labels_win(spans, doc.text, self.options.rule_label_sources)
            spans = place_rules_cut_net(spans, doc.text, self.options.rule_label_sources)
            spans = recipient_names(spans, doc.text, self.options.recipient_words)
        merged = POLICIES[self.policy](self, spans)
        if doc is not None:
            # round 19 review: after a union a CRF source may hide a rule of the group; the login steps ask these
            any_rule, login_rule = rule_cover(spans, self.is_rule), rule_cover(spans, self.is_rule, "USERNAME")
            if self.options.join_name_pieces:
                merged = join_name_pieces(merged, doc.text, self.options.name_particles, self._roles,
                                          self.options.hyphen_eponyms)
            if self.options.strict_extents:  # round 17: i2b2 2014 extents (conf/rules/words/extents.toml)
                merged = strict_extents(merged, doc.text, self._extents)
            merged = field_id_labels(merged, doc.text, self._id_fields, self.options.rule_label_sources,
                                     lower_text(doc), login_rule)
            merged = contact_cue_labels(merged, doc.text, self._contact_fields)
            if self.options.phone_extensions:
                merged = phone_extensions(merged, doc.text)
            if self.options.crf_login_guard:  # after field_ids, which makes a person span with a digit a login
                merged = guard_crf_logins(merged, doc.text, any_rule)
            merged = whole_words(merged, doc.text, self.options.whole_word_labels)
            merged = clinician_labels(merged, doc.text, self.options.clinician_titles, self._credentials,
                                      self.options.clinician_roles)
            merged = kin_person_labels(merged, doc.text, self.options.propagate_kin_words)
            merged = title_labels(merged, doc.text, self.options.patient_titles, self._title_roles)
            merged = person_field_labels(merged, doc.text, self.options.patient_field_keys,
                                         self.options.doctor_field_keys, self._credentials, self._kin_after)
            present = {s.label for s in merged}  # most notes name no job and few places: skip those decisions
            if self.options.profession_employers and "PROFESSION" in present:
                merged = profession_employers(merged, doc.text)
            if self.options.grow_place_heads and not present.isdisjoint(GROWN_LABELS):
                merged = grow_place_heads(merged, doc.text, self._heads_of)
            merged = place_head_labels(merged, doc.text, self._heads_of)
            merged = trim_place_leads(merged, doc.text, self._place_leads)
            if self.options.landmark_heads and not present.isdisjoint(LANDMARK_LABELS):
                merged = landmark_heads(merged, doc.text)
            if self.options.place_gazetteer_labels:
                merged = gazetteer_place_labels(merged, doc.text)
            if self.options.street_numbers and not present.isdisjoint(_STREET_GATE):
                merged = street_numbers(merged, doc.text)
            if self.options.state_after_town:
                merged = state_after_town(merged, doc.text)
            # gazetteer_place_labels (above) can make the STATE span: read the labels now, not `present`
            if self.options.towns_before_states and any(s.label == "STATE" for s in merged):
                merged = towns_before_states(merged, doc.text, self._heads_of)
            if self.options.organization_gazetteer:
                merged = named_organizations(merged, doc, self._org_frames, self.options)
            merged = person_records_organizations(merged, doc.text, self.options.organization_record_words)
            known = doc.note.known_phi
            if self.options.patient_initials:
                merged = patient_initials(merged, doc.text, self.options.patient_initials_verbs,
                                          self.options.not_initials, metadata_initials(known, "PATIENT"))
            if self.options.doctor_initials:
                merged = doctor_initials(merged, doc.text, self.options.not_initials,
                                         metadata_initials(known, "DOCTOR"), self._not_clinical)
            merged = dictation_initials(merged, doc.text, self.options.dictation_keys)
            if self.options.flowsheet_initials:
                merged = flowsheet_initials(merged, doc.text, self.options.not_initials, self._not_clinical)
        if note_wide and doc is not None and (self.options.reconcile or self.options.propagate):
            merged = reconcile(merged, doc.text, self)  # a window's spans: whole_note() does it over the note
        return merged


def gated_source(source: str, options: MergeOptions) -> bool:
    """Is a rule span of this source subject to the rule gate? (`rule_gate_sources` minus `rule_gate_exempt`, globs.)"""
    return source_in(source, options.rule_gate_sources) and not source_in(source, options.rule_gate_exempt)


def gate_rules(spans: Sequence[Span], doc: Doc, crf: CrfMarginals, gate: float, m: Merger) -> list[Span]:
    """Drop rule spans on which the CRF (trained with rule-hit features) puts a PHI marginal below `gate`.

    Only spans of gated sources (weak, context-free rules by default) and of categories the
    CRF learned from enough examples are gated (the CRF stage hands those categories over with
    its marginals); rare categories (too few training examples) keep their rule spans.
    """
    phi = crf.phi
    gated = crf.gate_categories  # categories the CRF learned from enough examples
    _, starts, ends = doc.tokens
    out = []
    for s in spans:
        if not m.gated(s) or taxonomy.category_of(s.label) not in gated:
            out.append(s)
            continue
        i, j = bisect_right(ends, s.start), bisect_left(starts, s.end)
        if i >= j or max(phi[i:j]) >= gate:
            out.append(s)
    return out


def veto_nonphi(spans: Sequence[Span], nonphi: Sequence[Span], m: Merger) -> list[Span]:
    """Drop tagger (CRF, name net) spans of the [merge] nonphi_veto categories that lie inside a
    non-PHI context the rules recognised (vent settings "PS 10/5", pain "5/10", fractions "1/3 up").

    Rule spans were already weighed against the suppressors by priority in the rules stage.
    `nonphi` is sorted by start; suppressor hits are short, so only those starting within the
    longest one's length before a span can hold it.
    """
    cats = set(m.options.nonphi_veto)
    starts = [s.start for s in nonphi]
    longest = max(s.end - s.start for s in nonphi)
    out = []
    for s in spans:
        if not m.is_rule(s) and taxonomy.category_of(s.label) in cats:
            lo, hi = bisect_left(starts, s.start - longest), bisect_right(starts, s.start)
            if any(nonphi[k].end >= s.end for k in range(lo, hi)):
                continue
        out.append(s)
    return out


def _rules_win(m: Merger, spans: Sequence[Span]) -> list[Span]:
    return resolve_overlaps(spans, rank=lambda s: (m.is_rule(s), *default_rank(s)))


def _cascade(m: Merger, spans: Sequence[Span]) -> list[Span]:
    return resolve_overlaps(spans, rank=lambda s: (-m.priority(s), s.end - s.start, s.confidence, -s.start))


def _union(m: Merger, spans: Sequence[Span]) -> list[Span]:
    out: list[Span] = []
    group: list[Span] = []
    end = -1
    for s in sort_spans(spans):
        if group and s.start >= end:
            out.append(_union_of(m, group))
            group = []
        group.append(s)
        end = max(end, s.end) if len(group) > 1 else s.end
    if group:
        out.append(_union_of(m, group))
    return out


def _union_of(m: Merger, group: list[Span]) -> Span:
    if len(group) == 1:
        return group[0]
    best = min(group, key=lambda s: (m.priority(s), -(s.end - s.start), -s.confidence))
    start = min(s.start for s in group)
    end = max(s.end for s in group)
    label = known_person_label(m, group, best.label) if best.label in PERSON and m.options.known_person_label \
        else best.label
    return Span(start, end, label, best.source, max(s.confidence for s in group))


def known_person_label(m: Merger, group: Sequence[Span], label: str) -> str:
    """The person label of a union: the note's metadata's over a tagger's other person label ('Dear Ann,' read as
    a clinician by the CRF, while the EHR names the patient Ann; i2b2 2014: the patient's name is PATIENT),
    unless a context gives `label`: a rule's span of the group ('Dr. X', 'X, MD'), or the name net's DOCTOR (a
    title, role or credential it read: the rules stage resolves a title rule's span under the known-name match,
    'Dr. Jordan Park' when the patient is Jordan Lee), or another known-name match gives `label`.
    Exact known-name matches only: a one-edit (fuzzy) match is no evidence against the CRF."""
    known = {s.label for s in group if s.source == KNOWN_NAME}
    if len(known) != 1 or label in known or any(s.label == label and (m.is_rule(s) or _net_cue(s)) for s in group):
        return label
    other = known.pop()
    return other if other in PERSON else label


def _net_cue(s: Span) -> bool:
    """A name-net span whose label a context cue gave (DOCTOR: a title, role or credential; its PATIENT is the
    default of a name without a clinician cue, no evidence)."""
    return s.label == "DOCTOR" and s.source == NAME_NET


POLICIES: dict[str, Callable[[Merger, Sequence[Span]], list[Span]]] = {
    "rules_win": _rules_win,
    "cascade": _cascade,
    "union": _union,
}


def reconcile(spans: list[Span], text: str, m: Merger) -> list[Span]:
    """Type agreement per surface string, then propagation to untagged repeats."""
    opts = m.options
    if opts.town_label_sources and spans:  # before type agreement: a strong frame's town outvotes the CRF's readings
        spans = town_labels(spans, text, opts.town_label_sources)
    if opts.reconcile and spans:
        by_key: dict[str, list[Span]] = defaultdict(list)
        for s in spans:
            by_key[text[s.start:s.end].lower()].append(s)
        fixed: dict[str, str] = {}
        for key, group in by_key.items():
            labels = Counter(s.label for s in group)
            if len(labels) > 1:
                top = max(labels.items(), key=lambda kv: (kv[1], -min(m.priority(s) for s in group if s.label == kv[0])))
                fixed[key] = top[0]
        if fixed:
            spans = [s.with_label(fixed[k]) if (k := text[s.start:s.end].lower()) in fixed and s.label != fixed[k] else s
                     for s in spans]
    if opts.propagate and spans:
        spans = propagate_note(spans, text, opts)
    return spans


def _factory(policy: str) -> Callable[[Config], Merger]:
    def make(config: Config) -> Merger:
        return Merger(policy, config.merge)

    make.__doc__ = f"Merge factory for the {policy} policy."
    return make


rules_win_merge = _factory("rules_win")
cascade_merge = _factory("cascade")
union_merge = _factory("union")
