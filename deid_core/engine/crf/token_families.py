"""Token families: features intrinsic to a token string, computed once per token *type* (cached)."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from deid_core.engine.crf.shapes import regex_shape, shape, short_shape
from deid_core.engine.crf.words import feature_words
from deid_core.gazetteers import words

TokenFn = Callable[[str], list[str]]
TOKEN_FAMILIES: dict[str, TokenFn] = {}
_WORDS = feature_words()  # conf/crf_features.toml


def token_family(name: str) -> Callable[[TokenFn], TokenFn]:
    """Register a token-intrinsic feature family."""

    def deco(fn: TokenFn) -> TokenFn:
        TOKEN_FAMILIES[name] = fn
        return fn

    return deco


@token_family("word")
def f_word(token: str) -> list[str]:
    """The lower-cased token."""
    return ["w=" + token.lower()]


@token_family("shape")
def f_shape(token: str) -> list[str]:
    """Orthographic shape."""
    return ["sh=" + shape(token)]


@token_family("short_shape")
def f_short_shape(token: str) -> list[str]:
    """Compressed orthographic shape."""
    return ["cs=" + short_shape(token)]


@token_family("regex_shape")
def f_regex_shape(token: str) -> list[str]:
    """Regex token-shape class."""
    return ["rs=" + regex_shape(token)]


@token_family("affixes")
def f_affixes(token: str) -> list[str]:
    """Prefixes and suffixes up to 3 characters (tokens longer than the affix)."""
    low = token.lower()
    n = len(low)
    out = []
    for k in (1, 2, 3):
        if n > k:
            out.append(f"p{k}={low[:k]}")
            out.append(f"s{k}={low[-k:]}")
    return out


@token_family("length")
def f_length(token: str) -> list[str]:
    """Token length class."""
    n = len(token)
    return ["len=" + (str(n) if n < 8 else "8+")]


@token_family("profession_suffix")
def f_profession_suffix(token: str) -> list[str]:
    """The token ends like a profession (-ist, -ian, -man, ...)."""
    low = token.lower()
    if len(low) < 5:
        return []
    for suf in _WORDS.profession_suffixes:
        if low.endswith(suf):
            return ["prof=" + suf]
    return []


@lru_cache(maxsize=1)
def _gaz_sets() -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple((name, words(name)) for name in _WORDS.gazetteer_lists)


def gazetteer_names(low: str) -> str:
    """'+'-joined names of the gazetteers holding the lower-cased token ('' if none): per type."""
    return "+".join(name for name, ws in _gaz_sets() if low in ws)
