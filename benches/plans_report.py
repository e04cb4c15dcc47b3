#!/usr/bin/env python3
"""Markdown tables of `cargo bench --bench plans` (docs/benchmarks.md, "The optimization model").

Reads criterion's `<criterion dir>/{plans_*,border_*}/*/new/estimates.json` (median) and the
per-stage search records of `<criterion dir>/plan-records.txt`; prints the tables, or with
--update FILE replaces what lies between `<!-- plans:begin -->` and `<!-- plans:end -->` there.
Usage: python3 benches/plans_report.py [CRITERION_DIR] [--update docs/benchmarks.md]
The criterion dir defaults to `$CARGO_TARGET_DIR/criterion` (`target/criterion`).
"""
import argparse
import glob
import io
import json
import os
import re
import sys

_ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_ap.add_argument("criterion", nargs="?", help="criterion's output directory")
_ap.add_argument("--update", help="markdown file whose plans section to replace")
_args = _ap.parse_args()
root = _args.criterion or os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
if _args.update:
    sys.stdout = io.StringIO()


def median_ms(group, bench):
    # criterion replaces '/' and '+' in ids by '_'? It keeps '+'; directories use the id as is.
    p = os.path.join(root, group, bench, "new", "estimates.json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)["median"]["point_estimate"] / 1e6


# The records of the last full run (`plan-records.txt`), and over them those of later runs of
# some parts only (`plan-records.<parts>.txt`, newer files last): their "first call" lines say
# which benchmarks ran, their search lines what each search measured.
_files = sorted(glob.glob(os.path.join(root, "plan-records*.txt")), key=os.path.getmtime)
_full = os.path.join(root, "plan-records.txt")
if _full in _files:
    _files = _files[_files.index(_full):]
RECORDS = [_line.strip() for _f in _files for _line in open(_f)]
SOURCES = [os.path.basename(_f) for _f in _files]
RAN = {}
for _line in RECORDS:
    _m = re.match(r"(plans|border)/(\S+)/(\S+)\tfirst call ([0-9.]+) ms", _line)
    if _m:
        RAN[(f"{_m.group(1)}_{_m.group(2)}", _m.group(3))] = float(_m.group(4))


def benches(group):
    return sorted(b for (g, b) in RAN if g == group)


print("### Whole pipelines (criterion median, ms; speed-up over the baseline plan)\n")
print("| pipeline | plan | ms | speed-up | first call (ms) |")
print("|---|---|---:|---:|---:|")
for pipe in ["blur", "laplacian", "sharpen", "unsharp"]:
    g = f"plans_{pipe}"
    base = median_ms(g, "baseline")
    order = ["baseline"] + [b for b in benches(g) if b not in ("baseline", "model", "search")] + ["model", "search"]
    for b in order:
        t = median_ms(g, b) if (g, b) in RAN else None
        if t is None or base is None:
            continue
        first = RAN.get((g, b), float("nan"))
        print(f"| {pipe} | {b} | {t:.2f} | {base / t:.2f}x | {first:.0f} |")

# The searched plan's kernel time per stage, from the search records.
PAT = re.compile(r"parac plan (\S+) \[(\S+)\]: (\S+)@(\S+) ([0-9.]+) ms; all \(ms\): (.*)")
CHOSEN = {}
STAGE_LINES = {}
for _line in RECORDS:
    _m = PAT.match(_line)
    if _m:
        CHOSEN[_m.group(1)] = (float(_m.group(5)), _m.group(3), _m.group(4))
        STAGE_LINES[_m.group(1)] = _m

print("\n### Border rules against a pre-padded input\n")
print("Kernel: the searched plan's kernel time (profiling events, all launches of the plan: the")
print("interior and the border strips); call: criterion's median of a whole call, transfers included.\n")
print("| stencil | mode | kernel ms | plan | kernel cost vs padded | call ms | call cost vs padded |")
print("|---|---|---:|---|---:|---:|---:|")
for st in ["tap3", "box5"]:
    g = f"border_{st}"
    pad = median_ms(g, "padded")
    kpad = CHOSEN.get(f"{st}_padded/r0_it")
    for m in ["padded", "constant", "clamp", "reflect", "reflect101", "wrap"]:
        t = median_ms(g, m)
        k = CHOSEN.get(f"{st}_{m}/r0_it")
        kern = f"{k[0]:.3f} | {k[1]} @{k[2]} | {k[0] / kpad[0]:.2f}x" if k and kpad else "– | – | –"
        call = f"{t:.2f} | {t / pad:.2f}x" if t is not None and pad else "– | –"
        print(f"| {st} | {m} | {kern} | {call} |")

if STAGE_LINES:
    print("\n### Per stage: kernel times measured by the plan search (profiling events, ms)\n")
    print("| stage | size class | baseline | chosen plan | chosen | speed-up |")
    print("|---|---|---:|---|---:|---:|")
    for m in STAGE_LINES.values():
        stage, cls, label, wg, t, rest = m.groups()
        times = {}
        for item in rest.split(", "):
            k, _, v = item.rpartition(" ")
            times[k] = float(v)
        # The baseline as the search timed it: at the driver's work-group size, or at 32x4
        # where the work-items' first dimension is not a multiple of 16.
        bk = next((k for k in ("baseline@-", "baseline@32x4", "baseline@64") if k in times), None)
        if bk is None:
            continue
        base = times[bk]
        print(f"| {stage} | {cls} | {base:.3f} @{bk.split('@')[1]} | {label} @{wg} | {float(t):.3f} | {base / float(t):.2f}x |")
print(f"\nRecords: {', '.join(SOURCES) or 'none'}.")

if _args.update:
    text = sys.stdout.getvalue()
    sys.stdout = sys.__stdout__
    begin, end = "<!-- plans:begin -->", "<!-- plans:end -->"
    with open(_args.update) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        sys.exit(f"{_args.update}: no {begin} ... {end} section")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(_args.update, "w") as f:
        f.write(head + begin + "\n" + text.strip() + "\n" + end + tail)
    print(f"updated {_args.update}", file=sys.stderr)
