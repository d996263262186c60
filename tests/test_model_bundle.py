"""[model] bundle: a configuration (profile) names the bundle it runs with; --bundle / bundle= wins.

`deid tag`, the Spark job and the library resolve it in one place (deid_core/bundle_choice.py) and
so pick the same bundle for the same config; a missing named bundle, or [crf.tagging] domain =
"target" on a bundle trained without EasyAdapt, stops before any work (one line, exit 2). The
shipped physionet profile runs with models/physionet, which the package carries. Invented notes.
"""

from __future__ import annotations

import ast
import datetime as dt
import importlib.util
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deid_core.app.api import deidentify_table
from deid_core.app.cli import main as deid_main
from deid_core.bundle import (
    BundleError,
    default_bundle_path,
    easyadapt_trained,
    load_bundle,
    named_bundle_path,
)
from deid_core.bundle_choice import resolve_bundle
from deid_core.config import ConfigError, conf_dir, load_config
from tests.helpers_job import ROOT, read_rows

PROFILE = conf_dir() / "profiles" / "physionet.toml"
TEXT = ("Pt Zebulon Quackenbush, 93 yo, seen by Dr. Ottoline Ferrars on 3/14/2019; "
        "call 555-201-3344 with questions. Family from Kettering.")


@pytest.fixture(scope="module")
def notes(tmp_path_factory):
    """One invented note with its name columns, as a Parquet file."""
    path = tmp_path_factory.mktemp("in") / "in.parquet"
    pq.write_table(pa.Table.from_pylist([{"note_id": "n1", "patient_id": "p1", "text": TEXT,
                                          "note_date": dt.date(2024, 2, 3), "first": "Zebulon",
                                          "last": "Quackenbush"}]), path)
    return path


def _tag(notes, out, *extra: str) -> int:
    return deid_main(["tag", "--input", str(notes), "--output", str(out), "--name-columns", "first,last",
                      "--demo-key", *extra])


def _job(notes, out, *extra: str) -> int:
    from deid_spark.jobs.deidentify import main

    return main(["--input", str(notes), "--output", str(out), "--name-columns", "first,last", "--demo-key", *extra])


def _one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_model_table_default_and_checks():
    assert load_config().model.bundle == "default"
    assert load_config(config_file=PROFILE).model.bundle == "physionet"
    with pytest.raises(ConfigError, match=r"\[model\] bundle = '\.\./default' is not accepted"):
        load_config({"model": {"bundle": "../default"}})
    with pytest.raises(ConfigError, match=r"\[model\] unknown key 'bundel'"):
        load_config({"model": {"bundel": "physionet"}})


def test_resolution_order():
    """No --bundle: the config's [model] bundle; --bundle DIR (or a loaded Bundle) wins over it."""
    assert resolve_bundle(load_config()).path == default_bundle_path()
    profile = load_config(config_file=PROFILE)
    own = resolve_bundle(profile)
    assert own.path == named_bundle_path("physionet") and easyadapt_trained(own)
    assert resolve_bundle(load_config(), named_bundle_path("physionet")).id == own.id
    assert resolve_bundle(profile, own) is own
    assert not easyadapt_trained(resolve_bundle(load_config()))


def test_shipped_physionet_bundle_is_the_recipe_with_easyadapt():
    """models/physionet: every file checked, EasyAdapt, the default bundle's notes (its recipe `previous`; the
    default bundle's is the configuration's [model] recipe, since round 14 `previous` plus breadth overlays), its license."""
    phys, default = load_bundle(named_bundle_path("physionet")), load_bundle(default_bundle_path())
    crf = phys.manifest["components"]["crf"]
    assert crf["easyadapt"] is True and crf.get("target_domain", "T") == "T"
    pt, dt_ = phys.manifest["training"], default.manifest["training"]
    assert pt["recipe_name"] == "previous" and dt_["recipe_name"] == load_config().model.recipe == "breadth12b"
    assert pt["notes"] == dt_["notes"]
    assert pt["target_corpus"] == dt_["target_corpus"] and pt["domains"] == dt_["domains"]
    assert phys.manifest["versions"] == default.manifest["versions"]
    readme = (phys.path / "README.md").read_text()
    assert "--easyadapt on" in readme and "GPL-2.0" in readme and phys.id[:12] in readme


def test_deid_tag_job_and_library_pick_the_profiles_bundle(notes, tmp_path, spark):
    """Same config, same bundle: `deid tag`, the Spark job and deidentify_table; no config: the default."""
    from deid_core.app.options import run_options
    from deid_core.app.runner import load_key_and_bundle
    from deid_spark.jobs.deidentify import build_parser, run_job

    phys_id, default_id = load_bundle(named_bundle_path("physionet")).id, load_bundle(default_bundle_path()).id
    assert _tag(notes, tmp_path / "tag", "--config", str(PROFILE)) == 0
    assert _tag(notes, tmp_path / "tag-default") == 0
    args = build_parser().parse_args(["--input", str(notes), "--output", str(tmp_path / "job"), "--config",
                                      str(PROFILE), "--name-columns", "first,last", "--demo-key"])
    options = run_options(args)
    job = run_job(spark, args, options, *load_key_and_bundle(options))
    lib = deidentify_table(pq.read_table(notes), key=b"k" * 32, name_columns="first,last", config=PROFILE)
    manifests = {k: json.loads((tmp_path / k / "_manifest.json").read_text()) for k in ("tag", "tag-default")}
    assert manifests["tag"]["bundle_id"] == job["bundle_id"] == lib.manifest["bundle_id"] == phys_id
    assert manifests["tag-default"]["bundle_id"] == default_id != phys_id
    spans = {(r["start"], r["end"], r["label"]) for r in read_rows(tmp_path / "tag" / "spans")}
    assert spans == {(r["start"], r["end"], r["label"]) for r in read_rows(tmp_path / "job" / "spans")}


def test_missing_named_bundle_is_a_one_line_usage_error(notes, tmp_path, capsys):
    conf = tmp_path / "mine.toml"
    conf.write_text('[model]\nbundle = "no-such-bundle"\n')
    assert _tag(notes, tmp_path / "tag", "--config", str(conf)) == 2
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("deid tag: error:") and str(conf) in line and "[model] bundle = 'no-such-bundle'" in line
    assert _job(notes, tmp_path / "job", "--config", str(conf)) == 2  # before Spark starts
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("deidentify: error:") and "[model] bundle = 'no-such-bundle'" in line
    assert not (tmp_path / "tag").exists() and not (tmp_path / "job").exists()
    with pytest.raises(BundleError, match="no-such-bundle"):
        deidentify_table(pq.read_table(notes), key=b"k" * 32, config={"model": {"bundle": "no-such-bundle"}})


def test_stages_built_without_a_bundle_resolve_the_configurations():
    """The engine's stage factories, given no bundle, take [model] bundle (not models/default)."""
    from deid_core.engine.pipeline import build_deidentifier

    with pytest.raises(BundleError, match="no-such-bundle"):
        build_deidentifier(load_config({"model": {"bundle": "no-such-bundle"}}), None, b"k" * 32)


def test_target_domain_on_a_pooled_bundle_is_refused(notes, tmp_path, capsys):
    """The profile with --bundle models/default would tag like the pooled bundle: refused, naming the file."""
    args = ("--config", str(PROFILE), "--bundle", str(default_bundle_path()))
    assert _tag(notes, tmp_path / "tag", *args) == 2
    line = _one_line(capsys.readouterr().err)
    assert str(PROFILE) in line and '[crf.tagging] domain = "target"' in line and "--easyadapt on" in line
    assert str(default_bundle_path()) in line
    assert _job(notes, tmp_path / "job", *args) == 2
    assert '[crf.tagging] domain = "target"' in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "tag").exists() and not (tmp_path / "job").exists()
    # the rules alone do not use the bundle: no reason to refuse it
    assert _tag(notes, tmp_path / "rules", *args, "--stages", "rules") == 0
    # an engine built from a loaded bundle (library, evaluation) is refused the same way
    from deid_core.engine.pipeline import build_deidentifier

    with pytest.raises(BundleError, match="--easyadapt on"):
        build_deidentifier(load_config(config_file=PROFILE), load_bundle(default_bundle_path()), b"k" * 32)


def test_an_empty_bundle_option_is_a_usage_error_not_the_default(notes, tmp_path, capsys):
    assert _tag(notes, tmp_path / "tag", "--bundle", "") == 2
    assert "--bundle" in _one_line(capsys.readouterr().err)
    assert _job(notes, tmp_path / "job", "--bundle", "") == 2
    assert "--bundle" in _one_line(capsys.readouterr().err)
    assert not (tmp_path / "tag").exists() and not (tmp_path / "job").exists()


def test_package_ships_every_named_bundle_of_a_shipped_profile():
    """setup.py DATA_DIRS, MANIFEST.in and scripts/package.py agree, and cover every [model] bundle of conf/."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    data_dirs = next(ast.literal_eval(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)
                     and any(isinstance(t, ast.Name) and t.id == "DATA_DIRS" for t in n.targets))
    spec = importlib.util.spec_from_file_location("deid_package_script", ROOT / "scripts" / "package.py")
    package = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(package)
    shipped = {d.split("/", 1)[1] for d in data_dirs if d.startswith("models/")}
    assert shipped == set(package.SHIPPED_BUNDLES) == {"default", "physionet"}
    grafts = {ln.split()[1] for ln in (ROOT / "MANIFEST.in").read_text().splitlines() if ln.startswith("graft ")}
    assert {f"models/{b}" for b in shipped} <= grafts
    named = {load_config().model.bundle} | {load_config(config_file=p).model.bundle
                                            for p in (conf_dir() / "profiles").glob("*.toml")}
    assert named <= shipped
    for name in shipped:
        load_bundle(named_bundle_path(name))
