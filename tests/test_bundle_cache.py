"""The bench's bundle cache: what its digest reads of conf/."""

from __future__ import annotations

import hashlib
import shutil

from deid_core.config import conf_dir
from deid_core.training.bundle_cache import CONF_SKIP, _tree


def _digest(conf) -> str:
    h = hashlib.sha256()
    _tree(h, conf, skip=CONF_SKIP)
    return h.hexdigest()


def test_conf_is_hashed_wherever_the_checkout_lives(tmp_path):
    """Skipped folders are conf/'s own (conf/spark, conf/recipes...): a checkout under a folder named
    like one of them (…/spark/conf) still hashes conf/rules, so a rule edit is not served a stale bundle."""
    for home in ("ok", "spark", "recipes"):
        conf = tmp_path / home / "conf"
        shutil.copytree(conf_dir(), conf)
        before = _digest(conf)
        rule = next((conf / "rules").glob("*.toml"))
        rule.write_text(rule.read_text() + "\n# edited\n")
        assert _digest(conf) != before, home
        spark = next((conf / "spark").rglob("*.*"))
        changed = _digest(conf)
        spark.write_text(spark.read_text() + "\n# edited\n")
        assert _digest(conf) == changed, home  # conf/spark shapes no bundle
