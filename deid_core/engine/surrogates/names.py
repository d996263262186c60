"""Person-name surrogates: each name token mapped by keyed hash, gender and initials kept consistent.

"John Smith", "Smith", "J. Smith", "JS" and "SMITH, JOHN" of one patient stay consistent without
any shared state: every token is mapped on its own from (key, scope, normalized token), and the
surrogate of a token starting with letter L always starts with sigma(L), a keyed per-scope
letter map that is never the identity, so an initial "J." becomes the initial of the surrogate
of "John".
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from string import ascii_uppercase

import regex

from deid_core.config.surrogates import Surrogates
from deid_core.engine.surrogates.consistency import keyed_rng, keyed_seed, match_case

_TOKEN = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*")
_DIGIT = regex.compile(r"\d")


@dataclass(frozen=True)
class NamePools:
    """Faker first (male, female) and last names indexed by initial letter."""

    male: frozenset[str]
    female: frozenset[str]
    last_set: frozenset[str]
    by_kind: dict[str, dict[str, tuple[str, ...]]]
    more_male: frozenset[str] = frozenset()  # first names of other locales: gender lexicon only
    more_female: frozenset[str] = frozenset()


def _provider(locale: str):
    """The Faker person provider class of a locale (en_US if the locale has none)."""
    try:
        return importlib.import_module(f"faker.providers.person.{locale}").Provider
    except (ImportError, AttributeError):
        return importlib.import_module("faker.providers.person.en_US").Provider


def _by_letter(names: list[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for n in names:
        if n[:1].upper() in ascii_uppercase:
            out.setdefault(n[:1].upper(), []).append(n)
    return {k: tuple(sorted(set(v))) for k, v in out.items()}


@lru_cache(maxsize=4)
def name_pools(locale: str = "en_US", gender_locales: tuple[str, ...] = ()) -> NamePools:
    """Name pools of a locale (and a wider gender lexicon), loaded once per process."""
    more_m: set[str] = set()
    more_f: set[str] = set()
    for loc in gender_locales:
        q = _provider(loc)
        more_m.update(n.casefold() for n in getattr(q, "first_names_male", ()) or ())
        more_f.update(n.casefold() for n in getattr(q, "first_names_female", ()) or ())
    p = _provider(locale)
    male = [n for n in getattr(p, "first_names_male", ()) if n.isalpha()]
    female = [n for n in getattr(p, "first_names_female", ()) if n.isalpha()]
    last = [n for n in getattr(p, "last_names", ()) if n.isalpha()]
    by_kind = {
        "male": _by_letter(male),
        "female": _by_letter(female),
        "unisex": _by_letter(male + female),
        "last": _by_letter(last),
    }
    return NamePools(
        male=frozenset(n.casefold() for n in male),
        female=frozenset(n.casefold() for n in female),
        last_set=frozenset(n.casefold() for n in last),
        by_kind=by_kind,
        more_male=frozenset(more_m),
        more_female=frozenset(more_f),
    )


class NameSurrogates:
    """Replaces person names token by token (titles kept, case style kept)."""

    def __init__(self, settings: Surrogates) -> None:
        conf = settings.names
        self.pools = name_pools(settings.locale, conf.gender_locales)
        self.keep = frozenset(t.casefold() for t in conf.keep_tokens)
        letters = conf.initial_letters
        self.targets = tuple(
            L for L in letters
            if all(L in self.pools.by_kind[k] for k in ("male", "female", "unisex", "last"))
        )
        if len(self.targets) < 2:
            raise ValueError("[surrogates.names] initial_letters leaves fewer than 2 usable letters")
        self.max_redraws = settings.max_redraws

    def letter_map(self, key: bytes, scope: str) -> dict[str, str]:
        """sigma: original initial -> surrogate initial, keyed per scope, never the identity."""
        return _letter_map(key, scope, self.targets)

    def kind(self, norm: str) -> str:
        """Which pool a token's surrogate comes from: male / female / unisex first name, or last.

        The locale's first-name lists decide first; then its last names; then the wider
        first-name lexicon of `gender_locales` (so "Corinne" still gets a female first name).
        """
        p = self.pools
        m, f = norm in p.male, norm in p.female
        if not (m or f) and norm not in p.last_set:
            m, f = norm in p.more_male, norm in p.more_female
        if m and f:
            return "unisex"
        if m:
            return "male"
        if f:
            return "female"
        return "last"

    def token(self, key: bytes, scope: str, tok: str, forbidden: frozenset[str], keep: bool = True) -> str:
        """The surrogate of one name token, in the token's case style (titles kept if `keep`)."""
        norm = tok.casefold()
        if keep and norm.rstrip(".") in self.keep:
            return tok
        sigma = self.letter_map(key, scope)
        first = tok[:1].upper()
        target = sigma.get(first) or self.targets[keyed_seed(key, scope, "NAME-letter", norm) % len(self.targets)]
        if len(tok) == 1:
            return match_case(tok, target)
        if 2 <= len(tok) <= 3 and tok.isupper() and self.kind(norm) == "last" and norm not in self.pools.last_set:
            # Initials such as "JS": each letter through sigma.
            return "".join(sigma.get(c, c) for c in tok)
        kind = self.kind(norm)
        pool = self.pools.by_kind[kind][target]
        for attempt in range(self.max_redraws + 1):
            cand = pool[keyed_seed(key, scope, "NAME", kind, norm, str(attempt)) % len(pool)]
            c = cand.casefold()
            if c != norm and c not in forbidden:
                return match_case(tok, cand)
        # Every draw collided: a keyed pseudo-name with the right initial.
        rng = keyed_rng(key, scope, "NAME-fallback", norm)
        return match_case(tok, target + "".join(rng.choice("aeiou" if i % 2 == 0 else "bdklmnrst") for i in range(5)))

    def username(self, key: bytes, scope: str, original: str, forbidden: frozenset[str]) -> str | None:
        """"dwagner" / "parkerw" / "SWEENEYC7": initial and name mapped like the person's name
        ("wagner" gets the surrogate of "Wagner"), digits redrawn; None if no name inside."""
        m = _USER.fullmatch(original)
        if not m:
            return None
        letters, digits = m.groups()
        low = letters.casefold()
        for pre in (0, 1):
            for post in (0, 1):
                core = low[pre: len(low) - post]
                if len(core) < 3 or not _known(self.pools, core):
                    continue
                sigma = self.letter_map(key, scope)
                head = sigma.get(low[:pre].upper(), "").lower() if pre else ""
                tail = sigma.get(low[-1].upper(), "").lower() if post else ""
                name = self.token(key, scope, core.title(), forbidden, keep=False).lower()
                rng = keyed_rng(key, scope, "NAME-digits", original.casefold())
                out = head + name + tail + "".join(str(rng.randrange(10)) for _ in digits)
                return match_case(letters, out) if letters.isupper() else out
        return None

    def replace(self, key: bytes, scope: str, original: str, forbidden: frozenset[str]) -> str:
        """The surrogate of a whole name span: tokens replaced, separators and titles kept."""
        if _TOKEN.fullmatch(original):  # one token ("Smith"), most name spans: what _replace_tokens gives
            return self.token(key, scope, original, forbidden, original.casefold() not in self.keep)
        return self._replace_tokens(key, scope, original, forbidden)

    def _replace_tokens(self, key: bytes, scope: str, original: str, forbidden: frozenset[str]) -> str:
        """replace() for any span: each token through token(), digits redrawn."""
        # A span made only of "title" tokens ("DDS" as initials) is a name: replace it all.
        keep = any(t.casefold() not in self.keep for t in _TOKEN.findall(original))

        def sub_tok(m: regex.Match) -> str:
            return self.token(key, scope, m.group(0), forbidden, keep)

        out = _TOKEN.sub(sub_tok, original)
        if _DIGIT.search(out):
            rng = keyed_rng(key, scope, "NAME-digits", original.casefold())
            out = _DIGIT.sub(lambda _m: str(rng.randrange(10)), out)
        return out


_USER = regex.compile(r"([A-Za-z]+)(\d*)")


def _known(pools: NamePools, norm: str) -> bool:
    return norm in pools.last_set or norm in pools.male or norm in pools.female


@lru_cache(maxsize=4096)
def _letter_map(key: bytes, scope: str, targets: tuple[str, ...]) -> dict[str, str]:
    rng = keyed_rng(key, scope, "NAME-initials")
    perm = list(targets)
    rng.shuffle(perm)
    out: dict[str, str] = {}
    for i, letter in enumerate(ascii_uppercase):
        t = perm[i % len(perm)]
        if t == letter:
            t = perm[(i + 1) % len(perm)]
        out[letter] = t
    return out
