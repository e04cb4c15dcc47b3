//! Time steps (`parac_repeat`, `parac_swap`): each function compiled by `parac::parac!` and
//! run on the CPU path, and through the runtime's executor on OpenCL with every candidate plan
//! forced, against the reference interpreter with the same random arguments (the random
//! corpus's harness, `tests/corpus/harness.rs`): bit-identical results or the same error, no
//! canary touched. The counts are `u8` parameters: random ones from 0 to 255 (mostly under
//! 37), so T = 0, 1, 2 and odd and even counts are all run; an output exchanged with a local
//! or with another output ends with its values whatever the parity.

#![allow(clippy::all, unused)]

#[path = "../parac-core/tests/gen/mod.rs"]
mod progen;

mod common;

#[path = "corpus/harness.rs"]
mod harness;

use harness::*;
use parac_core::interp::{Arg, Val};

const SIZES: &[&[(&str, usize)]] = &[
    &[("M", 1), ("N", 1)],
    &[("M", 1), ("N", 6)],
    &[("M", 5), ("N", 1)],
    &[("M", 7), ("N", 3)],
    &[("M", 33), ("N", 9)],
    &[("M", 70), ("N", 4)],
    // OpenCL's time bands: tiles of 32 and 64 points, one more than a tile's rows or columns.
    &[("M", 33), ("N", 65)],
    &[("M", 65), ("N", 33)],
];

macro_rules! heat_program {
    ($m:ident, $($s:tt)*) => {
        mod $m {
            use super::{Arg, Val};

            super::program! {
                fn heat(src: &f32[M][N], out: &mut f32[M][N], steps: u8) {
                    let next: f32[M][N];
                    parac_border_rule edge = replicate(out[1][1]);
                    parac_iterator init(0:M:1; 0:N:1) {
                        out[initx][inity] = src[initx][inity];
                    }
                    parac_repeat(steps) $($s)* {
                        parac_iterator step(x in 0:M:1; y in 0:N:1) parac_border_rule(edge) {
                            next[x][y] = out[x][y] + 0.125 * (out[x-1][y] + out[x+1][y] + out[x][y-1]
                                + out[x][y+1] - 4.0 * out[x][y]);
                        }
                        parac_swap(out, next);
                    }
                }
            }

            pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
                let src = super::canaried::<f32>("src", &args[0]);
                let mut out = super::canaried::<f32>("out", &args[1]);
                let r = heat(rt, &src, &mut out, super::int(&args[2]));
                super::put(&mut args[1], &out);
                r.map(|()| None)
            }
        }
    };
}

// Each stencil as the model tiles it, then with overlapped tiles (`split = 0`) or split tiling
// (`split = 1`) forced, in bands of 2 to 4 steps and tasks of few rows (a split task has at
// least the `2 (n K + 1) r` rows it needs), so that the sizes have several tasks of each phase.
heat_program!(heat,);
heat_program!(
    heat_overlapped,
    parac_schedule(band = 3, rows = 4, split = 0)
);
heat_program!(heat_split, parac_schedule(band = 3, split = 1));

macro_rules! life_program {
    ($m:ident, $($s:tt)*) => {
        mod $m {
            use super::{Arg, Val};

            super::program! {
                fn life(src: &u8[M][N], out: &mut u8[M][N], steps: u8) {
                    let next: u8[M][N];
                    parac_border_rule dead = constant(out[1][1], 0);
                    parac_iterator init(0:M:1; 0:N:1) {
                        out[initx][inity] = src[initx][inity] & 1;
                    }
                    parac_repeat(steps) $($s)* {
                        parac_iterator gen(x in 0:M:1; y in 0:N:1) parac_border_rule(dead) {
                            let alive = out[x][y] as i32;
                            let n = parac_matrix_sum(out[x-1:3:1][y-1:3:1]) - alive;
                            next[x][y] = ((n == 3) || (alive == 1 && n == 2)) as u8;
                        }
                        parac_swap(out, next);
                    }
                }
            }

            pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
                let src = super::canaried::<u8>("src", &args[0]);
                let mut out = super::canaried::<u8>("out", &args[1]);
                let r = life(rt, &src, &mut out, super::int(&args[2]));
                super::put(&mut args[1], &out);
                r.map(|()| None)
            }
        }
    };
}

life_program!(life,);
life_program!(life_split, parac_schedule(band = 4, rows = 1, split = 1));

mod coupled {
    use super::{Arg, Val};

    super::program! {
        fn coupled(u0: &i32[M][N], v0: &i32[M][N], u: &mut i32[M][N], v: &mut i32[M][N], steps: u8) {
            let un: i32[M][N];
            let vn: i32[M][N];
            parac_border_rule ru = reflect101(u[1][1]);
            parac_border_rule rv = wrap(v[1][*]);
            parac_iterator init(0:M:1; 0:N:1) {
                u[initx][inity] = u0[initx][inity] % 1000;
                v[initx][inity] = v0[initx][inity] % 1000;
            }
            parac_repeat(steps % 8 * 2 - 1) {
                parac_iterator a(x in 0:M:1; y in 0:N:1) parac_border_rule(ru) {
                    un[x][y] = (u[x][y-1] + 2 * u[x][y] + u[x][y+1] + u[x-1][y]) / 5 + v[x][y] % 7;
                }
                parac_iterator b(x in 0:M:1; y in 0:N:1) parac_border_rule(rv) {
                    vn[x][y] = v[x-1][y] - un[x][y] / 3 + v[x+1][y] / 2;
                }
                parac_swap(u, un);
                parac_swap(v, vn);
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let u0 = super::canaried::<i32>("u0", &args[0]);
        let v0 = super::canaried::<i32>("v0", &args[1]);
        let mut u = super::canaried::<i32>("u", &args[2]);
        let mut v = super::canaried::<i32>("v", &args[3]);
        let r = coupled(rt, &u0, &v0, &mut u, &mut v, super::int(&args[4]));
        super::put(&mut args[2], &u);
        super::put(&mut args[3], &v);
        r.map(|()| None)
    }
}

/// FDTD-like: two grids updated in order each step, the second reading the first's new values
/// at neighbouring points (OpenCL's time bands run both regions: kernels of the first taking
/// every matrix of the step).
macro_rules! fdtd_program {
    ($m:ident, $($s:tt)*) => {
        mod $m {
            use super::{Arg, Val};

            super::program! {
                fn fdtd(e0: &i32[M][N], h0: &i32[M][N], e: &mut i32[M][N], h: &mut i32[M][N], steps: u8) {
                    let en: i32[M][N];
                    let hn: i32[M][N];
                    parac_border_rule re = replicate(e[1][1]);
                    parac_border_rule rn = reflect101(en[1][1]);
                    parac_iterator init(0:M:1; 0:N:1) {
                        e[initx][inity] = e0[initx][inity] % 1000;
                        h[initx][inity] = h0[initx][inity] % 1000;
                    }
                    parac_repeat(steps) $($s)* {
                        parac_iterator a(x in 0:M:1; y in 0:N:1) parac_border_rule(re) {
                            en[x][y] = e[x][y] - (h[x][y] - e[x-1][y+1]) / 2;
                        }
                        parac_iterator b(x in 0:M:1; y in 0:N:1) parac_border_rule(rn) {
                            hn[x][y] = h[x][y] + (en[x+1][y] - en[x][y-1]) / 3;
                        }
                        parac_swap(e, en);
                        parac_swap(h, hn);
                    }
                }
            }

            pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
                let e0 = super::canaried::<i32>("e0", &args[0]);
                let h0 = super::canaried::<i32>("h0", &args[1]);
                let mut e = super::canaried::<i32>("e", &args[2]);
                let mut h = super::canaried::<i32>("h", &args[3]);
                let r = fdtd(rt, &e0, &h0, &mut e, &mut h, super::int(&args[4]));
                super::put(&mut args[2], &e);
                super::put(&mut args[3], &h);
                r.map(|()| None)
            }
        }
    };
}

fdtd_program!(fdtd,);
fdtd_program!(
    fdtd_overlapped,
    parac_schedule(band = 2, rows = 3, split = 0)
);
fdtd_program!(fdtd_split, parac_schedule(band = 2, rows = 1, split = 1));

/// 3-D grids, tiled by planes (split, and overlapped where asked): planes clamped by
/// `min`/`max`/`clamp`.
const SIZES3: &[&[(&str, usize)]] = &[
    &[("P", 1), ("M", 1), ("N", 1)],
    &[("P", 2), ("M", 3), ("N", 5)],
    &[("P", 9), ("M", 4), ("N", 3)],
    &[("P", 35), ("M", 3), ("N", 2)],
    &[("P", 70), ("M", 2), ("N", 3)],
];

macro_rules! heat3d_program {
    ($m:ident, $($s:tt)*) => {
        mod $m {
            use super::{Arg, Val};

            super::program! {
                fn heat3d(src: &f32[P][M][N], out: &mut f32[P][M][N], steps: u8) {
                    let next: f32[P][M][N];
                    parac_border_rule edge = replicate(out[*][1][1]);
                    parac_iterator init(0:P:1; 0:M:1; 0:N:1) {
                        out[initx][inity][initz] = src[initx][inity][initz];
                    }
                    parac_repeat(steps) $($s)* {
                        parac_iterator step(z in 0:P:1; x in 0:M:1; y in 0:N:1) parac_border_rule(edge) {
                            next[z][x][y] = out[z][x][y] + 0.125 * (out[max(z-1, 0)][x][y]
                                + out[min(z+1, P-1)][x][y] + out[z][x-1][y] + out[z][x+1][y]
                                + out[z][x][y-1] + out[z][x][y+1] - 6.0 * out[z][x][y]);
                        }
                        parac_swap(out, next);
                    }
                }
            }

            pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
                let src = super::canaried::<f32>("src", &args[0]);
                let mut out = super::canaried::<f32>("out", &args[1]);
                let r = heat3d(rt, &src, &mut out, super::int(&args[2]));
                super::put(&mut args[1], &out);
                r.map(|()| None)
            }
        }
    };
}

heat3d_program!(heat3d,);
heat3d_program!(
    heat3d_overlapped,
    parac_schedule(band = 3, rows = 4, split = 0)
);

mod smooth3d {
    use super::{Arg, Val};

    super::program! {
        fn smooth3d(src: &i32[P][M][N], out: &mut i32[P][M][N], steps: u8) {
            let next: i32[P][M][N];
            parac_iterator init(0:P:1; 0:M:1; 0:N:1) {
                out[initx][inity][initz] = src[initx][inity][initz] % 1000;
            }
            parac_repeat(steps) parac_schedule(band = 3, rows = 1) {
                parac_iterator step(z in 0:P:1; x in 0:M:1; y in 0:N:1) {
                    next[z][x][y] = (out[clamp(z-2, 0, P-1)][x][y] + 2 * out[z][x][y]
                        + out[min(z+1, P-1)][x][y]) / 4 + y;
                }
                parac_swap(out, next);
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let src = super::canaried::<i32>("src", &args[0]);
        let mut out = super::canaried::<i32>("out", &args[1]);
        let r = smooth3d(rt, &src, &mut out, super::int(&args[2]));
        super::put(&mut args[1], &out);
        r.map(|()| None)
    }
}

/// A 5x5 window per step (more taps than the kernels write out without `unroll`): every time
/// band's kernel runs its K steps (it once ran one, with the executor counting K).
mod box5 {
    use super::{Arg, Val};

    super::program! {
        fn box5(src: &i32[M][N], out: &mut i32[M][N], steps: u8) {
            let next: i32[M][N];
            parac_border_rule e = reflect101(out[2][2]);
            parac_iterator init(0:M:1; 0:N:1) { out[initx][inity] = src[initx][inity] % 1000; }
            parac_repeat(steps) {
                parac_iterator s(x in 0:M:1; y in 0:N:1) parac_border_rule(e) {
                    next[x][y] = parac_matrix_sum(out[x-2:5:1][y-2:5:1]) / 25 + x % 3;
                }
                parac_swap(out, next);
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let src = super::canaried::<i32>("src", &args[0]);
        let mut out = super::canaried::<i32>("out", &args[1]);
        let r = box5(rt, &src, &mut out, super::int(&args[2]));
        super::put(&mut args[1], &out);
        r.map(|()| None)
    }
}

mod exchange {
    use super::{Arg, Val};

    super::program! {
        fn exchange(src: &i16[M][N], a: &mut i16[M][N], b: &mut i16[M][N], steps: u8) {
            parac_iterator init(0:M:1; 0:N:1) {
                a[initx][inity] = src[initx][inity];
                b[initx][inity] = -src[initx][inity];
            }
            parac_repeat(steps) {
                parac_iterator s(x in 0:M:1; y in 0:N:1) {
                    a[x][y] = a[x][y] + 1;
                }
                parac_swap(a, b);
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let src = super::canaried::<i16>("src", &args[0]);
        let mut a = super::canaried::<i16>("a", &args[1]);
        let mut b = super::canaried::<i16>("b", &args[2]);
        let r = exchange(rt, &src, &mut a, &mut b, super::int(&args[3]));
        super::put(&mut args[1], &a);
        super::put(&mut args[2], &b);
        r.map(|()| None)
    }
}

mod smooth_diff {
    use super::{Arg, Val};

    super::program! {
        fn smooth_diff(src: &i16[M][N], out: &mut i32[M][N], steps: u8) {
            let cur: i16[M][N];
            let nxt: i16[M][N];
            parac_border_rule r = clamp(cur[1][1]);
            parac_iterator init(0:M:1; 0:N:1) {
                cur[initx][inity] = src[initx][inity];
            }
            parac_repeat(steps) {
                parac_iterator s(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
                    nxt[x][y] = (parac_matrix_sum(cur[x-1:3:1][y-1:3:1]) / 9) as i16;
                }
                parac_swap(cur, nxt);
            }
            parac_iterator d(x in 0:M:1; y in 0:N:1) {
                out[x][y] = src[x][y] - cur[x][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let src = super::canaried::<i16>("src", &args[0]);
        let mut out = super::canaried::<i32>("out", &args[1]);
        let r = smooth_diff(rt, &src, &mut out, super::int(&args[2]));
        super::put(&mut args[1], &out);
        r.map(|()| None)
    }
}

/// A time step that fails (a division by a grid value that reaches zero): the same error, at
/// the same step, on every path.
mod failing {
    use super::{Arg, Val};

    super::program! {
        fn failing(src: &i32[M][N], out: &mut i32[M][N], steps: u8) {
            let next: i32[M][N];
            parac_iterator init(0:M:1; 0:N:1) {
                out[initx][inity] = src[initx][inity] % 5 + 3;
            }
            parac_repeat(steps) {
                parac_iterator s(x in 0:M:1; y in 0:N:1) {
                    next[x][y] = 60 / out[x][y] - 1;
                }
                parac_swap(out, next);
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let src = super::canaried::<i32>("src", &args[0]);
        let mut out = super::canaried::<i32>("out", &args[1]);
        let r = failing(rt, &src, &mut out, super::int(&args[2]));
        super::put(&mut args[1], &out);
        r.map(|()| None)
    }
}

macro_rules! entries {
    ($($name:ident: $exact:expr),*) => {
        entries!($($name: $exact, SIZES),*)
    };
    ($($name:ident: $exact:expr, $sizes:expr),*) => {
        &[$(Entry {
            name: stringify!($name),
            src: $name::SRC,
            sizes: $sizes,
            exact: $exact,
            call: $name::call,
        }),*]
    };
}

const PROGRAMS: &[Entry] = entries!(
    heat: false,
    life: true,
    coupled: true,
    fdtd: true,
    heat_overlapped: false,
    fdtd_overlapped: true,
    heat_split: false,
    life_split: true,
    fdtd_split: true,
    box5: true,
    exchange: true,
    smooth_diff: true,
    failing: true
);

const PROGRAMS3: &[Entry] = entries!(
    heat3d: false,
    SIZES3,
    heat3d_overlapped: false,
    SIZES3,
    smooth3d: true,
    SIZES3
);

#[test]
fn time_steps_match_the_interpreter_on_the_cpu_path() {
    harness::cpu_path(PROGRAMS);
    harness::cpu_path(PROGRAMS3);
}

#[test]
fn time_steps_match_the_interpreter_on_opencl() {
    harness::opencl(PROGRAMS);
    harness::opencl(PROGRAMS3);
}

/// Without guard bands the executor's copies of swapped outputs are the device's own
/// (`clEnqueueCopyBufferRect`; with guard bands they go through the host).
#[test]
fn time_steps_match_the_interpreter_on_opencl_without_guard_bands() {
    harness::opencl_with(PROGRAMS, false);
}

/// A grid too wide for the model's bands (a split task's rows of both grids past the cache the
/// machine gives a task, `cache_bytes()`: 70,000 columns of f32 in tasks of 34 rows take 19 MB,
/// past the 17 MB of the developers' VM) runs step by step, chosen when the repeat runs: the
/// same results either way.
#[test]
fn wide_grids_run_step_by_step_on_the_cpu_path() {
    harness::cpu_path(&[Entry {
        name: "heat, wide",
        src: heat::SRC,
        sizes: &[&[("M", 2), ("N", 70_000)]],
        exact: false,
        call: heat::call,
    }]);
}

/// Under the search (run to its end in one call), whose timings run every candidate, time
/// bands included, on the call's grids before the chosen plan runs (split bands, which work in
/// place, on copies): the same cells as one step per launch (the model's plan), at counts
/// below, at and past the longest band.
#[test]
fn a_searched_repeat_gives_one_steps_result_on_opencl() {
    let Some(mut rt) = common::differential::opencl_with_guard_bands() else {
        return;
    };
    // With guard bands (copies through the host) and without (on the device), at sizes of two
    // size classes (each searched anew).
    for (guards, (m, n)) in [(true, (67, 70)), (false, (130, 40))] {
        rt.device().expect("a device").set_guard_bands(guards);
        // Random cells (a third alive): a regular pattern dies out or settles in a few steps, which
        // would hide a timing that ran steps on the call's grids.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let cells: Vec<u8> = (0..m * n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 3 == 0) as u8
            })
            .collect();
        let tensor = |v: Vec<u8>| {
            parac_core::interp::Tensor::new(vec![m, n], parac_core::interp::Data::U8(v))
                .expect("a grid")
        };
        for steps in [3u8, 8, 21] {
            let mut outs = Vec::new();
            for p in [
                parac::PlanPolicy::Model,
                parac::PlanPolicy::SearchBudget(std::time::Duration::MAX),
            ] {
                rt.set_policy(p);
                let mut args = [
                    Arg::Matrix(tensor(cells.clone())),
                    Arg::Matrix(tensor(vec![0; m * n])),
                    Arg::Scalar(Val::Int(steps.into())),
                ];
                life::call(&rt, &mut args).expect("life");
                outs.push(args[1].clone());
            }
            assert_eq!(outs[0], outs[1], "{steps} steps, guard bands {guards}");
        }
    }
}
