"""Build dist/ for spark-submit: the project wheel, a packed environment, the job script, the bundles.

    python scripts/package.py [--out dist] [--python-prefix /usr] [--no-env]

Why a packed environment: the engine needs native extensions (regex, python-crfsuite,
pyahocorasick, google-re2, pyarrow) on every executor; --py-files only ships pure-Python zips, so the job
ships a whole virtualenv (venv-pack) with --archives and points spark.pyspark.python into it.
The environment holds the wheel installed non-editable (conf/ and models/ inside) and its
dependencies except pyspark, which executors take from their Spark installation.
The result is cached under build/package-cache/<hash of the sources> and reused when unchanged.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "deid_core", "udfs", "jobs", "conf", "models")
ENV_NAME = "deid-env.tar.gz"
SHIPPED_BUNDLES = ("default", "physionet")  # setup.py DATA_DIRS' models/ (tests/test_model_bundle.py checks both agree)


def source_hash(python_prefix: str | None = None) -> str:
    """sha256 over every packaged source file (and the target python prefix)."""
    h = hashlib.sha256(f"{sys.version_info[:2]}|{python_prefix}".encode())
    for name in SOURCES:
        p = ROOT / name
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file()
                                               and "__pycache__" not in f.parts and f.suffix != ".pyc")
        for f in files:
            h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def run(cmd: list[str], **kw) -> None:
    """Run a command, failing loudly."""
    print("  $ " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)


def build_wheel(dest: Path) -> Path:
    """The project wheel (conf/ and models/ inside, see setup.py) and a check that they are."""
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("deid_spark-*.whl"):
        old.unlink()
    # setuptools reuses build/lib: files of an older layout (top-level udfs/, jobs/) would ship again
    shutil.rmtree(ROOT / "build" / "lib", ignore_errors=True)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dest), str(ROOT)])
    wheel = next(dest.glob("deid_spark-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("deid_core/conf/taxonomy.toml", "deid_core/conf/deidentify.toml",
                   *(f"deid_core/models/{b}/bundle.json" for b in SHIPPED_BUNDLES), "deid_spark/udfs/deidentify.py",
                   "deid_spark/jobs/deidentify.py"):
        if needed not in names:
            raise SystemExit(f"package: {wheel.name} lacks {needed}")
    return wheel


def runtime_requirements() -> list[str]:
    """The project's dependencies minus pyspark (executors bring their own Spark)."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in deps if not d.replace("-", "_").lower().startswith("pyspark")]


def build_env(wheel: Path, out: Path, work: Path, python_prefix: str | None) -> Path:
    """A fresh venv with the wheel and its runtime dependencies, packed with venv-pack."""
    import venv_pack

    env = work / "venv"
    shutil.rmtree(env, ignore_errors=True)
    venv.EnvBuilder(with_pip=True, symlinks=True).create(env)
    py = str(env / "bin" / "python")
    clean = {"cwd": str(work), "env": {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}}
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    run(pip + runtime_requirements(), **clean)
    run(pip + ["--no-deps", str(wheel)], **clean)
    run([py, "-c", "import deid_core.config as c, deid_core.bundle as b, deid_spark.udfs.deidentify; "
                   "assert 'site-packages' in str(c.conf_dir()), c.conf_dir(); "
                   f"[b.load_bundle(b.named_bundle_path(n)) for n in {SHIPPED_BUNDLES!r}]"], **clean)
    target = out / ENV_NAME
    venv_pack.pack(prefix=str(env), output=str(target), force=True, compress_level=1,
                   python_prefix=python_prefix)
    return target


def main(argv: list[str] | None = None) -> int:
    """Build (or reuse from the cache) dist/: wheel, deid-env.tar.gz, deidentify.py, bundle zip."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "dist"), help="output folder (default dist/)")
    ap.add_argument("--python-prefix", help="where Python lives on the executors, if not where it lives here "
                                            "(venv-pack rewrites the interpreter link)")
    ap.add_argument("--no-env", action="store_true", help="only the wheel, script and bundle")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from deid_core.bundle import bundle_bytes, load_bundle, named_bundle_path

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    key = source_hash(a.python_prefix)
    cache = ROOT / "build" / "package-cache" / key
    print(f"==> packaging (source hash {key})")
    if not (cache / ENV_NAME).is_file() or a.no_env:
        wheel = build_wheel(cache)
        if not a.no_env:
            build_env(wheel, cache, ROOT / "build" / "package-work", a.python_prefix)
    else:
        print(f"  reusing {cache}")
    for f in cache.iterdir():
        if f.is_file():
            shutil.copy2(f, out / f.name)
    shutil.copy2(ROOT / "jobs" / "deidentify.py", out / "deidentify.py")
    for name in SHIPPED_BUNDLES:
        bundle = load_bundle(named_bundle_path(name))
        (out / f"bundle-{name}-{bundle.id[:12]}.zip").write_bytes(bundle_bytes(bundle))
    for f in sorted(out.iterdir()):
        print(f"  {f.relative_to(out.parent) if f.is_relative_to(out.parent) else f}  "
              f"({f.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
