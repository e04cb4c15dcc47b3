"""Halide's side of benches/time_steps.rs: heat-2D (5 points, f32, replicated edge), the game
of life (u8, dead border), heat-3D (7 points, f32, replicated) and FDTD-2D (three grids, three
Funcs per step), one step as a Func scheduled as Halide's apps do for a stencil
(strips of rows in parallel, rows vectorized), run T times ping-ponging two buffers (T
realizations: Halide has no time loop; a chain of T Funcs computed at root is the same work).
Prints markdown rows like the Rust bench's: median and minimum ms, GPoints·steps per second.

Usage: python halide_time_steps.py SIDE SIDE3
"""

import sys
import time

import halide as hl
import numpy as np


def heat():
    inp = hl.ImageParam(hl.Float(32), 2, "inp")
    x, y = hl.Var("x"), hl.Var("y")
    c = hl.BoundaryConditions.repeat_edge(inp)
    f = hl.Func("heat")
    # Row x of parac is y here: the same sum, in the same order.
    f[x, y] = c[x, y] + 0.125 * (c[x, y - 1] + c[x, y + 1] + c[x - 1, y] + c[x + 1, y]
                                 - 4.0 * c[x, y])
    yo, yi = hl.Var("yo"), hl.Var("yi")
    f.split(y, yo, yi, 16).parallel(yo).vectorize(x, 8)
    f.compile_jit(hl.get_jit_target_from_environment())
    return inp, f


def life():
    inp = hl.ImageParam(hl.UInt(8), 2, "inp")
    x, y = hl.Var("x"), hl.Var("y")
    c = hl.BoundaryConditions.constant_exterior(inp, 0)
    r = hl.RDom([(-1, 3), (-1, 3)])
    alive = hl.cast(hl.Int(32), c[x, y])
    n = hl.sum(hl.cast(hl.Int(32), c[x + r.x, y + r.y])) - alive
    f = hl.Func("life")
    f[x, y] = hl.cast(hl.UInt(8), (n == 3) | ((alive == 1) & (n == 2)))
    yo, yi = hl.Var("yo"), hl.Var("yi")
    f.split(y, yo, yi, 16).parallel(yo).vectorize(x, 16)
    f.compile_jit(hl.get_jit_target_from_environment())
    return inp, f


def heat3d():
    inp = hl.ImageParam(hl.Float(32), 3, "inp")
    x, y, z = hl.Var("x"), hl.Var("y"), hl.Var("z")
    c = hl.BoundaryConditions.repeat_edge(inp)
    f = hl.Func("heat3d")
    # parac's out[z][x][y] is c[y, x, z] here: the same sum, in the same order.
    f[y, x, z] = c[y, x, z] + 0.125 * (c[y, x, z - 1] + c[y, x, z + 1] + c[y, x - 1, z]
                                       + c[y, x + 1, z] + c[y - 1, x, z] + c[y + 1, x, z]
                                       - 6.0 * c[y, x, z])
    f.parallel(z).vectorize(y, 8)
    f.compile_jit(hl.get_jit_target_from_environment())
    return inp, f


def fdtd():
    """One step: ey, ex from hz, then hz from the new ex and ey (a Pipeline of three outputs)."""
    ins = [hl.ImageParam(hl.Float(32), 2, n) for n in ("ex", "ey", "hz")]
    x, y = hl.Var("x"), hl.Var("y")
    ex, ey, hz = (hl.BoundaryConditions.repeat_edge(i) for i in ins)
    eyn, exn, hzn = hl.Func("eyn"), hl.Func("exn"), hl.Func("hzn")
    # Row x of parac is y here.
    eyn[x, y] = ey[x, y] - hl.f32(0.5) * (hz[x, y] - hz[x, y - 1])
    exn[x, y] = ex[x, y] - hl.f32(0.5) * (hz[x, y] - hz[x - 1, y])
    ce = hl.BoundaryConditions.repeat_edge(exn, [(0, ins[0].width()), (0, ins[0].height())])
    cy = hl.BoundaryConditions.repeat_edge(eyn, [(0, ins[0].width()), (0, ins[0].height())])
    hzn[x, y] = hz[x, y] - hl.f32(0.7) * (ce[x + 1, y] - ce[x, y] + cy[x, y + 1] - cy[x, y])
    yo, yi = hl.Var("yo"), hl.Var("yi")
    for g in (eyn, exn):
        g.compute_root().split(y, yo, yi, 16).parallel(yo).vectorize(x, 8)
    hzn.split(y, yo, yi, 16).parallel(yo).vectorize(x, 8)
    p = hl.Pipeline([exn, eyn, hzn])
    p.compile_jit(hl.get_jit_target_from_environment())
    return ins, p


def run_fdtd(grids, steps, secs=5.0):
    ins, p = fdtd()
    bufs = [[hl.Buffer(g.copy()) for g in grids], [hl.Buffer(np.empty_like(g)) for g in grids]]

    def call():
        cur = 0
        for _ in range(steps):
            for i, b in zip(ins, bufs[cur]):
                i.set(b)
            p.realize(bufs[1 - cur])
            cur = 1 - cur

    return timed(call, secs)


def timed(call, secs):
    """A warm-up call, then calls for `secs` seconds (at least 3): the median and minimum ms."""
    call()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < secs or len(times) < 3:
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2], times[0]


def run(pipe, a, steps, secs=5.0):
    inp, f = pipe
    bufs = [hl.Buffer(a.copy()), hl.Buffer(np.empty_like(a))]

    def call():
        cur = 0
        for _ in range(steps):
            inp.set(bufs[cur])
            f.realize(bufs[1 - cur])
            cur = 1 - cur

    return timed(call, secs)


def main():
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    rng = np.random.default_rng(1)
    pts = side * side
    grid = (rng.integers(0, 1000, (side, side)) / 10.0).astype(np.float32)
    for steps in (64, 512):
        med, low = run(heat(), grid, steps, 5.0 if steps == 64 else 1.0)
        print(f"| heat-2D {side}², T = {steps} | Halide, T realizations | {med:.1f} | {low:.1f} "
              f"| {pts * steps / (med * 1e-3) / 1e9:.2f} | | |")
    cells = (rng.integers(0, 3, (side, side)) == 0).astype(np.uint8)
    med, low = run(life(), cells, 64)
    print(f"| life {side}² u8, T = 64 | Halide, T realizations | {med:.1f} | {low:.1f} "
          f"| {pts * 64 / (med * 1e-3) / 1e9:.2f} | | |")
    side3 = int(sys.argv[2]) if len(sys.argv) > 2 else 256
    cube = (rng.integers(0, 1000, (side3, side3, side3)) / 10.0).astype(np.float32)
    med, low = run(heat3d(), cube, 64)
    pts3 = side3 ** 3
    print(f"| heat-3D {side3}³, T = 64 | Halide, T realizations | {med:.1f} | {low:.1f} "
          f"| {pts3 * 64 / (med * 1e-3) / 1e9:.2f} | | |")
    grids = [(rng.integers(0, 1000, (side, side)) / 10.0).astype(np.float32) for _ in range(3)]
    med, low = run_fdtd(grids, 64)
    print(f"| FDTD-2D {side}², T = 64 | Halide, T realizations (three outputs per step) "
          f"| {med:.1f} | {low:.1f} | {pts * 64 / (med * 1e-3) / 1e9:.2f} | | |")


if __name__ == "__main__":
    main()
