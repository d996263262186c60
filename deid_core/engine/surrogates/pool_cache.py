"""The checkout's cache of Faker value pools (locations.value_pool): build/surrogate-pools/, one JSON file per
(Faker release, Python minor, pool seed and size, locale, kind), so each process reads the ~5,000 pooled values
instead of drawing them from Faker again (~0.7 CPU s per process: every `deid tag` and every Spark worker).

A file is used only when its header names this Faker release, Python, seed, size, locale and kind and the
sha256 of its values matches: anything else (another Faker, a torn or edited file, no checkout) reads as absent
and the pool is drawn from Faker as before, so the surrogates are the same with or without the cache
(tests/test_replace19_pools.py). Without a checkout's build/ folder (a wheel) nothing is read or written.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from deid_core.compiled import ROOT

POOL_SEED = 20240601  # fixed: the pools depend on the Faker version and locale only
POOL_SIZE = 1500
CACHE_DIR = ROOT / "build" / "surrogate-pools"  # only in a checkout (build/ exists there: ./build.sh setup)
DISABLE_ENV = "DEID_POOL_CACHE"  # "0": neither read nor write (a measuring switch, like DEID_COMPILED)


def _header(locale: str, kind: str, faker: str | None) -> dict[str, object]:
    return {"faker": faker, "python": f"{sys.version_info[0]}.{sys.version_info[1]}", "seed": POOL_SEED, "size": POOL_SIZE,
            "locale": locale, "kind": kind}


def _digest(values: tuple[str, ...] | list[str]) -> str:
    return hashlib.sha256(json.dumps(list(values), ensure_ascii=True).encode("ascii")).hexdigest()


def _path(locale: str, kind: str, faker: str | None, folder: Path | None) -> Path | None:
    """The cache file of a pool, or None when there is nowhere to keep it (no checkout, switch off, no Faker)."""
    if faker is None or os.environ.get(DISABLE_ENV) == "0":
        return None
    base = folder if folder is not None else CACHE_DIR
    if folder is None and not base.parent.is_dir():
        return None
    py = f"{sys.version_info[0]}{sys.version_info[1]}"
    return base / f"faker-{faker}-py{py}-{POOL_SEED}-{POOL_SIZE}" / f"{locale}-{kind}.json"


def read(locale: str, kind: str, faker: str | None, folder: Path | None = None) -> tuple[str, ...] | None:
    """The cached pool, or None when absent or not exactly this Faker's, Python's and kind's (never raises)."""
    path = _path(locale, kind, faker, folder)
    if path is None:
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        values = doc["values"]
        if doc["header"] != _header(locale, kind, faker) or doc["sha256"] != _digest(values):
            return None
        if not all(isinstance(v, str) for v in values):
            return None
        return tuple(values)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(locale: str, kind: str, faker: str | None, values: tuple[str, ...], folder: Path | None = None) -> bool:
    """Keep a pool drawn from Faker (atomically: a reader sees the old file or the whole new one); False when
    there is nowhere to write or the write failed (the run goes on: the cache only saves time)."""
    path = _path(locale, kind, faker, folder)
    if path is None:
        return False
    doc = {"header": _header(locale, kind, faker), "sha256": _digest(values), "values": list(values)}
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".pool-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=True)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False
