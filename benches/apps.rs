//! The benchmarks of the four pipelines of APPS.md (see docs/benchmarks.md): per pipeline and
//! per stage, on the same images, as throughput (pixels of the pipeline's input per second):
//!
//! - `hand_opencl`: the hand-optimized OpenCL of `benches/hand/` (fused where an expert would),
//!   data already on the device: kernels only; `hand_opencl_stages`: the same with one kernel
//!   per stage; `hand_opencl_call`: upload, kernels and download, as a parac call does;
//! - `parac_opencl_search`, `parac_opencl_baseline`: the `parac!` pipelines of
//!   `examples/pipelines/` on the OpenCL device with `PlanPolicy::Search` and `Baseline`;
//! - `parac_cpu`: the same functions on the CPU path (`Runtime::cpu()`);
//! - `crates` (and `image_filter3x3`, `image_unsharpen`): the image crates' closest calls
//!   (`benches/crates.rs`).
//!
//! Per stage (`<pipeline>_stages`), `hand_opencl` is the profiled device time of the stage's
//! kernels and `crates` the wall time of the stage's crate call.
//!
//! Outside criterion's steady-state figures, and written to `<criterion dir>/parac-extra/`:
//! the device's copy bandwidth (the floor), the bytes each pipeline must move, program build and
//! first-call times (measured in a child process with parac's and PoCL's program caches off),
//! and the OpenCL that parac generates for each pipeline (`PARAC_DUMP`, another child process),
//! which `benches/report.py` counts lines of.
//!
//! `PARAC_BENCH_SMALL=1` shrinks every image side by 4 for a quick run. Run without `--bench`
//! (`cargo test --benches`), every benchmark runs once on images 8 times smaller per side.

mod crates;
#[path = "../tests/common/data.rs"]
mod data;
mod hand;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, Throughput};
use fast_image_resize::Resizer;
use parac::{Matrix, PlanPolicy, Runtime};

use hand::Cl;
use hand::call::{BlurHand, HandApp, LaplacianHand, SharpenHand, UnsharpHand};

/// Image sizes `(rows, cols)` of the four pipelines.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    laplacian: (usize, usize),
    sharpen: (usize, usize),
    blur: (usize, usize),
    unsharp: (usize, usize),
}

/// APPS.md's bench sizes divided by `div` per side (sharpen kept a multiple of 4).
fn sizes(div: usize) -> Sizes {
    let uhd = (2160 / div, 3840 / div);
    Sizes {
        laplacian: uhd,
        sharpen: (uhd.0 / 4 * 4, uhd.1 / 4 * 4),
        blur: (4802 / div, 6408 / div),
        unsharp: uhd,
    }
}

/// Whether criterion runs as a benchmark (`cargo bench` passes `--bench`), not once per
/// benchmark as a test.
fn bench_mode() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn divisor() -> usize {
    if !bench_mode() {
        8
    } else if std::env::var("PARAC_BENCH_SMALL").is_ok_and(|v| v == "1") {
        4
    } else {
        1
    }
}

/// Where criterion writes (`$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
/// `target/criterion`), and our extra results under it.
fn extra_dir() -> PathBuf {
    let base = std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("CARGO_TARGET_DIR").map(|d| Path::new(&d).join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"));
    base.join("parac-extra")
}

/// The parac device specification: `PARAC_DEVICE` when it names an OpenCL device, else
/// `opencl` (as the tests do).
fn opencl_spec() -> String {
    std::env::var("PARAC_DEVICE")
        .ok()
        .filter(|s| s.trim().to_ascii_lowercase().starts_with("opencl"))
        .unwrap_or_else(|| "opencl".to_string())
}

/// The inputs, seeded: structured gray images (ramps, a block, noise: flat areas and edges) for
/// laplacian and sharpen, random 12-bit for blur, random RGB in [1/255, 1] for unsharp.
struct Inputs {
    laplacian: Matrix<u8>,
    sharpen: Matrix<u8>,
    blur: Matrix<u16>,
    unsharp: Matrix<f32>,
}

fn inputs(s: Sizes) -> Inputs {
    Inputs {
        laplacian: data::structured_u8(s.laplacian.0, s.laplacian.1, 1),
        sharpen: data::structured_u8(s.sharpen.0, s.sharpen.1, 2),
        blur: data::random_u12(s.blur.0, s.blur.1, 3),
        unsharp: data::random_rgb(s.unsharp.0, s.unsharp.1, 4),
    }
}

/// Bytes each pipeline must read and write at least: its inputs once and its outputs once.
fn floor_bytes(s: Sizes) -> BTreeMap<&'static str, usize> {
    let (m, n) = s.laplacian;
    let lap = m * n + 2 * m * n + m.div_ceil(2) * n.div_ceil(2);
    let (m2, n2) = s.sharpen;
    let (m3, n3) = s.blur;
    let (m4, n4) = s.unsharp;
    BTreeMap::from([
        ("laplacian", lap),
        ("sharpen", 2 * m2 * n2),
        ("blur", 2 * m3 * n3 + 2 * (m3 - 2) * (n3 - 2)),
        ("unsharp", 2 * 3 * 4 * m4 * n4),
    ])
}

// ---- child processes: generated code, first calls ----------------------------------------------

/// Runs this binary again with `mode` in `PARAC_BENCH_CHILD` and `env`; reports failures.
fn child(mode: &str, env: &[(&str, &str)]) {
    let mut cmd = Command::new(std::env::current_exe().expect("bench binary"));
    // `--bench`: the child works at the parent's sizes (see `divisor`).
    cmd.arg("--bench").env("PARAC_BENCH_CHILD", mode);
    for (k, v) in env {
        cmd.env(k, v);
    }
    match cmd.output() {
        Ok(o) => {
            print!("{}", String::from_utf8_lossy(&o.stdout));
            if !o.status.success() {
                eprintln!(
                    "child `{mode}` failed ({}): {}",
                    o.status,
                    String::from_utf8_lossy(&o.stderr)
                );
            }
        }
        Err(e) => eprintln!("child `{mode}` could not start: {e}"),
    }
}

/// Child: runs each parac pipeline once on OpenCL on a small image, with `PARAC_DUMP` set by the
/// parent, so that the generated programs are written out.
fn dump_child() {
    // The parent's PARAC_DUMP (and any other PARAC_* setting) apply.
    let rt = match env_runtime(&opencl_spec()) {
        Ok(rt) => rt.with_policy(PlanPolicy::Baseline),
        Err(e) => {
            println!("generated code: no OpenCL device ({e})");
            return;
        }
    };
    let s = sizes(30);
    let i = inputs(s);
    let (m, n) = s.laplacian;
    let mut lap = Matrix::<i16>::zeros([m, n]);
    let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
    laplacian_p::laplacian(&rt, &i.laplacian, &mut lap, &mut down).expect("laplacian");
    let mut out = Matrix::<u8>::zeros(i.sharpen.shape());
    sharpen_p::sharpen(&rt, &i.sharpen, &mut out).expect("sharpen");
    let (m, n) = s.blur;
    let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
    blur_p::blur(&rt, &i.blur, &mut out).expect("blur");
    let mut out = Matrix::<f32>::zeros(i.unsharp.shape());
    unsharp_p::unsharp(&rt, &i.unsharp, &mut out).expect("unsharp");
}

/// A runtime on the device `spec` names, with the environment's other settings
/// (`Config::from_env`: the children's `PARAC_DUMP`, `PARAC_CACHE`).
fn env_runtime(spec: &str) -> Result<Runtime, parac::Error> {
    Runtime::builder()
        .config(parac::Config::from_env()?)
        .device_spec(spec)?
        .build()
}

/// One pipeline's cold-start times, in seconds.
#[derive(Default)]
struct FirstCall(BTreeMap<String, f64>);

impl FirstCall {
    fn time<T>(&mut self, key: &str, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let r = f();
        self.0.insert(key.to_string(), t.elapsed().as_secs_f64());
        r
    }
}

/// Times a parac pipeline call twice on `rt` (created here, timed as `<label>_open`): the first
/// call builds the programs, the second is a steady call.
fn parac_twice(
    fc: &mut FirstCall,
    label: &str,
    rt: impl FnOnce() -> Runtime,
    mut call: impl FnMut(&Runtime),
) {
    let rt = fc.time(&format!("{label}_open"), rt);
    fc.time(&format!("{label}_first_call"), || call(&rt));
    fc.time(&format!("{label}_second_call"), || call(&rt));
}

/// Child: program builds and first calls, with parac's disk cache and PoCL's kernel cache off
/// (set by the parent), so that every build starts from source. Writes `first_call.json`.
fn first_call_child() {
    let s = sizes(divisor());
    let i = inputs(s);
    let spec = opencl_spec();
    let ocl = |p: PlanPolicy| {
        let spec = spec.clone();
        move || env_runtime(&spec).expect("OpenCL runtime").with_policy(p)
    };
    let has_cl = env_runtime(&spec).is_ok();
    let mut all: BTreeMap<&str, FirstCall> = BTreeMap::new();

    // laplacian
    let mut fc = FirstCall::default();
    let (m, n) = s.laplacian;
    let mut lap = Matrix::<i16>::zeros([m, n]);
    let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
    let mut call = |rt: &Runtime| {
        laplacian_p::laplacian(rt, &i.laplacian, &mut lap, &mut down).expect("laplacian")
    };
    if has_cl {
        let cl = fc.time("hand_open", || Cl::new().expect("device"));
        let (p, build) = cl.build(hand::sources::LAPLACIAN).expect("build");
        fc.0.insert("hand_build".into(), build.as_secs_f64());
        let mut h = hand::Laplacian::new(&cl, &p, m, n).expect("laplacian");
        fc.time("hand_first_call", || {
            h.call(&cl, &i.laplacian).expect("run")
        });
        fc.time("hand_second_call", || {
            h.call(&cl, &i.laplacian).expect("run")
        });
        parac_twice(
            &mut fc,
            "parac_opencl_baseline",
            ocl(PlanPolicy::Baseline),
            &mut call,
        );
        parac_twice(
            &mut fc,
            "parac_opencl_search",
            ocl(PlanPolicy::Search),
            &mut call,
        );
    }
    parac_twice(&mut fc, "parac_cpu", Runtime::cpu, &mut call);
    all.insert("laplacian", fc);

    // sharpen
    let mut fc = FirstCall::default();
    let mut out = Matrix::<u8>::zeros(i.sharpen.shape());
    let mut call = |rt: &Runtime| sharpen_p::sharpen(rt, &i.sharpen, &mut out).expect("sharpen");
    if has_cl {
        let cl = fc.time("hand_open", || Cl::new().expect("device"));
        let (p, build) = cl.build(hand::sources::SHARPEN).expect("build");
        fc.0.insert("hand_build".into(), build.as_secs_f64());
        let (m, n) = s.sharpen;
        let mut h = hand::Sharpen::new(&cl, &p, m, n).expect("sharpen");
        fc.time("hand_first_call", || h.call(&cl, &i.sharpen).expect("run"));
        fc.time("hand_second_call", || h.call(&cl, &i.sharpen).expect("run"));
        parac_twice(
            &mut fc,
            "parac_opencl_baseline",
            ocl(PlanPolicy::Baseline),
            &mut call,
        );
        parac_twice(
            &mut fc,
            "parac_opencl_search",
            ocl(PlanPolicy::Search),
            &mut call,
        );
    }
    parac_twice(&mut fc, "parac_cpu", Runtime::cpu, &mut call);
    all.insert("sharpen", fc);

    // blur
    let mut fc = FirstCall::default();
    let (m, n) = s.blur;
    let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
    let mut call = |rt: &Runtime| blur_p::blur(rt, &i.blur, &mut out).expect("blur");
    if has_cl {
        let cl = fc.time("hand_open", || Cl::new().expect("device"));
        let (p, build) = cl.build(hand::sources::BLUR).expect("build");
        fc.0.insert("hand_build".into(), build.as_secs_f64());
        let mut h = hand::Blur::new(&cl, &p, m, n).expect("blur");
        fc.time("hand_first_call", || h.call(&cl, &i.blur).expect("run"));
        fc.time("hand_second_call", || h.call(&cl, &i.blur).expect("run"));
        parac_twice(
            &mut fc,
            "parac_opencl_baseline",
            ocl(PlanPolicy::Baseline),
            &mut call,
        );
        parac_twice(
            &mut fc,
            "parac_opencl_search",
            ocl(PlanPolicy::Search),
            &mut call,
        );
    }
    parac_twice(&mut fc, "parac_cpu", Runtime::cpu, &mut call);
    all.insert("blur", fc);

    // unsharp
    let mut fc = FirstCall::default();
    let mut out = Matrix::<f32>::zeros(i.unsharp.shape());
    let mut call = |rt: &Runtime| unsharp_p::unsharp(rt, &i.unsharp, &mut out).expect("unsharp");
    if has_cl {
        let cl = fc.time("hand_open", || Cl::new().expect("device"));
        let (p, build) = cl.build(hand::sources::UNSHARP).expect("build");
        fc.0.insert("hand_build".into(), build.as_secs_f64());
        let (m, n) = s.unsharp;
        let mut h = hand::Unsharp::new(&cl, &p, m, n).expect("unsharp");
        fc.time("hand_first_call", || h.call(&cl, &i.unsharp).expect("run"));
        fc.time("hand_second_call", || h.call(&cl, &i.unsharp).expect("run"));
        parac_twice(
            &mut fc,
            "parac_opencl_baseline",
            ocl(PlanPolicy::Baseline),
            &mut call,
        );
        parac_twice(
            &mut fc,
            "parac_opencl_search",
            ocl(PlanPolicy::Search),
            &mut call,
        );
    }
    parac_twice(&mut fc, "parac_cpu", Runtime::cpu, &mut call);
    all.insert("unsharp", fc);

    let mut json = String::from("{\n");
    let mut first = true;
    for (app, fc) in &all {
        println!("first calls, {app} (s): {:?}", fc.0);
        let fields: Vec<String> =
            fc.0.iter()
                .map(|(k, v)| format!("\"{k}\": {v:.6}"))
                .collect();
        let _ = write!(
            json,
            "{}  \"{app}\": {{{}}}",
            if first { "" } else { ",\n" },
            fields.join(", ")
        );
        first = false;
    }
    json.push_str("\n}\n");
    let path = extra_dir().join("first_call.json");
    std::fs::write(&path, json).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

// ---- benchmarks --------------------------------------------------------------------------------

/// The OpenCL contenders, when there is a device.
struct Ocl {
    cl: Cl,
    search: Runtime,
    baseline: Runtime,
}

/// The largest `|a - b|` of two matrices of one shape.
fn max_diff<T: parac::Element + Into<f64>>(a: &Matrix<T>, b: &Matrix<T>) -> f64 {
    assert_eq!(a.shape(), b.shape(), "shapes");
    a.as_slice()
        .iter()
        .zip(b.as_slice())
        .map(|(&x, &y)| (x.into() - y.into()).abs())
        .fold(0.0, f64::max)
}

fn group<'a>(c: &'a mut Criterion, name: &str, pixels: usize) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(pixels as u64))
        .sampling_mode(SamplingMode::Flat);
    g
}

/// A named closure to time.
type Job<'a> = (&'static str, Box<dyn FnMut() + 'a>);

/// Every contender of one pipeline: `<name>` (whole pipelines) and `<name>_stages`.
#[allow(clippy::too_many_arguments)]
fn bench_app<A: HandApp>(
    c: &mut Criterion,
    name: &str,
    pixels: usize,
    ocl: Option<&Ocl>,
    hand_app: Option<A>,
    input: &A::In,
    mut parac: impl FnMut(&Runtime),
    whole_crates: Vec<Job<'_>>,
    stage_crates: Vec<Job<'_>>,
) {
    let cpu = Runtime::cpu().with_cpu_isa(cpu_isa_from_env());
    let hand_app = hand_app.map(RefCell::new);
    {
        let mut g = group(c, name, pixels);
        if let (Some(o), Some(h)) = (ocl, &hand_app) {
            let cl = &o.cl;
            g.bench_function("hand_opencl", |b| {
                b.iter(|| h.borrow().hand().run(cl).expect("run"))
            });
            if h.borrow().hand().is_fused() {
                g.bench_function("hand_opencl_stages", |b| {
                    b.iter(|| h.borrow().hand().run_stages(cl).expect("run"))
                });
            }
            g.bench_function("hand_opencl_call", |b| {
                b.iter(|| h.borrow_mut().call(cl, input))
            });
            g.bench_function("parac_opencl_search", |b| b.iter(|| parac(&o.search)));
            g.bench_function("parac_opencl_baseline", |b| b.iter(|| parac(&o.baseline)));
        }
        g.bench_function("parac_cpu", |b| b.iter(|| parac(&cpu)));
        for (label, mut f) in whole_crates {
            g.bench_function(label, |b| b.iter(&mut f));
        }
    }
    let mut g = group(c, &format!("{name}_stages"), pixels);
    if let (Some(o), Some(h)) = (ocl, &hand_app) {
        let h = h.borrow();
        let hand = h.hand();
        // Every stage's inputs in place.
        hand.run_stages(&o.cl).expect("run");
        for (i, s) in hand.stages.iter().enumerate() {
            g.bench_function(BenchmarkId::new("hand_opencl", s.name), |b| {
                b.iter_custom(|iters| {
                    (0..iters)
                        .map(|_| hand.run_stage(&o.cl, i).expect("stage"))
                        .sum::<Duration>()
                })
            });
        }
    }
    for (stage, mut f) in stage_crates {
        g.bench_function(BenchmarkId::new("crates", stage), |b| b.iter(&mut f));
    }
}

fn bench_laplacian(c: &mut Criterion, ocl: Option<&Ocl>, src: &Matrix<u8>) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let mut lap = Matrix::<i16>::zeros([m, n]);
    let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
    let hand_app = ocl.map(|o| {
        let (p, _) = o.cl.build(hand::sources::LAPLACIAN).expect("build");
        let mut h = LaplacianHand(
            hand::Laplacian::new(&o.cl, &p, m, n).expect("laplacian"),
            lap.clone(),
            down.clone(),
        );
        h.call(&o.cl, src);
        for rt in [&o.search, &o.baseline] {
            laplacian_p::laplacian(rt, src, &mut lap, &mut down).expect("parac");
            assert_eq!(max_diff(&h.1, &lap), 0.0, "laplacian lap: hand != parac");
            assert_eq!(max_diff(&h.2, &down), 0.0, "laplacian down: hand != parac");
        }
        println!("laplacian {m}x{n}: hand OpenCL == parac OpenCL (search, baseline)");
        h
    });
    let img = crates::gray_u8(src);
    let h = crates::laplacian_h(&img);
    let mut rs = [
        Resizer::new(),
        Resizer::new(),
        Resizer::new(),
        Resizer::new(),
    ];
    let [r0, r1, r2, r3] = &mut rs;
    let d = crates::laplacian_down(r0, &h);
    bench_app(
        c,
        "laplacian",
        m * n,
        ocl,
        hand_app,
        src,
        |rt| laplacian_p::laplacian(rt, src, &mut lap, &mut down).expect("parac"),
        vec![(
            "crates",
            Box::new(|| {
                black_box(crates::laplacian(r1, &img));
            }),
        )],
        vec![
            (
                "h",
                Box::new(|| {
                    black_box(crates::laplacian_h(&img));
                }),
            ),
            (
                "down",
                Box::new(|| {
                    black_box(crates::laplacian_down(r2, &h));
                }),
            ),
            (
                "up_lap",
                Box::new(|| {
                    black_box(crates::laplacian_up_lap(r3, &img, &d));
                }),
            ),
        ],
    );
}

fn bench_sharpen(c: &mut Criterion, ocl: Option<&Ocl>, src: &Matrix<u8>) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let mut out = Matrix::<u8>::zeros([m, n]);
    let hand_app = ocl.map(|o| {
        let (p, _) = o.cl.build(hand::sources::SHARPEN).expect("build");
        let mut h = SharpenHand(
            hand::Sharpen::new(&o.cl, &p, m, n).expect("sharpen"),
            out.clone(),
        );
        h.call(&o.cl, src);
        for rt in [&o.search, &o.baseline] {
            sharpen_p::sharpen(rt, src, &mut out).expect("parac");
            assert_eq!(max_diff(&h.1, &out), 0.0, "sharpen: hand != parac");
        }
        println!("sharpen {m}x{n}: hand OpenCL == parac OpenCL (search, baseline)");
        h
    });
    let img = crates::gray_u8(src);
    let mut rs = [Resizer::new(), Resizer::new(), Resizer::new()];
    let [r0, r1, r2] = &mut rs;
    let down = crates::sharpen_down(r0, &img);
    let up = crates::sharpen_up(r0, &down, img.width(), img.height());
    let edge = crates::sharpen_edge(&img);
    let mean = crates::sharpen_mean(&edge);
    let mut r3 = Resizer::new();
    bench_app(
        c,
        "sharpen",
        m * n,
        ocl,
        hand_app,
        src,
        |rt| sharpen_p::sharpen(rt, src, &mut out).expect("parac"),
        vec![(
            "crates",
            Box::new(|| {
                black_box(crates::sharpen(&mut r3, &img));
            }),
        )],
        vec![
            (
                "down",
                Box::new(|| {
                    black_box(crates::sharpen_down(r1, &img));
                }),
            ),
            (
                "up",
                Box::new(|| {
                    black_box(crates::sharpen_up(r2, &down, img.width(), img.height()));
                }),
            ),
            (
                "edge",
                Box::new(|| {
                    black_box(crates::sharpen_edge(&img));
                }),
            ),
            (
                "mean",
                Box::new(|| {
                    black_box(crates::sharpen_mean(&edge));
                }),
            ),
            (
                "final",
                Box::new(|| {
                    black_box(crates::sharpen_final(&img, &up, &edge, mean));
                }),
            ),
        ],
    );
}

fn bench_blur(c: &mut Criterion, ocl: Option<&Ocl>, src: &Matrix<u16>) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
    let hand_app = ocl.map(|o| {
        let (p, _) = o.cl.build(hand::sources::BLUR).expect("build");
        let mut h = BlurHand(hand::Blur::new(&o.cl, &p, m, n).expect("blur"), out.clone());
        h.call(&o.cl, src);
        for rt in [&o.search, &o.baseline] {
            blur_p::blur(rt, src, &mut out).expect("parac");
            assert_eq!(max_diff(&h.1, &out), 0.0, "blur: hand != parac");
        }
        println!("blur {m}x{n}: hand OpenCL == parac OpenCL (search, baseline)");
        h
    });
    let img = crates::gray_u16(src);
    let bx = crates::blur_bx(&img);
    bench_app(
        c,
        "blur",
        m * n,
        ocl,
        hand_app,
        src,
        |rt| blur_p::blur(rt, src, &mut out).expect("parac"),
        vec![
            (
                "crates",
                Box::new(|| {
                    black_box(crates::blur(&img));
                }),
            ),
            (
                "image_filter3x3",
                Box::new(|| {
                    black_box(crates::blur_filter3x3(&img));
                }),
            ),
        ],
        vec![
            (
                "bx",
                Box::new(|| {
                    black_box(crates::blur_bx(&img));
                }),
            ),
            (
                "out",
                Box::new(|| {
                    black_box(crates::blur_out(&bx));
                }),
            ),
        ],
    );
}

fn bench_unsharp(c: &mut Criterion, ocl: Option<&Ocl>, src: &Matrix<f32>) {
    let (m, n) = (src.shape()[1], src.shape()[2]);
    let mut out = Matrix::<f32>::zeros([3, m, n]);
    let hand_app = ocl.map(|o| {
        let (p, _) = o.cl.build(hand::sources::UNSHARP).expect("build");
        let mut h = UnsharpHand(
            hand::Unsharp::new(&o.cl, &p, m, n).expect("unsharp"),
            out.clone(),
        );
        h.call(&o.cl, src);
        for rt in [&o.search, &o.baseline] {
            unsharp_p::unsharp(rt, src, &mut out).expect("parac");
            let d = max_diff(&h.1, &out);
            assert!(d <= 1e-4, "unsharp: hand and parac differ by {d}");
        }
        println!("unsharp {m}x{n}: hand OpenCL within 1e-4 of parac OpenCL (search, baseline)");
        h
    });
    let img = crates::rgb_f32(src);
    let gray = crates::unsharp_gray(&img);
    let by = crates::unsharp_vertical(&gray);
    bench_app(
        c,
        "unsharp",
        m * n,
        ocl,
        hand_app,
        src,
        |rt| unsharp_p::unsharp(rt, src, &mut out).expect("parac"),
        vec![
            (
                "crates",
                Box::new(|| {
                    black_box(crates::unsharp(&img));
                }),
            ),
            (
                "image_unsharpen",
                Box::new(|| {
                    black_box(crates::unsharp_image_unsharpen(&img));
                }),
            ),
        ],
        vec![
            (
                "gray",
                Box::new(|| {
                    black_box(crates::unsharp_gray(&img));
                }),
            ),
            (
                "vertical",
                Box::new(|| {
                    black_box(crates::unsharp_vertical(&gray));
                }),
            ),
            (
                "horizontal_ratio",
                Box::new(|| {
                    black_box(crates::unsharp_horizontal_ratio(&img, &gray, &by));
                }),
            ),
        ],
    );
}

// ---- main --------------------------------------------------------------------------------------

fn main() {
    match std::env::var("PARAC_BENCH_CHILD").as_deref() {
        Ok("dump") => return dump_child(),
        Ok("first-call") => return first_call_child(),
        Ok("tune") => return tune(),
        _ => {}
    }
    let extra = extra_dir();
    std::fs::create_dir_all(&extra).expect("criterion directory");
    let s = sizes(divisor());
    println!("sizes: {s:?}");

    let ocl = match Cl::new() {
        Ok(cl) => {
            let spec = opencl_spec();
            let rt = |p: PlanPolicy| {
                Runtime::from_spec(&spec)
                    .map(|rt| rt.with_policy(p).with_warm_up(parac::WarmUp::Wait))
            };
            // The searched plan: each region's search runs to its end in the first call
            // (outside the measurement), not within the default budget over several calls.
            let searched = PlanPolicy::SearchBudget(Duration::MAX);
            match (rt(searched), rt(PlanPolicy::Baseline)) {
                (Ok(search), Ok(baseline)) => Some(Ocl {
                    cl,
                    search,
                    baseline,
                }),
                (Err(e), _) | (_, Err(e)) => {
                    println!("no parac OpenCL runtime ({e}): OpenCL contenders skipped");
                    None
                }
            }
        }
        Err(e) => {
            println!("no OpenCL device ({e}): OpenCL contenders skipped");
            None
        }
    };

    let mut info = BTreeMap::<&str, String>::new();
    if let Some(o) = &ocl {
        println!(
            "hand OpenCL on {}; parac on {}",
            o.cl.description,
            o.baseline.describe()
        );
        info.insert("device", format!("\"{}\"", o.cl.description));
        info.insert("parac_runtime", format!("\"{}\"", o.baseline.describe()));
        let bytes = if bench_mode() { 256 << 20 } else { 8 << 20 };
        let bw = hand::copy_bandwidth(&o.cl, bytes, 5).expect("copy bandwidth");
        println!(
            "copy bandwidth: {:.2} GB/s (read + write, {} MiB clEnqueueCopyBuffer)",
            bw / 1e9,
            bytes >> 20
        );
        info.insert("copy_bandwidth_bytes_per_s", format!("{bw:.0}"));
        info.insert("copy_bytes", bytes.to_string());
        if bench_mode() {
            let gen_dir = extra.join("generated");
            let _ = std::fs::remove_dir_all(&gen_dir);
            let gen_dir = gen_dir.display().to_string();
            child(
                "dump",
                &[("PARAC_DUMP", gen_dir.as_str()), ("PARAC_CACHE", "0")],
            );
            child(
                "first-call",
                &[("PARAC_CACHE", "0"), ("POCL_KERNEL_CACHE", "0")],
            );
        }
    }
    info.insert("cpu_threads", cpu_threads().to_string());
    let sizes_json: Vec<String> = [
        ("laplacian", s.laplacian),
        ("sharpen", s.sharpen),
        ("blur", s.blur),
        ("unsharp", s.unsharp),
    ]
    .iter()
    .map(|(k, (m, n))| format!("\"{k}\": [{m}, {n}]"))
    .collect();
    info.insert("sizes", format!("{{{}}}", sizes_json.join(", ")));
    let bytes_json: Vec<String> = floor_bytes(s)
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    info.insert("floor_bytes", format!("{{{}}}", bytes_json.join(", ")));
    let json: Vec<String> = info
        .iter()
        .map(|(k, v)| format!("  \"{k}\": {v}"))
        .collect();
    std::fs::write(
        extra.join("info.json"),
        format!("{{\n{}\n}}\n", json.join(",\n")),
    )
    .expect("info.json");

    let i = inputs(s);
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench_laplacian(&mut c, ocl.as_ref(), &i.laplacian);
    bench_sharpen(&mut c, ocl.as_ref(), &i.sharpen);
    bench_blur(&mut c, ocl.as_ref(), &i.blur);
    bench_unsharp(&mut c, ocl.as_ref(), &i.unsharp);
    c.final_summary();
}

/// `PARAC_BENCH_CHILD=tune`: the median device time of every hand stage and pipeline at the
/// bench size, for tuning work-group sizes (`PARAC_HAND_WG_ROWS`, `PARAC_HAND_WG_BLOCKS`).
fn tune() {
    let s = sizes(divisor());
    let i = inputs(s);
    let cl = Cl::new().expect("device");
    println!(
        "work-groups: rows {:?}, blocks {:?}",
        hand::wg_rows(),
        hand::wg_blocks()
    );
    let median = |mut f: Box<dyn FnMut() -> Duration + '_>| {
        let mut t: Vec<Duration> = (0..15).map(|_| f()).collect();
        t.sort();
        t[7].as_secs_f64() * 1e3
    };
    let report = |name: &str, h: &hand::Hand| {
        h.run_stages(&cl).expect("run");
        let mut line = format!("{name}:");
        for (k, st) in h.stages.iter().enumerate() {
            let ms = median(Box::new(|| h.run_stage(&cl, k).expect("stage")));
            let _ = write!(line, " {} {ms:.3} ms,", st.name);
        }
        let whole = median(Box::new(|| {
            let t = Instant::now();
            h.run(&cl).expect("run");
            t.elapsed()
        }));
        println!("{line} pipeline {whole:.3} ms");
    };
    let (p, _) = cl.build(hand::sources::LAPLACIAN).expect("build");
    let (m, n) = s.laplacian;
    let mut h = hand::Laplacian::new(&cl, &p, m, n).expect("new");
    h.src.write(&cl, &i.laplacian).expect("write");
    report("laplacian", &h.hand);
    let (p, _) = cl.build(hand::sources::SHARPEN).expect("build");
    let (m, n) = s.sharpen;
    let mut h = hand::Sharpen::new(&cl, &p, m, n).expect("new");
    h.src.write(&cl, &i.sharpen).expect("write");
    report("sharpen", &h.hand);
    let (p, _) = cl.build(hand::sources::BLUR).expect("build");
    let (m, n) = s.blur;
    let mut h = hand::Blur::new(&cl, &p, m, n).expect("new");
    h.src.write(&cl, &i.blur).expect("write");
    report("blur", &h.hand);
    let (p, _) = cl.build(hand::sources::UNSHARP).expect("build");
    let (m, n) = s.unsharp;
    let mut h = hand::Unsharp::new(&cl, &p, m, n).expect("new");
    h.img.write(&cl, &i.unsharp).expect("write");
    report("unsharp", &h.hand);
}

/// The CPU path's threads.
fn cpu_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The CPU path's vector level `PARAC_CPU_ISA` names (`auto` where unset), so that one bench
/// compares levels.
fn cpu_isa_from_env() -> parac::CpuIsa {
    parac::Config::from_env()
        .map(|c| c.cpu_isa)
        .expect("PARAC_* variables")
}
