"""A rule pattern's supersets in RE2 syntax, for ASCII text: found in every note where the `regex` pattern matches.

Read off the pattern parsed by Python's own regex parser (as prefilter.first_class does; syntax that
parser does not read the same way as `regex` gets no superset). Every character class becomes the
explicit set of ASCII characters it matches, found by asking `regex` itself (case folding, `\\d \\w \\s`
and `\\p{..}` included), so the result is exact on ASCII text where it is not widened on purpose:
look-arounds drop out where they are not read as below (they only restrict), a back-reference becomes
its group's pattern read in any case and without its assertions (a pattern with repeated group names and
a back-reference is refused: the reference may name either group, and the numbers after it shift),
possessive and atomic parts plain, lazy repeats greedy, `^`/`$` match at every line, and long counted
repeats lose their upper bound (a smaller RE2 program). Dropping a restriction only widens what matches. A positive look-behind that opens the pattern is read as text before the match and a
positive look-ahead that closes it as text after it; any other positive look-around every match passes
through must itself be found in the note: a further pattern, all of which must be found. A one-character
negative look-behind opening a pattern whose kept core reads one character adds the character before the match
(one it allows, or the text's start) with the match's first items (_Reader.opening).
Only ASCII notes are screened (screen.py); any other note runs every rule.
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

import regex

from deid_core.engine.rules.prefilter import risky_syntax

_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL}
_ASCII = [chr(c) for c in range(128)]
_CATEGORY = {sre.CATEGORY_DIGIT: r"\d", sre.CATEGORY_NOT_DIGIT: r"\D", sre.CATEGORY_SPACE: r"\s",
             sre.CATEGORY_NOT_SPACE: r"\S", sre.CATEGORY_WORD: r"\w", sre.CATEGORY_NOT_WORD: r"\W"}
_REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT)
_ZERO_WIDTH = (sre.AT, sre.ASSERT, sre.ASSERT_NOT)
_GAP = 64  # a long run over classes of this many ASCII characters or more is a gap (parts below)
_WIDE = 40  # a class of this many ASCII characters or more (letters, \\w, [^\\n]) selects little
_OPENING_MAX = 4  # characters of a match's opening read with the character before it (superset: opening)
_WIDEN_ABOVE = 12  # a counted repeat with a larger bound loses its upper bound (x{1,60} -> x+; x{20} -> x{12,})
_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>")
_PROPERTY = re.compile(r"\\[pP](?:\{[^{}]*\}|[A-Za-z])")
_POSIX_CLASS = re.compile(r"\[:\^?[A-Za-z]+:\]")  # `regex` reads [[:alpha:]]-like classes, Python's parser does not
_PLACEHOLDER = 0xF0000  # \p{..} stands in the parsed pattern as a private-use character from here
_LEADING_FLAGS = re.compile(r"\(\?([ims]+)\)")  # `(?i)` opening a pattern: its flags for the whole pattern


class Unsupported(Exception):
    """The pattern holds something this conversion does not read: no superset."""


def _word_is_ascii() -> bool:
    """`regex`'s \\w on ASCII characters is RE2's [0-9A-Za-z_], so RE2's \\b and \\B agree on ASCII text."""
    return {c for c in _ASCII if regex.match(r"\w", c)} == set(
        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")


_ASCII_WORD = _word_is_ascii()


@lru_cache(maxsize=4096)
def _ascii_set(klass: str, icase: bool) -> frozenset[str]:
    """The ASCII characters the `regex` character class (or escape) `klass` matches, as a rule reads it."""
    compiled = regex.compile(klass, regex.V0 | (regex.IGNORECASE if icase else 0))
    return frozenset(c for c in _ASCII if compiled.fullmatch(c))


def _klass(chars: frozenset[str]) -> str:
    """An RE2 item matching exactly these ASCII characters (one that never matches when empty)."""
    if not chars:
        return r"[^\x00-\xff]"
    if len(chars) == 1:
        return _esc(next(iter(chars)))
    codes = sorted(ord(c) for c in chars)
    parts, start, prev = [], codes[0], codes[0]
    for c in codes[1:] + [-1]:
        if c == prev + 1:
            prev = c
            continue
        parts.append(f"\\x{start:02x}" if start == prev else f"\\x{start:02x}-\\x{prev:02x}")
        start = prev = c
    return "[" + "".join(parts) + "]"


def _esc(ch: str) -> str:
    return ch if ch.isascii() and ch.isalnum() else f"\\x{ord(ch):02x}"


class _Reader:
    """One pattern's conversion: the \\p{..} placeholders, and the further patterns found on the way."""

    def __init__(self, properties: dict[int, str], tree: list) -> None:
        self.properties = properties
        self.tree = tree  # the whole parsed pattern (for the group a back-reference names)
        self.extra: list[str] = []
        self.copying = 0  # > 0 while reading a group's pattern for a back-reference's copy of its text

    def _u(self, code: int) -> str:
        """A code point as `regex` source (a placeholder as its \\p{..})."""
        return self.properties.get(code) or f"\\U{code:08x}"

    def _class_source(self, items) -> str:
        out, neg = [], False
        for op, av in items:
            if op is sre.NEGATE:
                neg = True
            elif op is sre.LITERAL:
                out.append(self._u(av))
            elif op is sre.RANGE:
                if av[0] in self.properties or av[1] in self.properties:
                    raise Unsupported("range with a property")
                out.append(self._u(av[0]) + "-" + self._u(av[1]))
            elif op is sre.CATEGORY and av in _CATEGORY:
                out.append(_CATEGORY[av])
            else:
                raise Unsupported(str(op))
        return "[" + ("^" if neg else "") + "".join(out) + "]"

    def parts(self, items, icase: bool, dotall: bool) -> list[str]:
        """RE2 sources all found wherever the whole sequence matches: its core (below), cut at each gap (a
        long run of nearly any character: `[^\\n]*`), which in RE2's Set would keep a partial match alive
        to the end of the line and multiply the DFA's states; each part is searched on its own."""
        items = _flatten(list(items))
        a, b = self.core(items, icase)
        for trimmed in (items[:a], items[b:]):  # their positive look-arounds still hold somewhere
            self.seq(trimmed, icase, dotall, True)
        kept, out, start = items[a:b], [], 0
        for k, (op, av) in enumerate(kept + [(None, None)]):
            if op is None or self._gap(op, av, icase):
                out.append(self.seq(kept[start:k], icase, dotall, True, lead=True, trail=True))
                if op is not None:
                    self.seq([(op, av)], icase, dotall, True)  # the gap's own look-arounds
                start = k + 1
        return [p for p in out if p]

    def opening(self, items, icase: bool, dotall: bool) -> str:
        """For a pattern opening with a one-character negative look-behind (`(?<![\\w.])[A-Za-z]\\.`) whose kept core
        reads one character: the character before the match (one the look-behind allows, or the text's start)
        and the match's first items up to the first that is not loose, when those read at most _OPENING_MAX
        characters; else "". parts() trims both (a name-like letter and a look-behind select little alone), but
        together they can: a one-letter word and its period. Found wherever the pattern matches: its match
        starts where the look-behind held."""
        items = _flatten(list(items))
        k, allowed = 0, None
        while k < len(items) and items[k][0] in _ZERO_WIDTH:
            op, av = items[k]
            if op is sre.ASSERT_NOT and av[0] < 0 and allowed is None:
                refused = self._one_character(list(av[1]), icase)
                if refused is not None:
                    allowed = frozenset(_ASCII) - refused
            k += 1
        end = k
        while end < len(items) and (items[end][0] in _ZERO_WIDTH or self._loose(*items[end], icase)):
            end += 1
        if allowed is None or end >= len(items) or _width(items[k:end + 1]) > _OPENING_MAX:
            return ""
        a, b = self.core(items, icase)
        if _width(items[a:b]) > 1:  # the kept core selects well enough: one more pattern would cost more than it saves
            return ""
        return r"(?:\A|" + _klass(allowed) + ")" + self.seq(items[k:end + 1], icase, dotall, False)

    def _one_character(self, items, icase: bool) -> frozenset[str] | None:
        """The ASCII characters a look-behind of one literal or class refuses, or None for any other look-behind."""
        if len(items) != 1:
            return None
        op, av = items[0]
        if op is sre.LITERAL:
            return _ascii_set(self._u(av), icase)
        if op is sre.NOT_LITERAL:
            return _ascii_set("[^" + self._u(av) + "]", icase)
        if op is sre.IN:
            return _ascii_set(self._class_source(av), icase)
        return None

    def _gap(self, op, av, icase: bool) -> bool:
        """A long run over classes of at least _GAP ASCII characters."""
        return op in _REPEATS and (av[1] is sre.MAXREPEAT or av[1] > _WIDEN_ABOVE) and self._wide(av[2], icase, _GAP)

    def core(self, items: list, icase: bool) -> tuple[int, int]:
        """[a, b): the top-level items kept. Any contiguous part of a sequence is found wherever the sequence is,
        so optional items and items over wide classes (name-like letters and runs of them) at either end are
        left out: they select little, and in RE2's Set their partial matches last long and multiply its states."""
        consuming = [k for k, (op, _) in enumerate(items) if op not in _ZERO_WIDTH]
        left = [k for k in consuming if not self._loose(*items[k], icase)]
        if not left:
            return 0, len(items)
        a = max([k for k in consuming if k < left[0]], default=-1) + 1
        b = min([k for k in consuming if k > left[-1]], default=len(items))
        return a, b

    def _loose(self, op, av, icase: bool) -> bool:
        """An optional item, one over wide classes only, or a group of such items."""
        if op is sre.SUBPATTERN:
            inner = (icase or bool(av[1] & re.IGNORECASE)) and not av[2] & re.IGNORECASE
            return all(self._loose(o, a, inner) for o, a in av[3] if o not in _ZERO_WIDTH)
        return (op in _REPEATS and av[0] == 0) or self._wide([(op, av)], icase)

    def _wide(self, items, icase: bool, size: int = 0) -> bool:
        """Every character the items consume comes from a class of at least `size` (_WIDE) ASCII characters."""
        size = size or _WIDE
        for op, av in items:
            if op in _ZERO_WIDTH:
                continue
            if op is sre.IN:
                if len(_ascii_set(self._class_source(av), icase)) < size:
                    return False
            elif op is sre.NOT_LITERAL:
                if len(_ascii_set("[^" + self._u(av) + "]", icase)) < size:
                    return False
            elif op is sre.LITERAL and av in self.properties:
                if len(_ascii_set(self._u(av), icase)) < size:
                    return False
            elif op in _REPEATS:
                if not self._wide(av[2], icase, size):
                    return False
            elif op is sre.SUBPATTERN:
                if not self._wide(av[3], icase, size):
                    return False
            elif op is sre.BRANCH:
                if not all(self._wide(alt, icase, size) for alt in av[1]):
                    return False
            elif op is not sre.ANY:
                return False
        return True

    def seq(self, items, icase: bool, dotall: bool, must: bool, lead: bool = False, trail: bool = False) -> str:
        """RE2 source for a parsed sequence. must: every match passes through it (its positive look-arounds
        become further patterns); lead / trail: nothing is consumed before / after it in the whole pattern."""
        items = list(items)
        consuming = [k for k, (op, _) in enumerate(items) if op not in _ZERO_WIDTH]
        first = consuming[0] if consuming else len(items)
        last = consuming[-1] if consuming else -1
        out: list[str] = []
        prefix = suffix = ""
        for k, (op, av) in enumerate(items):
            if op is sre.ASSERT:
                direction, sub = av
                whole = not any(self._gap(o, a, icase) for o, a in _flatten(list(sub)))
                if lead and direction < 0 and k < first and not prefix and whole:
                    prefix = self.seq(sub, icase, dotall, must, lead=True)
                elif trail and direction > 0 and k > last and not suffix and whole:
                    suffix = self.seq(sub, icase, dotall, must, trail=True)
                elif must:
                    self.extra += self.parts(sub, icase, dotall)
                continue
            if op is sre.ASSERT_NOT:
                continue
            # the first / last consuming item opens / closes the match only if nothing zero-width is read
            # before / after it here (an assertion, this sequence's own look-behind or look-ahead text)
            inner_lead = lead and k == first and not prefix and not "".join(out)
            inner_trail = trail and k == last and not any(
                o is sre.AT or (o is sre.ASSERT and a[0] > 0) for o, a in items[k + 1:])
            out.append(self.item(op, av, icase, dotall, must, inner_lead, inner_trail))
        return prefix + "".join(out) + suffix

    def item(self, op, av, icase: bool, dotall: bool, must: bool, lead: bool, trail: bool) -> str:
        """RE2 source for one parsed item."""
        if op is sre.LITERAL:
            if av in self.properties or icase or av > 127:
                return _klass(_ascii_set(self._u(av), icase))
            return _esc(chr(av))
        if op is sre.NOT_LITERAL:
            return _klass(_ascii_set("[^" + self._u(av) + "]", icase))
        if op is sre.IN:
            return _klass(_ascii_set(self._class_source(av), icase))
        if op is sre.ANY:
            return r"(?s:.)" if dotall else r"[^\n]"
        if op is sre.AT:
            if self.copying:  # the copy need not stand where the group's assertions held: `(\\ba)\\1` finds "aa"
                return ""
            if av in (sre.AT_BEGINNING, sre.AT_BEGINNING_LINE):
                return "(?m:^)"
            if av in (sre.AT_END, sre.AT_END_LINE):
                return "(?m:$)"
            if av is sre.AT_BEGINNING_STRING:
                return r"\A"
            if av is sre.AT_END_STRING:
                return r"\z"
            if av is sre.AT_BOUNDARY and _ASCII_WORD:
                return r"\b"
            if av is sre.AT_NON_BOUNDARY and _ASCII_WORD:
                return r"\B"
            return ""  # any other assertion only restricts
        if op in _REPEATS:
            lo, hi, sub = av
            body = self.seq(sub, icase, dotall, must and lo > 0)
            if not body:
                return ""
            lo = min(lo, _WIDEN_ABOVE)
            if hi is sre.MAXREPEAT or hi > _WIDEN_ABOVE:
                rep = "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
            else:
                rep = "?" if (lo, hi) == (0, 1) else f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
            return f"(?:{body}){rep}"
        if op is sre.SUBPATTERN:
            _, add, drop, sub = av
            # a back-reference compares the whole copy in its own case mode, whatever the group's scoped flags
            inner_i = bool(self.copying) or (icase or bool(add & re.IGNORECASE)) and not drop & re.IGNORECASE
            inner_s = (dotall or bool(add & re.DOTALL)) and not drop & re.DOTALL
            return f"(?:{self.seq(sub, inner_i, inner_s, must, lead, trail)})"
        if op is sre.ATOMIC_GROUP:
            return f"(?:{self.seq(av, icase, dotall, must, lead, trail)})"
        if op is sre.BRANCH:
            return "(?:" + "|".join(self.seq(alt, icase, dotall, False, lead, trail) for alt in av[1]) + ")"
        if op is sre.GROUPREF:  # the text the group matched: a match of its pattern, read in any case
            body = _group(self.tree, av)
            if body is None:
                return r"(?s:.)*"
            self.copying += 1
            try:
                return f"(?:{self.seq(body, True, True, False)})"
            finally:
                self.copying -= 1
        raise Unsupported(str(op))  # conditionals, unknown nodes


def _width(items) -> float:
    """The most characters the parsed items can consume (inf when unbounded or not known)."""
    total = 0.0
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op in (sre.LITERAL, sre.NOT_LITERAL, sre.IN, sre.ANY):
            total += 1
        elif op in _REPEATS:
            total += float("inf") if av[1] is sre.MAXREPEAT else av[1] * _width(av[2])
        elif op is sre.SUBPATTERN:
            total += _width(av[3])
        elif op is sre.ATOMIC_GROUP:
            total += _width(av)
        elif op is sre.BRANCH:
            total += max(_width(alt) for alt in av[1])
        else:
            return float("inf")
    return total


def _children(op, av) -> list:
    """The parsed sequences directly inside one item."""
    if op is sre.SUBPATTERN:
        return [av[3]]
    if op in _REPEATS:
        return [av[2]]
    if op in (sre.ASSERT, sre.ASSERT_NOT):
        return [av[1]]
    if op is sre.ATOMIC_GROUP:
        return [av]
    if op is sre.BRANCH:
        return list(av[1])
    return []


def _group(items, number: int):
    """The parsed body of capturing group `number`, or None."""
    for op, av in items:
        if op is sre.SUBPATTERN and av[0] == number:
            return av[3]
        for sub in _children(op, av):
            found = _group(sub, number)
            if found is not None:
                return found
    return None


def _refers(items) -> bool:
    """The parsed items hold a back-reference."""
    return any(op is sre.GROUPREF or any(_refers(sub) for sub in _children(op, av)) for op, av in items)


def _flatten(items: list) -> list:
    """The top-level sequence with its plain groups opened (a named group, an atomic one): the same pattern."""
    out = []
    for op, av in items:
        if op is sre.SUBPATTERN and not av[1] and not av[2]:
            out += _flatten(list(av[3]))
        elif op is sre.ATOMIC_GROUP:
            out += _flatten(list(av))
        else:
            out.append((op, av))
    return out


def _prepare(pattern: str) -> tuple[str, dict[int, str], bool]:
    """The pattern as Python's parser takes it: each \\p{..} a placeholder, repeated group names dropped
    (and whether any was)."""
    properties: dict[int, str] = {}
    parts, pos, k = [], 0, 0
    while True:
        k = pattern.find("\\", k)
        if k < 0:
            break
        m = _PROPERTY.match(pattern, k)
        if m is None:
            k += 2  # an escaped character: skip it (an escaped backslash included)
            continue
        code = _PLACEHOLDER + len(properties)
        if chr(code) in pattern:
            raise Unsupported("placeholder in the pattern")
        properties[code] = m.group(0)
        parts += [pattern[pos:k], f"\\U{code:08x}"]
        pos = k = m.end()
    text = "".join(parts) + pattern[pos:]
    seen: set[str] = set()
    repeated = [False]

    def rename(m: re.Match) -> str:
        if m.group(1) in seen:  # `regex` gives it the first one's number, Python's parser a new one: only
            repeated[0] = True  # a pattern without back-references reads the same (superset() checks)
            return "("
        seen.add(m.group(1))
        return m.group(0)

    return _NAMED_GROUP.sub(rename, text), properties, repeated[0]


def superset(pattern: str, flags: str = "") -> tuple[str, ...] | None:
    """RE2 patterns all found in every ASCII text where `pattern` (`regex` syntax, a rule's flags) matches
    (`search` over the whole text), or None when the pattern is not read safely (never screened out)."""
    if _POSIX_CLASS.search(pattern):
        return None
    re_flags = 0
    for f in flags:
        if f not in _FLAGS:  # "x" included: `regex` and Python's parser read verbose patterns differently
            return None
        re_flags |= _FLAGS[f]
    try:
        text, properties, repeated = _prepare(pattern)
        if risky_syntax(text):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "possible nested set" and the like: `regex` may read it otherwise
            parsed = sre_parse.parse(text, re_flags)
        if repeated and _refers(list(parsed)):
            return None
        reader = _Reader(properties, list(parsed))
        icase, dotall = bool(re_flags & re.IGNORECASE), bool(re_flags & re.DOTALL)
        main = reader.parts(list(parsed), icase, dotall)
        opening = reader.opening(list(parsed), icase, dotall)
    except (re.error, regex.error, Unsupported, RecursionError, OverflowError, Warning):
        return None
    found = tuple(dict.fromkeys(p for p in (*main, *reader.extra, opening) if p))
    return found or None  # nothing to find: every note may hold a match


def search_superset(pattern: str) -> tuple[str, ...] | None:
    """superset() of a pattern searched without rule flags (a rule's `needs`): global flags opening it
    (`(?m)`, `(?i)`) are read as the pattern's flags; any other inline global flag is refused, as in superset()."""
    m = _LEADING_FLAGS.match(pattern)
    return superset(pattern[m.end():], m.group(1)) if m else superset(pattern)
