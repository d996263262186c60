"""Model bundles: a directory with bundle.json (id, versions, components) plus model files."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUNDLE_FORMAT = 1
_REPO_MODELS = Path(__file__).resolve().parent.parent / "models"
_PKG_MODELS = Path(__file__).resolve().parent / "models"


class BundleError(ValueError):
    """A bundle is missing, malformed or of incompatible versions (message says which)."""


@dataclass(frozen=True)
class Bundle:
    """A loaded bundle's directory and manifest."""

    path: Path
    manifest: dict[str, Any]

    @property
    def id(self) -> str:
        """The bundle's content id (sha256 over its files)."""
        return self.manifest["id"]

    def file(self, name: str) -> Path:
        """Path of a component file inside the bundle."""
        return self.path / name


def default_bundle_path() -> Path:
    """The default bundle shipped with the project (models/default)."""
    for base in (_PKG_MODELS, _REPO_MODELS):
        if (base / "default" / "bundle.json").is_file():
            return base / "default"
    raise BundleError(f"default model bundle not found under {_REPO_MODELS} or {_PKG_MODELS}")


def content_id(path: Path) -> str:
    """sha256 over every file of the bundle but bundle.json, in name order."""
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file() and p.name != "bundle.json"):
        h.update(str(f.relative_to(path)).encode())
        h.update(b"\0")
        h.update(f.read_bytes())
    return h.hexdigest()


def load_bundle(path: str | Path | None = None) -> Bundle:
    """Open a bundle directory (default bundle if None) and check its format."""
    p = Path(path) if path else default_bundle_path()
    mf = p / "bundle.json"
    if not mf.is_file():
        raise BundleError(f"{p} is not a model bundle: bundle.json is missing")
    try:
        manifest = json.loads(mf.read_text())
    except json.JSONDecodeError as exc:
        raise BundleError(f"{mf} is not valid JSON: {exc}") from None
    if manifest.get("format") != BUNDLE_FORMAT:
        raise BundleError(f"{mf}: bundle format {manifest.get('format')!r}, this engine reads {BUNDLE_FORMAT}")
    if "id" not in manifest:
        raise BundleError(f"{mf}: no 'id'")
    return Bundle(p, manifest)


def bundle_bytes(bundle: Bundle) -> bytes:
    """The bundle zipped in memory (deterministic order), to ship to executors."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(p for p in bundle.path.rglob("*") if p.is_file()):
            zf.write(f, str(f.relative_to(bundle.path)))
    return buf.getvalue()


def unpack_bundle(data: bytes, dest: Path) -> Bundle:
    """Unzip shipped bundle bytes into `dest` and load it."""
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        zf.extractall(dest)
    return load_bundle(dest)
