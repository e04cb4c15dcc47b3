#!/usr/bin/env python3
"""Halide and OpenCV side by side: turns the results of `cargo bench --bench peers`
(`<criterion dir>/parac-extra/peers/peers.json`) into the tables of docs/benchmarks.md, between
`<!-- peers:begin -->` and `<!-- peers:end -->` (with `--update FILE`), or prints them.

    python3 benches/peers_report.py [--criterion DIR] [--update docs/benchmarks.md]

Tables: per pipeline and contender the median time of a whole call, megapixels per second (of
the pipeline's input), the time as a multiple of the memory floor (each input read once and
each output written once at the host's copy bandwidth), and the largest difference from the
Rust reference; then parac's best path against Halide's best, Halide CPU, Halide OpenCL and
OpenCV CPU; lines of code; and the per-kernel times of parac's searched plans.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report  # noqa: E402  (the line counters and the criterion directory)

PIPELINES = ["laplacian", "sharpen", "blur", "unsharp"]
ORDER = [
    ("parac_opencl_search", "parac, OpenCL, searched plan"),
    ("parac_opencl_model", "parac, OpenCL, model's plan"),
    ("parac_cpu", "parac, CPU path (no OpenCL)"),
    ("hand_opencl", "hand OpenCL, kernels only"),
    ("hand_opencl_call", "hand OpenCL, whole call"),
    ("halide_cpu", "Halide, CPU schedule"),
    ("halide_opencl", "Halide, OpenCL schedule"),
    ("opencv_cpu", "OpenCV, CPU"),
    ("opencv_umat", "OpenCV, UMat (OpenCL)"),
]
PARAC = ["parac_opencl_search", "parac_opencl_model", "parac_cpu"]


def best(rows, names):
    """The fastest ok row among contenders `names`."""
    ok = [r for r in rows if r["contender"] in names and r.get("status") == "ok"]
    return min(ok, key=lambda r: r["median_ms"]) if ok else None


def diff_text(r):
    d = r.get("max_abs_diff")
    if isinstance(d, dict):
        d = max(d.values()) if d else None
    if d is None:
        return "-"
    if d == 0:
        return "exact"
    return f"{d:.3g}"


def tables(data):
    out = []
    bw = data["copy_bandwidth"]
    rows = data["results"]
    out.append(
        f"Machine: {data['machine']}; OpenCL device: {data['device']}; host copy bandwidth "
        f"{bw / 1e9:.1f} GB/s (read plus write). Each contender: whole calls on images in "
        f"memory, a warm-up, then at least {data['seconds']:g} s of calls; the median.")
    py = data.get("python") or {}
    if py.get("versions"):
        v = py["versions"]
        out.append("Versions: " + ", ".join(f"{k} {v[k]}" for k in sorted(v)) + ".")
    out.append("")
    for p in PIPELINES:
        prow = [r for r in rows if r["pipeline"] == p]
        if not prow:
            continue
        px = data["pixels"][p]
        floor_ms = data["floor_bytes"][p] / bw * 1e3
        out.append(f"**{p}** ({px / 1e6:.1f} Mpixel; floor {floor_ms:.2f} ms)")
        out.append("")
        out.append("| contender | ms | Mpixel/s | x floor | max diff from reference |")
        out.append("|---|---:|---:|---:|---|")
        for key, label in ORDER:
            r = next((x for x in prow if x["contender"] == key), None)
            if r is None:
                continue
            if r.get("status") != "ok":
                out.append(f"| {label} | - | - | - | unavailable: {r.get('reason', '?')} |")
                continue
            ms = r["median_ms"]
            d = diff_text(r)
            out.append(f"| {label} | {ms:.2f} | {px / ms / 1e3:.0f} | {ms / floor_ms:.1f} | {d} |")
        out.append("")
    # Ratios: how many times faster parac's best path is (below 1: slower).
    out.append("**parac against the others** (how many times faster parac is; below 1 means "
               "slower). parac's best path is the fastest of its OpenCL plans and its CPU path; "
               "Halide's best the faster of its two schedules.")
    out.append("")
    out.append("| pipeline | parac best | vs Halide best | vs Halide CPU | vs Halide OpenCL "
               "| vs OpenCV CPU | parac CPU path vs Halide CPU |")
    out.append("|---|---|---:|---:|---:|---:|---:|")
    for p in PIPELINES:
        prow = [r for r in rows if r["pipeline"] == p]
        pb = best(prow, PARAC)
        if pb is None:
            continue

        def ratio(other, mine=pb):
            o = best(prow, other)
            if o is None or mine is None:
                return "-"
            return f"{o['median_ms'] / mine['median_ms']:.2f}x"
        cpu = best(prow, ["parac_cpu"])
        out.append(
            f"| {p} | {pb['contender']} {pb['median_ms']:.1f} ms "
            f"| {ratio(['halide_cpu', 'halide_opencl'])} | {ratio(['halide_cpu'])} "
            f"| {ratio(['halide_opencl'])} | {ratio(['opencv_cpu'])} "
            f"| {ratio(['halide_cpu'], cpu)} |")
    out.append("")
    # Lines of code.
    loc = py.get("loc") or {}
    out.append("**Lines of code** (non-blank, non-comment; as the paper's Table 2). parac: the "
               "`parac!` block; hand OpenCL: its kernels and its host code in "
               "`benches/hand/mod.rs`; Halide: the algorithm and each schedule apart; OpenCV: "
               "the function making the calls.")
    out.append("")
    out.append("| pipeline | parac | hand OpenCL kernels + host | Halide algorithm | "
               "Halide CPU schedule | Halide GPU schedule | OpenCV |")
    out.append("|---|---:|---:|---:|---:|---:|---:|")
    for p in PIPELINES:
        pl = sum(report.parac_loc(p).values())
        hk = sum(report.hand_loc(p).values())
        hh = report.host_loc(p)
        lp = loc.get(p, {})
        out.append(
            f"| {p} | {pl} | {hk} + {hh if hh is not None else '?'} "
            f"| {lp.get('halide_algorithm', '-')} | {lp.get('halide_schedule_cpu', '-')} "
            f"| {lp.get('halide_schedule_gpu', '-')} | {lp.get('opencv', '-')} |")
    out.append("")
    # Where parac's time goes.
    ks = data.get("kernels") or []
    if ks:
        out.append("**parac's searched plans, per kernel** (profiling events of the search, ms; "
                   "the baseline plan beside). A region's kernel that alone takes longer than "
                   "Halide's whole pipeline is where parac loses most.")
        out.append("")
        out.append("| program | region | plan | ms | baseline ms |")
        out.append("|---|---|---|---:|---:|")
        for k in ks:
            out.append(f"| {k['program']} | {k['region']} | {k['plan']} | {k['ms']:.2f} "
                       f"| {k['baseline_ms']:.2f} |")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--criterion", help="criterion's directory (default: as cargo bench)")
    ap.add_argument("--update", help="a markdown file with a peers:begin/end section")
    a = ap.parse_args()
    path = report.criterion_dir(a.criterion) / "parac-extra" / "peers" / "peers.json"
    if not path.exists():
        sys.exit(f"{path}: not found; run `cargo bench --bench peers` first")
    text = tables(json.loads(path.read_text()))
    if not a.update:
        print(text)
        return
    doc_path = Path(a.update)
    doc = doc_path.read_text()
    begin, end = "<!-- peers:begin -->", "<!-- peers:end -->"
    if begin not in doc or end not in doc:
        sys.exit(f"{doc_path} has no {begin} ... {end} section")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    doc_path.write_text(f"{head}{begin}\n{text}\n{end}{tail}")


if __name__ == "__main__":
    main()
