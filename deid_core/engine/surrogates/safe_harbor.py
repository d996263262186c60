"""HIPAA Safe Harbor rules: ages >= 90 bucketed, ZIP codes cut to 3 digits (000 when restricted)."""

from __future__ import annotations

import random
from typing import Any

import regex

_NUM = regex.compile(r"\d+")
_WORDS_90 = regex.compile(r"\b(?:ninety|hundred|one hundred)\b", regex.I)


def age(text: str, settings: dict[str, Any], rng: random.Random | None = None) -> str:
    """An age span: >= threshold -> bucket; below -> unchanged or a keyed jittered surrogate."""
    conf = settings.get("ages", {})
    threshold = int(conf.get("threshold", 90))
    bucket = str(conf.get("bucket", "90+"))
    m = _NUM.search(text)
    if m is None:
        return bucket if _WORDS_90.search(text) else text
    value = int(m.group(0))
    if value >= threshold:
        return text[: m.start()] + bucket + text[m.end():]
    if conf.get("under_threshold", "keep") != "surrogate" or rng is None:
        return text
    jitter = max(1, int(conf.get("jitter", 3)))
    choices = [v for v in range(max(0, value - jitter), min(threshold - 1, value + jitter) + 1) if v != value]
    if not choices:
        return text
    return text[: m.start()] + str(rng.choice(choices)) + text[m.end():]


def zip_code(text: str, settings: dict[str, Any]) -> str:
    """Keep the first three digits (000 for restricted ZIP3 areas); other digits -> '*' or '0'."""
    conf = settings.get("zip", {})
    restricted = frozenset(conf.get("restricted_zip3", ()))
    fill = "*" if conf.get("style", "stars") == "stars" else "0"
    digits = [c for c in text if c.isdigit()]
    zip3 = "".join(digits[:3])
    keep = "000" if zip3 in restricted or len(digits) < 5 else zip3
    out, i = [], 0
    for c in text:
        if c.isdigit():
            out.append(keep[i] if i < 3 else fill)
            i += 1
        else:
            out.append(c)
    return "".join(out)
