"""Load rule sets from conf/rules/*.toml into validated, compiled Rule objects.

A rule file holds an optional `[macros]` table (NAME = "regex", used as `{{NAME}}` in
patterns of any loaded file) and `[[rule]]` entries: id, label (a taxonomy label, or
NONPHI for a suppressor), pattern (the `regex` package's syntax; a named group `phi` marks
the PHI part, otherwise the whole match; a group `from`, e.g. inside a look-behind, moves
the span's start back to it), priority, description, optional `flags`
("i" ignore case, "m" multiline), `filter` (see filters.py; the name filters in name_filters.py), `context` / `context_after`
(a regex that must match within `window` characters before / after the hit),
`triggers` (words or phrases, any case: the pattern is then tried only where one of them
starts a word, found by one Aho-Corasick pass for all rules; much faster than scanning), `trigger_next`
(words, or "#" for a digit, one of which follows the trigger wherever the pattern can match: the rule is
tried only there; every example holds one; triggers.py),
`requires` (literal substrings: the rule is skipped for a note containing none of them),
`needs` (a regex the note must contain somewhere for the rule to run: a fast necessary condition,
e.g. `\\d{5}` for a rule ending in a ZIP code; every example must contain it), `needs_search` (false: a triggered
rule's `needs` is read from the RE2 screen's one pass only, its superset found in an ASCII note, and never searched
with `regex`: a wider gate, for a `needs` whose search would cost about what it saves; screen.py), `anchors` (words, any
case: the rule runs only on a note where one of them begins a word, found in the triggers' one
Aho-Corasick pass, so nearly free; a necessary condition like `needs`, every example holds one), `digits` (N: the
pattern cannot match without N consecutive digits, e.g. `\\d{5}` of a ZIP code; on an ASCII note the rule is skipped
unless it holds such a run, tested as a substring of the note's digit shape, prefilter.py; every example holds one), `guard` (true: the
note is scanned with a first-character look-ahead derived from the pattern, prefilter.py: same
matches, faster for patterns opening with look-behinds), `crf_feature` (false: the rule's spans reach
the merge but not the CRF's rule_hits features, so adding such a rule leaves the trained CRF as it
was: for high-precision context rules whose spans win at the merge anyway), and
`examples` / `negatives`: example texts with the expected PHI marked as [[...]].
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import regex

from deid_core import taxonomy
from deid_core.config import ConfigError, conf_dir, load_toml
from deid_core.engine.rules.prefilter import digit_shape
from deid_core.gazetteers import normalize_phrase

NONPHI = "NONPHI"
_MACRO_RE = regex.compile(r"\{\{([A-Z_][A-Z0-9_]*)\}\}")
_EXAMPLE_RE = regex.compile(r"\[\[(.*?)\]\]", regex.S)
_FLAGS = {"i": regex.IGNORECASE, "m": regex.MULTILINE, "s": regex.DOTALL, "x": regex.VERBOSE}


@dataclass(frozen=True)
class Rule:
    """One declarative rule, pattern already macro-expanded."""

    id: str
    label: str
    pattern: str
    priority: int = 50
    description: str = ""
    flags: str = ""
    filter: str = ""
    context: str = ""
    context_after: str = ""
    window: int = 40
    confidence: float = 0.9
    triggers: tuple[str, ...] = ()
    trigger_next: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    needs: str = ""
    needs_search: bool = True
    anchors: tuple[str, ...] = ()
    digits: int = 0
    guard: bool = False
    crf_feature: bool = True
    examples: tuple[str, ...] = ()
    negatives: tuple[str, ...] = ()
    file: str = ""
    compiled: object = field(default=None, compare=False, repr=False)

    @property
    def suppressor(self) -> bool:
        """True for a NONPHI rule that cancels lower-priority PHI hits it overlaps."""
        return self.label == NONPHI


def parse_example(example: str) -> tuple[str, list[tuple[int, int]]]:
    """Plain text of an example and the [start, end) of each [[marked]] part."""
    out, marks, pos = [], [], 0
    length = 0
    for m in _EXAMPLE_RE.finditer(example):
        out.append(example[pos:m.start()])
        length += m.start() - pos
        marks.append((length, length + len(m.group(1))))
        out.append(m.group(1))
        length += len(m.group(1))
        pos = m.end()
    out.append(example[pos:])
    return "".join(out), marks


def rule_files(names: list[str] | tuple[str, ...]) -> list[Path]:
    """Resolve rule file names (relative to conf/, or absolute)."""
    paths = []
    for name in names:
        p = Path(name)
        if not p.is_absolute():
            p = conf_dir() / p
        if not p.is_file():
            raise ConfigError(f"rule file not found: {p}")
        paths.append(p)
    return paths


def _expand(pattern: str, macros: dict[str, str], rule_id: str, depth: int = 0) -> str:
    if depth > 8:
        raise ConfigError(f"rule {rule_id}: macros nest too deeply")

    def sub(m: regex.Match) -> str:
        if m.group(1) not in macros:
            raise ConfigError(f"rule {rule_id}: unknown macro {{{{{m.group(1)}}}}}")
        return "(?:" + _expand(macros[m.group(1)], macros, rule_id, depth + 1) + ")"

    return _MACRO_RE.sub(sub, pattern)


def compile_rule(rule: Rule) -> Rule:
    """The rule with its compiled pattern; ConfigError names the rule when it does not compile."""
    flags = regex.V0
    for f in rule.flags:
        if f not in _FLAGS:
            raise ConfigError(f"rule {rule.id}: unknown flag {f!r}; accepted: {', '.join(_FLAGS)}")
        flags |= _FLAGS[f]
    try:
        if rule.needs and any(not regex.search(rule.needs, parse_example(e)[0]) for e in rule.examples):
            raise ConfigError(f"rule {rule.id}: an example does not contain its `needs` pattern")
        _check_anchors(rule)
        _check_needs_search(rule)
        _check_trigger_next(rule)
        _check_digits(rule)
        compiled = regex.compile(rule.pattern, flags)
        ctx = regex.compile(rule.context, regex.IGNORECASE) if rule.context else None
        ctx_after = regex.compile(rule.context_after, regex.IGNORECASE) if rule.context_after else None
    except regex.error as exc:
        raise ConfigError(f"rule {rule.id}: pattern does not compile: {exc}") from None
    object.__setattr__(rule, "compiled", (compiled, ctx, ctx_after, "phi" in compiled.groupindex,
                                         "from" in compiled.groupindex))
    return rule


def _check_anchors(rule: Rule) -> None:
    """Anchors are single words, and every example holds one at a word start (as the tagger looks for them)."""
    words = [normalize_phrase(a) for a in rule.anchors]
    if any(not w or " " in w for w in words):
        raise ConfigError(f"rule {rule.id}: `anchors` must be single words")
    if words and rule.triggers:
        raise ConfigError(f"rule {rule.id}: `anchors` gate scan rules; a rule with `triggers` takes none")
    for e in rule.examples:
        text = " " + normalize_phrase(parse_example(e)[0])
        if words and not any(" " + w in text for w in words):
            raise ConfigError(f"rule {rule.id}: an example holds none of its `anchors`")


def _check_needs_search(rule: Rule) -> None:
    """`needs_search = false` reads a triggered rule's `needs` from the screen (a scan rule is screened by its pattern)."""
    if not isinstance(rule.needs_search, bool):
        raise ConfigError(f"rule {rule.id}: `needs_search` must be true or false")
    if not rule.needs_search and not (rule.needs and rule.triggers):
        raise ConfigError(f"rule {rule.id}: `needs_search = false` screens a triggered rule's `needs`; "
                          "the rule has no `needs` or no `triggers`")


def _check_trigger_next(rule: Rule) -> None:
    """`trigger_next` narrows triggers, and every example holds a trigger followed by one of its next words."""
    if not rule.trigger_next:
        return
    if not rule.triggers:
        raise ConfigError(f"rule {rule.id}: `trigger_next` narrows `triggers`; the rule has none")
    nexts = [r"\d" if n == "#" else regex.escape(normalize_phrase(n)) for n in rule.trigger_next]
    if any(not n for n in nexts):
        raise ConfigError(f"rule {rule.id}: empty `trigger_next` word")
    found = regex.compile(r"(?<![^ ])(?:" + "|".join(regex.escape(normalize_phrase(t)) for t in rule.triggers)
                          + ") (?:" + "|".join(nexts) + ")")
    for e in rule.examples:
        if not found.search(normalize_phrase(parse_example(e)[0])):
            raise ConfigError(f"rule {rule.id}: an example holds none of its triggers followed by a `trigger_next`")


def _check_digits(rule: Rule) -> None:
    """`digits` is a small run length, and every example holds such a run of ASCII digits."""
    if not isinstance(rule.digits, int) or isinstance(rule.digits, bool) or not 0 <= rule.digits <= 16:
        raise ConfigError(f"rule {rule.id}: `digits` must be a whole number from 0 to 16")
    run = "0" * rule.digits
    if rule.digits and any(run.encode() not in (digit_shape(parse_example(e)[0]) or run.encode())
                           for e in rule.examples):
        raise ConfigError(f"rule {rule.id}: an example holds no run of {rule.digits} digits (`digits`)")


def load_settings(files: list[str] | tuple[str, ...]) -> dict:
    """The merged `[settings]` tables of the rule files (data the filters read)."""
    out: dict = {}
    for p in rule_files(files):
        out.update(load_toml(p).get("settings", {}))
    return out


def load_rules(files: list[str] | tuple[str, ...]) -> list[Rule]:
    """All rules of the given files, macro-expanded, validated and compiled, in file order."""
    paths = rule_files(files)
    docs = [(p, load_toml(p)) for p in paths]
    macros: dict[str, str] = {}
    for _, data in docs:
        macros.update(data.get("macros", {}))
    known = set(taxonomy.labels()) | {NONPHI}
    rules: list[Rule] = []
    seen: set[str] = set()
    for p, data in docs:
        for raw in data.get("rule", []):
            rid = raw.get("id")
            if not rid or rid in seen:
                raise ConfigError(f"{p.name}: rule id missing or duplicated: {rid!r}")
            seen.add(rid)
            unknown = set(raw) - set(Rule.__dataclass_fields__) - {"compiled"}
            if unknown:
                raise ConfigError(f"rule {rid}: unknown field(s) {sorted(unknown)}")
            if raw.get("label") not in known:
                raise ConfigError(f"rule {rid}: unknown label {raw.get('label')!r}")
            if "pattern" not in raw:
                raise ConfigError(f"rule {rid}: no pattern")
            fields = dict(raw)
            fields["pattern"] = _expand(raw["pattern"], macros, rid)
            for key in ("context", "context_after", "needs"):
                if key in fields:
                    fields[key] = _expand(fields[key], macros, rid)
            fields["examples"] = tuple(raw.get("examples", ()))
            fields["negatives"] = tuple(raw.get("negatives", ()))
            fields["triggers"] = tuple(raw.get("triggers", ()))
            fields["trigger_next"] = tuple(raw.get("trigger_next", ()))
            fields["requires"] = tuple(raw.get("requires", ()))
            fields["anchors"] = tuple(raw.get("anchors", ()))
            fields["file"] = p.name
            rules.append(compile_rule(Rule(**fields)))
    return rules
