"""`deid bundle verify|add-digests DIR`: check a model bundle's files, or add digests to an older bundle."""

from __future__ import annotations

import argparse

from deid_core.bundle import add_digests, load_bundle


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """ACTION DIR."""
    parser.add_argument("action", choices=("verify", "add-digests"),
                        help="verify: check every file against bundle.json (as every run does); add-digests: "
                             "write the per-file digests into a bundle written before they existed, after "
                             "checking its files against the bundle id")
    parser.add_argument("bundle", metavar="DIR", help="model bundle folder")


def run(args: argparse.Namespace) -> int:
    """Verify or add digests; a damaged bundle raises BundleError (one line, exit 2, from the cli)."""
    if args.action == "add-digests":
        manifest = add_digests(args.bundle)
        print(f"bundle {manifest['id'][:12]}: digests of {len(manifest['files'])} file(s) written to "
              f"{args.bundle}/bundle.json")
        return 0
    bundle = load_bundle(args.bundle)
    print(f"bundle {bundle.id[:12]}: {len(bundle.verified)} file(s) match their digests and the bundle id")
    return 0
