"""Model bundles: a directory with bundle.json (id, versions, components, file digests) plus model files.

Integrity (issue 13.2): bundle.json lists every file of the bundle with its size and SHA-256
(`files`), and `load_bundle` refuses the bundle, naming the file, before anything reads it when a
file is missing, unlisted, of another size (truncated) or of other content (bit flips), or when
the bundle id does not match the files. Only files checked this way can be opened
(`Bundle.file`): a CRF model file is never handed to crfsuite unverified (a truncated model
crashes the process). The id is the SHA-256 over the model files (every file but bundle.json
and documentation, *.md); bundles written before digests existed are refused with the command
that adds them (`deid bundle add-digests DIR`, which first checks the files against the id).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deid_core.config import load_config

BUNDLE_FORMAT = 1
MANIFEST = "bundle.json"
_REPO_MODELS = Path(__file__).resolve().parent.parent / "models"
_PKG_MODELS = Path(__file__).resolve().parent / "models"
_CHUNK = 1 << 20


class BundleError(ValueError):
    """A bundle is missing, malformed, damaged or of incompatible versions (message names the file)."""


@dataclass(frozen=True)
class Bundle:
    """A loaded bundle's directory, manifest and the files whose digests were checked."""

    path: Path
    manifest: dict[str, Any]
    verified: frozenset[str] = frozenset()

    @property
    def id(self) -> str:
        """The bundle's content id (sha256 over its model files)."""
        return self.manifest["id"]

    def file(self, name: str) -> Path:
        """Path of a component file inside the bundle; only files checked against their digest."""
        if name not in self.verified:
            raise BundleError(f"model bundle file {self.path / name} is not listed with a digest in "
                              f"{self.path / MANIFEST}: it is not opened unchecked")
        return self.path / name


def named_bundle_path(name: str) -> Path:
    """The folder of the bundle `name` under models/ (the installed package's first, then the repository's)."""
    for base in (_PKG_MODELS, _REPO_MODELS):
        if (base / name / MANIFEST).is_file():
            return base / name
    raise BundleError(f"no model bundle {name!r}: {name}/{MANIFEST} is in neither {_PKG_MODELS} nor {_REPO_MODELS}")


def default_bundle_path() -> Path:
    """The bundle the project's configuration names ([model] bundle of conf/deidentify.toml), for callers with no config."""
    return named_bundle_path(load_config().model.bundle)


def easyadapt_trained(bundle: Bundle) -> bool:
    """Whether the bundle's CRF was trained with EasyAdapt domains (it has a target and a source feature copy)."""
    return bool(bundle.manifest.get("components", {}).get("crf", {}).get("easyadapt"))


def _bundle_files(path: Path) -> list[str]:
    """Relative names of every file of a bundle but bundle.json, sorted."""
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file() and p.name != MANIFEST)


def _in_id(name: str) -> bool:
    """Is the file part of the bundle id? Model files are; bundle.json and documentation are not."""
    return not name.endswith(".md")


def _digests(path: Path, names: list[str]) -> tuple[dict[str, dict[str, Any]], str]:
    """({name: {"bytes", "sha256"}}, content id) of the named files, read once, in name order."""
    ident = hashlib.sha256()
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        f = path / name
        h = hashlib.sha256()
        size = 0
        keep = _in_id(name)
        if keep:
            ident.update(name.encode() + b"\0")
        try:
            with open(f, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    h.update(chunk)
                    size += len(chunk)
                    if keep:
                        ident.update(chunk)
        except OSError as exc:
            raise BundleError(f"model bundle file {f} cannot be read: {exc.strerror or exc}") from None
        out[name] = {"bytes": size, "sha256": h.hexdigest()}
    return out, ident.hexdigest()


def content_id(path: Path) -> str:
    """sha256 over the bundle's model files (all but bundle.json and *.md), in name order."""
    return _digests(path, _bundle_files(path))[1]


def file_digests(path: Path) -> dict[str, dict[str, Any]]:
    """The `files` entry of bundle.json: size and sha256 of every file but bundle.json."""
    return _digests(path, _bundle_files(path))[0]


def _read_manifest(p: Path) -> dict[str, Any]:
    mf = p / MANIFEST
    if not mf.is_file():
        raise BundleError(f"{p} is not a model bundle: {MANIFEST} is missing")
    try:
        manifest = json.loads(mf.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BundleError(f"{mf} is not valid JSON: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != BUNDLE_FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise BundleError(f"{mf}: bundle format {got!r}, this engine reads {BUNDLE_FORMAT}")
    if "id" not in manifest:
        raise BundleError(f"{mf}: no 'id'")
    return manifest


def verify_files(p: Path, manifest: dict[str, Any]) -> frozenset[str]:
    """Check every file against bundle.json `files` and the id; the verified names (BundleError names a bad file)."""
    mf = p / MANIFEST
    listed = manifest.get("files")
    if not isinstance(listed, dict) or not listed:
        raise BundleError(f"{mf} has no per-file digests ('files'), so its files cannot be checked (a bundle written "
                          f"before integrity checks): run `deid bundle add-digests {p}` (it checks the files against "
                          "the bundle id first) or retrain it with `deid train`")
    present = _bundle_files(p)
    unlisted = [n for n in present if n not in listed]
    if unlisted:
        raise BundleError(f"model bundle file {p / unlisted[0]} is not listed in {mf} 'files' (an unexpected file)")
    missing = [n for n in sorted(listed) if n not in present]
    if missing:
        raise BundleError(f"model bundle file {p / missing[0]} is missing ({mf} lists it)")
    found, ident = _digests(p, present)
    for name in present:
        want, got = listed[name], found[name]
        if not isinstance(want, dict) or got["bytes"] != want.get("bytes"):
            raise BundleError(f"model bundle file {p / name} has {got['bytes']} bytes, {mf} says "
                              f"{want.get('bytes') if isinstance(want, dict) else want!r} (truncated or replaced): "
                              "copy the bundle again or retrain it")
        if got["sha256"] != want.get("sha256"):
            raise BundleError(f"model bundle file {p / name} does not match its SHA-256 in {mf} (corrupted or "
                              "modified): copy the bundle again or retrain it")
    if ident != manifest["id"]:
        raise BundleError(f"{mf}: bundle id {str(manifest['id'])[:12]} does not match its model files "
                          f"({ident[:12]}): the manifest was edited or belongs to other files; retrain the bundle")
    return frozenset(present)


def load_bundle(path: str | Path | None = None) -> Bundle:
    """Open a bundle directory (default bundle if None), check its format and every file's digest."""
    p = Path(path) if path else default_bundle_path()
    manifest = _read_manifest(p)
    return Bundle(p, manifest, verify_files(p, manifest))


def add_digests(path: str | Path) -> dict[str, Any]:
    """Write the `files` digests into an older bundle's bundle.json, once its files match its id."""
    p = Path(path)
    manifest = _read_manifest(p)
    files, ident = _digests(p, _bundle_files(p))
    if ident != manifest["id"]:
        raise BundleError(f"{p / MANIFEST}: bundle id {str(manifest['id'])[:12]} does not match the files "
                          f"({ident[:12]}): they cannot be vouched for; retrain the bundle with `deid train`")
    manifest["files"] = files
    (p / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def bundle_bytes(bundle: Bundle) -> bytes:
    """The bundle zipped in memory (deterministic order), to ship to executors."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in sorted(p for p in bundle.path.rglob("*") if p.is_file()):
            zf.write(f, str(f.relative_to(bundle.path)))
    return buf.getvalue()


def unpack_bundle(data: bytes, dest: Path) -> Bundle:
    """Unzip shipped bundle bytes into `dest` and load it (every file checked against its digest)."""
    dest.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        zf.extractall(dest)
    return load_bundle(dest)
