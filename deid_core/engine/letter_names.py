"""Names that a letter's or a message's frame places (round 16, name net): the addressee after a greeting
opening its line ("Dear Rose,", "Hi Hope,"), the signer on the line under a valediction ("Sincerely,\\n\\nRose
Little, RN"), the people of a copies line ("cc: Page, Hunter") and a dash signature ending the note ("--
Rose Quell", "-Hope"). The frame is the evidence, so a known name that is a word ("Rose Little", "Hope") is read; a
word of the dictionary that is no known name, a function, cue or clinical word never ("Dear Colleague,",
"Thanks,\\nFront Desk", "cc: Chart"). Cue lists: [names.cues] greetings, valedictions, copy_keys, addressees.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, field

from deid_core.gazetteers import is_frequent

KNOWN, UNLISTED, GIVEN, WORD = 1, 2, 4, 8  # word_ok's evidence bits: a known given or last name; a word in no
# dictionary; a known given name; a dictionary word that is none of the words a frame refuses (round 17: "Dear Major,")
LINES_DOWN = 3  # blank lines allowed between a valediction and its signer
LINE_REACH = 80  # most characters of a frame's line read (a signer's or addressee's line is short)
_DASHES = frozenset(("-", "--", "—", "–"))
_GLUE = frozenset(("'", "’", "-"))  # inside a name ("o'connor", "milette-iannalo")


@dataclass(frozen=True)
class LetterCues:
    """[names.cues] greetings, valedictions, copy keys (lower-case word tuples, longest first under their first
    word, with the frame's kind) and addressee words."""

    phrases: dict[str, tuple[tuple[tuple[str, ...], str], ...]]
    addressees: frozenset[str]
    titles: frozenset[str]
    doctor_titles: frozenset[str]
    credentials: frozenset[str]
    triggers: frozenset[str]  # the phrases' first words
    formal: frozenset[str]  # clinician_valedictions: words of a valediction whose signer is a clinician
    openers: re.Pattern  # a first word opening a line after the text's start ("\n  Sincerely")
    # each phrase's words under its first word that is no frequent word ("with kind regards" under "regards"): a
    # note is read only when it holds every word of a phrase (and ':' after a copies key), a set test, not a search
    # and a copies key written before its ':' ("cc:", "CC:": "cc" alone is in many notes as a volume)
    gates: dict[str, tuple[tuple[frozenset[str], tuple[str, ...]], ...]] = field(default_factory=dict)
    gate_words: frozenset[str] = frozenset()  # the keys of `gates`
    dash_signature: bool = True  # [names.frames] dash_signature
    chief_complaint_guard: bool = True  # [names.frames] chief_complaint_guard

    def wanted(self, present: frozenset[str] | set[str], text: str) -> bool:
        """Whether the note's words (lower case) hold every word of a frame phrase (and its text a copies key's ':')."""
        for k in self.gate_words.intersection(present):  # a frozenset's intersection iterates the smaller set
            for words_, marks in self.gates[k]:
                if words_ <= present and (not marks or any(m in text for m in marks)):
                    return True
        return False

    @classmethod
    def of_cues(cls, greetings, valedictions, copy_keys, addressees, titles, doctor_titles, credentials,
                formal=(), frames=None) -> LetterCues:
        """The cues, lower case, under their first words; `frames` ([names.frames]) turns frames off (an empty
        cue list for greetings, valedictions, copies)."""
        if frames is not None:
            greetings = greetings if frames.greetings else ()
            valedictions = valedictions if frames.valedictions else ()
            copy_keys = copy_keys if frames.copies else ()
        phrases: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for kind, items in (("greeting", greetings), ("valediction", valedictions), ("copies", copy_keys)):
            for p in items:
                words_ = tuple(p.lower().split())
                phrases.setdefault(words_[0], []).append((words_, kind))
        firsts = sorted(phrases, key=len, reverse=True)
        # stdlib re: its search for the leading newline skips the rest of the text (about 4 microseconds a note; a
        # search of the trigger words in the tokens cost twice that: "with", "cc" and "care" are in many notes)
        openers = re.compile(r"\n[ \t]*(" + "|".join(map(re.escape, firsts)) + r")(?![^\W\d_])" if firsts else r"(?!)",
                             re.IGNORECASE)
        gates: dict[str, list[tuple[frozenset[str], tuple[str, ...]]]] = {}
        for items_ in phrases.values():
            for words_, kind in items_:
                key = next((w for w in words_ if not is_frequent(w)), words_[-1])
                last = words_[-1]
                marks = (f"{last}:", f"{last.upper()}:", f"{last.title()}:") if kind == "copies" else ()
                gates.setdefault(key, []).append((frozenset(words_), marks))
        return cls({k: tuple(sorted(v, key=lambda e: -len(e[0]))) for k, v in phrases.items()},
                   frozenset(w.lower() for w in addressees), frozenset(titles), frozenset(doctor_titles),
                   frozenset(credentials), frozenset(phrases), frozenset(w.lower() for w in formal), openers,
                   {k: tuple(v) for k, v in gates.items()}, frozenset(gates),
                   True if frames is None else frames.dash_signature,
                   True if frames is None else frames.chief_complaint_guard)


def letter_names(toks: list[str], low: list[str], starts: list[int], ends: list[int], text: str,
                 present: frozenset[str], cues: LetterCues, word_ok: Callable[[int], int]) -> list[tuple[int, str]]:
    """(token index, label) of the name words the frames place; `word_ok(i)`: 0 when word i may be no name, else
    its evidence bits (KNOWN, UNLISTED, GIVEN)."""
    out: list[tuple[int, str]] = []
    if cues.wanted(present, text):
        firsts = [m.start(1) for m in cues.openers.finditer(text)]
        if toks and low[0] in cues.phrases and not text[:starts[0]].strip(" \t"):
            firsts.insert(0, starts[0])  # a frame opening the text
        letter = False  # a valediction or a greeting line above: the copies line below is a letter's
        for pos in firsts:
            j = bisect_left(starts, pos)
            if j < len(toks) and starts[j] == pos:
                kind, found = _frame(j, toks, low, starts, ends, text, cues, word_ok, letter)
                letter = letter or kind in ("valediction", "greeting")
                out.extend(found)
    if cues.dash_signature:
        seen = {i for i, _ in out}  # a signer under a valediction keeps that frame's label
        out.extend(x for x in _dash_signature(toks, low, starts, ends, text, cues, word_ok) if x[0] not in seen)
    return out


def _frame(j: int, toks, low, starts, ends, text, cues: LetterCues, word_ok,
           letter: bool = False) -> tuple[str, list[tuple[int, str]]]:
    """(kind, names) of the frame whose phrase opens its line at token j (the longest phrase that fits; kind ""
    when none); `letter`: a valediction or a greeting line stands above."""
    le = text.find("\n", starts[j], starts[j] + LINE_REACH)
    if le < 0:
        le = min(len(text), starts[j] + LINE_REACH)
    for phrase, kind in cues.phrases.get(low[j], ()):
        after = j + len(phrase)
        if tuple(low[j:after]) != phrase:
            continue
        if kind == "valediction":
            if text[ends[after - 1]:le].strip(" \t\r,.!:"):
                continue  # the line holds more than the valediction ("Sincerely yours," is not "Sincerely,")
            return kind, _signer(toks, low, starts, ends, text, le, cues, word_ok, phrase)
        if kind == "greeting":
            found = _addressee(toks, low, starts, ends, text, after, le, cues, word_ok)
            return (kind if found or text[ends[after - 1]:le].rstrip(" \t\r").endswith(",") else ""), found
        return kind, _copies(toks, low, starts, ends, text, after, le, cues, word_ok, letter)
    return "", []


def _person(toks, low, a: int, b: int, cues: LetterCues, inverted: bool = True) -> tuple[list[int], str | None, bool] | None:
    """The name words of tokens a..b-1 if they hold one person's name only: dashes, a title, one to three
    words with initials ("Ann R. Quell", "Quell, Ann" when `inverted`), credentials after them ("RN, CDE",
    capitals of up to 6 letters after a comma), a closing mark; (names, title, credentialed) or None."""
    j = a
    while j < b and toks[j] in _DASHES:
        j += 1
    title = None
    if j < b and low[j] in cues.titles:
        title, j = low[j], j + 1
        if j < b and toks[j] == ".":
            j += 1
    names: list[int] = []
    commas, cred, last = 0, False, b - 1
    while j < b:
        t, lw = toks[j], low[j]
        if cred:  # only credentials to the end ("RN, CDE", "PA-C", "RT(R)")
            if not (lw in cues.credentials or t in ",/().-" or (t.isalpha() and t.isupper() and len(t) <= 6)):
                return None
        elif t.isalpha() and lw in cues.credentials and names:
            cred = True
        elif t.isalpha() and len(t) == 1:
            if j + 1 < b and toks[j + 1] == ".":
                j += 1
        elif t.isalpha():
            names.append(j)
        elif t in _GLUE and names and j + 1 < b and toks[j + 1].isalpha():
            pass
        elif t == ",":
            if names and j + 1 < b and low[j + 1] in cues.credentials:
                cred = True
            elif j == last or (j == last - 1 and toks[last] in ".!:"):
                pass  # "Dear Rose," closing comma
            elif inverted and commas == 0 and len(names) == 1:
                commas += 1  # "Quell, Ann"
            else:
                return None
        elif t in ".!:" and j == last:
            pass
        else:
            return None
        j += 1
    if not 1 <= len(names) <= 3:
        return None
    return names, title, cred


def _label(title: str | None, cred: bool, cues: LetterCues, default: str) -> str:
    if cred or (title is not None and title in cues.doctor_titles):
        return "DOCTOR"
    return "PATIENT" if title is not None else default


def _span(starts: list[int], a: int, b: int) -> tuple[int, int]:
    """Token indices a..b-1 covering the characters a..b-1."""
    return bisect_left(starts, a), bisect_left(starts, b)


def _accepted(found, word_ok, cues: LetterCues, default: str, need: int = KNOWN | UNLISTED) -> list[tuple[int, str]]:
    """The name words of a _person match, labelled, when every one may be a name (with one of the `need` bits)."""
    if found is None:
        return []
    names, title, cred = found
    if not all(word_ok(i) & need for i in names):
        return []
    label = _label(title, cred, cues, default)
    return [(i, label) for i in names]


def _addressee(toks, low, starts, ends, text, j: int, le: int, cues: LetterCues, word_ok) -> list[tuple[int, str]]:
    """'Dear Rose,' / 'Hi Dr. Quell:' / 'Good morning Hope!': the rest of the greeting's line, ending with ',', ':' or
    '!', is one person's name (no addressee word: "Dear Colleague,", "Hi all,")."""
    a, b = _span(starts, ends[j - 1], le)
    if b <= a or toks[b - 1] not in (",", ":", "!"):
        return []
    found = _person(toks, low, a, b, cues, inverted=False)
    if found is not None and any(low[i] in cues.addressees for i in found[0]):
        return []
    # round 17: after "Dear", one Title-case word (with its title) is a name even when a dictionary word ("Dear
    # Major,", "Dear Dr. Bishop:"); "Dear Colleague," and the like are addressees
    dear = (low[j - 1] == "dear" and found is not None and len(found[0]) == 1
            and toks[found[0][0]][0].isupper() and toks[found[0][0]][1:].islower())
    return _accepted(found, word_ok, cues, "PATIENT", KNOWN | UNLISTED | (WORD if dear else 0))


def _signer(toks, low, starts, ends, text, le: int, cues: LetterCues, word_ok,
            phrase: tuple[str, ...]) -> list[tuple[int, str]]:
    """The first non-blank line under a valediction line ('Sincerely,' / 'Thanks so much,'), within LINES_DOWN blank
    lines: one person's name with its credentials ("Rose Little, RN, CDE", "-Hope", "Dr. Anil Rao")."""
    pos = le
    for _ in range(LINES_DOWN + 1):
        if pos >= len(text):
            return []
        nl = text.find("\n", pos + 1, pos + 1 + LINE_REACH)
        end = nl if nl >= 0 else min(len(text), pos + 1 + LINE_REACH)
        if text[pos:end].strip():
            if nl < 0 and end < len(text):
                return []  # a long line: no signer's
            a, b = _span(starts, pos, end)
            default = "DOCTOR" if not cues.formal.isdisjoint(phrase) else "PATIENT"
            return _accepted(_person(toks, low, a, b, cues), word_ok, cues, default)
        pos = end
    return []


def letter_end(text: str, pos: int, line_end: int, tail_lines: int = 3) -> bool:
    """Whether the line at pos..line_end stands at a letter's end, not at a clinical note's top (where "CC:" is the
    chief complaint): in the second half of the text, with at most `tail_lines` non-blank lines below it."""
    body = len(text.rstrip())
    if pos * 2 < body:
        return False
    below, at = 0, line_end
    while at < body:  # the lines below, up to tail_lines + 1 non-blank ones (linear over many copies lines)
        nl = text.find("\n", at + 1)
        nl = body if nl < 0 or nl > body else nl
        if text[at:nl].strip():
            below += 1
            if below > tail_lines:
                return False
        at = nl
    return True


def _copies(toks, low, starts, ends, text, j: int, le: int, cues: LetterCues, word_ok,
            letter: bool = False) -> list[tuple[int, str]]:
    """'cc: Dr. Quell; Page, Hunter MD': after a copies key and ':' each item between ',' or ';' to the line end
    names a person (DOCTOR with a title or a credential; a letter is copied to the patient too); every item must (one that is no name, "cc: Chart, Dr. Quell", refuses the line). "cc:" is
    also the chief complaint ("cc: Fall", "CC: Syncope"): an item with a title or a credential, or two items or more of
    known names in capitals or Title case, the latter only at a letter's end (`letter`: below a valediction or a
    greeting, or letter_end; "CC: BURNS, FALL" opening a clinical note is its chief complaint)."""
    if j >= len(toks) or toks[j] != ":":
        return []
    a, b = _span(starts, ends[j], le)
    out: list[tuple[int, str]] = []
    item, items, strong, known = a, 0, False, True
    for k in range(a, b + 1):
        if k == b or toks[k] in (",", ";"):
            if k == item:
                return []
            found = _person(toks, low, item, k, cues, inverted=False)
            got = _accepted(found, word_ok, cues, "PATIENT")  # a clinician's item has a title or credential
            if not got:
                return []
            if not all(toks[i][0].isupper() for i, _ in got):
                return []  # "cc: syncope": names in a copies line are capitalised
            items += 1
            strong = strong or found[1] is not None or found[2]
            known = known and all(word_ok(i) & KNOWN for i, _ in got)
            out.extend(got)
            item = k + 1
    if strong:
        return out
    if items < 2 or not known:
        return []
    if cues.chief_complaint_guard and not letter and not letter_end(text, starts[j - 1], le):
        return []
    return out


def _dash_signature(toks, low, starts, ends, text, cues: LetterCues, word_ok) -> list[tuple[int, str]]:
    """The note's last line: a dash then one or two name words ('-- ann quell', '-Hope, RN')."""
    end = len(text)
    while end and text[end - 1].isspace():
        end -= 1
    ls = text.rfind("\n", 0, end) + 1
    if end - ls > LINE_REACH or not text.startswith(("-", "—", "–"), ls) or text.startswith("---", ls):
        return []
    a, b = _span(starts, ls, end)
    found = _person(toks, low, a, b, cues, inverted=False)
    if found is None or len(found[0]) > 2 or found[1] is not None:
        return []
    # known names only (drugs are in no dictionary: "- Norco"), one alone a given name ("-Hope"; not "- Cipro")
    return _accepted(found, word_ok, cues, "DOCTOR", KNOWN if len(found[0]) == 2 else GIVEN)
