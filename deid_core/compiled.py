"""Compiled (Cython) engine modules: used only when their sources are unchanged since they were built.

`./build.sh setup` (scripts/compile_modules.py) compiles the modules that pyproject.toml
[tool.deid.compiled] lists into build/compiled/<python tag>/, with a manifest of each module's
source hash: its .py (or package __init__.py, or a fast module's .pyx) and the .pxd next to it.
install() (run by `import deid_core`) puts a finder first on sys.meta_path that loads a module's
compiled file only while its sources still hash the same: an edited module runs as Python (one
log line names it) and never as a stale build; a fast .pyx module without a current build is not
importable, and its caller uses the Python reference. No build, another Python or DEID_COMPILED=0:
pure Python, same outputs.

DEID_COMPILED_SKIP=name,name (a measuring switch): those modules, and the modules of a package
named there (deid_core.engine.rules skips deid_core.engine.rules.*), load as Python even when
their build is current; status() names how many, and the names that match no built module (a typo
skips nothing). It times one module compiled against pure in
the same build (docs/BENCHMARKS.md "Round 17: which modules are compiled").
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import logging
import os
import sys
import sysconfig
import tomllib
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)

_PACKAGE_DIR = Path(__file__).resolve().parent
ROOT = _PACKAGE_DIR.parent  # the checkout (editable install) or site-packages
BUILD_DIR = ROOT / "build" / "compiled"  # a checkout's build/; a wheel has none: pure Python
MANIFEST = "manifest.json"
PYPROJECT = ROOT / "pyproject.toml"  # a checkout's list of compiled modules; a wheel has none (and no build)
SKIP_ENV = "DEID_COMPILED_SKIP"


def build_tag() -> str:
    """The folder name of builds for this interpreter (its extension suffix, e.g. cpython-311-x86_64-linux-gnu)."""
    return (sysconfig.get_config_var("EXT_SUFFIX") or ".so").strip(".").rsplit(".", 1)[0]


def module_source(name: str, root: Path = ROOT) -> Path:
    """The file Cython compiles for a module name: its .py, its package's __init__.py, or its .pyx."""
    base = root.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py", base.with_suffix(".pyx")):
        if path.is_file():
            return path
    return base.with_suffix(".py")  # missing: hashes as absent (stale)


def module_sources(name: str, root: Path = ROOT) -> list[Path]:
    """What a module's build depends on: its source and, when present, the .pxd next to it."""
    source = module_source(name, root)
    pxd = source.with_suffix(".pxd") if source.name != "__init__.py" else source.parent / "__init__.pxd"
    return [source, pxd] if pxd.is_file() else [source]


def sources_sha256(name: str, root: Path = ROOT) -> str:
    """sha256 over a module's source files (names relative to root, then bytes); '' when the source is missing."""
    h = hashlib.sha256()
    for path in module_sources(name, root):
        if not path.is_file():
            return ""
        data = path.read_bytes()
        h.update(f"{path.relative_to(root).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


def listed_modules(pyproject: Path = PYPROJECT) -> list[str] | None:
    """The module names pyproject.toml [tool.deid.compiled] lists; None without a pyproject.toml (installed)."""
    if not pyproject.is_file():
        return None
    try:
        return list(tomllib.loads(pyproject.read_text())["tool"]["deid"]["compiled"]["modules"])
    except (OSError, ValueError, KeyError, TypeError):
        return []  # an unreadable list compiles nothing: pure Python, same outputs


def skipped_names(value: str | None = None) -> tuple[str, ...]:
    """The module or package names DEID_COMPILED_SKIP lists (comma-separated; blanks ignored)."""
    raw = os.environ.get(SKIP_ENV, "") if value is None else value
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def is_skipped(name: str, skip: tuple[str, ...]) -> bool:
    """Whether a module is one of the skipped names or inside a skipped package."""
    return any(name == s or name.startswith(s + ".") for s in skip)


class _SourceFileExtensionLoader(importlib.machinery.ExtensionFileLoader):
    """Loads the build but gives the module its source's __file__ (modules find their data next to it)."""

    def __init__(self, fullname: str, path: str, source: Path) -> None:
        super().__init__(fullname, path)
        self.source = source

    def exec_module(self, module: ModuleType) -> None:
        """Run the module body with __file__ set to the .py it was compiled from."""
        module.__file__ = str(self.source)
        super().exec_module(module)


class CompiledFinder:
    """Meta path finder: a listed module's compiled file when its sources' hash matches, else nothing."""

    def __init__(self, folder: Path, modules: dict[str, dict[str, str]], root: Path = ROOT,
                 skip: tuple[str, ...] = (), unlisted: tuple[str, ...] = ()) -> None:
        self.folder = folder
        self.unlisted = sorted(unlisted)  # built, but off pyproject's list since: loaded as Python
        self.root = root
        self.modules = modules  # module name -> {"sources": [...], "sha256", "file"}
        self.skipped = sorted(m for m in modules if is_skipped(m, skip))  # DEID_COMPILED_SKIP: loaded as Python
        self.unmatched = [s for s in skip if not any(is_skipped(m, (s,)) for m in modules)]  # typos: status() names them
        self.active: list[str] = []  # modules whose compiled file was imported
        self.stale: list[str] = []  # sources changed since the build: imported as Python (or not at all)

    def find_spec(self, fullname: str, path=None, target=None):  # noqa: ANN001 - importlib protocol
        """The compiled module's spec, or None (the normal finders load the .py)."""
        entry = self.modules.get(fullname)
        if entry is None or fullname in self.skipped:
            return None
        binary = self.folder / entry["file"]
        if sources_sha256(fullname, self.root) != entry["sha256"]:
            if fullname not in self.stale:
                self.stale.append(fullname)
                log.warning("%s changed since it was compiled: running it as Python (./build.sh setup recompiles)",
                            module_source(fullname, self.root).relative_to(self.root).as_posix())
            return None
        if not binary.is_file():
            return None
        source = module_source(fullname, self.root)
        loader = _SourceFileExtensionLoader(fullname, str(binary), source)
        package = source.name == "__init__.py"
        spec = importlib.machinery.ModuleSpec(fullname, loader, origin=str(binary), is_package=package)
        if package:
            spec.submodule_search_locations = [str(source.parent)]
        spec.has_location = True
        if fullname not in self.active:
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
    listed = listed_modules(build_dir.parent.parent / PYPROJECT.name)
    unlisted = () if listed is None else tuple(name for name in modules if name not in listed)
    # a module taken off the list runs as Python at once, not only after the next setup rewrites the manifest
    modules = {name: entry for name, entry in modules.items() if name not in unlisted}
    _finder = CompiledFinder(folder, modules, skip=skipped_names(), unlisted=unlisted)
    sys.meta_path.insert(0, _finder)
    return _finder


def is_compiled(module: ModuleType) -> bool:
    """Whether a module was loaded from a compiled build (not its .py)."""
    spec = module.__spec__
    return spec is not None and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)


def status() -> str:
    """One line for logs and benchmarks: how many listed modules have a current build, how many run compiled."""
    if _finder is None:
        why = "DEID_COMPILED=0" if os.environ.get("DEID_COMPILED", "1") == "0" else "no build"
        return f"compiled modules: none, pure Python ({why})"
    current = sum(1 for name, entry in _finder.modules.items()
                  if (_finder.folder / entry["file"]).is_file() and sources_sha256(name, _finder.root) == entry["sha256"])
    line = f"compiled modules: {current}/{len(_finder.modules)} built and current"
    if _finder.active:  # before the engine is imported (`deid --version`, the job's driver) there is no count to give
        line += f", {len(_finder.active)} imported compiled"
    if _finder.skipped:
        line += f", {len(_finder.skipped)} skipped ({SKIP_ENV}) run as Python"
    if _finder.unmatched:
        line += f", {SKIP_ENV} names no built module: {','.join(_finder.unmatched)}"
    if _finder.stale:
        line += f", {len(_finder.stale)} changed since the build run as Python"
    if _finder.unlisted:
        line += f", {len(_finder.unlisted)} off the list since the build run as Python"
    return line
