"""Halide's side of benches/own_peers.rs: two pipelines of our own, outside APPS.md, written in
Halide as its users write them (the producer computed per strip of the consumer's rows,
`compute_at`, rows vectorized, strips in parallel), on the input the Rust bench wrote, each
output compared with parac's (exact).

- gauss5: a separable 5-tap Gaussian (1 4 6 4 1) / 256 of a u8 image, reflect-101 borders.
- unsharp7: benches/own's 7-tap separable Gaussian with clamped borders, then an unsharp mask
  (a 3-stage chain: h, b, out).

Usage: python halide_own.py DIR   (DIR holds src.npy, gauss5.npy and unsharp7.npy)
Prints one markdown row per pipeline: median and minimum ms, the largest difference.
"""

import sys
import time

import halide as hl
import numpy as np

x, y = hl.Var("x"), hl.Var("y")


def i32(e):
    return hl.cast(hl.Int(32), e)


def gauss5(inp):
    c = hl.BoundaryConditions.mirror_interior(inp)
    h = hl.Func("h")
    h[x, y] = hl.cast(hl.UInt(16), i32(c[x - 2, y]) + 4 * i32(c[x - 1, y]) + 6 * i32(c[x, y])
                      + 4 * i32(c[x + 1, y]) + i32(c[x + 2, y]))
    # `h` at a row outside is `h` of the mirrored row: the input's boundary condition covers
    # the rows too (a boundary condition on `h` itself would make each strip need all of it).
    hb = h
    out = hl.Func("gauss5")
    out[x, y] = hl.cast(hl.UInt(8), (i32(hb[x, y - 2]) + 4 * i32(hb[x, y - 1])
                                     + 6 * i32(hb[x, y]) + 4 * i32(hb[x, y + 1])
                                     + i32(hb[x, y + 2]) + 128) / 256)
    yo, yi = hl.Var("yo"), hl.Var("yi")
    out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16)
    h.compute_at(out, yo).vectorize(x, 16)
    return out


def unsharp7(inp):
    c = hl.BoundaryConditions.repeat_edge(inp)
    taps = [1, 6, 15, 20, 15, 6, 1]
    h = hl.Func("h")
    h[x, y] = hl.cast(hl.UInt(16), sum(t * i32(c[x + k - 3, y]) for k, t in enumerate(taps)))
    hc = h  # rows outside: the input's repeated edge rows, as gauss5's
    b = hl.Func("b")
    b[x, y] = hl.cast(hl.UInt(8), (hl.cast(hl.UInt(32), sum(t * i32(hc[x, y + k - 3])
                                                           for k, t in enumerate(taps)))
                                   + 2048) / 4096)
    out = hl.Func("unsharp7")
    out[x, y] = hl.cast(hl.UInt(8), hl.clamp(2 * i32(inp[x, y]) - i32(b[x, y]), 0, 255))
    yo, yi = hl.Var("yo"), hl.Var("yi")
    out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16)
    h.compute_at(out, yo).vectorize(x, 16)
    return out


def main():
    d = sys.argv[1]
    src = np.load(f"{d}/src.npy")
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    src = np.ascontiguousarray(src)  # the Buffer aliases it; Halide's x is its column
    buf = hl.Buffer(src)
    inp.set(buf)
    target = hl.get_jit_target_from_environment()
    for name, make in (("gauss5", gauss5), ("unsharp7", unsharp7)):
        f = make(inp)
        f.compile_jit(target)
        out = hl.Buffer(hl.UInt(8), [src.shape[1], src.shape[0]])
        f.realize(out)
        got = np.array(out, copy=True)
        want = np.load(f"{d}/{name}.npy")
        diff = int(np.abs(got.astype(np.int32) - want.astype(np.int32)).max())
        times = []
        start = time.perf_counter()
        while time.perf_counter() - start < 5.0 or len(times) < 5:
            t = time.perf_counter()
            f.realize(out)
            times.append((time.perf_counter() - t) * 1e3)
        times.sort()
        print(f"| {name} | Halide CPU | {times[len(times) // 2]:.2f} | {times[0]:.2f} | "
              f"max diff against parac {diff} |")


if __name__ == "__main__":
    main()
