"""Section-header parser driven by the header dictionary in conf/sections.toml."""

from __future__ import annotations

from bisect import bisect_right
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
def _header_pattern() -> tuple[regex.Pattern, dict[str, str]]:
    canon: dict[str, str] = {}
    for name, forms in conf_file("sections.toml")["headers"].items():
        for form in forms:
            canon.setdefault(form.lower(), name)
    alternation = "|".join(regex.escape(f) for f in sorted(canon, key=len, reverse=True))
    # At a line start; followed by ':' / ' -' / end of line. One-letter forms need the colon. The
    # indentation is taken possessively: a long run of spaces is not re-tried at each of its positions.
    pat = regex.compile(
        rf"(?im)^[ \t]*+(?P<h>{alternation})[ \t]*(?::|[ \t]-[ \t]|(?=\r?$))",
    )
    return pat, canon


def find_sections(text: str) -> list[Section]:
    """Sections in text order; text before the first header belongs to no section."""
    pat, canon = _header_pattern()
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


def _line_start_matches(pat: regex.Pattern, text: str) -> list[regex.Match]:
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
