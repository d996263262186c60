"""Bundle integrity (issue 13.2): a damaged model bundle is refused before any note, naming the file.

Real damaged copies of the default bundle (truncated model, truncated clusters, one flipped bit,
a missing or an extra file, an edited id, no digests) through the real command lines in
subprocesses: exit code 2, one line on stderr naming the file, no crash, no output written.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from deid_core.bundle import (
    BundleError,
    bundle_bytes,
    default_bundle_path,
    load_bundle,
    unpack_bundle,
)
from tests.helpers_job import NAME_COLUMNS, SAMPLES

ROOT = Path(__file__).resolve().parent.parent
MODEL = "crf-single.crfsuite"


def copy_default(tmp_path: Path) -> Path:
    dst = tmp_path / "bundle"
    shutil.copytree(default_bundle_path(), dst)
    return dst


def truncate(path: Path, keep: int) -> None:
    path.write_bytes(path.read_bytes()[:keep])


def flip_bit(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))


def edit_manifest(bundle: Path, change) -> None:
    mf = bundle / "bundle.json"
    manifest = json.loads(mf.read_text())
    change(manifest)
    mf.write_text(json.dumps(manifest))


def run_cli(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, timeout=600)


def deid_tag(bundle: Path, out: Path) -> subprocess.CompletedProcess:
    return run_cli(["-m", "deid_core.app.cli", "tag", "--input", str(SAMPLES), "--output", str(out),
                    "--name-columns", NAME_COLUMNS, "--demo-key", "--bundle", str(bundle)])


def assert_refused(res: subprocess.CompletedProcess, out: Path, names: str) -> None:
    """Exit 2 (not a signal), exactly one line on stderr naming the file, nothing written."""
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert len(lines) == 1, res.stderr
    assert names in lines[0], lines[0]
    assert not out.exists()


DAMAGE = {
    "truncated model": (lambda b: truncate(b / MODEL, 1000), MODEL),
    "truncated clusters": (lambda b: truncate(b / "clusters.tsv", 5000), "clusters.tsv"),
    "bit-flipped model": (lambda b: flip_bit(b / MODEL), MODEL),
    "missing model": (lambda b: (b / MODEL).unlink(), MODEL),
    "extra file": (lambda b: (b / "extra.bin").write_bytes(b"x"), "extra.bin"),
    "edited id": (lambda b: edit_manifest(b, lambda m: m.__setitem__("id", "0" * 64)), "bundle id"),
    "no digests": (lambda b: edit_manifest(b, lambda m: m.pop("files")), "deid bundle add-digests"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_deid_tag_refuses_a_damaged_bundle(damage, tmp_path):
    bundle = copy_default(tmp_path)
    make, names = DAMAGE[damage]
    make(bundle)
    assert_refused(deid_tag(bundle, tmp_path / "out"), tmp_path / "out", names)


@pytest.mark.parametrize("damage", ["truncated model", "bit-flipped model"])
def test_the_job_refuses_a_damaged_bundle_before_spark(damage, tmp_path):
    bundle = copy_default(tmp_path)
    make, names = DAMAGE[damage]
    make(bundle)
    res = run_cli(["jobs/deidentify.py", "--input", str(SAMPLES), "--output", str(tmp_path / "out"),
                   "--name-columns", NAME_COLUMNS, "--demo-key", "--bundle", str(bundle)])
    assert_refused(res, tmp_path / "out", names)


def test_the_intact_default_bundle_loads_with_every_file_checked():
    bundle = load_bundle()
    assert bundle.verified == {"README.md", "clusters.tsv", MODEL}
    assert set(bundle.manifest["files"]) == set(bundle.verified)
    assert bundle.file(MODEL).is_file()
    with pytest.raises(BundleError, match="not opened unchecked"):
        bundle.file("other.crfsuite")


def test_a_truncated_model_is_refused_by_its_header_even_without_a_bundle(tmp_path):
    # crfsuite itself crashes on this file: run in a child so a crash would fail the test, not kill it
    model = tmp_path / "m.crfsuite"
    model.write_bytes((default_bundle_path() / MODEL).read_bytes()[:5000])
    code = ("import pycrfsuite, sys; from pathlib import Path; from deid_core.bundle import BundleError\n"
            "from deid_core.engine.crf.versions import open_model\n"
            f"try:\n    open_model(pycrfsuite.Tagger(), Path({str(model)!r}))\n"
            "except BundleError as e:\n    print(e); sys.exit(2)\n")
    res = run_cli(["-c", code])
    assert res.returncode == 2 and "not a whole crfsuite model" in res.stdout, (res.returncode, res.stderr)


def test_workers_check_the_shipped_bundle(tmp_path):
    data = bundle_bytes(load_bundle())
    assert unpack_bundle(data, tmp_path / "ok").id == load_bundle().id
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w") as dst:
        for item in src.infolist():
            body = src.read(item)
            dst.writestr(item, body[:1000] if item.filename == MODEL else body)
    with pytest.raises(BundleError, match=MODEL):
        unpack_bundle(buf.getvalue(), tmp_path / "bad")


def test_add_digests_upgrades_an_older_bundle_only_when_its_files_match_its_id(tmp_path):
    from deid_core.bundle import add_digests

    bundle = copy_default(tmp_path)
    edit_manifest(bundle, lambda m: m.pop("files"))
    with pytest.raises(BundleError, match="add-digests"):
        load_bundle(bundle)
    res = run_cli(["-m", "deid_core.app.cli", "bundle", "add-digests", str(bundle)])
    assert res.returncode == 0, res.stderr
    assert load_bundle(bundle).id == load_bundle().id
    edit_manifest(bundle, lambda m: m.pop("files"))
    flip_bit(bundle / "clusters.tsv")
    with pytest.raises(BundleError, match="does not match the files"):
        add_digests(bundle)
    res = run_cli(["-m", "deid_core.app.cli", "bundle", "verify", str(bundle)])
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
