"""Compile the engine modules pyproject.toml [tool.deid.compiled] lists with Cython.

    python scripts/compile_modules.py            # what ./build.sh setup runs (only what changed)
    python scripts/compile_modules.py --clean    # remove this Python's build (pure Python again)

A listed module is a .py (the same source runs pure or compiled; a .pxd next to it may declare C
types) or a fast .pyx module whose callers keep a Python reference. Writes build/compiled/<tag>/
<module>.so and manifest.json (module -> sources, their sha256, file); deid_core.compiled loads a
module's build only while its sources still hash the same. Modules whose build is current are
kept; the others compile in parallel, one per core. The manifest is written last: no compiler or
no Cython means no manifest, one line, exit 0, and the engine runs as pure Python with the same
outputs; a module that alone fails to compile is left out of it (it runs as Python).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deid_core.compiled import (  # noqa: E402
    BUILD_DIR,
    MANIFEST,
    build_tag,
    listed_modules,
    module_source,
    module_sources,
    sources_sha256,
)

# Cython reads annotations as Python only: with annotation typing, `x: dict = defaultdict()` refuses a
# defaultdict. Typed code declares its C types in a .pxd or a .pyx instead.
DIRECTIVES = ["-X", "annotation_typing=False", "-X", "language_level=3"]
# Portable code (Spark workers may be other machines of the same architecture): no -march=native.
CFLAGS = ["-shared", "-fPIC", "-O2", "-fwrapv", "-fno-strict-aliasing", "-DNDEBUG"]


def _compile_one(name: str, folder: Path, cc: list[str]) -> dict:
    """Cythonize and compile one module into folder; its manifest entry."""
    source = module_source(name)
    digest = sources_sha256(name)  # before compiling: an edit meanwhile makes the build stale, not wrong
    c_file = folder / "c" / (name + ".c")
    so_file = name + sysconfig.get_config_var("EXT_SUFFIX")
    tmp = folder / (so_file + ".tmp")
    extra = []
    if source.suffix == ".pyx":  # typed C loops: let gcc vectorize them (-O3), still portable code
        extra = ["-O3"]
    subprocess.run([sys.executable, "-m", "cython", *DIRECTIVES, "--module-name", name,
                    "-o", str(c_file), str(source)], check=True, capture_output=True, text=True)
    include = sysconfig.get_paths()["include"]
    subprocess.run([*cc, *CFLAGS, f"-I{include}", *extra, str(c_file), "-o", str(tmp)],
                   check=True, capture_output=True, text=True)
    tmp.replace(folder / so_file)
    return {"sources": [p.relative_to(ROOT).as_posix() for p in module_sources(name)],
            "sha256": digest, "file": so_file}


def _current(folder: Path, modules: list[str]) -> dict[str, dict]:
    """Entries of the existing manifest whose sources and build are unchanged."""
    try:
        old = json.loads((folder / MANIFEST).read_text())["modules"]
    except (OSError, ValueError, KeyError):
        return {}
    return {m: old[m] for m in modules if m in old and (folder / old[m]["file"]).is_file()
            and old[m]["sha256"] == sources_sha256(m)}


def _listed_in_manifest(folder: Path) -> list[str]:
    """The modules the existing manifest names (the finder loads those)."""
    try:
        return list(json.loads((folder / MANIFEST).read_text())["modules"])
    except (OSError, ValueError, KeyError):
        return []


def _why(exc: BaseException) -> str:
    """The last line of a failed command's error output (or the exception), for one log line."""
    lines = (getattr(exc, "stderr", "") or str(exc)).strip().splitlines()
    return (lines[-1] if lines else type(exc).__name__)[:200]


def build(modules: list[str], jobs: int) -> int:
    """Compile the modules whose build is not current; 0 also when compiling is impossible (pure Python)."""
    folder = BUILD_DIR / build_tag()
    kept = _current(folder, modules)
    todo = [m for m in modules if m not in kept]
    if not todo and (folder / MANIFEST).is_file():
        if set(_listed_in_manifest(folder)) != set(kept):  # a module taken off the list: withdraw its build
            (folder / MANIFEST).write_text(json.dumps({"modules": kept}, indent=1, sort_keys=True) + "\n")
            print(f"compile_modules: manifest rewritten for the {len(kept)} listed modules")
        return 0  # up to date: nothing to say
    try:
        import Cython  # noqa: F401
    except ImportError:
        shutil.rmtree(folder, ignore_errors=True)
        print("compile_modules: Cython is not installed: the engine runs as pure Python")
        return 0
    (folder / MANIFEST).unlink(missing_ok=True)  # no manifest while the folder changes
    (folder / "c").mkdir(parents=True, exist_ok=True)
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    start = time.monotonic()

    def attempt(name: str) -> dict | BaseException:
        try:
            return _compile_one(name, folder, cc)
        except (OSError, subprocess.CalledProcessError) as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = dict(zip(todo, pool.map(attempt, todo), strict=True))
    failed = {m: r for m, r in results.items() if isinstance(r, BaseException)}
    entries = {**kept, **{m: r for m, r in results.items() if not isinstance(r, BaseException)}}
    if len(failed) == len(todo) and not kept:
        first = next(iter(failed.values()))
        print(f"compile_modules: cannot compile ({_why(first)}): the engine runs as pure Python")
        shutil.rmtree(folder, ignore_errors=True)
        return 0
    if failed:
        print(f"compile_modules: {len(failed)} modules failed to compile and run as Python: "
              f"{', '.join(sorted(failed))} (first error: {_why(next(iter(failed.values())))})")
    (folder / MANIFEST).write_text(json.dumps({"modules": entries}, indent=1, sort_keys=True) + "\n")
    print(f"compile_modules: {len(results) - len(failed)} modules compiled, {len(kept)} unchanged, into "
          f"{folder.relative_to(ROOT)} ({time.monotonic() - start:.0f} s, {max(1, jobs)} jobs)")
    return 0


def main(argv: list[str]) -> int:
    """Compile the listed modules, or --clean."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clean", action="store_true", help="remove this Python's compiled modules")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compilers (default: cores)")
    args = ap.parse_args(argv)
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    # One build at a time per interpreter: two builds (e.g. `./build.sh test` beside `./build.sh bench`) would
    # write the same .c and .so.tmp files and could install a broken module the manifest calls current.
    with open(BUILD_DIR / f"{build_tag()}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if args.clean:
            shutil.rmtree(BUILD_DIR / build_tag(), ignore_errors=True)
            return 0
        return build(listed_modules() or [], args.jobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
