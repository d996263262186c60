"""The RuleTagger: regex rules + gazetteer rules + EHR-metadata matching in one pass per note.

Compiled once per process from a small, picklable form (`RuleTagger(config.rules)`, or
pickle.dumps(tagger), which ships only the [rules] settings and recompiles on the executor).
Every span's `source` is the rule id ("metadata" for known-name matches). A scan rule runs on a note only
when one RE2 Set pass over the note found its supersets (screen.py): the hits are those of every rule run.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType

import regex

from deid_core.config import Config, ConfigError, Rules
from deid_core.doc import Doc
from deid_core.engine.budget import regex_limit
from deid_core.engine.contract import NONPHI_SPANS, RULE_SPANS, NoteState, PerNoteStage
from deid_core.engine.rules.filters import CONTEXT_FREE, FILTERS
from deid_core.engine.rules.loader import NONPHI, Rule, load_rules, load_settings
from deid_core.engine.rules.metadata import MetadataMatcher
from deid_core.engine.rules.prefilter import gate_shape, guarded
from deid_core.engine.rules.screen import RuleScreen
from deid_core.engine.rules.triggers import TriggerIndex
from deid_core.gazetteers import LISTS, is_common, is_frequent, rule_hits
from deid_core.spans import Span, resolve_overlaps

# Characters after a trigger a triggered rule's match (look-ahead included) may read; a match
# ending within REACH_MARGIN of the bound is redone on the whole text (RuleTagger._apply_at).
TRIGGER_REACH = 256
REACH_MARGIN = 64
# hit texts whose context-free filter result is remembered (per tagger; cleared when full): ~2 MB at most
FILTER_MEMO = 1 << 14


@dataclass(frozen=True)
class GazetteerRule:
    """Tag whole-word gazetteer entries (optionally a pair of adjacent entries) with a label."""

    id: str
    label: str
    lists: tuple[str, ...]
    then: tuple[str, ...] = ()
    case: str = "any"  # any | title | upper | capitalized
    guard: bool = True  # drop single words that are common/clinical words
    priority: int = 30
    min_len: int = 3
    confidence: float = 0.6
    description: str = ""
    examples: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ()


def _title_word(word: str) -> bool:
    """'Smith', 'Smith-Jones', "O'Neil", 'McLean' (not 'LEs', not 'SMITH')."""
    parts = re.split(r"[-'’]", word) if "-" in word or "'" in word or "’" in word else (word,)
    for part in parts:
        if not part:
            continue
        if part.startswith("Mc") and len(part) > 3:
            part = part[2:]
        if not (part[:1].isupper() and (len(part) == 1 or not any(c.isupper() for c in part[1:]))):
            return False
    return True


def _case_ok(surface: str, case: str) -> bool:
    """Case test of a gazetteer rule: any | title (strict) | upper | capitalized (first letters)."""
    words = surface.split()
    if case == "any":
        return True
    if case == "title":
        return all(_title_word(w) for w in words if w[:1].isalpha())
    if case == "upper":
        return surface.isupper()
    return all(w[:1].isupper() for w in words if w[:1].isalpha())


def load_gazetteer_rules(name: str) -> list[GazetteerRule]:
    """The [[gazetteer]] entries of a rule file."""
    from deid_core.config import load_toml
    from deid_core.engine.rules.loader import rule_files

    out = []
    for p in rule_files([name]):
        for raw in load_toml(p).get("gazetteer", []):
            fields = dict(raw)
            for key in ("lists", "then", "examples", "negatives"):
                fields[key] = tuple(fields.get(key, ()))
            try:
                rule = GazetteerRule(**fields)
            except TypeError as exc:
                raise ConfigError(f"gazetteer rule {raw.get('id')!r}: {exc}") from None
            if rule.case not in ("any", "title", "upper", "capitalized"):
                raise ConfigError(f"gazetteer rule {rule.id!r}: unknown case {rule.case!r}; "
                                  "accepted: any, title, upper, capitalized")
            unknown = [n for n in rule.lists + rule.then if n not in LISTS]
            if unknown or not rule.lists:
                raise ConfigError(f"gazetteer rule {rule.id!r}: unknown or missing lists {unknown}")
            out.append(rule)
    return out


class RuleTagger(PerNoteStage):
    """All rules of the configured files plus gazetteer and metadata matching (the `rules` stage)."""

    name = "rules"
    needs: Mapping[str, str] = MappingProxyType({})
    provides = frozenset({RULE_SPANS, NONPHI_SPANS})

    def __init__(self, settings: Rules) -> None:
        self.settings = settings
        self._compile()

    def _compile(self) -> None:
        s = self.settings
        self.rules: list[Rule] = load_rules(s.files)
        self.merge_only = frozenset(r.id for r in self.rules if not r.crf_feature)  # not CRF rule_hits features
        self.filter_settings = {**asdict(s), **load_settings(s.files)}
        self.filter_settings["_kw_words"] = frozenset(self.filter_settings.get("place_keywords", ()))
        self.gazetteer_rules = load_gazetteer_rules(s.gazetteer_file) if s.gazetteer_file else []
        self.metadata = MetadataMatcher(fuzzy=s.fuzzy, fuzzy_min_len=s.fuzzy_min_len) if s.metadata else None
        self.scan_rules = [i for i, r in enumerate(self.rules) if not r.triggers]
        # per rule: the pattern a scan searches with (guarded: same matches, see prefilter.py), its `needs`
        self.scan_patterns = [regex.compile(guarded(r.pattern, r.flags), r.compiled[0].flags) if r.guard
                              else r.compiled[0] for r in self.rules]
        self.need_patterns = [regex.compile(r.needs) if r.needs else None for r in self.rules]
        # one RE2 Set pass per note: the scan rules that cannot match in it are skipped (screen.py; triggered
        # rules are tried at their trigger positions only, and their patterns would multiply the set's states),
        # and so is every rule whose `needs` cannot be found in it (scan or triggered)
        self.screen = RuleScreen([None if r.triggers else (r.pattern, r.flags) for r in self.rules],
                                 [r.needs for r in self.rules])
        # a `needs_search = false` rule's `needs` is read from the screen's pass alone (a note the screen does not
        # read searches it): the screen must read it
        unscreened = [r.id for i, r in enumerate(self.rules) if not r.needs_search and i not in self.screen.screened]
        if unscreened:
            raise ConfigError(f"rules {unscreened}: `needs_search = false` but the screen cannot read their `needs` "
                              "(no RE2 superset): search it, or give a `needs` RE2 reads")
        # per rule, the `digits` gate as the substring its note's digit shape must hold (b"" when none)
        self.digit_runs = [b"0" * r.digits for r in self.rules]
        # per scan rule, what the loop of regex_hits reads: (index, rule, anchors?, `requires`, digit run, scan pattern)
        self.scan_plan = [(i, self.rules[i], bool(self.rules[i].anchors), self.rules[i].requires, self.digit_runs[i],
                           self.scan_patterns[i]) for i in self.scan_rules]
        self.triggers = TriggerIndex(self.rules)  # one automaton pass: every triggered rule's positions
        self.priority = {r.id: r.priority for r in self.rules}
        self.priority.update({g.id: g.priority for g in self.gazetteer_rules})
        self._gaz = [(g, frozenset(g.lists), frozenset(g.then)) for g in self.gazetteer_rules]
        self._gaz_for: dict[frozenset[str], tuple] = {}  # a hit's lists -> the gazetteer rules reading them, in order
        # (filter, hit text) -> the kept span relative to the hit, or None: the filters of CONTEXT_FREE read nothing
        # but the hit's text, and the same hits recur ('is stable', 'son at', 'age 91')
        self._filtered: dict[tuple[str, str], tuple[int, int] | None] = {}
        for r in self.rules:
            if r.filter and r.filter not in FILTERS:
                raise ConfigError(f"rule {r.id}: unknown filter {r.filter!r}; accepted: {', '.join(FILTERS)}")

    def __getstate__(self) -> dict:
        return {"settings": self.settings}

    def __setstate__(self, state: dict) -> None:
        self.settings = state["settings"]
        self._compile()

    # -- tagging ---------------------------------------------------------------------------
    def regex_hits(self, doc: Doc) -> tuple[list[Span], list[Span]]:
        """(PHI hits, suppressor hits) of the regex rules, overlapping, unfiltered by priority."""
        with regex_limit() as timeout:  # the note's remaining CPU budget bounds every regex call
            return self._regex_hits(doc, timeout)

    def _regex_hits(self, doc: Doc, timeout: float | None) -> tuple[list[Span], list[Span]]:
        text = doc.text
        phi: list[Span] = []
        sup: list[Span] = []
        starts, anchored = self.trigger_starts(doc)
        found: dict[str, bool] = {}  # `needs` pattern -> found in this note
        has = text.__contains__
        shape = None  # the note's digit shape, made when a `digits` gate is first read
        # the rules that cannot match in this note (None: not screened, so every `needs` is searched)
        screened = self.screen.screened_out(text)
        ruled_out = frozenset() if screened is None else screened
        for i, rule, anchors, requires, run, pattern in self.scan_plan:
            if i in ruled_out:
                continue
            if anchors and i not in anchored:
                continue
            if requires and not any(map(has, requires)):
                continue
            if run:
                if shape is None:
                    shape = gate_shape(text)
                if run not in shape:
                    continue
            if rule.needs and not self._has(i, text, found, timeout):
                continue
            first = pattern.search(text, timeout=timeout)  # most rules find nothing in most notes: no generator
            if first is not None:
                after = first.end() if first.end() > first.start() else first.end() + 1
                self._apply(rule, [first, *pattern.finditer(text, after, timeout=timeout)], text, phi, sup)
        for i, positions in starts.items():
            if not positions or i in ruled_out:  # no position: only its narrowed or dead triggers occur
                continue
            run = self.digit_runs[i]
            if run:
                if shape is None:
                    shape = gate_shape(text)
                if run not in shape:
                    continue
            rule = self.rules[i]
            if rule.needs and (rule.needs_search or screened is None) and not self._has(i, text, found, timeout):
                continue
            # one trigger position (most rules in most notes) is in order already
            self._apply_at(rule, positions if len(positions) == 1 else sorted(set(positions)),
                           text, phi, sup, timeout)
        return phi, sup

    def trigger_starts(self, doc: Doc) -> tuple[dict[int, list[int]], set[int]]:
        """(triggered rule -> the note offsets where one of its triggers begins; the rules one of whose
        `anchors` begins a word of the note): triggers.py."""
        return self.triggers.starts(doc)

    def _has(self, i: int, text: str, found: dict[str, bool], timeout: float | None) -> bool:
        """Does the note hold rule i's `needs` pattern (searched once per note per distinct pattern)?"""
        key = self.rules[i].needs
        hit = found.get(key)
        if hit is None:
            hit = found[key] = self.need_patterns[i].search(text, timeout=timeout) is not None
        return hit

    def _apply_at(self, rule: Rule, positions: list[int], text: str, phi: list[Span], sup: list[Span],
                  timeout: float | None = None) -> None:
        """A triggered rule tried at its trigger positions, in order. Linear time on any note:
        - each attempt reads at most TRIGGER_REACH characters (`regex` scans from the position to
          the end of the text for a literal the pattern requires, at every match() call);
        - a match that ends near that bound is redone on the whole text, and a position inside a
          span kept from such a long match is not tried again (as finditer does for scan rules),
          so a run of triggers inside one long match ("www.www.www...") is read once. Short
          matches (all real ones) are tried at every trigger, as before.
        """
        _try_at(self, rule, positions, text, phi, sup, timeout)

    def _apply(self, rule: Rule, matches, text: str, phi: list[Span], sup: list[Span]) -> None:
        """Turn one rule's matches into spans."""
        for m in matches:
            span = _span_of(self, rule, m, text)
            if span is not None:
                (sup if rule.label == NONPHI else phi).append(span)

    def _span(self, rule: Rule, m, text: str) -> Span | None:
        """The span of one match (context, filter, whitespace trim), or None when it is not kept."""
        return _span_of(self, rule, m, text)

    def _filter(self, name: str, text: str, start: int, end: int) -> tuple[int, int] | None:
        """The span filter `name` keeps of the hit text[start:end] (None: dropped); a context-free filter's result is
        remembered per hit text."""
        if name not in CONTEXT_FREE:
            return FILTERS[name](text, start, end, self.filter_settings)
        key = (name, text[start:end])
        memo = self._filtered
        if key in memo:
            rel = memo[key]
            return None if rel is None else (start + rel[0], start + rel[1])
        kept = FILTERS[name](text, start, end, self.filter_settings)
        if len(memo) >= FILTER_MEMO:
            memo.clear()
        memo[key] = None if kept is None else (kept[0] - start, kept[1] - start)
        return kept

    def gazetteer_spans(self, doc: Doc) -> list[Span]:
        """Spans of the [[gazetteer]] rules over the gazetteer entries found in the note."""
        if not self.gazetteer_rules:
            return []
        text = doc.text
        hits = rule_hits(doc)
        if not hits:
            return []
        by_start: dict[int, list] = {}
        for h in hits:
            by_start.setdefault(h[0], []).append(h)
        out: list[Span] = []
        applies = self._gaz_for
        for s, e, names in hits:
            surface = None
            rules = applies.get(names)
            if rules is None:  # a handful of distinct sets of lists (shared objects): each read once per process
                rules = applies[names] = tuple((g, then) for g, want, then in self._gaz if not want.isdisjoint(names))
            for g, then in rules:
                if e - s < g.min_len:
                    continue
                if surface is None:
                    surface = text[s:e]
                if not _case_ok(surface, g.case):
                    continue
                if then:
                    if e >= len(text) or text[e] != " ":
                        continue
                    nxt = [h for h in by_start.get(e + 1, ()) if not then.isdisjoint(h[2])]
                    if not nxt:
                        continue
                    e2 = max(h[1] for h in nxt)
                    if not _case_ok(text[s:e2], g.case):
                        continue
                    if g.guard and (is_frequent(surface) or is_frequent(text[e + 1:e2])):
                        continue
                    out.append(Span(s, e2, g.label, g.id, g.confidence))
                    continue
                if g.guard and " " not in surface and is_common(surface):
                    continue
                out.append(Span(s, e, g.label, g.id, g.confidence))
        return out

    def tag_raw(self, doc: Doc, hits: tuple[list[Span], list[Span]] | None = None) -> list[Span]:
        """Every PHI hit (rules, gazetteers, metadata) after suppression, possibly overlapping."""
        phi, sup = hits if hits is not None else self.regex_hits(doc)
        phi = list(phi)
        phi.extend(self.gazetteer_spans(doc))
        if self.metadata is not None:
            phi.extend(self.metadata.match(doc))
        if sup:
            prio = self.priority
            mp = self.settings.metadata_priority
            sup.sort(key=lambda s: s.start)
            sup_starts = [s.start for s in sup]
            # suppressors are short: any one overlapping p starts within max_len before p.end
            max_len = max(s.end - s.start for s in sup)
            kept = []
            for p in phi:
                pp = prio.get(p.source, mp)
                lo = bisect_left(sup_starts, p.start - max_len)
                hi = bisect_left(sup_starts, p.end)
                if not any(sup[k].end > p.start and pp < prio.get(sup[k].source, 50) for k in range(lo, hi)):
                    kept.append(p)
            phi = kept
        return phi

    def run(self, doc: Doc, state: NoteState) -> list[Span]:
        """The stage: tag, and hand the spans to later stages (CRF rule_hits features) and the
        non-PHI contexts (suppressor hits: vent settings, scores, fractions) to the merge."""
        hits = self.regex_hits(doc)
        state.nonphi = sorted(hits[1], key=lambda s: s.start)
        raw = self.tag_raw(doc, hits)
        spans = self._resolve(raw)
        # the CRF's rule_hits features read the rules as if those marked `crf_feature = false` were absent
        # (when no such rule fired, the same input resolves to the same spans: a copy, not a second pass)
        merge_only = self.merge_only
        if not merge_only:
            state.rule_spans = spans
        elif any(s.source in merge_only for s in raw):
            state.rule_spans = self._resolve([s for s in raw if s.source not in merge_only])
        else:
            state.rule_spans = list(spans)
        return spans

    def tag(self, doc: Doc, hits: tuple[list[Span], list[Span]] | None = None) -> list[Span]:
        """Non-overlapping PHI spans: higher priority, then longer, wins."""
        return self._resolve(self.tag_raw(doc, hits))

    def feature_spans(self, doc: Doc) -> list[Span]:
        """The spans the CRF's rule_hits features read, as `run` hands them over: training reads the
        rules exactly as tagging does (the rules marked `crf_feature = false` reach the merge only)."""
        state = NoteState()
        self.run(doc, state)
        return state.rule_spans or []

    def _resolve(self, raw: list[Span]) -> list[Span]:
        prio = self.priority
        mp = self.settings.metadata_priority
        return resolve_overlaps(raw, rank=lambda s: (prio.get(s.source, mp), s.end - s.start, s.confidence, -s.start))


def _try_at(tagger: RuleTagger, rule: Rule, positions: list[int], text: str, phi: list[Span], sup: list[Span],
            timeout: float | None) -> None:
    """RuleTagger._apply_at's loop (typed by tagger.pxd)."""
    pattern = rule.compiled[0]
    n = len(text)
    covered = -1
    for p in positions:
        if p < covered:
            continue
        end = min(n, p + TRIGGER_REACH)
        m = pattern.match(text, p, end, timeout=timeout)
        long = m is not None and end < n and m.end() > end - REACH_MARGIN
        if long:
            m = pattern.match(text, p, timeout=timeout)
        span = _span_of(tagger, rule, m, text) if m is not None else None
        if span is not None:
            (sup if rule.label == NONPHI else phi).append(span)
            if long:
                covered = span.end


def _span_of(tagger: RuleTagger, rule: Rule, m, text: str) -> Span | None:
    """RuleTagger._span (typed by tagger.pxd)."""
    _, ctx, ctx_after, has_phi, has_from = rule.compiled
    start, end = m.span("phi") if has_phi else m.span()
    if has_from and m.start("from") >= 0:
        start = min(start, m.start("from"))
    if start < 0 or start >= end:
        return None
    if ctx is not None and not ctx.search(text, max(0, m.start() - rule.window), m.start()):
        return None
    if ctx_after is not None and not ctx_after.match(text, m.end(), min(len(text), m.end() + rule.window)):
        return None
    if rule.filter:
        kept = tagger._filter(rule.filter, text, start, end)
        if kept is None:
            return None
        start, end = kept
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return Span(start, end, rule.label, rule.id, rule.confidence) if start < end else None


def rule_stage(config: Config, bundle) -> RuleTagger:
    """Pipeline stage factory ([registry.stages] rules): a RuleTagger from config's [rules] table."""
    return RuleTagger(config.rules)
