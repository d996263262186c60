"""Which model bundle a run uses (the Spark job, `deid tag`, the library): the one place that decides.

`--bundle DIR` (the library's bundle=) wins; else the configuration's [model] bundle, a name under
models/ (conf/deidentify.toml: "default"; a profile may name its own, e.g. "physionet"). The bundle
is loaded with every file checked (deid_core.bundle), and a configuration that tags with the
EasyAdapt target copy ([crf.tagging] domain = "target") is refused on a bundle trained without
domains (it would tag like the pooled bundle, silently). Errors are BundleError (a ValueError:
one line, exit 2) raised before any work.
"""

from __future__ import annotations

import os

from deid_core.bundle import Bundle, BundleError, easyadapt_trained, load_bundle, named_bundle_path
from deid_core.config import Config


def resolve_bundle(config: Config, given: str | os.PathLike | Bundle | None = None) -> Bundle:
    """The run's bundle, loaded and checked: `given` (--bundle DIR, a loaded Bundle) wins over [model] bundle."""
    if isinstance(given, Bundle):
        bundle = given
    elif given is not None:
        if not str(given).strip():  # an empty --bundle is a mistake, not the default bundle
            raise BundleError("the model bundle folder is empty (--bundle / bundle=): name a folder, or leave it "
                              "out for the configuration's [model] bundle")
        bundle = load_bundle(given)
    else:
        name = config.model.bundle
        try:
            path = named_bundle_path(name)
        except BundleError as exc:
            raise BundleError(f"{config.origin('model', 'bundle')}: [model] bundle = {name!r}: {exc} "
                              "(give --bundle DIR or install that bundle)") from None
        bundle = load_bundle(path)
    check_domain(config, bundle)
    return bundle


def check_domain(config: Config, bundle: Bundle) -> None:
    """Refuse [crf.tagging] domain = "target" on a bundle without EasyAdapt domains (names the setting's file)."""
    if config.crf.tagging.domain == "target" and "crf" in config.pipeline.stages and not easyadapt_trained(bundle):
        raise BundleError(f"{config.origin('crf', 'tagging', 'domain')}: [crf.tagging] domain = \"target\" needs a "
                          f"bundle trained with EasyAdapt (`deid train ... --easyadapt on`, e.g. models/physionet); "
                          f"bundle {bundle.path} ({bundle.id[:12]}) has no target domain")
