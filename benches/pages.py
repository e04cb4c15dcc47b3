#!/usr/bin/env python3
"""docs/benchmarks.md from one run: builds the benches, runs every bench target
(`cargo bench --bench X`) and every peer script of benches/peers/ (Halide and OpenCV, in the
virtualenv benches/peers/setup.sh makes), then writes docs/benchmarks.md whole and one PNG chart
per topic (docs/benchmarks/<topic>.png).

    python3 benches/pages.py                      # the full run (see EXPECTED_S for how long)
    python3 benches/pages.py --only windows,own   # those topics' runs; the others as last left
    python3 benches/pages.py --from-existing      # no runs: the page from what the last run left
    python3 benches/pages.py --quick [--only ...] # small images, short times: checks the script

What each run leaves is kept in `<criterion dir>/parac-extra/pages/` (its output, the criterion
medians it wrote, the JSON files of parac-extra/ it wrote, and state.json: the command, time,
exit status, commit and machine of each run), so that the page reads only what one run measured.
A quick run is marked as such on its page and, unless --out says otherwise, writes its page
under that folder (quick/benchmarks.md), never docs/benchmarks.md.

Standard library and matplotlib (`pip install matplotlib`; without it, no charts). The criterion
directory is criterion's: $CRITERION_HOME, else $CARGO_TARGET_DIR/criterion, else
target/criterion. The tables themselves come from benches/report.py, benches/peers_report.py
and benches/plans_report.py, and from this file for the benches that only print theirs.
"""

import argparse
import ctypes
import ctypes.util
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
ROOT = BENCHES.parent
sys.path.insert(0, str(BENCHES))
import peers_report  # noqa: E402
import plans_report  # noqa: E402
import report  # noqa: E402

VENV_PYTHON = BENCHES / "peers" / ".venv" / "bin" / "python"

TOPICS = {
    "apps": "The four pipelines of APPS.md",
    "plans": "The optimization model's plans",
    "windows": "Windows",
    "calls": "First calls",
    "time_steps": "Time steps",
    "own": "Pipelines of our own against Halide",
    "histogram": "Histograms and scans",
    "opencv_ops": "OpenCV's functions",
    "levels": "The CPU path's vector levels",
    "loc": "Lines of code",
}

# Expected seconds of each run on the developers' 2-core VM, with an OpenCL CPU device (PoCL)
# and without any OpenCL device: what the script's plan and the page say about the duration.
# Without OpenCL: the runs of this script there (quick runs scaled to the full sizes and times).
# With PoCL: those plus what the benches' OpenCL parts took there before (the plan searches of
# apps, peers and plans; calls waits for each pipeline's background search, 20 s to 220 s).
EXPECTED_S = {
    "apps": (360, 130), "peers": (360, 140), "plans": (300, 0), "windows": (35, 35),
    "opencv_windows": (5, 5), "histogram": (22, 22), "opencv_histogram": (10, 3),
    "opencv_ops": (70, 70), "opencv_ops_py": (30, 6), "own_peers": (55, 55),
    "time_steps": (190, 190), "calls": (720, 15), "loc_py": (2, 2),
    "levels_peers": (25, 25), "levels_own": (55, 55),
    # A build of its own (the dependencies too), then the runs.
    "levels_native_peers": (450, 450), "levels_native_own": (60, 60),
}

# The CPU path built for this processor alone (`-C target-cpu=native`), in a target folder of
# its own: what the default build's run-time choice of level is measured against.
NATIVE = {"RUSTFLAGS": "-C target-cpu=native", "CARGO_TARGET_DIR": "target/native"}


# ---- the runs -------------------------------------------------------------------------------

class Job:
    """One run: a bench target (`cargo bench --bench NAME [-- ARGS]`) or a peer script (the
    virtualenv's python)."""

    def __init__(self, key, topics, bench=None, script=None, env=None, args=(),
                 criterion=False, needs=(), expected="", code=None):
        self.key, self.topics, self.bench, self.script = key, topics, bench, script
        self.env, self.args, self.criterion = dict(env or {}), list(args), criterion
        self.needs, self.expected, self.code = needs, expected or key, code

    def argv(self):
        if self.code:
            return [str(VENV_PYTHON), "-c", self.code]
        if self.bench:
            cmd = ["cargo", "bench", "--bench", self.bench]
            return cmd + (["--"] + self.args if self.args else [])
        return [str(VENV_PYTHON), str(self.script)] + self.args

    def command(self):
        """The command as a person types it (environment first, paths from the root)."""
        env = " ".join(f"{k}={v}" for k, v in sorted(self.env.items()))
        argv = self.argv()
        if self.code:
            argv = ["benches/peers/.venv/bin/python", "-c", f"'{self.code}'"]
        elif not self.bench:
            argv = ["benches/peers/.venv/bin/python", os.path.relpath(self.script, ROOT)] + \
                self.args
        return (env + " " if env else "") + " ".join(argv)


def cpu_levels(machine):
    """The CPU path's vector levels this processor runs as themselves (CpuIsa::available)."""
    flags = set(machine.get("flags_all", []))
    v3 = {"avx2", "fma", "bmi1", "bmi2", "abm", "popcnt"} <= flags
    v4 = v3 and {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd"} <= flags
    return ["portable"] + (["avx2"] if v3 else []) + (["avx512"] if v4 else [])


def jobs(quick, machine):
    """Every run of the full (or quick) run, in the order they run."""
    small = {"PARAC_BENCH_SMALL": "1"} if quick else {}
    # Criterion's times for the benches that take them from the command line (apps, plans).
    crit = (["--warm-up-time", "0.1", "--measurement-time", "0.3"] if quick
            else ["--warm-up-time", "0.5", "--measurement-time", "2"])
    secs = "0.3" if quick else "2"
    gpu = any(d.get("type") == "GPU" for d in machine.get("opencl", {}).get("devices", []))
    has_cl = bool(machine.get("opencl", {}).get("devices"))
    peers = BENCHES / "peers"
    out = []
    # The vector levels first: their peers runs write parac-extra/peers/peers.json too, which
    # the main peers run below then leaves as the last one.
    levels = cpu_levels(machine)
    for isa in levels:
        out.append(Job(f"levels_peers_{isa}", ("levels",), bench="peers", expected="levels_peers",
                       env={**small, "PARAC_CPU_ISA": isa, "PARAC_PEERS_CONTENDERS": "parac_cpu",
                            "PARAC_PEERS_SECONDS": secs}))
        # The widest level is the default: the own_peers run below times it.
        if isa != levels[-1]:
            out.append(Job(f"levels_own_{isa}", ("levels",), bench="own_peers",
                           expected="levels_own", env={**small, "PARAC_CPU_ISA": isa}))
    out.append(Job("levels_native_peers", ("levels",), bench="peers",
                   env={**small, **NATIVE, "PARAC_PEERS_CONTENDERS": "parac_cpu",
                        "PARAC_PEERS_SECONDS": secs}))
    out.append(Job("levels_native_own", ("levels",), bench="own_peers", env={**small, **NATIVE}))
    out += [
        Job("peers", ("apps",), bench="peers", env={**small, "PARAC_PEERS_SECONDS": secs}),
        Job("apps", ("apps",), bench="apps", env=small, args=crit,
            criterion=True),
        Job("plans", ("plans",), bench="plans", args=crit if quick else [], criterion=True,
            needs=("opencl",),
            env={**small, **({"PARAC_BENCH_PARTS": "blur"} if quick else {})}),
        Job("windows", ("windows",), bench="windows", criterion=True),
        Job("opencv_windows", ("windows",), script=peers / "opencv_windows.py", needs=("venv",)),
        Job("histogram", ("histogram",), bench="histogram", criterion=True),
        Job("opencv_histogram", ("histogram",), script=peers / "opencv_histogram.py",
            needs=("venv",)),
        Job("opencv_ops", ("opencv_ops",), bench="opencv_ops", criterion=True,
            args=["640x480"] if quick else []),
        Job("opencv_ops_py", ("opencv_ops",), script=peers / "opencv_ops.py", needs=("venv",)),
        Job("own_peers", ("own", "levels"), bench="own_peers", env=small),
        Job("time_steps", ("time_steps",), bench="time_steps",
            env={**small, "PARAC_TIME_SECONDS": "0.1" if quick else "2",
                 # The OpenCL part only on a GPU: on a CPU device every band loses to one step
                 # per launch (the model ranks them last) and the part takes many minutes.
                 **({} if gpu and not quick else {"PARAC_TIME_PART": "cpu"})}),
        Job("calls", ("calls",), bench="calls", args=["blur"] if quick else [],
            env={**small, "PARAC_WARM_UP": "auto",
                 # Without an OpenCL device, the runtime a user gets: the CPU path.
                 **({} if has_cl else {"PARAC_DEVICE": "cpu"})}),
        # The Halide and OpenCV functions' lines, as benches/peers/run.py counts them.
        Job("loc_py", ("loc",), needs=("venv",),
            code="import json, sys; sys.path.insert(0, \"benches/peers\"); import run; "
                 "print(json.dumps(run.loc_table()))"),
    ]
    return out


def git(*args):
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def commit_info():
    head = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    return {"commit": head, "dirty": dirty}


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


class Store:
    """What the runs left: `<criterion dir>/parac-extra/pages/`, state.json and a file or two
    per run."""

    def __init__(self, cdir):
        self.cdir = cdir
        self.dir = cdir / "parac-extra" / "pages"
        self.path = self.dir / "state.json"
        try:
            self.state = json.loads(self.path.read_text())
        except (OSError, ValueError):
            self.state = {}
        self.state.setdefault("runs", {})

    def save(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.state, indent=1, sort_keys=True))

    def file(self, key, suffix):
        return self.dir / f"{key}.{suffix}"

    def read(self, key, suffix):
        try:
            return self.file(key, suffix).read_text()
        except OSError:
            return None

    def json(self, key, suffix):
        t = self.read(key, suffix)
        try:
            return json.loads(t) if t else None
        except ValueError:
            return None

    def run(self, key):
        return self.state["runs"].get(key)

    def criterion(self, key):
        """{(group, function, value): median seconds} that run `key` wrote."""
        rows = self.json(key, "criterion.json") or []
        return {(g, f, v): t for g, f, v, t in rows}


def tail(text, n=3):
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    return " / ".join(lines[-n:])[-400:]


def venv_status(quick, may_install):
    """(ok, versions or reason): the peers' virtualenv, made with setup.sh where missing."""
    setup = ""
    if not VENV_PYTHON.exists():
        if not may_install:
            return False, "no virtualenv benches/peers/.venv"
        print("pages: making benches/peers/.venv (benches/peers/setup.sh)", flush=True)
        p = subprocess.run(["bash", str(BENCHES / "peers" / "setup.sh")], cwd=ROOT,
                           capture_output=True, text=True)
        setup = p.stdout + p.stderr
        if p.returncode != 0:
            return False, (f"benches/peers/setup.sh failed (exit {p.returncode})"
                           + (f": {tail(setup, 2)}" if setup.strip() else ""))
    probe = ("import importlib.metadata as m, json, platform, cv2, numpy; import halide; "
             "print(json.dumps({'python': platform.python_version(), 'halide': "
             "m.version('halide'), 'opencv': cv2.__version__, 'numpy': numpy.__version__, "
             "'opencv_threads': cv2.getNumThreads()}))")
    p = subprocess.run([str(VENV_PYTHON), "-c", probe], capture_output=True, text=True)
    if p.returncode != 0:
        return False, (f"the virtualenv's Halide/OpenCV do not import (`bash "
                       f"benches/peers/setup.sh` again?): {tail(p.stderr, 1)}")
    return True, json.loads(p.stdout)


def build(selected, log):
    """`cargo bench --no-run` of the bench targets `selected` runs; seconds, or exits."""
    benches = sorted({j.bench for j in selected if j.bench})
    if not benches:
        return 0.0
    cmd = ["cargo", "bench", "--no-run"] + [a for b in benches for a in ("--bench", b)]
    print("pages: " + " ".join(cmd), flush=True)
    t = time.time()
    with open(log, "w") as f:
        p = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        sys.exit(f"pages: the build failed; see {log}")
    return time.time() - t


def run_job(job, store, machine, quick, verbose):
    """Runs `job`, keeps what it left in the store, records it in the state."""
    entry = {"command": job.command(), "quick": quick, "date": now_iso(), "started": time.time(),
             "invocation": store.state.get("invocation"), **commit_info()}
    for need in job.needs:
        if need == "opencl" and not machine.get("opencl", {}).get("devices"):
            entry.update(status="not run", reason="no OpenCL device: " +
                         machine.get("opencl", {}).get("reason", "none found"))
        if need == "venv" and not machine.get("venv", {}).get("ok"):
            entry.update(status="not run", reason=machine.get("venv", {}).get("reason", "?"))
    if entry.get("status"):
        store.state["runs"][job.key] = entry
        store.save()
        print(f"pages: {job.key}: not run: {entry['reason']}", flush=True)
        return
    print(f"pages: {job.key}: {entry['command']}", flush=True)
    start = time.time()
    argv = job.argv()
    # Criterion's directory the store's, whatever target folder the run builds in.
    env = {**os.environ, "CRITERION_HOME": str(store.cdir), **job.env}
    out_path, err_path = store.file(job.key, "log"), store.file(job.key, "err")
    store.dir.mkdir(parents=True, exist_ok=True)
    with open(out_path, "w") as out, open(err_path, "w") as err:
        if verbose:
            p = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                 stderr=err, text=True)
            for line in p.stdout:
                out.write(line)
                sys.stdout.write(line)
            rc = p.wait()
        else:
            rc = subprocess.run(argv, cwd=ROOT, env=env, stdout=out, stderr=err).returncode
    secs = time.time() - start
    entry.update(seconds=round(secs, 1), rc=rc,
                 status="ok" if rc == 0 else "failed",
                 reason="" if rc == 0 else f"exit {rc}: {tail(store.read(job.key, 'err'))}")
    # What the run wrote under criterion's directory: only files written since it started.
    if job.criterion:
        res = report.load_results(store.cdir, since=start - 1)
        store.file(job.key, "criterion.json").write_text(
            json.dumps([[g, f, v, t] for (g, f, v), t in sorted(res.items(), key=str)]))
    extra = store.cdir / "parac-extra"
    copies = {"apps": [("info.json", "info.json"), ("first_call.json", "first_call.json")],
              "peers": [("peers/peers.json", "peers.json")]}
    for src, name in copies.get(job.bench, []):
        dst = store.file(job.key, name)
        dst.unlink(missing_ok=True)
        s = extra / src
        if s.exists() and s.stat().st_mtime >= start - 1:
            shutil.copyfile(s, dst)
    if job.key == "apps":
        gen, dst = extra / "generated", store.dir / "apps.generated"
        shutil.rmtree(dst, ignore_errors=True)
        if gen.is_dir() and gen.stat().st_mtime >= start - 1:
            shutil.copytree(gen, dst)
    store.state["runs"][job.key] = entry
    store.save()
    print(f"pages: {job.key}: {entry['status']}, {secs:.0f} s" +
          (f" ({entry['reason']})" if entry["reason"] else ""), flush=True)


# ---- the machine ----------------------------------------------------------------------------

def cpuinfo():
    info = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if ":" in line:
                k, v = (t.strip() for t in line.split(":", 1))
                info.setdefault(k, v)
    except OSError:
        pass
    return info


def caches():
    out = []
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for d in sorted(base.glob("index*")):
        try:
            level = (d / "level").read_text().strip()
            kind = (d / "type").read_text().strip()
            size = (d / "size").read_text().strip()
        except OSError:
            continue
        name = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind, "")
        out.append(f"{name} {size}")
    return out


def opencl_devices():
    """{"devices": [{platform, name, type, version, driver}], "reason"}, through the OpenCL ICD
    loader (ctypes; no clinfo needed)."""
    name = ctypes.util.find_library("OpenCL") or "libOpenCL.so.1"
    try:
        cl = ctypes.CDLL(name)
    except OSError as e:
        return {"devices": [], "reason": f"no OpenCL ICD loader ({e}); PoCL: `apt-get install "
                "pocl-opencl-icd ocl-icd-opencl-dev`, as .ci/run does"}
    u32, vp, sz = ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t
    cl.clGetPlatformIDs.argtypes = [u32, ctypes.POINTER(vp), ctypes.POINTER(u32)]
    cl.clGetPlatformInfo.argtypes = [vp, u32, sz, vp, ctypes.POINTER(sz)]
    cl.clGetDeviceIDs.argtypes = [vp, ctypes.c_uint64, u32, ctypes.POINTER(vp),
                                  ctypes.POINTER(u32)]
    cl.clGetDeviceInfo.argtypes = [vp, u32, sz, vp, ctypes.POINTER(sz)]

    def text(fn, obj, param):
        n = sz()
        if fn(obj, param, 0, None, ctypes.byref(n)) != 0:
            return "?"
        buf = ctypes.create_string_buffer(n.value)
        fn(obj, param, n.value, buf, None)
        return buf.value.decode(errors="replace").strip()

    n = u32()
    err = cl.clGetPlatformIDs(0, None, ctypes.byref(n))
    if err != 0 or n.value == 0:
        return {"devices": [], "reason": f"no OpenCL platform (clGetPlatformIDs: {err}); PoCL: "
                "`apt-get install pocl-opencl-icd ocl-icd-opencl-dev`, as .ci/run does"}
    plats = (vp * n.value)()
    cl.clGetPlatformIDs(n.value, plats, None)
    devices = []
    for p in plats:
        pname = text(cl.clGetPlatformInfo, p, 0x0902)
        nd = u32()
        if cl.clGetDeviceIDs(p, 0xFFFFFFFF, 0, None, ctypes.byref(nd)) != 0 or not nd.value:
            continue
        devs = (vp * nd.value)()
        cl.clGetDeviceIDs(p, 0xFFFFFFFF, nd.value, devs, None)
        for d in devs:
            t = ctypes.c_uint64()
            cl.clGetDeviceInfo(d, 0x1000, 8, ctypes.byref(t), None)
            kind = {2: "CPU", 4: "GPU", 8: "accelerator"}.get(t.value & 0xE, str(t.value))
            devices.append({"platform": pname, "name": text(cl.clGetDeviceInfo, d, 0x102B),
                            "type": kind, "version": text(cl.clGetDeviceInfo, d, 0x102F),
                            "driver": text(cl.clGetDeviceInfo, d, 0x102D)})
    return {"devices": devices, "reason": "" if devices else "no OpenCL device"}


def machine_info():
    ci = cpuinfo()
    flags = ci.get("flags", "").split()
    shown = ["sse4_2", "avx", "avx2", "fma", "bmi2", "avx512f", "avx512bw", "avx512vl",
             "avx512dq", "avx512cd", "avx512vbmi", "avx512_vnni", "avx512_bf16", "avx512_fp16",
             "amx_tile"]
    mem = ""
    try:
        kb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        mem = f"{kb / 2**20:.1f} GiB"
    except (OSError, AttributeError):
        pass
    os_name = platform.system()
    try:
        rel = Path("/etc/os-release").read_text()
        os_name = re.search(r'PRETTY_NAME="?([^"\n]*)', rel).group(1)
    except (OSError, AttributeError):
        pass
    try:
        rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
    except OSError:
        rustc = "?"
    model = ci.get("model name") or platform.processor() or platform.machine()
    return {
        "cpu": model, "family": ci.get("cpu family"), "model": ci.get("model"),
        "flags": [f for f in shown if f in flags], "flags_all": flags,
        "cores": os.cpu_count(), "memory": mem, "caches": caches(),
        "os": f"{os_name}, Linux {platform.release()}" if platform.system() == "Linux"
        else os_name,
        "rustc": rustc, "python": platform.python_version(), "opencl": opencl_devices(),
    }


# ---- reading what the runs printed ----------------------------------------------------------

def md_tables(text):
    """The markdown tables in `text`: [{caption, header, rows}], a caption being the last
    non-blank line before the table that is not a table line."""
    out, caption, cur = [], "", None
    for line in (text or "").splitlines():
        s = line.strip()
        if s.startswith("|") and s.endswith("|"):
            cells = [c.strip() for c in s[1:-1].split("|")]
            if cur is None:
                cur = {"caption": caption, "header": cells, "rows": []}
                out.append(cur)
            elif all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                continue
            else:
                cur["rows"].append(cells)
        else:
            cur = None
            if s:
                caption = s
    return out


def num(text):
    """The first number in a cell ("1,234.5 ms" -> 1234.5), or None."""
    m = re.search(r"-?\d[\d,]*\.?\d*(?:e-?\d+)?", text or "")
    return float(m.group(0).replace(",", "")) if m else None


def fmt(ms, digits=None):
    """A time in ms with about three significant digits."""
    if ms is None:
        return "–"
    if digits is None:
        digits = 3 if ms < 0.1 else 2 if ms < 10 else 1 if ms < 1000 else 0
    return f"{ms:,.{digits}f}"


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "–"


def table(header, rows, align=None):
    """A markdown table; `align` a string of l/r per column (default: first left, rest
    right)."""
    align = align or "l" + "r" * (len(header) - 1)
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# ---- charts ---------------------------------------------------------------------------------

def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def plain_log(axis):
    """Tick labels of a log axis as plain numbers (10, 20, 50), minor ones unlabeled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def bars(png, groups, series, values, ylabel, title, log=True, horizontal=False, ref=None):
    """A grouped bar chart: values[(group, series)] (missing ones left out); `ref` a value to
    draw a line at (1 for ratios)."""
    plt = pyplot()
    if plt is None:
        return False
    series = [s for s in series if any(values.get((g, s)) for g in groups)]
    if not series:
        return False
    h = max(4.5, 0.35 * len(groups) * max(1, len(series)) / 2.5) if horizontal else 5.5
    fig, ax = plt.subplots(figsize=(11, h), dpi=100)
    width = 0.8 / len(series)
    cmap = plt.get_cmap("tab10")
    for k, s in enumerate(series):
        xs, ys = [], []
        for i, g in enumerate(groups):
            v = values.get((g, s))
            if v:
                xs.append(i + (k - (len(series) - 1) / 2) * width)
                ys.append(v)
        if horizontal:
            ax.barh(xs, ys, width, label=s, color=cmap(k % 10))
        else:
            ax.bar(xs, ys, width, label=s, color=cmap(k % 10))
    if horizontal:
        ax.set_yticks(range(len(groups)))
        ax.set_yticklabels(groups, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel(ylabel)
        if log:
            ax.set_xscale("log")
            plain_log(ax.xaxis)
        ax.grid(axis="x", which="both", alpha=0.3)
    else:
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8, rotation=20 if len(groups) > 6 else 0)
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
            plain_log(ax.yaxis)
        ax.grid(axis="y", which="both", alpha=0.3)
    if ref is not None:
        (ax.axvline if horizontal else ax.axhline)(ref, color="k", lw=0.8)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return True


def lines_chart(png, xs, series, ylabel, xlabel, title):
    """Lines: series {label: [y or None per x]}, log-log."""
    plt = pyplot()
    if plt is None:
        return False
    fig, ax = plt.subplots(figsize=(9, 5.5), dpi=100)
    drawn = False
    for label, ys in series.items():
        pts = [(x, y) for x, y in zip(xs, ys) if y]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
            drawn = True
    if not drawn:
        plt.close(fig)
        return False
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    from matplotlib.ticker import NullLocator
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return True


# ---- the page -------------------------------------------------------------------------------

class Page:
    """What the topics need: the store, the state of the latest invocation, where the charts
    go."""

    def __init__(self, store, out):
        self.store, self.out = store, out
        self.charts = out.parent / out.stem
        self.inv = store.state.get("invocation_info", {})

    def run(self, key):
        return self.store.run(key)

    def ok(self, key):
        r = self.run(key)
        return bool(r) and r.get("status") == "ok"

    def status(self, key, what=None):
        """Why run `key` has nothing to show, as a sentence, or "" when it ran."""
        r = self.run(key)
        what = what or key
        if not r:
            return f"`{what}`: not run yet (`python3 benches/pages.py --only ...`)."
        if r.get("status") == "not run":
            return f"`{what}`: not run: {r.get('reason')}."
        if r.get("status") == "failed":
            return (f"`{what}`: failed ({r.get('reason')}); its output: "
                    f"`<criterion dir>/parac-extra/pages/{key}.log`.")
        return ""

    def provenance(self, keys):
        """A note for runs that are not the latest invocation's, or quick ones."""
        notes = []
        for k in keys:
            r = self.run(k)
            if not r or r.get("status") == "not run":
                continue
            if r.get("quick") and not self.inv.get("quick") and k != "loc_py":
                notes.append(f"`{k}` is from a **quick run** (small images, short times)")
            if r.get("invocation") != self.store.state.get("invocation"):
                notes.append(f"`{k}` is from an earlier run ({r.get('date')}, commit "
                             f"{(r.get('commit') or '?')[:10]}{' + changes' if r.get('dirty') else ''})")
        return ("*Note: " + "; ".join(notes) + ".*") if notes else ""

    def log(self, key):
        return self.store.read(key, "log") if self.ok(key) else None

    def chart(self, name, draw):
        """Draws chart `name` with draw(path); the markdown line for it, or ""."""
        self.charts.mkdir(parents=True, exist_ok=True)
        path = self.charts / f"{name}.png"
        path.unlink(missing_ok=True)
        if draw(path):
            return f"![{name}]({self.charts.name}/{name}.png)"
        return ""


def details(summary, parts):
    """Supporting tables under a topic's one table, folded (a `<details>` block)."""
    body = "\n\n".join(x for x in parts if x and x.strip())
    if not body:
        return ""
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def commands(p, keys):
    """The commands of runs `keys` as they ran, in a sh block."""
    lines = []
    for k in keys:
        r = p.run(k)
        if r and r.get("command"):
            lines.append(r["command"])
    return "```sh\n" + "\n".join(lines) + "\n```" if lines else ""


# ---- the topics -----------------------------------------------------------------------------

APPS_TEXT = """\
The four pipelines of `shared/APPS.md`: laplacian (one level of a Laplacian pyramid: a
horizontal and a vertical filter with subsampling, then upsampling and the difference), sharpen
(a 4x downsample and bilinear upsample, a Sobel edge measure and its global mean, then a gain
with overshoot control), blur (a separable 3x3 box of 12-bit data) and unsharp (an unsharp mask
of an RGB float image through its gray level). Sizes as APPS.md's: 3840x2160 (4K UHD) for
laplacian, sharpen and unsharp, 4802x6408 for blur. Seeded synthetic inputs: structured 8-bit
gray images (ramps, a bright block, noise: flat areas and edges) for laplacian and sharpen,
random 12-bit values for blur, random RGB in [1/255, 1] for unsharp.

**Side by side** (`benches/peers.rs`): every contender timed the same way, whole calls on
images already in memory into outputs allocated once, a warm-up, then calls for at least
`PARAC_PEERS_SECONDS` seconds; the median.

| contender | what |
|---|---|
| parac, OpenCL, searched plan | the `parac!` function of `examples/pipelines/` on the OpenCL device, each region's plan search run to its end in the warm-up |
| parac, OpenCL, model's plan | the same with `PlanPolicy::Model`: the model's first-ranked plan, nothing timed |
| parac, CPU path | the same function on `Runtime::cpu()`: the generated Rust on all cores, interiors vectorized for the processor's widest level |
| hand OpenCL | the hand-optimized kernels of `benches/hand/`, data on the device (kernels only), and as a whole call (upload, kernels, download into host matrices) |
| Halide | Halide's Python JIT (`benches/peers/halide_apps.py`): a CPU schedule in the style of Halide's `apps/`, and an OpenCL schedule on the same OpenCL device |
| OpenCV | the closest idiomatic calls (`benches/peers/opencv_apps.py`), on numpy arrays and through `cv2.UMat` (OpenCL) |

A parac call is what a user calls: host matrices in, host matrices out. On a device whose
memory is the host's (PoCL) its views of the inputs and outputs are the caller's memory
(`CL_MEM_USE_HOST_PTR`): the kernels read and write in place and nothing is copied, so it
compares with the hand kernels alone; on a discrete device it copies, as the hand whole call
does. Every output is compared with the plain Rust references of `tests/common/reference.rs`:
parac's, the hand OpenCL's and Halide's must be exact (unsharp within 1e-4); OpenCV's calls
compute something close but different (their own rounding and border rules;
`benches/peers/README.md` says how each differs), and the table says by how much. The floor is
the time to read each input once and write each output once at the host's copy bandwidth (a
256 MiB `memcpy`, best of 5, bytes read plus written): laplacian `M N + 2 M N + ceil(M/2)
ceil(N/2)` bytes, sharpen `2 M N`, blur `2 M N + 2 (M-2)(N-2)`, unsharp `2 x 3 x 4 M N`."""

HAND_TEXT = """\
**The hand-optimized OpenCL** (`benches/hand/`: one `.cl` file per stage and the fused kernels,
a host harness on `opencl3` with row-padded buffers, launches with their arguments set once and
profiling events) does what an expert does that parac's baseline plan does not: vectors and
several outputs per work-item for 8-bit and float data (`vload16`/`vstore16`, 4 or 8 rows where
rows share their inputs, swizzles for the upsamplings); no border test per access (only a row's
first and last vector take a clamped path; rows padded so whole vectors may be loaded past the
last column); less work (laplacian's `h` only at the even columns `down` reads, sharpen's
upsampling's horizontal pass once for the 4 rows that share it, sharpen's gain as an exact float
division that vectorizes); the mean as a two-kernel reduction whose result stays on the device;
fusion (sharpen's fused form never writes `up` nor `edge`, blur's never writes `bx`); and
choices measured on PoCL (16-bit data one output per work-item, for PoCL's work-group
vectorizer). `tests/hand_opencl.rs` checks every hand stage and pipeline against the
references."""

CRITERION_TEXT = """\
**The image crates, the baseline plan and the stages** (`benches/apps.rs`, criterion: 10
samples, warm-up and measurement as the command says, flat sampling; Melem/s counts the
pipeline's input pixels). Besides the contenders above it times parac with the baseline plan
(one work-item per iteration point), the hand pipeline with one kernel per stage where it has a
fused form, and the image crates' closest calls chained (`benches/crates.rs`:
`fast_image_resize`, `imageproc`, `image`, multi-threaded where the crate is). None of the
crates computes exactly what the pipeline defines (f32 instead of integer arithmetic, other
border rules, other resampling weights, Rec. 709 gray weights: each function of
`benches/crates.rs` says how it differs): they say what a Rust user gets from the crates for a
comparable amount of work. Before timing, the bench checks that the hand pipeline's outputs
equal parac's. Its floor is the OpenCL device's copy bandwidth (a 256 MiB
`clEnqueueCopyBuffer`, profiled)."""


def topic_apps(p):
    out = [APPS_TEXT, ""]
    out.append(commands(p, ["peers", "apps"]))
    out.append("")
    data = p.store.json("peers", "peers.json") if p.ok("peers") else None
    if data is None:
        out.append(p.status("peers") or "`peers`: the run left no peers.json.")
    else:
        out.append(peers_report.header(data))
        out.append("")
        out.append("Median ms of a whole call, and in parentheses the multiple of the floor "
                   "(lower is better):")
        out.append("")
        out.append(peers_report.summary_table(data))
        out.append("")
        diffs = peers_report.differences(data)
        if diffs:
            out.append("Outputs not bit-exact (largest absolute difference from the reference): "
                       + "; ".join(f"{label}: " + ", ".join(f"{pp} {d}" for pp, d in ds.items())
                                   for label, ds in diffs.items()) + ". Every other output is "
                       "exact.")
        else:
            out.append("Every output is exact.")
        miss = peers_report.unavailable(data)
        if miss:
            out.append("")
            out.append("Could not run: " + "; ".join(f"{label} ({why})" for label, why in miss)
                       + ".")
        if not any(r["contender"].startswith(("halide", "opencv")) for r in data["results"]):
            why = p.store.state.get("invocation_info", {}).get("venv", {}).get("reason")
            out.append("")
            out.append(f"Halide and OpenCV: not run{': ' + why if why else ''}.")
        out.append("")
        title = f"The four pipelines of APPS.md, whole calls; {data['machine']}"
        out.append(p.chart("apps", lambda png: peers_report.chart(data, png, title)))
    out += ["", HAND_TEXT, ""]
    more = []
    if data is not None:
        more += [peers_report.RATIO_TEXT, peers_report.ratio_table(data)]
        ks = peers_report.kernel_table(data)
        if ks:
            more += [peers_report.KERNELS_TEXT, ks]
    more.append(CRITERION_TEXT)
    res = p.store.criterion("apps") if p.ok("apps") else {}
    info = p.store.json("apps", "info.json") or {}
    if not res:
        more.append(p.status("apps") or "`apps`: the run left no criterion results.")
    else:
        more += [report.whole_table(res, info), report.floor_table(res, info),
                 report.stages_table(res, info)]
    out.append(details("More from this run: parac against Halide and OpenCV, parac's searched "
                       "kernels, the image crates, the baseline plan and the stages", more))
    out.append("")
    out.append(p.provenance(["peers", "apps"]))
    return "\n".join(out)


PLANS_TEXT = """\
The optimization model's evidence, in one run on the OpenCL device (`benches/plans.rs`): every
pipeline with the baseline plan, with each transform forced alone (`PlanPolicy::Force(label)`:
the regions that have the candidate run it, the others the baseline, at the driver's
work-group size), with the model's first-ranked plan (`model`) and with the searched plan
(`search`, run to its end in the first call); per stage, the kernel times the plan search
measured for every candidate (profiling events, best of three launches: the cleaner measure of
the transforms); and the cost of border rules against the same stencil on a pre-padded input,
as Halide's own performance test measures it (a 3-tap and a 5x5 stencil on 3840x2160 `i32`).
Whole-pipeline times are criterion medians of whole calls; a configuration's first call
(program build, plan search) runs before its measurement and is given on its own.

Labels: `h<W>`/`v<V>` vector parallelism (columns/rows per work-item), `unroll`, `cse` (shared,
hoisted loads), `vmem` (vloadN/vstoreN), `peep` (range-proven shifts, unsigned division, clamp,
abs), `m24` (mul24/mad24), `lds<X>x<Y>` (local-memory tiles), `tree<L>` (tree reduction),
`split` (loop partitioning: the interior box without border checks, the strips with the
baseline kernel), `slide` (windows from rows of column reductions); `@<wg>` the work-group size
(`-`: the driver's). The baseline plan launches at the driver's work-group size, which for
awkward row lengths can starve PoCL's vectorizer; the search times every candidate at 32x4 with
the global size rounded up, so the per-stage table gives that fair baseline. On a CPU device
local memory is ordinary memory and barriers split PoCL's work-item loops, so local-memory
tiles and tree reductions are expected to lose there; the search times them and keeps what
wins. `PARAC_BENCH_PARTS=border,blur,laplacian,sharpen,unsharp` runs only the named parts;
`PARAC_LOG=plan cargo run --release --example sharpen` prints one search's choices and times."""


def plans_chart(rows, png):
    """Speed-up over the baseline plan of each plan, per pipeline."""
    plt = pyplot()
    if plt is None or not rows:
        return False
    pipes = [pp for pp in plans_report.PIPELINES if any(r[0] == pp for r in rows)]
    fig, axes = plt.subplots(1, len(pipes), figsize=(12, 5.5), dpi=100, squeeze=False)
    for ax, pp in zip(axes[0], pipes):
        rs = [r for r in rows if r[0] == pp]
        colors = ["tab:gray" if r[1] == "baseline" else "tab:orange" if r[1] == "model"
                  else "tab:green" if r[1] == "search" else "tab:blue" for r in rs]
        ax.barh(range(len(rs)), [r[3] for r in rs], color=colors)
        ax.set_yticks(range(len(rs)))
        ax.set_yticklabels([r[1] for r in rs], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        plain_log(ax.xaxis)
        ax.axvline(1, color="k", lw=0.8)
        ax.set_title(pp, fontsize=9)
        ax.set_xlabel("speed-up over the baseline plan", fontsize=8)
        ax.grid(axis="x", which="both", alpha=0.3)
    fig.suptitle("Plans of the four pipelines, whole calls (model: orange, search: green)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return True


def topic_plans(p):
    out = [PLANS_TEXT, "", commands(p, ["plans"]), ""]
    if not p.ok("plans"):
        out.append(p.status("plans"))
        return "\n".join(out)
    res = p.store.criterion("plans")

    def median_ms(group, bench):
        t = res.get((group, bench, None))
        return t * 1e3 if t is not None else None
    records = [ln.strip() for ln in (p.log("plans") or "").splitlines()]
    device = next((ln.split(" on ", 1)[1] for ln in (p.store.read("plans", "err") or "")
                   .splitlines() if ln.startswith("plans bench on ")), None)
    if device:
        out += [f"Device: {device}.", ""]
    out += ["Whole pipelines (criterion median of whole calls, ms; speed-up over the baseline "
            "plan):", "", plans_report.pipeline_table(median_ms, records), ""]
    more = ["Border rules against a pre-padded input. " +
            plans_report.BORDER_TEXT.replace("\n", " "),
            plans_report.border_table(median_ms, records)]
    if plans_report.searches(records):
        more += ["Per stage: kernel times measured by the plan search (profiling events, ms):",
                 plans_report.stage_table(records)]
    out += [details("More from this run: border rules, and every stage's search", more), ""]
    rows = plans_report.pipeline_rows(median_ms, records)
    out.append(p.chart("plans", lambda png: plans_chart(rows, png)))
    out.append("")
    out.append(p.provenance(["plans"]))
    return "\n".join(out)


WINDOWS_TEXT = """\
A box mean over an `n x n` window with reflect-101 borders (`cv2.blur`'s default),
`dst = (parac_matrix_sum(src[x-r:n:1][y-r:n:1]) + n*n/2) / (n*n)`, and an erosion (the minimum
of a square window; replicate borders, which for a minimum equal `cv2.erode`'s default of
ignoring what is outside), at 3x3 to 63x63 on a 3840x2160 u8 image, on the CPU path
(`benches/windows.rs`, criterion medians of whole calls), against OpenCV's `cv2.blur` and
`cv2.erode` (`benches/peers/opencv_windows.py`, median of 20 calls, OpenCV's threads); and a
5x5 binomial blur `(conv + 128) / 256` with reflect-101 against `cv2.GaussianBlur` (OpenCV's
fixed-point rounding differs; only the times compare). Where `Runtime::new()` picks an OpenCL
device (a GPU, or PoCL with `PARAC_DEVICE=opencl`), the same calls run on it too, each output
first checked equal to the CPU path's.

A direct window costs O(taps) per pixel, and OpenCV's `blur` (running sums) and `erode` (van
Herk/Gil-Werman) cost O(1). The CPU lowering's slide pass (`lir::pass::slide`) computes a
window's integer sum, mean, minimum or maximum from rows of column reductions instead: per row,
the window's column reductions once per output column in one vectorized pass, kept in the
narrowest integer type that holds them; down a chunk of 32 rows per task, a sum's column sums
carried from one row to the next (`+ the row entering - the row leaving`, exact in wrapping
arithmetic), a minimum's or maximum's from van Herk's blocks down the chunk's rows; across the
row, each output combines its columns directly while they take up to 128 bytes, else by
doubling. Windows past 9 taps slide; 3x3 stays written out. A `parac_convolution` with a
constant integer filter that is an outer product of two integer vectors (the 5x5 binomial) is
computed as two weighted one-dimensional passes. On OpenCL a `slide` plan gives each
work-item a tile of outputs computed the same way (the model's plan for windows past 64
taps)."""


def topic_windows(p):
    out = [WINDOWS_TEXT, "", commands(p, ["windows", "opencv_windows"]), ""]
    res = p.store.criterion("windows") if p.ok("windows") else {}
    cv = {}
    gauss_cv = None
    log = p.log("opencv_windows")
    if log:
        for t in md_tables(log):
            for r in t["rows"]:
                n = int(r[0].split("x")[0])
                cv[n] = (num(r[1]), num(r[2]))
        m = re.search(r"GaussianBlur 5x5 \(reflect-101\): ([0-9.]+) ms", log)
        gauss_cv = float(m.group(1)) if m else None
    if not res:
        out.append(p.status("windows"))
        return "\n".join(out)
    sizes = sorted({int(v) for (g, f, v) in res if f.startswith(("box_mean", "erode"))})
    paths = [pp for pp in ("cpu", "opencl") if any(f.endswith("_" + pp) for (_, f, _) in res)]

    def ms(f, n):
        t = res.get(("windows_3840x2160", f, str(n)))
        return t * 1e3 if t is not None else None
    header = ["window"]
    for pp in paths:
        header += [f"parac {'CPU path' if pp == 'cpu' else 'OpenCL'}, box mean"]
    header += ["`cv2.blur`"]
    for pp in paths:
        header += [f"parac {'CPU path' if pp == 'cpu' else 'OpenCL'}, erosion"]
    header += ["`cv2.erode`", "`cv2.blur` / parac CPU", "`cv2.erode` / parac CPU"]
    rows = []
    for n in sizes:
        c = cv.get(n, (None, None))
        row = [f"{n}x{n}"] + [fmt(ms(f"box_mean_{pp}", n)) for pp in paths] + [fmt(c[0])]
        row += [fmt(ms(f"erode_{pp}", n)) for pp in paths] + [fmt(c[1])]
        row += [ratio(c[0], ms("box_mean_cpu", n)), ratio(c[1], ms("erode_cpu", n))]
        rows.append(row)
    out.append("Milliseconds per call (the last two columns: how many times faster parac's CPU "
               "path is; below 1, slower):")
    out.append("")
    out.append(table(header, rows))
    out.append("")
    g = ms("gauss5_cpu", 5)
    if g is not None:
        out.append(f"5x5 binomial blur: parac CPU path {fmt(g)} ms"
                   + "".join(f", parac OpenCL {fmt(ms('gauss5_' + pp, 5))} ms"
                             for pp in paths if pp != "cpu")
                   + (f"; `cv2.GaussianBlur` {fmt(gauss_cv)} ms ({ratio(gauss_cv, g)})"
                      if gauss_cv else "") + ".")
    if not log:
        out.append("")
        out.append(p.status("opencv_windows", "opencv_windows.py"))
    out.append("")
    series = {}
    for pp in paths:
        series[f"parac {pp}, box mean"] = [ms(f"box_mean_{pp}", n) for n in sizes]
        series[f"parac {pp}, erosion"] = [ms(f"erode_{pp}", n) for n in sizes]
    series["cv2.blur"] = [cv.get(n, (None, None))[0] for n in sizes]
    series["cv2.erode"] = [cv.get(n, (None, None))[1] for n in sizes]
    out.append(p.chart("windows", lambda png: lines_chart(
        png, sizes, series, "ms per call (log)", "window side (log)",
        "Windows on a 3840x2160 u8 image")))
    out.append("")
    out.append(p.provenance(["windows", "opencv_windows"]))
    return "\n".join(out)


CALLS_TEXT = """\
Every call fast (`benches/calls.rs`): one fresh process per pipeline, parac's program and plan
caches empty (a new `PARAC_CACHE_DIR`) and PoCL's kernel cache off (`POCL_KERNEL_CACHE=0`), the
default plan policy (the budgeted search) and the default warm-up (`PARAC_WARM_UP=auto`: on an
OpenCL device that is not a GPU, calls run on the CPU path while a background thread builds the
programs, compiles the kernels and searches the plans to the end; then calls run on the device
with nothing left to build or time). The four APPS pipelines at their bench sizes and six of
our own at 3840x2160 (`benches/own`: Sobel magnitude and its global mean, a 7-tap separable
unsharp mask with clamped borders, a 5x5 Gaussian with reflect-101, a 3x3 opening, RGB to gray
and a threshold at the mean, a 2x2 downsample and a 3x3 sharpen). Wall times of whole calls:
the first call, the median and the worst of the next 30 (the spread is the background's share
of the cores), the wait for the background to finish, then the median of 10 warm calls
(searched plans) and of 10 calls of the model's plans on the same runtime. With
`PARAC_WARM_UP=wait` (the default on a GPU) the first call builds the function's first program
on the device instead; `PARAC_WARM_UP=wait cargo bench --bench calls` gives those figures (not
part of the one-command run)."""


def topic_calls(p):
    out = [CALLS_TEXT, "", commands(p, ["calls"]), ""]
    log = p.log("calls")
    if not log:
        out += [p.status("calls"), ""]
    else:
        r = p.run("calls")
        if "PARAC_DEVICE=cpu" in (r.get("command") or ""):
            out += ["No OpenCL device: the calls run on the CPU path (`PARAC_DEVICE=cpu`), what "
                    "`Runtime::new()` gives on such a machine; there is no background work.", ""]
        for t in md_tables(log):
            out.append(f"{t['caption']}:" if t["caption"] else "")
            out.append("")
            out.append(table(t["header"], t["rows"]))
            out.append("")
            rows = [r for r in t["rows"] if len(r) >= 4 and num(r[1]) is not None]
            vals = {}
            for r in rows:
                vals[(r[0], "first call")] = num(r[1])
                vals[(r[0], "median of the next 30")] = num(r[2])
                vals[(r[0], "worst of the next 30")] = num(r[3])
                if len(r) >= 7:
                    vals[(r[0], "warm (searched plans)")] = num(r[6])
            groups = [r[0] for r in rows]
            out.append(p.chart("calls", lambda png: bars(
                png, groups, ["first call", "median of the next 30", "worst of the next 30",
                              "warm (searched plans)"], vals, "ms (log)",
                "First calls with every cache empty")))
            out.append("")
            break
    first = p.store.json("apps", "first_call.json") if p.ok("apps") else None
    more = ["**Program build and first call** (`benches/apps.rs`'s first-call child). "
            + report.FIRST_CALL_TEXT]
    if first:
        more.append(report.first_call_table(first))
    else:
        more.append("Not measured in this run: the apps bench measures it on an OpenCL device "
                    "only." if p.ok("apps") else p.status("apps"))
    out += [details("More from this run: program builds and first calls with every cache off "
                    "(the apps bench)", more), ""]
    out.append(p.provenance(["calls", "apps"]))
    return "\n".join(out)


TIME_TEXT = """\
Iterated stencils (`benches/time_steps.rs`): `parac_repeat` and `parac_swap`
(docs/language.md, "Time steps") run step by step against time-tiled on the CPU path
(`lir::pass::fuse::time`), on grids that do not fit the cache, and Halide running the same
steps (`benches/peers/halide_time_steps.py`: one step as a Func, strips of rows in parallel,
rows vectorized, realized T times into two buffers in turn). Four stencils: heat-2D (5 points,
f32, replicated edge), a 3x3 game of life (u8, dead border), heat-3D (7 points, f32) and
FDTD-2D (three grids, f32, three regions per step). Each parac variant is the same program
with a different `parac_schedule(band = K, rows = R, split = 0 | 1)`: `band = 1` is step by
step; without it the compiler's model picks split tiling and K (two parallel phases per band
over tasks of whole rows working on the grids in place, no point computed twice; 3-D grids
tiled by planes); `split = 0` gives overlapped tiles (halos recomputed). "T calls" is a
one-step function called T times from Rust. Medians of whole calls (a warm-up call, then at
least 5 calls and `PARAC_TIME_SECONDS` seconds); GPoints·steps/s = grid points x T / time; the
DRAM floor is what step by step must move (each step reads and writes each grid once; FDTD six
grids) at the host's copy bandwidth; "compute floor" rows run step by step on a grid that stays
in the last-level cache and scale its time to the case. Every variant's grids equal step by
step's (exact). The OpenCL part (`PARAC_TIME_PART=opencl`: several steps per launch, tiles in
local memory, and split bands) runs in the one-command run only where the OpenCL device is a
GPU: on a CPU device PoCL runs a work-group's work-items one after the other around each
barrier, the bands lose to one step per launch, and the part takes many minutes."""


def time_chart(rows, png):
    """One bar per (case, variant): GPoints·steps/s, coloured by kind of variant."""
    plt = pyplot()
    if plt is None or not rows:
        return False

    def color(label):
        v = label.split(": ", 1)[1]
        return ("tab:gray" if v.startswith("step by step") else "tab:green"
                if v.startswith("the model's") else "tab:orange" if v.startswith("Halide")
                else "tab:purple" if v.startswith("T calls") else "tab:blue")
    fig, ax = plt.subplots(figsize=(11, 0.28 * len(rows) + 1.5), dpi=100)
    ax.barh(range(len(rows)), [v for _, v in rows], color=[color(lb) for lb, _ in rows])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([lb for lb, _ in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("GPoints·steps/s (higher is better)")
    ax.set_title("Iterated stencils: step by step (gray), the model's tiling (green),\nother "
                 "schedules (blue), T calls from Rust (purple), Halide (orange)", fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(png)
    plt.close(fig)
    return True


def topic_time_steps(p):
    out = [TIME_TEXT, "", commands(p, ["time_steps"]), ""]
    log = p.log("time_steps")
    if not log:
        out.append(p.status("time_steps"))
        return "\n".join(out)
    tables = md_tables(log)
    if "(Halide: no benches/peers/.venv" in log:
        why = p.store.state.get("invocation_info", {}).get("venv", {}).get("reason", "")
        out += [f"Halide: not run{': ' + why if why else ''}.", ""]
    bars_rows = []
    for t in tables:
        rows = t["rows"]
        cpu = t["header"][1] == "variant"
        # Halide's rows come after parac's: each with its case.
        cases = list(dict.fromkeys(r[0] for r in rows))
        ordered = [r for c in cases for r in rows if r[0] == c]
        steps = {r[0]: num(r[2]) for r in ordered if r[1].startswith("step by step")}
        header = t["header"][:5] + (["speed-up over step by step"] if cpu else []) + \
            t["header"][5:]
        body = []
        for r in ordered:
            r = r + [""] * (len(t["header"]) - len(r))
            extra = [ratio(steps.get(r[0]), num(r[2]))] if cpu else []
            body.append(r[:5] + extra + r[5:])
            if cpu and "compute floor" not in r[1] and num(r[4]):
                bars_rows.append((f"{r[0]}: {r[1]}", num(r[4])))
        text = ([t["caption"] + ":"] if t["caption"] else []) + \
            [table(header, body, "ll" + "r" * (len(header) - 2))]
        if cpu:
            out += text + [""]
        else:
            out += [details("More from this run: the OpenCL part", text), ""]
    out.append(p.chart("time_steps", lambda png: time_chart(bars_rows, png)))
    out.append("")
    out.append(p.provenance(["time_steps"]))
    return "\n".join(out)


OWN_TEXT = """\
Pipelines of our own, outside APPS.md, on the CPU path against Halide's CPU schedules, so that
the ratios are measured on pipelines not written for the benches (`benches/own_peers.rs`,
3840x2160 u8; Halide's versions in `benches/peers/halide_own.py`, written as Halide's apps
write them: arithmetic in 16 bits wherever it is exact, the producer `compute_at` the
consumer's strips of 32 rows, rows vectorized 32 wide, strips in parallel). `gauss5`: a
separable 5-tap Gaussian (1 4 6 4 1) / 256 with reflect-101 borders (two stages, the horizontal
pass fused into the vertical one's tasks); `unsharp7`: a 7-tap separable Gaussian with clamped
borders and an unsharp mask from it (a 3-stage chain, both intermediates fused into the last
stage's tasks); `box3`: a 3x3 box mean through a 16-bit intermediate, interior only, rounded;
`sobel_mean`: a Sobel magnitude with replicated borders and its mean (a stage and a reduction
over its output). Medians (minimum) of whole calls over at least 5 s; Halide's outputs are
compared with parac's."""


def own_rows(log):
    """{pipeline: {contender: (median, min, note)}} from own_peers's output."""
    out = {}
    for t in md_tables(log):
        for r in t["rows"]:
            if len(r) >= 4 and num(r[2]) is not None:
                out.setdefault(r[0], {})[r[1]] = (num(r[2]), num(r[3]),
                                                  r[4] if len(r) > 4 else "")
    return out


def topic_own(p):
    out = [OWN_TEXT, "", commands(p, ["own_peers"]), ""]
    log = p.log("own_peers")
    if not log:
        out.append(p.status("own_peers"))
        return "\n".join(out)
    rows = own_rows(log)
    body, vals = [], {}
    for name, cs in rows.items():
        pc, hl = cs.get("parac CPU"), cs.get("Halide CPU")
        body.append([f"`{name}`", f"{fmt(pc[0])} ({fmt(pc[1])})" if pc else "–",
                     f"{fmt(hl[0])} ({fmt(hl[1])})" if hl else "–",
                     ratio(hl[0], pc[0]) if pc and hl else "–", hl[2] if hl else ""])
        vals[(name, "parac CPU")] = pc[0] if pc else None
        vals[(name, "Halide CPU")] = hl[0] if hl else None
    caption = next((t["caption"] for t in md_tables(log) if t["caption"]), "")
    if caption:
        out += [caption + ":", ""]
    out.append(table(["pipeline", "parac CPU ms (min)", "Halide CPU ms (min)",
                      "Halide / parac (parac's speed-up)", "Halide's output"], body, "lrrrl"))
    if "(Halide: no benches/peers/.venv" in log:
        why = p.store.state.get("invocation_info", {}).get("venv", {}).get("reason", "")
        out += ["", f"Halide: not run{': ' + why if why else ''}."]
    out.append("")
    out.append(p.chart("own", lambda png: bars(
        png, list(rows), ["parac CPU", "Halide CPU"], vals, "median ms (lower is better)",
        "Pipelines of our own, 3840x2160 u8", log=False)))
    out.append("")
    out.append(p.provenance(["own_peers"]))
    return "\n".join(out)


HIST_TEXT = """\
The programs of `tests/histogram/programs.rs` (whose results the tests hold to OpenCV's own
algorithms) on a 3840x2160 `u8` image (`(7i + 13j + (ij mod 17)) mod 256`: every level used),
against OpenCV's functions on the same image: `benches/histogram.rs` (criterion medians of whole
calls; the CPU path, and the OpenCL device where `PARAC_DEVICE` names one or `Runtime::new()`
picks a GPU) and `benches/peers/opencv_histogram.py` (median of 20 calls, OpenCV's threads,
its `UMat` calls where `cv2.ocl` has a device). A histogram's task keeps private bins, an array
of the matrix's constant length, so an index that a `u8` bounds compiles to no comparison; on
OpenCL each work-group updates its own bins in local memory and merges them once per bin
(`lds16x16`, the model's first plan for a reduction). An integer prefix along a vectorized loop
runs in three steps (the values into a row, the row scanned in vectors by `cpu::scan_row`, then
the statements after it), and a 2-D prefix sums down the columns first, in parallel blocks of
rows (each block's totals, then every block from the sums before it). `integral` and
`integral2` come in two forms: two iterators (rows, then columns) and one
(`parac_prefix_sum(v, x, y)`, CPU path only: refused on OpenCL)."""

HIST_NAMES = [("calc_hist", "`calcHist` (`hist[src[x][y]] += 1`, 256 `i32` bins)", "calcHist"),
              ("integral", "`integral` (`i32`), two iterators", "integral"),
              ("integral_one_pass", "`integral`, one iterator", "integral"),
              ("integral2", "`integral2` (`i32` and `f32` squared sums), two iterators",
               "integral2"),
              ("integral2_one_pass", "`integral2`, one iterator", "integral2"),
              ("equalize_hist", "`equalizeHist`", "equalizeHist"),
              ("otsu", "Otsu's threshold (`cv2.threshold(.., THRESH_OTSU)`)", "threshold OTSU")]


def topic_histogram(p):
    out = [HIST_TEXT, "", commands(p, ["histogram", "opencv_histogram"]), ""]
    res = p.store.criterion("histogram") if p.ok("histogram") else {}
    if not res:
        out.append(p.status("histogram"))
        return "\n".join(out)
    cv = {}
    log = p.log("opencv_histogram")
    for t in md_tables(log or ""):
        for r in t["rows"]:
            cv[r[0]] = (num(r[1]), num(r[2]) if r[2] != "-" else None)
    paths = [pp for pp in ("cpu", "opencl") if any(v == pp for (_, _, v) in res)]
    umat = any(c[1] for c in cv.values())

    def ms(f, pp):
        t = res.get(("histogram_3840x2160", f, pp))
        return t * 1e3 if t is not None else None
    header = ["program"] + [f"parac {'CPU path' if pp == 'cpu' else 'OpenCL'} ms"
                            for pp in paths] + ["OpenCV CPU ms"] + \
        (["OpenCV UMat ms"] if umat else []) + ["OpenCV / parac CPU"]
    body, vals = [], {}
    for f, label, cvname in HIST_NAMES:
        if all(ms(f, pp) is None for pp in paths):
            continue
        c = cv.get(cvname, (None, None))
        body.append([label] + [fmt(ms(f, pp)) for pp in paths] + [fmt(c[0])] +
                    ([fmt(c[1])] if umat else []) + [ratio(c[0], ms(f, "cpu"))])
        short = label.split(" (")[0].replace("`", "")
        for pp in paths:
            vals[(short, f"parac {pp}")] = ms(f, pp)
        vals[(short, "OpenCV CPU")] = c[0]
    out.append(table(header, body))
    if not log:
        out += ["", p.status("opencv_histogram", "opencv_histogram.py")]
    out.append("")
    groups = list(dict.fromkeys(g for g, _ in vals))
    out.append(p.chart("histogram", lambda png: bars(
        png, groups, [f"parac {pp}" for pp in paths] + ["OpenCV CPU"], vals,
        "ms per call (log)", "Histograms and scans, 3840x2160 u8")))
    out.append("")
    out.append(p.provenance(["histogram", "opencv_histogram"]))
    return "\n".join(out)


OPS_TEXT = """\
The programs of `tests/opencv_ops/programs.rs`: OpenCV's everyday functions written as a user
writes them (the tests hold each to the interpreter on every plan and vector level, and to
OpenCV's definition of the function; `benches/peers/opencv_ops.py` first checks on a random
image that OpenCV's own results are those definitions), against OpenCV's own calls writing into
a result allocated once (`dst=`), at 3840x2160 and 640x480 u8: `benches/opencv_ops.rs`
(criterion medians; the CPU path at the processor's widest vector level, and the OpenCL device
where `PARAC_DEVICE` names one or `Runtime::new()` picks a GPU) and
`benches/peers/opencv_ops.py` (median of 20 calls, OpenCV's threads).

How parac computes them: mirrors read a slice backwards (`N - 1 - y`: a stride of -1 and a base
that does not change in the loop), at the memory's speed; transposes and rotations read down a
column of the source, and `lir::pass::tile` runs such a region in tiles of 64 rows of the result
by 128 points, each tile copying its block of the source in blocks of 16 bytes transposed in
registers (`Stmt::Stage`, at the run's vector level: AVX-512's 32 registers hold a block of
bytes and its unpacked halves) straight into the task's rows of the result, where a point
does nothing but copy (a temporary, which the tile's rows then read along their rows, where it
computes more); the stencils are vectorized interiors with split
borders; `pyrDown` slides its window two columns per output (one row of weighted column sums
per output row in `u16`); the 3x3 median is the 19 exchanges of a median-of-9 network
(vectorized `u8` `min`/`max`), each output sorting its whole window. A call's rows run on the
CPU path's own threads, the calling thread among them from the first row (no wake-up of a
sleeping thread before work begins); at 640x480 each of the 480 rows still runs its own border
split, span checks and vector-level dispatch, a few microseconds that the data does not hide at
that size."""

OPS = [("flip_lr", "`flip(src, 1)`, `dst[x][y] = src[x][N - 1 - y]`"),
       ("flip_ud", "`flip(src, 0)`, `src[M - 1 - x][y]`"), ("flip_both", "`flip(src, -1)`"),
       ("transpose", "`transpose`, `dst[x][y] = src[y][x]`"),
       ("rotate_cw", "`rotate(src, ROTATE_90_CLOCKWISE)`, `src[M - 1 - y][x]`"),
       ("rotate_ccw", "`rotate(src, ROTATE_90_COUNTERCLOCKWISE)`"),
       ("flip_lr_rgb", "`flip(src, 1)` of interleaved RGB, `u8[M][3 * width]`"),
       ("transpose_i16", "`transpose` of `i16`"),
       ("gray", "`cvtColor(src, COLOR_BGR2GRAY)`, 15-bit weights"),
       ("threshold", "`threshold(src, 127, 255, THRESH_BINARY)`, an `if`"),
       ("absdiff", "`absdiff(a, b)`, `abs(a[x][y] - b[x][y])`"),
       ("sobel_dx", "`Sobel(src, CV_16S, 1, 0)`"), ("scharr_dx", "`Scharr(src, CV_16S, 1, 0)`"),
       ("laplacian", "`Laplacian(src, CV_16S)`"), ("gauss3", "`GaussianBlur(src, (3, 3), 0)`"),
       ("sharpen", "`filter2D(src, -1, K)`, a 3x3 sharpening kernel"),
       ("dilate5", "`dilate(src, ones((5, 5)))`"),
       ("median3", "`medianBlur(src, 3)`, a median-of-9 network of `min`/`max`"),
       ("pyr_down", "`pyrDown(src)`"),
       ("resize_nearest", "`resize` by a half, `INTER_NEAREST`, `src[2 * x][2 * y]`"),
       ("resize_area", "`resize` by a half, `INTER_AREA`"),
       ("make_border", "`copyMakeBorder(src, 4, 4, 4, 4, BORDER_REFLECT_101)`"),
       ("ycrcb", "`cvtColor(src, COLOR_BGR2YCrCb)`, 14-bit weights"),
       ("box3", "`blur(src, (3, 3))`, `(parac_matrix_sum(..) + 4) / 9`"),
       ("erode3", "`erode(src, ones((3, 3)))`"),
       ("erode15", "`erode(src, ones((15, 15)))`"),
       ("resize_up", "`resize` by two, `INTER_NEAREST`, `src[x / 2][y / 2]`")]


def topic_opencv_ops(p):
    out = [OPS_TEXT, "", commands(p, ["opencv_ops", "opencv_ops_py"]), ""]
    res = p.store.criterion("opencv_ops") if p.ok("opencv_ops") else {}
    if not res:
        out.append(p.status("opencv_ops"))
        return "\n".join(out)
    cv = {}
    log = p.log("opencv_ops_py")
    for t in md_tables(log or ""):
        size = t["caption"].strip()
        for r in t["rows"]:
            cv[(size, r[0])] = (num(r[1]), num(r[2]) if r[2] != "-" else None)
    sizes = [s for s in ("3840x2160", "640x480") if any(g == f"opencv_ops_{s}"
                                                          for (g, _, _) in res)]
    paths = [pp for pp in ("cpu", "opencl") if any(v == pp for (_, _, v) in res)]

    def ms(s, f, pp):
        t = res.get((f"opencv_ops_{s}", f, pp))
        return t * 1e3 if t is not None else None
    header = ["function (as written)"]
    for s in sizes:
        header += [f"parac {'CPU' if pp == 'cpu' else 'OpenCL'} {s}" for pp in paths]
        header += ["OpenCV", "OpenCV / parac CPU"]
    body, vals = [], {}
    for f, label in OPS:
        row = [label]
        for s in sizes:
            c = cv.get((s, f), (None, None))
            row += [fmt(ms(s, f, pp)) for pp in paths] + [fmt(c[0]), ratio(c[0], ms(s, f, "cpu"))]
            if c[0] and ms(s, f, "cpu"):
                vals[(f, s)] = c[0] / ms(s, f, "cpu")
        body.append(row)
    out.append("Milliseconds per call; the ratio is how many times faster parac's CPU path is "
               "(below 1, slower):")
    out.append("")
    out.append(table(header, body))
    if not log:
        out += ["", p.status("opencv_ops_py", "opencv_ops.py")]
    umat = {k: v[1] for k, v in cv.items() if v[1]}
    if umat:
        out += ["", "OpenCV's `UMat` (OpenCL) calls, ms: " + "; ".join(
            f"{f} {s} {fmt(v)}" for (s, f), v in umat.items()) + "."]
    out.append("")
    out.append(p.chart("opencv_ops", lambda png: bars(
        png, [f for f, _ in OPS], sizes, vals,
        "OpenCV's time / parac CPU's (above 1: parac faster; log)",
        "OpenCV's functions against parac's CPU path", horizontal=True, ref=1)))
    out.append("")
    out.append(p.provenance(["opencv_ops", "opencv_ops_py"]))
    return "\n".join(out)


LEVELS_TEXT = """\
Each vectorized interior of the CPU path is compiled twice on x86_64, for AVX-512 and for AVX2
with FMA (`cpu::vector`), the plain loop being the baseline (`portable`: the checked loops,
which LLVM vectorizes for SSE2 where it can); the level is chosen when the program runs, the
processor's widest by default, and `PARAC_CPU_ISA` forces one (never above the processor's:
levels it lacks are not run here). The four pipelines of APPS.md (`benches/peers.rs` with
`PARAC_PEERS_CONTENDERS=parac_cpu`, medians of whole calls, APPS.md's sizes) and the pipelines
of our own (`benches/own_peers.rs`, 3840x2160 u8), at each level, with Halide's CPU schedules
beside (its JIT targets the host's widest level), and the same benches built with
`RUSTFLAGS="-C target-cpu=native"` (in `target/native`, a build of its own), which a user
shipping a binary cannot do: the default build should be within 1.1x of it."""


def topic_levels(p):
    levels = [k[len("levels_peers_"):] for k in p.store.state["runs"]
              if k.startswith("levels_peers_")]
    levels = [lv for lv in ("portable", "avx2", "avx512") if lv in levels]
    # The own pipelines at the widest level: the own_peers run (the default level).
    own = {lv: f"levels_own_{lv}" for lv in levels[:-1]}
    if levels:
        own[levels[-1]] = "own_peers"
    keys = [k for lv in levels for k in (f"levels_peers_{lv}", own[lv])]
    keys += ["levels_native_peers", "levels_native_own"]
    out = [LEVELS_TEXT, "", commands(p, keys), ""]
    if not levels:
        out.append("`levels`: not run yet.")
        return "\n".join(out)
    ms = {}
    for lv in levels:
        data = p.store.json(f"levels_peers_{lv}", "peers.json") if \
            p.ok(f"levels_peers_{lv}") else None
        for r in (data or {}).get("results", []):
            if r["contender"] == "parac_cpu" and r.get("status") == "ok":
                ms[(r["pipeline"], lv)] = r["median_ms"]
        for name, cs in own_rows(p.log(own[lv]) or "").items():
            if "parac CPU" in cs:
                ms[(name, lv)] = cs["parac CPU"][0]
            if "Halide CPU" in cs and lv == levels[-1]:
                ms[(name, "Halide CPU")] = cs["Halide CPU"][0]
    data = p.store.json("peers", "peers.json") if p.ok("peers") else None
    for r in (data or {}).get("results", []):
        if r["contender"] == "halide_cpu" and r.get("status") == "ok":
            ms[(r["pipeline"], "Halide CPU")] = r["median_ms"]
    data = p.store.json("levels_native_peers", "peers.json") if \
        p.ok("levels_native_peers") else None
    for r in (data or {}).get("results", []):
        if r["contender"] == "parac_cpu" and r.get("status") == "ok":
            ms[(r["pipeline"], "native")] = r["median_ms"]
    for name, cs in own_rows(p.log("levels_native_own") or "").items():
        if "parac CPU" in cs:
            ms[(name, "native")] = cs["parac CPU"][0]
    names = {"laplacian": "laplacian", "sharpen": "sharpen", "blur": "blur (u16)",
             "unsharp": "unsharp (f32 RGB)", "gauss5": "gauss5 (separable, reflect-101)",
             "unsharp7": "unsharp7 (3 stages)", "box3": "box3 (3x3 mean, 16-bit sums)",
             "sobel_mean": "sobel_mean (Sobel and its mean)"}
    body = []
    for k, label in names.items():
        if not any(ms.get((k, lv)) for lv in levels):
            continue
        top = ms.get((k, levels[-1]))
        body.append([label] + [fmt(ms.get((k, lv))) for lv in levels] +
                    [fmt(ms.get((k, "native"))), ratio(top, ms.get((k, "native"))),
                     fmt(ms.get((k, "Halide CPU"))), ratio(ms.get((k, "Halide CPU")), top)])
    out.append(f"Milliseconds per call; {levels[-1]} is this processor's widest level, the "
               "default; native: the `-C target-cpu=native` build:")
    out.append("")
    out.append(table(["pipeline"] + levels +
                     ["native", f"{levels[-1]} / native", "Halide CPU",
                      f"Halide / parac {levels[-1]}"], body))
    out.append("")
    out.append(p.chart("levels", lambda png: bars(
        png, [k for k in names if any(ms.get((k, lv)) for lv in levels)],
        levels + ["native", "Halide CPU"], {(k, lv): ms.get((k, lv)) for k in names
                                            for lv in levels + ["native", "Halide CPU"]},
        "median ms (log)", "The CPU path's vector levels")))
    out.append("")
    out.append(p.provenance(keys + ["peers"]))
    return "\n".join(out)


LOC_TEXT = """\
Non-blank, non-comment lines. parac: the pipeline's `parac!` block (`examples/pipelines/`),
per stage; `shared` is the signature, constants, intermediates and host scalars. Hand: the
kernels (`benches/hand/*.cl`, one file per stage, plus the fused kernels) and the pipeline's
host code in `benches/hand/mod.rs` (the shared harness of device, buffers and launches not
counted). Generated: the OpenCL parac emits for the pipeline (`PARAC_DUMP`, written by a child
process of `benches/apps.rs` on an OpenCL device), per region: the baseline plan's kernels and
helpers, and every candidate kernel of the plan search that the program holds; `shared` is its
header and constants. Halide: the algorithm and each schedule apart; OpenCV: the function
making the calls (`benches/peers/run.py` counts both, helpers included)."""


def topic_loc(p):
    out = [LOC_TEXT, ""]
    gen = p.store.dir / "apps.generated"
    gen = gen if gen.is_dir() and p.ok("apps") else None
    py = p.store.json("loc_py", "log") if p.ok("loc_py") else None
    counts = peers_report.loc_counts({"python": {"loc": py}} if py else None)
    body, vals = [], {}
    for pp in report.PIPELINES:
        c = counts[pp]
        total = report.loc_rows(pp, gen)[-1]

        def cell(v):
            return "–" if v is None else str(v)
        halide = [c[k] for k in ("halide_algorithm", "halide_schedule_cpu", "halide_schedule_gpu")]
        body.append([pp, c["parac"], f"{c['hand_kernels']} + {cell(c['hand_host'])}",
                     cell(total[3]), cell(total[4])] + [cell(v) for v in halide] +
                    [cell(c["opencv"])])
        vals[(pp, "parac")] = c["parac"]
        vals[(pp, "hand OpenCL (kernels + host)")] = c["hand_kernels"] + (c["hand_host"] or 0)
        vals[(pp, "generated, baseline plan")] = total[3]
        if None not in halide:
            vals[(pp, "Halide (algorithm + schedules)")] = sum(halide)
        vals[(pp, "OpenCV")] = c["opencv"]
    out.append(table(["pipeline", "parac", "hand OpenCL kernels + host",
                      "generated, baseline plan", "generated, every plan candidate",
                      "Halide algorithm", "Halide CPU schedule", "Halide GPU schedule",
                      "OpenCV"], body))
    notes = []
    if gen is None:
        notes.append("generated: " + ("no OpenCL device in the apps run" if p.ok("apps")
                                      else p.status("apps")))
    if py is None:
        notes.append("Halide and OpenCV: " + (p.status("loc_py", "loc_py") or "no counts"))
    if notes:
        out += ["", "Not counted: " + "; ".join(notes) + "."]
    out += ["", details("Per stage", [report.loc_table(gen)]), ""]
    out.append(p.chart("loc", lambda png: bars(
        png, report.PIPELINES, ["parac", "hand OpenCL (kernels + host)",
                                "generated, baseline plan", "Halide (algorithm + schedules)",
                                "OpenCV"], vals, "lines", "Lines of code", log=False)))
    out.append("")
    out.append(p.provenance(["apps", "loc_py"]))
    return "\n".join(out)


RENDER = {"apps": topic_apps, "plans": topic_plans, "windows": topic_windows,
          "calls": topic_calls, "time_steps": topic_time_steps, "own": topic_own,
          "histogram": topic_histogram, "opencv_ops": topic_opencv_ops, "levels": topic_levels,
          "loc": topic_loc}

INTRO = """\
How fast parac's pipelines run against the hand-optimized OpenCL of `benches/hand/`, Halide and
OpenCV (timed in the same run through their Python bindings, `benches/peers/`) and the image
crates a Rust user would otherwise pick, and what parac's own mechanisms (plans, sliding
windows, time tiling, vector levels, the warm-up of first calls) buy. Every table and chart on
this page comes from one run of one command on the machine described below; the page is written
whole by that command, and earlier figures are in git's history of this file."""


def duration(secs):
    m, s = divmod(int(round(secs)), 60)
    return f"{m} min {s:02d} s" if m else f"{s} s"


def how_to_run(p):
    st = p.store.state
    info = st.get("invocation_info", {})
    has_cl = bool(info.get("machine", {}).get("opencl", {}).get("devices"))
    exp_cl = sum(EXPECTED_S[j.expected][0] for j in jobs(False, info.get("machine", {})))
    exp_no = sum(EXPECTED_S[j.expected][1] for j in jobs(False, info.get("machine", {})))
    out = ["```sh",
           "python3 benches/pages.py                     # the full run: builds the benches, runs "
           "them all, writes this page and docs/benchmarks/*.png",
           "python3 benches/pages.py --only windows,own  # those topics' runs again; the rest as "
           "the last run left it",
           "python3 benches/pages.py --from-existing     # no runs: the page again from what the "
           "last run left",
           "python3 benches/pages.py --quick             # small images, short times: checks the "
           "script (its page goes elsewhere, marked quick)",
           "```", "",
           f"Topics for `--only`: {', '.join(f'`{t}`' for t in TOPICS)}. "
           f"The full run takes about {exp_cl // 60} minutes on a 2-core machine with PoCL "
           f"(about {exp_no // 60} without an OpenCL device), plus the release build of the "
           "benches (some minutes more in a fresh target directory); keep the machine otherwise "
           "idle while it runs. It needs a Rust toolchain, Python 3 with matplotlib (`pip "
           "install matplotlib`; without it the page has no charts), an OpenCL device for the "
           "OpenCL contenders (PoCL: `apt-get install pocl-opencl-icd ocl-icd-opencl-dev`, as "
           "`.ci/run` does) and PyPI for `benches/peers/setup.sh`, which the script runs when "
           "`benches/peers/.venv` is missing (the pinned Halide, OpenCV and numpy of "
           "`benches/peers/requirements.txt`). A run that cannot happen (no OpenCL device, no "
           "virtualenv) is said so where its table would be.", ""]
    runs = sorted(((k, r) for k, r in st["runs"].items()
                   if r.get("invocation") == st.get("invocation")),
                  key=lambda kr: kr[1].get("started", 0))
    if runs:
        total = sum(r.get("seconds", 0) for _, r in runs)
        only = info.get("only") or list(TOPICS)
        part = ("" if set(only) >= set(TOPICS) else
                f" (of {', '.join(f'`{t}`' for t in only)} only; the other topics are from "
                "earlier runs, as their notes say)")
        out.append(f"The run that wrote this page took {duration(total)} on a machine "
                   f"{'with' if has_cl else 'without'} an OpenCL device"
                   + (f", and the build before it {duration(info['build_seconds'])}"
                      if info.get("build_seconds", 0) >= 10 else "") + part +
                   ". Each bench, as it ran:")
        out.append("")
        rows = [[f"`{k}`", f"`{r.get('command', '')}`", r.get("status", "?") +
                 (f": {r['reason']}" if r.get("reason") and r.get("status") != "ok" else ""),
                 duration(r["seconds"]) if r.get("seconds") is not None else "–"]
                for k, r in runs]
        out.append(table(["run", "command", "status", "time"], rows, "lllr"))
        out.append("")
    out.append("Each bench also runs alone, `cargo bench --bench NAME`; the figures go to "
               "criterion's directory (`$CARGO_TARGET_DIR/criterion`, else `target/criterion`) "
               "and what the script keeps of each run to `<criterion dir>/parac-extra/pages/`. "
               "Settings the benches read: `PARAC_BENCH_SMALL=1` (every image side / 4), "
               "`PARAC_DEVICE` (`opencl`, `opencl-gpu`, `cpu`, ...), `PARAC_CPU_ISA` "
               "(`portable`, `avx2`, `avx512`), `PARAC_PEERS_SECONDS` and "
               "`PARAC_PEERS_CONTENDERS` (peers), `PARAC_BENCH_PARTS` (plans), "
               "`PARAC_TIME_SECONDS` and `PARAC_TIME_PART` (time_steps), `PARAC_WARM_UP` "
               "(calls); criterion's own options after `--` (`--measurement-time`, a filter).")
    return "\n".join(out)


def machine_section(p):
    info = p.store.state.get("invocation_info", {})
    m = info.get("machine", {})
    if not m:
        return "Not recorded."
    fam = f" (family {m.get('family')}, model {m.get('model')})" if m.get("family") else ""
    avx = "" if "avx512f" in m.get("flags", []) else " (no AVX-512)"
    cl = m.get("opencl", {})
    devs = "; ".join(f"{d['name']} ({d['type']}, {d['platform']}, {d['version']}, driver "
                     f"{d['driver']})" for d in cl.get("devices", [])) or \
        f"none: {cl.get('reason', '?')}"
    venv = info.get("venv", {})
    if venv.get("ok"):
        v = venv["versions"]
        peers = (f"Halide {v.get('halide')}, OpenCV {v.get('opencv')} ({v.get('opencv_threads')} "
                 f"threads), numpy {v.get('numpy')}, Python {v.get('python')}")
    else:
        peers = f"not run: {venv.get('reason', '?')}"
    c = info.get("commit", {})
    rows = [["CPU", f"{m.get('cpu')}{fam}"],
            ["vector instructions", ", ".join(m.get("flags", [])) + avx],
            ["cores", str(m.get("cores"))], ["caches (per core where private)",
                                             ", ".join(m.get("caches", [])) or "?"],
            ["memory", m.get("memory") or "?"], ["OS", m.get("os", "?")],
            ["Rust", m.get("rustc", "?")], ["OpenCL devices", devs],
            ["Halide, OpenCV", peers],
            ["commit", f"`{c.get('commit', '?')}`" +
             (" with uncommitted changes to tracked files" if c.get("dirty") else "")],
            ["date of the run", info.get("date", "?")]]
    if info.get("quick"):
        rows.append(["kind of run", "**quick** (`--quick`: small images, short times)"])
    return table(["", ""], rows, "ll")


def prune(store, machine):
    """Forgets the runs that are not among this machine's runs (a vector level it lacks, a run
    this script no longer makes), so that the page reads only what it would run."""
    known = {j.key for j in jobs(False, machine)}
    store.state["runs"] = {k: r for k, r in store.state["runs"].items() if k in known}


def page_is_quick(store):
    """Whether any run the page shows was a quick one."""
    return any(r.get("quick") for r in store.state["runs"].values()
               if r.get("status") != "not run")


def write_page(store, out):
    p = Page(store, out)
    quick = page_is_quick(store)
    parts = ["# Benchmarks", ""]
    if quick:
        parts += ["> **A quick run** (`python3 benches/pages.py --quick`): small images and short "
                  "measurement times, for checking the script. These are not figures to quote.",
                  ""]
    parts += [INTRO, "", "## How to run", "", how_to_run(p), "", "## The machine and the run",
              "", machine_section(p), ""]
    for t, title in TOPICS.items():
        parts += [f"## {title}", "", RENDER[t](p).strip(), ""]
    text = "\n".join(parts)
    text = re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return quick


def main():
    ap = argparse.ArgumentParser(description="Writes docs/benchmarks.md and one chart per topic "
                                 "from one run of every bench and peer script.")
    ap.add_argument("--quick", action="store_true",
                    help="small images, short measurement times: for checking this script")
    ap.add_argument("--from-existing", action="store_true",
                    help="no runs: write the page from what the last runs left")
    ap.add_argument("--only", help="comma-separated topics to run: " + ",".join(TOPICS))
    ap.add_argument("--out", help="the page (default docs/benchmarks.md; for a quick run "
                    "<criterion dir>/parac-extra/pages/quick/benchmarks.md)")
    ap.add_argument("--criterion", help="criterion's directory")
    ap.add_argument("-v", "--verbose", action="store_true", help="show each run's output")
    a = ap.parse_args()
    only = [t.strip() for t in a.only.split(",")] if a.only else list(TOPICS)
    bad = [t for t in only if t not in TOPICS]
    if bad:
        sys.exit(f"pages: no topic {', '.join(bad)}; topics: {', '.join(TOPICS)}")
    store = Store(report.criterion_dir(a.criterion))
    if pyplot() is None:
        print("pages: matplotlib is not installed (`pip install matplotlib`): the page will have "
              "no charts", flush=True)
    if not a.from_existing:
        t0 = time.time()
        inv = f"{os.getpid()}-{int(t0)}"
        store.state["invocation"] = inv
        machine = machine_info()
        prune(store, machine)
        info = {"date": now_iso(), "commit": commit_info(), "machine": machine, "quick": a.quick,
                "only": only}
        selected = [j for j in jobs(a.quick, machine) if set(j.topics) & set(only)]
        needs_venv = any("venv" in j.needs or j.bench in ("peers", "own_peers", "time_steps")
                         for j in selected)
        if needs_venv:
            ok, v = venv_status(a.quick, may_install=True)
            info["venv"] = {"ok": True, "versions": v} if ok else {"ok": False, "reason": v}
        else:
            info["venv"] = store.state.get("invocation_info", {}).get("venv", {})
        machine["venv"] = info["venv"]
        col = 0 if machine["opencl"]["devices"] else 1
        expected = sum(EXPECTED_S[j.expected][col] for j in selected)
        print(f"pages: {len(selected)} runs, {'quick' if a.quick else 'expected about ' + duration(expected)}"
              f" after the build; OpenCL: {len(machine['opencl']['devices'])} device(s)",
              flush=True)
        store.state["invocation_info"] = info
        store.save()
        info["build_seconds"] = round(build(selected, store.dir / "build.log"), 1)
        store.save()
        for j in selected:
            run_job(j, store, machine, a.quick, a.verbose)
        info["seconds"] = round(time.time() - t0, 1)
        store.save()
    else:
        prune(store, store.state.get("invocation_info", {}).get("machine", {}))
        if not store.state["runs"]:
            sys.exit(f"pages: nothing under {store.dir}: run without --from-existing first")
    quick = page_is_quick(store)
    out = Path(a.out) if a.out else (store.dir / "quick" / "benchmarks.md" if quick
                                     else ROOT / "docs" / "benchmarks.md")
    write_page(store, out)
    print(f"pages: wrote {out}" + (" (a QUICK run: not for docs/)" if quick else ""), flush=True)


if __name__ == "__main__":
    main()
