import hashlib
import hmac
import string
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deid_core import keys
from deid_core.keys import (
    DEMO_KEY,
    KeyError_,
    audit_digest,
    key_id,
    keyed_bytes,
    keyed_digest,
    load_key,
)


def test_audit_digest_is_the_keyed_hmac_in_fullwidth_hex():
    d = audit_digest(DEMO_KEY, "p1", "Healey")
    assert len(d) == 64
    assert unicodedata.normalize("NFKC", d) == keyed_digest(DEMO_KEY, "p1", "Healey")
    assert audit_digest(DEMO_KEY, "p2", "Healey") != d
    assert audit_digest(b"another-key-0123456789", "p1", "Healey") != d


def _one_shot(key: bytes, *parts: str) -> bytes:
    return hmac.digest(key, "\x1f".join(parts).encode("utf-8", "surrogatepass"), hashlib.sha256)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=16, max_size=80), st.text(max_size=6), st.text(max_size=8))
def test_prepared_hmac_is_the_one_shot_hmac(key, patient, original):
    # the key's prepared state is copied per digest: a second digest under the same key is not
    # the first one's state continued, and lone surrogates hash as before (surrogatepass)
    for parts in ((patient, original), (original,), (patient, original + "\ud800")):
        assert keyed_bytes(key, *parts) == _one_shot(key, *parts)
        assert keyed_bytes(key, *parts) == _one_shot(key, *parts)
    expected = _one_shot(key, patient, original).hex().translate(keys._FULLWIDTH_HEX)
    assert audit_digest(key, patient, original) == expected


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=16, max_size=80), st.text(max_size=8))
def test_native_and_wrapped_hmac_states_give_the_same_bytes(key, text):
    # keyed_bytes copies OpenSSL's HMAC object when CPython has it; hmac.new's wrapper is the fallback
    msg = text.encode("utf-8", "surrogatepass")
    for native in (True, False):
        h = keys.new_hmac_state(key, native=native).copy()
        h.update(msg)
        assert h.digest() == hmac.digest(key, msg, hashlib.sha256)


def test_the_native_hmac_state_is_used_where_cpython_has_it():
    if keys._openssl_hmac is None:
        pytest.skip("no _hashlib.hmac_new in this interpreter")
    assert not isinstance(keys.new_hmac_state(DEMO_KEY), hmac.HMAC)


def test_prepared_keys_are_bounded():
    for i in range(keys.PREPARED_MAX * 3):
        key = f"a key of sixteen bytes or more {i}".encode()
        assert keyed_bytes(key, "p", "x") == _one_shot(key, "p", "x")
        assert len(keys._PREPARED) <= keys.PREPARED_MAX


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=string.printable, min_size=1, max_size=4), st.text(max_size=6))
def test_no_ascii_original_ever_occurs_inside_its_digest(original, patient):
    # short digit and hex-letter strings (ages "91", initials "a") collide with plain hex ~1 time in 4
    assert original not in audit_digest(DEMO_KEY, patient, original)


def test_load_key_sources(tmp_path, monkeypatch):
    monkeypatch.delenv("DEID_KEY", raising=False)
    with pytest.raises(KeyError_, match="--key-file"):
        load_key(None)
    assert load_key(None, allow_demo=True) == DEMO_KEY
    f = tmp_path / "k"
    f.write_bytes(b"0123456789abcdef-secret\n")
    assert load_key(str(f)) == b"0123456789abcdef-secret"
    f.write_bytes(b"short")
    with pytest.raises(KeyError_, match="16 bytes"):
        load_key(str(f))
    monkeypatch.setenv("DEID_KEY", "env-key-0123456789")
    assert load_key(None) == b"env-key-0123456789"
    assert key_id(DEMO_KEY) != key_id(b"env-key-0123456789") and len(key_id(DEMO_KEY)) == 12
