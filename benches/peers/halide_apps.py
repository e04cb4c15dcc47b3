"""The four pipelines of shared/APPS.md in Halide (Python JIT bindings), as Halide's own apps/
write them: per pipeline an `<app>_algorithm` function (what is computed) and two schedules,
`<app>_schedule_cpu` (parallel strips of rows, vectorized rows, producers fused per strip) and
`<app>_schedule_gpu` (gpu_tile, for the `host-opencl` target).

Halide buffers made from numpy arrays reverse the axes: a numpy `[M][N]` array (rows, columns)
is a Halide buffer with x = column (innermost, extent N) and y = row (extent M); `[3][M][N]` is
(x, y, c). So `src[x][y]` of APPS.md (row x, column y) is `src[y, x]` here.

Integer semantics follow C as APPS.md says: values are widened to int32 before arithmetic
(Halide keeps the narrow type otherwise), division of values that may be negative uses
`hl.div_round_to_zero` (Halide's `/` rounds toward negative infinity), and a narrowing `hl.cast`
keeps the low bits, as C does.
"""

import math
import time

import halide as hl
import numpy as np

# --------------------------------------------------------------------------------------------
# Helpers shared by the algorithms
# --------------------------------------------------------------------------------------------

F = [1, 4, 6, 4, 1]


def _i32(e):
    return hl.cast(hl.Int(32), e)


def _extrapolate(v, p, n):
    """The paper's linear extrapolation: position `p` (in -2..n+1) of a line of `n` values
    `v(i)` (int32 Exprs), as one select whose likely case is the interior. The values beyond
    each end are read relative to `p` (`v(3)` is `v(p + 5)` at `p == -2`): the same values,
    but Halide's bounds inference then sees that a strip of rows only needs its neighbours."""
    def at(q):
        return v(hl.clamp(q, 0, n - 1))

    return hl.select(
        (p >= 0) & (p < n), hl.likely(at(p)),
        p == -2, at(p + 5) * 4 - at(p + 3) * 4 + at(p + 2) * 2 - at(p + 4),
        p == -1, at(p + 2) * 2 - at(p + 4),
        p == n, at(p - 2) * 2 - at(p - 4),
        at(p - 5) * 4 - at(p - 3) * 4 + at(p - 2) * 2 - at(p - 4))


def _gpu_tile(f, x, y, xi, yi, tx, ty, large=None):
    """gpu_tile with whole tiles (ShiftInwards) where `large` holds (the Func's region is at
    least one tile; by default: `f` is an output at least one tile big), guarded tiles
    otherwise. PoCL runs guarded tiles (a branch in every work-item) up to 10x slower."""
    if large is None:
        out = f.output_buffer()
        large = (out.width() >= tx) & (out.height() >= ty)
    f.specialize(large).gpu_tile(x, y, xi, yi, tx, ty)
    f.gpu_tile(x, y, xi, yi, tx, ty, hl.TailStrategy.GuardWithIf)


class App:
    """One pipeline: its input parameters, its named Funcs, its outputs."""

    def __init__(self, inputs, funcs, outputs):
        self.inputs = inputs
        self.funcs = funcs
        self.outputs = outputs
        self.vars = {}


# --------------------------------------------------------------------------------------------
# 1. laplacian
# --------------------------------------------------------------------------------------------

def laplacian_algorithm():
    src = hl.ImageParam(hl.UInt(8), 2, "src")
    x, y = hl.Var("x"), hl.Var("y")
    n, m = src.width(), src.height()
    md, nd = (m + 1) / 2, (n + 1) / 2

    # Border rule br on the columns of src (int values, not clamped).
    src_br = hl.Func("src_br")
    src_br[x, y] = _extrapolate(lambda c: _i32(src[c, y]), x, n)
    # h at the even columns only (down reads no other): hd(j, r) = h[r][2j].
    hd = hl.Func("hd")
    hd[x, y] = hl.cast(hl.UInt(8), hl.div_round_to_zero(
        sum(F[k] * src_br[2 * x - 2 + k, y] for k in range(5)) + 8, 16))
    # Border rule br1 on the rows of h.
    h_br1 = hl.Func("h_br1")
    h_br1[x, y] = _extrapolate(lambda r: _i32(hd[x, r]), y, m)
    down = hl.Func("down")
    down[x, y] = hl.cast(hl.UInt(8), hl.div_round_to_zero(
        sum(F[k] * h_br1[x, 2 * y - 2 + k] for k in range(5)) + 8, 16))
    # Bilinear upsample (rounded, clamped at the last row and column) and the difference.
    # (`likely`: the clamp is the rare case, so Halide peels it off the loop.)
    y0, y1 = y / 2, hl.min(hl.likely((y + 1) / 2), md - 1)
    x0, x1 = x / 2, hl.min(hl.likely((x + 1) / 2), nd - 1)
    up = hl.Func("up")
    up[x, y] = (_i32(down[x0, y0]) + _i32(down[x1, y0]) + _i32(down[x0, y1])
                + _i32(down[x1, y1]) + 2) / 4
    lap = hl.Func("lap")
    lap[x, y] = hl.cast(hl.Int(16), _i32(src[x, y]) - up[x, y])
    app = App([src], dict(src_br=src_br, hd=hd, h_br1=h_br1, down=down, up=up, lap=lap),
              [lap, down])
    app.vars = dict(x=x, y=y)
    return app


def laplacian_schedule_cpu(app, strip=32, vec=32):
    f, x, y = app.funcs, app.vars["x"], app.vars["y"]
    yo, yi = hl.Var("yo"), hl.Var("yi")
    g = hl.TailStrategy.GuardWithIf
    # h (at the even columns) at root: fused into strips of down it is slower, as each strip
    # then partitions the border selects again.
    f["hd"].compute_root().split(y, yo, yi, strip // 2, g).parallel(yo).vectorize(x, vec, g)
    f["down"].split(y, yo, yi, strip // 2, g).parallel(yo).vectorize(x, vec, g)
    # The upsample and the difference: strips of rows, vectorized rows.
    f["lap"].split(y, yo, yi, strip, g).parallel(yo).vectorize(x, vec, g)


def laplacian_schedule_gpu(app, tx=32, ty=8):
    f, x, y, src = app.funcs, app.vars["x"], app.vars["y"], app.inputs[0]
    xi, yi = hl.Var("xi"), hl.Var("yi")
    # hd covers (N+1)/2 columns and M rows.
    _gpu_tile(f["hd"].compute_root(), x, y, xi, yi, tx, ty,
              ((src.width() + 1) / 2 >= tx) & (src.height() >= ty))
    _gpu_tile(f["down"], x, y, xi, yi, tx, ty)
    _gpu_tile(f["lap"], x, y, xi, yi, tx, ty)


# --------------------------------------------------------------------------------------------
# 2. sharpen
# --------------------------------------------------------------------------------------------

def sharpen_algorithm():
    src = hl.ImageParam(hl.UInt(8), 2, "src")
    x, y = hl.Var("x"), hl.Var("y")
    n, m = src.width(), src.height()
    md, nd = m / 4, n / 4

    # 1. 4x downsample.
    down = hl.Func("down")
    down[x, y] = hl.cast(hl.UInt(8), (sum(_i32(src[4 * x + b, 4 * y + a])
                                          for a in range(4) for b in range(4)) + 8) >> 4)

    # 2. 4x bilinear upsample in eighths, separably (the same integer sum): rows, then columns.
    def taps(p, length):
        t = p - 2
        i0 = t >> 2  # floor(t / 4)
        a = t - 4 * i0
        return (hl.clamp(i0, 0, length - 1), 7 - 2 * a,
                hl.clamp(i0 + 1, 0, length - 1), 2 * a + 1)

    r0, wr0, r1, wr1 = taps(y, md)
    up_y = hl.Func("up_y")  # [N/4 columns][M rows]
    up_y[x, y] = wr0 * _i32(down[x, r0]) + wr1 * _i32(down[x, r1])
    c0, wc0, c1, wc1 = taps(x, nd)
    up = hl.Func("up")
    up[x, y] = hl.cast(hl.UInt(8), (wc0 * up_y[c0, y] + wc1 * up_y[c1, y] + 32) >> 6)

    # 3. err (stored as i16).
    err = hl.Func("err")
    err[x, y] = hl.cast(hl.Int(16), _i32(src[x, y]) - _i32(up[x, y]))

    # 4. Sobel magnitude, clamp-to-edge.
    sc = hl.BoundaryConditions.repeat_edge(src)
    s = hl.Func("s")
    s[x, y] = _i32(sc[x, y])
    gx = ((s[x + 1, y - 1] + 2 * s[x + 1, y] + s[x + 1, y + 1])
          - (s[x - 1, y - 1] + 2 * s[x - 1, y] + s[x - 1, y + 1]))
    gy = ((s[x - 1, y + 1] + 2 * s[x, y + 1] + s[x + 1, y + 1])
          - (s[x - 1, y - 1] + 2 * s[x, y - 1] + s[x + 1, y - 1]))
    edge = hl.Func("edge")
    edge[x, y] = hl.cast(hl.UInt(8), hl.min(_i32(hl.abs(gx)) + _i32(hl.abs(gy)), 255))

    # 5. Global mean: column sums (32 bits), then a 64-bit sum of the columns.
    ry = hl.RDom([hl.Range(0, m)], "ry")
    col_sum = hl.Func("col_sum")
    col_sum[x] = hl.u32(0)
    col_sum[x] += hl.u32(edge[x, ry.x])
    rx = hl.RDom([hl.Range(0, n)], "rx")
    total = hl.Func("total")
    total[()] = hl.u64(0)
    total[()] += hl.u64(col_sum[rx.x])
    mean = hl.Func("mean")
    mean[()] = _i32(total[()] / hl.u64(m * n))

    # 6, 7. gain, pre and overshoot control. `edge * 16 / (mean + 16)` divides by a run-time
    # value, which vector units cannot do: as compilers do for a loop-invariant divisor, it is a
    # multiply by ceil(2^21 / d) and a shift, exact here since edge * 16 <= 4080 and
    # 16 <= d <= 271 (4080 * 270 < 2^21).
    magic = hl.Func("magic")
    magic[()] = ((1 << 21) + mean[()] + 15) / (mean[()] + 16)
    gain = hl.min((_i32(edge[x, y]) * 16 * magic[()]) >> 21, 32)
    pre = _i32(up[x, y]) + hl.div_round_to_zero(_i32(err[x, y]) * (16 + gain), 16)
    min_x, max_x = hl.Func("min_x"), hl.Func("max_x")
    min_x[x, y] = hl.min(s[x - 1, y], s[x, y], s[x + 1, y])
    max_x[x, y] = hl.max(s[x - 1, y], s[x, y], s[x + 1, y])
    lo = hl.min(min_x[x, y - 1], min_x[x, y], min_x[x, y + 1])
    hi = hl.max(max_x[x, y - 1], max_x[x, y], max_x[x, y + 1])
    out = hl.Func("out")
    out[x, y] = hl.cast(hl.UInt(8), hl.clamp(hl.clamp(pre, lo - 8, hi + 8), 0, 255))
    app = App([src], dict(down=down, up_y=up_y, up=up, err=err, s=s, edge=edge,
                          col_sum=col_sum, total=total, mean=mean, magic=magic, min_x=min_x, max_x=max_x,
                          out=out), [out])
    app.vars = dict(x=x, y=y, rx=rx, ry=ry)
    return app


def sharpen_schedule_cpu(app, strip=32, vec=64, sum_strip=64):
    f, x, y, ry = app.funcs, app.vars["x"], app.vars["y"], app.vars["ry"]
    yo, yi, v = hl.Var("yo"), hl.Var("yi"), hl.Var("v")
    ryo, ryi = hl.RVar("ryo"), hl.RVar("ryi")
    g = hl.TailStrategy.GuardWithIf
    f["down"].compute_root().parallel(y, 8, g).vectorize(x, 32, g)
    # The mean: edge recomputed inside the column sums of strips of rows, strips in parallel.
    for name in ("mean", "magic", "total"):
        f[name].compute_root()
    strips = f["col_sum"].update().split(ry.x, ryo, ryi, sum_strip, g).rfactor(ryo, v)
    strips.compute_root().vectorize(x, 16, g).parallel(v)
    strips.update().reorder(x, ryi, v).vectorize(x, 32, g).parallel(v)
    f["col_sum"].compute_root().vectorize(x, 16, g)
    f["col_sum"].update().vectorize(x, 16, g)
    # The final stage: strips of rows, the row pass of up per strip, the rest inlined.
    f["out"].split(y, yo, yi, strip, g).parallel(yo).vectorize(x, vec, g)
    f["up_y"].compute_at(f["out"], yo).vectorize(x, 16, g)


def sharpen_schedule_gpu(app, tx=32, ty=8):
    f, x, y, src = app.funcs, app.vars["x"], app.vars["y"], app.inputs[0]
    xi, yi = hl.Var("xi"), hl.Var("yi")
    n, m = src.width(), src.height()
    _gpu_tile(f["down"].compute_root(), x, y, xi, yi, tx, ty, (n / 4 >= tx) & (m / 4 >= ty))
    # The mean: edge at root for the column sums only (the final stage recomputes it, which
    # is faster on PoCL than reading it back), one work-item per column, then one work-item
    # for the 64-bit total.
    f["edge"].in_(f["col_sum"]).compute_root().gpu_tile(x, y, xi, yi, tx, ty)
    f["col_sum"].compute_root().gpu_tile(x, xi, 64)
    f["col_sum"].update().gpu_tile(x, xi, 64)
    for name in ("total", "mean", "magic"):
        f[name].compute_root().gpu_single_thread()
    f["total"].update().gpu_single_thread()
    _gpu_tile(f["up_y"].compute_root(), x, y, xi, yi, tx, ty, (n / 4 >= tx) & (m >= ty))
    _gpu_tile(f["out"], x, y, xi, yi, tx, ty)


# --------------------------------------------------------------------------------------------
# 3. blur
# --------------------------------------------------------------------------------------------

def blur_algorithm():
    """As Halide's `apps/blur` writes it: the sums and the divisions in 16 bits (`UInt(16)`),
    exact for the 12-bit inputs of APPS.md (three of them sum to at most 12,285), where Halide
    divides by 3 with a 16-bit multiply-high. (The generator's own `* 21845 >> 16` rounds some
    sums down one more than `/ 3` does, so the bench keeps the division APPS.md defines.)"""
    src = hl.ImageParam(hl.UInt(16), 2, "src")
    x, y = hl.Var("x"), hl.Var("y")
    bx = hl.Func("bx")
    bx[x, y] = (src[x, y] + src[x + 1, y] + src[x + 2, y]) / 3
    out = hl.Func("out")
    out[x, y] = (bx[x, y] + bx[x, y + 1] + bx[x, y + 2]) / 3
    app = App([src], dict(bx=bx, out=out), [out])
    app.vars = dict(x=x, y=y)
    return app


def blur_schedule_cpu(app, strip=32, vec=32):
    f, x, y = app.funcs, app.vars["x"], app.vars["y"]
    yo, yi = hl.Var("yo"), hl.Var("yi")
    g = hl.TailStrategy.GuardWithIf
    f["out"].split(y, yo, yi, strip, g).parallel(yo).vectorize(x, vec, g)
    f["bx"].store_at(f["out"], yo).compute_at(f["out"], yi).vectorize(x, vec, g)


def blur_schedule_gpu(app, tx=32, ty=8):
    f, x, y = app.funcs, app.vars["x"], app.vars["y"]
    xi, yi = hl.Var("xi"), hl.Var("yi")
    _gpu_tile(f["out"], x, y, xi, yi, tx, ty)


# --------------------------------------------------------------------------------------------
# 4. unsharp
# --------------------------------------------------------------------------------------------

def unsharp_algorithm():
    img = hl.ImageParam(hl.Float(32), 3, "img")
    x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")
    sigma = 1.5
    k = [hl.f32(math.exp(-i * i / (2 * sigma * sigma)) / (math.sqrt(2 * math.pi) * sigma))
         for i in range(4)]
    clamped = hl.BoundaryConditions.repeat_edge(img)
    gray = hl.Func("gray")
    gray[x, y] = (hl.f32(0.299) * clamped[x, y, 0] + hl.f32(0.587) * clamped[x, y, 1]
                  + hl.f32(0.114) * clamped[x, y, 2])
    by = hl.Func("by")
    by[x, y] = (k[0] * gray[x, y] + k[1] * (gray[x, y - 1] + gray[x, y + 1])
                + k[2] * (gray[x, y - 2] + gray[x, y + 2])
                + k[3] * (gray[x, y - 3] + gray[x, y + 3]))
    bx = hl.Func("bx")
    bx[x, y] = (k[0] * by[x, y] + k[1] * (by[x - 1, y] + by[x + 1, y])
                + k[2] * (by[x - 2, y] + by[x + 2, y])
                + k[3] * (by[x - 3, y] + by[x + 3, y]))
    ratio = hl.Func("ratio")
    ratio[x, y] = (2 * gray[x, y] - bx[x, y]) / gray[x, y]
    out = hl.Func("out")
    out[x, y, c] = ratio[x, y] * img[x, y, c]
    app = App([img], dict(gray=gray, by=by, bx=bx, ratio=ratio, out=out), [out])
    app.vars = dict(x=x, y=y, c=c)
    return app


def unsharp_schedule_cpu(app, strip=32, vec=16):
    f, x, y, c = app.funcs, app.vars["x"], app.vars["y"], app.vars["c"]
    yo, yi = hl.Var("yo"), hl.Var("yi")
    g = hl.TailStrategy.GuardWithIf
    f["out"].split(y, yo, yi, strip, g).vectorize(x, vec, g).parallel(yo).reorder(x, c, yi, yo)
    f["gray"].compute_at(f["out"], yi).store_at(f["out"], yo).vectorize(x, vec, g)
    f["by"].compute_at(f["out"], yi).store_at(f["out"], yo).vectorize(x, vec, g)
    f["ratio"].compute_at(f["out"], yi).store_at(f["out"], yo).vectorize(x, vec, g)


def unsharp_schedule_gpu(app, tile=32):
    # Halide's apps/unsharp GPU schedule (whole tiles where the image is at least one tile).
    f, x, y, c = app.funcs, app.vars["x"], app.vars["y"], app.vars["c"]
    xi, yi = hl.Var("xi"), hl.Var("yi")
    f["out"].compute_root().reorder(c, x, y).bound(c, 0, 3).unroll(c)
    _gpu_tile(f["out"], x, y, xi, yi, tile, tile)
    f["ratio"].compute_at(f["out"], xi)
    f["gray"].compute_at(f["out"], x).tile(x, y, xi, yi, 2, 2).unroll(xi).unroll(yi) \
        .gpu_threads(x, y)
    f["by"].compute_at(f["out"], x).unroll(x, 2).gpu_threads(x, y)


# --------------------------------------------------------------------------------------------
# Building, compiling and running
# --------------------------------------------------------------------------------------------

ALGORITHMS = dict(laplacian=laplacian_algorithm, sharpen=sharpen_algorithm,
                  blur=blur_algorithm, unsharp=unsharp_algorithm)
SCHEDULES = dict(
    cpu=dict(laplacian=laplacian_schedule_cpu, sharpen=sharpen_schedule_cpu,
             blur=blur_schedule_cpu, unsharp=unsharp_schedule_cpu),
    gpu=dict(laplacian=laplacian_schedule_gpu, sharpen=sharpen_schedule_gpu,
             blur=blur_schedule_gpu, unsharp=unsharp_schedule_gpu))

# Output shapes (numpy order) and element types, from the input's numpy shape.
OUTPUT_SHAPES = dict(
    laplacian=lambda s: [(s[0], s[1]), ((s[0] + 1) // 2, (s[1] + 1) // 2)],
    sharpen=lambda s: [s],
    blur=lambda s: [(s[0] - 2, s[1] - 2)],
    unsharp=lambda s: [s])


def target(kind):
    t = hl.get_jit_target_from_environment()
    if kind == "gpu":
        t = t.with_feature(hl.TargetFeature.OpenCL)
    return t


class Compiled:
    """A pipeline scheduled for `kind` ("cpu" or "gpu") and JIT-compiled for it."""

    def __init__(self, name, kind, **schedule_args):
        self.name, self.kind = name, kind
        self.app = ALGORITHMS[name]()
        SCHEDULES[kind][name](self.app, **schedule_args)
        self.pipeline = hl.Pipeline(self.app.outputs)
        self.target = target(kind)
        t0 = time.perf_counter()
        self.pipeline.compile_jit(self.target)
        self.compile_ms = (time.perf_counter() - t0) * 1e3

    def bind(self, array):
        """Sets the input (a numpy array, wrapped without a copy) and allocates the outputs."""
        self.in_array = np.ascontiguousarray(array)  # the Buffer aliases it: keep it alive
        self.in_buf = hl.Buffer(self.in_array)
        self.app.inputs[0].set(self.in_buf)
        types = [o.type() for o in self.app.outputs]
        shapes = OUTPUT_SHAPES[self.name](array.shape)
        self.out_bufs = [hl.Buffer(t, list(reversed(s))) for t, s in zip(types, shapes)]
        return self

    def run(self, upload=True, download=True):
        """One whole call. On the OpenCL target, `upload` marks the input as changed on the
        host (so it is copied to the device) and `download` copies the outputs back."""
        if self.kind == "gpu" and upload:
            self.in_buf.set_host_dirty(True)
        self.pipeline.realize(self.out_bufs, self.target)
        if self.kind == "gpu" and download:
            for b in self.out_bufs:
                b.copy_to_host()

    def outputs(self):
        """Copies of the outputs, as numpy arrays in the references' layout."""
        for b in self.out_bufs:
            b.copy_to_host()
        return [np.array(b, copy=True) for b in self.out_bufs]
