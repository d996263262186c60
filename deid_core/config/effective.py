"""The effective configuration: conf/ files, then --config FILE, then overrides, checked into one typed Config.

Layers, later ones merged over earlier ones (tables recursively):
conf/deidentify.toml, conf/crf.toml (as [crf]), conf/surrogates.toml ([surrogates]),
--config FILE, command-line overrides. Every key must be present after merging (the conf/
files define them all: they are the only defaults); unknown keys, wrong types and values
outside what a key accepts raise ConfigError naming the layer that holds the value, the
[table] and key, and what is accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from deid_core.config.convert import SchemaError, build, fields_of
from deid_core.config.crf import CrfSettings
from deid_core.config.files import ConfigError, conf_file, deep_merge, digest, load_toml
from deid_core.config.surrogates import Surrogates
from deid_core.config.tables import (
    Job,
    Merge,
    ModelChoice,
    NameNet,
    Pipeline,
    Registry,
    Rules,
    Testing,
)

OVERRIDES = "command-line options"
CONFIG_ARGUMENT = "the config argument"  # tables passed to deidentify(config={...})
T = TypeVar("T")


@dataclass(frozen=True)
class Layer:
    """One source of configuration: its name in messages, its tables, where its tables sit."""

    name: str
    tables: Mapping[str, Any]
    prefix: tuple[str, ...] = ()  # e.g. ("crf",): the file's own tables are [crf.*] of the config
    in_document: bool = True  # part of the digested document (the conf/deidentify.toml level)


@dataclass(frozen=True)
class Config:
    """Every table the engine and the job read, typed and checked."""

    pipeline: Pipeline
    registry: Registry
    rules: Rules
    merge: Merge
    names: NameNet
    job: Job
    testing: Testing
    model: ModelChoice
    crf: CrfSettings
    surrogates: Surrogates
    layers: tuple[Layer, ...] = field(repr=False, compare=False)

    @property
    def document(self) -> dict[str, Any]:
        """conf/deidentify.toml with --config FILE and overrides merged over it (what the manifest digests)."""
        out: dict[str, Any] = {}
        for layer in self.layers:
            if layer.in_document:
                out = deep_merge(out, dict(layer.tables))
        return out

    @property
    def digest(self) -> str:
        """sha256 of the document: the manifest's config_digest."""
        return digest(self.document)

    def override(self, tables: Mapping[str, Any]) -> Config:
        """This configuration with `tables` merged over it, checked again."""
        return from_layers((*self.layers, Layer(OVERRIDES, tables)))

    def origin(self, *keys: str) -> str:
        """Name of the layer the value of [keys...] comes from (the last one holding it), for messages."""
        return _last_holding(self.layers, list(keys)).name

    def with_file(self, path: str | Path) -> Config:
        """This configuration with an override file (shaped like --config FILE; a path or a name in
        conf/, e.g. a profile) merged over it, checked again; errors name the file."""
        return from_layers((*self.layers, Layer(str(path), load_toml(path))))


TABLES = {"pipeline": Pipeline, "registry": Registry, "rules": Rules, "merge": Merge, "names": NameNet, "job": Job,
          "testing": Testing, "model": ModelChoice, "crf": CrfSettings, "surrogates": Surrogates}


def base_layers(crf_file: str | Path | None = None) -> tuple[Layer, ...]:
    """The conf/ files (or --crf-config FILE in place of conf/crf.toml)."""
    crf = Layer("conf/crf.toml", {"crf": conf_file("crf.toml")}, ("crf",), False)
    if crf_file:
        crf = Layer(f"--crf-config {crf_file}", {"crf": load_toml(crf_file)}, ("crf",), False)
    return (Layer("conf/deidentify.toml", conf_file("deidentify.toml")), crf,
            Layer("conf/surrogates.toml", conf_file("surrogates.toml"), (), False))


def load_config(overrides: Mapping[str, Any] | None = None, config_file: str | Path | Mapping[str, Any] | None = None,
                *, crf_file: str | Path | None = None) -> Config:
    """The effective configuration: conf/ files, --config FILE (or tables given by the library API), then
    `overrides` (tables)."""
    layers = list(base_layers(crf_file))
    if isinstance(config_file, Mapping):
        layers.append(Layer(CONFIG_ARGUMENT, config_file))
    elif config_file:
        if not Path(config_file).is_file():
            raise ConfigError(f"--config {config_file}: no such file")
        layers.append(Layer(f"--config {config_file}", load_toml(Path(config_file).resolve())))
    if overrides:
        layers.append(Layer(OVERRIDES, overrides))
    return from_layers(tuple(layers))


def from_layers(layers: tuple[Layer, ...]) -> Config:
    """Merge the layers and check the result into a Config (ConfigError names the layer at fault)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        merged = deep_merge(merged, dict(layer.tables))
    try:
        for key in merged:
            if key not in TABLES:
                raise SchemaError("unknown", (key,), ", ".join(TABLES))
        tables = {key: build(cls, merged.get(key), (key,)) if key in merged else _missing(key)
                  for key, cls in TABLES.items()}
        config = Config(**tables, layers=layers)
        check_references(config)
    except SchemaError as exc:
        raise ConfigError(message(exc, layers)) from None
    return config


def _missing(key: str) -> Any:
    raise SchemaError("missing", (key,), "a table")


def check_references(config: Config) -> None:
    """Names that must be defined elsewhere in the configuration (registry entries, [models.*] and
    [surrogates.profiles.*] tables)."""
    reg = config.registry
    pipe = config.pipeline
    if pipe.window_overlap_chars * 2 >= pipe.window_chars:
        raise SchemaError("value", ("pipeline", "window_overlap_chars"),
                          f"an integer less than half of window_chars ({pipe.window_chars})", pipe.window_overlap_chars)
    for i, stage in enumerate(config.pipeline.stages):
        if stage not in reg.stages:
            raise SchemaError("value", ("pipeline", "stages", i),
                              f"a stage of [registry.stages] ({', '.join(sorted(reg.stages))})", stage)
    for key, value, names in (("mode", config.pipeline.mode, reg.modes), ("merge", config.pipeline.merge, reg.merge)):
        if value not in names:
            raise SchemaError("value", ("pipeline", key), f"one of {', '.join(sorted(names))}", value)
    sur = config.surrogates
    if sur.profile not in sur.profiles:
        raise SchemaError("value", ("surrogates", "profile"),
                          f"a [surrogates.profiles.*] table ({', '.join(sorted(sur.profiles))})", sur.profile)
    models = config.crf.models
    for i, name in enumerate(config.crf.training.models):
        if name not in models:
            raise SchemaError("value", ("crf", "training", "models", i),
                              f"a [models.*] table ({', '.join(models)})", name)
    if sum(1 for name in config.crf.training.models if models[name].kind == "char") > 1:
        raise SchemaError("value", ("crf", "training", "models"), "at most one model of kind \"char\"",
                          list(config.crf.training.models))


def conf_table(cls: type[T], name: str) -> T:
    """A whole conf/ file checked against a table class (ConfigError naming the file and key)."""
    return _checked(cls, Layer(f"conf/{name}", conf_file(name)))


def file_table(cls: type[T], path: str | Path) -> T:
    """A whole TOML file (a path or a name in conf/) checked against a table class, like conf_table."""
    return _checked(cls, Layer(str(path), load_toml(path)))


def _checked(cls: type[T], layer: Layer) -> T:
    try:
        return build(cls, layer.tables)
    except SchemaError as exc:
        raise ConfigError(message(exc, (layer,))) from None


def crf_settings(path: str | Path | None = None) -> CrfSettings:
    """conf/crf.toml, or a whole file of the same shape (`deid train --crf-config FILE`), checked."""
    return load_config(crf_file=path).crf


def crf_from_tables(tables: Mapping[str, Any], name: str) -> CrfSettings:
    """A CRF configuration from tables of conf/crf.toml's shape (e.g. an ablation's patched copy)."""
    return from_layers((*base_layers()[::2], Layer(name, {"crf": tables}, ("crf",), False))).crf


def message(exc: SchemaError, layers: tuple[Layer, ...]) -> str:
    """The ConfigError text: layer name, [table] and key, the problem and what is accepted."""
    layer = _origin(exc, layers)
    path = exc.path[len(layer.prefix):] if exc.path[: len(layer.prefix)] == layer.prefix else exc.path
    table, key = _table_and_key(path)
    where = f"{layer.name}: [{table}]" if table else f"{layer.name}:"
    if exc.kind == "unknown":
        what = "key" if table else "table"
        return f"{where} unknown {what} {key!r}; accepted: {exc.detail}"
    if exc.kind == "missing":
        return f"{where} {key} is missing; expected {exc.detail}"
    return f"{where} {key} = {exc.value!r} is not accepted; expected {exc.detail}"


def _table_and_key(path: tuple[str | int, ...]) -> tuple[str, str]:
    """('surrogates', 'dates', 'formats', 3, 'pattern') -> ('surrogates.dates.formats[3]', 'pattern')."""
    last = max((i for i, p in enumerate(path) if isinstance(p, str)), default=0)
    table = ""
    for p in path[:last]:
        table += f"[{p}]" if isinstance(p, int) else (f".{p}" if table else p)
    return table, f"{path[last]}" + "".join(f"[{p}]" for p in path[last + 1:]) if path else ""


def _origin(exc: SchemaError, layers: tuple[Layer, ...]) -> Layer:
    """The last layer that holds the key at fault (for a missing key: the first one holding its table)."""
    keys: list[str] = []
    for p in exc.path:
        if isinstance(p, int):
            break
        keys.append(p)
    if exc.kind == "missing" and len(keys) == len(exc.path):  # (inside a list: the layer that gave the list)
        parent = keys[:-1]
        return next((lay for lay in layers if parent and _holds(lay.tables, parent)), layers[0])
    return _last_holding(layers, keys)


def _last_holding(layers: tuple[Layer, ...], keys: list[str]) -> Layer:
    """The last layer that holds [keys...] (the first layer when none does)."""
    return next((lay for lay in reversed(layers) if _holds(lay.tables, keys)), layers[0])


def _holds(tables: Mapping[str, Any], keys: list[str]) -> bool:
    node: Any = tables
    for k in keys:
        if not isinstance(node, Mapping) or k not in node:
            return False
        node = node[k]
    return True


__all__ = ["Config", "Layer", "conf_table", "crf_from_tables", "crf_settings", "fields_of", "file_table", "load_config"]
