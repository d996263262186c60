"""Secret key handling and keyed digests (HMAC-SHA256); the key is never logged or written."""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path
from typing import Any

KEY_ENV_VAR = "DEID_KEY"
# Public, clearly labelled key for the demo and tests only: never use it on real data.
DEMO_KEY = b"DEMO-KEY-NOT-SECRET-do-not-use-on-real-data"


class KeyError_(ValueError):
    """No usable secret key was given (the message says how to give one)."""


def load_key(key_file: str | None = None, *, env_var: str = KEY_ENV_VAR, allow_demo: bool = False) -> bytes:
    """The secret key from `key_file`, else the environment variable, else the demo key if allowed."""
    if key_file:
        p = Path(key_file)
        if not p.is_file():
            raise KeyError_(f"--key-file {key_file}: no such file")
        key = p.read_bytes().strip()
        if len(key) < 16:
            raise KeyError_(f"--key-file {key_file}: the key must be at least 16 bytes")
        return key
    value = os.environ.get(env_var)
    if value:
        if len(value) < 16:
            raise KeyError_(f"${env_var}: the key must be at least 16 characters")
        return value.encode("utf-8")
    if allow_demo:
        return DEMO_KEY
    raise KeyError_(
        f"no secret key: pass --key-file FILE or set ${env_var} (at least 16 bytes); "
        "only the demo may run with the public demo key"
    )


PREPARED_MAX = 8  # keys whose HMAC state is kept (a process uses one or two; cleared past this)
_PREPARED: dict[bytes, Any] = {}  # key -> HMAC-SHA256 object that has absorbed the key and nothing else

try:  # CPython's OpenSSL HMAC object: copy, update and digest are C calls (hmac.HMAC wraps each in Python)
    from _hashlib import hmac_new as _openssl_hmac
except ImportError:  # another interpreter or a build without OpenSSL's HMAC: hmac.new below
    _openssl_hmac = None


def new_hmac_state(key: bytes, *, native: bool = True) -> Any:
    """An HMAC-SHA256 object that has absorbed `key` only: OpenSSL's own object when available (`native`),
    else hmac.new's. Both give the same bytes (tests/test_keys.py)."""
    if native and _openssl_hmac is not None:
        try:
            return _openssl_hmac(key, digestmod="sha256")
        except (ValueError, TypeError):  # e.g. an OpenSSL refusing it: the pure wrapper
            pass
    return hmac.new(key, digestmod=hashlib.sha256)


def _prepared(key: bytes) -> Any:
    """The HMAC-SHA256 state of `key` before any message: copied per digest, so the key's two
    padded blocks are hashed once per process instead of once per digest (same HMAC bytes)."""
    h = _PREPARED.get(key)
    if h is None:
        if len(_PREPARED) >= PREPARED_MAX:
            _PREPARED.clear()
        h = _PREPARED[key] = new_hmac_state(key)
    return h


def keyed_bytes(key: bytes, *parts: str) -> bytes:
    """HMAC-SHA256 of the parts (joined unambiguously) under `key`."""
    h = _prepared(key).copy()
    h.update("\x1f".join(parts).encode("utf-8", "surrogatepass"))
    return h.digest()


def keyed_digest(key: bytes, *parts: str) -> str:
    """Hex HMAC-SHA256 of the parts under `key`."""
    return keyed_bytes(key, *parts).hex()


# Hex digits written as their fullwidth forms (U+FF10-FF19, U+FF41-FF46): the same HMAC hex,
# but no ASCII original (an age "91", an initial "J") can ever occur inside a digest.
_FULLWIDTH_HEX = str.maketrans("0123456789abcdef", "".join(chr(0xFF10 + i) for i in range(10))
                               + "".join(chr(0xFF41 + i) for i in range(6)))
# The same mapping on UTF-16-BE bytes (each fullwidth digit is its ASCII digit + 0xFEE0: high byte 0x00 -> 0xFF,
# low byte - 0x20), one C pass instead of a dict lookup per character.
_FULLWIDTH_UTF16 = bytes.maketrans(b"\x000123456789abcdef",
                                   b"\xff" + bytes(range(0x10, 0x1A)) + bytes(range(0x41, 0x47)))


def audit_digest(key: bytes, patient_id: str, original: str) -> str:
    """The audit table's original_digest: HMAC-SHA256 hex of (patient, original) in fullwidth hex.

    unicodedata.normalize("NFKC", digest) gives the ordinary hex HMAC back, for verification.
    """
    hexed = keyed_bytes(key, patient_id, original).hex()
    return hexed.encode("utf-16-be").translate(_FULLWIDTH_UTF16).decode("utf-16-be")


def key_id(key: bytes) -> str:
    """A short public fingerprint of the key (for the manifest), not the key."""
    return hmac.new(key, b"deid-key-id", hashlib.sha256).hexdigest()[:12]
