"""Generate samples/notes.parquet: 48 short fictional clinical notes for the demo and tests.

Every name, date, number and place here is invented by this script (fixed seed, so the file
is reproducible); nothing comes from a real record or from the PhysioNet corpus.
Run: python samples/make_samples.py [OUT]
"""

from __future__ import annotations

import datetime as dt
import random
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

FIRST = ["Marla", "Odell", "Petra", "Ansel", "Corinne", "Desmond", "Ilse", "Roderick", "Tamsin",
         "Gideon", "Noreen", "Lucius", "Verity", "Bram", "Elsbeth", "Quentin"]
LAST = ["Vandersloot", "Quarrington", "Belcourt", "Hollingsby", "Marchetti", "Oyelaran",
        "Strathmore", "Kowalczyk", "Delacroix-Ames", "Fennimore", "Abernathy", "Ruiz-Tello"]
DOCTORS = ["Harriet Lindqvist", "Samuel Okonkwo", "Priya Raghunathan", "Tobias Wexler",
           "Colette Marchand", "Arjun Batra"]
HOSPITALS = ["Riverbend General Hospital", "St. Aldric Medical Center", "Northfield Community Hospital"]
CITIES = [("Millbrook", "OH", "43210"), ("Cedar Falls", "IA", "50613"), ("Port Ellis", "ME", "04101")]
ENCOUNTERS = ["inpatient", "outpatient", "emergency", "telehealth"]
COMPLAINTS = ["chest pain", "shortness of breath", "abdominal pain", "syncope", "fever and cough",
              "worsening depression", "low back pain", "headache"]
TEMPLATES = [
    "DISCHARGE SUMMARY\nPatient: {first} {last}   MRN: {mrn}\nAdmitted: {d1}   Discharged: {d2}\n"
    "Attending: Dr. {doc}\n\nHISTORY OF PRESENT ILLNESS:\n{first} is a {age}-year-old with {cc} "
    "who presented to {hosp} on {d1}. Mr./Ms. {last} reports symptoms for 3 days.\n\n"
    "HOSPITAL COURSE:\nTreated and improved. Follow up with Dr. {docl} in 2 weeks; call {phone}.\n",
    "Nursing note {d1} 07:30\n{first} {last} resting comfortably, family at bedside (daughter "
    "{rel} {last}). VS stable. Pain 2/10. Lives at {street}, {city}, {state} {zip}.\nRN plan: "
    "continue current meds, ambulate TID.\n",
    "Clinic visit - {hosp}\nDate: {d1}\nPt {last}, {first} (DOB {dob}), age {age}.\nCC: {cc}.\n"
    "Exam unremarkable. Labs from {d0} reviewed with patient.\nA/P: {cc}, likely benign. "
    "Return {d2} or sooner. Seen with Dr. {doc}.\nContact: {email}\n",
    "Psychiatry intake\nIdentifying data: {age} y/o, referred by Dr. {docl}.\n{first} describes "
    "{cc}; sleep poor since {d0}. Works as a teacher in {city}. Denies SI/HI.\nPlan: start "
    "sertraline 50 mg, therapy weekly, recheck {d2}. Phone on file {phone}.\n",
]


def make_rows(n: int = 48, seed: int = 7) -> list[dict]:
    """n fictional notes over n//3 patients (each patient has up to 3 notes)."""
    rng = random.Random(seed)
    rows = []
    patients = []
    for p in range(max(1, n // 3)):
        city, state, zipc = rng.choice(CITIES)
        patients.append({
            "patient_id": f"P{1000 + p}", "first": rng.choice(FIRST), "last": rng.choice(LAST),
            "age": rng.randint(19, 88), "mrn": f"{rng.randint(1000000, 9999999)}",
            "phone": f"({rng.randint(201, 989)}) 555-{rng.randint(1000, 9999)}",
            "street": f"{rng.randint(10, 999)} {rng.choice(['Elm', 'Harbor', 'Quarry', 'Linden'])} St",
            "city": city, "state": state, "zip": zipc, "rel": rng.choice(FIRST),
            "dob": dt.date(2024, 1, 1) - dt.timedelta(days=365 * rng.randint(19, 88) + rng.randint(0, 364)),
        })
    for i in range(n):
        pt = patients[i % len(patients)]
        doc = rng.choice(DOCTORS)
        d1 = dt.date(2023, 1, 1) + dt.timedelta(days=rng.randint(0, 600))
        fmt = rng.choice(["%m/%d/%Y", "%B %d, %Y", "%Y-%m-%d"])
        fields = dict(pt, doc=doc, docl=doc.split()[-1], hosp=rng.choice(HOSPITALS), cc=rng.choice(COMPLAINTS),
                      d0=(d1 - dt.timedelta(days=rng.randint(5, 60))).strftime(fmt), d1=d1.strftime(fmt),
                      d2=(d1 + dt.timedelta(days=rng.randint(1, 20))).strftime(fmt),
                      dob=pt["dob"].strftime("%m/%d/%Y"),
                      email=f"{pt['first'].lower()}.{pt['last'].lower()}@example.org")
        rows.append({
            "note_id": f"N{i + 1:04d}", "patient_id": pt["patient_id"], "note_date": d1,
            "text": rng.choice(TEMPLATES).format(**fields),
            "patient_first_name": pt["first"], "patient_last_name": pt["last"], "attending_name": doc,
            "encounter_type": rng.choice(ENCOUNTERS),
        })
    return rows


SCHEMA = pa.schema([
    ("note_id", pa.string()), ("patient_id", pa.string()), ("note_date", pa.date32()), ("text", pa.string()),
    ("patient_first_name", pa.string()), ("patient_last_name", pa.string()), ("attending_name", pa.string()),
    ("encounter_type", pa.string()),
])


def main(argv: list[str]) -> int:
    """Write the sample notes Parquet."""
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent / "notes.parquet"
    pq.write_table(pa.Table.from_pylist(make_rows(), schema=SCHEMA), out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
