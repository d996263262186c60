from deid_core.text.sections import find_sections, section_lookup


def test_headers_found_at_line_start():
    text = "74 YO\nPMH: CAD\nHPI: PT IN USOH\nCV: IABP 1:1\nA: stable\nA lot of words\n"
    secs = find_sections(text)
    assert [s.name for s in secs] == ["past medical history", "history of present illness",
                                      "cardiovascular", "assessment"]
    at = section_lookup(secs)
    assert at(0) == ""
    assert at(text.index("USOH")) == "history of present illness"
    assert at(text.index("lot")) == "assessment"


def test_header_words_inside_a_line_are_not_headers():
    assert find_sections("pt has a history of CAD\nplan to discuss") == []
