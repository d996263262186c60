"""TOML tables -> frozen dataclasses: every key required, unknown keys and wrong types refused.

The dataclasses of the schema declare types only (no default values: the defaults are the conf/
files). `build(cls, table, path)` checks one table against its class and raises SchemaError
with the key's path; the loader (effective.py) turns that into a ConfigError naming the file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin, get_type_hints

T = TypeVar("T")
Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Check:
    """A constraint beyond the type: `test(value)` must hold; `expected` says what is accepted."""

    test: Callable[[Any], bool]
    expected: str | Callable[[], str]  # callable: computed when a message needs it
    bound: bool = False  # a range ('>= 1'), said after the type ('an integer >= 1')

    @property
    def text(self) -> str:
        """What is accepted, in words."""
        return self.expected if isinstance(self.expected, str) else self.expected()


def at_least(low: float) -> Check:
    """Numbers >= low."""
    return Check(lambda v: v >= low, f">= {low:g}", bound=True)


def between(low: float, high: float) -> Check:
    """Numbers in [low, high]."""
    return Check(lambda v: low <= v <= high, f"from {low:g} to {high:g}", bound=True)


def member_of(values: Callable[[], Iterable[str]], what: str) -> Check:
    """Strings of a set known only at run time (taxonomy labels, categories)."""
    return Check(lambda v: v in set(values()), lambda: f"{what} ({', '.join(values())})")


class SchemaError(Exception):
    """A table does not fit its class: `kind` is unknown, missing or value; `path` locates the key."""

    def __init__(self, kind: str, path: Path, detail: str, value: Any = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.path = path
        self.detail = detail
        self.value = value


_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
_PLURALS = {str: "strings", int: "integers", float: "numbers", bool: "booleans"}


def describe(tp: Any) -> str:
    """What a value of type `tp` looks like, for error messages."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        checks = [m for m in meta if isinstance(m, Check)]
        if not checks or base not in _NAMES:
            return describe(base)
        return f"{_NAMES[base]} {checks[0].text}" if checks[0].bound else checks[0].text
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in get_args(tp))
    if origin is tuple:
        return "a list of " + _items(get_args(tp)[0])
    if origin is dict:
        return "a table of " + _items(get_args(tp)[1])
    if dataclasses.is_dataclass(tp):
        return "a table with keys " + ", ".join(f.name for f in dataclasses.fields(tp))
    return _NAMES.get(tp, str(tp))


def _items(tp: Any) -> str:
    """The elements of a list or table type, in the plural ('strings', 'values, each one of a, b')."""
    return _PLURALS[tp] if tp in _PLURALS else "values, each " + describe(tp)


def fields_of(cls: type) -> list[str]:
    """The keys a table of `cls` must have, in declaration order."""
    return [f.name for f in dataclasses.fields(cls)]


def choices(cls: type, key: str) -> tuple[Any, ...]:
    """The values a Literal-typed key of a table class accepts."""
    tp = get_type_hints(cls, include_extras=True)[key]
    return get_args(get_args(tp)[0] if get_origin(tp) is Annotated else tp)


def build(cls: type[T], table: Any, path: Path = ()) -> T:
    """An instance of the dataclass `cls` from a TOML table; SchemaError on the first problem."""
    if not isinstance(table, Mapping):
        raise SchemaError("value", path, describe(cls), table)
    names = fields_of(cls)
    for key in table:
        if key not in names:
            raise SchemaError("unknown", (*path, key), ", ".join(names))
    for key in names:
        if key not in table:
            raise SchemaError("missing", (*path, key), describe(get_type_hints(cls, include_extras=True)[key]))
    hints = get_type_hints(cls, include_extras=True)
    return cls(**{key: convert(hints[key], table[key], (*path, key)) for key in names})


def convert(tp: Any, value: Any, path: Path) -> Any:
    """`value` checked against the type `tp` (and its Checks), converted to the schema's form."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        try:
            out = convert(base, value, path)
        except SchemaError as exc:
            if exc.path == path and base in _NAMES:  # a scalar of the wrong type: say the whole constraint
                raise SchemaError("value", path, describe(tp), value) from None
            raise
        for check in meta:
            if isinstance(check, Check) and not check.test(out):
                raise SchemaError("value", path, describe(tp) if base in _NAMES else check.text, value)
        return out
    if dataclasses.is_dataclass(tp):
        return build(tp, value, path)
    if origin is Literal:
        if value not in get_args(tp):
            raise SchemaError("value", path, describe(tp), value)
        return value
    if origin is tuple:
        if not isinstance(value, list | tuple):
            raise SchemaError("value", path, describe(tp), value)
        item = get_args(tp)[0]
        return tuple(convert(item, v, (*path, i)) for i, v in enumerate(value))
    if origin is dict:
        if not isinstance(value, Mapping):
            raise SchemaError("value", path, describe(tp), value)
        key_type, item = get_args(tp)
        return {convert(key_type, k, (*path, k)): convert(item, v, (*path, k)) for k, v in value.items()}
    if tp is bool:
        ok = isinstance(value, bool)
    elif tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif tp is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif tp is str:
        ok = isinstance(value, str)
    else:
        raise TypeError(f"schema type {tp!r} is not supported")
    if not ok:
        raise SchemaError("value", path, describe(tp), value)
    return value
