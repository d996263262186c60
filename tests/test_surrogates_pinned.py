"""Surrogates drawn from Faker's lists, pinned: a Faker release that changes them fails here.

Names, cities, streets, states, countries, professions, hospitals and organizations come from
Faker's provider lists (deid_core/engine/surrogates), so the same key and patient give other
surrogates under another Faker. pyproject.toml pins Faker to the range of releases these values
were checked with; the manifest records the version of each run. The literal stage tags the name columns verbatim, so only
the surrogate step is under test.
"""

from __future__ import annotations

import pyarrow as pa

from deid_core import DEMO_KEY, deidentify_table
from deid_core.app.manifest import faker_version

COLUMNS = {"pt_first": "PATIENT", "pt_last": "PATIENT", "doc": "DOCTOR", "city": "CITY", "street": "STREET",
           "country": "COUNTRY", "job": "PROFESSION", "hosp": "HOSPITAL", "org": "ORGANIZATION", "state": "STATE"}
ROWS = [  # invented people and places
    {"note_id": "pin-1", "patient_id": "P-PIN-1", "pt_first": "Zebulon", "pt_last": "Quackenbush",
     "doc": "Ottoline Ferrars", "city": "Springfield", "street": "12 Elm Street", "country": "Portugal",
     "job": "carpenter", "hosp": "Mercy General Hospital", "org": "Acme Ambulance Service", "state": "Ohio",
     "text": "Zebulon Quackenbush, a carpenter from Springfield, Ohio (12 Elm Street), born in Portugal, was seen "
             "by Dr. Ottoline Ferrars at Mercy General Hospital; transport by Acme Ambulance Service."},
    {"note_id": "pin-2", "patient_id": "P-PIN-2", "pt_first": "Mirabel", "pt_last": "Oyelaran",
     "doc": "Bartholomew Nkemelu", "city": "Fairview", "street": "4410 Harbor Road", "country": "Kenya",
     "job": "teacher", "hosp": "Lakeside Clinic", "org": "Northwind Labs", "state": "Texas",
     "text": "Mirabel Oyelaran (teacher, Fairview, Texas; 4410 Harbor Road; from Kenya) seen by Bartholomew "
             "Nkemelu at Lakeside Clinic; labs by Northwind Labs."},
]
EXPECTED = {
    "pin-1": "Noah Kaiser, a psychiatrist from Moniqueport, Delaware (17 Martinez Street), born in Holy See "
             "(Vatican City State), was seen by Dr. Donovan Reeves at Shannon Health Center; transport by "
             "Ferrell-Jones.",
    "pin-2": "Everett Lane (science writer, Martinfurt, Utah; 2224 Reid Extension; from Sweden) seen by Gerald "
             "Ellison at Eaton Health Center; labs by Ali, Bass and Young.",
}
LITERAL_SURROGATES = {"pipeline": {"stages": ["literal"], "mode": "surrogate"},
                      "registry": {"stages": {"literal": "deid_core.engine.literal:literal_stage"}}}


def test_faker_surrogates_pinned():
    result = deidentify_table(pa.Table.from_pylist(ROWS), key=DEMO_KEY, name_columns=COLUMNS,
                              config=LITERAL_SURROGATES)
    got = dict(zip(result.notes["note_id"].to_pylist(), result.notes["text"].to_pylist(), strict=True))
    assert got == EXPECTED, f"surrogates changed under Faker {faker_version()}: update the pin in pyproject.toml"
    assert result.manifest["faker_version"] == faker_version() and faker_version()
