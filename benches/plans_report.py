#!/usr/bin/env python3
"""Markdown tables of `cargo bench --bench plans` (docs/benchmarks.md, "The optimization model's plans").

Reads criterion's `<criterion dir>/{plans_*,border_*}/*/new/estimates.json` (median) and the
per-stage search records of `<criterion dir>/plan-records.txt`; prints the tables, or with
--update FILE replaces what lies between `<!-- plans:begin -->` and `<!-- plans:end -->` there.
Usage: python3 benches/plans_report.py [CRITERION_DIR] [--update FILE]
The criterion dir defaults to `$CARGO_TARGET_DIR/criterion` (`target/criterion`).
`benches/pages.py` builds docs/benchmarks.md from these tables (`tables`), fed from one run.
"""
import argparse
import glob
import json
import os
import re
import sys

PIPELINES = ["blur", "laplacian", "sharpen", "unsharp"]
BORDER_MODES = ["padded", "constant", "clamp", "reflect", "reflect101", "wrap"]
# A search record line: `parac plan <stage> [<size class>]: <label>@<wg> <ms> ms; all (ms): ...`.
PLAN_LINE = re.compile(r"parac plan (\S+) \[(\S+)\]: (\S+)@(\S+) ([0-9.]+) ms; all \(ms\): (.*)")
FIRST_LINE = re.compile(r"(plans|border)/(\S+)/(\S+)\tfirst call ([0-9.]+) ms")


def file_median_ms(root):
    """A lookup (group, bench) -> criterion's median in ms from `root`'s estimates, or None.
    Criterion's directory names a group with its `/` as `_`."""
    def median_ms(group, bench):
        p = os.path.join(root, group.replace("/", "_"), bench, "new", "estimates.json")
        if not os.path.exists(p):
            return None
        with open(p) as f:
            return json.load(f)["median"]["point_estimate"] / 1e6
    return median_ms


def read_records(root):
    """The records of the last full run (`plan-records.txt`), and over them those of later runs
    of some parts only (`plan-records.<parts>.txt`, newer files last): (lines, file names)."""
    files = sorted(glob.glob(os.path.join(root, "plan-records*.txt")), key=os.path.getmtime)
    full = os.path.join(root, "plan-records.txt")
    if full in files:
        files = files[files.index(full):]
    lines = [line.strip() for f in files for line in open(f)]
    return lines, [os.path.basename(f) for f in files]


def first_calls(records):
    """{(group, bench): first call ms} of the benchmarks that ran (their "first call" lines);
    group as criterion's, `plans/blur`, `border/tap3`."""
    ran = {}
    for line in records:
        m = FIRST_LINE.match(line)
        if m:
            ran[(f"{m.group(1)}/{m.group(2)}", m.group(3))] = float(m.group(4))
    return ran


def searches(records):
    """{stage: the search record's match}, the last record of each stage winning."""
    out = {}
    for line in records:
        m = PLAN_LINE.match(line)
        if m:
            out[m.group(1)] = m
    return out


def chosen_kernel(found, stage):
    """(ms, label, work-group) of the plan the search chose for `stage`, or None."""
    m = found.get(stage)
    return (float(m.group(5)), m.group(3), m.group(4)) if m else None


def pipeline_rows(median_ms, records):
    """[(pipeline, plan, ms, speed-up over the baseline plan, first call ms)] in table order."""
    ran = first_calls(records)
    rows = []
    for pipe in PIPELINES:
        g = f"plans/{pipe}"
        base = median_ms(g, "baseline")
        benches = sorted(b for (gg, b) in ran if gg == g)
        order = (["baseline"] + [b for b in benches if b not in ("baseline", "model", "search")]
                 + ["model", "search"])
        for b in order:
            t = median_ms(g, b) if (g, b) in ran else None
            if t is None or base is None:
                continue
            rows.append((pipe, b, t, base / t, ran.get((g, b), float("nan"))))
    return rows


def pipeline_table(median_ms, records):
    out = ["| pipeline | plan | ms | speed-up | first call (ms) |", "|---|---|---:|---:|---:|"]
    for pipe, b, t, up, first in pipeline_rows(median_ms, records):
        out.append(f"| {pipe} | {b} | {t:.2f} | {up:.2f}x | {first:.0f} |")
    return "\n".join(out)


BORDER_TEXT = (
    "Kernel: the searched plan's kernel time (profiling events, all launches of the plan: the\n"
    "interior and the border strips); call: criterion's median of a whole call, transfers "
    "included.")


def border_table(median_ms, records):
    found = searches(records)
    out = ["| stencil | mode | kernel ms | plan | kernel cost vs padded | call ms | "
           "call cost vs padded |", "|---|---|---:|---|---:|---:|---:|"]
    for st in ["tap3", "box5"]:
        g = f"border/{st}"
        pad = median_ms(g, "padded")
        kpad = chosen_kernel(found, f"{st}_padded/r0_it")
        for m in BORDER_MODES:
            t = median_ms(g, m)
            k = chosen_kernel(found, f"{st}_{m}/r0_it")
            kern = (f"{k[0]:.3f} | {k[1]} @{k[2]} | {k[0] / kpad[0]:.2f}x" if k and kpad
                    else "– | – | –")
            call = f"{t:.2f} | {t / pad:.2f}x" if t is not None and pad else "– | –"
            out.append(f"| {st} | {m} | {kern} | {call} |")
    return "\n".join(out)


def stage_rows(records):
    """[(stage, size class, baseline ms, baseline's work-group, chosen label, chosen wg, chosen
    ms)] from the search records."""
    rows = []
    for m in searches(records).values():
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
        rows.append((stage, cls, times[bk], bk.split("@")[1], label, wg, float(t)))
    return rows


def stage_table(records):
    out = ["| stage | size class | baseline | chosen plan | chosen | speed-up |",
           "|---|---|---:|---|---:|---:|"]
    for stage, cls, base, bwg, label, wg, t in stage_rows(records):
        out.append(f"| {stage} | {cls} | {base:.3f} @{bwg} | {label} @{wg} | {t:.3f} | "
                   f"{base / t:.2f}x |")
    return "\n".join(out)


def tables(median_ms, records, sources):
    out = ["### Whole pipelines (criterion median, ms; speed-up over the baseline plan)\n",
           pipeline_table(median_ms, records),
           "\n### Border rules against a pre-padded input\n", BORDER_TEXT + "\n",
           border_table(median_ms, records)]
    if searches(records):
        out += ["\n### Per stage: kernel times measured by the plan search (profiling events, "
                "ms)\n", stage_table(records)]
    out.append(f"\nRecords: {', '.join(sources) or 'none'}.")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("criterion", nargs="?", help="criterion's output directory")
    ap.add_argument("--update", help="markdown file whose plans section to replace")
    a = ap.parse_args()
    root = a.criterion or os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
    records, sources = read_records(root)
    text = tables(file_median_ms(root), records, sources)
    if not a.update:
        print(text)
        return
    begin, end = "<!-- plans:begin -->", "<!-- plans:end -->"
    with open(a.update) as f:
        doc = f.read()
    if begin not in doc or end not in doc:
        sys.exit(f"{a.update}: no {begin} ... {end} section")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(a.update, "w") as f:
        f.write(head + begin + "\n" + text.strip() + "\n" + end + tail)
    print(f"updated {a.update}", file=sys.stderr)


if __name__ == "__main__":
    main()
