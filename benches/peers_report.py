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
`benches/pages.py` builds docs/benchmarks.md from these tables, fed from one run of every bench.
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


def header(data):
    """The run's machine, device, bandwidth and versions, as two lines."""
    bw = data["copy_bandwidth"]
    out = [
        f"Machine: {data['machine']}; OpenCL device: {data['device']}; host copy bandwidth "
        f"{bw / 1e9:.1f} GB/s (read plus write). Each contender: whole calls on images in "
        f"memory, a warm-up, then at least {data['seconds']:g} s of calls; the median."]
    py = data.get("python") or {}
    if py.get("versions"):
        v = py["versions"]
        out.append("Versions: " + ", ".join(f"{k} {v[k]}" for k in sorted(v)) + ".")
    return "\n".join(out)


def floor_ms(data, p):
    return data["floor_bytes"][p] / data["copy_bandwidth"] * 1e3


def contender_tables(data):
    """Per pipeline: each contender's median, Mpixel/s, multiple of the floor, difference."""
    rows = data["results"]
    out = []
    for p in PIPELINES:
        prow = [r for r in rows if r["pipeline"] == p]
        if not prow:
            continue
        px = data["pixels"][p]
        fl = floor_ms(data, p)
        out.append(f"**{p}** ({px / 1e6:.1f} Mpixel; floor {fl:.2f} ms)")
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
            out.append(f"| {label} | {ms:.2f} | {px / ms / 1e3:.0f} | {ms / fl:.1f} | {d} |")
        out.append("")
    return "\n".join(out).rstrip("\n")


def ratio_table(data):
    """parac's best path against Halide's and OpenCV's (how many times faster parac is)."""
    rows = data["results"]
    out = ["| pipeline | parac best | vs Halide best | vs Halide CPU | vs Halide OpenCL "
           "| vs OpenCV CPU | parac CPU path vs Halide CPU |",
           "|---|---|---:|---:|---:|---:|---:|"]
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
    return "\n".join(out)


def loc_counts(data):
    """Per pipeline: {parac, hand_kernels, hand_host, halide_algorithm, halide_schedule_cpu,
    halide_schedule_gpu, opencv}; the Python counts come from the run (None without it)."""
    loc = ((data or {}).get("python") or {}).get("loc") or {}
    out = {}
    for p in PIPELINES:
        lp = loc.get(p, {})
        out[p] = dict(parac=sum(report.parac_loc(p).values()),
                      hand_kernels=sum(report.hand_loc(p).values()), hand_host=report.host_loc(p),
                      **{k: lp.get(k) for k in ("halide_algorithm", "halide_schedule_cpu",
                                                "halide_schedule_gpu", "opencv")})
    return out


def loc_table(data):
    """Lines of code: parac, the hand OpenCL, Halide's algorithm and schedules, OpenCV."""
    out = ["| pipeline | parac | hand OpenCL kernels + host | Halide algorithm | "
           "Halide CPU schedule | Halide GPU schedule | OpenCV |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for p, c in loc_counts(data).items():
        hh = c["hand_host"]

        def get(k):
            return "-" if c[k] is None else c[k]
        out.append(
            f"| {p} | {c['parac']} | {c['hand_kernels']} + {hh if hh is not None else '?'} "
            f"| {get('halide_algorithm')} | {get('halide_schedule_cpu')} "
            f"| {get('halide_schedule_gpu')} | {get('opencv')} |")
    return "\n".join(out)


def kernel_table(data):
    """parac's searched plan per region: its kernel's time and the baseline kernel's."""
    ks = data.get("kernels") or []
    if not ks:
        return ""
    out = ["| program | region | plan | ms | baseline ms |", "|---|---|---|---:|---:|"]
    for k in ks:
        out.append(f"| {k['program']} | {k['region']} | {k['plan']} | {k['ms']:.2f} "
                   f"| {k['baseline_ms']:.2f} |")
    return "\n".join(out)


def summary_table(data):
    """One table: a row per contender, a column per pipeline, the median ms and the multiple
    of the floor; a contender with no result at all is left out (`unavailable` says why)."""
    rows = data["results"]
    present = [(k, l) for k, l in ORDER
               if any(r["contender"] == k and r.get("status") == "ok" for r in rows)]
    out = ["| contender | " + " | ".join(
        f"{p} ({data['pixels'][p] / 1e6:.1f} Mpx)" for p in PIPELINES) + " |",
        "|---|" + "---:|" * len(PIPELINES)]
    out.append("| *the floor* | " + " | ".join(f"*{floor_ms(data, p):.2f}*" for p in PIPELINES)
               + " |")
    for key, label in present:
        cells = []
        for p in PIPELINES:
            r = next((x for x in rows if x["pipeline"] == p and x["contender"] == key), None)
            if r is None:
                cells.append("-")
            elif r.get("status") != "ok":
                cells.append("unavailable")
            else:
                ms = r["median_ms"]
                cells.append(f"{ms:.2f} ({ms / floor_ms(data, p):.1f}x)")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def unavailable(data):
    """[(contender label, reason)] of the contenders that could not run (once each)."""
    seen = {}
    for r in data["results"]:
        if r.get("status") != "ok":
            seen.setdefault(dict(ORDER).get(r["contender"], r["contender"]),
                            r.get("reason", "?"))
    return list(seen.items())


def differences(data):
    """{contender label: {pipeline: diff text}} of the outputs that are not exact."""
    out = {}
    for key, label in ORDER:
        d = {r["pipeline"]: diff_text(r) for r in data["results"]
             if r["contender"] == key and r.get("status") == "ok"
             and diff_text(r) not in ("exact", "-")}
        if d:
            out[label] = d
    return out


def chart(data, png, title=""):
    """Mpixel/s of every contender on each pipeline (log scale), as a PNG; False without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = [r for r in data["results"] if r.get("status") == "ok"]
    present = [(k, l) for k, l in ORDER if any(r["contender"] == k for r in rows)]
    fig, ax = plt.subplots(figsize=(11, 6), dpi=100)
    width = 0.8 / max(1, len(present))
    cmap = plt.get_cmap("tab10")
    for i, (key, label) in enumerate(present):
        xs, ys = [], []
        for j, p in enumerate(PIPELINES):
            r = next((x for x in rows if x["pipeline"] == p and x["contender"] == key), None)
            if r:
                xs.append(j + (i - (len(present) - 1) / 2) * width)
                ys.append(data["pixels"][p] / r["median_ms"] / 1e3)
        ax.bar(xs, ys, width, label=label, color=cmap(i % 10))
    ax.set_yscale("log")
    ax.set_xticks(range(len(PIPELINES)))
    ax.set_xticklabels(PIPELINES)
    ax.set_ylabel("Mpixel/s of the input (log scale; higher is better)")
    ax.set_title(title or "The four pipelines of APPS.md, whole calls", fontsize=10)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return True


KERNELS_TEXT = (
    "**parac's searched plans, per kernel** (profiling events of the search, ms; the baseline "
    "plan beside). A region's kernel that alone takes longer than Halide's whole pipeline is "
    "where parac loses most.")
RATIO_TEXT = (
    "**parac against the others** (how many times faster parac is; below 1 means slower). "
    "parac's best path is the fastest of its OpenCL plans and its CPU path; Halide's best the "
    "faster of its two schedules.")
LOC_TEXT = (
    "**Lines of code** (non-blank, non-comment; as the paper's Table 2). parac: the `parac!` "
    "block; hand OpenCL: its kernels and its host code in `benches/hand/mod.rs`; Halide: the "
    "algorithm and each schedule apart; OpenCV: the function making the calls.")


def tables(data):
    out = [header(data), "", contender_tables(data), "", RATIO_TEXT, "", ratio_table(data), "",
           LOC_TEXT, "", loc_table(data), ""]
    ks = kernel_table(data)
    if ks:
        out += [KERNELS_TEXT, "", ks, ""]
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
