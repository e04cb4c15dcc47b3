"""Halide's side of benches/time_steps.rs: heat-2D (5 points, f32, replicated edge) and the game
of life (u8, dead border), one step as a Func scheduled as Halide's apps do for a stencil
(strips of rows in parallel, rows vectorized), run T times ping-ponging two buffers (T
realizations: Halide has no time loop; a chain of T Funcs computed at root is the same work).
Prints markdown rows like the Rust bench's: median and minimum ms, GPoints·steps per second.

Usage: python halide_time_steps.py SIDE
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


def run(pipe, a, steps, secs=5.0):
    inp, f = pipe
    bufs = [hl.Buffer(a.copy()), hl.Buffer(np.empty_like(a))]

    def call():
        cur = 0
        for _ in range(steps):
            inp.set(bufs[cur])
            f.realize(bufs[1 - cur])
            cur = 1 - cur

    call()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < secs or len(times) < 3:
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    return times[len(times) // 2], times[0]


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


if __name__ == "__main__":
    main()
