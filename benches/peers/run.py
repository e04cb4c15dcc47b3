#!/usr/bin/env python3
"""Times Halide and OpenCV on the four pipelines of shared/APPS.md, on the inputs the Rust
driver writes, and checks their outputs against the driver's reference outputs.

    python run.py --inputs DIR --out DIR [--seconds 3] [--warmup 1]
                  [--only laplacian,blur] [--contenders halide_cpu,halide_opencl,...]
    python run.py --self-test [--inputs DIR]

Inputs: DIR/laplacian.src.npy (u8 [M][N]), DIR/sharpen.src.npy (u8), DIR/blur.src.npy (u16),
DIR/unsharp.img.npy (f32 [3][M][N]); references, where present: DIR/laplacian.lap.npy,
DIR/laplacian.down.npy, DIR/sharpen.out.npy, DIR/blur.out.npy, DIR/unsharp.out.npy (a missing
one is computed with numpy_reference.py, unless --no-numpy-reference). Writes OUT/results.json.

Contenders: halide_cpu, halide_opencl (Halide's JIT for host-opencl), opencv_cpu (numpy
arrays), opencv_umat (cv2.UMat: OpenCV's OpenCL). A timed call is a whole call: input in host
memory as numpy, output in host memory (for the OpenCL contenders: upload, kernels, download);
outputs are allocated once where the API allows. The OpenCL contenders also report
`resident_*`: the same call with the data left on the device (kernels only, synchronised).
"""

import argparse
import ast
import importlib.metadata
import inspect
import json
import os
import platform
import sys
import textwrap
import time
import traceback

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import opencv_apps  # noqa: E402  (sets OPENCV_OPENCL_DEVICE before cv2 is imported)
import cv2  # noqa: E402
import halide as hl  # noqa: E402
import halide_apps  # noqa: E402
import numpy_reference  # noqa: E402

PIPELINES = ["laplacian", "sharpen", "blur", "unsharp"]
CONTENDERS = ["halide_cpu", "halide_opencl", "opencv_cpu", "opencv_umat"]
INPUT_FILE = dict(laplacian="laplacian.src.npy", sharpen="sharpen.src.npy",
                  blur="blur.src.npy", unsharp="unsharp.img.npy")
OUTPUT_NAMES = dict(laplacian=["lap", "down"], sharpen=["out"], blur=["out"], unsharp=["out"])
TOLERANCE = dict(laplacian=0.0, sharpen=0.0, blur=0.0, unsharp=1e-4)


class Unavailable(Exception):
    pass


# --------------------------------------------------------------------------------------------
# Contenders: each is an object with call() (one whole call), resident() or None, outputs()
# (numpy arrays in the references' layout), compile_ms, note.
# --------------------------------------------------------------------------------------------

class HalideRunner:
    def __init__(self, pipeline, kind, array):
        self.kind = kind
        try:
            self.c = halide_apps.Compiled(pipeline, kind).bind(array)
        except Exception as e:  # noqa: BLE001 (an unusable JIT target is a result, not a crash)
            raise Unavailable("Halide %s JIT: %s" % (kind, _one_line(e))) from e
        self.compile_ms = self.c.compile_ms
        self.note = "target %s" % self.c.target
        self.resident = self._resident if kind == "gpu" else None

    def call(self):
        self.c.run()

    def _resident(self):
        self.c.run(upload=False, download=False)
        for b in self.c.out_bufs:
            b.device_sync()

    def outputs(self):
        return self.c.outputs()


class OpenCVRunner:
    def __init__(self, pipeline, umat, array):
        self.pipeline, self.umat, self.array = pipeline, umat, array
        self.fn = opencv_apps.FUNCTIONS[pipeline]
        self.compile_ms = None
        self.note = "OpenCV %s, %d threads" % (cv2.__version__, cv2.getNumThreads())
        if umat:
            ok, what = opencv_apps.opencl_status()
            if not ok:
                raise Unavailable(what)
            self.note += ", cv2.UMat on OpenCL device %s" % what
        else:
            cv2.ocl.setUseOpenCL(False)
            self.note += ", numpy arrays (CPU code)"
        self.shape = array.shape[-2:]
        m, n = self.shape
        if pipeline == "laplacian":
            self.dst = [np.empty((m, n), np.int16), np.empty(((m + 1) // 2, (n + 1) // 2), np.uint8)]
        elif pipeline == "unsharp":
            self.dst = [np.empty_like(array)]
        else:
            self.dst = [np.empty((m, n), array.dtype)]
        self.resident = self._resident if umat else None
        self._res_in = None
        self._last = None

    def _inputs(self, make):
        a = self.array
        if self.pipeline == "unsharp":
            return [make(np.ascontiguousarray(a[i])) for i in range(3)]
        return make(a)

    def _call_args(self, inp, dsts):
        if self.pipeline == "unsharp":
            return self.fn(inp, self.shape, dsts[0] if dsts else (None, None, None))
        return self.fn(inp, self.shape, *(dsts or []))

    def call(self):
        if not self.umat:
            dsts = self.dst if self.pipeline != "unsharp" else [list(self.dst[0])]
            self._call_args(self.array if self.pipeline != "unsharp" else list(self.array), dsts)
            self._last = None
        else:
            res = self._call_args(self._inputs(cv2.UMat), None)
            res = res if isinstance(res, (tuple, list)) else [res]
            self._last = [r.get() for r in res]

    def _resident(self):
        if self._res_in is None:
            self._res_in = self._inputs(cv2.UMat)
        self._call_args(self._res_in, None)
        cv2.ocl.finish()

    def outputs(self):
        if not self.umat:
            outs = list(self.dst)
        elif self.pipeline == "unsharp":
            outs = [np.stack(self._last)]
        else:
            outs = list(self._last)
        if self.pipeline == "blur":
            outs = [outs[0][1:-1, 1:-1]]
        return outs


def make_runner(pipeline, contender, array):
    if contender == "halide_cpu":
        return HalideRunner(pipeline, "cpu", array)
    if contender == "halide_opencl":
        return HalideRunner(pipeline, "gpu", array)
    if contender == "opencv_cpu":
        return OpenCVRunner(pipeline, False, array)
    if contender == "opencv_umat":
        return OpenCVRunner(pipeline, True, array)
    raise ValueError("unknown contender %r" % contender)


# --------------------------------------------------------------------------------------------
# Timing, comparison, lines of code, machine
# --------------------------------------------------------------------------------------------

def measure(fn, seconds, warmup, min_samples=3):
    t0 = time.perf_counter()
    n = 0
    while n < 2 or time.perf_counter() - t0 < warmup:
        fn()
        n += 1
    samples = []
    t0 = time.perf_counter()
    while len(samples) < min_samples or time.perf_counter() - t0 < seconds:
        s = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - s)
    ms = np.array(samples) * 1e3
    return float(np.median(ms)), float(ms.min()), len(ms)


def compare(outs, refs, names, tolerance):
    """(max_abs_diff per output, exact, within tolerance)."""
    diffs, exact, within = {}, True, True
    for name, o, r in zip(names, outs, refs):
        if r is None:
            diffs[name] = None
            exact = within = None
            continue
        if o.shape != r.shape:
            diffs[name] = "shape %s, reference %s" % (list(o.shape), list(r.shape))
            exact = within = False
            continue
        d = float(np.abs(o.astype(np.float64) - r.astype(np.float64)).max()) if o.size else 0.0
        diffs[name] = d
        if exact is not None:
            exact = exact and d == 0.0 and o.dtype == r.dtype
            within = within and d <= tolerance
    return diffs, exact, within


def count_loc(fn):
    """Non-blank, non-comment lines of a function's body (its `def` line and docstring
    excluded)."""
    src = textwrap.dedent(inspect.getsource(fn))
    node = ast.parse(src).body[0]
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None),
                                                             ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body:
        return 0
    lines = src.splitlines()[body[0].lineno - 1:node.end_lineno]
    return sum(1 for ln in lines if ln.strip() and not ln.strip().startswith("#"))


H, O = halide_apps, opencv_apps
LOC_PARTS = dict(
    laplacian=dict(halide_algorithm=[H.laplacian_algorithm, H._extrapolate, H._i32],
                   halide_schedule_cpu=[H.laplacian_schedule_cpu],
                   halide_schedule_gpu=[H.laplacian_schedule_gpu, H._gpu_tile],
                   opencv=[O.laplacian_opencv]),
    sharpen=dict(halide_algorithm=[H.sharpen_algorithm, H._i32],
                 halide_schedule_cpu=[H.sharpen_schedule_cpu],
                 halide_schedule_gpu=[H.sharpen_schedule_gpu, H._gpu_tile],
                 opencv=[O.sharpen_opencv]),
    blur=dict(halide_algorithm=[H.blur_algorithm],
              halide_schedule_cpu=[H.blur_schedule_cpu],
              halide_schedule_gpu=[H.blur_schedule_gpu, H._gpu_tile],
              opencv=[O.blur_opencv]),
    unsharp=dict(halide_algorithm=[H.unsharp_algorithm],
                 halide_schedule_cpu=[H.unsharp_schedule_cpu],
                 halide_schedule_gpu=[H.unsharp_schedule_gpu, H._gpu_tile],
                 opencv=[O.unsharp_opencv, O.unsharp_taps7]))


def loc_table():
    return {p: {k: sum(count_loc(f) for f in fs) for k, fs in parts.items()}
            for p, parts in LOC_PARTS.items()}


def machine():
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" in line:
                    k, v = (t.strip() for t in line.split(":", 1))
                    info.setdefault(k, v)
    except OSError:
        pass
    model = info.get("model name") or platform.processor() or platform.machine()
    if "cpu family" in info:
        model += " (family %s model %s)" % (info["cpu family"], info.get("model", "?"))
    if "avx512f" in info.get("flags", "").split():
        model += ", AVX-512"
    return "%s, %d cores" % (model, os.cpu_count() or 0)


def versions():
    ok, ocl = opencv_apps.opencl_status()
    cv2.ocl.setUseOpenCL(False)
    v = dict(python=platform.python_version(), numpy=np.__version__, opencv=cv2.__version__,
             halide=importlib.metadata.version("halide"),
             halide_cpu_target=str(halide_apps.target("cpu")),
             halide_opencl_target=str(halide_apps.target("gpu")),
             opencv_opencl=ocl if ok else "unavailable: " + ocl,
             opencv_threads=cv2.getNumThreads(),
             halide_threads=int(os.environ.get("HL_NUM_THREADS", os.cpu_count() or 1)))
    return v


def _one_line(e):
    return " ".join(str(e).split()) or type(e).__name__


# --------------------------------------------------------------------------------------------
# The benchmark
# --------------------------------------------------------------------------------------------

def load_reference(inputs, pipeline, array, use_numpy):
    refs = []
    for name in OUTPUT_NAMES[pipeline]:
        path = os.path.join(inputs, "%s.%s.npy" % (pipeline, name))
        refs.append(np.load(path) if os.path.exists(path) else None)
    if all(r is not None for r in refs):
        return refs, "driver"
    if not use_numpy:
        return refs, "none" if all(r is None for r in refs) else "driver (partial)"
    computed = getattr(numpy_reference, pipeline)(array)
    computed = list(computed) if isinstance(computed, tuple) else [computed]
    return [r if r is not None else c for r, c in zip(refs, computed)], "numpy_reference.py"


def run_one(pipeline, contender, array, refs, args):
    r = dict(pipeline=pipeline, contender=contender, status="ok", reason=None, median_ms=None,
             min_ms=None, samples=0, compile_ms=None, first_call_ms=None,
             resident_median_ms=None, resident_min_ms=None, resident_samples=0,
             max_abs_diff=None, exact=None, within_tolerance=None, note=None,
             difference=opencv_apps.DIFFERENCES[pipeline] if contender.startswith("opencv")
             else None)
    try:
        runner = make_runner(pipeline, contender, array)
    except Unavailable as e:
        r.update(status="unavailable", reason=str(e))
        return r
    r["compile_ms"] = runner.compile_ms
    r["note"] = runner.note
    try:
        t = time.perf_counter()
        runner.call()
        r["first_call_ms"] = (time.perf_counter() - t) * 1e3
        r["median_ms"], r["min_ms"], r["samples"] = measure(runner.call, args.seconds, args.warmup)
        outs = runner.outputs()
        if runner.resident is not None:
            (r["resident_median_ms"], r["resident_min_ms"],
             r["resident_samples"]) = measure(runner.resident, args.seconds, args.warmup)
    except Exception as e:  # noqa: BLE001
        r.update(status="unavailable", reason="%s failed at run time: %s" % (
            contender, _one_line(e)))
        traceback.print_exc()
        return r
    r["max_abs_diff"], r["exact"], r["within_tolerance"] = compare(
        outs, refs, OUTPUT_NAMES[pipeline], TOLERANCE[pipeline])
    return r


def bench(args):
    only = args.only.split(",") if args.only else PIPELINES
    contenders = args.contenders.split(",") if args.contenders else CONTENDERS
    for p in only:
        if p not in PIPELINES:
            sys.exit("unknown pipeline %r (known: %s)" % (p, ",".join(PIPELINES)))
    for c in contenders:
        if c not in CONTENDERS:
            sys.exit("unknown contender %r (known: %s)" % (c, ",".join(CONTENDERS)))
    os.makedirs(args.out, exist_ok=True)
    results, references = [], {}
    for p in only:
        path = os.path.join(args.inputs, INPUT_FILE[p])
        if not os.path.exists(path):
            print("%s: no input %s, skipped" % (p, path), file=sys.stderr)
            continue
        array = np.ascontiguousarray(np.load(path))
        refs, references[p] = load_reference(args.inputs, p, array, not args.no_numpy_reference)
        for c in contenders:
            r = run_one(p, c, array, refs, args)
            r["shape"] = list(array.shape)
            results.append(r)
            if r["status"] == "ok":
                print("%-10s %-14s median %9.3f ms  min %9.3f ms  n=%4d  diff %s" % (
                    p, c, r["median_ms"], r["min_ms"], r["samples"], r["max_abs_diff"]),
                    flush=True)
            else:
                print("%-10s %-14s unavailable: %s" % (p, c, r["reason"]), flush=True)
    doc = dict(machine=machine(), versions=versions(), references=references,
               seconds=args.seconds, warmup=args.warmup, results=results, loc=loc_table())
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print("wrote", os.path.join(args.out, "results.json"))


# --------------------------------------------------------------------------------------------
# The self-test
# --------------------------------------------------------------------------------------------

# The smallest legal sizes, odd sizes, sizes that are no multiple of a vector width, and sizes
# at and around one OpenCL tile (32x8; unsharp 32x32), where the schedules switch from guarded
# to whole tiles.
SELF_TEST_SIZES = dict(
    laplacian=[(4, 4), (4, 5), (5, 4), (5, 7), (7, 9), (9, 4), (8, 63), (7, 64), (33, 67),
               (64, 130), (131, 97), (200, 333)],
    sharpen=[(8, 8), (8, 12), (12, 8), (20, 36), (32, 128), (28, 128), (68, 132), (128, 260),
             (200, 332)],
    blur=[(3, 3), (3, 4), (4, 3), (3, 40), (40, 3), (10, 34), (9, 34), (35, 67), (130, 200),
          (203, 333)],
    unsharp=[(1, 1), (1, 5), (4, 1), (2, 3), (7, 9), (32, 32), (31, 33), (35, 67), (130, 200),
             (203, 333)])


def random_input(pipeline, shape, rng):
    if pipeline == "blur":
        return rng.integers(0, 4096, shape, dtype=np.uint16)  # 12-bit, as APPS.md
    if pipeline == "unsharp":
        return rng.uniform(1 / 255, 1, (3,) + shape).astype(np.float32)
    return rng.integers(0, 256, shape, dtype=np.uint8)


def self_test(args):
    rng = np.random.default_rng(20240611)
    failures, unavailable = [], []
    for p in PIPELINES:
        compiled = {}
        for kind in ("cpu", "gpu"):
            try:
                compiled[kind] = halide_apps.Compiled(p, kind)
            except Exception as e:  # noqa: BLE001
                unavailable.append("%s halide %s: %s" % (p, kind, _one_line(e)))
        umat_ok = opencv_apps.opencl_status()[0]
        for shape in SELF_TEST_SIZES[p]:
            a = random_input(p, shape, rng)
            ref = getattr(numpy_reference, p)(a)
            refs = list(ref) if isinstance(ref, tuple) else [ref]
            line = []
            for kind, c in compiled.items():
                try:
                    c.bind(a)
                    c.run()
                    outs = c.outputs()
                except Exception as e:  # noqa: BLE001
                    failures.append("%s %s halide %s: %s" % (p, shape, kind, _one_line(e)))
                    line.append("halide_%s ERROR" % kind)
                    continue
                diffs, exact, within = compare(outs, refs, OUTPUT_NAMES[p], TOLERANCE[p])
                ok = exact if TOLERANCE[p] == 0 else within
                if not ok:
                    failures.append("%s %s halide %s: max diff %s" % (p, shape, kind, diffs))
                line.append("halide_%s %s %s" % ("cpu" if kind == "cpu" else "opencl",
                                                 "ok" if ok else "FAIL", _fmt(diffs)))
            for contender in ("opencv_cpu", "opencv_umat"):
                if contender == "opencv_umat" and not umat_ok:
                    continue
                runner = OpenCVRunner(p, contender == "opencv_umat", a)
                runner.call()
                diffs, _, _ = compare(runner.outputs(), refs, OUTPUT_NAMES[p], TOLERANCE[p])
                line.append("%s diff %s" % (contender, _fmt(diffs)))
            print("%-9s %-11s %s" % (p, "%dx%d" % shape, "; ".join(line)), flush=True)
    if args.inputs:
        # Cross-check numpy_reference.py against the driver's references.
        for p in PIPELINES:
            path = os.path.join(args.inputs, INPUT_FILE[p])
            if not os.path.exists(path):
                continue
            a = np.load(path)
            refs, source = load_reference(args.inputs, p, a, False)
            if source != "driver":
                continue
            ours = getattr(numpy_reference, p)(a)
            ours = list(ours) if isinstance(ours, tuple) else [ours]
            diffs, exact, within = compare(ours, refs, OUTPUT_NAMES[p], TOLERANCE[p])
            ok = exact if TOLERANCE[p] == 0 else within
            print("numpy_reference vs driver reference, %s %s: %s %s" % (
                p, list(a.shape), "ok" if ok else "FAIL", _fmt(diffs)))
            if not ok:
                failures.append("numpy_reference %s disagrees with the driver: %s" % (p, diffs))
    for u in unavailable:
        print("unavailable:", u)
    if failures:
        print("SELF-TEST FAILED:")
        for f in failures:
            print("  ", f)
        return 1
    print("self-test passed: Halide CPU%s bit-exact (unsharp within 1e-4) on every size" % (
        "" if any("gpu" in u for u in unavailable) else " and OpenCL"))
    return 0


def _fmt(diffs):
    return ",".join("%s=%g" % (k, v) if isinstance(v, float) else "%s=%s" % (k, v)
                    for k, v in diffs.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", help="directory of the driver's .npy inputs and references")
    ap.add_argument("--out", help="directory for results.json")
    ap.add_argument("--seconds", type=float, default=3.0, help="timing per contender (s)")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up per contender (s)")
    ap.add_argument("--only", help="comma-separated pipelines (default: all)")
    ap.add_argument("--contenders", help="comma-separated contenders (default: all)")
    ap.add_argument("--no-numpy-reference", action="store_true",
                    help="do not compute missing references with numpy_reference.py")
    ap.add_argument("--self-test", action="store_true",
                    help="check Halide's schedules bit-exact on small random images")
    args = ap.parse_args()
    if args.self_test:
        sys.exit(self_test(args))
    if not args.inputs or not args.out:
        ap.error("--inputs and --out are required (or --self-test)")
    bench(args)


if __name__ == "__main__":
    main()
