"""The Faker pool cache (deid_core/engine/surrogates/pool_cache.py): the same pools with or without it."""

from __future__ import annotations

import json

from deid_core.engine.surrogates import locations, pool_cache


def test_cached_pool_is_the_drawn_pool(tmp_path):
    drawn = locations.generate_pool("en_US", "street_name")
    faker = locations.faker_version()
    assert pool_cache.read("en_US", "street_name", faker, tmp_path) is None  # nothing kept yet
    assert pool_cache.write("en_US", "street_name", faker, drawn, tmp_path)
    assert pool_cache.read("en_US", "street_name", faker, tmp_path) == drawn
    assert list(tmp_path.rglob("*.tmp")) == []  # written atomically, no temporary left


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
    faker = locations.faker_version()
    values = ("Alphaville", "Betatown")
    assert pool_cache.write("en_US", "city", faker, values, tmp_path)
    path = next(tmp_path.rglob("en_US-city.json"))
    doc = json.loads(path.read_text())
    doc["values"][0] = "Gammaburg"  # edited values: the digest no longer matches
    path.write_text(json.dumps(doc))
    assert pool_cache.read("en_US", "city", faker, tmp_path) is None
    assert pool_cache.write("en_US", "city", faker, values, tmp_path)
    doc = json.loads(path.read_text())
    doc["header"]["kind"] = "company"  # another pool's file under this name
    path.write_text(json.dumps(doc))
    assert pool_cache.read("en_US", "city", faker, tmp_path) is None
    path.write_text("{not json")  # torn
    assert pool_cache.read("en_US", "city", faker, tmp_path) is None
    assert pool_cache.read("en_US", "city", "0.0.0-other", tmp_path) is None  # another Faker: another file


def test_switch_off_and_no_faker(monkeypatch, tmp_path):
    monkeypatch.setenv(pool_cache.DISABLE_ENV, "0")
    assert not pool_cache.write("en_US", "city", locations.faker_version(), ("Alphaville",), tmp_path)
    monkeypatch.delenv(pool_cache.DISABLE_ENV)
    assert not pool_cache.write("en_US", "city", None, ("Alphaville",), tmp_path)
