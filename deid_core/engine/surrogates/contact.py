"""Email, URL and IP-address surrogates: same shape, surrogate name-based users, valid IPv4."""

from __future__ import annotations

import random
from collections.abc import Callable

import regex

from deid_core.engine.surrogates.consistency import match_case
from deid_core.engine.surrogates.names import NamePools
from deid_core.engine.surrogates.numbers import format_preserving

_URL = regex.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)?(?P<www>www\d?\.)?(?P<host>[^/:?#\s]+)(?P<rest>.*)$", regex.S)
_IPV4 = regex.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$")
_HEX = "0123456789abcdef"


def _name_word(rng: random.Random, pools: NamePools, kind: str) -> str:
    letter = rng.choice(sorted(pools.by_kind[kind]))
    return rng.choice(pools.by_kind[kind][letter]).lower()


def email(rng: random.Random, pools: NamePools, text: str, user_surrogate: Callable[[str], str]) -> str:
    """user@domain.tld: the user through the name surrogates, a surrogate domain, the same TLD."""
    user, at, domain = text.rpartition("@")
    if not at:
        return format_preserving(rng, text)
    new_user = user_surrogate(user)
    labels = domain.split(".")
    tld = labels[-1] if len(labels) > 1 else ""
    word = _name_word(rng, pools, "last") + rng.choice(["mail", "net", "health", "md", ""])
    new_domain = word + ("." + tld if tld else "")
    return new_user + "@" + match_case(domain, new_domain)


def url(rng: random.Random, pools: NamePools, text: str) -> str:
    """Same scheme and www prefix, a surrogate host with the same TLD, the path format-preserved."""
    m = _URL.match(text)
    if not m:
        return format_preserving(rng, text)
    labels = m.group("host").split(".")
    tld = labels[-1] if len(labels) > 1 else ""
    host = _name_word(rng, pools, "last") + rng.choice(["health", "clinic", "med", "care", ""])
    host = host + ("." + tld if tld else "")
    return (m.group("scheme") or "") + (m.group("www") or "") + match_case(m.group("host"), host) + format_preserving(rng, m.group("rest"))


def ip_address(rng: random.Random, text: str) -> str:
    """A valid IPv4 (public-looking first octet) of the same dotted shape; IPv6/other: hex-preserving."""
    if _IPV4.match(text):
        first = rng.choice([o for o in range(1, 224) if o not in (10, 127)])
        return ".".join([str(first)] + [str(rng.randint(0, 255)) for _ in range(2)] + [str(rng.randint(1, 254))])
    out = []
    for c in text:
        if c.lower() in _HEX:
            h = rng.choice(_HEX)
            out.append(h.upper() if c.isupper() else h)
        else:
            out.append(c)
    return "".join(out)
