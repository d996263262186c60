"""Post-filters for person names (`filter = "name"`, "name_role", "kin_name"...): where a name starts
and ends inside a rule hit, or that the hit holds none.

Known names qualify; *frequent* words (function words, clinical terms) only in the shapes each
filter documents; unknown words ("Zelnik") are name-like.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from deid_core.engine.propagation import SHORT_MAX, is_clinical_word
from deid_core.engine.rules.filter_words import base, hit_words, is_initial, titled
from deid_core.engine.vetoes import misspelt
from deid_core.gazetteers import is_common, is_frequent, is_function_word, is_name, words

# vetoes.misspelt per word, remembered: its edit search (~50 x length lookups) is the costliest test of a kin
# hit's first word, and the same words recur note after note (a pure function of the word and the static lists)
_misspelt = lru_cache(maxsize=1 << 14)(misspelt)


def first_name_ok(word: str, *, strong: bool = False, unknown_ok: int = 0, role: bool = False) -> bool:
    """Can this word start a person's name? `strong`: right after Dr./Mr./Mrs.; `role`: right after
    a clinician role ("NP LONG", "CASEWORKER BILL").

    Known names qualify unless they are frequent words in lower or upper case ("will"), or after
    a role in capitals (but function words); unknown words qualify in Title case, or in any case
    after a strong title; other dictionary words only after a strong title.
    """
    low = base(word)
    if not low or not low[0].isalpha():
        return False
    if "-" in low:  # hyphenated: every part must be name-like ("Smith-Jones", not "called-update")
        parts = [p for p in low.split("-") if p]
        while len(parts) > 1 and parts[-1] in words("medical_word"):  # "Quellor-PT"
            parts.pop()
        return bool(parts) and all(not is_frequent(p) and (is_name(p) or not is_common(p)) for p in parts) and (
            strong or titled(word) or any(is_name(p) for p in parts))
    if is_frequent(low):
        # a known name that is also a common word ("Price", "Green") after Dr./Mr.
        return is_name(low) and (titled(word) or ((strong or (role and not word.islower() and len(low) > 2))
                                                   and not is_function_word(low)))
    if is_name(low):
        return True
    if not is_common(low):
        return strong or unknown_ok == 2 or (unknown_ok == 1 and not word.islower()) or titled(word)
    # after Dr./Mr. a dictionary word may be a surname ("Dr. Pica"), but not a verb form
    return strong and not (word.islower() and low.endswith(("ing", "ed", "ly")))


def later_name_ok(word: str, first: str, credential: bool = False) -> bool:
    """Can this word continue a name that started with `first`? `credential`: a credential follows the
    name, where a known given name vouches for a frequent word in its case as the surname ("Holly
    Blood, CNA"; never a function word, nor after a given name that is itself a frequent word: "Will Monitor RN")."""
    low = base(word)
    if not low or not low[0].isalpha():
        return False
    if len(low) == 1:
        return word[:1].isupper()
    if is_frequent(low):
        if credential and base(first) in words("first_name") and not (is_frequent(base(first)) or is_function_word(base(first))):
            return _same_case_surname(word, low, first)
        return is_name(low) and (titled(word) or _same_case_surname(word, low, first))
    if is_name(low) or not is_common(low):
        return True
    # a Title-case dictionary word after a known first name ("Ferdinand Halfpenny")
    return titled(word) and base(first) in words("first_name")


def _same_case_surname(word: str, low: str, first: str) -> bool:
    """A known name that is also a frequent word, written in the case of the name's first word:
    "GRACE YOUNG", "dr. bill case" (not a function word: "Jon will", "DR. SMITH FLOOR")."""
    return (len(low) > 2 and not is_function_word(low) and not is_initial(first)
            and (word.isupper() == first.isupper()) and (word.islower() == first.islower()))


_AND = {"and", "&"}


def cut_hyphen_tail(pieces: list[tuple[int, int, str]],
                    glued: Callable[[str], bool] = is_frequent) -> list[tuple[int, int, str]]:
    """End the words at the first part glued on by a hyphen that `glued` says is no name ("Rob-who",
    "KARGAS-PT"; "Oakes-Vantrell" stays), unless the first part is a frequent word and no name ("follow-up")."""
    for k, (s, _, w) in enumerate(pieces):
        parts = w.split("-")
        if len(parts) < 2 or not parts[0] or (is_frequent(base(parts[0])) and not is_name(base(parts[0]))):
            continue
        for j in range(1, len(parts)):
            if parts[j] and glued(base(parts[j])):
                head = "-".join(parts[:j])
                return [*pieces[:k], (s, s + len(head), head)]
    return pieces


def _clinical(word: str) -> bool:
    """A frequent or clinical word: what a hyphen glues onto a name in a note ("MORROW-PT")."""
    return is_frequent(word) or word in words("medical_word")


def _signed_surname(word: str) -> bool:
    """After an initial and before a credential ("K. LONG RN", "W. FANG OTR/L"): a word that can start a
    name, or a dictionary word in capitals or Title case that is no frequent, function or clinical word
    ("k. tube rrt", "R. ARM MD" not)."""
    low = base(word)
    return first_name_ok(word, unknown_ok=2, role=True) or (
        not word.islower() and low.isalpha() and is_common(low) and not is_frequent(low)
        and not is_function_word(low) and low not in words("medical_word"))


def _name_run(text: str, start: int, end: int, strong: bool, from_left: bool,
              unknown_ok: int = 0, role: bool = False) -> tuple[int, int] | None:
    pieces = hit_words(text, start, end)
    if not from_left:
        pieces = cut_hyphen_tail(pieces)
    unknown_ok = 2 if from_left else unknown_ok
    if from_left:  # drop leading words until one can start a name (signatures: "called covering MD")
        while pieces and not (first_name_ok(pieces[0][2], strong=strong, unknown_ok=2) or (
                is_initial(pieces[0][2]) and len(pieces) > 1 and _signed_surname(pieces[1][2])) or (
                len(pieces) > 2 and is_initial(pieces[1][2]) and first_name_ok(pieces[0][2], role=True))):
            pieces = pieces[1:]
    if not pieces:
        return None
    i = 0
    if is_initial(pieces[0][2]) and len(pieces) > 1:  # "E. Welsh", "s. roberto"; from the left "K. LONG RN"
        first_ok = (_signed_surname(pieces[1][2]) if from_left else
                    first_name_ok(pieces[1][2], strong=strong, unknown_ok=max(unknown_ok, 1), role=role))
        if not first_ok:
            return None
        i = 2
    elif first_name_ok(pieces[0][2], strong=strong, unknown_ok=unknown_ok,
                       role=role or (from_left and len(pieces) > 2 and is_initial(pieces[1][2]))):
        i = 1  # from the left, a middle initial vouches for a frequent first word ("BILL R. HALL, RRT")
    else:
        return None
    first = pieces[i - 1][2]
    keep = i
    while keep < len(pieces):
        w = pieces[keep][2]
        if base(w) in _AND or w == "&":
            if keep + 1 < len(pieces) and first_name_ok(pieces[keep + 1][2], strong=strong):
                keep += 2
                continue
            break
        if not later_name_ok(w, first, credential=from_left):
            break
        keep += 1
    if from_left and keep < len(pieces):
        return None
    while keep > 1 and is_initial(pieces[keep - 1][2]):  # trailing lone initial
        keep -= 1
    if keep == 1 and is_initial(pieces[0][2]):
        return None
    s, e = pieces[0][0], pieces[keep - 1][1]
    if text[e - 1] == ".":
        e -= 1
    return (s, e)


def name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Keep the leading run of name-like words after a weak trigger (kinship, roles)."""
    return _name_run(text, start, end, strong=False, from_left=False)


def kin_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As `name`, after a family word; a word in capitals in no dictionary or name list, or a known name
    that is also a frequent word, may start the name there ("SON QWYRT AT HOME", "NIECE PEG"), and so
    may a lower-case word of SHORT_MAX+1 letters in no list ("daughter-in-law ujunwa"), unless it is one edit
    from a dictionary word ("SON ARIVED", "son visisted") or a function word ("SON WILL")."""
    pieces = hit_words(text, start, end)
    word = pieces[0][2] if pieces else ""
    lower, upper = word.islower(), word.isupper()
    # a typo only changes how a word in one case is read: the (costly) edit search is left out for the others
    if not (lower or upper) or "-" in word or _misspelt(base(word)):
        return _name_run(text, start, end, strong=False, from_left=False)
    if lower:  # "daughter-in-law ujunwa": a word in no list, longer than an abbreviation
        low = base(word)
        unknown = len(low) > SHORT_MAX and low.isalpha() and not is_name(low) and not is_clinical_word(low)
        return _name_run(text, start, end, strong=False, from_left=False, unknown_ok=2 if unknown else 0)
    return _name_run(text, start, end, strong=False, from_left=False, unknown_ok=1, role=True)


def name_strong_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As `name`, but the first word may be any non-frequent word (after Dr./Mr.); glued to the title's
    period, a known name that is also a function word is the name ("per dr.floor"; "Dr. will call" not)."""
    run = _name_run(text, start, end, strong=True, from_left=False)
    if run is None and start > 0 and text[start - 1] == ".":
        pieces = hit_words(text, start, end)
        if pieces and pieces[0][0] == start and is_name(base(pieces[0][2])) and len(base(pieces[0][2])) > 2:
            return pieces[0][0], pieces[0][1] - (pieces[0][2][-1] == ".")
    return run


def name_role_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """After a clinician role ("NP Drumic"): unknown words may start the name in any case."""
    pieces = hit_words(text, start, end)
    if pieces and not is_initial(pieces[0][2]) and not first_name_ok(pieces[0][2], unknown_ok=1, role=True):
        return None
    return _name_run(text, start, end, strong=False, from_left=False, unknown_ok=1, role=True)


def known_first_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """A name run whose first word is a known given name (no unknown words: context is weak)."""
    pieces = hit_words(text, start, end)
    if not pieces or base(pieces[0][2]) not in words("first_name"):
        return None
    if is_frequent(base(pieces[0][2])) and not titled(pieces[0][2]):
        return None
    return _name_run(text, pieces[0][0], end, strong=False, from_left=False)


def initial_known_surname_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """'d. renna': an initial and a known surname that is no frequent or clinical word, any case."""
    pieces = hit_words(text, start, end)
    if len(pieces) != 2 or not is_initial(pieces[0][2]):
        return None
    low = base(pieces[1][2])
    if low not in words("last_name") or is_frequent(low) or low in words("medical_word"):
        return None
    return (pieces[0][0], pieces[1][1])


def name_before_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """The trailing run of name-like words before a credential ("... Jane Roe, RN")."""
    return _name_run(text, start, end, strong=False, from_left=True)


def context_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """Words where only a name fits (a note's closing signature line, 'NP X aware'): known names that
    are also clinical words ("k. bell rrt") and unknown words pass; function words, verb forms and
    other dictionary or clinical words ("team", "catheter") do not."""
    pieces = cut_hyphen_tail(hit_words(text, start, end), _clinical)
    rest = pieces[1:] if pieces and is_initial(pieces[0][2]) else pieces
    if not rest:
        return None
    for _, _, w in rest:
        low = base(w)
        if len(low) < 2 or not low.isalpha() or is_function_word(low):
            return None
        if not is_name(low) and (is_common(low) or low in words("medical_word")
                                 or (w.islower() and low.endswith(("ing", "ed", "ly")))):
            return None
    s, e = pieces[0][0], pieces[-1][1]
    return (s, e - 1 if text[e - 1] == "." else e)


def _one_known_name(text: str, start: int, end: int, function_ok: bool) -> tuple[int, int] | None:
    pieces = hit_words(text, start, end)
    if len(pieces) != 1:
        return None
    low = base(pieces[0][2])
    if len(low) < 3 or not low.isalpha() or not is_name(low) or (
            is_function_word(low) and not (function_ok and low in words("first_name"))):
        return None
    return pieces[0][0], pieces[0][1]


def known_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """One known name of 3+ letters in any case, a dictionary word included but no function word, where
    the rule's context leaves little but a name ("Art reports", "social: lima visited"; not "Will reports")."""
    return _one_known_name(text, start, end, function_ok=False)


def listed_name_filter(text: str, start: int, end: int, settings: dict) -> tuple[int, int] | None:
    """As `known_name`, a function word that is a given name included: the second name of a kin list before a
    past-tense visit verb, where a modal cannot stand ("daughters viola and will visited"; "and then visited" not)."""
    return _one_known_name(text, start, end, function_ok=True)
