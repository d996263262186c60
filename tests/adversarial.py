"""Crafted hostile notes (issue 13.1) and a CPU-time ratio helper, shared by the linear-time tests
and `python -m benchmarks linear`.

Each kind is a function of the length `n` (characters) returning a text of exactly `n` characters:
long whitespace, tab, dot and capitalised runs, repeated names (one long CRF span), a trigger word
followed by whitespace (stacked `\\s*` in rule macros), glued names, random junk, and a real note
padded with spaces.
"""

from __future__ import annotations

import gc
import random
import string
import time
from collections.abc import Callable

SURNAMES = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez "
            "Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris "
            "Sanchez Clark Ramirez Lewis Robinson").split()
REAL_NOTE = ("Nursing note 2023-11-02 07:30\nVerity Vandersloot resting comfortably, family at bedside "
             "(daughter Corinne Vandersloot). VS stable. Pain 2/10. Lives at 39 Brian Spurs, Boston, MA "
             "02115. Seen by Dr. Colette Marchand, pager 40123. MRN: 1234567. Call 617-555-0123.\n")
# metadata names given with every crafted note (they feed the metadata matcher and its features)
KNOWN_PHI = (("Verity", "PATIENT"), ("Vandersloot", "PATIENT"), ("Smith", "PATIENT"),
             ("Johnson Lee", "DOCTOR"), ("Colette Marchand", "DOCTOR"))


def _fill(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def _junk(n: int) -> str:
    rng = random.Random(13)
    return "".join(rng.choice(string.printable) for _ in range(n))


def _word_junk(n: int) -> str:
    rng = random.Random(17)
    words = [*SURNAMES, "Dr.", "MRN", "account", "#", ":", "12/3/2020", "555-0123", "St", "\n", "Hospital"]
    out: list[str] = []
    size = 0
    while size <= n:  # the joined text is size - 1 long
        w = rng.choice(words)
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:n]


KINDS: dict[str, Callable[[int], str]] = {
    "spaces": lambda n: " " * n,
    "a+tabs+b": lambda n: "a" + "\t" * (n - 2) + "b",
    "dots": lambda n: "." * n,
    "Smith repeated": lambda n: _fill("Smith ", n),
    "30 surnames": lambda n: _fill(" ".join(SURNAMES) + " ", n),
    "account+spaces": lambda n: "account" + " " * (n - 7),
    "member+spaces": lambda n: "member" + " " * (n - 6),
    "newlines": lambda n: "\n" * n,
    "glued name": lambda n: _fill("vandersloot", n),
    "capitals": lambda n: _fill("ABCDEFGHIJKLMNOPQRSTUVWXYZ", n),
    "digits": lambda n: _fill("1234567890", n),
    "dashes+digits": lambda n: _fill("1-", n),
    "random junk": _junk,
    "word junk": _word_junk,
    "padded note": lambda n: (REAL_NOTE + " " * n)[:n],
}


def crafted(kind: str, n: int) -> str:
    """The crafted text of one kind, exactly n characters long."""
    text = KINDS[kind](n)
    assert len(text) == n, (kind, n, len(text))
    return text


def rule_file_kinds(rule_file: str) -> dict[str, Callable[[int], str]]:
    """Hostile texts made from one rule file's own triggers and examples.

    Every trigger followed by a long run of spaces and tabs (stacked whitespace quantifiers after
    a keyword), every trigger repeated with hyphens or dots between (a match attempt at each
    trigger that reads to the end of the run), in lower and title case, and the rules' examples
    repeated.
    """
    from deid_core.engine.rules.loader import load_rules, parse_example

    rules = load_rules((rule_file,))
    triggers = sorted({t for r in rules for t in r.triggers})
    examples = [parse_example(e)[0] for r in rules for e in r.examples]

    def spaced(n: int) -> str:
        run = max(1, n // max(1, len(triggers)))
        return _fill("".join(t + " \t" * (run // 2) for t in triggers) or " ", n)

    def repeated(sep: str, case: Callable[[str], str]) -> Callable[[int], str]:
        def make(n: int) -> str:
            # every trigger repeated as many times (k, fractional: runs end on a cut trigger, "f/u-f/"),
            # k in step with n, so each size holds every trigger in the same proportions
            k = n / max(1, sum(len(t) + len(sep) for t in triggers))
            runs = (_fill(case(t) + sep, max(len(t) + len(sep), int(k * (len(t) + len(sep))))) for t in triggers)
            return _fill("".join(runs) or sep, n)
        return make

    return {
        "triggers+whitespace": spaced,
        "triggers-hyphenated": repeated("-", str.lower),
        "Triggers-Hyphenated": repeated("-", str.title),
        "triggers.dotted": repeated(".", str.lower),
        "examples repeated": lambda n: _fill(" ".join(examples) + "\n" if examples else " ", n),
    }


def cpu_seconds(fn: Callable[[], object], repeats: int = 3) -> float:
    """Best (min) CPU time of this thread over `repeats` calls: neither load on a shared machine nor the
    process's other threads (the test session's Spark/py4j threads, in the full suite) count."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def growth(fn: Callable[[str], object], make: Callable[[int], str], small: int = 4_000, large: int = 40_000,
           repeats: int = 3, floor: float = 0.002, large_repeats: int = 1) -> tuple[float, float, float]:
    """(CPU s at `small`, at `large`, ratio) of fn on the texts `make` builds; times below `floor` count as `floor`.

    A linear step gives a ratio near large/small (10); a quadratic one near 100. The floor keeps
    sub-millisecond timings (noise) from making a ratio. The large size (most of the cost) is timed
    `large_repeats` times, once by default: noise only adds time, so a single large timing can only
    raise the ratio (a caller re-measures a ratio over its limit), while the small size, whose noise
    would lower it, is the minimum of `repeats` runs.
    """
    a, b = make(small), make(large)
    assert (len(a), len(b)) == (small, large)
    fn(a)  # warm caches (compiled rules, gazetteers) before timing
    gc.collect()
    gc.freeze()  # the process's heap (a whole test session's) is then neither scanned by nor timed in a collection
    ta = tb = float("inf")
    try:  # the sizes alternate, so a burst of load (cache pressure from other processes) meets both
        for i in range(max(repeats, large_repeats)):
            ta = min(ta, cpu_seconds(lambda: fn(a), 1)) if i < repeats else ta
            tb = min(tb, cpu_seconds(lambda: fn(b), 1)) if i < large_repeats else tb
    finally:
        gc.unfreeze()
    return max(ta, floor), max(tb, floor), max(tb, floor) / max(ta, floor)
