"""The Faker pool cache (deid_core/engine/surrogates/pool_cache.py): the same pools with or without it."""

from __future__ import annotations

import json

from deid_core.engine.surrogates import locations, pool_cache


def test_cached_pool_is_the_drawn_pool(tmp_path):
    drawn = locations.generate_pool("en_US", "street_name")
    faker, recipe = locations.faker_version(), locations.pool_recipe()
    assert pool_cache.read("en_US", "street_name", faker, recipe, tmp_path) is None  # nothing kept yet
    assert pool_cache.write("en_US", "street_name", faker, recipe, drawn, tmp_path)
    assert pool_cache.read("en_US", "street_name", faker, recipe, tmp_path) == drawn
    assert list(tmp_path.rglob("*.tmp")) == []  # written atomically, no temporary left
    path = next(tmp_path.rglob("en_US-street_name.json"))
    assert path.stat().st_mode & 0o044 == 0o044  # readable by workers of another user (review fix; mkstemp: 0600)


def test_value_pool_same_with_cache_as_drawn(monkeypatch, tmp_path):
    """value_pool reads the checkout's cache when there is one: the values are what Faker draws."""
    monkeypatch.setattr(pool_cache, "CACHE_DIR", tmp_path / "pools")
    locations.value_pool.cache_clear()
    try:
        first = locations.value_pool("en_US", "country")  # drawn, then kept
        assert list((tmp_path / "pools").rglob("en_US-country.json"))
        locations.value_pool.cache_clear()
        assert locations.value_pool("en_US", "country") == first == locations.generate_pool("en_US", "country")
    finally:
        locations.value_pool.cache_clear()


def test_edited_or_foreign_cache_reads_as_absent(tmp_path):
    faker, recipe = locations.faker_version(), locations.pool_recipe()
    values = ("Alphaville", "Betatown")
    assert pool_cache.write("en_US", "city", faker, recipe, values, tmp_path)
    path = next(tmp_path.rglob("en_US-city.json"))
    doc = json.loads(path.read_text())
    doc["values"][0] = "Gammaburg"  # edited values: the digest no longer matches
    path.write_text(json.dumps(doc))
    assert pool_cache.read("en_US", "city", faker, recipe, tmp_path) is None
    assert pool_cache.write("en_US", "city", faker, recipe, values, tmp_path)
    doc = json.loads(path.read_text())
    doc["header"]["kind"] = "company"  # another pool's file under this name
    path.write_text(json.dumps(doc))
    assert pool_cache.read("en_US", "city", faker, recipe, tmp_path) is None
    path.write_text("{not json")  # torn
    assert pool_cache.read("en_US", "city", faker, recipe, tmp_path) is None
    assert pool_cache.read("en_US", "city", "0.0.0-other", recipe, tmp_path) is None  # another Faker: another file


def test_switch_off_and_no_faker(monkeypatch, tmp_path):
    monkeypatch.setenv(pool_cache.DISABLE_ENV, "0")
    recipe = locations.pool_recipe()
    assert not pool_cache.write("en_US", "city", locations.faker_version(), recipe, ("Alphaville",), tmp_path)
    monkeypatch.delenv(pool_cache.DISABLE_ENV)
    assert not pool_cache.write("en_US", "city", None, recipe, ("Alphaville",), tmp_path)
    assert not pool_cache.write("en_US", "city", locations.faker_version(), None, ("Alphaville",), tmp_path)


# -- review fixes (round 19 review of replace19) ------------------------------------------------------------


def test_pool_drawn_by_other_code_reads_as_absent(monkeypatch, tmp_path):
    """A pool kept by older pool code (same Faker, Python, seed and size) is not served to newer code: the file
    header holds a digest of generate_pool's source (build/ is copied between checkouts with `cp -a`)."""
    monkeypatch.setattr(pool_cache, "CACHE_DIR", tmp_path / "pools")
    locations.value_pool.cache_clear()
    try:
        old = locations.value_pool("en_US", "country")  # drawn by today's code, then kept

        def generate_pool(locale: str, kind: str) -> tuple[str, ...]:  # tomorrow's recipe: another pool
            return ("Freedonia", "Sylvania")

        monkeypatch.setattr(locations, "generate_pool", generate_pool)
        locations.value_pool.cache_clear()
        assert locations.value_pool("en_US", "country") == ("Freedonia", "Sylvania") != old
    finally:
        locations.value_pool.cache_clear()


def test_wheel_next_to_the_build_package_keeps_nothing(tmp_path):
    """An installed wheel: ROOT is site-packages, which may hold pypa's `build` package (installed in this very
    venv): the cache must not write into it. A checkout (pyproject.toml, a plain build/) is used."""
    site = tmp_path / "site-packages"
    (site / "build").mkdir(parents=True)
    (site / "build" / "__init__.py").write_text("")
    assert pool_cache.checkout_cache(site) is None
    (site / "pyproject.toml").write_text("")  # even with a stray pyproject.toml: build/ is a package
    assert pool_cache.checkout_cache(site) is None
    checkout = tmp_path / "checkout"
    (checkout / "build").mkdir(parents=True)
    assert pool_cache.checkout_cache(checkout) is None  # no pyproject.toml: not a checkout
    (checkout / "pyproject.toml").write_text("")
    assert pool_cache.checkout_cache(checkout) == checkout / "build" / "surrogate-pools"


def test_degenerate_pool_reads_as_absent(tmp_path):
    """A header-valid file whose values are not what a draw gives (empty: rng.choice would raise; unsorted or
    repeated: another pick) reads as absent, and is never written."""
    faker, recipe = locations.faker_version(), locations.pool_recipe()
    assert pool_cache.write("en_US", "city", faker, recipe, ("Alphaville", "Betatown"), tmp_path)
    path = next(tmp_path.rglob("en_US-city.json"))
    for values in ([], ["Betatown", "Alphaville"], ["Alphaville", "Alphaville"]):
        doc = json.loads(path.read_text())
        doc["values"], doc["sha256"] = values, pool_cache._digest(values)
        path.write_text(json.dumps(doc))
        assert pool_cache.read("en_US", "city", faker, recipe, tmp_path) is None
        assert not pool_cache.write("en_US", "city", faker, recipe, tuple(values), tmp_path)


def test_recipe_is_the_imported_codes(monkeypatch):
    """The recipe is read at import: a source edited on disk during a long run (seen by a later getsource) must not
    label the pool the loaded code draws."""
    at_import = locations.pool_recipe()
    assert at_import is not None
    monkeypatch.setattr(locations.inspect, "getsource", lambda fn: "def generate_pool(locale, kind): ...\n")
    assert locations.pool_recipe() == at_import
