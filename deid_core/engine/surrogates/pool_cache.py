"""The checkout's cache of Faker value pools (locations.value_pool): build/surrogate-pools/, one JSON file per
(Faker release, Python minor, pool seed and size, pool recipe, locale, kind), so each process reads the ~5,000
pooled values instead of drawing them from Faker again (~0.7 CPU s per process: every `deid tag` and every Spark
worker).

A file is used only when its header names this Faker release, Python, seed, size, recipe (a digest of the code
that draws the pool: locations.generate_pool), locale and kind, the sha256 of its values matches and the values
are what a draw gives (non-empty, sorted, distinct strings): anything else (another Faker, older pool code, a torn
or edited file, no checkout) reads as absent and the pool is drawn from Faker as before, so the surrogates are the
same with or without the cache (tests/test_replace19_pools.py). Only a checkout is written to (a pyproject.toml
and a build/ folder that is not a Python package beside deid_core/): an installed wheel reads and writes nothing,
even next to the `build` package of site-packages. The digest catches accidents, not an attacker: whoever can
write the checkout's build/ can also edit its code.
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
DISABLE_ENV = "DEID_POOL_CACHE"  # "0": neither read nor write (a measuring switch, like DEID_COMPILED)


def checkout_cache(root: Path) -> Path | None:
    """root/build/surrogate-pools when root is a checkout (pyproject.toml, a build/ that is not a package), else None
    (an installed wheel: site-packages may hold the `build` package, which is no place for our files)."""
    build = root / "build"
    if not (root / "pyproject.toml").is_file() or not build.is_dir() or (build / "__init__.py").exists():
        return None
    return build / "surrogate-pools"


CACHE_DIR = checkout_cache(ROOT)  # only in a checkout (build/ exists there: ./build.sh setup); None in a wheel


def _header(locale: str, kind: str, faker: str | None, recipe: str) -> dict[str, object]:
    return {"faker": faker, "python": f"{sys.version_info[0]}.{sys.version_info[1]}", "seed": POOL_SEED, "size": POOL_SIZE,
            "recipe": recipe, "locale": locale, "kind": kind}


def _digest(values: tuple[str, ...] | list[str]) -> str:
    return hashlib.sha256(json.dumps(list(values), ensure_ascii=True).encode("ascii")).hexdigest()


def _path(locale: str, kind: str, faker: str | None, recipe: str | None, folder: Path | None) -> Path | None:
    """The cache file of a pool, or None when there is nowhere to keep it (no checkout, switch off, no Faker, no
    recipe digest)."""
    if faker is None or not recipe or os.environ.get(DISABLE_ENV) == "0":
        return None
    base = folder if folder is not None else CACHE_DIR
    if base is None:
        return None
    py = f"{sys.version_info[0]}{sys.version_info[1]}"
    return base / f"faker-{faker}-py{py}-{POOL_SEED}-{POOL_SIZE}-{recipe[:16]}" / f"{locale}-{kind}.json"


def _drawn_shape(values: object) -> bool:
    """True for what a draw gives: a non-empty list of distinct strings in sorted order."""
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        return False
    return all(a < b for a, b in zip(values, values[1:], strict=False))


def read(locale: str, kind: str, faker: str | None, recipe: str | None,
         folder: Path | None = None) -> tuple[str, ...] | None:
    """The cached pool, or None when absent or not exactly this Faker's, Python's, recipe's and kind's (never
    raises)."""
    path = _path(locale, kind, faker, recipe, folder)
    if path is None:
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        values = doc["values"]
        if doc["header"] != _header(locale, kind, faker, recipe or "") or not _drawn_shape(values):
            return None
        if doc["sha256"] != _digest(values):
            return None
        return tuple(values)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(locale: str, kind: str, faker: str | None, recipe: str | None, values: tuple[str, ...],
          folder: Path | None = None) -> bool:
    """Keep a pool drawn from Faker (atomically: a reader sees the old file or the whole new one); False when
    there is nowhere to write or the write failed (the run goes on: the cache only saves time)."""
    path = _path(locale, kind, faker, recipe, folder)
    if path is None or not _drawn_shape(list(values)):
        return False
    doc = {"header": _header(locale, kind, faker, recipe or ""), "sha256": _digest(values), "values": list(values)}
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".pool-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=True)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the file from workers of another user (Faker values only)
        os.replace(tmp, path)
        return True
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return False
