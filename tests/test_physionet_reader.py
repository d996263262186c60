from deid_core.io.physionet import Corpus, read_physionet, write_physionet
from deid_core.notes import Note
from deid_core.spans import Span


def test_dev_split_counts_and_offsets(physionet, physionet_dir):
    assert len(physionet.notes) == 1213
    assert sum(len(v) for v in physionet.gold.values()) == 951
    texts = {n.note_id: n.text for n in physionet.notes}
    # every gold span's surface equals the phrase file's text field
    lines = (physionet_dir / "id-phi.phrase").read_text().splitlines()
    for line in lines:
        p, n, s, e, _cat, surface = line.split(" ", 5)
        assert texts[f"{p}-{n}"][int(s):int(e)] == surface
    assert all(n.known_phi for n in physionet.notes if n.patient_id == "2")


def test_round_trip(tmp_path):
    corpus = Corpus([Note("7-1", "Seen by Dr. Lee on 3/4.\n", "7")],
                    {"7-1": [Span(12, 15, "DOCTOR", "gold"), Span(19, 22, "DATE", "gold")]})
    write_physionet(corpus, tmp_path)
    back = read_physionet(tmp_path, with_metadata=False)
    assert [n.text for n in back.notes] == [corpus.notes[0].text]
    assert [(s.start, s.end, s.label) for s in back.gold["7-1"]] == [(12, 15, "DOCTOR"), (19, 22, "DATE")]


def test_gold_outside_its_note_is_an_error_naming_the_note(tmp_path):
    import pytest

    corpus = Corpus([Note("7-1", "Seen by Dr. Lee.\n", "7")], {"7-1": [Span(12, 15, "DOCTOR", "gold")]})
    write_physionet(corpus, tmp_path)
    (tmp_path / "id-phi.phrase").write_text("7 1 12 90 HCPName Lee\n")
    with pytest.raises(ValueError, match="note 7-1"):
        read_physionet(tmp_path, with_metadata=False)
