import pytest

from deid_core import taxonomy
from deid_core.spans import Span, resolve_overlaps, sort_spans, trim_span, validate_spans


def test_taxonomy_has_30_labels_both_ways():
    assert len(taxonomy.labels()) == 30
    for label in taxonomy.labels():
        assert label in taxonomy.labels_of(taxonomy.category_of(label))
    assert taxonomy.category_of("DOCTOR") == "NAME"
    assert taxonomy.category_of("ZIP") == "LOCATION"


def test_hipaa_subset():
    h = taxonomy.hipaa_labels()
    assert {"PATIENT", "DATE", "AGE", "ZIP", "PHONE", "MEDICALRECORD"} <= h
    assert not h & {"DOCTOR", "HOSPITAL", "PROFESSION", "ORGANIZATION", "DEPARTMENT", "ROOM",
                    "STATE", "COUNTRY", "LOCATION-OTHER"}


def test_unknown_label_error_names_it():
    with pytest.raises(KeyError, match="NOPE"):
        taxonomy.category_of("NOPE")
    assert taxonomy.normalize_label("medical_record") == "MEDICALRECORD"


def test_resolve_overlaps_keeps_longest():
    spans = [Span(0, 5, "DATE"), Span(3, 10, "PATIENT"), Span(12, 14, "AGE")]
    assert resolve_overlaps(spans) == [Span(3, 10, "PATIENT"), Span(12, 14, "AGE")]


def test_validate_rejects_bad_spans():
    validate_spans([Span(0, 2, "AGE"), Span(2, 4, "AGE")], 4)
    with pytest.raises(ValueError):
        validate_spans([Span(0, 5, "AGE")], 4)
    with pytest.raises(ValueError):
        validate_spans([Span(0, 3, "AGE"), Span(2, 4, "AGE")], 4)
    with pytest.raises(ValueError):
        validate_spans([Span(2, 2, "AGE")], 4)


def test_sort_and_trim():
    assert sort_spans([Span(4, 5, "A"), Span(0, 1, "B")])[0].start == 0
    assert trim_span(Span(0, 8, "PATIENT"), " (Smith)") == Span(2, 7, "PATIENT")
    assert trim_span(Span(0, 2, "PATIENT"), " ,") is None
