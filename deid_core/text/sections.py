"""Section-header parser driven by the header dictionary in conf/sections.toml."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import regex

from deid_core.config import conf_file


@dataclass(frozen=True, slots=True)
class Section:
    """A section: canonical `name`, header [header_start, header_end), body up to `end`."""

    name: str
    header_start: int
    header_end: int
    end: int


@lru_cache(maxsize=1)
def _header_pattern() -> tuple[regex.Pattern, dict[str, str], re.Pattern | None]:
    """(header pattern, lower-cased form -> canonical name, the same pattern for stdlib `re` on ASCII
    text, or None when a form is not ASCII)."""
    canon: dict[str, str] = {}
    for name, forms in conf_file("sections.toml")["headers"].items():
        for form in forms:
            canon.setdefault(form.lower(), name)
    # At a line start; followed by ':' / ' -' / end of line. One-letter forms need the colon. The
    # indentation is taken possessively: a long run of spaces is not re-tried at each of its positions.
    pattern = r"(?im)^[ \t]*+(?P<h>{})[ \t]*(?::|[ \t]-[ \t]|(?=\r?$))"
    pat = regex.compile(pattern.format(prefix_tree(canon, regex.escape)))
    ascii_pat = re.compile(pattern.format(prefix_tree(canon, re.escape))) if all(map(str.isascii, canon)) else None
    return pat, canon, ascii_pat


def prefix_tree(forms: Iterable[str], escape: Callable[[str], str]) -> str:
    """An alternation of distinct lower-case forms, factored by prefix, that matches what the forms sorted
    longest first do: forms matching at one position are prefixes of one another, and each node tries
    its longer continuations before stopping (a greedy optional group), so backtracking meets them
    longest first. A line is then tried against a few characters, not against every form."""
    root: dict[str, dict] = {}
    for form in forms:
        node = root
        for ch in form:
            node = node.setdefault(ch, {})
        node[""] = {}  # a form ends here

    def emit(node: dict[str, dict]) -> str:
        alts = [escape(ch) + emit(sub) for ch, sub in node.items() if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


def find_sections(text: str) -> list[Section]:
    """Sections in text order; text before the first header belongs to no section."""
    pat, canon, ascii_pat = _header_pattern()
    if ascii_pat is not None and text.isascii():  # nearly every note: stdlib `re`, about half the time
        pat = ascii_pat
    hits = []
    for m in _line_start_matches(pat, text):
        surface = m.group("h")
        if len(surface) == 1 and not m.group(0).rstrip().endswith(":"):
            continue
        hits.append((canon[surface.lower()], m.start("h"), m.end()))
    sections = []
    for i, (name, hs, he) in enumerate(hits):
        end = hits[i + 1][1] if i + 1 < len(hits) else len(text)
        sections.append(Section(name, hs, he, end))
    return sections


def _line_start_matches(pat: regex.Pattern | re.Pattern, text: str) -> list[regex.Match | re.Match]:
    """pat.finditer(text) for a pattern anchored at line starts that never crosses a line break:
    tried only at the text's start and after each '\n' (finditer tries every position)."""
    out = []
    match = pat.match
    pos = 0
    while True:
        m = match(text, pos)
        if m is not None:
            out.append(m)
        pos = text.find("\n", pos) + 1
        if not pos:
            return out


def section_lookup(sections: list[Section]):
    """A function offset -> canonical section name ('' before the first header)."""
    starts = [s.header_start for s in sections]

    def at(offset: int) -> str:
        i = bisect_right(starts, offset) - 1
        return sections[i].name if i >= 0 else ""

    return at
