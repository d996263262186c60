"""The compiled path (deid_core.compiled, scripts/compile_modules.py): same spans as pure Python, never stale.

Real builds, real subprocesses: the checkout's build (./build.sh setup / test compile it first) against
DEID_COMPILED=0; a temporary checkout with an edited module (it runs as Python, one log line); a build
with CC=/bin/false (no manifest, pure Python, exit 0); Spark local-mode workers loading the build.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from deid_core import compiled

ROOT = Path(__file__).resolve().parent.parent
PROBE = ROOT / "tests" / "compiled_probe.py"
DEV_NOTES = 200
BUILD = compiled.BUILD_DIR / compiled.build_tag()


def _built() -> bool:
    return (BUILD / compiled.MANIFEST).is_file() and os.environ.get("DEID_COMPILED", "1") != "0"


needs_build = pytest.mark.skipif(not _built(), reason="no compiled build (no Cython or compiler): pure Python only")


def probe(dev: Path, n: int, root: Path = ROOT, **env: str) -> tuple[dict, str]:
    """Run tests/compiled_probe.py with `root` first on sys.path; (its JSON, its stderr)."""
    full = {k: v for k, v in os.environ.items() if k != "DEID_COMPILED"}
    full.update(PYTHONPATH=str(root), PYTHONHASHSEED="0", **env)
    done = subprocess.run([sys.executable, str(PROBE), str(dev), str(n)], cwd=root, env=full,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout), done.stderr


@pytest.fixture(scope="module")
def pure_run(physionet_dir):
    """Sample notes + 200 dev notes, pure Python (DEID_COMPILED=0)."""
    out, _ = probe(physionet_dir, DEV_NOTES, DEID_COMPILED="0")
    assert out["status"].startswith("compiled modules: none") and not any(out["compiled"].values())
    return out


def temp_checkout(tmp: Path, with_build: bool) -> Path:
    """A checkout in tmp: deid_core and scripts copied (editable), build/ copied or absent, the rest linked."""
    for entry in ROOT.iterdir():
        if entry.name in {".git", ".venv", "out", "build", "deid_core", "scripts", "pyproject.toml"}:
            continue
        (tmp / entry.name).symlink_to(entry)
    shutil.copytree(ROOT / "deid_core", tmp / "deid_core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "scripts", tmp / "scripts", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    if with_build:
        shutil.copytree(BUILD, tmp / "build" / "compiled" / compiled.build_tag(), ignore=shutil.ignore_patterns("c"))
    return tmp


@needs_build
def test_compiled_and_pure_give_identical_spans(physionet_dir, pure_run):
    """The sample (golden) notes and 200 dev notes: the same spans, labels and replacements, compiled or not;
    the engine modules really ran compiled, the typed scorer included."""
    out, err = probe(physionet_dir, DEV_NOTES)
    assert out["file"].startswith(str(ROOT))
    assert all(out["compiled"].values()), out["compiled"]
    assert "built and current" in out["status"] and "changed since" not in out["status"]
    assert "changed since it was compiled" not in err
    assert len(out["notes"]) == 48 + DEV_NOTES
    assert out["notes"] == pure_run["notes"]


@needs_build
def test_an_edited_module_runs_as_python_never_stale(physionet_dir, pure_run, tmp_path):
    """In a copy of the checkout, an edited .py, a .pxd added next to another and two edited .pyx: each runs as
    Python (the .pyx's caller uses its numpy reference), with one log line naming it; same spans."""
    tmp = temp_checkout(tmp_path, with_build=True)
    crf = tmp / "deid_core" / "engine" / "crf"
    with open(crf / "labels.py", "a") as fh:
        fh.write("\n# edited after the build\n")
    (crf / "scorer.pxd").write_text("# declarations added after the build\n")
    for fast in ("_scorer_fast.pyx", "_emissions_fast.pyx"):
        with open(crf / fast, "a") as fh:
            fh.write("\n# edited after the build\n")
    out, err = probe(physionet_dir, 20, root=tmp)
    assert out["file"].startswith(str(tmp))
    assert out["compiled"]["deid_core.engine.crf.labels"] is False
    assert out["compiled"]["deid_core.engine.crf.scorer"] is False
    assert out["compiled"]["deid_core.engine.crf._scorer_fast"] is None  # not importable: numpy reference
    assert out["compiled"]["deid_core.engine.crf._emissions_fast"] is None
    assert out["compiled"]["deid_core.engine.pipeline"] is True  # the unchanged modules still run compiled
    assert "4 changed since the build run as Python" in out["status"]
    warned = [line for line in err.splitlines() if "changed since it was compiled" in line]
    assert sorted(w.split()[0] for w in warned) == ["deid_core/engine/crf/_emissions_fast.pyx",
                                                    "deid_core/engine/crf/_scorer_fast.pyx",
                                                    "deid_core/engine/crf/labels.py",
                                                    "deid_core/engine/crf/scorer.py"]
    assert out["notes"] == pure_run["notes"][: 48 + 20]


def test_no_compiler_means_no_manifest_and_pure_python(physionet_dir, pure_run, tmp_path):
    """CC=/bin/false: one line, exit 0, no manifest; the checkout then runs as pure Python, same spans."""
    pytest.importorskip("Cython")
    tmp = temp_checkout(tmp_path, with_build=False)
    text = (tmp / "pyproject.toml").read_text()
    start = text.index("\n[tool.deid.compiled]\n") + 1
    end = text.index("]", text.index("modules = [", start)) + 1
    (tmp / "pyproject.toml").write_text(text[:start] + '[tool.deid.compiled]\nmodules = ["deid_core.engine.crf.labels", '
                                        '"deid_core.engine.crf._scorer_fast"]' + text[end:])
    done = subprocess.run([sys.executable, str(tmp / "scripts" / "compile_modules.py")], cwd=tmp,
                          env={**os.environ, "CC": "/bin/false"}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().count("\n") == 0 and "cannot compile" in done.stdout
    assert "pure Python" in done.stdout
    assert not (tmp / "build" / "compiled" / compiled.build_tag() / compiled.MANIFEST).exists()
    out, err = probe(physionet_dir, 20, root=tmp)
    assert out["status"] == "compiled modules: none, pure Python (no build)"
    assert not any(out["compiled"].values())
    assert out["notes"] == pure_run["notes"][: 48 + 20]


def test_version_and_status_name_the_compiled_modules():
    """`deid --version` says how many modules are built and current (or that none are)."""
    done = subprocess.run([str(Path(sys.executable).parent / "deid"), "--version"], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    line = done.stdout.strip()
    assert done.returncode == 0 and line.startswith("deid-spark ") and "compiled modules:" in line
    assert ("built and current" in line) == _built()


@needs_build
def test_spark_local_workers_import_the_compiled_modules(spark):
    """A local-mode Python worker loads the build too (the scorer's typed loops included)."""

    def where(_):
        from deid_core import compiled as worker_compiled
        from deid_core.engine.crf import scorer

        yield (worker_compiled.is_compiled(scorer), scorer._scorer_fast is not None, worker_compiled.status())

    rows = spark.sparkContext.parallelize(range(2), 2).mapPartitions(where).collect()
    assert rows and all(c and fast and "built and current" in status for c, fast, status in rows), rows


class _Text(str):
    """A str subclass, as numpy.str_ is (notes read through numpy or pandas string arrays)."""


def test_str_subclass_note_text_gives_the_spans_of_its_str() -> None:
    """Typed code (a .pxd) declaring the note's text `str` made Cython reject str subclasses (TypeError: Expected
    str, got numpy.str_: the note failed) where pure Python tags them: here both run as this process does
    (compiled when built, see test_typed_rule_and_feature_modules_run_compiled_here)."""
    import numpy as np

    from deid_core.bundle_choice import resolve_bundle
    from deid_core.config import load_config
    from deid_core.engine.pipeline import build_deidentifier
    from deid_core.notes import Note

    config = load_config()
    deid = build_deidentifier(config, resolve_bundle(config, None), b"compiled-probe-key-not-secret-00")
    ascii_text = "Seen by Dr. John Smith on 03/14/2091 at Mercy Hospital, Boston, MA 02118. MRN 1234567.\n"
    for text in (ascii_text, ascii_text + "\u0130lker \u00d6zt\u00fcrk, 12 Main St\u00a0Apt 4.\n"):
        plain, *subs = deid.process_many([Note("a", text), Note("a", np.str_(text)), Note("a", _Text(text))])
        assert plain.error_class is None and plain.spans
        for got in subs:
            assert got.error_class is None
            assert got.spans == plain.spans


@needs_build
def test_typed_rule_and_feature_modules_run_compiled_here() -> None:
    """With a build, this test process imports the typed modules compiled (the test above then checks them)."""
    import importlib

    for name in ("deid_core.engine.rules.tagger", "deid_core.engine.rules.triggers",
                 "deid_core.engine.crf.doc_families", "deid_core.engine.crf.emissions"):
        assert compiled.is_compiled(importlib.import_module(name)), name


def test_a_module_taken_off_the_list_leaves_the_manifest(tmp_path, monkeypatch) -> None:
    """Deleting a module's line in [tool.deid.compiled] withdraws its build: the next compile_modules run rewrites
    the manifest without it (it returned 'up to date' before, and the finder kept loading the delisted build)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("compile_modules", ROOT / "scripts" / "compile_modules.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "BUILD_DIR", tmp_path)
    folder = tmp_path / compiled.build_tag()
    folder.mkdir()
    kept, dropped = "deid_core.engine.crf.labels", "deid_core.engine.crf._scorer_fast"
    entries = {}
    for name in (kept, dropped):  # both current: their sources' hashes and a file each
        (folder / f"{name}.so").write_bytes(b"")
        entries[name] = {"sources": [], "sha256": compiled.sources_sha256(name), "file": f"{name}.so"}
    (folder / compiled.MANIFEST).write_text(json.dumps({"modules": entries}))
    assert script.build([kept], jobs=1) == 0
    assert list(json.loads((folder / compiled.MANIFEST).read_text())["modules"]) == [kept]


@needs_build
def test_a_module_taken_off_the_list_runs_as_python_before_the_next_setup(physionet_dir, pure_run, tmp_path) -> None:
    """A checkout whose pyproject.toml no longer lists a module (a pull, no setup since) loads that module as
    Python at once: the finder reads the list, not only the manifest (which still names the build); same spans."""
    tmp = temp_checkout(tmp_path, with_build=True)
    text = (tmp / "pyproject.toml").read_text()
    line = '    "deid_core.engine.pipeline",\n'
    assert line in text
    (tmp / "pyproject.toml").write_text(text.replace(line, ""))
    assert "deid_core.engine.pipeline" in json.loads(
        (tmp / "build" / "compiled" / compiled.build_tag() / compiled.MANIFEST).read_text())["modules"]
    out, _ = probe(physionet_dir, 20, root=tmp)
    assert out["compiled"]["deid_core.engine.pipeline"] is False
    assert out["compiled"]["deid_core.engine.crf.labels"] is True  # the listed modules still run compiled
    assert "1 off the list since the build run as Python" in out["status"]
    assert out["notes"] == pure_run["notes"][: 48 + 20]


def test_listed_modules_reads_pyproject_and_refuses_nothing_silently(tmp_path) -> None:
    """No pyproject.toml (an installed wheel): None, nothing filtered; a list: its names; no table: an empty list
    (nothing runs compiled, which gives the same outputs)."""
    assert compiled.listed_modules(tmp_path / "pyproject.toml") is None
    (tmp_path / "pyproject.toml").write_text('[tool.deid.compiled]\nmodules = ["a.b", "c"]\n')
    assert compiled.listed_modules(tmp_path / "pyproject.toml") == ["a.b", "c"]
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert compiled.listed_modules(tmp_path / "pyproject.toml") == []


def test_a_second_build_waits_for_the_first(tmp_path) -> None:
    """Two builds in one checkout run one after the other: compile_modules waits on the build lock (two at once
    wrote the same .c and .so.tmp files and could install a broken module that the manifest called current)."""
    import fcntl

    tmp = temp_checkout(tmp_path, with_build=False)
    lock_dir = tmp / "build" / "compiled"
    lock_dir.mkdir(parents=True)
    env = {**os.environ, "CC": "/bin/false", "PYTHONPATH": str(tmp)}
    with open(lock_dir / f"{compiled.build_tag()}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a build in progress
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run([sys.executable, str(tmp / "scripts" / "compile_modules.py"), "--clean"], cwd=tmp,
                           env=env, capture_output=True, timeout=5)
    done = subprocess.run([sys.executable, str(tmp / "scripts" / "compile_modules.py"), "--clean"], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_skip_names_parse_and_cover_a_package_and_its_modules() -> None:
    """DEID_COMPILED_SKIP: comma-separated names, blanks ignored; a package name covers its modules, not look-alikes."""
    skip = compiled.skipped_names(" deid_core.engine.rules, ,deid_core.doc ")
    assert skip == ("deid_core.engine.rules", "deid_core.doc")
    assert compiled.is_skipped("deid_core.engine.rules", skip)
    assert compiled.is_skipped("deid_core.engine.rules.tagger", skip)
    assert compiled.is_skipped("deid_core.doc", skip)
    assert not compiled.is_skipped("deid_core.docs", skip)
    assert not compiled.is_skipped("deid_core.engine.rules_extra", skip)
    assert compiled.skipped_names("") == ()


@needs_build
def test_skipped_modules_load_as_python_and_status_says_so() -> None:
    """With DEID_COMPILED_SKIP a current build is not loaded for the skipped modules (the others still are), and
    compiled.status() says how many were skipped."""
    code = ("import json, importlib\nfrom deid_core import compiled\n"
            "names = ['deid_core.engine.rules.tagger', 'deid_core.engine.crf.labels', 'deid_core.doc']\n"
            "mods = {n: compiled.is_compiled(importlib.import_module(n)) for n in names}\n"
            "print(json.dumps({'mods': mods, 'status': compiled.status()}))\n")
    env = {k: v for k, v in os.environ.items() if k != "DEID_COMPILED"}
    env.update(PYTHONPATH=str(ROOT), DEID_COMPILED_SKIP="deid_core.engine.rules,deid_core.doc")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["mods"] == {"deid_core.engine.rules.tagger": False, "deid_core.engine.crf.labels": True,
                           "deid_core.doc": False}
    listed = json.loads((BUILD / compiled.MANIFEST).read_text())["modules"]
    n_skipped = sum(1 for m in listed if compiled.is_skipped(m, ("deid_core.engine.rules", "deid_core.doc")))
    assert n_skipped >= 2 and f"{n_skipped} skipped (DEID_COMPILED_SKIP) run as Python" in out["status"]
    assert "changed since" not in out["status"]


def test_skip_names_that_match_no_listed_module_are_reported() -> None:
    """A DEID_COMPILED_SKIP typo (or a module off the list) skips nothing: the finder keeps those names for
    status(), so an A/B run does not silently compare the build with itself."""
    entry = {"sources": [], "sha256": "", "file": "x.so"}
    finder = compiled.CompiledFinder(Path("."), {"deid_core.doc": entry, "deid_core.engine.rules.tagger": entry},
                                     skip=("deid_core.engine.rules", "deid_core.engine.merge", "deid_core.docs"))
    assert finder.skipped == ["deid_core.engine.rules.tagger"]
    assert finder.unmatched == ["deid_core.engine.merge", "deid_core.docs"]
