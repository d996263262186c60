"""[tagging] domain: which EasyAdapt feature copy tagging adds."""

from __future__ import annotations

import pytest

from deid_core.config import conf_dir, load_config, load_toml
from deid_core.engine.crf.features import easyadapt
from deid_core.engine.crf.tagger import easyadapt_domain

EA = {"easyadapt": True, "target_domain": "T"}


def test_domain_choice_picks_the_feature_copy():
    assert easyadapt_domain(EA, "target") == "T"
    assert easyadapt_domain(EA, "source") == "S"
    assert easyadapt_domain(EA, "general") == ""
    assert easyadapt_domain({"easyadapt": False}, "source") == ""  # plain bundles have one copy
    assert easyadapt([["w=x"]], "S") == [["w=x", "S|w=x"]]


def test_unknown_domain_is_a_clear_error():
    with pytest.raises(ValueError, match=r"\[tagging\] domain must be one of target, source, general"):
        easyadapt_domain(EA, "physionet")


def test_physionet_profile_tags_with_the_target_copy():
    crf = load_config(config_file=conf_dir() / "profiles" / "physionet.toml").crf
    assert crf.tagging.domain == "target"
    assert crf.tagging.marginal_threshold == load_config().crf.tagging.marginal_threshold
    assert load_toml(conf_dir() / "crf.toml")["tagging"]["domain"] == "source"
