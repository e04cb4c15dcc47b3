//! Every call fast: a fresh process per pipeline and setting, parac's program and plan
//! caches empty (a new directory) and PoCL's kernel cache off, the default plan policy: the time
//! of the first call, of each of the next 30, and (after `Runtime::wait_for_background`) the
//! median of 10 warm calls (the searched plans), then of 10 calls of the model's plans on the
//! same runtime (`PlanPolicy::Model`). Pipelines: the four of APPS.md at their bench sizes and two of our
//! own at 3840x2160 (`benches/own`; the six after the four).
//!
//! `cargo bench --bench calls` on the device `PARAC_DEVICE` names (default `opencl`), once with
//! the default warm-up (`PARAC_WARM_UP=auto`: the CPU path while a CPU device warms up) and once
//! with `PARAC_WARM_UP=wait` (the device from the first call). `PARAC_BENCH_SMALL=1`: sides / 4.
//! Prints one table; docs/benchmarks.md, "First calls", has the figures.

#[path = "../tests/common/data.rs"]
mod data;
mod own;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use std::process::Command;
use std::time::Instant;

use parac::{Matrix, Runtime};

const PIPELINES: &[&str] = &[
    "laplacian",
    "sharpen",
    "blur",
    "unsharp",
    "sobel_mean",
    "unsharp7",
    "gauss5",
    "opening3",
    "gray_threshold",
    "half_sharpen",
];
const CALLS: usize = 30;

fn div() -> usize {
    if std::env::var("PARAC_BENCH_SMALL").is_ok_and(|v| v == "1") {
        4
    } else {
        1
    }
}

/// A call of pipeline `name` on fresh inputs at its bench size.
fn caller(name: &str) -> Box<dyn FnMut(&Runtime)> {
    let d = div();
    let (m, n) = (2160 / d, 3840 / d);
    match name {
        "laplacian" => {
            let src = data::structured_u8(m, n, 1);
            let (mut lap, mut down) = (
                Matrix::<i16>::zeros([m, n]),
                Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]),
            );
            Box::new(move |rt| {
                laplacian_p::laplacian(rt, &src, &mut lap, &mut down).expect("laplacian")
            })
        }
        "sharpen" => {
            let src = data::structured_u8(m / 4 * 4, n / 4 * 4, 2);
            let mut out = Matrix::<u8>::zeros(src.shape());
            Box::new(move |rt| sharpen_p::sharpen(rt, &src, &mut out).expect("sharpen"))
        }
        "blur" => {
            let (bm, bn) = (4802 / d, 6408 / d);
            let src = data::random_u12(bm, bn, 3);
            let mut out = Matrix::<u16>::zeros([bm - 2, bn - 2]);
            Box::new(move |rt| blur_p::blur(rt, &src, &mut out).expect("blur"))
        }
        "unsharp" => {
            let src = data::random_rgb(m, n, 4);
            let mut out = Matrix::<f32>::zeros(src.shape());
            Box::new(move |rt| unsharp_p::unsharp(rt, &src, &mut out).expect("unsharp"))
        }
        "sobel_mean" => {
            let src = data::structured_u8(m, n, 5);
            let mut out = Matrix::<u8>::zeros([m, n]);
            Box::new(move |rt| {
                own::sobel_mean(rt, &src, &mut out).expect("sobel_mean");
            })
        }
        "unsharp7" => {
            let src = data::structured_u8(m, n, 6);
            let mut out = Matrix::<u8>::zeros([m, n]);
            Box::new(move |rt| own::unsharp7(rt, &src, &mut out).expect("unsharp7"))
        }
        "gauss5" => {
            let src = data::structured_u8(m, n, 7);
            let mut out = Matrix::<u8>::zeros([m, n]);
            Box::new(move |rt| own::gauss5(rt, &src, &mut out).expect("gauss5"))
        }
        "opening3" => {
            let src = data::structured_u8(m, n, 8);
            let mut out = Matrix::<u8>::zeros([m, n]);
            Box::new(move |rt| own::opening3(rt, &src, &mut out).expect("opening3"))
        }
        "gray_threshold" => {
            let v: Vec<u8> = (0..3)
                .flat_map(|c| data::structured_u8(m, n, 9 + c).as_slice().to_vec())
                .collect();
            let img = Matrix::<u8>::from_vec([3, m, n], v).expect("shape");
            let (mut gray, mut mask) = (Matrix::<u8>::zeros([m, n]), Matrix::<u8>::zeros([m, n]));
            Box::new(move |rt| {
                own::gray_threshold(rt, &img, &mut gray, &mut mask).expect("gray_threshold")
            })
        }
        "half_sharpen" => {
            let src = data::structured_u8(m, n, 12);
            let mut out = Matrix::<u8>::zeros([m / 2, n / 2]);
            Box::new(move |rt| own::half_sharpen(rt, &src, &mut out).expect("half_sharpen"))
        }
        _ => panic!("no pipeline {name}"),
    }
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The wall times of `n` calls, in milliseconds.
fn timed(n: usize, call: &mut dyn FnMut(&Runtime), rt: &Runtime) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let t = Instant::now();
            call(rt);
            ms(t)
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s[s.len() / 2]
}

/// Child: one pipeline, the runtime from the environment; prints one line of figures.
fn child(name: &str) {
    let spec = std::env::var("PARAC_DEVICE").unwrap_or_else(|_| "opencl".into());
    let rt = Runtime::builder()
        .config(parac::Config::from_env().expect("PARAC_* settings"))
        .device_spec(&spec)
        .and_then(parac::RuntimeBuilder::build)
        .expect("the device");
    let mut call = caller(name);
    let t = Instant::now();
    call(&rt);
    let first = ms(t);
    let calls = timed(CALLS, &mut call, &rt);
    if std::env::var_os("PARAC_BENCH_VERBOSE").is_some() {
        eprintln!("{name}: calls (ms) {calls:.1?}");
    }
    let t = Instant::now();
    rt.wait_for_background();
    let waited = ms(t);
    let warm = timed(10, &mut call, &rt);
    if std::env::var_os("PARAC_BENCH_VERBOSE").is_some() {
        // Per region: the searched choice against the model's first choice (timed first).
        for r in parac::opencl::plan_records().iter().filter(|r| r.complete) {
            let ms = |l: &str, wg: &Option<Vec<usize>>| {
                r.times
                    .iter()
                    .find(|t| t.0 == l && (wg.is_none() || &t.1 == wg))
                    .map_or(f64::NAN, |t| t.2)
            };
            let first = r.times.first().map_or("-", |t| t.0.as_str());
            eprintln!(
                "{name}/{} [{}]: searched {}@{:?} {:.3} ms, model {first} {:.3} ms",
                r.region,
                r.class,
                r.chosen.0,
                r.chosen.1,
                ms(&r.chosen.0, &r.chosen.1),
                ms(first, &None)
            );
        }
    }
    // The model's first choice, on the same runtime (its kernels built and compiled by the
    // search): what a call runs until the search is done.
    let mut rt = rt;
    rt.set_policy(parac::PlanPolicy::Model);
    call(&rt);
    let model = timed(10, &mut call, &rt);
    let (med, max) = (median(&calls), calls.iter().copied().fold(0.0, f64::max));
    let (warm, model) = (median(&warm), median(&model));
    println!(
        "| {name} | {first:.0} | {med:.1} | {max:.1} | {:.2} | {waited:.0} | {warm:.1} | {model:.1} \
         | {:.2} |",
        max / med,
        model / warm
    );
}

fn main() {
    if let Ok(name) = std::env::var("PARAC_BENCH_CHILD") {
        return child(&name);
    }
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let exe = std::env::current_exe().expect("this binary");
    let modes = match std::env::var("PARAC_WARM_UP") {
        Ok(m) => vec![m],
        Err(_) => vec!["auto".to_string(), "wait".to_string()],
    };
    for mode in modes {
        println!("\nPARAC_WARM_UP={mode}, caches empty, default policy");
        println!(
            "| pipeline | first call ms | median of the next {CALLS} ms | max ms | max / median \
             | wait for the background ms | warm median ms | model's plan ms | model / \
             searched |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for name in PIPELINES {
            if !only.is_empty() && !only.iter().any(|o| name.contains(o.as_str())) {
                continue;
            }
            let cache = std::env::temp_dir().join(format!("parac-calls-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&cache);
            let status = Command::new(&exe)
                .env("PARAC_BENCH_CHILD", name)
                .env("PARAC_WARM_UP", &mode)
                .env("PARAC_CACHE_DIR", &cache)
                .env("POCL_KERNEL_CACHE", "0")
                .status()
                .expect("a child process");
            let _ = std::fs::remove_dir_all(&cache);
            if !status.success() {
                println!("| {name} | failed: {status} |");
            }
        }
    }
}
