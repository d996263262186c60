"""The PHI label taxonomy of DESIGN.md §4 (data in conf/taxonomy.toml): labels, categories, HIPAA subset."""

from __future__ import annotations

from functools import lru_cache

from deid_core.config.files import conf_file


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], frozenset[str], dict[str, tuple[str, ...]], dict[str, str]]:
    data = conf_file("taxonomy.toml")
    label_to_cat: dict[str, str] = {}
    hipaa: set[str] = set()
    cat_labels: dict[str, tuple[str, ...]] = {}
    for cat, entry in data["categories"].items():
        cat_labels[cat] = tuple(entry["labels"])
        for label in entry["labels"]:
            label_to_cat[label] = cat
        hipaa.update(entry.get("hipaa", []))
    return label_to_cat, frozenset(hipaa), cat_labels, dict(data.get("aliases", {}))


def labels() -> tuple[str, ...]:
    """All 30 labels, in taxonomy order."""
    return tuple(_tables()[0])


def categories() -> tuple[str, ...]:
    """The main categories (NAME, PROFESSION, LOCATION, AGE, DATE, CONTACT, ID)."""
    return tuple(_tables()[2])


def category_of(label: str) -> str:
    """Main category of a label; KeyError names the unknown label."""
    try:
        return _tables()[0][label]
    except KeyError:
        raise KeyError(f"unknown PHI label {label!r}; expected one of {', '.join(labels())}") from None


def labels_of(category: str) -> tuple[str, ...]:
    """Labels of a main category."""
    return _tables()[2][category]


def hipaa_labels() -> frozenset[str]:
    """Labels HIPAA Safe Harbor requires removing (the i2b2 2014 overview's list)."""
    return _tables()[1]


def is_hipaa(label: str) -> bool:
    """True when HIPAA requires removing this label."""
    return label in _tables()[1]


def normalize_label(name: str) -> str:
    """Map a label spelled by another corpus (case, aliases) to the taxonomy; KeyError if unknown."""
    up = name.strip().upper()
    label_to_cat, _, cat_labels, aliases = _tables()
    up = aliases.get(up, up)
    if up in label_to_cat:
        return up
    raise KeyError(f"unknown PHI label {name!r}; expected one of {', '.join(labels())}")
