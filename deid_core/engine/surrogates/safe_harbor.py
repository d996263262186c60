"""HIPAA Safe Harbor rules: ages >= 90 bucketed, ZIP codes cut to 3 digits (000 when restricted)."""

from __future__ import annotations

import random

import regex

from deid_core.config.surrogates import Ages, Zip

_NUM = regex.compile(r"\d+")
_WORDS_90 = regex.compile(r"\b(?:ninety|hundred|one hundred)\b", regex.I)


def age(text: str, conf: Ages, rng: random.Random | None = None) -> str:
    """An age span: >= threshold -> bucket; below -> unchanged or a keyed jittered surrogate."""
    threshold = conf.threshold
    bucket = conf.bucket
    m = _NUM.search(text)
    if m is None:
        return bucket if _WORDS_90.search(text) else text
    value = int(m.group(0))
    if value >= threshold:
        return text[: m.start()] + bucket + text[m.end():]
    if conf.under_threshold != "surrogate" or rng is None:
        return text
    jitter = conf.jitter
    choices = [v for v in range(max(0, value - jitter), min(threshold - 1, value + jitter) + 1) if v != value]
    if not choices:
        return text
    return text[: m.start()] + str(rng.choice(choices)) + text[m.end():]


def zip_code(text: str, conf: Zip) -> str:
    """Keep the first three digits (000 for restricted ZIP3 areas); other digits -> '*' or '0'."""
    restricted = frozenset(conf.restricted_zip3)
    fill = "*" if conf.style == "stars" else "0"
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
