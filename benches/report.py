#!/usr/bin/env python3
"""The benchmark report (its tables, for `benches/pages.py`, which writes docs/benchmarks.md from
one run of every bench): reads what `cargo bench --bench apps` left under criterion's directory
(every `*/new/benchmark.json` and `estimates.json`, and `parac-extra/`: device, copy bandwidth,
bytes per pipeline, build and first-call times, the generated OpenCL), counts lines of code, and
writes the markdown tables and the chart.

    python3 benches/report.py [--criterion DIR] [--update docs/benchmarks.md]

Without --update the tables go to stdout; with it they replace what lies between
`<!-- report:begin -->` and `<!-- report:end -->` in that file. The chart needs matplotlib
(`pip install matplotlib`); without it the tables are still written. Only the standard library
otherwise. The criterion directory is, as criterion's: $CRITERION_HOME, else
$CARGO_TARGET_DIR/criterion, else target/criterion.
"""

import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PIPELINES = ["laplacian", "sharpen", "blur", "unsharp"]
STAGES = {
    "laplacian": ["h", "down", "up_lap"],
    "sharpen": ["down", "up", "edge", "mean", "final"],
    "blur": ["bx", "out"],
    "unsharp": ["gray", "vertical", "horizontal_ratio"],
}
# Whole-pipeline contenders, in table order, with their labels.
CONTENDERS = [
    ("hand_opencl", "hand OpenCL"),
    ("hand_opencl_stages", "hand OpenCL, stage kernels"),
    ("hand_opencl_call", "hand OpenCL + transfers"),
    ("parac_opencl_search", "parac OpenCL, Search"),
    ("parac_opencl_baseline", "parac OpenCL, Baseline"),
    ("parac_cpu", "parac CPU path"),
    ("crates", "crates"),
    ("image_filter3x3", "image filter3x3"),
    ("image_unsharpen", "image unsharpen"),
]
LABEL = dict(CONTENDERS)

# Lines of each stage in examples/pipelines/<p>.rs start at the first line matching these
# patterns (in order); lines before the first stage and the two closing lines are "shared"
# (the signature, constants, intermediates, host scalars).
PARAC_STAGE_STARTS = {
    "laplacian": [("h", r"parac_border_rule br \{"), ("down", r"parac_border_rule br1 \{"),
                  ("up_lap", r"parac_iterator it2\(")],
    "sharpen": [("down", r"parac_iterator it\(0:M/4"), ("up", r"parac_iterator it1\("),
                ("edge", r"parac_border_rule bs"), ("mean", r"let mean:"),
                ("final", r"parac_border_rule bc")],
    "blur": [("bx", r"parac_iterator it\("), ("out", r"parac_iterator it1\(")],
    "unsharp": [("gray", r"parac_iterator g\("), ("vertical", r"parac_border_rule gray_rows"),
                ("horizontal_ratio", r"parac_border_rule by_cols")],
}
# The hand-written kernel file of each stage (benches/hand/).
HAND_FILES = {
    "laplacian": {"h": ["laplacian_h.cl"], "down": ["laplacian_down.cl"],
                  "up_lap": ["laplacian_up.cl"]},
    "sharpen": {"down": ["sharpen_down.cl"], "up": ["sharpen_up.cl"],
                "edge": ["sharpen_sobel.cl"], "mean": ["sharpen_mean.cl"],
                "final": ["sharpen_final.cl"], "fused": ["sharpen_fused.cl"]},
    "blur": {"bx": ["blur_bx.cl"], "out": ["blur_out.cl"], "fused": ["blur_fused.cl"]},
    "unsharp": {"gray": ["unsharp_gray.cl"], "vertical": ["unsharp_vertical.cl"],
                "horizontal_ratio": ["unsharp_horizontal.cl"]},
}


def criterion_dir(arg):
    if arg:
        return Path(arg)
    if os.environ.get("CRITERION_HOME"):
        return Path(os.environ["CRITERION_HOME"])
    if os.environ.get("CARGO_TARGET_DIR"):
        return Path(os.environ["CARGO_TARGET_DIR"]) / "criterion"
    return ROOT / "target" / "criterion"


def load_results(cdir, since=None):
    """{(group, function, parameter or None): seconds per iteration (median)}; with `since` (a
    time.time() value), only the results criterion wrote at or after it (one run's)."""
    out = {}
    for bj in cdir.glob("**/new/benchmark.json"):
        est = bj.parent / "estimates.json"
        try:
            if since is not None and est.stat().st_mtime < since:
                continue
            b = json.loads(bj.read_text())
            e = json.loads(est.read_text())
        except (OSError, ValueError):
            continue
        out[(b["group_id"], b["function_id"], b.get("value_str"))] = (
            e["median"]["point_estimate"] / 1e9)
    return out


def read_json(path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


# ---- lines of code --------------------------------------------------------------------------

def code_lines_rust(lines):
    """Non-blank lines that are not only a comment (// or ///)."""
    return [l for l in lines if l.strip() and not l.strip().startswith("//")]


def code_lines_c(text):
    """Non-blank, non-comment lines of C (// and /* */ comments removed)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out = []
    for l in text.splitlines():
        l = re.sub(r"//.*", "", l)
        if l.strip():
            out.append(l)
    return out


def parac_loc(p):
    lines = (ROOT / "examples" / "pipelines" / f"{p}.rs").read_text().splitlines()
    # The body of parac! { ... }: from the parac! line on.
    start = next(i for i, l in enumerate(lines) if "parac::parac!" in l)
    body = lines[start:]
    code = code_lines_rust(body)
    counts = {"shared": 0}
    starts = PARAC_STAGE_STARTS[p]
    cur = "shared"
    for i, l in enumerate(code):
        for stage, pat in starts:
            if re.search(pat, l):
                cur = stage
        if i >= len(code) - 2:  # closing `}` of the function and of parac!
            cur = "shared"
        counts[cur] = counts.get(cur, 0) + 1
    return counts


def hand_loc(p):
    out = {}
    for stage, files in HAND_FILES[p].items():
        out[stage] = sum(len(code_lines_c((ROOT / "benches" / "hand" / f).read_text()))
                         for f in files)
    return out


def host_loc(p):
    """Lines of the pipeline's section of the hand harness (benches/hand/mod.rs)."""
    lines = (ROOT / "benches" / "hand" / "mod.rs").read_text().splitlines()
    try:
        s = next(i for i, l in enumerate(lines) if l.startswith(f"// ---- {p} "))
    except StopIteration:
        return None
    e = next((i for i in range(s + 1, len(lines)) if lines[i].startswith("// ---- ")),
             len(lines))
    return len(code_lines_rust(lines[s + 1:e]))


def generated_loc(p, gen_dir):
    """Generated OpenCL lines per stage, as two dicts: the baseline plan's kernels and helpers,
    and every plan candidate the program holds. Each top-level function goes to the region its
    name carries (`r<k>_<name>` baseline kernels, `r<k>_<name>__<label>` candidates, `..._r<k>_...`
    helpers); the rest (header, constants) is shared."""
    path = gen_dir / f"{p}.cl"
    if not path.exists():
        return None, None
    base = {"shared": 0}
    every = {"shared": 0}
    region, variant, depth, pending = None, False, 0, 0
    for raw in path.read_text().splitlines():
        code = bool(code_lines_c(raw))
        if depth == 0:
            head = raw.split("(")[0] if "(" in raw else ""
            m = re.search(r"(?<![A-Za-z0-9])r(\d+)_(\w*)", head)
            if m and raw.rstrip().endswith("{"):
                region, variant = int(m.group(1)), "__" in m.group(2)
            elif raw.startswith("__kernel __attribute__"):
                pending += 1  # the attribute line of the next kernel
                continue
            else:
                region, variant = None, False
        if code:
            key = "shared"
            if region is not None:
                key = STAGES[p][region] if region < len(STAGES[p]) else f"region {region}"
            n = 1 + pending
            pending = 0
            every[key] = every.get(key, 0) + n
            if not variant:
                base[key] = base.get(key, 0) + n
        depth += raw.count("{") - raw.count("}")
        if depth <= 0:
            depth, region, variant = 0, None, False
    return base, every


# ---- tables ---------------------------------------------------------------------------------

def fmt_rate(pixels, t):
    return f"{pixels / t / 1e6:,.0f}" if t else "–"


def fmt_ms(t):
    return f"{t * 1e3:,.2f}" if t is not None else "–"


def present_contenders(res):
    """The whole-pipeline contenders with a result, in table order."""
    return [c for c, _ in CONTENDERS if any((p, c, None) in res for p in PIPELINES)]


def whole_table(res, info):
    """Every whole-pipeline contender: Melem/s and the median ms."""
    sizes = info.get("sizes", {})
    present = present_contenders(res)
    out = ["Throughput in Melem/s (million input pixels per second; higher is better), median "
           "time per call in ms in parentheses.", ""]
    out.append("| pipeline (size) | " + " | ".join(LABEL[c] for c in present) + " |")
    out.append("|---|" + "---|" * len(present))
    for p in PIPELINES:
        m, n = sizes.get(p, (0, 0))
        cells = []
        for c in present:
            t = res.get((p, c, None))
            cells.append(f"{fmt_rate(m * n, t)} ({fmt_ms(t)})" if t else "–")
        out.append(f"| {p} ({m}x{n}) | " + " | ".join(cells) + " |")
    return "\n".join(out)


def floor_table(res, info):
    """The hand pipeline, parac and the best crate against the device's copy floor."""
    bw = info.get("copy_bandwidth_bytes_per_s")
    fbytes = info.get("floor_bytes", {})
    if not bw:
        return "No OpenCL device: no floor."
    out = [
        "`hand best` is the faster of the hand pipeline's two forms (fused, stage kernels), data "
        "on the device; `hand call` adds an upload and a download (copies). `best crate` is the "
        "fastest crate contender. The last three columns give how many times faster the searched "
        "parac call is (below 1: slower). The floor is the time to read every input once and "
        "write every output once at the device's copy bandwidth "
        f"({bw / 1e9:.1f} GB/s, bytes read plus written, from a "
        f"{info.get('copy_bytes', 0) >> 20} MiB `clEnqueueCopyBuffer`); each time is given as a "
        "multiple of it.", ""]
    out.append("| pipeline | bytes in + out | floor (ms) | hand best (x floor) | hand call (x floor) "
               "| parac Search (x floor) | parac Baseline (x floor) | parac CPU (x floor) | "
               "best crate (x floor) | parac Search speed: vs hand best | vs hand call | "
               "vs best crate |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for p in PIPELINES:
        b = fbytes.get(p)
        fl = b / bw if b else None
        hands = [res.get((p, c, None)) for c in ("hand_opencl", "hand_opencl_stages")]
        hands = [h for h in hands if h]
        best = min(hands) if hands else None
        crates = [res.get((p, c, None)) for c in ("crates", "image_filter3x3", "image_unsharpen")]
        crates = [t for t in crates if t]
        crate = min(crates) if crates else None
        call = res.get((p, "hand_opencl_call", None))
        base = res.get((p, "parac_opencl_baseline", None))
        srch = res.get((p, "parac_opencl_search", None))
        cpu = res.get((p, "parac_cpu", None))

        def x(t):
            return f"{fmt_ms(t)} ({t / fl:,.1f}x)" if (t and fl) else fmt_ms(t)

        def speed(other):
            # How many times faster the searched parac call is than `other` (< 1: slower).
            return f"{other / srch:,.2f}x" if (other and srch) else "–"
        out.append(
            f"| {p} | {b / 1e6:,.1f} MB | {fmt_ms(fl)} | {x(best)} | {x(call)} | {x(srch)} | "
            f"{x(base)} | {x(cpu)} | {x(crate)} | {speed(best)} | {speed(call)} | "
            f"{speed(crate)} |" if b else f"| {p} | – | – | – | – | – | – | – | – | – | – | – |")
    return "\n".join(out)


def stages_table(res, info):
    """Per stage: the hand kernels' device time and the closest crate call's wall time."""
    sizes = info.get("sizes", {})
    out = ["Hand OpenCL: the profiled device time of the stage's kernels (data in place); crates: "
           "the wall time of the stage's closest crate call (`benches/crates.rs`). Melem/s counts "
           "the pipeline's input pixels, so that the stages of a pipeline compare by time.", ""]
    out.append("| pipeline | stage | hand OpenCL ms | hand OpenCL Melem/s | crates ms | "
               "crates Melem/s |")
    out.append("|---|---|---|---|---|---|")
    for p in PIPELINES:
        m, n = sizes.get(p, (0, 0))
        for s in STAGES[p]:
            h = res.get((f"{p}_stages", "hand_opencl", s))
            c = res.get((f"{p}_stages", "crates", s))
            out.append(f"| {p} | {s} | {fmt_ms(h)} | {fmt_rate(m * n, h)} | {fmt_ms(c)} | "
                       f"{fmt_rate(m * n, c)} |")
    return "\n".join(out)


FIRST_CALL_COLUMNS = [
    ("hand_build", "hand: build"), ("hand_first_call", "hand: first call"),
    ("hand_second_call", "hand: 2nd call"),
    ("parac_opencl_baseline_open", "parac Baseline: open"),
    ("parac_opencl_baseline_first_call", "parac Baseline: first call"),
    ("parac_opencl_baseline_second_call", "parac Baseline: 2nd call"),
    ("parac_opencl_search_first_call", "parac Search: first call"),
    ("parac_opencl_search_second_call", "parac Search: 2nd call"),
    ("parac_cpu_first_call", "parac CPU: first call"),
    ("parac_cpu_second_call", "parac CPU: 2nd call")]


def first_call_table(first):
    """Program builds and first calls with every cache off (the bench's first-call child)."""
    out = ["| pipeline | " + " | ".join(c[1] for c in FIRST_CALL_COLUMNS) + " |",
           "|---|" + "---|" * len(FIRST_CALL_COLUMNS)]
    for p in PIPELINES:
        f = first.get(p, {})
        out.append(f"| {p} | " + " | ".join(fmt_ms(f.get(k)) for k, _ in FIRST_CALL_COLUMNS)
                   + " |")
    return "\n".join(out)


def loc_rows(p, gen_dir):
    """Per stage of pipeline `p`: (stage, parac, hand, generated baseline, generated every
    candidate), then the host code's row, then the totals; None where not known."""
    pl = parac_loc(p)
    hl = hand_loc(p)
    gb, ga = generated_loc(p, gen_dir) if gen_dir else (None, None)
    rows = []
    for s in STAGES[p] + [k for k in hl if k not in STAGES[p]] + ["shared"]:
        rows.append((s, pl.get(s), hl.get(s), gb.get(s) if gb else None,
                     ga.get(s) if ga else None))
    host = host_loc(p)
    rows.append(("host code", None, host, None, None))
    rows.append(("total", sum(pl.values()), sum(hl.values()) + (host or 0),
                 sum(gb.values()) if gb else None, sum(ga.values()) if ga else None))
    return rows


def loc_table(gen_dir):
    """Lines of code per stage: parac, hand OpenCL, the OpenCL parac generates."""
    out = ["| pipeline | stage | parac | hand OpenCL | generated, baseline plan | "
           "generated, every plan candidate |", "|---|---|---|---|---|---|"]
    for p in PIPELINES:
        for s, *cells in loc_rows(p, gen_dir):
            cells = ["–" if v is None else str(v) for v in cells]
            if s == "total":
                out.append(f"| **{p}** | **total** | " + " | ".join(f"**{c}**" for c in cells)
                           + " |")
            else:
                out.append(f"| {p} | {s} | " + " | ".join(cells) + " |")
    return "\n".join(out)


FIRST_CALL_TEXT = (
    "Measured once, in a fresh process with parac's program cache (`PARAC_CACHE=0`) and PoCL's "
    "kernel cache (`POCL_KERNEL_CACHE=0`) off, so every program is compiled from source; times "
    "in ms. PoCL compiles each kernel for its work-group size at its first launch, so the first "
    "call carries part of the compilation even after the build. `open`: creating the runtime "
    "(device, context, queue); parac builds its programs during the first call.")

LOC_TEXT = (
    "Non-blank, non-comment lines. parac: the pipeline's `parac!` source (`examples/pipelines/`), "
    "per stage; `shared` is the signature, constants, intermediates and host scalars. Hand: the "
    "kernels (`benches/hand/*.cl`, one file per stage, plus the fused kernels) and the pipeline's "
    "host code in `benches/hand/mod.rs` (the shared harness of device, buffers and launches not "
    "counted). Generated: the OpenCL parac emits for the pipeline (`PARAC_DUMP`), per region: the "
    "baseline plan's kernels and helpers, and every candidate kernel of the plan search that the "
    "program holds; `shared` is its header and constants.")


def tables(res, info, first, gen_dir):
    out = ["### Whole pipelines\n", whole_table(res, info), "",
           "### Hand OpenCL against parac, and the floor\n", floor_table(res, info), "",
           "### Stages\n", stages_table(res, info), ""]
    if first:
        out += ["### Program build and first call\n", FIRST_CALL_TEXT, "",
                first_call_table(first), ""]
    out += ["### Lines of code (as the paper's Table 1)\n", LOC_TEXT, "", loc_table(gen_dir), ""]
    return "\n".join(out)


def chart(res, info, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install matplotlib): no chart", file=sys.stderr)
        return False
    sizes = info.get("sizes", {})
    present = [c for c, _ in CONTENDERS if any((p, c, None) in res for p in PIPELINES)]
    fig, ax = plt.subplots(figsize=(11, 6.2), dpi=110)
    width = 0.8 / max(1, len(present))
    cmap = plt.get_cmap("tab10")
    for k, c in enumerate(present):
        xs, ys = [], []
        for i, p in enumerate(PIPELINES):
            t = res.get((p, c, None))
            if t:
                m, n = sizes.get(p, (0, 0))
                xs.append(i + (k - (len(present) - 1) / 2) * width)
                ys.append(m * n / t / 1e6)
        ax.bar(xs, ys, width, label=LABEL[c], color=cmap(k % 10))
    ax.set_yscale("log")
    ax.set_xticks(range(len(PIPELINES)))
    ax.set_xticklabels([f"{p}\n{sizes.get(p, ['?', '?'])[0]}x{sizes.get(p, ['?', '?'])[1]}"
                        for p in PIPELINES])
    ax.set_ylabel("Melem/s (input pixels, log scale)")
    dev = info.get("device", "no OpenCL device")
    ax.set_title(f"Four pipelines of APPS.md — {dev}", fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.13))
    fig.tight_layout()
    fig.savefig(png)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--criterion", help="criterion's output directory")
    ap.add_argument("--update", help="markdown file whose report section to replace")
    ap.add_argument("--png", help="where to write the chart (default: none)")
    a = ap.parse_args()
    cdir = criterion_dir(a.criterion)
    res = load_results(cdir)
    if not res:
        sys.exit(f"no criterion results under {cdir}: run `cargo bench --bench apps` first")
    extra = cdir / "parac-extra"
    info = read_json(extra / "info.json")
    first = read_json(extra / "first_call.json")
    gen = extra / "generated"
    text = tables(res, info, first, gen if gen.is_dir() else None)
    if a.png:
        if chart(res, info, a.png):
            print(f"wrote {a.png}", file=sys.stderr)
    if a.update:
        path = Path(a.update)
        doc = path.read_text()
        begin, end = "<!-- report:begin -->", "<!-- report:end -->"
        if begin not in doc or end not in doc:
            sys.exit(f"{path} has no {begin} ... {end} section")
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        path.write_text(f"{head}{begin}\n{text}\n{end}{tail}")
        print(f"updated {path}", file=sys.stderr)
    else:
        print(text)


if __name__ == "__main__":
    main()
