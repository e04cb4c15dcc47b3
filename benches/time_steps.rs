//! Iterated stencils: `parac_repeat` step by step against time-tiled on the CPU
//! path, and Halide running the same steps, on grids that do not fit the cache. Four stencils
//! as the split-tiling document lists them: heat-2D (5 points, f32, replicated edge), a 3x3
//! game of life (u8, dead border), heat-3D (7 points, f32) and FDTD-2D (three grids, f32,
//! three regions per step).
//! Each parac variant is the same program with a different `parac_schedule(band = K, rows = R,
//! split = 0 | 1)` (`band = 1`: step by step; without it the compiler's model picks split tiling
//! and K, `pass::fuse::time`; `split = 0`: overlapped tiles); "T calls" is a one-step
//! function called T times from Rust, as a user had to before `parac_repeat`.
//!
//! Reported per case: the median time of whole calls (a warm-up call, then at least 5 calls and
//! `PARAC_TIME_SECONDS` seconds, 5 by default), GPoints·steps per second, and the DRAM floor of
//! the step-by-step version (each step reads and writes each grid once, at the host's copy
//! bandwidth). Every variant's result is compared with the step-by-step one (exact).
//! Halide (`benches/peers/halide_time_steps.py`, run in `benches/peers/.venv` where it exists:
//! `bash benches/peers/setup.sh`) times T realizations of one step, ping-ponging two buffers.
//!
//! Then heat-2D on the OpenCL device, if there is one: the model's one-step plan, each time
//! band forced (several steps per launch, tiles in local memory) and the search's choice.
//!
//! `cargo bench --bench time_steps` (4096², T = 64 and 512 for heat-2D; `PARAC_BENCH_SMALL=1`:
//! 1024²; `PARAC_TIME_PART=cpu` or `opencl`: one part). Prints markdown tables.

mod host;

use parac::{Element, Matrix, Runtime};

/// Each stencil once: `$name`, its repeat's schedule directive (none: the model's).
macro_rules! heat2d {
    ($name:ident, $($schedule:tt)*) => {
        parac::parac! {
            fn $name(src: &f32[M][N], out: &mut f32[M][N], steps: i32) {
                let next: f32[M][N];
                parac_border_rule edge = replicate(out[1][1]);
                parac_iterator init(0:M:1; 0:N:1) { out[initx][inity] = src[initx][inity]; }
                parac_repeat(steps) $($schedule)* {
                    parac_iterator step(x in 0:M:1; y in 0:N:1) parac_border_rule(edge) {
                        next[x][y] = out[x][y] + 0.125 * (out[x-1][y] + out[x+1][y] + out[x][y-1]
                            + out[x][y+1] - 4.0 * out[x][y]);
                    }
                    parac_swap(out, next);
                }
            }
        }
    };
}

macro_rules! life {
    ($name:ident, $($schedule:tt)*) => {
        parac::parac! {
            fn $name(src: &u8[M][N], out: &mut u8[M][N], steps: i32) {
                let next: u8[M][N];
                parac_border_rule dead = constant(out[1][1], 0);
                parac_iterator init(0:M:1; 0:N:1) { out[initx][inity] = src[initx][inity] & 1; }
                parac_repeat(steps) $($schedule)* {
                    parac_iterator gen(x in 0:M:1; y in 0:N:1) parac_border_rule(dead) {
                        let alive = out[x][y] as i32;
                        let n = parac_matrix_sum(out[x-1:3:1][y-1:3:1]) - alive;
                        next[x][y] = ((n == 3) || (alive == 1 && n == 2)) as u8;
                    }
                    parac_swap(out, next);
                }
            }
        }
    };
}

macro_rules! fdtd {
    ($name:ident, $($schedule:tt)*) => {
        parac::parac! {
            fn $name(ex0: &f32[M][N], ey0: &f32[M][N], hz0: &f32[M][N],
                          ex: &mut f32[M][N], ey: &mut f32[M][N], hz: &mut f32[M][N], steps: i32) {
                let exn: f32[M][N];
                let eyn: f32[M][N];
                let hzn: f32[M][N];
                parac_border_rule bh = replicate(hz[1][1]);
                parac_border_rule be = replicate(exn[1][1]);
                parac_border_rule bey = replicate(eyn[1][1]);
                parac_iterator init(0:M:1; 0:N:1) {
                    ex[initx][inity] = ex0[initx][inity];
                    ey[initx][inity] = ey0[initx][inity];
                    hz[initx][inity] = hz0[initx][inity];
                }
                parac_repeat(steps) $($schedule)* {
                    parac_iterator fy(x in 0:M:1; y in 0:N:1) parac_border_rule(bh) {
                        eyn[x][y] = ey[x][y] - 0.5 * (hz[x][y] - hz[x-1][y]);
                    }
                    parac_iterator fx(x in 0:M:1; y in 0:N:1) parac_border_rule(bh) {
                        exn[x][y] = ex[x][y] - 0.5 * (hz[x][y] - hz[x][y-1]);
                    }
                    parac_iterator fh(x in 0:M:1; y in 0:N:1) parac_border_rule(be, bey) {
                        hzn[x][y] = hz[x][y] - 0.7 * (exn[x][y+1] - exn[x][y] + eyn[x+1][y] - eyn[x][y]);
                    }
                    parac_swap(ex, exn);
                    parac_swap(ey, eyn);
                    parac_swap(hz, hzn);
                }
            }
        }
    };
}

macro_rules! heat3d {
    ($name:ident, $($schedule:tt)*) => {
        parac::parac! {
            fn $name(src: &f32[P][M][N], out: &mut f32[P][M][N], steps: i32) {
                let next: f32[P][M][N];
                parac_border_rule edge = replicate(out[*][1][1]);
                parac_iterator init(0:P:1; 0:M:1; 0:N:1) {
                    out[initx][inity][initz] = src[initx][inity][initz];
                }
                parac_repeat(steps) $($schedule)* {
                    parac_iterator step(z in 0:P:1; x in 0:M:1; y in 0:N:1) parac_border_rule(edge) {
                        next[z][x][y] = out[z][x][y] + 0.125 * (out[max(z-1, 0)][x][y]
                            + out[min(z+1, P-1)][x][y] + out[z][x-1][y] + out[z][x+1][y]
                            + out[z][x][y-1] + out[z][x][y+1] - 6.0 * out[z][x][y]);
                    }
                    parac_swap(out, next);
                }
            }
        }
    };
}

heat3d!(heat3d_steps, parac_schedule(band = 1));
heat3d!(heat3d_tiled,);
heat3d!(heat3d_split4, parac_schedule(band = 4, split = 1));
heat3d!(
    heat3d_overlapped,
    parac_schedule(band = 4, rows = 8, split = 0)
);
heat2d!(heat_steps, parac_schedule(band = 1));
heat2d!(heat_tiled,);
heat2d!(heat_tiled4, parac_schedule(band = 4, rows = 32));
heat2d!(heat_overlapped, parac_schedule(band = 8, split = 0));
heat2d!(heat_split, parac_schedule(band = 8, split = 1));
heat2d!(
    heat_split16,
    parac_schedule(band = 16, rows = 64, split = 1)
);
life!(life_steps, parac_schedule(band = 1));
life!(life_tiled, parac_schedule(band = 8, split = 0));
life!(life_split, parac_schedule(band = 8, split = 1));
life!(life_model,);
fdtd!(fdtd_steps, parac_schedule(band = 1));
fdtd!(fdtd_tiled,);
fdtd!(fdtd_overlapped, parac_schedule(band = 8, split = 0));
fdtd!(fdtd_split, parac_schedule(band = 8, split = 1));

parac::parac! {
    fn heat_one(cur: &f32[M][N], next: &mut f32[M][N]) {
        parac_border_rule edge = replicate(cur[1][1]);
        parac_iterator step(x in 0:M:1; y in 0:N:1) parac_border_rule(edge) {
            next[x][y] = cur[x][y] + 0.125 * (cur[x-1][y] + cur[x+1][y] + cur[x][y-1]
                + cur[x][y+1] - 4.0 * cur[x][y]);
        }
    }
}

/// A parac variant: the program, called with the input, the output and the count.
type Variant<T> = (
    &'static str,
    fn(&Runtime, &Matrix<T>, &mut Matrix<T>, i32) -> Result<(), parac::Error>,
);

/// Times each variant of one case and checks its grid against the first's (step by step).
fn variants<T: Element + Default + PartialEq + std::fmt::Debug>(
    rt: &Runtime,
    (case, src, t, secs): (&str, &Matrix<T>, i32, f64),
    (points_steps, floor_ms): (f64, f64),
    vs: &[Variant<T>],
) -> Matrix<T> {
    let shape = src.shape().to_vec();
    let mut want: Option<Matrix<T>> = None;
    for (name, f) in vs {
        let mut out = Matrix::<T>::zeros(shape.clone());
        let time = host::measure(|| f(rt, src, &mut out, t).expect(name), 0.0, secs);
        match &want {
            None => want = Some(out),
            Some(w) => assert_eq!(out.as_slice(), w.as_slice(), "{name}: not step by step's"),
        }
        report(case, name, &time, points_steps, floor_ms);
    }
    want.expect("a variant")
}

fn grid_f32(shape: &[usize], seed: u32) -> Matrix<f32> {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(2654435761).max(1);
    let v = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 1000) as f32 / 10.0
        })
        .collect();
    Matrix::from_vec(shape.to_vec(), v).expect("a grid")
}

/// Prints one table row: the case, the variant, its timing, GPoints·steps per second and the
/// step-by-step DRAM floor against it.
fn report(case: &str, variant: &str, time: &host::Stats, points_steps: f64, floor_ms: f64) {
    println!(
        "| {case} | {variant} | {:.1} | {:.1} | {:.2} | {floor_ms:.1} | {:.2}x |",
        time.median_ms,
        time.min_ms,
        points_steps / (time.median_ms * 1e-3) / 1e9,
        floor_ms / time.median_ms
    );
}

/// The compute floor of a case: its step by step on a grid that stays in the last-level cache
/// (`run`, `small_points` points, `small_steps` steps; large enough that a step's tasks are
/// not all overhead), scaled to the case's points × steps; one row, its times those the case
/// would take at that rate.
fn compute_floor(
    case: &str,
    what: &str,
    mut run: impl FnMut(),
    (small_points, small_steps): (f64, f64),
    (points_steps, floor_ms, secs): (f64, f64, f64),
) {
    let time = host::measure(&mut run, 0.0, secs.min(2.0));
    let scale = points_steps / (small_points * small_steps);
    let scaled = host::Stats {
        median_ms: time.median_ms * scale,
        min_ms: time.min_ms * scale,
        samples: time.samples,
    };
    report(
        case,
        &format!("compute floor: step by step on {what} (in the last-level cache)"),
        &scaled,
        points_steps,
        floor_ms,
    );
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let small = std::env::var("PARAC_BENCH_SMALL").is_ok_and(|v| v == "1");
    let secs: f64 = std::env::var("PARAC_TIME_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let side = if small { 1024 } else { 4096 };
    let side3 = if small { 64 } else { 256 };
    // `PARAC_TIME_PART=cpu` or `opencl`: that part alone.
    let part = std::env::var("PARAC_TIME_PART").unwrap_or_default();
    if part == "opencl" {
        opencl(side);
        return;
    }
    let rt = Runtime::cpu();
    let bw = host::copy_bandwidth();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    println!(
        "CPU path, {threads} threads; host copy bandwidth {:.1} GB/s (read + written)",
        bw / 1e9
    );
    println!(
        "| case | variant | median ms | min ms | GPoints·steps/s | DRAM floor of step by step, ms | floor / time |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    let shape = [side, side];
    let pts = (side * side) as f64;
    // heat-2D, T = 64 and 512.
    let src = grid_f32(&shape, 1);
    for t in [64i32, 512] {
        let case = format!("heat-2D {side}², T = {t}");
        let floor = t as f64 * pts * 8.0 / bw * 1e3;
        let s = if t > 64 { secs.min(1.0) } else { secs };
        let want = variants(
            &rt,
            (&case, &src, t, s),
            (pts * t as f64, floor),
            &[
                ("step by step (band = 1)", heat_steps),
                ("the model's: split, 16 steps, tasks of 34 rows", heat_tiled),
                ("split, band = 4, tasks of 32 rows", heat_tiled4),
                ("overlapped, band = 8", heat_overlapped),
                ("split, band = 8 (tasks of 32 rows)", heat_split),
                ("split, band = 16, tasks of 64 rows", heat_split16),
            ],
        );
        if t == 64 {
            let mut a = Matrix::<f32>::zeros(shape);
            let mut b = Matrix::<f32>::zeros(shape);
            let time = host::measure(
                || {
                    a.as_mut_slice().copy_from_slice(src.as_slice());
                    for _ in 0..t {
                        heat_one(&rt, &a, &mut b).expect("one step");
                        std::mem::swap(&mut a, &mut b);
                    }
                },
                0.0,
                s,
            );
            assert_eq!(
                a.as_slice(),
                want.as_slice(),
                "T calls: not the step-by-step result"
            );
            let variant = "T calls of one step from Rust";
            report(&case, variant, &time, pts * t as f64, floor);
        }
    }
    {
        // 1024² f32: two grids of 4 MiB, in the last-level cache.
        let small = grid_f32(&[1024, 1024], 1);
        let mut out = Matrix::<f32>::zeros([1024, 1024]);
        let t = 64;
        compute_floor(
            &format!("heat-2D {side}², T = {t}"),
            "a 1024² grid",
            || heat_steps(&rt, &small, &mut out, 64).expect("heat"),
            (1024.0 * 1024.0, 64.0),
            (pts * t as f64, t as f64 * pts * 8.0 / bw * 1e3, secs),
        );
    }
    // Game of life, T = 64.
    {
        let t = 64;
        let src: Matrix<u8> = Matrix::from_vec(
            shape.to_vec(),
            grid_f32(&shape, 7)
                .as_slice()
                .iter()
                .map(|v| (*v as u32).is_multiple_of(3) as u8)
                .collect(),
        )
        .expect("cells");
        let case = format!("life {side}² u8, T = {t}");
        let floor = t as f64 * pts * 2.0 / bw * 1e3;
        variants(
            &rt,
            (&case, &src, t, secs),
            (pts * t as f64, floor),
            &[
                ("step by step (band = 1)", life_steps),
                (
                    "overlapped, parac_schedule(band = 8, split = 0)",
                    life_tiled,
                ),
                ("split, band = 8", life_split),
                ("the model's: split, 16 steps, tasks of 34 rows", life_model),
            ],
        );
        let (n, cells) = (1024.min(side), src.as_slice());
        let small: Matrix<u8> =
            Matrix::from_vec(vec![n, n], cells[..n * n].to_vec()).expect("cells");
        let mut out = Matrix::<u8>::zeros([n, n]);
        compute_floor(
            &case,
            &format!("a {n}² grid"),
            || life_steps(&rt, &small, &mut out, 64).expect("life"),
            ((n * n) as f64, 64.0),
            (pts * t as f64, floor, secs),
        );
    }
    // heat-3D, T = 64: tiled by planes (split).
    {
        let t = 64;
        let shape3 = [side3, side3, side3];
        let pts3 = (side3 * side3 * side3) as f64;
        let src = grid_f32(&shape3, 3);
        variants(
            &rt,
            (&format!("heat-3D {side3}³, T = {t}"), &src, t, secs),
            (pts3 * t as f64, t as f64 * pts3 * 8.0 / bw * 1e3),
            &[
                ("step by step (band = 1)", heat3d_steps),
                (
                    "the model's: split by planes, 7 steps, tasks of 16 planes",
                    heat3d_tiled,
                ),
                ("split, band = 4", heat3d_split4),
                ("overlapped, band = 4, tasks of 8 planes", heat3d_overlapped),
            ],
        );
        let small = grid_f32(&[96, 96, 96], 3);
        let mut out = Matrix::<f32>::zeros([96, 96, 96]);
        compute_floor(
            &format!("heat-3D {side3}³, T = {t}"),
            "a 96³ grid",
            || heat3d_steps(&rt, &small, &mut out, 64).expect("heat3d"),
            (96.0 * 96.0 * 96.0, 64.0),
            (pts3 * t as f64, t as f64 * pts3 * 8.0 / bw * 1e3, secs),
        );
    }
    // FDTD-2D, T = 64: three grids, three regions per step.
    {
        let t = 64;
        let (a, b, c) = (
            grid_f32(&shape, 4),
            grid_f32(&shape, 5),
            grid_f32(&shape, 6),
        );
        type Fdtd = fn(
            &Runtime,
            &Matrix<f32>,
            &Matrix<f32>,
            &Matrix<f32>,
            &mut Matrix<f32>,
            &mut Matrix<f32>,
            &mut Matrix<f32>,
            i32,
        ) -> Result<(), parac::Error>;
        let vs: [(&str, Fdtd); 4] = [
            ("step by step (band = 1)", fdtd_steps),
            ("the model's: split, 7 steps, tasks of 44 rows", fdtd_tiled),
            ("overlapped, band = 8", fdtd_overlapped),
            ("split, band = 8 (tasks of 50 rows)", fdtd_split),
        ];
        let mut want: Option<Vec<f32>> = None;
        for (name, f) in vs {
            let mut ex = Matrix::<f32>::zeros(shape);
            let mut ey = Matrix::<f32>::zeros(shape);
            let mut hz = Matrix::<f32>::zeros(shape);
            let time = host::measure(
                || f(&rt, &a, &b, &c, &mut ex, &mut ey, &mut hz, t).expect("fdtd"),
                0.0,
                secs,
            );
            let got: Vec<f32> = [ex.as_slice(), ey.as_slice(), hz.as_slice()].concat();
            match &want {
                None => want = Some(got),
                Some(w) => assert!(w == &got, "{name}: not step by step's"),
            }
            // Each step reads ex, ey, hz and writes three grids: 6 grids of f32.
            let floor = t as f64 * pts * 24.0 / bw * 1e3;
            report(
                &format!("FDTD-2D {side}², T = {t}"),
                name,
                &time,
                pts * t as f64,
                floor,
            );
        }
        // 1024² f32: six grids of 4 MiB, in the last-level cache.
        let small = [4, 5, 6].map(|seed| grid_f32(&[1024, 1024], seed));
        let mut o: [Matrix<f32>; 3] = std::array::from_fn(|_| Matrix::<f32>::zeros([1024, 1024]));
        let [ex, ey, hz] = &mut o;
        compute_floor(
            &format!("FDTD-2D {side}², T = {t}"),
            "a 1024² grid",
            || fdtd_steps(&rt, &small[0], &small[1], &small[2], ex, ey, hz, 64).expect("fdtd"),
            (1024.0 * 1024.0, 64.0),
            (pts * t as f64, t as f64 * pts * 24.0 / bw * 1e3, secs),
        );
    }
    halide(side, side3);
    if part != "cpu" {
        opencl(side);
    }
}

/// heat-2D and FDTD-2D on the OpenCL device (`PARAC_DEVICE`, default the first): the model's
/// plan (one step per launch), each time band forced (overlapped tiles `time<K>_<C>x<R>`, split
/// bands `tsplit<K>_<C>x<R>`), and the search's choice once it has run to its end; each band's grid
/// against the one-step plan's (exact).
fn opencl(side: usize) {
    use parac::PlanPolicy;
    let spec = std::env::var("PARAC_DEVICE").unwrap_or_else(|_| "opencl".into());
    let rt = match Runtime::from_spec(&spec) {
        Ok(rt) if rt.device().is_some() => rt.with_warm_up(parac::WarmUp::Wait),
        _ => {
            println!("\nOpenCL: no device; skipped");
            return;
        }
    };
    let mut rt = rt;
    println!("\nOpenCL: {}", rt.describe());
    println!("| case | plan | median ms | min ms | GPoints·steps/s | - | one-step plan / time |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    let shape = [side, side];
    let pts = (side * side) as f64;
    let t = 64;
    let bands = [
        "time2_32x32",
        "time4_32x32",
        "time4_64x64",
        "time8_64x64",
        "tsplit3_32x32",
        "tsplit7_64x64",
    ];
    let mut policies: Vec<(String, PlanPolicy)> = vec![(
        "one step per launch (the model's plan)".into(),
        PlanPolicy::Model,
    )];
    for b in bands {
        policies.push((format!("band {b}"), PlanPolicy::Force(b.into())));
    }
    policies.push((
        "the search's choice".into(),
        PlanPolicy::SearchBudget(std::time::Duration::MAX),
    ));
    let heat = grid_f32(&shape, 1);
    let case = format!("heat-2D {side}², T = {t}");
    device_plans(&mut rt, &case, &policies, pts * t as f64, |rt| {
        let mut out = Matrix::<f32>::zeros(shape);
        heat_tiled(rt, &heat, &mut out, t).expect("heat on OpenCL");
        out.as_slice().to_vec()
    });
    let (a, b, c) = (
        grid_f32(&shape, 4),
        grid_f32(&shape, 5),
        grid_f32(&shape, 6),
    );
    let case = format!("FDTD-2D {side}², T = {t}");
    device_plans(&mut rt, &case, &policies, pts * t as f64, |rt| {
        let mut g = [0; 3].map(|_| Matrix::<f32>::zeros(shape));
        let [ex, ey, hz] = &mut g;
        fdtd_tiled(rt, &a, &b, &c, ex, ey, hz, t).expect("fdtd on OpenCL");
        g.iter().flat_map(|m| m.as_slice().to_vec()).collect()
    });
}

/// One case on the OpenCL device under each policy: a warm-up call (where the search runs to
/// its end), then calls timed; each result against the first policy's (exact).
fn device_plans(
    rt: &mut Runtime,
    case: &str,
    policies: &[(String, parac::PlanPolicy)],
    points_steps: f64,
    mut run: impl FnMut(&Runtime) -> Vec<f32>,
) {
    let secs: f64 = std::env::var("PARAC_TIME_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let mut base = 0.0;
    let mut want: Option<Vec<f32>> = None;
    for (name, p) in policies {
        rt.set_policy(p.clone());
        let first = run(rt);
        let time = host::measure(|| drop(run(rt)), 0.0, secs);
        match &want {
            None => {
                base = time.median_ms;
                want = Some(first)
            }
            Some(w) => assert!(w == &first, "{case}, {name}: not one step's"),
        }
        report(case, name, &time, points_steps, base);
    }
}

/// Halide's heat-2D, life, heat-3D and FDTD-2D, T calls of one step
/// (`benches/peers/halide_time_steps.py`).
fn halide(side: usize, side3: usize) {
    let py = std::path::Path::new("benches/peers/.venv/bin/python");
    if !py.exists() {
        println!("(Halide: no benches/peers/.venv; `bash benches/peers/setup.sh`)");
        return;
    }
    let out = std::process::Command::new(py)
        .arg("benches/peers/halide_time_steps.py")
        .arg(side.to_string())
        .arg(side3.to_string())
        .output();
    match out {
        Ok(o) => print!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => println!("(Halide: {e})"),
    }
}
