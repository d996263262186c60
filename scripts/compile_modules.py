"""Compile the engine modules pyproject.toml [tool.deid.compiled] lists with Cython (unchanged .py sources).

    python scripts/compile_modules.py            # what ./build.sh setup runs
    python scripts/compile_modules.py --clean    # remove this Python's build (pure Python again)

Writes build/compiled/<tag>/<module>.so and manifest.json (module -> source path, sha256, file);
deid_core.compiled loads a module's .so only while its source still has that sha256. The manifest
is written last and only when every module compiled: no compiler or no Cython means no manifest,
one line, exit 0, and the engine runs as pure Python with the same outputs.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from deid_core.compiled import BUILD_DIR, MANIFEST, build_tag, source_sha256  # noqa: E402

# Cython reads annotations as Python only: with annotation typing, `x: dict = defaultdict()` refuses a defaultdict.
DIRECTIVES = ["-X", "annotation_typing=False", "-X", "language_level=3"]


def listed_modules(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """The module names [tool.deid.compiled] modules lists."""
    return list(tomllib.loads(pyproject.read_text())["tool"]["deid"]["compiled"]["modules"])


def _compile_one(name: str, folder: Path, cc: list[str]) -> dict[str, str]:
    """Cythonize and compile one module into folder; its manifest entry."""
    rel = Path(*name.split(".")).with_suffix(".py")
    source = ROOT / rel
    c_file = folder / "c" / (name + ".c")
    so_file = name + sysconfig.get_config_var("EXT_SUFFIX")
    subprocess.run([sys.executable, "-m", "cython", *DIRECTIVES, "--module-name", name,
                    "-o", str(c_file), str(source)], check=True, capture_output=True, text=True)
    include = sysconfig.get_paths()["include"]
    subprocess.run([*cc, "-shared", "-fPIC", "-O2", "-fwrapv", "-DNDEBUG", f"-I{include}",
                    str(c_file), "-o", str(folder / so_file)], check=True, capture_output=True, text=True)
    return {"source": str(rel), "sha256": source_sha256(source), "file": so_file}


def build(modules: list[str], jobs: int) -> int:
    """Compile the modules; 0 also when compiling is impossible (pure Python then)."""
    folder = BUILD_DIR / build_tag()
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "c").mkdir(parents=True)
    try:
        import Cython  # noqa: F401
    except ImportError:
        print("compile_modules: Cython is not installed: the engine runs as pure Python")
        return 0
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            entries = dict(zip(modules, pool.map(lambda m: _compile_one(m, folder, cc), modules), strict=True))
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = (getattr(exc, "stderr", "") or str(exc)).strip().splitlines()[-1:] or [""]
        print(f"compile_modules: cannot compile ({detail[0][:200]}): the engine runs as pure Python")
        shutil.rmtree(folder, ignore_errors=True)
        return 0
    (folder / MANIFEST).write_text(json.dumps({"modules": entries}, indent=1, sort_keys=True) + "\n")
    print(f"compile_modules: {len(entries)} modules compiled into {folder.relative_to(ROOT)}")
    return 0


def main(argv: list[str]) -> int:
    """Compile the listed modules, or --clean."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--clean", action="store_true", help="remove this Python's compiled modules")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    if args.clean:
        shutil.rmtree(BUILD_DIR / build_tag(), ignore_errors=True)
        return 0
    return build(listed_modules(), args.jobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
