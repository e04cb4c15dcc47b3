"""Halide's side of benches/own_peers.rs: pipelines of our own, outside APPS.md, written in
Halide as its apps write them (arithmetic in 16 bits wherever it is exact, as `apps/blur`; the
producer computed per strip of the consumer's rows, `compute_at`, rows vectorized 32 wide,
strips in parallel), on the input the Rust bench wrote, each output compared with parac's.

- gauss5: a separable 5-tap Gaussian (1 4 6 4 1) / 256 of a u8 image, reflect-101 borders.
- unsharp7: benches/own's 7-tap separable Gaussian with clamped borders, then an unsharp mask
  (a 3-stage chain: h, b, out).
- box3: a 3x3 box mean of u8 through 16-bit row sums, interior only.
- sobel_mean: benches/own's Sobel magnitude (replicated borders) and its mean: the magnitude
  and its row sums are the pipeline's two outputs, the 2,160 row sums added by numpy.

Usage: python halide_own.py DIR   (DIR holds src.npy and parac's NAME.npy for each)
Prints one markdown row per pipeline: median and minimum ms, the largest difference.
"""

import sys
import time

import halide as hl
import numpy as np

x, y = hl.Var("x"), hl.Var("y")


VEC = 32


def i32(e):
    return hl.cast(hl.Int(32), e)


def u16(e):
    return hl.cast(hl.UInt(16), e)


def i16(e):
    return hl.cast(hl.Int(16), e)


def strips(out, producer=None, sliding=False):
    """The apps' CPU schedule: strips of 32 rows in parallel, rows vectorized; the producer per
    strip (`compute_at` the strip) or, `sliding`, per row with its rows kept for the next
    (`store_at` the strip, `compute_at` the row: Halide's sliding window)."""
    yo, yi = hl.Var("yo"), hl.Var("yi")
    out.split(y, yo, yi, 32).parallel(yo).vectorize(x, VEC)
    if producer is not None:
        if sliding:
            producer.store_at(out, yo).compute_at(out, yi).vectorize(x, VEC)
        else:
            producer.compute_at(out, yo).vectorize(x, VEC)


def gauss5(inp):
    c = hl.BoundaryConditions.mirror_interior(inp)
    h = hl.Func("h")
    h[x, y] = (u16(c[x - 2, y]) + 4 * u16(c[x - 1, y]) + 6 * u16(c[x, y])
               + 4 * u16(c[x + 1, y]) + u16(c[x + 2, y]))
    # `h` at a row outside is `h` of the mirrored row: the input's boundary condition covers
    # the rows too (a boundary condition on `h` itself would make each strip need all of it).
    # The sums fit 16 bits: at most 16 * 4080 + 128 = 65,408.
    out = hl.Func("gauss5")
    out[x, y] = hl.cast(hl.UInt(8), (h[x, y - 2] + 4 * h[x, y - 1] + 6 * h[x, y]
                                     + 4 * h[x, y + 1] + h[x, y + 2] + 128) / 256)
    strips(out, h)
    return [out]


def unsharp7(inp):
    c = hl.BoundaryConditions.repeat_edge(inp)
    taps = [1, 6, 15, 20, 15, 6, 1]
    h = hl.Func("h")
    h[x, y] = sum(t * u16(c[x + k - 3, y]) for k, t in enumerate(taps))  # at most 16,320
    b = hl.Func("b")
    b[x, y] = hl.cast(hl.UInt(8), (sum(t * hl.cast(hl.UInt(32), h[x, y + k - 3])
                                       for k, t in enumerate(taps)) + 2048) / 4096)
    out = hl.Func("unsharp7")
    out[x, y] = hl.cast(hl.UInt(8), hl.clamp(2 * i16(inp[x, y]) - i16(b[x, y]), 0, 255))
    strips(out, h)
    return [out]


def box3(inp):
    h = hl.Func("h")
    h[x, y] = u16(inp[x, y]) + u16(inp[x + 1, y]) + u16(inp[x + 2, y])
    out = hl.Func("box3")
    out[x, y] = hl.cast(hl.UInt(8), (h[x, y] + h[x, y + 1] + h[x, y + 2] + 4) / 9)
    strips(out, h, sliding=True)
    return [out]


def sobel_mean(inp):
    c = hl.BoundaryConditions.repeat_edge(inp)

    def p(dx, dy):
        return i16(c[x + dx, y + dy])

    # parac's `src[row][col]`: its gx differences columns, its gy rows.
    gx = (p(1, -1) + 2 * p(1, 0) + p(1, 1)) - (p(-1, -1) + 2 * p(-1, 0) + p(-1, 1))
    gy = (p(-1, 1) + 2 * p(0, 1) + p(1, 1)) - (p(-1, -1) + 2 * p(0, -1) + p(1, -1))
    mag = hl.Func("sobel_mean")
    mag[x, y] = hl.cast(hl.UInt(8), hl.min((hl.abs(gx) + hl.abs(gy)) / 4, 255))
    rows = hl.Func("rows")
    r = hl.RDom([(0, inp.width())])
    rows[y] = hl.sum(hl.cast(hl.UInt(32), mag[r.x, y]))
    strips(mag)
    rows.compute_root().parallel(y, 32)
    return [mag, rows]


def main():
    d = sys.argv[1]
    src = np.load(f"{d}/src.npy")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    src = np.ascontiguousarray(src)  # the Buffer aliases it; Halide's x is its column
    buf = hl.Buffer(src)
    inp.set(buf)
    target = hl.get_jit_target_from_environment()
    m, n = src.shape
    cases = (("gauss5", gauss5, (m, n)), ("unsharp7", unsharp7, (m, n)),
             ("box3", box3, (m - 2, n - 2)), ("sobel_mean", sobel_mean, (m, n)))
    for name, make, (rows, cols) in cases:
        funcs = make(inp)
        p = hl.Pipeline(funcs)
        p.compile_jit(target)
        outs = [hl.Buffer(hl.UInt(8), [cols, rows])]
        if len(funcs) > 1:
            outs.append(hl.Buffer(hl.UInt(32), [rows]))
        p.realize(outs)
        got = np.array(outs[0], copy=True)
        want = np.load(f"{d}/{name}.npy")
        diff = int(np.abs(got.astype(np.int32) - want.astype(np.int32)).max())
        note = f"max diff against parac {diff}"
        if len(funcs) > 1:
            mean = int(np.array(outs[1], copy=True).astype(np.int64).sum()) // (rows * cols)
            note += f"; mean {mean}, parac's {int(want.astype(np.int64).sum()) // (rows * cols)}"
        times = []
        start = time.perf_counter()
        while time.perf_counter() - start < 5.0 or len(times) < 5:
            t = time.perf_counter()
            p.realize(outs)
            if len(funcs) > 1:
                int(np.asarray(outs[1]).sum())
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        print(f"| {name} | Halide CPU | {times[len(times) // 2]:.2f} | {times[0]:.2f} | "
              f"{note} |")


if __name__ == "__main__":
    main()
