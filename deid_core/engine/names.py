"""The name recall net: words that look like names in context, proposed whatever the CRF says.

A stage (`names` in [registry.stages]) after the CRF, needing nothing from the others: the
merge unions its spans with theirs. Each word gets a score: what the word is (a known first or
last name, a word in no gazetteer or dictionary, a dictionary word that is not a name, Title
case) plus the context around it (a title, a relation word, a contact verb such as "spoke with",
"per", an initial before it, a credential after it, a proposed name word beside it). Words
scoring at least [names] threshold are proposed, joined with adjacent proposed words and a
preceding initial into one span. Frequent and clinical words (the frequent_word gazetteer)
are never proposed. Weights, cue words and the threshold live in conf/deidentify.toml [names].
Linear in the note: each word looks at a bounded window of words around it.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress, repeat
from operator import is_not

import regex

from deid_core.config import Config
from deid_core.config import NameNet as NameNetOptions
from deid_core.doc import Doc
from deid_core.engine.contract import NoteState, PerNoteStage
from deid_core.engine.generations import Generations
from deid_core.engine.letter_names import GIVEN, KNOWN, UNLISTED, WORD, LetterCues, letter_names
from deid_core.engine.propagation import abbreviation_shape
from deid_core.gazetteers import is_frequent, is_function_word, words
from deid_core.spans import Span

SOURCE = "names:net"
_SKIPPED = frozenset((".", ",", '"', "'", "(", "“", "”", "‘", "’"))  # punctuation the left context steps over
JOIN_GAP = 8  # most characters between two name words that join ("jon r. peters", "ann and bo")
_UNSEEN = object()  # a token whose lexical score is not cached yet
LEFT_REACH = 80  # characters before a word its left context (_left_words) reads words from
SIGNATURE_REACH = 60  # most characters from a signature line's start to its credential ("-- a. black bsn")
TAIL_REACH = 40  # most characters after a signature-line credential to its line end ("-C, DPT  (aquell)")
BOUND_SLACK = 1e-9  # _hopeless skips a word only when its bound is this far below the threshold (float sums)


@dataclass(frozen=True)
class Cues:
    """The cue phrases of [names.cues], as tuples of lower-case words; single words as sets."""

    titles: frozenset[str]
    relations: tuple[tuple[str, ...], ...]
    contacts: tuple[tuple[str, ...], ...]
    weak: tuple[tuple[str, ...], ...]
    credentials: frozenset[str]
    doctor_titles: frozenset[str]
    roles: tuple[tuple[str, ...], ...]
    line_credentials: frozenset[str]


def _phrases(items: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(p.lower().split()) for p in items)


@lru_cache(maxsize=8)
def cues_of(opts: NameNetOptions) -> Cues:
    """The configured cues, parsed once per options object."""
    c = opts.cues
    return Cues(frozenset(w.lower() for w in c.titles), _phrases(c.relations), _phrases(c.contacts),
                _phrases(c.weak), frozenset(w.lower() for w in c.credentials),
                frozenset(w.lower() for w in c.doctor_titles), _phrases(c.roles),
                frozenset(w.lower() for w in c.line_credentials))


class NameNet(PerNoteStage):
    """The `names` stage: proposes name spans by gazetteer, shape and context score (see module doc)."""

    name = "names"
    needs: dict[str, str] = {}
    provides: frozenset[str] = frozenset()

    def __init__(self, opts: NameNetOptions, cache_size: int = 200_000, particles: tuple[str, ...] = ()) -> None:
        self.opts = opts
        self._particles = frozenset(p.lower() for p in particles if " " not in p)  # [merge] name_particles
        self.cues = cues_of(opts)
        self.first, self.last = words("first_name"), words("last_name")
        self.english = words("english_word")
        self._medical = words("medical_word")
        w, c = opts.weights, self.cues
        # one-word cues (titles, roles, relations, contacts, credentials: "attn", "fiancee") are context, never a name
        cue_words = frozenset(p[0] for p in (*c.roles, *c.relations, *c.contacts, *c.weak) if len(p) == 1
                              ) | c.titles | c.credentials
        # ... unless also a known name ("priest", "cousin"): then only where it stands as a cue, before a name word
        self._name_cues = frozenset(x for x in cue_words if x in self.first or x in self.last)
        self._cue_words = cue_words - self._name_cues
        self._all_cues = cue_words
        # the words after which such a word stands in a name's place ("nurse priest", "Dr. Priest")
        self._surname_frames = frozenset(p[0] for p in c.roles if len(p) == 1) | c.titles | c.credentials
        self._kin_words = frozenset(p[0] for p in c.relations if len(p) == 1)  # one-word relations: kin frames
        self._kin_states = frozenset(w.lower() for w in opts.cues.kin_states)  # 'her mother Alive,': no name
        self._run_cues = self._name_cues | self._kin_words | c.credentials | _COPULAS | {"covering"}  # what run() looks for
        # cue phrase (words) -> (weight, names a clinician): the strongest kind wins a phrase
        self.phrase_cues: dict[tuple[str, ...], tuple[float, bool]] = {}
        for phrases, weight, doctor in ((c.weak, w.weak, False), (c.contacts, w.contact, False),
                                        (c.relations, w.relation, False), (c.roles, w.relation, True)):
            for p in phrases:
                if weight >= self.phrase_cues.get(p, (float("-inf"), False))[0]:
                    self.phrase_cues[p] = (weight, doctor)
        self.longest_cue = max((len(p) for p in self.phrase_cues), default=0)
        self._strongest_cue = max([0.0] + [cue[0] for cue in self.phrase_cues.values()])  # the most a cue adds
        self._letters = LetterCues.of_cues(opts.cues.greetings, opts.cues.valedictions, opts.cues.copy_keys,
                                           opts.cues.addressees, c.titles, c.doctor_titles, c.credentials | c.line_credentials,
                                           opts.cues.clinician_valedictions, opts.frames)
        self._addressees = self._letters.addressees
        self._service_endings = tuple(w.lower() for w in opts.cues.service_endings)  # "Nephrology", "Intensivist"
        self._bracket_says = _bracket_pattern(self._kin_words, c.credentials)  # round 17: "(daughter)", "(86 M)"
        # lexical() per token string, at most cache_size ([crf.tagging] cache_size: token types per cache)
        self._lex: Generations[str, float | None] = Generations(cache_size)

    def lexicals(self, toks: list[str]) -> list[float | None]:
        """lexical() of each token, computed once per token string (the same words recur note after note)."""
        cache = self._lex
        try:
            return list(map(cache.young.__getitem__, toks))  # every token seen lately: one C-level pass
        except KeyError:
            pass
        out = list(map(cache.young.get, toks, repeat(_UNSEEN)))
        for k, t in enumerate(toks):
            if out[k] is _UNSEEN:
                v = cache.get(t, _UNSEEN)  # the old generation, or an earlier copy of the token filled it
                if v is _UNSEEN:
                    v = self.lexical(t)
                    cache.put(t, v)
                out[k] = v
        return out

    def lexical(self, word: str) -> float | None:
        """What the word alone says (None: never a name: frequent, clinical, too short, not letters)."""
        low = word.lower()
        if len(word) < 2 or not word.isalpha() or is_frequent(low) or low in self._cue_words:
            return None
        if not (low in self.first or low in self.last) and abbreviation_shape(word):
            return None  # the shape of a clinical abbreviation ("AF", "NSG", "tol"), as propagation's guard
        w = self.opts.weights
        score = 0.0
        known = False
        if low in self.first:
            score, known = score + w.first_name, True
        if low in self.last:
            score, known = score + w.last_name, True
        if not known:  # review 15: a verb's form the dictionary lacks reads as one ("ambulated", "repositioned")
            score += w.dictionary if low in self.english or _verb_form(low) else w.unknown
        if word[0].isupper() and word[1:].islower():
            score += w.title_case
        return score

    def run(self, doc: Doc, state: NoteState) -> list[Span]:
        """Proposed name spans of one note."""
        toks, starts, ends = doc.tokens
        text = doc.text
        low = list(map(str.lower, toks))
        vocab = set(low)  # the note's words once: each test for a cue word below reads the few cue words (round 13)
        lex = self.lexicals(toks)  # a fresh list: the note's own copy
        present = self._run_cues.intersection(vocab)  # one pass over the note for the cue lists of run()
        if not self._name_cues.isdisjoint(present):
            self._drop_standing_cues(toks, low, lex, starts, ends, text)
        scores: list[float | None] = [None] * len(toks)
        labels = [""] * len(toks)
        signed = (frozenset() if self.cues.line_credentials.isdisjoint(vocab)
                  else self._signature_credentials(low, ends, text))
        hopeless = self._hopeless(low, lex, toks, starts, ends, text, signed, vocab)
        # the words with a lexical score (a C-level pass over the others), in order, but hopeless and glued ones
        # (both pure tests: the cheaper, hopeless, first)
        scored = [i for i in compress(range(len(lex)), map(is_not, lex, repeat(None)))
                  if not hopeless(i, lex[i]) and not _glued(i, toks, starts, ends)]
        for i in scored:
            scores[i], labels[i] = self._context(i, lex[i], toks, low, lex, starts, ends, text, signed)
        w = self.opts.weights
        thr = self.opts.threshold
        proposed = [False] * len(toks)
        for i in scored:
            proposed[i] = scores[i] >= thr
        for i in self._frame_words(toks, low):  # frequent words a strong frame names ("Dr. Down", "R. DOWN NP")
            if (lex[i] is None or lex[i] <= 0) and (self._framed(i, toks, low, lex, starts, ends, text)
                                   or self._titled_initials(i, toks, low, starts, ends, text)):
                scores[i], labels[i], proposed[i] = thr, "DOCTOR", True
            elif low[i] in self._particles and self._particle_framed(i, toks, low, lex, starts, ends, text):
                for k in (i, i + 1):  # 'M. LA RUE, MD': the particle and the name word
                    scores[k], labels[k], proposed[k] = thr, "DOCTOR", True
        if not self._kin_words.isdisjoint(present):  # dictionary-word names after a kin word ("her mother Ginger,")
            for i in self._kin_framed(toks, low, lex, starts, ends, text, present):
                scores[i], labels[i], proposed[i] = thr, "PATIENT", True
        if not self._kin_words.isdisjoint(present) and self.opts.frames.possessive_kin:
            for i in self._possessive_kin(toks, low, lex, starts, ends, present):  # "Hope's husband at bedside"
                if not proposed[i]:
                    scores[i], labels[i], proposed[i] = thr, "PATIENT", True
        if "covering" in present:  # a nurses' break cover ("ann covering bo's pts")
            for i in self._covering(toks, low, starts, ends, text):
                scores[i], labels[i], proposed[i] = thr, "DOCTOR", True
        for i, label in letter_names(toks, low, starts, ends, text, vocab, self._letters,
                                     lambda i: self._letter_word(low[i], lex[i])):  # "Dear Rose,", "Sincerely,\nHope"
            scores[i], labels[i], proposed[i] = thr, label, True
        if not _COPULAS.isdisjoint(present):  # a known name that is a word, as the note's subject ("HPI: pearl is a 44 yo")
            for i in self._subjects(toks, low, lex, starts, ends, text, present):
                scores[i], labels[i], proposed[i] = thr, "PATIENT", True
        if not self.cues.credentials.isdisjoint(present):  # two name words before a credential ("PAGE BLACK RN")
            for i in self._credential_pairs(toks, low, lex, starts, ends, text, present):
                scores[i], labels[i], proposed[i] = thr, "DOCTOR", True
            for i in self._signature_lines(toks, low, starts, ends, text, present):  # "draga pop rn" alone on its line
                scores[i], labels[i], proposed[i] = thr, "DOCTOR", True
            for i in self._credited_pairs(toks, low, starts, ends, text, present):  # "Quell MD and ping rn"
                scores[i], labels[i], proposed[i] = thr, "DOCTOR", True
            for i in self._worded_signers(toks, low, lex, starts, ends, text, present):  # "Major Bell, MD"
                scores[i], labels[i], proposed[i] = thr, "DOCTOR", True
        if "(" in text and self.opts.frames.brackets:  # "IRYA DE (PARTNER)", "DIIRK (86YO M)", "ryfosuk (PA-C)"
            for i, label in self._bracketed(toks, low, lex, starts, ends, text):
                if not proposed[i]:  # another frame's label stands ("Dr. Lee (son)")
                    scores[i], labels[i], proposed[i] = thr, label, True
        if True not in proposed:  # nothing proposed: no neighbour to carry a word, no span
            return []
        for i in scored:  # a name-like word beside a proposed one ("jon peters"), left to right
            s = scores[i]
            if not proposed[i] and lex[i] > 0:
                for j in (self._adjacent(i, -1, starts, ends, text), self._adjacent(i, 1, starts, ends, text)):
                    if j is not None and proposed[j] and s + w.neighbour >= thr:
                        proposed[i], labels[i] = True, labels[j]
                        break
        if self.opts.frames.inverted_fields:
            for i, j in self._inverted(proposed, toks, low, starts, ends, text):  # "Referring provider: Vole, Harriet"
                scores[i], labels[i], proposed[i] = thr, labels[j], True
        return self._spans(proposed, labels, scores, toks, starts, ends, text)

    def _frame_words(self, toks: list[str], low: list[str]) -> list[int]:
        """The words _framed can name, in order: those right after a doctor title, or after a '.' that follows a
        title or a one-letter word (its frames need one of them before the word), found by C-level scans instead
        of a test of every word (round 12)."""
        after: set[int] = set()
        titles = self.cues.doctor_titles
        if not titles.isdisjoint(low):
            after.update(j + 1 for j, t in enumerate(low) if t in titles)
        j = 0
        try:
            while True:
                j = toks.index(".", j + 1)  # a '.' with a word before it
                if len(toks[j - 1]) == 1 or low[j - 1] in titles:
                    after.add(j + 1)
        except ValueError:
            pass
        return sorted(i for i in after if i < len(toks))

    def _drop_standing_cues(self, toks, low, lex, starts, ends, text) -> None:
        """No lexical score (context, never a name) for a cue word that is also a name ("priest", "cousin")
        unless it stands in a name's place: right after a name-like word or a one-word cue on its line ("ann
        priest rn", "nurse priest at bedside"; a role, title or credential) and before no word that may be a name ("pastor Quell", "cousin
        maria" are cues; "signed by cousin", "Ann Quell (cousin)" kin nouns)."""
        frames = self._surname_frames
        for i, t in enumerate(low):
            if t not in self._name_cues or lex[i] is None:
                continue
            j = i - 1
            while j >= 0 and toks[j] == ".":
                j -= 1
            named = (j >= 0 and starts[i] - ends[j] <= JOIN_GAP and "\n" not in text[ends[j]:starts[i]]
                     and ((lex[j] is not None and lex[j] > 0) or low[j] in frames))
            if not named:
                lex[i] = None
                continue
            k = self._adjacent(i, 1, starts, ends, text)
            if k is not None and lex[k] is not None:
                lex[i] = None

    def _framed(self, i: int, toks, low, lex, starts, ends, text) -> bool:
        """A frequent or clinical word (never proposed on its own) that a clinician's frame names, as a title
        or a credential is evidence even for a dictionary word: right after a doctor title in Title case, in
        Title case and not opening a field ("Dr. Down", "Dr Rue"; not "DR. AWARE", "Dr. on call", "Dr. Orders:",
        "Azure XT DR. Meds"),
        or between an initial and a credential ("R. DOWN NP", "c. little md"). Words glued to others never."""
        t = toks[i]
        k = i - 2 if i >= 2 and toks[i - 1] == "." and ends[i - 2] == starts[i - 1] else i - 1
        titled = k >= 0 and low[k] in self.cues.doctor_titles
        initialled = i >= 2 and toks[i - 1] == "." and len(toks[i - 2]) == 1 and toks[i - 2].isalpha()
        if not (titled or initialled):
            return False  # no frame before the word: the cheap test first, for every candidate
        # round 18: or a dictionary word that is no frequent one, after a title or in capitals longer than an
        # abbreviation ("Dr. Basket", "ORDERED BY G. MEANS"; not an organism's "caused by C. Diff", "H. Flu", "C. DIFF"):
        # its lexical score (<= 0) keeps it below the threshold whatever the frame, like a frequent word's none
        # review 18: in capitals never a verb's form ("ACCOMPANIED BY N. VOMITING", "SUPPORTED BY V. PACING")
        worded = low[i] in self.english and len(t) > 3 and (
            titled or (t.isupper() and not abbreviation_shape(t) and not low[i].endswith(_VERB_ENDINGS)))
        if (len(t) < 3 or not t.isalpha() or not (is_frequent(low[i]) or worded)
                or _glued(i, toks, starts, ends)):
            return False
        gap = text[ends[i - 1]:starts[i]] if k >= 0 else ""
        if (titled and t[0].isupper() and t[1:].islower() and toks[k][0].isupper() and toks[k][1:].islower()
                and gap in (" ", "\t") and text[ends[i]:ends[i] + 1] != ":"
                and not self._title_case_run(k, i, toks, low, starts, ends, text)):
            return True
        if titled and gap in (" ", "\t") and self._field_value_title(k, i, toks, low, starts, ends, text):
            return True
        if (initialled and _initial(i - 2, toks, starts, ends, text) and gap in (" ", "\t")):
            nxt = self._right_word(i, toks, lex, starts, ends, text)
            if nxt is not None and low[nxt] in self.cues.credentials:
                return True
            # round 16: after "by" ("Referred by: P. Man", "REF BY I. PAGE") to the line end, a ',' or ';', in the
            # initial's case ("by K. Long", not "by K. long walks"); no function, cue or clinical word
            # round 17: or alone in a line's last column ("trazodone 50 mg po given  V. Best"; a flowsheet's signer)
            return ((_BY_BEFORE.search(text, max(0, starts[i - 2] - 8), starts[i - 2]) is not None
                     or (_COLUMN_BEFORE.search(text, max(0, starts[i - 2] - 4), starts[i - 2]) is not None
                         and _LINE_END.match(text, ends[i]) is not None
                         # review 17: a known name only ("Hep  B. Surface", a lab's column, is no signer)
                         and (low[i] in self.first or low[i] in self.last)))
                    and _LINE_CLOSE.match(text, ends[i]) is not None and (t[0].isupper() and (t[1:].islower() or t.isupper()))
                    and not (is_function_word(low[i]) or low[i] in self._all_cues or low[i] in self._medical))
        return False

    def _field_value_title(self, k: int, i: int, toks, low, starts, ends, text) -> bool:
        """Round 18: a doctor title in capitals and one word in capitals as a whole field's value ("SUBMITTING MD: DR.
        CAMERA   COPIES TO:", "ATTENDING: DR WARD,"): the title right after a field key's ':' and the word ending the
        field (a ',' or ';', two blanks, a tab or the line's end); never a function, cue, clinical or line-credential
        word, no relative's state ("NOTIFIED: DR. AWARE", "MD: DR. ON CALL")."""
        t = toks[i]
        if not (t.isupper() and toks[k].isupper()) or _FIELD_KEY_BEFORE.search(text, max(0, starts[k] - 4), starts[k]) is None:
            return False
        if _FIELD_VALUE_END.match(text, ends[i]) is None:
            return False
        lw = low[i]
        return not (is_function_word(lw) or lw in self._all_cues or lw in self._medical or lw in self.cues.line_credentials
                    or lw in self._kin_states)

    def _titled_initials(self, i: int, toks, low, starts, ends, text) -> bool:
        """A clinician's initials right after a doctor title in Title case (round 15, DOCTOR): two or three capitals
        standing alone ("Discussed with Dr. JW.", "Call Dr. BB's office", "resident: Dr. IR pager"), whatever
        two letters spell (initials are no abbreviation here), but a function, cue or line-credential word ("Dr. ON
        CALL", "Dr. MD", "Dr. PA"), a clinical word of three ("Dr. ICU team") or inside a capitals run ("DR. BB",
        "Dr. ED NOTE": capitals after them)."""
        t = toks[i]
        k = i - 2 if i >= 2 and toks[i - 1] == "." and ends[i - 2] == starts[i - 1] else i - 1
        if k < 0 or low[k] not in self.cues.doctor_titles or not (toks[k][0].isupper() and toks[k][1:].islower()):
            return False
        if not (2 <= len(t) <= 3 and t.isalpha() and t.isupper()) or text[ends[i - 1]:starts[i]] not in (" ", "\t"):
            return False
        lw = low[i]
        if (is_function_word(lw) or lw in self._all_cues or lw in self.cues.line_credentials
                or (lw in self._medical and (len(t) == 3 or self._content_word_after(text, ends[i])))
                or _glued(i, toks, starts, ends)):
            return False  # a 3-letter clinical word ("Dr. ICU team"), or one of 2 before a content word (review 15:
            # "Dr. GI fellow", "Dr. IR consulted"); two letters alone or before "at", "and" ("Dr. EF at 10:45", "Dr.
            # TX and Dr. X") collide too often with initials to refuse them
        return _CAPS_AFTER.match(text, ends[i], ends[i] + TAIL_REACH) is None

    @staticmethod
    def _content_word_after(text: str, end: int) -> bool:
        """Does a word that is no function word follow, past blanks ("Dr. GI fellow", not "Dr. EF at")?"""
        m = _WORD_AFTER.match(text, end, end + TAIL_REACH)
        return m is not None and not is_function_word(m.group(1).lower())

    def _covering(self, toks, low, starts, ends, text) -> list[int]:
        """The two nurses of a break cover (round 15, DOCTOR): one or two words opening the line (or a clause),
        "covering", one or two words, then "'s" and "pts" / "patients" ("ann lee covering bo's pts during break").
        The words are no function, medical or cue word; either side may be left out ("RN covering bo's pts")."""
        out: list[int] = []
        for k in _positions(low, frozenset(("covering",)), frozenset(("covering",))):
            m = _COVERED.match(text, ends[k], ends[k] + SIGNATURE_REACH)  # bounded: the regex module looks ahead
            # for the literal "pts" to the end of the text otherwise (quadratic on a note of "covering")
            if m is None:
                continue
            right = [j for j in range(k + 1, bisect_left(starts, m.end("name"))) if toks[j].isalpha()]
            left: list[int] = []
            head = _COVER_HEAD.search(text, max(0, starts[k] - SIGNATURE_REACH), starts[k])
            if head is not None:
                left = [j for j in range(bisect_left(starts, head.start("name")), k) if toks[j].isalpha()]
            for side in (left, right):
                if side and all(len(toks[j]) >= 2 and not is_function_word(low[j]) and low[j] not in self._medical
                                and low[j] not in self._all_cues and not self._frequent_not_given(low[j])
                                for j in side):  # review 15: not "night shift's pts"
                    out.extend(side)
        return out

    def _particle_framed(self, i: int, toks, low, lex, starts, ends, text) -> bool:
        """A particle after an initial, then one name word and a credential ("M. LA RUE, MD", "O. van Dyke BSN";
        round 13): the frame of _framed's initial and credential, with the particle between. The name word is
        no function or cue word, in the particle's case or Title case after a lower-case particle."""
        k = i + 1
        if i < 2 or k >= len(toks) or toks[i - 1] != "." or len(toks[i - 2]) != 1 or not toks[i - 2].isalpha():
            return False
        if not _initial(i - 2, toks, starts, ends, text) or text[ends[i - 1]:starts[i]] not in (" ", "\t"):
            return False
        w, p = toks[k], toks[i]
        if text[ends[i]:starts[k]] != " " or len(w) < 2 or not w.isalpha() or _glued(k, toks, starts, ends):
            return False
        if not (p.isupper() == w.isupper() or (p.islower() and w[0].isupper() and w[1:].islower())):
            return False
        if is_function_word(low[k]) or low[k] in self._all_cues:
            return False  # a medical word may be a surname in this frame ('RUE')
        nxt = self._right_word(k, toks, lex, starts, ends, text)
        return nxt is not None and low[nxt] in self.cues.credentials

    def _kin_framed(self, toks, low, lex, starts, ends, text, present: frozenset[str]) -> list[int]:
        """Dictionary or frequent words (no score of their own) a relative's frame names (round 13; i2b2 2014:
        relatives are PATIENT): right after a lower-case one-word relation ("friend", "mother") on its line,
        or after it and an initial ("fiancee D. Deep."), and before a clause end (",", ";", ")", a stop) or
        a lower-case word, when the word is in Title case after the lower-case cue ("her mother Ginger, she",
        "his friend Ant)"), a known given name ("son hope helps") or before an age ("husband bran, 25,").
        Never a function, medical or cue word, nor in a Title-case or capitals run ("Mother Nature", "WIFE
        PRESENT"), nor a relative's state in Title case ([names.cues] kin_states: "her mother Alive,"), nor a
        lower-case given name before a function word ("son hope she recovers")."""
        out: list[int] = []
        n = len(toks)
        for k in _positions(low, self._kin_words, present):
            if toks[k].isupper():
                i = self._caps_kin(k, toks, low, starts, ends, text)
                if i is not None:
                    out.append(i)
                continue
            if not toks[k].islower():
                continue
            i = k + 1
            initialled = i + 2 < n and len(toks[i]) == 1 and toks[i].isalpha() and _initial(i, toks, starts, ends, text)
            if initialled:
                i += 2
            if i >= n or (lex[i] is not None and lex[i] > 0):
                continue  # a name-like word: the context score decides it
            w, lw = toks[i], low[i]
            if (len(w) < 3 or not w.isalpha() or text[ends[i - 1]:starts[i]] not in (" ", "\t")
                    or is_function_word(lw) or lw in self._medical or lw in self._all_cues or _glued(i, toks, starts, ends)):
                continue
            closes = _KIN_CLOSE.match(text, ends[i]) is not None
            titled = w[0].isupper() and w[1:].islower()
            if initialled and (closes or titled) and lw not in self._kin_states:
                out.append(i)
            elif ((titled or (w.isupper() and not abbreviation_shape(w))) and lw not in self._kin_states
                  and (_CLAUSE_END.match(text, ends[i])
                       or (lex[i] is not None and not self._inflected(lw)  # review 14: not "son Updates given"
                           and ((_LOWER_NEXT.match(text, ends[i]) and is_function_word(low[i + 1])  # "Grace at"
                                 and lw in self.first)  # lead 14: a known given name, not "her mother Diabetes at 50"
                                or (w.isupper() and _UPPER_NEXT.match(text, ends[i])))))
                  and _KIN_LEAD.search(text, max(0, starts[k] - 12), starts[k])):
                out.append(i)  # round 14: also before a lower-case function word ("daughter Grace at 10:45") or in capitals
            elif w.islower() and lw in self.first and closes and not self._before_function_word(i, toks, low, starts, ends, text):
                out.append(i)
            elif w.islower() and _AGE_AFTER.match(text, ends[i], ends[i] + 8):
                out.append(i)
        return out

    def _caps_kin(self, k: int, toks, low, starts, ends, text) -> int | None:
        """The word a relation cue in capitals names in a capitals line (round 14, PATIENT): "CONSENT WITH HER
        DAUGHTER QUARTZELL", "WIFE, CINDY," after a possessive, "with", "and" or a clause break, before a
        clause end or the line end. Never a function, medical, cue or relative's-state word ("HER HUSBAND
        PRESENT,", "WITH DAUGHTER ICU"), nor a clinical abbreviation's shape; a known name or a word in no
        dictionary (review 14: in capitals a dictionary word is no evidence: "HER MOTHER DIABETES,", "WITH
        HIS WIFE INDEPENDENTLY")."""
        i = k + 1
        if i >= len(toks) or text[ends[k]:starts[i]] not in (" ", "\t", ", ", ": "):
            return None
        w, lw = toks[i], low[i]
        if (len(w) < 3 or not w.isalpha() or not w.isupper() or is_frequent(lw) or lw in self._medical
                or lw in self._all_cues or lw in self._kin_states or abbreviation_shape(w) or _glued(i, toks, starts, ends)
                or (lw in self.english and lw not in self.first and lw not in self.last)):
            return None
        if not (_CAPS_CLOSE.match(text, ends[i]) and _KIN_LEAD_CAPS.search(text, max(0, starts[k] - 12), starts[k])):
            return None
        return i

    @staticmethod
    def _before_function_word(i: int, toks, low, starts, ends, text) -> bool:
        """Word i is followed, after blanks, by a lower-case function word ("son hope she recovers": a verb)."""
        j = i + 1
        return (j < len(toks) and toks[j].islower() and text[ends[i]:starts[j]].strip(" \t") == ""
                and is_function_word(low[j]))

    def _subjects(self, toks, low, lex, starts, ends, text, present: frozenset[str]) -> list[int]:
        """A known name (alone below the threshold, or a word with no score: "pearl", "lane", "Hope") as the subject of "is a
        44 yo" / "was a 57-year-old" right after a field key or at its line's start ("HPI: pearl is a 44 YO
        woman", "Identifying data: lane is a 57 year old"; round 13, PATIENT). Never a function, medical or cue
        word ("Patient is a 44 yo", "She is a 70 year old", "ED is a 24 bed unit": no age)."""
        out: list[int] = []
        for k in _positions(low, _COPULAS, present):
            i = k - 1
            if i < 0 or not toks[i].isalpha() or len(toks[i]) < 2:
                continue
            lw, w = low[i], toks[i]
            unlisted = (w[0].isupper() and w[1:].islower() and lex[i] is not None and lex[i] > 0
                        and lw not in self.english  # round 16: a name in no list ("Identifying data: Éimle is a 53")
                        and not lw.endswith(self._service_endings))  # not "Cardiomyopathy is a 45 yo"
            # round 17: after a title any word but a function, clinical or cue word ("id: mr. down is a 89yo man")
            t = i - 2 if i >= 2 and toks[i - 1] == "." else i - 1
            titled = t >= 0 and low[t] in self.cues.titles and text[ends[t]:starts[i]].strip(". \t") == ""
            # round 18: or a dictionary word in Title case that a letter could name ("Identifying data: Rusty is a 67
            # year old"; not "Mother is a 67", "Baby is a 3 day old": cue and addressee words)
            worded = (w[0].isupper() and w[1:].islower() and not _verb_form(lw)
                      and self._letter_word(lw, lex[i]) & WORD != 0)
            if not (lw in self.first or lw in self.last or unlisted or titled or worded) or is_function_word(lw) \
                    or lw in self._medical or lw in self._all_cues or text[ends[i]:starts[k]] not in (" ", "\t"):
                continue
            if ((titled or _SUBJECT_BEFORE.search(text, max(0, starts[i] - 40), starts[i]))
                    and _AGE_NEXT.match(text, ends[k])):
                out.append(i)
        return out

    def _credential_pairs(self, toks, low, lex, starts, ends, text, present: frozenset[str]) -> list[int]:
        """Two known names (gazetteer first or last names) in the same case before a credential ("PAGE BLACK RN",
        "Rose Hill, MD") whose second is a dictionary or frequent word (no score of its own): both DOCTOR. Never
        a function, medical or cue word, nor a word in no name list ("Charge Nurse RN", "Kim covering MD",
        "pleural tube, md aware": an unknown word before a credential proved no evidence on real notes)."""
        out: list[int] = []
        for c in _positions(low, self.cues.credentials, present):
            if c < 2:
                continue
            i = c - 2 if toks[c - 1] == "," else c - 1  # 'BLACK, RN'
            j = i - 1
            if j < 0 or text[ends[i]:starts[c]] not in (" ", ", ", ",") or (lex[i] is not None and lex[i] > 0):
                continue
            if text[ends[j]:starts[i]] != " " or not (toks[i].isalpha() and toks[j].isalpha()):
                continue
            wi, wj, li, lj = toks[i], toks[j], low[i], low[j]
            if len(wi) < 3 or len(wj) < 2 or wi.isupper() != wj.isupper():
                continue
            if any(is_function_word(x) or x in self._medical or x in self._all_cues for x in (li, lj)):
                continue
            if (lj in self.first or lj in self.last) and (li in self.first or li in self.last):
                out.extend((j, i))
        return out

    def _worded_signers(self, toks, low, lex, starts, ends, text, present: frozenset[str]) -> list[int]:
        """A dictionary word opening a signature line before a known name and a credential ("Major Bell, MD",
        "HONOR PAGE RN"; round 17, DOCTOR): the line holds the two words in the same case, then credentials only;
        never a function, medical, cue, addressee or relative's-state word ("Charge Nurse RN", "Wound Care, RN")."""
        out: list[int] = []
        for c in _positions(low, self.cues.credentials, present):
            i = c - 2 if c >= 1 and toks[c - 1] == "," else c - 1
            j = i - 1
            if j < 0 or text[ends[i]:starts[c]] not in (" ", ", ", ",") or text[ends[j]:starts[i]] != " ":
                continue
            wi, wj, li, lj = toks[i], toks[j], low[i], low[j]
            if not (wi.isalpha() and wj.isalpha() and len(wj) >= 3) or (li not in self.first and li not in self.last):
                continue
            if lj in self.first or lj in self.last or lj not in self.english:
                continue  # a known or unlisted name: the other frames' (_credential_pairs, the score)
            if not ((wi.isupper() and wj.isupper()) or (wi.istitle() and wj.istitle())):
                continue
            if (is_function_word(lj) or lj in self._medical or lj in self._all_cues or lj in self._addressees
                    or lj in self._kin_states or li in self._medical or li in self._all_cues
                    or lj.endswith(self._service_endings) or lj.endswith(_NOT_NAME_ENDINGS) or _verb_form(lj)):
                continue  # nor a verb's form ("Discussed Hill, MD")
            lo = max(0, starts[j] - SIGNATURE_REACH)  # bounded: linear over a long one-line note
            nl = text.rfind("\n", lo, starts[j])
            ls = nl + 1 if nl >= 0 else lo
            if (nl >= 0 or lo == 0) and text[ls:starts[j]].strip(" \t-") == "" \
                    and _CREDENTIAL_TAIL.match(text, ends[c]) is not None:
                out.extend((j, i))  # the line holds the name and credentials only
        return out

    def _inverted(self, proposed, toks, low, starts, ends, text) -> list[tuple[int, int]]:
        """(surname, given name) of an inverted name opening a field (round 16): a word, ',' and a proposed known
        given name in the same case, after a field key's ':', a column break or the line start and before the line
        end, a column break, ',' or '(' (an initial between allowed): "Referring provider: Vole, Harriet", "PCP:
        PAGE, HUNTER (ext 12)". The surname may be any word but a function, cue or (unless a known name) clinical
        word; the field and the given name are the evidence."""
        out: list[tuple[int, int]] = []
        for j in compress(range(len(proposed)), proposed):
            i = j - 2
            if i < 0 or toks[j - 1] != "," or proposed[i] or low[j] not in self.first:
                continue
            wi, wj, li = toks[i], toks[j], low[i]
            if not (wi.isalpha() and len(wi) >= 2 and ends[i] == starts[j - 1] and text[ends[j - 1]:starts[j]] == " "):
                continue
            if not ((wi.isupper() and wj.isupper()) or (wi[0].isupper() and wi[1:].islower() and wj[0].isupper()
                                                        and wj[1:].islower())):
                continue
            if (is_function_word(li) or li in self._all_cues or li in self._kin_states
                    or (li in self._medical and li not in self.first and li not in self.last)):
                continue
            if (_FIELD_OPEN.search(text, max(0, starts[i] - 40), starts[i]) is not None
                    and _FIELD_CLOSE.match(text, ends[j], ends[j] + TAIL_REACH) is not None):
                out.append((i, j))
        return out

    def _bracketed(self, toks, low, lex, starts, ends, text) -> list[tuple[int, str]]:
        """(token, label) of the name words right before a bracket that says who they are (round 17): a relative
        ("IRYA DE (PARTNER)", "Ruth Kimball (daughter)": PATIENT), an age and a sex ("DIIRK (86YO M) here with",
        "Quorn (72 F)": PATIENT) or only a credential ("ryfosuk (PA-C), Device Clinic": DOCTOR). One to three
        words, back from the bracket over blanks, initials and particles, each a known name or a word in no
        dictionary (_letter_word) and no clinical word ("Diabetes (mother)", "CT head (55 M)" stay clear)."""
        out: list[tuple[int, str]] = []
        for m in self._bracket_says.finditer(text):
            k = bisect_left(starts, m.start(1))
            label = "PATIENT" if m.group("who") is not None else "DOCTOR"
            names: list[int] = []
            run: list[int] = []  # name words and particles, right to left
            j = k - 1
            while j >= 0 and len(names) < 3 and k - j <= 8 and text[ends[j]:starts[j + 1]] in ("", " ", "\t"):
                t, lw = toks[j], low[j]
                if t == "." and j >= 1 and len(toks[j - 1]) == 1 and toks[j - 1].isalpha():
                    j -= 2  # an initial
                    continue
                if not t.isalpha() or j + 1 < k and text[ends[j]:starts[j + 1]] == "" and toks[j + 1] != ".":
                    break
                if lw in self._particles:
                    run.append(j)
                    j -= 1
                    continue
                if lw in self._medical or not (self._letter_word(lw, lex[j]) & (KNOWN | UNLISTED)
                                               or self._unlisted_caps(t, lw, lex[j])):
                    break
                names.append(j)
                run.append(j)
                j -= 1
            while run and run[-1] not in names:
                run.pop()  # a particle opening the run is a word before the name ("de")
            if m.group("bare") is not None and len(names) < 2 and not any(low[i] in self.first for i in names):
                continue  # "Cordis (8 F)", "Impella (14 F)", "Replogle (10 F)": a device's size (review 17)
            if len(run) == 1 and (self._unlisted_caps(toks[run[0]], low[run[0]], lex[run[0]])
                                  or (m.group("kin") is not None and low[run[0]] not in self.first)):
                continue  # one word alone: a given name before a relative's ("Hope (daughter)", not "Graves
                # (mother)"), and no abbreviation's shape ("CAD (father)", "HCM (55 M)")
            out.extend((i, label) for i in run)
        return out

    def _possessive_kin(self, toks, low, lex, starts, ends, present: frozenset[str]) -> list[int]:
        """A name word whose relative the note names (round 17, PATIENT): "Hope's husband at bedside", "GRACE'S
        MOTHER"; the word capitalised, a known name or a word in no dictionary, no clinical word ("Patient's wife",
        "Parkinson's father" stay clear)."""
        out: list[int] = []
        for k in _positions(low, self._kin_words, present):
            i = k - 3
            if i < 0 or toks[k - 1] not in ("s", "S") or toks[k - 2] not in ("'", "’"):
                continue
            if not (ends[i] == starts[k - 2] and ends[k - 2] == starts[k - 1] and text_gap(ends[k - 1], starts[k])):
                continue
            t, lw = toks[i], low[i]
            if (t[0].isupper() and t.isalpha() and lw not in self._medical
                    and self._letter_word(lw, lex[i]) & (KNOWN | UNLISTED)):
                out.append(i)
        return out

    def _unlisted_caps(self, t: str, lw: str, lex: float | None) -> bool:
        """A word of 3+ letters with an abbreviation's shape (no lexical score) in no list ("IRYA"): a name only
        beside another name word or a particle ("IRYA DE (PARTNER)")."""
        return (lex is None and len(t) >= 3 and t.isalpha() and not is_frequent(lw) and lw not in self.english
                and lw not in self._medical and lw not in self._all_cues and lw not in self.first and lw not in self.last)

    def _letter_word(self, lw: str, lex: float | None) -> int:
        """A word a letter's frame may name (round 16), as letter_names' evidence bits: a known name, even a word
        ("Rose Little", "Hope"), or a word in no dictionary; 0 for a function, cue, relative's-state or addressee
        word, and a clinical one unless a known name; WORD alone for another dictionary word ("Major")."""
        if len(lw) < 2 or is_function_word(lw) or lw in self._all_cues or lw in self._kin_states or lw in self._addressees:
            return 0
        known = lw in self.first or lw in self.last
        if not known and (lex is None or lex <= 0 or lw in self._medical or lw.endswith(self._service_endings)):
            # not a service or a role in no dictionary ("Hi Nephrology,", "Thanks,\nIntensivist")
            return WORD if (lw in self.english and lw not in self._medical
                            and not lw.endswith(self._service_endings)) else 0
        return (KNOWN if known else 0) | (UNLISTED if lw not in self.english else 0) | (GIVEN if lw in self.first else 0)

    def _frequent_not_given(self, lw: str) -> bool:
        """A frequent word that is no known given name: the shift or unit in the nurses' frames ("day RN",
        "night shift's pts"), where a nurse goes by the given name ("ping rn", "rose covering")."""
        return is_frequent(lw) and lw not in self.first

    def _credited_pairs(self, toks, low, starts, ends, text, present: frozenset[str]) -> list[int]:
        """A word between "and" and a credential right after another credential (round 15, DOCTOR): two clinicians
        named in one breath ("with W. Quell MD and ping rn"): the first credential says the second word is a
        name too, whatever word it spells; never a function, medical or cue word."""
        out: list[int] = []
        creds = self.cues.credentials
        for c in _positions(low, creds, present):
            i, a, b = c - 1, c - 2, c - 3
            if b < 0 or low[a] not in ("and", "&") or low[b] not in creds or not toks[i].isalpha() or len(toks[i]) < 2:
                continue
            if not (text[ends[b]:starts[a]] == text[ends[a]:starts[i]] == text[ends[i]:starts[c]] == " "):
                continue
            lw = low[i]
            if is_function_word(lw) or lw in self._medical or lw in self._all_cues or self._frequent_not_given(lw):
                continue  # "MD and charge rn", "MD and day rn" (review 15: 'day' is a surname, not a given name)
            out.append(i)
        return out

    def _signature_lines(self, toks, low, starts, ends, text, present: frozenset[str]) -> list[int]:
        """The words of a signature line (round 14, DOCTOR): a line holding only one or two words, an initial
        before them allowed, then a credential ([names.cues] credentials) and to the line end only more
        credentials, a date or a time ("draga pop rn", "-- a. black bsn, rn  3/12 0800", "MAX ROSS, BSN, RN").
        The words are no function, cue or relative's-state word and, unless known names, no medical or frequent
        word nor an inflected dictionary word ("lisa covering MD": _inflected); the line holds evidence of a
        name: an initial, a known name, or a word in no dictionary ("Night Float MD", "Wound Care RN", "Charge
        RN" name nobody)."""
        out: list[int] = []
        creds = self.cues.credentials | self.cues.line_credentials
        for c in _positions(low, self.cues.credentials, present):
            lo = max(0, starts[c] - SIGNATURE_REACH)  # a signature's words are short: bounded, linear in the note
            line_start = text.rfind("\n", lo, starts[c]) + 1
            if line_start == 0 and lo > 0:
                continue
            head = _SIGNATURE_HEAD.match(text, line_start, starts[c])
            if head is None or not self._credential_run(text, ends[c], creds):
                continue
            k = bisect_left(starts, head.start("name"))
            names = [j for j in range(k, c) if toks[j].isalpha() and len(toks[j]) >= 2]
            if not names or not all(self._signature_word(low[j]) for j in names):
                continue
            if any(toks[j].isupper() and _glued(j, toks, starts, ends) for j in range(k, c) if toks[j].isalpha()) or all(
                    len(toks[j]) > 3 and toks[j].isupper() and abbreviation_shape(toks[j])
                    and low[j] not in self.first and low[j] not in self.last for j in names):
                # review 14: capitals glued to a word ("BiPAP RRT", "PleurX RN"; not "LeBlanc"), an abbreviation
                # longer than initials ("HFNC RRT"; not "JA RN")
                continue
            initials = [j for j in range(k, c) if len(toks[j]) == 1 and toks[j].isalpha()]
            if initials or any(low[j] in self.first or low[j] in self.last or not (
                    low[j] in self.english or is_frequent(low[j])) for j in names):
                out.extend(names)  # the initial stays with the CRF (a lower-case one never joins: _spans)
        return out

    def _signature_word(self, lw: str) -> bool:
        """A word that may be a clinician's name on a signature line: no function, cue, state or (unless a
        known name) medical word."""
        if is_function_word(lw) or lw in self._all_cues or lw in self._kin_states:
            return False
        if lw in self.first or lw in self.last:
            return True
        return not (lw in self._medical or is_frequent(lw) or self._inflected(lw))

    def _inflected(self, lw: str) -> bool:
        """A dictionary word with a verb's, an adverb's or a plural's ending, no name's ("covering", "Regarding",
        "Reportedly", "Updates", "DISCUSSED")."""
        return lw in self.english and (lw.endswith(_NOT_NAME_ENDINGS) or (lw.endswith("s") and lw[:-1] in self.english))

    @staticmethod
    def _credential_run(text: str, pos: int, creds: frozenset[str]) -> bool:
        """Only credentials (", bsn, rn", "/L", "-C"), a date, a time or a number from `pos` to the line end (round 18:
        a time's words too, "rn  2/23/2017 at 0900 pm")."""
        end = text.find("\n", pos, pos + TAIL_REACH + 1)
        if end < 0 and len(text) - pos > TAIL_REACH:
            return False
        tail = text[pos:end if end >= 0 else len(text)]
        for piece in _TAIL_PIECE.findall(tail):
            if not (piece.lower() in creds or piece.isdigit() or len(piece) == 1 or piece.lower() in _TIME_WORDS):
                return False
        return True

    def _title_case_run(self, k: int, i: int, toks, low, starts, ends, text) -> bool:
        """The title `k` and word `i` inside Title-case text, where a capital is no evidence ("Call Your Dr.
        About Any", "Directed By Dr. Continue Diet"): a capitalised word follows a word before the title, or a
        capitalised frequent word (not a credential) follows word `i` ("Call Dr. For Any Fever")."""
        def capital(j: int) -> bool:
            return 0 <= j < len(toks) and toks[j].isalpha() and toks[j][0].isupper()

        if capital(k - 1) and k >= 2 and toks[k - 2].isalpha() and text[ends[k - 2]:starts[k - 1]] in (" ", "\t"):
            return True
        j = i + 1
        return (capital(j) and text[ends[i]:starts[j]] in (" ", "\t") and is_frequent(low[j])
                and low[j] not in self.cues.credentials)

    def _signature_credentials(self, low, ends, text) -> frozenset[int]:
        """Token indices of the line credentials ("PT", "pa-c") that only credentials, a bracket or a number
        follow to the line end (an anchored match after each; none looked for when no such word is in the note)."""
        creds = self.cues.line_credentials
        if creds.isdisjoint(low):
            return frozenset()
        out = []
        for word in creds.intersection(low):
            k = -1
            while True:
                try:
                    k = low.index(word, k + 1)  # C-level search for each occurrence
                except ValueError:
                    break
                nl = text.find("\n", ends[k], ends[k] + TAIL_REACH + 1)
                if (nl >= 0 or len(text) - ends[k] <= TAIL_REACH) and _CREDENTIAL_TAIL.match(text, ends[k]):
                    out.append(k)
        return frozenset(out)

    def _hopeless(self, low, lex, toks, starts, ends, text, signed, vocab):
        """A test of word i that is true only when its score cannot matter: a word no neighbour can carry
        (lexical score <= 0) whose context could not lift it to the threshold. Its context is then not
        computed: its score would only decide `proposed`, which stays false (scores and labels of words
        not proposed are read nowhere else). The bound: _context adds the initial, title, strongest cue
        and credential weights; a title needs a title word among the words _left_words reads (ending
        within LEFT_REACH characters before the word), a credential the word _right_word finds."""
        w, c = self.opts.weights, self.cues
        free = max(0.0, w.initial) + self._strongest_cue
        title_w, cred_w, thr = max(0.0, w.title), max(0.0, w.credential), self.opts.threshold
        titles = [j for j, t in enumerate(low) if t in c.titles] if not c.titles.isdisjoint(vocab) else []
        any_cred = bool(signed) or not c.credentials.isdisjoint(vocab)
        limit = thr - BOUND_SLACK
        if not titles and not any_cred:  # (most notes) only the base and the free weights: no call of the test below
            return lambda i, base: base <= 0 and base + free < limit

        def hopeless(i: int, base: float) -> bool:
            if base > 0:
                return False  # a neighbour may carry it: its score is read
            bound = base + free
            if titles:
                k = bisect_left(titles, i) - 1  # the last title word before i ends latest
                if k >= 0 and ends[titles[k]] > starts[i] - LEFT_REACH:
                    bound += title_w
            if any_cred and bound + cred_w >= thr - BOUND_SLACK:
                nxt = self._right_word(i, toks, lex, starts, ends, text)
                if nxt is not None and (low[nxt] in c.credentials or nxt in signed):
                    bound += cred_w
            return bound < thr - BOUND_SLACK

        return hopeless

    def _context(self, i: int, base: float, toks, low, lex, starts, ends, text,
                 signed: frozenset[int] = frozenset()) -> tuple[float, str]:
        """Score of word i with its context, and its label (DOCTOR after a title or before a credential)."""
        w, c = self.opts.weights, self.cues
        prev = self._left_words(i, toks, low, lex, starts, ends, text)
        score, label = base, "PATIENT"
        if prev.initial:
            score += w.initial
        if prev.title is not None:
            score += w.title
            if prev.title in c.doctor_titles:
                label = "DOCTOR"
        best, doctor = 0.0, False
        words_ = prev.words if not prev.credential_above else ()
        for n in range(1, min(len(words_), self.longest_cue) + 1):
            cue = self.phrase_cues.get(words_[len(words_) - n:])
            if cue is not None and cue[0] >= best:
                best, doctor = cue
        if doctor:
            label = "DOCTOR"
        score += best
        nxt = self._right_word(i, toks, lex, starts, ends, text)
        if nxt is not None and (low[nxt] in c.credentials or (
                nxt in signed and self._signature_line(i, toks, lex, starts, text))):
            score += w.credential
            label = "DOCTOR"
        return score, label

    def _signature_line(self, i: int, toks, lex, starts, text) -> bool:
        """Word i before a signature-line credential (_signature_credentials: only credentials, a bracket or a
        number after it to the line end: "Ann Quell, PT, DPT  (aquell)", "holly pa-c") opens a signature:
        only name words and initials (at most two words, "--" allowed) before it on its line, and one of
        them or word i a known given or last name (not 'Vestibular PT', 'Peds OT', 'AMBULATED PT')."""
        line_start = text.rfind("\n", 0, starts[i]) + 1
        first, last, english = self.first, self.last, self.english
        j, names_before = i - 1, 0
        known = (w := toks[i].lower()) in first or w in last
        unknown = w not in english  # lexical() gave it a score: no frequent word
        while j >= 0 and starts[j] >= line_start:
            t = toks[j]
            if t.isalpha() and (len(t) == 1 or (lex[j] is not None and lex[j] > 0)):
                names_before += len(t) > 1
                known = known or (w := t.lower()) in first or w in last
                unknown = unknown and (len(t) == 1 or w not in english)
            elif t not in _NAME_MARKS:
                return False
            j -= 1
        # round 15: or two words in no dictionary ("XAVROS QUELLBY, PT, DPT": a name no gazetteer holds)
        return names_before <= 2 and (known or (unknown and names_before >= 1))

    def _adjacent(self, i: int, step: int, starts, ends, text) -> int | None:
        """The word next to word i, past spaces, 'and', '&' or an initial ("mjch and qiludsr",
        "troy r. daugherty"), on the same line and at most JOIN_GAP characters away."""
        j = i + step
        while 0 <= j < len(starts):
            a, b = (ends[j], starts[i]) if step < 0 else (ends[i], starts[j])
            if b - a > JOIN_GAP or "\n" in text[a:b]:
                return None
            tok = text[starts[j]:ends[j]]
            if tok.lower() in ("and", "&", ".") or (len(tok) == 1 and tok.isalpha()):
                j += step
                continue
            return j if text[a:b].strip(" \t.&") in ("", "and") or _joins(text[a:b]) else None
        return None

    def _left_words(self, i: int, toks, low, lex, starts, ends, text) -> _Left:
        """Up to [names] window lower-case words before word i, skipping initials and name-like words."""
        out: list[str] = []
        initial = False
        title = None
        j = nearest = i - 1
        skipped_names = 0
        window, titles, limit = self.opts.window, self.cues.titles, starts[i] - LEFT_REACH
        while j >= 0 and len(out) < window and ends[j] > limit:
            t = toks[j]
            if t == "." and not (j > 0 and (len(toks[j - 1]) == 1 or low[j - 1] in titles)):
                break  # a sentence ends: its words are not this word's context
            if t in _SKIPPED:
                j -= 1
                continue
            if len(t) == 1 and t.isalpha():
                initial = initial or (j == i - 2 and _initial(j, toks, starts, ends, text))
                j -= 1
                continue
            tl = low[j]
            if not out:
                if tl in titles and title is None and (not t.islower() or toks[j + 1] == "."):
                    title = tl  # "ms contin" is a drug; "Ms", "MS", "ms." are titles
                lj = lex[j]
                if lj is not None and lj > 0 and skipped_names < 2 and title is None:
                    skipped_names += 1  # "spoke with jon peters": peters looks past jon
                    j -= 1
                    continue
            if not t.isalnum():
                break
            if not out:
                nearest = j
            out.append(tl)
            j -= 1
        out.reverse()
        # a credential ending the line above is its own line's name's ("Brian Davis MD\nmetoprolol"), not a role
        above = bool(out) and out[-1] in self.cues.credentials and "\n" in text[ends[nearest]:starts[i]]
        return _Left(tuple(out), initial, title, above)

    def _right_word(self, i: int, toks, lex, starts, ends, text) -> int | None:
        """The next word after word i (past a comma, or into brackets around one word: "GERI (CNA)"), not
        across a line break."""
        j = i + 1
        while j < len(toks) and toks[j] == "," and "\n" not in text[ends[i]:starts[j]]:
            j += 1
        if j + 2 < len(toks) and toks[j] == "(" and toks[j + 2] == ")":
            j += 1
        if j < len(toks) and toks[j].isalpha() and "\n" not in text[ends[i]:starts[j]]:
            return j
        return None

    def _spans(self, proposed, labels, scores, toks, starts, ends, text) -> list[Span]:
        """Runs of proposed words (and an initial with its dot just before) as spans."""
        out: list[Span] = []
        i = 0
        thr = self.opts.threshold
        while True:
            try:
                i = proposed.index(True, i)  # the next proposed word (a C-level scan)
            except ValueError:
                break
            j = i
            while j + 1 < len(toks) and proposed[j + 1] and text[ends[j]:starts[j + 1]].isspace():
                j += 1
            start = starts[i]
            if (i >= 2 and toks[i - 1] == "." and len(toks[i - 2]) == 1 and toks[i - 2].isupper()
                    and "\n" not in text[ends[i - 2]:starts[i]]):  # not 'mod I.' ending the line before
                start = starts[i - 2]
            elif i >= 1 and len(toks[i - 1]) == 1 and toks[i - 1].isupper() and text[ends[i - 1]:starts[i]] == " ":
                start = starts[i - 1]
            conf = min(1.0, max((scores[k] or thr) for k in range(i, j + 1)) / (2 * thr))
            label = "DOCTOR" if "DOCTOR" in labels[i:j + 1] else labels[i]
            out.append(Span(start, ends[j], label, SOURCE, round(conf, 3)))
            i = j + 1
        return out


@dataclass(frozen=True)
class _Left:
    words: tuple[str, ...]
    initial: bool
    title: str | None
    credential_above: bool = False  # the nearest word is a credential on an earlier line: no cue


# after a relative's name: a clause end or a lower-case word ("Ginger, she", "Ant)", "hope helps", "page by")
_KIN_CLOSE = regex.compile(r"(?:[ \t]*[,;)]|\.(?:\s|\Z)|[ \t]+\p{Ll})")
_CLAUSE_END = regex.compile(r"[ \t]*[,;)]")  # "Ginger, she", "Ant)", "Marvel;"
_KIN_LEAD = regex.compile(r"(?:(?<![\p{L}\d])(?:his|her|their|pt'?s|with|and|per|from|for)|[(,;])[ \t]+\Z")  # whose relative
# "daughter Grace at 10:45", "stepdaughter Grace to pick up" (the word a function word: not "son Discharge
# tomorrow"); not a verb's particle ("son Brought in clothes")
_LOWER_NEXT = regex.compile(r"[ \t]+(?!(?:in|out|up|down|back|over|off|home|away|here|there|by|with)(?![\p{L}\d]))\p{Ll}")
_UPPER_NEXT = regex.compile(r"[ \t]\p{Lu}{2,}(?![\p{L}\d])")  # "fiancee PRECIOUS LONG at"
_KIN_LEAD_CAPS = regex.compile(r"(?:(?<![\p{L}\d])(?:HIS|HER|THEIR|PT'?S|WITH|AND)|[(,;])[ \t]+\Z")  # in capitals
_CAPS_CLOSE = regex.compile(r"[ \t]*(?:[,;)]|\n|\Z)")  # "DAUGHTER QUARTZELL\n", "WIFE CINDY,"
# a signature line's start: dashes allowed, an initial, then one or two words and an optional comma
_SIGNATURE_HEAD = regex.compile(r"[ \t]*(?:-{1,2}[ \t]*)?(?P<name>(?:\p{L}\.[ \t]*)?\p{L}[\p{L}'’-]*"
                                r"(?:[ \t]\p{L}[\p{L}'’-]*)?)[ \t]*,?[ \t]*\Z")
_TIME_WORDS = frozenset(("at", "am", "pm", "hrs"))  # round 18: a signature's date and time ("2/23/2017 at 0900")
_TAIL_PIECE = regex.compile(r"\p{L}+|\d+")  # the words and numbers after a signature's credential
_VERB_ENDINGS = ("ing", "ed")  # review 18: a verb's form in capitals after "by" and an initial ("N. VOMITING")
_NOT_NAME_ENDINGS = ("ing", "ed", "ly")  # a dictionary word's endings that no name-like word has ("Regarding")


def _verb_form(low: str) -> bool:
    """A long word in no name list with a verb's ending: a word the dictionary lacks ("ambulated"), no name."""
    return len(low) >= 7 and low.endswith(_NOT_NAME_ENDINGS)
_WORD_AFTER = regex.compile(r"[ \t]+(\p{L}+)")  # "Dr. GI fellow": the word after the letters
_FIELD_KEY_BEFORE = regex.compile(r"\p{L}:[ \t]*\Z")  # a field key's ':' right before a title ("SUBMITTING MD: DR.")
_FIELD_VALUE_END = regex.compile(r"\.?(?:[ \t]*[,;]|[ ]{2,}|\t|[ \t]*(?:\r?\n|\Z))")  # a field value's end
_CAPS_AFTER = regex.compile(r"[ \t]+\p{Lu}{2,}(?![\p{L}\d])")  # "Dr. ED NOTE": a capitals run, not initials
# after "covering": one or two words, "'s" and the patients ("bo's pts", "lee ann's patients")
_COVERED = regex.compile(r"[ \t]+(?P<name>\p{L}[\p{L}-]*(?:[ \t]\p{L}[\p{L}-]*)?)['’]s[ \t]+(?i:pts|patients)(?![\p{L}\d])")
_COVER_HEAD = regex.compile(r"(?:^|[;,:]|--)[ \t]*(?P<name>\p{L}[\p{L}-]*(?:[ \t]\p{L}[\p{L}-]*)?)[ \t]+\Z", regex.MULTILINE)
# round 16: an inverted name's field ("Provider: Vole, Harriet", "| PAGE, HUNTER  "): a key's ':', a column break or
# the line start before it; after it the line end, a column break, ',' or '(' (an initial between allowed)
_FIELD_OPEN = regex.compile(r"(?:^|:|\||\t| {2})[ \t]*\Z", regex.MULTILINE)
_FIELD_CLOSE = regex.compile(r"(?:[ \t]+\p{Lu}\.?)?(?:[ \t]*(?:[,(|\t\r\n]|\Z)| {2})")
_BY_BEFORE = regex.compile(r"(?<![\p{L}\d])(?i:by)[ \t]*:?[ \t]+\Z")  # "Referred by: ", "REF BY "
_COLUMN_BEFORE = regex.compile(r"\S(?:[ ]{2,}|\t)\Z")  # a column break before a line's last column
_LINE_END = regex.compile(r"[ \t]*(?:\r?\n|\Z)")
_LINE_CLOSE = regex.compile(r"[ \t]*(?:[,;]|\.?[ \t]*(?:\r?\n|\Z))")  # a name's end: the line's, a ',' or ';'
_COPULAS = frozenset(("is", "was"))  # "pearl is a 44 yo"
_AGE_NEXT = regex.compile(r"[ \t]+(?i:an?)[ \t]+\d{1,3}[ \t-]*(?i:years?|yrs?|yo|y/o|y\.o\.)(?![\p{L}\d])")
_SUBJECT_BEFORE = regex.compile(r"(?:^|:)[ \t]*\Z", regex.MULTILINE)  # a field key's ':' or the line's start
_AGE_AFTER = regex.compile(r",[ \t]*\d{1,3}[ \t]*[,;)]")  # "husband bran, 25, who"
_NAME_MARKS = frozenset((".", "'", "’", "-", "--"))  # between the name words of a signature line
# a line credential ("PT", "pa-c") and after it to the line end only more credentials (", DPT", "-C", "-BC"),
# a bracket, a time or a number
_CREDENTIAL_TAIL = regex.compile(r"(?:-\p{L}{1,3})?(?:[ \t]*,?[ \t]*\p{Lu}{2,6}(?:-\p{L}{1,3})?)*[ \t]*"
                                 r"(?:\([^\n]*\)|\d{1,5})?[ \t]*(?=\n|\Z)")


# review 17: a bare number and a letter ("(8 F)", "(72 F)", "(101 F)") is as often a catheter's French size or a
# temperature as an age and a sex (group bare, read only before a name's two words or a given name)
_AGE_SEX = (r"(?P<bare>\d{1,3}[ \t-]*[mf](?=[ \t]*\)))|\d{1,3}[ \t]*(?:-?[ \t]*(?:y|yo|y/o|y\.o\.|yrs?|years?(?:[ \t-]old)?|year-old))?[ \t,/-]*"
            r"(?:m|f|male|female|man|woman)|(?:m|f|male|female)[ \t]*[/,][ \t]*\d{1,3}(?:[ \t]*(?:y|yo|y/o|yrs?))?")


def _bracket_pattern(kin: frozenset[str], credentials: frozenset[str]) -> regex.Pattern:
    """A bracket right after a word saying who the person is: a relative (`kin`, "(his daughter)"), an age and a sex
    ("(86YO M)", "(M/55)"; group who), or only a credential ("(LICSW)", "(PA-C)")."""
    alt = "|".join(regex.escape(w) for w in sorted(kin, key=len, reverse=True))
    cred = "|".join(regex.escape(w) for w in sorted(credentials, key=len, reverse=True))
    return regex.compile(r"(?<=\p{L}[ \t]?)(\()[ \t]*(?:(?P<who>(?P<kin>(?:(?:his|her|pt'?s|patient'?s)[ \t]+)?(?:" + alt
                         + r"))|" + _AGE_SEX + r")|(?:" + cred + r"|pa-c|np-c|anp-bc|fnp-bc))[ \t]*\)", regex.IGNORECASE)


def text_gap(end: int, start: int) -> bool:
    """One blank between two tokens (their offsets)."""
    return start - end == 1


def _positions(low: list[str], wanted: frozenset[str], present: frozenset[str]) -> list[int]:
    """Indices of the tokens that are one of `wanted`, in order (`present`: the words of `low` looked for): a C-level list
    search per word the note has (most notes have a few of them), not a Python test of every token."""
    out: list[int] = []
    for word in wanted.intersection(present):
        k = -1
        try:
            while True:
                k = low.index(word, k + 1)
                out.append(k)
        except ValueError:
            pass
    out.sort()
    return out


def _initial(j: int, toks, starts, ends, text) -> bool:
    """Token j is an initial: one letter standing alone, followed by a dot ("K. Walsh", not "90s.")."""
    return (j + 1 < len(toks) and toks[j + 1] == "." and ends[j] == starts[j + 1]
            and (j == 0 or starts[j] > ends[j - 1]) and toks[j] not in ("I", "a"))


def _joins(gap: str) -> bool:
    """A gap between two name words made only of spaces, 'and', '&' and initials."""
    return all(w.lower() in ("and", "&") or (len(w.rstrip(".")) == 1 and w[0].isalpha()) for w in gap.split())


def _glued(i: int, toks, starts, ends) -> bool:
    """A word with a digit or letters glued on ("xyz9", "9am"): an id or a unit, not a name."""
    return ((i + 1 < len(toks) and starts[i + 1] == ends[i] and toks[i + 1][0].isalnum())
            or (i > 0 and ends[i - 1] == starts[i] and toks[i - 1][-1].isalnum()))


def name_stage(config: Config, bundle) -> NameNet:
    """Pipeline stage factory ([registry.stages] names): the name recall net of [names]."""
    return NameNet(config.names, config.crf.tagging.cache_size, config.merge.name_particles)
