"""`python -m benchmarks NAME [args]` (or `./build.sh bench NAME`): run one benchmark, or all."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def available() -> list[str]:
    """Benchmark module names in this folder."""
    return sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if not m.name.startswith("_"))


def main(argv: list[str]) -> int:
    """Dispatch to benchmarks/<name>.py main(argv)."""
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m benchmarks NAME|all [ARGS]\navailable: " + ", ".join(names))
        return 0
    which, rest = argv[0], argv[1:]
    if which != "all" and which not in names:
        print(f"unknown benchmark {which!r}; available: {', '.join(names)}", file=sys.stderr)
        return 2
    for name in names if which == "all" else [which]:
        rc = importlib.import_module(f"benchmarks.{name}").main(rest)
        if rc:
            return rc
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
