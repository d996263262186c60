"""Build hook: put the top-level conf/ and models/default/ inside the wheel as deid_core/conf and deid_core/models/default.

deid_core.config.conf_dir() and deid_core.bundle.default_bundle_path() look there first, so an
installed (non-editable) wheel, e.g. the packed environment on Spark executors, finds its
configuration and default model bundle without the checkout. All metadata is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

DATA_DIRS = ("conf", "models/default")  # only the default bundle ships: a user's own models/ stay out


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


setup(cmdclass={"build_py": BuildPyWithData})
