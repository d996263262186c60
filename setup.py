"""Build hook: the installed package names, and conf/ and the shipped bundles inside the wheel.

Installed names: deid_core (the engine) and deid_spark.udfs / deid_spark.jobs for the
repository's udfs/ and jobs/ folders (DESIGN.md §3 fixes the folders; the wheel must not
install top-level packages named `udfs` or `jobs`). The code imports them by those names
everywhere, so a driver and its executors agree whether they run a checkout (editable install)
or the wheel. deid_spark is a namespace package: it has no __init__.py.

conf/, models/default/ and models/physionet/ (the physionet profile's bundle) go inside the built
deid_core package as deid_core/conf and deid_core/models/<name>: deid_core.config.conf_dir() and
deid_core.bundle.named_bundle_path() look there first, so an installed (non-editable) wheel, e.g.
the packed environment on Spark executors, finds its configuration and the bundles a [model]
bundle names without the checkout. All other
metadata is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

DATA_DIRS = ("conf", "models/default", "models/physionet")  # the shipped bundles only: a user's own models/ stay out
SPARK_PACKAGES = {"deid_spark.udfs": "udfs", "deid_spark.jobs": "jobs"}  # installed name -> repository folder


class BuildPyWithData(build_py):
    """build_py that also copies conf/ and models/ into the built deid_core package."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads conf/ and models/ from the checkout
        root = Path(__file__).resolve().parent
        for name in DATA_DIRS:
            src = root / name
            if src.is_dir():
                shutil.copytree(src, Path(self.build_lib) / "deid_core" / name, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(
    packages=find_packages(include=["deid_core", "deid_core.*"]) + list(SPARK_PACKAGES),
    package_dir=SPARK_PACKAGES,
    cmdclass={"build_py": BuildPyWithData},
)
