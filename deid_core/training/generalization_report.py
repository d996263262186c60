"""The generalization benchmark's printed table (recall first, per category and per label) and its
command line (`python -m benchmarks generalization`, `./build.sh bench generalization`)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from deid_core.config import ConfigError
from deid_core.taxonomy import categories
from deid_core.training.evaluation.metrics import label_order, ratio

NAMES = ("PATIENT", "DOCTOR")
VARIANTS = ("original", "original_physionet", "random", "ambiguous", "oov", "lower", "upper")  # row order of part 3
COMMAND = "./build.sh bench generalization"


def label_recall(report: Mapping, metric: str, labels: Sequence[str]) -> tuple[float, int]:
    """(recall, gold count) of a metric over some labels together."""
    rows = [report["per_label"][metric].get(lab) for lab in labels]
    tp = sum(r["tp"] for r in rows if r)
    fn = sum(r["fn"] for r in rows if r)
    return ratio(tp, tp + fn), tp + fn


def _f(x: float) -> str:
    return f"{x:.3f}"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], first: int = 26) -> list[str]:
    widths = [first] + [max(9, len(h) + 1) for h in head[1:]]
    line = [head[0].ljust(widths[0]) + "".join(h.rjust(w) for h, w in zip(head[1:], widths[1:], strict=True))]
    for r in rows:
        line.append(r[0].ljust(widths[0]) + "".join(c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)))
    return line


def _headline(name: str, ev: Mapping) -> list[str]:
    rep = ev["report"]
    names_tok, _ = label_recall(rep, "token", NAMES)
    return [name, _f(rep["overlap"]["recall"]), _f(rep["overlap"]["precision"]), _f(rep["token"]["recall"]),
            _f(rep["binary_token"]["recall"]), _f(rep["binary_token"]["precision"]), _f(names_tok),
            _f(ev["readable"]["share"])]


HEAD = ["", "overlap R", "PPV", "token R", "bin-tok R", "bin-tok P", "names tok R", "readable"]


def _per_category(ev: Mapping) -> list[str]:
    cats = ev["report"]["per_category"]
    rows = []
    for cat in [c for c in categories() if c in cats["overlap"]]:
        o = cats["overlap"][cat]
        gold = o["tp"] + o["fn"]
        t, b = cats["token"].get(cat), cats["binary_token"].get(cat)
        rows.append([f"  {cat}", str(gold), _f(o["recall"]) if gold else "-", _f(o["precision"]),
                     _f(t["recall"]) if t and t["tp"] + t["fn"] else "-",
                     _f(b["recall"]) if b and b["tp"] + b["fn"] else "-"])
    return _table(["  per category", "gold", "overlap R", "PPV", "token R", "bin-tok R"], rows)


def format_blind(res: Mapping) -> list[str]:
    """Part 1: headline rows and the default configuration per category."""
    b, size = res["blind"], res["setup"]["blind"]
    out = [f"== 1. Blind real notes: {size['patients']} patients, {size['notes']} notes, {size['gold_spans']} gold PHI "
           f"(scored only)   [{COMMAND} --part blind]"]
    out += _table(HEAD, [_headline("default config", b["default"]),
                         _headline("physionet profile+conv.", b["physionet_profile"])])
    out += _per_category(b["default"])
    return out


def format_layouts(res: Mapping) -> list[str]:
    """Part 2: held-out vs seen types, then per-label token recall."""
    lay, setup = res["layouts"], res["setup"]
    out = [f"== 2. Unseen layouts: held-out types {', '.join(setup['held_out_types'])} "
           f"({lay['held_out_types']['notes']} notes, unseen seed)   [{COMMAND} --part layouts]"]
    rows = []
    for name in ("held_out_types", "seen_types"):
        r = lay[name]["report"]
        rows.append([name.replace("_", " ") + (" (reference)" if name == "seen_types" else ""),
                     _f(r["binary_token"]["recall"]), _f(r["binary_token"]["precision"]), _f(r["strict"]["recall"]),
                     _f(r["strict"]["precision"]), _f(r["strict"]["f1"]), _f(r["overlap"]["recall"]),
                     _f(lay[name]["readable"]["share"])])
    out += _table(["", "bin-tok R", "bin-tok P", "strict R", "strict P", "strict F1", "overlap R", "readable"], rows)
    held, seen = lay["held_out_types"]["report"]["per_label"]["token"], lay["seen_types"]["report"]["per_label"]["token"]
    rows = []
    for lab in label_order(held):
        h = held[lab]
        gold = h["tp"] + h["fn"]
        if gold:
            s = seen.get(lab)
            rows.append([f"  {lab}", str(gold), _f(h["recall"]), _f(s["recall"]) if s and s["tp"] + s["fn"] else "-"])
    out += _table(["  per label (tokens)", "gold", "token R", "seen R"], rows)
    return out


def format_reinsert(res: Mapping) -> list[str]:
    """Part 3: one row per part and variant: name recall, overall, per-category overlap recall."""
    rein = res["reinsert"]
    present = {c for part in rein.values() for ev in part.values()
               for c, v in ev["report"]["per_category"]["overlap"].items() if v["tp"] + v["fn"]}
    cats = [c for c in categories() if c in present]
    out = [f"== 3. Real context, new strings (re-inserted PHI, seed 004)   [{COMMAND} --part reinsert]"]
    rows = []
    for part in [p for p in ("tune_cv", "blind") if p in rein]:
        for kind in sorted(rein[part], key=lambda k: (VARIANTS.index(k) if k in VARIANTS else len(VARIANTS), k)):
            ev = rein[part][kind]
            rep = ev["report"]
            tok, _ = label_recall(rep, "token", NAMES)
            ovl, _ = label_recall(rep, "overlap", NAMES)
            per = rep["per_category"]["overlap"]
            rows.append([f"{part.replace('_', ' ')} / {kind}", _f(tok), _f(ovl), _f(rep["overlap"]["recall"]),
                         _f(rep["overlap"]["precision"]), _f(rep["binary_token"]["recall"])]
                        + [_f(per[c]["recall"]) if per.get(c, {}).get("tp", 0) + per.get(c, {}).get("fn", 0) else "-"
                           for c in cats])
    out += _table(["", "names tok R", "names ovl R", "overlap R", "PPV", "bin-tok R"] + [f"{c} R" for c in cats], rows)
    return out


def format_readable(res: Mapping) -> list[str]:
    """Part 4: share of gold person mentions (4+ letters) still standing in the output."""
    out = [f"== 4. Names readable in the surrogate output (gold PATIENT/DOCTOR mentions of 4+ letters)   "
           f"[{COMMAND} --part readable]"]
    rows = [[k, str(v["mentions"]), str(v["readable"]), _f(v["share"]), str(v["quarantined"])]
            for k, v in res["readable"].items()]
    return out + _table(["corpus", "mentions", "readable", "share", "quarantined"], rows, first=30)


def _profile_setup(s: Mapping) -> str:
    """How the physionet-profile rows' bundles were trained and tagged (absent in older results)."""
    if "profile_easyadapt" not in s:
        return ""
    how = f"EasyAdapt, {s['profile_domain']} copy" if s["profile_easyadapt"] else "pooled"
    recipe = f"recipe {s['profile_recipe']}, " if "profile_recipe" in s else ""
    return f" (physionet-profile rows: own bundles, {recipe}{how})"


def format_report(res: Mapping) -> str:
    """The whole printed report: setup line, then each part present."""
    s = res["setup"]
    bundles = ", ".join(f"{k}={v['id']}" for k, v in s.get("bundles", {}).items())
    quick = " (QUICK: tiny sizes, figures meaningless)" if s["quick"] else ""
    lines = [f"generalization benchmark{quick}: bundles {bundles}",
             f"  trained on {s['tune']['patients']} tune patients ({s['tune']['notes']} notes) + synthetic types "
             f"{', '.join(s['synthetic_training_types'])}; max_iterations {s['max_iterations']}; "
             f"EasyAdapt {'on, default rows tag with the ' + s['domain'] + ' copy' if s['easyadapt'] else 'off'}"
             f"{_profile_setup(s)}; "
             f"{s.get('machine', '')}; {s['cpu_s']} s CPU", ""]
    for key, fmt in (("blind", format_blind), ("layouts", format_layouts), ("reinsert", format_reinsert),
                     ("readable", format_readable)):
        if key in res:
            lines += fmt(res) + [""]
    return "\n".join(lines)


def machine() -> str:
    """CPU model, cores, Python, load average and date: where a figure was measured."""
    model = "?"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        model = next((ln.split(":", 1)[1].strip() for ln in cpuinfo.read_text().splitlines()
                      if ln.startswith("model name")), "?")
    load = os.getloadavg()[0]  # Linux and macOS: the platforms the project runs on
    return (f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.1f}, "
            f"{time.strftime('%Y-%m-%d')}")


DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "physionet-deid"
DEFAULT_CACHE = Path(__file__).resolve().parents[2] / "out" / "cache" / "generalization"


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options, run the asked parts, print the table, write the JSON."""
    from deid_core.engine.crf.tagger import DOMAINS
    from deid_core.training.generalization import PARTS, TUNE, Bench, run
    from deid_core.training.generalization_config import settings

    ap = argparse.ArgumentParser(prog="python -m benchmarks generalization", description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=(*PARTS, TUNE), action="append",
                    help=f"run only this part (repeatable; default all); {TUNE}: part 3's tune CV alone (no blind note)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (tests): every code path, meaningless figures")
    ap.add_argument("--json", default=None, help="write every figure here (JSON)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="PhysioNet-format folder (dev split)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="trained bundles, keyed by their inputs")
    ap.add_argument("--show-misses", type=int, default=0, metavar="N",
                    help="print up to N misses per variant of the tune CV (development set; terminal only)")
    ap.add_argument("--show-fps", type=int, default=0, metavar="N",
                    help="print up to N false positives of the tune CV's original notes, physionet profile "
                         "(development set; terminal only)")
    ap.add_argument("--config", default=None, help="another file shaped like conf/evaluation/generalization.toml")
    ap.add_argument("--recipe", default=None, metavar="NAME|FILE",
                    help="train this recipe (conf/recipes/NAME.toml or a .toml file) instead of [recipe] name")
    ap.add_argument("--easyadapt", choices=("on", "off"), default=None,
                    help="override the recipe's [crf.training] easyadapt (like `deid train --easyadapt`)")
    ap.add_argument("--domain", choices=DOMAINS, default=None,
                    help="EasyAdapt copy the default rows tag with (override [crf.tagging] domain; the "
                         "physionet-profile row keeps the profile's; no bundle is retrained for it)")
    args = ap.parse_args(argv)
    if not (args.data / "id.text").is_file():
        print(f"generalization: --data {args.data}: no PhysioNet corpus (id.text) there", file=sys.stderr)
        return 2
    if args.json and not Path(args.json).resolve().parent.is_dir():
        print(f"generalization: --json {args.json}: folder does not exist", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    try:  # settings, splits and corpora are checked here, before any training
        bench = Bench(settings(args.quick, args.config, args.recipe), args.data, args.cache, args.quick,
                      show_misses=args.show_misses, show_fps=args.show_fps,
                      easyadapt=None if args.easyadapt is None else args.easyadapt == "on", domain=args.domain)
    except (ConfigError, KeyError) as exc:
        print(f"generalization: {exc}", file=sys.stderr)
        return 2
    res = run(bench, args.part or PARTS)
    res["setup"]["machine"] = machine()
    res["setup"]["command"] = " ".join([COMMAND, *(argv or [])])
    print(format_report(res))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    return 0
