"""source_in: span sources against glob lists (merge options, completion rules)."""


def test_source_in_agrees_with_fnmatchcase():
    """source_in (one compiled pattern per glob list) decides as any(fnmatchcase) over the globs."""
    import random
    from fnmatch import fnmatchcase

    from deid_core.spans import source_in

    rnd = random.Random(3)
    globs_lists = [("fax", "fax-*", "landmark-*"), ("name-?", "[a-c]*-x", "*:*"), (), ("a*b*",)]
    for _ in range(3000):
        source = "".join(rnd.choice("abcfx-:*?[]\nAX") for _ in range(rnd.randint(0, 8)))
        for globs in globs_lists:
            assert source_in(source, globs) == any(fnmatchcase(source, g) for g in globs), (source, globs)
    assert source_in("fax-home", ("fax-*",)) and not source_in("xfax-home", ("fax-*",))
