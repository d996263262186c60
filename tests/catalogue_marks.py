"""The catalogues' mark: a target sentence writes its one PHI string between [[ and ]]."""

import re

_MARK = re.compile(r"\[\[(.+?)\]\]")


def target(line: str) -> tuple[str, int, int]:
    """(text, start, end) of a catalogue target: the sentence without its marks and the marked string's offsets."""
    m = _MARK.search(line)
    assert m, line
    text = line[:m.start()] + m.group(1) + line[m.end():]
    return text, m.start(), m.start() + len(m.group(1))
