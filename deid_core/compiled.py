"""Compiled (Cython) engine modules: used only when their source is unchanged since they were built.

`./build.sh setup` (scripts/compile_modules.py) compiles the modules that pyproject.toml
[tool.deid.compiled] lists into build/compiled/<python tag>/, with a manifest of each source's
sha256. install() puts a finder first on sys.meta_path that loads a module's compiled file only
when the .py next to it still has that sha256: an edited module runs as Python (one log line
names it) and never as a stale build. No build, another Python or DEID_COMPILED=0: pure Python.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import logging
import os
import sys
import sysconfig
from pathlib import Path

log = logging.getLogger(__name__)

_PACKAGE_DIR = Path(__file__).resolve().parent
BUILD_DIR = _PACKAGE_DIR.parent / "build" / "compiled"  # a checkout's build/ (editable install)
MANIFEST = "manifest.json"


def build_tag() -> str:
    """The folder name of builds for this interpreter (its extension suffix, e.g. cpython-311-x86_64-linux-gnu)."""
    return (sysconfig.get_config_var("EXT_SUFFIX") or ".so").strip(".").rsplit(".", 1)[0]


def source_sha256(path: Path) -> str:
    """sha256 of a source file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


class CompiledFinder:
    """Meta path finder: a listed module's compiled file when its source hash matches, else nothing."""

    def __init__(self, folder: Path, modules: dict[str, dict[str, str]]) -> None:
        self.folder = folder
        self.modules = modules  # module name -> {"source": path under the package root, "sha256", "file"}
        self.active: list[str] = []  # modules whose compiled file was imported
        self.stale: list[str] = []  # sources changed since the build: imported as Python

    def find_spec(self, fullname: str, path=None, target=None):  # noqa: ANN001 - importlib protocol
        """The compiled module's spec, or None (the normal finders load the .py)."""
        entry = self.modules.get(fullname)
        if entry is None:
            return None
        source = _PACKAGE_DIR.parent / entry["source"]
        if not source.is_file() or source_sha256(source) != entry["sha256"]:
            self.stale.append(fullname)
            log.warning("%s changed since it was compiled: running it as Python (./build.sh setup recompiles)",
                        entry["source"])
            return None
        binary = self.folder / entry["file"]
        if not binary.is_file():
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(binary))
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=str(binary))
        spec.has_location = True
        self.active.append(fullname)
        return spec


_finder: CompiledFinder | None = None


def install(build_dir: Path = BUILD_DIR) -> CompiledFinder | None:
    """Put the finder for this interpreter's build first on sys.meta_path (once); None without a build."""
    global _finder
    if _finder is not None:
        return _finder
    if os.environ.get("DEID_COMPILED", "1") == "0":
        return None
    folder = build_dir / build_tag()
    try:
        modules = json.loads((folder / MANIFEST).read_text())["modules"]
    except (OSError, ValueError, KeyError):
        return None  # no build (no compiler, a wheel, another Python): pure Python
    _finder = CompiledFinder(folder, modules)
    sys.meta_path.insert(0, _finder)
    return _finder


def status() -> str:
    """One line for logs and benchmarks: how many engine modules run compiled."""
    if _finder is None:
        return "compiled modules: none (pure Python)"
    line = f"compiled modules: {len(_finder.active)}/{len(_finder.modules)} imported compiled"
    if _finder.stale:
        line += f", {len(_finder.stale)} changed since the build run as Python"
    return line
